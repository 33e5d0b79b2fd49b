/*-------------------------------------------------------------------------
 *
 * keyed_load.c
 *		Keyed holds and shared memory in bulk: the rebuild of every keyed
 *		entry from the rows of sync_state (at start, after a crash or
 *		promotion, after the extension is created again), and the scans the
 *		worker makes of them (grants the table does not record yet, leases
 *		that have expired, requests a lowered limit or rate left too big).
 *		Reading the rows is the engine's (keyed_ops.c); this file gets
 *		them.
 *
 * Locking: the rebuild takes controllers_lock, holders_lock and every
 * partition lock, in that order; the scans take holders_lock and every
 * partition shared.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "keyed/keyed_internal.h"

typedef struct RequestRing
{
	char		key[SYNC_KEY_BUFLEN + 24];	/* holder and request id */
	SyncEntry  *first;
	SyncEntry  *last;
	int			n;
	uint32		partmask;
} RequestRing;

/*
 * Loading: entries of one request (same holder and request id, granted or
 * pending together) are linked into one ring, closed after all rows.
 */
static void
sync_ring_add(HTAB *rings, SyncStateRow *row, SyncEntry *e)
{
	char		key[SYNC_KEY_BUFLEN + 24];
	RequestRing *ring;
	bool		found;

	snprintf(key, sizeof(key), "%s|" INT64_FORMAT "|%d", row->holder,
			 row->request_id, (int) row->held);
	ring = hash_search(rings, key, HASH_ENTER, &found);
	if (!found)
	{
		ring->first = ring->last = e;
		ring->n = 1;
		ring->partmask = e->partmask;
	}
	else
	{
		ring->last->next_in_request = sync_entry_index(e);
		ring->last = e;
		ring->n++;
		ring->partmask |= e->partmask;
	}
}

/*
 * What the rebuild carries from one row to the next, and to its end.
 */
typedef struct LoadState
{
	HTAB	   *rings;			/* RequestRing, by holder and request id */
	int		   *slots;			/* per row: its controller's slot, or -1 */
	int32	   *weights;		/* per row: its fair-queueing weight */
	int			rowno;			/* the row being loaded */
	Oid			limit_relid;
	uint64		max_token;
	uint64		max_seq;
	uint64		max_request;
} LoadState;

