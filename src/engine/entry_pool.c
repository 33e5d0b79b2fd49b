/*-------------------------------------------------------------------------
 *
 * entry_pool.c
 *		The entries of the lock table -- holds and queue entries -- taken
 *		from and given back to their pool (core/shared_pool.c), which grows
 *		with use, and the lists that link them by number (a lock's holders,
 *		waiters and dormant entries; a holder key's entries).
 *
 * Locking: an entry in use, and the lists it is in, are protected by the
 * partition lock of its lock (lock_table.c), a holder key's list by
 * holders_lock (keyed/holder_table.c); the pool's free lists have
 * spinlocks of their own.  sync_entry_free() calls the hook of the module
 * that owns keyed entries before a keyed entry goes back.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "engine/engine_internal.h"

static SyncEntryFreeHook entry_free_hook = NULL;

/* A new slab's entries: free, in no list. */
static void
sync_entry_init(SyncPooled *obj)
{
	SyncEntry  *e = (SyncEntry *) obj;

	sync_elist_link_init(e, SYNC_LOCK_LINK);
	sync_elist_link_init(e, SYNC_HOLDER_LINK);
	e->state = SYNC_ENTRY_FREE;
	e->lockno = SYNC_ENTRY_NONE;
	e->holderno = SYNC_ENTRY_NONE;
}

/* Module load, in every process: the pool of entries. */
void
sync_entry_pool_init(void)
{
	sync_pool_define(SYNC_POOL_ENTRIES, "entries", sizeof(SyncEntry),
					 sync_entry_init);
}

void
sync_entry_set_free_hook(SyncEntryFreeHook hook)
{
	entry_free_hook = hook;
}

/*
 * Put entry e, which is in no list, into 'list' right after 'prev' (NULL:
 * at the head), through its link 'field'.  The caller holds what protects
 * the list (engine.h: SyncEntryList).
 */
void
sync_elist_insert_after(SyncEntryList *list, SyncEntry *prev, SyncEntry *e,
						size_t field)
{
	SyncEntryLink *link = sync_link_of(e, field);
	int32		self = sync_entry_index(e);
	int32		next;

	Assert(sync_elist_detached(e, field));
	if (prev == NULL)
	{
		next = list->head;
		list->head = self;
	}
	else
	{
		Assert(!sync_elist_detached(prev, field));
		next = sync_link_of(prev, field)->next;
		sync_link_of(prev, field)->next = self;
	}
	link->prev = sync_entry_index(prev);
	link->next = next;
	if (next == SYNC_ENTRY_NONE)
		list->tail = self;
	else
		sync_link_of(sync_entry_at(next), field)->prev = self;
}

/* Take entry e out of 'list'; it is then in no list.  Same locking. */
void
sync_elist_delete(SyncEntryList *list, SyncEntry *e, size_t field)
{
	SyncEntryLink *link = sync_link_of(e, field);

	Assert(!sync_elist_detached(e, field));
	if (link->prev == SYNC_ENTRY_NONE)
		list->head = link->next;
	else
		sync_link_of(sync_entry_at(link->prev), field)->next = link->next;
	if (link->next == SYNC_ENTRY_NONE)
		list->tail = link->prev;
	else
		sync_link_of(sync_entry_at(link->next), field)->prev = link->prev;
	link->prev = link->next = SYNC_ENTRY_DETACHED;
}

/*
 * Take an entry from the pool; with 'grow', the pool grows if it must
 * (which may raise an error: not while shared state is half-changed).
 * NULL when syncwf.max_entries or the memory refuses
 * (sync_report_entries_full()).
 */
static bool entries_refused_by_count = false;

SyncEntry *
sync_entry_alloc(bool grow)
{
	SyncEntry  *entry;
	int32		n;

	entries_refused_by_count = false;
	if (sync_max_entries >= 0 && sync_entries_in_use() >= sync_max_entries)
	{
		entries_refused_by_count = true;
		return NULL;
	}
	n = sync_pool_alloc(SYNC_POOL_ENTRIES, grow);
	if (n < 0)
		return NULL;
	entry = sync_entry_at(n);
	Assert(entry->state == SYNC_ENTRY_FREE);
	Assert(sync_elist_detached(entry, SYNC_LOCK_LINK));
	Assert(sync_elist_detached(entry, SYNC_HOLDER_LINK));
	entry->lockno = SYNC_ENTRY_NONE;
	entry->next_in_request = n;
	entry->token = 0;
	entry->scope = SYNC_SCOPE_SESSION;
	entry->holderno = SYNC_ENTRY_NONE;
	entry->lease_us = 0;
	entry->lease_expires = 0;
	entry->created_xid = InvalidTransactionId;
	entry->release_xid = InvalidTransactionId;
	entry->reserved_xid = InvalidTransactionId;
	entry->owner = InvalidOid;
	entry->controller = -1;
	entry->admit_limit = -1;
	entry->persisted = false;
	entry->claim = false;
	entry->shared = false;
	entry->preemptible = false;
	entry->preempt_deadline = 0;
	entry->slots = 1;
	entry->passes = 0;
	entry->rank_parent = entry->rank_left = entry->rank_right = SYNC_ENTRY_NONE;
	entry->rank_size = 0;
	return entry;
}

/* The setting that refused the last entry, for a hint. */
const char *
sync_entries_full_setting(void)
{
	return entries_refused_by_count ? "syncwf.max_entries" : "syncwf.max_memory";
}

/* Report that sync_entry_alloc() returned NULL. */
void
sync_report_entries_full(void)
{
	if (entries_refused_by_count)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("syncwf entry pool is full"),
				 errdetail("All %d holds and queue entries are in use.",
						   sync_max_entries),
				 errhint("Raise syncwf.max_entries, or set it to -1, and reload the configuration.")));
	sync_memory_report_full(SYNC_POOL_ENTRIES);
}

/* Return an entry to the pool.  It must be unlinked from every list. */
void
sync_entry_free(SyncEntry *entry)
{
	if (entry->holderno != SYNC_ENTRY_NONE)
	{
		Assert(entry_free_hook != NULL);
		entry_free_hook(entry);
	}
	Assert(sync_elist_detached(entry, SYNC_LOCK_LINK));
	Assert(sync_elist_detached(entry, SYNC_HOLDER_LINK));
	entry->state = SYNC_ENTRY_FREE;
	entry->lockno = SYNC_ENTRY_NONE;
	entry->request_id = 0;
	sync_pool_free(SYNC_POOL_ENTRIES, &entry->pooled);
}

/* Entries in use: holds and queue entries. */
int64
sync_entries_in_use(void)
{
	int64		made;
	int64		nfree;

	sync_pool_counts(SYNC_POOL_ENTRIES, &made, &nfree);
	return made - nfree;
}
