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
		ring->last->next_in_request = e;
		ring->last = e;
		ring->n++;
		ring->partmask |= e->partmask;
	}
}

/*
 * Put the rows read from sync_state into shared memory, replacing whatever
 * keyed entries of this database were there.  Rows come held first, then in
 * queue order.  Fails as a whole (53200) when memory is too small.
 */
void
sync_keyed_install(List *rows, List *controllers, Oid limit_relid)
{
	uint32		all = SYNC_ALL_PARTITIONS;
	ListCell   *lc;
	HTAB	   *rings;
	HASHCTL		ctl;
	uint64		max_token = 0,
				max_seq = 0,
				max_request = 0;
	int			nfree;
	const char *failure = NULL;
	TimestampTz now = GetCurrentTimestamp();

	int		   *slots = palloc(sizeof(int) * Max(list_length(rows), 1));
	int32	   *weights = palloc(sizeof(int32) * Max(list_length(rows), 1));
	int			rowno = 0;

	foreach(lc, controllers)
	{
		SyncControllerRow *c = (SyncControllerRow *) lfirst(lc);

		sync_controller_restore(c->name, c->heartbeat, now);
	}
	/* slots for every controller named, before controllers_lock is held */
	foreach(lc, rows)
	{
		SyncStateRow *row = (SyncStateRow *) lfirst(lc);

		weights[rowno] = sync_fair_weight_of(row->name, row->fair_key);
		slots[rowno++] = row->controller ?
			sync_controller_slot_noerror(row->controller) : -1;
	}
	rowno = 0;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(((RequestRing *) 0)->key);
	ctl.entrysize = sizeof(RequestRing);
	ctl.hcxt = CurrentMemoryContext;
	rings = hash_create("syncwf load rings", 64, &ctl,
						HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);

	LWLockAcquire(sync_controllers_lock(), LW_SHARED);
	LWLockAcquire(sync_holders_lock(), LW_EXCLUSIVE);
	sync_lock_partitions(all, LW_EXCLUSIVE);

	(void) sync_keyed_purge(NULL, NULL);

	nfree = sync_entries_free();
	if (list_length(rows) > nfree)
		failure = "syncwf.max_entries";

	foreach(lc, rows)
	{
		SyncStateRow *row = (SyncStateRow *) lfirst(lc);
		SyncLockTag tag;
		uint32		hashcode;
		SyncLock   *lock;
		SyncEntry  *e;
		SyncHolder *h;
		bool		found;
		int			slot;

		if (failure)
			break;
		sync_make_tag(&tag, MyDatabaseId, row->name);
		hashcode = sync_tag_hash(&tag);
		lock = sync_lock_create(&tag, hashcode, &found);
		if (lock == NULL)
		{
			failure = "syncwf.max_locks";
			break;
		}
		if (!found)
		{
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
		}
		h = sync_holder_lookup(row->holder, true);
		if (h == NULL)
		{
			sync_lock_idle(lock);
			failure = "syncwf.max_holders";
			break;
		}
		e = sync_entry_alloc();
		Assert(e != NULL);
		e->lock = lock;
		e->request_id = (uint64) row->request_id;
		e->seq = (uint64) row->seq;
		e->priority = row->priority;
		e->pid = 0;
		e->procno = -1;
		e->scope = SYNC_SCOPE_KEYED;
		e->partmask = 1U << sync_partition_of(hashcode);
		e->nlocks = 1;
		e->holder = h;
		Assert(dlist_node_is_detached(&e->holder_link));
		dlist_push_tail(&h->entries, &e->holder_link);
		h->nentries++;
		e->queued_at = row->queued_at;
		e->lease_us = row->lease_us;
		e->owner = row->owner;
		e->admit_limit = row->admit_limit;
		e->claim = row->claim;
		e->slots = Max(row->slots, 1);
		e->shared = row->shared;
		sync_entry_set_fair(e, row->fair_key, weights[rowno]);
		slot = slots[rowno++];
		e->controller = slot;
		if (slot >= 0)
			sync_controller_ref(slot);
		if (row->held)
		{
			sync_ring_add(rings, row, e);
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
			sync_ring_add(rings, row, e);
			e->since = row->queued_at;
			if (slot < 0 || sync_controller_active(slot))
				sync_queue_insert(lock, e);
			else
				sync_dormant_insert(lock, e);
		}
		max_token = Max(max_token, (uint64) row->token);
		max_seq = Max(max_seq, (uint64) row->seq);
		max_request = Max(max_request, (uint64) row->request_id);
	}

	if (failure)
		(void) sync_keyed_purge(NULL, NULL);
	else
	{
		HASH_SEQ_STATUS status;
		RequestRing *ring;

		/* close the rings of requests that name several locks */
		hash_seq_init(&status, rings);
		while ((ring = hash_seq_search(&status)) != NULL)
		{
			SyncEntry  *e = ring->first;

			ring->last->next_in_request = ring->first;
			do
			{
				e->nlocks = ring->n;
				e->partmask = ring->partmask;
				e = e->next_in_request;
			} while (e != ring->first);
		}

		sync_tokens_advance(max_token + 1);
		sync_atomic_advance(&sync_shmem->next_seq, max_seq + 1);
		sync_atomic_advance(&sync_shmem->next_request_id, max_request + 1);

		/* slots freed while we were down (raised limits) go to the queues */
		{
			SyncLiveIter it;

			sync_foreach_live_lock(it)
			{
				SyncLock   *lock = sync_live_lock(it);

				if (lock->tag.dbid == MyDatabaseId)
					sync_grant_waiters(lock);
			}
		}
	}
	sync_unlock_partitions(all);
	LWLockRelease(sync_holders_lock());
	LWLockRelease(sync_controllers_lock());
	sync_grant_deferred();
	hash_destroy(rings);

	if (failure)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("cannot load %d keyed entries from sync_state into shared memory",
						list_length(rows)),
				 errhint("Raise %s in postgresql.conf and restart the server.", failure)));
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
		dlist_iter	iter;

		if (lock->tag.dbid != MyDatabaseId || lock->nheld == 0)
			continue;
		dlist_foreach(iter, &lock->holders)
		{
			SyncEntry  *e = dlist_container(SyncEntry, lock_link, iter.cur);

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
		dlist_head *lists[2] = {&lock->waiters, &lock->dormant};

		if (lock->tag.dbid != MyDatabaseId || lock->kind != SYNC_KIND_SEMAPHORE)
			continue;
		for (int l = 0; l < 2; l++)
		{
			dlist_iter	iter;

			dlist_foreach(iter, lists[l])
			{
				SyncEntry  *e = dlist_container(SyncEntry, lock_link, iter.cur);
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
				row->holder = pstrdup(e->holder->tag.key);
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

		row->name = pstrdup(e->lock->tag.name);
		row->holder = pstrdup(e->holder->tag.key);
		row->token = (int64) e->token;
		row->request_id = (int64) e->request_id;
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
		e->lock->tag.dbid == MyDatabaseId)
	{
		LWLock	   *partition = sync_partition_lock(e->lock->hashcode);

		LWLockAcquire(partition, LW_SHARED);
		if (e->state == SYNC_ENTRY_HELD && e->token == item->token &&
			!e->persisted && !TransactionIdIsValid(e->created_xid))
		{
			memset(row, 0, sizeof(SyncStateRow));
			row->name = pstrdup(e->lock->tag.name);
			row->holder = pstrdup(e->holder->tag.key);
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
				x = x->next_in_request;
			} while (x != e);
			if (grant)
				sync_grant_waiters(e->lock);
		}
		sync_unlock_partitions(partmask);
	}
	LWLockRelease(sync_holders_lock());
	sync_grant_deferred();
}