/* Before a pass: forget what an earlier one loaded. */
static void
sync_load_restart(LoadState *ls)
{
	HASHCTL		ctl;

	if (ls->rings != NULL)
		hash_destroy(ls->rings);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(((RequestRing *) 0)->key);
	ctl.entrysize = sizeof(RequestRing);
	ctl.hcxt = CurrentMemoryContext;
	ls->rings = hash_create("syncwf load rings", 64, &ctl,
							HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	ls->rowno = 0;
	ls->max_token = ls->max_seq = ls->max_request = 0;
}

/*
 * Before any LWLock is taken: restore the controllers, and look up each
 * row's controller slot (which takes controllers_lock itself) and
 * fair-queueing weight (which may read a table, with no LWLock held).
 */
static void
sync_load_begin(LoadState *ls, List *rows, List *controllers, Oid limit_relid)
{
	ListCell   *lc;
	TimestampTz now = GetCurrentTimestamp();
	int			rowno = 0;

	memset(ls, 0, sizeof(LoadState));
	ls->slots = palloc(sizeof(int) * Max(list_length(rows), 1));
	ls->weights = palloc(sizeof(int32) * Max(list_length(rows), 1));
	ls->limit_relid = limit_relid;

	foreach(lc, controllers)
	{
		SyncControllerRow *c = (SyncControllerRow *) lfirst(lc);

		sync_controller_restore(c->name, c->heartbeat, now);
	}
	/* slots for every controller named, before controllers_lock is held */
	foreach(lc, rows)
	{
		SyncStateRow *row = (SyncStateRow *) lfirst(lc);

		ls->weights[rowno] = sync_fair_weight_of(row->name, row->fair_key);
		ls->slots[rowno++] = row->controller ?
			sync_controller_slot_noerror(row->controller) : -1;
	}

	sync_load_restart(ls);
}

/*
 * The lock of a row, created with the semaphore's limit if it is not live;
 * NULL if the lock table is full.  Caller holds every partition lock
 * exclusively.
 */
static SyncLock *
sync_load_lock(SyncStateRow *row, Oid limit_relid, uint32 *hashcode)
{
	SyncLockTag tag;
	SyncLock   *lock;
	bool		found;

	sync_make_tag(&tag, MyDatabaseId, row->name);
	*hashcode = sync_tag_hash(&tag);
	lock = sync_lock_create(&tag, *hashcode, &found);
	if (lock == NULL || found)
		return lock;
	lock->kind = (strncmp(row->name, "sem/", 4) == 0) ?
		SYNC_KIND_SEMAPHORE : SYNC_KIND_MUTEX;
	if (lock->kind == SYNC_KIND_SEMAPHORE)
	{
		SyncLimitValue value = row->limit;

		(void) sync_limit_plan_default(row->name, &value);
		sync_limit_set(lock, &value);
		lock->limit = Max(value.limit, 0);
		lock->limit_defined = (value.limit >= 0);
	}
	lock->limit_relid = limit_relid;
	return lock;
}

/*
 * A new entry of holder 'h' for 'lock', with what the row says, not yet
 * held or queued; NULL if there is no room for it.  Caller holds
 * holders_lock and every partition lock exclusively.
 */
static SyncEntry *
sync_load_entry(LoadState *ls, SyncStateRow *row, SyncLock *lock,
				uint32 hashcode, SyncHolder *h)
{
	SyncEntry  *e = sync_entry_alloc(false);	/* grown in sync_keyed_load() */

	if (e == NULL)
		return NULL;
	e->lockno = lock->pooled.self;
	e->request_id = (uint64) row->request_id;
	e->seq = (uint64) row->seq;
	e->priority = row->priority;
	e->base_priority = row->priority;
	e->pid = 0;
	e->procno = -1;
	e->scope = SYNC_SCOPE_KEYED;
	e->partmask = 1U << sync_partition_of(hashcode);
	e->nlocks = 1;
	e->holderno = h->pooled.self;
	Assert(sync_elist_detached(e, SYNC_HOLDER_LINK));
	sync_elist_push_tail(&h->entries, e, SYNC_HOLDER_LINK);
	h->nentries++;
	e->queued_at = row->queued_at;
	e->lease_us = row->lease_us;
	e->owner = row->owner;
	e->admit_limit = row->admit_limit;
	e->claim = row->claim;
	e->slots = Max(row->slots, 1);
	e->shared = row->shared;
	/* (before it is linked as a holder, which counts them) */
	e->preemptible = row->preemptible;
	e->preempt_deadline = row->held ? row->preempt_deadline : 0;
	sync_entry_set_fair(e, row->fair_key, ls->weights[ls->rowno]);
	e->controller = ls->slots[ls->rowno++];
	if (e->controller >= 0)
		sync_controller_ref(e->controller);
	return e;
}

/*
 * Make the entry of a row held (with its token, grant time and lease) or
 * pending (queued, or dormant while its controller is inactive), in its
 * request's ring.  Caller holds the partition locks.
 */
static void
sync_load_place(LoadState *ls, SyncStateRow *row, SyncEntry *e)
{
	SyncLock   *lock = sync_entry_lock(e);

	sync_ring_add(ls->rings, row, e);
	if (row->held)
	{
		e->state = SYNC_ENTRY_HELD;
		e->token = (uint64) row->token;
		e->since = row->granted_at;
		e->lease_expires = row->lease_expires;
		e->persisted = true;
		sync_holder_link(lock, e);
		if (e->lease_expires != 0)
			sync_lease_scheduled(e->lease_expires);
	}
	else
	{
		e->since = row->queued_at;
		if (e->controller < 0 || sync_controller_active(e->controller))
			sync_queue_insert(lock, e);
		else
			sync_dormant_insert(lock, e);
	}
	ls->max_token = Max(ls->max_token, (uint64) row->token);
	ls->max_seq = Max(ls->max_seq, (uint64) row->seq);
	ls->max_request = Max(ls->max_request, (uint64) row->request_id);
}

/*
 * Load one row.  Returns -1 if it is loaded, else the pool that had no
 * free object for it; *failure names the setting to raise when a cap on
 * counts refused (no growth would help).  Caller holds controllers_lock
 * (shared), holders_lock and every partition lock (exclusive).
 */
static int
sync_load_row(LoadState *ls, SyncStateRow *row, const char **failure)
{
	uint32		hashcode;
	SyncLock   *lock;
	SyncHolder *h;
	SyncEntry  *e;

	lock = sync_load_lock(row, ls->limit_relid, &hashcode);
	if (lock == NULL)
	{
		*failure = sync_locks_full_setting();
		return SYNC_POOL_LOCKS;
	}
	h = sync_holder_lookup(row->holder, true);
	if (h == NULL)
	{
		sync_lock_idle(lock);
		*failure = sync_holders_full_setting();
		return SYNC_POOL_HOLDERS;
	}
	e = sync_load_entry(ls, row, lock, hashcode, h);
	if (e == NULL)
	{
		if (h->nentries == 0)
			sync_holder_remove(h);
		sync_lock_idle(lock);
		*failure = sync_entries_full_setting();
		return SYNC_POOL_ENTRIES;
	}
	sync_load_place(ls, row, e);
	return -1;
}

/*
 * Every row is loaded: close the rings of requests that name several locks,
 * move the counters past what the rows used, and grant what slots freed
 * while we were down (a raised limit) allow.  Caller holds the locks of
 * sync_load_row().
 */
static void
sync_load_finish(LoadState *ls)
{
	HASH_SEQ_STATUS status;
	RequestRing *ring;
	SyncLiveIter it;

	hash_seq_init(&status, ls->rings);
	while ((ring = hash_seq_search(&status)) != NULL)
	{
		SyncEntry  *e = ring->first;

		ring->last->next_in_request = sync_entry_index(ring->first);
		do
		{
			e->nlocks = ring->n;
			e->partmask = ring->partmask;
			e = sync_next_in_request(e);
		} while (e != ring->first);
	}

	sync_tokens_advance(ls->max_token + 1);
	sync_atomic_advance(&sync_shmem->next_seq, ls->max_seq + 1);
	sync_atomic_advance(&sync_shmem->next_request_id, ls->max_request + 1);

	/* slots freed while we were down (raised limits) go to the queues */
	sync_foreach_live_lock(it)
	{
		SyncLock   *lock = sync_live_lock(it);

		if (lock->tag.dbid == MyDatabaseId)
			sync_grant_waiters(lock);
	}
}

/*
 * One pass of sync_keyed_install(): take the locks, replace the keyed
 * entries of this database with the rows, let the locks go.  Returns -1
 * when every row is in, else the pool that ran out (everything loaded is
 * taken out again); *failure is set when a cap on counts refused.
 */
static int
sync_load_pass(LoadState *ls, List *rows, const char **failure)
{
	uint32		all = SYNC_ALL_PARTITIONS;
	ListCell   *lc;
	int			empty = -1;

	LWLockAcquire(sync_controllers_lock(), LW_SHARED);
	LWLockAcquire(sync_holders_lock(), LW_EXCLUSIVE);
	sync_lock_partitions(all, LW_EXCLUSIVE);

	(void) sync_keyed_purge(NULL, NULL);
	foreach(lc, rows)
	{
		empty = sync_load_row(ls, (SyncStateRow *) lfirst(lc), failure);
		if (empty >= 0)
			break;
	}
	if (empty >= 0)
		(void) sync_keyed_purge(NULL, NULL);
	else
		sync_load_finish(ls);
	sync_unlock_partitions(all);
	LWLockRelease(sync_holders_lock());
	LWLockRelease(sync_controllers_lock());
	sync_grant_deferred();
	return empty;
}

/*
 * Put the rows read from sync_state into shared memory, replacing whatever
 * keyed entries of this database were there.  Rows come held first, then in
 * queue order.  Fails as a whole (53200) when memory is too small.
 *
 * Memory grows only while no LWLock is held (an error of the operating
 * system must not leave a load half-done): hash buckets and an entry for
 * every row before the first pass; when a pass finds no free lock or holder record, the
 * pool grows to twice its size and the load starts again, so a load of n
 * rows into empty memory makes O(log n) passes and O(n) work.
 *
 * Takes controllers_lock (shared), holders_lock and every partition lock
 * (exclusive), in that order; the caller holds none of them.
 */
void
sync_keyed_install(List *rows, List *controllers, Oid limit_relid)
{
	LoadState	ls;
	const char *failure = NULL;

	sync_load_begin(&ls, rows, controllers, limit_relid);
	sync_lock_buckets_grow(list_length(rows));
	sync_holder_buckets_grow(list_length(rows));
	if (!sync_pool_reserve(SYNC_POOL_ENTRIES, list_length(rows)))
		failure = "syncwf.max_memory";
	for (int pass = 0; failure == NULL; pass++)
	{
		const char *refused = NULL;
		int			empty = sync_load_pass(&ls, rows, &refused);
		int64		made;
		int64		nfree;

		if (empty < 0)
			break;
		sync_pool_counts(empty, &made, &nfree);
		if (strcmp(refused, "syncwf.max_memory") != 0 || pass >= 32 ||
			!sync_pool_reserve(empty, Max(2 * made, SYNC_SLAB_SIZE)))
			failure = refused;
		sync_load_restart(&ls);
	}
	hash_destroy(ls.rings);

	if (failure)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("cannot load %d keyed entries from sync_state into shared memory",
						list_length(rows)),
				 errhint("Raise %s in postgresql.conf and reload the configuration.", failure)));
}

