/*-------------------------------------------------------------------------
 *
 * holder_table.c
 *		Keyed holds in shared memory: entries owned by a holder key (Argo's
 *		workflow key) instead of a backend, the shared holder table that
 *		finds them, and lookups and releases on behalf of a holder.  A
 *		request is made by keyed_request.c; what a transaction did to them
 *		is applied at its commit by keyed_xact.c; they are rebuilt from
 *		sync_state by keyed_load.c; the table rows are written by the
 *		engine above (keyed_ops.c), which keeps the two in step like this:
 *
 *	- A request creates its entries at once, marked with the requesting
 *	  transaction (created_xid), queued or granted like any other request,
 *	  and the engine writes their rows.  The entries count at once (so two
 *	  requests can never both take the last slot); at commit the mark is
 *	  cleared, at abort the entries are withdrawn.  Someone else asking
 *	  about a marked entry waits for that transaction first.
 *	- A release deletes the row and marks the entry (release_xid).  At
 *	  commit the entry is released and its slot handed on; at abort the mark
 *	  is cleared.  Manual DELETEs of sync_state take exactly the same path.
 *	- A transaction that releases a held entry hands its slot on itself
 *	  when it can: at pre-commit it reserves the waiter that will get the
 *	  slot (reserved_xid), writes that waiter's grant to the table and
 *	  queues the NOTIFY, and at commit the slot passes to it
 *	  (keyed_xact.c).  Someone else asking about a reserved entry waits for
 *	  that transaction first.
 *	- Any other grant to a pending entry (a release applied where nothing
 *	  can be written: a commit callback, a session's exit) is queued in the
 *	  outbox, and the worker (or sync_reconcile) writes held = true and
 *	  sends the NOTIFY.
 *	- At start (and after the extension is created again) the entries are
 *	  rebuilt from the table before anything in this database is granted.
 *
 * Locking order: controllers_lock, then holders_lock (this file's LWLock,
 * tranche "syncwf holders"), then partition locks in ascending order.
 * holders_lock protects the holder hash (its chains and bucket array:
 * core/shared_pool.c), every keyed entry's holder_link,
 * created_xid, release_xid and reserved_xid, and keeps keyed entries from
 * being freed (freeing needs it exclusively).  created_xid and
 * reserved_xid are written with the entry's partition lock held too, so
 * the grant pass may read them.  The load state is protected by the
 * spinlock 'mutex'.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "keyed/keyed_internal.h"

/* Load state of the durable database's keyed holds. */
typedef enum SyncKeyedLoadState
{
	SYNC_KEYED_NOT_LOADED = 0,
	SYNC_KEYED_LOADED
} SyncKeyedLoadState;

typedef struct SyncHolders
{
	LWLock	   *lock;			/* holders_lock: see above */
	slock_t		mutex;			/* the load state below */
	int			load_state;		/* SyncKeyedLoadState */
	Oid			dbid;			/* database the keyed holds live in */
	Oid			state_relid;	/* sync_state they were loaded from */
	SyncBuckets hash;			/* the holder records, under holders_lock */
	int32		nholders;		/* records in use, under holders_lock */
} SyncHolders;

static SyncHolders *Holders = NULL;
static SyncBucketsCache holder_buckets;

/* The hash's first buckets; the array doubles as it fills. */
#define SYNC_HOLDER_BUCKETS_INIT	1024

/* Did syncwf.max_holders refuse the last record this backend asked for? */
static bool holders_refused_by_count = false;

Size
sync_holders_shmem_size(void)
{
	return MAXALIGN(sizeof(SyncHolders));
}

void
sync_holders_shmem_request(void)
{
	RequestNamedLWLockTranche(SYNC_HOLDERS_TRANCHE, 1);
}

/* Create or attach to the holder table.  Caller holds AddinShmemInitLock. */
void
sync_holders_shmem_init(void)
{
	bool		found;

	Holders = ShmemInitStruct("syncwf holders state", sizeof(SyncHolders), &found);
	if (!found)
	{
		memset(Holders, 0, sizeof(SyncHolders));
		Holders->lock = &GetNamedLWLockTranche(SYNC_HOLDERS_TRANCHE)->lock;
		SpinLockInit(&Holders->mutex);
		Holders->load_state = SYNC_KEYED_NOT_LOADED;
		sync_buckets_init(&Holders->hash, SYNC_HOLDER_BUCKETS_INIT, 0);
	}
}

