/*-------------------------------------------------------------------------
 *
 * queue_order.c
 *		A lock's lists of entries and their order: the queue, ordered by
 *		priority (higher first), then queue time (a keyed request may give
 *		its workflow's creation time), then arrival; the dormant list of
 *		inactive controllers' entries, in the same order; the holder list,
 *		with the counts that go with each list (nheld and slots_held,
 *		nwaiting, ndormant); a waiter's position; the queue cap.  Which
 *		entry is granted, and when, is the grant pass's (wait_queue.c).
 *
 * Locking: every function here runs under the partition lock of the lock
 * whose lists it touches (lock_table.c).
 *
 * Layer 2: calls layers 0 and 1 (stats.c, lock_table.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "compat.h"
#include "queue_order.h"

/*
 * Link a granted entry into its lock's holders, or take one out, keeping
 * the counts (taking one out ends a hold, for the statistics).  Caller
 * holds the partition exclusively.
 */
void
sync_holder_link(SyncLock *lock, SyncEntry *e)
{
	Assert(sync_partition_held(lock->hashcode, true));
	Assert(e->lock == lock && dlist_node_is_detached(&e->lock_link));
	dlist_push_tail(&lock->holders, &e->lock_link);
	lock->nheld++;
	lock->slots_held += sync_entry_weight(e);
}

void
sync_holder_unlink(SyncEntry *e)
{
	SyncLock   *lock = e->lock;

	Assert(sync_partition_held(lock->hashcode, true));
	Assert(lock->nheld > 0 && lock->slots_held >= sync_entry_weight(e));
	dlist_delete_thoroughly(&e->lock_link);
	lock->nheld--;
	lock->slots_held -= sync_entry_weight(e);
	sync_stats_hold_ended(sync_lock_stats(lock), e->since);
}

/*
 * Take a pending or dormant entry out of its lock's queue or dormant list
 * without a grant: its wait ended as 'how' says (for the statistics).
 * Caller holds the partition exclusively.
 */
void
sync_waiter_unlink(SyncEntry *e, SyncWaitEnd how)
{
	SyncLock   *lock = e->lock;

	Assert(sync_partition_held(lock->hashcode, true));
	Assert(e->state == SYNC_ENTRY_PENDING || e->state == SYNC_ENTRY_DORMANT);
	dlist_delete_thoroughly(&e->lock_link);
	if (e->state == SYNC_ENTRY_PENDING)
		lock->nwaiting--;
	else
		lock->ndormant--;
	sync_stats_wait_ended(sync_lock_stats(lock), how, e->since);
}

/*
 * Does entry a go before entry b in a queue?  Priority first (higher
 * first), then the queue time (a keyed request may give its workflow's
 * creation time, as Argo orders), then arrival.
 */
bool
sync_entry_precedes(const SyncEntry *a, const SyncEntry *b)
{
	if (a->priority != b->priority)
		return a->priority > b->priority;
	if (a->queued_at != b->queued_at)
		return a->queued_at < b->queued_at;
	return a->seq < b->seq;
}

/*
 * Insert into an ordered list.  Newcomers usually belong at the tail, so
 * search from there; one that goes before the head (a higher priority) is
 * placed at once, whatever the length of the queue.
 */
static void
sync_ordered_insert(dlist_head *list, SyncEntry *entry)
{
	dlist_iter	iter;

	Assert(dlist_node_is_detached(&entry->lock_link));
	if (dlist_is_empty(list) ||
		sync_entry_precedes(entry, dlist_head_element(SyncEntry, lock_link, list)))
	{
		dlist_push_head(list, &entry->lock_link);
		return;
	}
	dlist_reverse_foreach(iter, list)
	{
		SyncEntry  *other = dlist_container(SyncEntry, lock_link, iter.cur);

		if (sync_entry_precedes(other, entry))
		{
			dlist_insert_after(&other->lock_link, &entry->lock_link);
			return;
		}
	}
	dlist_push_head(list, &entry->lock_link);
}

/*
 * Put a pending entry into its lock's queue.  Caller holds its partition
 * exclusively.
 */
void
sync_queue_insert(SyncLock *lock, SyncEntry *entry)
{
	Assert(sync_partition_held(lock->hashcode, true));
	Assert(entry->lock == lock && entry->state != SYNC_ENTRY_HELD);
	entry->state = SYNC_ENTRY_PENDING;
	lock->nwaiting++;
	sync_ordered_insert(&lock->waiters, entry);
}

/*
 * Put a pending entry of an inactive controller into its lock's dormant
 * list: it keeps its order there, is passed over by the grant pass, and
 * goes back into the queue when its controller heartbeats again.  Caller
 * holds its partition exclusively.
 */
void
sync_dormant_insert(SyncLock *lock, SyncEntry *entry)
{
	Assert(sync_partition_held(lock->hashcode, true));
	Assert(entry->lock == lock && entry->state != SYNC_ENTRY_HELD);
	entry->state = SYNC_ENTRY_DORMANT;
	lock->ndormant++;
	sync_ordered_insert(&lock->dormant, entry);
}

/*
 * The first entry of the queued request 'first' whose lock's queue
 * (waiters and entries of inactive controllers, the request's included) is
 * longer than the lock's max_waiters, or NULL.  Caller holds their
 * partitions.
 */
SyncEntry *
sync_queue_over_cap(SyncEntry *first)
{
	SyncEntry  *e = first;

	do
	{
		SyncLock   *lock = e->lock;

		Assert(sync_partition_held(lock->hashcode, false));
		if (lock->max_waiters >= 0 &&
			lock->nwaiting + lock->ndormant > lock->max_waiters)
			return e;
		e = e->next_in_request;
	} while (e != first);
	return NULL;
}

/*
 * Take the entries of a request that were just queued, and never granted,
 * out of their queues again: as if they had never been queued, so no
 * grant pass is due.  Caller holds their partitions exclusively, as it has
 * since it queued them.
 */
void
sync_queue_unlink(SyncEntry *first)
{
	SyncEntry  *e = first;

	do
	{
		SyncLock   *lock = e->lock;

		Assert(sync_partition_held(lock->hashcode, true));
		if (e->state == SYNC_ENTRY_PENDING)
			lock->nwaiting--;
		else
		{
			Assert(e->state == SYNC_ENTRY_DORMANT);
			lock->ndormant--;
		}
		dlist_delete_thoroughly(&e->lock_link);
		e->state = SYNC_ENTRY_FREE;
		e = e->next_in_request;
	} while (e != first);
}

/*
 * 1-based position of a pending entry in its queue; 0 if not queued.
 * Caller holds its partition.
 */
int
sync_queue_position(SyncEntry *entry)
{
	dlist_iter	iter;
	int			pos = 0;

	Assert(sync_partition_held(entry->lock->hashcode, false));
	if (entry->state != SYNC_ENTRY_PENDING)
		return 0;
	dlist_foreach(iter, &entry->lock->waiters)
	{
		pos++;
		if (dlist_container(SyncEntry, lock_link, iter.cur) == entry)
			return pos;
	}
	return 0;
}