/*
 * Call visit() for every held keyed entry of this database, under
 * holders_lock and every partition lock, all shared.
 */
typedef void (*HeldVisitor) (SyncEntry *e, void *arg);

static void
sync_keyed_visit_held(HeldVisitor visit, void *arg)
{
	uint32		all = SYNC_ALL_PARTITIONS;
	SyncLiveIter it;

	LWLockAcquire(sync_holders_lock(), LW_SHARED);
	sync_lock_partitions(all, LW_SHARED);
	sync_foreach_live_lock(it)
	{
		SyncLock   *lock = sync_live_lock(it);

		if (lock->tag.dbid != MyDatabaseId || lock->nheld == 0)
			continue;
		sync_elist_foreach(e, &lock->holders, lock_link)
		{
			if (e->scope == SYNC_SCOPE_KEYED)
				visit(e, arg);
		}
	}
	sync_unlock_partitions(all);
	LWLockRelease(sync_holders_lock());
}

static void
sync_collect_unpersisted(SyncEntry *e, void *arg)
{
	List	  **items = (List **) arg;
	SyncOutboxItem *item;

	if (e->persisted || TransactionIdIsValid(e->created_xid))
		return;
	item = palloc(sizeof(SyncOutboxItem));
	item->entry = e;
	item->request_id = e->request_id;
	item->token = e->token;
	*items = lappend(*items, item);
}