static void holders_entry_freeing(SyncEntry *entry);
static void holders_entry_granted(SyncEntry *entry);

/* Module load: keyed entries are freed and granted through these hooks. */
void
sync_holders_init(void)
{
	sync_pool_define(SYNC_POOL_HOLDERS, "holder keys", sizeof(SyncHolder), NULL);
	sync_entry_set_free_hook(holders_entry_freeing);
	sync_queue_set_grant_hook(holders_entry_granted);
}

/* holders_lock: after controllers_lock, before any partition lock */
LWLock *
sync_holders_lock(void)
{
	return Holders->lock;
}

/*
 * Are the keyed holds of this database in shared memory, loaded from the
 * sync_state table 'relid'?  Without a lock or spinlock in the usual case.
 */
bool
sync_keyed_loaded(Oid relid)
{
	bool		loaded;

	if (Holders->load_state == SYNC_KEYED_LOADED && Holders->state_relid == relid)
		return true;
	SpinLockAcquire(&Holders->mutex);
	loaded = (Holders->load_state == SYNC_KEYED_LOADED &&
			  Holders->state_relid == relid);
	SpinLockRelease(&Holders->mutex);
	return loaded;
}

/* The keyed holds of this database are loaded from sync_state 'relid'. */
void
sync_keyed_set_loaded(Oid relid)
{
	SpinLockAcquire(&Holders->mutex);
	Holders->load_state = SYNC_KEYED_LOADED;
	Holders->dbid = MyDatabaseId;
	Holders->state_relid = relid;
	SpinLockRelease(&Holders->mutex);
}

/*
 * Find the holder record of 'key', or create it: NULL when there is no free
 * record (the caller undoes its work and calls sync_holders_make_room()).
 * Caller holds holders_lock, exclusively to create.
 */
SyncHolder *
sync_holder_lookup(const char *key, bool create)
{
	uint32		hashcode = sync_holder_key_hash(MyDatabaseId, key);
	SyncBuckets *b = &Holders->hash;
	SyncHolder *holder;
	int32		n;

	Assert(create ? LWLockHeldByMeInMode(Holders->lock, LW_EXCLUSIVE) :
		   LWLockHeldByMe(Holders->lock));
	for (n = sync_buckets_first(b, &holder_buckets, hashcode); n >= 0;
		 n = holder->pooled.next)
	{
		holder = sync_holder_at(n);
		if (holder->hashcode == hashcode && holder->tag.dbid == MyDatabaseId &&
			strcmp(holder->tag.key, key) == 0)
			return holder;
	}
	if (!create)
		return NULL;

	holders_refused_by_count = false;
	if (sync_max_holders >= 0 && Holders->nholders >= sync_max_holders)
	{
		holders_refused_by_count = true;
		return NULL;
	}
	n = sync_pool_alloc(SYNC_POOL_HOLDERS, false);	/* growing: see below */
	if (n < 0)
		return NULL;
	holder = sync_holder_at(n);
	memset(&holder->tag, 0, sizeof(holder->tag));
	holder->tag.dbid = MyDatabaseId;
	strlcpy(holder->tag.key, key, sizeof(holder->tag.key));
	holder->hashcode = hashcode;
	holder->nentries = 0;
	sync_elist_init(&holder->entries);
	Holders->nholders++;
	/* more objects than buckets: sync_holder_buckets_grow() doubles them */
	sync_buckets_link(b, &holder_buckets, hashcode, &holder->pooled);
	return holder;
}

/*
 * Double the holder hash's buckets if it holds more records than it has
 * buckets, or, with 'nholders', give it room for that many.  The caller
 * holds no LWLock (sync_buckets_grow() allocates before it locks): a
 * keyed request calls this before it binds, a load before its passes.
 */
void
sync_holder_buckets_grow(int64 nholders)
{
	sync_buckets_grow(&Holders->hash, &holder_buckets, Holders->lock,
					  SYNC_POOL_HOLDERS, offsetof(SyncHolder, hashcode),
					  (uint32) Min(nholders, PG_INT32_MAX));
}