/*
 * Every held keyed entry of this database whose grant the table does not
 * record yet (after the outbox overflowed, or at the worker's start).
 */
List *
sync_keyed_unpersisted(void)
{
	List	   *items = NIL;

	sync_keyed_visit_held(sync_collect_unpersisted, &items);
	return items;
}

/*
 * Pending keyed entries of this database that can never be granted now,
 * because their semaphore's limit or rate was lowered under their slots
 * (sync_entry_unfit()), copied out as rows (name, holder, request id) for
 * the worker to withdraw.  An entry whose row is not committed yet makes
 * *retry true: look again shortly.
 */
List *
sync_keyed_unfit(bool *retry)
{
	uint32		all = SYNC_ALL_PARTITIONS;
	SyncLiveIter it;
	List	   *rows = NIL;

	*retry = false;
	LWLockAcquire(sync_holders_lock(), LW_SHARED);
	sync_lock_partitions(all, LW_SHARED);
	sync_foreach_live_lock(it)
	{
		SyncLock   *lock = sync_live_lock(it);
		SyncEntryList *lists[2] = {&lock->waiters, &lock->dormant};

		if (lock->tag.dbid != MyDatabaseId || lock->kind != SYNC_KIND_SEMAPHORE)
			continue;
		for (int l = 0; l < 2; l++)
		{
			sync_elist_foreach(e, lists[l], lock_link)
			{
				SyncStateRow *row;

				if (e->scope != SYNC_SCOPE_KEYED || !sync_entry_unfit(e))
					continue;
				if (TransactionIdIsValid(e->created_xid) ||
					TransactionIdIsValid(e->release_xid))
				{
					*retry = true;
					continue;
				}
				row = palloc0(sizeof(SyncStateRow));
				row->name = pstrdup(lock->tag.name);
				row->holder = pstrdup(sync_entry_holder(e)->tag.key);
				row->request_id = (int64) e->request_id;
				rows = lappend(rows, row);
			}
		}
	}
	sync_unlock_partitions(all);
	LWLockRelease(sync_holders_lock());
	return rows;
}

typedef struct ExpiryScan
{
	TimestampTz now;
	TimestampTz next;
	List	   *expired;
} ExpiryScan;

static void
sync_collect_expired(SyncEntry *e, void *arg)
{
	ExpiryScan *scan = (ExpiryScan *) arg;

	if (e->lease_expires == 0)
		return;
	if (e->lease_expires > scan->now)
		scan->next = Min(scan->next, e->lease_expires);
	else if (!e->persisted || TransactionIdIsValid(e->created_xid) ||
			 TransactionIdIsValid(e->release_xid))
	{
		/* its row is not final yet: look again shortly */
		scan->next = Min(scan->next, scan->now + USECS_PER_SEC / 4);
	}
	else
	{
		SyncStateRow *row = palloc0(sizeof(SyncStateRow));

		row->name = pstrdup(sync_entry_lock(e)->tag.name);
		row->holder = pstrdup(sync_entry_holder(e)->tag.key);
		row->token = (int64) e->token;
		row->request_id = (int64) e->request_id;
		row->preempt_deadline = e->preempt_deadline;
		scan->expired = lappend(scan->expired, row);
	}
}

/*
 * Held keyed entries of this database whose lease has expired by 'now',
 * copied out; *next is set to the next moment to look again (DT_NOEND if
 * no lease is running).
 */
List *
sync_keyed_expired(TimestampTz now, TimestampTz *next)
{
	ExpiryScan	scan;

	scan.now = now;
	scan.next = DT_NOEND;
	scan.expired = NIL;
	sync_keyed_visit_held(sync_collect_expired, &scan);
	*next = scan.next;
	return scan.expired;
}

/*
 * Copy what the worker needs to write and announce a grant; false if the
 * entry has moved on since it was queued in the outbox.
 */
bool
sync_keyed_grant_info(SyncOutboxItem *item, SyncStateRow *row)
{
	SyncEntry  *e = item->entry;
	bool		ok = false;

	LWLockAcquire(sync_holders_lock(), LW_SHARED);
	if (sync_keyed_entry_is(e, item->request_id) &&
		sync_entry_lock(e)->tag.dbid == MyDatabaseId)
	{
		LWLock	   *partition = sync_partition_lock(sync_entry_lock(e)->hashcode);

		LWLockAcquire(partition, LW_SHARED);
		if (e->state == SYNC_ENTRY_HELD && e->token == item->token &&
			!e->persisted && !TransactionIdIsValid(e->created_xid))
		{
			memset(row, 0, sizeof(SyncStateRow));
			row->name = pstrdup(sync_entry_lock(e)->tag.name);
			row->holder = pstrdup(sync_entry_holder(e)->tag.key);
			row->controller = (e->controller >= 0) ?
				pstrdup(sync_controller_name(e->controller)) : NULL;
			row->held = true;
			row->token = (int64) e->token;
			row->granted_at = e->since;
			row->lease_expires = e->lease_expires;
			row->request_id = (int64) e->request_id;
			ok = true;
		}
		LWLockRelease(partition);
	}
	LWLockRelease(sync_holders_lock());
	return ok;
}

/*
 * A pending request waits against a new limit of its own (a launch plan
 * version's max_concurrency changed); a raised one may grant at once.  The
 * row is the caller's to update.
 */
void
sync_keyed_set_admit_limit(const char *name, const char *holder, int32 limit,
						   bool grant)
{
	SyncHolder *h;
	SyncEntry  *e;

	LWLockAcquire(sync_holders_lock(), LW_SHARED);
	h = sync_holder_lookup(holder, false);
	e = sync_holder_entry(h, name);
	if (e != NULL)
	{
		uint32		partmask = e->partmask;

		sync_lock_partitions(partmask, LW_EXCLUSIVE);
		if (e->state == SYNC_ENTRY_PENDING || e->state == SYNC_ENTRY_DORMANT)
		{
			SyncEntry  *x = e;

			do
			{
				x->admit_limit = limit;
				x = sync_next_in_request(x);
			} while (x != e);
			if (grant)
				sync_grant_waiters(sync_entry_lock(e));
		}
		sync_unlock_partitions(partmask);
	}
	LWLockRelease(sync_holders_lock());
	sync_grant_deferred();
}