/*
 * sync_holder_lookup() found no free record: make one, holding no LWLock
 * (growing the memory may raise an error).  False if syncwf.max_holders or
 * syncwf.max_memory refuses.
 */
bool
sync_holders_make_room(void)
{
	if (holders_refused_by_count)
		return false;
	return sync_pool_reserve(SYNC_POOL_HOLDERS, 1);
}

/*
 * Take a holder record without entries out of the hash, and free it: the
 * last entry left (holders_entry_freeing), or sync_holder_lookup() just
 * made it and no entry came.  Caller holds holders_lock exclusively.
 */
void
sync_holder_remove(SyncHolder *holder)
{
	Assert(LWLockHeldByMeInMode(Holders->lock, LW_EXCLUSIVE));
	Assert(holder->nentries == 0);
	sync_buckets_unlink(&Holders->hash, &holder_buckets, holder->hashcode,
						SYNC_POOL_HOLDERS, sizeof(SyncHolder), &holder->pooled);
	Holders->nholders--;
	sync_pool_free(SYNC_POOL_HOLDERS, &holder->pooled);
}

/* The setting that refused the last record, for a hint. */
const char *
sync_holders_full_setting(void)
{
	return holders_refused_by_count ? "syncwf.max_holders" : "syncwf.max_memory";
}

/* Report that sync_holder_lookup() could not create a record. */
void
sync_report_holders_full(void)
{
	if (holders_refused_by_count)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("syncwf holder table is full"),
				 errdetail("All %d holder keys are in use.", sync_max_holders),
				 errhint("Raise syncwf.max_holders, or set it to -1, and reload the configuration.")));
	sync_memory_report_full(SYNC_POOL_HOLDERS);
}

/*
 * The holder's entry for lock 'name', skipping one this transaction is
 * releasing (a request after a release in one transaction is a new one).
 * Caller holds holders_lock.
 */
SyncEntry *
sync_holder_entry(SyncHolder *holder, const char *name)
{
	Assert(LWLockHeldByMe(Holders->lock));
	if (holder == NULL)
		return NULL;
	sync_elist_foreach(e, &holder->entries, holder_link)
	{
		if (TransactionIdIsValid(e->release_xid) &&
			TransactionIdIsCurrentTransactionId(e->release_xid))
			continue;
		if (strcmp(sync_entry_lock(e)->tag.name, name) == 0)
			return e;
	}
	return NULL;
}

/*
 * sync_entry_free()'s hook: unlink a keyed entry from its holder before it
 * goes back to the pool, and wake whoever waits for it (sync_wait).  Caller
 * holds holders_lock exclusively and the entry's partition.
 */
static void
holders_entry_freeing(SyncEntry *entry)
{
	SyncHolder *holder = sync_entry_holder(entry);

	Assert(LWLockHeldByMeInMode(Holders->lock, LW_EXCLUSIVE));
	Assert(sync_partition_held(sync_entry_lock(entry)->hashcode, true));
	sync_holder_changed(holder->tag.dbid, holder->tag.key);	/* sync_wait */
	sync_elist_delete(&holder->entries, entry, SYNC_HOLDER_LINK);
	if (--holder->nentries == 0)
		sync_holder_remove(holder);
	if (entry->controller >= 0)
		sync_controller_unref(entry->controller);
	entry->holderno = SYNC_ENTRY_NONE;
	entry->created_xid = InvalidTransactionId;
	entry->release_xid = InvalidTransactionId;
	entry->reserved_xid = InvalidTransactionId;
}

/*
 * The grant hook of wait_queue.c, for every keyed entry granted by the
 * grant pass or a hand-off, under the entry's partition lock.  Starts the
 * lease, hands a grant of a committed pending entry to the worker, which
 * writes and announces it (a grant while the requesting transaction is
 * open is handed over when it commits; a hand-off was written and
 * announced by the releasing transaction, which is committing now), and
 * wakes whoever waits for it (sync_wait).
 */
static void
holders_entry_granted(SyncEntry *entry)
{
	bool		handoff = TransactionIdIsValid(entry->reserved_xid);

	Assert(sync_partition_held(sync_entry_lock(entry)->hashcode, true));
	Assert(!handoff || LWLockHeldByMeInMode(Holders->lock, LW_EXCLUSIVE));
	entry->reserved_xid = InvalidTransactionId;
	entry->persisted = handoff;
	if (entry->lease_us > 0)
	{
		entry->lease_expires = entry->since + entry->lease_us;
		sync_lease_scheduled(entry->lease_expires);
	}
	else
		entry->lease_expires = 0;
	if (!handoff && !TransactionIdIsValid(entry->created_xid))
		sync_outbox_push(entry);
	sync_holder_changed(sync_entry_holder(entry)->tag.dbid,
						sync_entry_holder(entry)->tag.key);
}

/*
 * Copy what callers need of entry 'e'.  Caller holds holders_lock (so it
 * cannot be freed) and its partition.
 */
void
sync_keyed_entry_info(SyncEntry *e, SyncKeyedInfo *info)
{
	Assert(LWLockHeldByMe(Holders->lock));
	Assert(sync_partition_held(sync_entry_lock(e)->hashcode, false));
	info->found = true;
	info->state = e->state;
	info->token = (int64) e->token;
	info->owner = e->owner;
	info->lease_us = e->lease_us;
	info->lease_expires = e->lease_expires;
	info->request_id = e->request_id;
	info->nlocks = e->nlocks;
	info->controller = e->controller;
	info->persisted = e->persisted;
	info->entry = e;
}

/* The same, taking the partition for the fields it guards. */
static void
sync_keyed_copy_info(SyncEntry *e, SyncKeyedInfo *info)
{
	LWLock	   *partition = sync_partition_lock(sync_entry_lock(e)->hashcode);

	LWLockAcquire(partition, LW_SHARED);
	sync_keyed_entry_info(e, info);
	LWLockRelease(partition);
}

/*
 * Look up the entry of 'holder' for lock 'name' and copy what callers need.
 * Entries another transaction is still creating are not there yet.
 */
bool
sync_keyed_lookup(const char *name, const char *holder, SyncKeyedInfo *info)
{
	SyncHolder *h;
	SyncEntry  *e;

	memset(info, 0, sizeof(SyncKeyedInfo));
	LWLockAcquire(Holders->lock, LW_SHARED);
	h = sync_holder_lookup(holder, false);
	e = sync_holder_entry(h, name);
	if (e != NULL && TransactionIdIsValid(e->created_xid) &&
		!TransactionIdIsCurrentTransactionId(e->created_xid))
		e = NULL;
	if (e != NULL)
		sync_keyed_copy_info(e, info);
	LWLockRelease(Holders->lock);
	return info->found;
}

/*
 * The names of every lock 'holder' has an entry for (committed, or created
 * by this transaction).
 */
List *
sync_keyed_holder_locks(const char *holder)
{
	SyncHolder *h;
	List	   *names = NIL;

	LWLockAcquire(Holders->lock, LW_SHARED);
	h = sync_holder_lookup(holder, false);
	if (h != NULL)
		sync_elist_foreach(e, &h->entries, holder_link)
		{
			if (TransactionIdIsValid(e->created_xid) &&
				!TransactionIdIsCurrentTransactionId(e->created_xid))
				continue;
			names = lappend(names, pstrdup(sync_entry_lock(e)->tag.name));
		}
	LWLockRelease(Holders->lock);
	return names;
}

/*
 * The other locks of the request 'entry' belongs to (none if it has moved
 * on).  holders_lock keeps keyed rings from changing while we walk one.
 */
List *
sync_keyed_request_locks(SyncEntry *entry, uint64 request_id)
{
	List	   *names = NIL;

	LWLockAcquire(Holders->lock, LW_SHARED);
	if (sync_keyed_entry_is(entry, request_id))
		for (SyncEntry *e = sync_next_in_request(entry); e != entry;
			 e = sync_next_in_request(e))
			names = lappend(names, pstrdup(sync_entry_lock(e)->tag.name));
	LWLockRelease(Holders->lock);
	return names;
}

/*-------------------------------------------------------------------------
 * Releases
 *-------------------------------------------------------------------------
 */

/*
 * The row of (name, holder, request_id) is being deleted by transaction
 * 'xid': mark its entry, which is released when that transaction commits
 * (keyed_xact.c).  Fills *info with what the caller needs (whether it was
 * held, its token, controller, request size); false if there is no such
 * entry.
 */
bool
sync_keyed_mark_release(const char *name, const char *holder, uint64 request_id,
						TransactionId xid, SyncKeyedInfo *info)
{
	SyncHolder *h;
	SyncEntry  *e = NULL;

	memset(info, 0, sizeof(SyncKeyedInfo));
	LWLockAcquire(Holders->lock, LW_EXCLUSIVE);
	h = sync_holder_lookup(holder, false);
	if (h != NULL)
		sync_elist_foreach(c, &h->entries, holder_link)
		{
			if (c->request_id == request_id && strcmp(sync_entry_lock(c)->tag.name, name) == 0)
			{
				e = c;
				break;
			}
		}
	if (e == NULL)
	{
		LWLockRelease(Holders->lock);
		return false;
	}
	e->release_xid = xid;
	sync_keyed_copy_info(e, info);
	LWLockRelease(Holders->lock);
	return true;
}

/*
 * Release one held keyed entry and hand its slot on: to 'next', the waiter
 * the releasing transaction reserved, with the token and grant time it
 * wrote (see keyed_xact.c), or if NULL to whoever the grant pass picks.
 * Caller holds holders_lock exclusively.  If it was granted with others
 * (one request naming several locks), it leaves their ring first.
 */
void
sync_keyed_release_held(SyncEntry *e, SyncEntry *next, uint64 token,
						TimestampTz since)
{
	SyncLock   *lock = sync_entry_lock(e);
	uint32		partmask = (sync_next_in_request(e) != e) ? e->partmask :
		(1U << sync_partition_of(lock->hashcode));

	Assert(LWLockHeldByMeInMode(Holders->lock, LW_EXCLUSIVE));
	sync_lock_partitions(partmask, LW_EXCLUSIVE);
	Assert(e->state == SYNC_ENTRY_HELD);
	if (sync_next_in_request(e) != e)
	{
		SyncEntry  *p = e;
		SyncEntry  *rest = sync_next_in_request(e);

		while (sync_next_in_request(p) != e)
			p = sync_next_in_request(p);
		p->next_in_request = sync_entry_index(rest);
		e->next_in_request = sync_entry_index(e);
		/* the others were granted together; they now count one lock less */
		p = rest;
		do
		{
			p->nlocks--;
			p = sync_next_in_request(p);
		} while (p != rest);
	}
	if (next != NULL)
		sync_handoff_grant(e, next, token, since);
	else
		sync_holder_unlink(e);
	sync_entry_free(e);
	sync_grant_waiters(lock);
	sync_lock_idle(lock);
	sync_unlock_partitions(partmask);
}

/*
 * Free every keyed entry of this database that 'filter' accepts, then run
 * the grant pass of every lock.  Caller holds holders_lock and every
 * partition exclusively.
 */
int
sync_keyed_purge(SyncKeyedFilter filter, void *arg)
{
	SyncLiveIter it;
	int			n = 0;

	Assert(LWLockHeldByMeInMode(Holders->lock, LW_EXCLUSIVE));
	Assert(sync_partitions_held(SYNC_ALL_PARTITIONS, true));
	sync_foreach_live_lock(it)
	{
		SyncLock   *lock = sync_live_lock(it);
		SyncEntryList *lists[3] = {&lock->holders, &lock->waiters, &lock->dormant};

		if (lock->tag.dbid != MyDatabaseId)
			continue;
		for (int l = 0; l < 3; l++)
		{
			sync_elist_foreach_modify(e, lists[l], lock_link)
			{
				if (e->scope != SYNC_SCOPE_KEYED || (filter && !filter(e, arg)))
					continue;
				if (e->state == SYNC_ENTRY_HELD)
					sync_holder_unlink(e);
				else
					sync_waiter_unlink(e, SYNC_WAIT_CANCEL);
				sync_entry_free(e);
				n++;
			}
		}
	}

	/* second pass: hand freed slots on; drop what is now idle */
	sync_foreach_live_lock(it)
	{
		SyncLock   *lock = sync_live_lock(it);

		if (lock->tag.dbid != MyDatabaseId)
			continue;
		sync_grant_waiters(lock);
		sync_lock_idle(lock);
	}
	return n;
}
