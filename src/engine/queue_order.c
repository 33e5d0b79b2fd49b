/*-------------------------------------------------------------------------
 *
 * queue_order.c
 *		A lock's lists of entries and their order: the queue, ordered by
 *		priority (higher first), then fair tag, then queue time (a keyed
 *		request may give its workflow's creation time), then arrival; the
 *		dormant list of inactive controllers' entries, by priority, queue
 *		time and arrival; the holder list, with the counts that go with each
 *		list (nheld and slots_held, nwaiting, ndormant); a waiter's
 *		position; the queue cap.  Which entry is granted, and when, is the
 *		grant pass's (wait_queue.c).
 *
 * Fair queueing.  Within one priority, a queue is shared among fair keys
 * (a tenant, a user, a project; requests without one share one implicit
 * key) in proportion to their weights, by start-time fair queueing: each
 * entry gets a virtual tag as it is queued.  The first entry of a key
 * that has none queued at that priority gets the tag of the priority's
 * head (a key that was away gets no credit for it); the next one of the
 * same key gets the tag of the one before it plus that one's slots divided
 * by its weight.  The queue is in tag order, so a key with weight 3 has
 * three entries in each unit of tags where a key with weight 1 has one,
 * and a key with 1,000 entries queued leaves room for a newcomer right
 * behind the head.  Within one key the order is queue time, then arrival,
 * as it always was: an entry that goes before entries of its own key
 * already queued (a keyed request with an older queue time) takes its
 * place among them and they are tagged again after it.  When a key's
 * weight changes (fair_weights.c) its entries are tagged again from its
 * first one.  A queue where every entry has the same key is in exactly
 * the order it had before fair queueing, and costs the same to keep: the
 * new entry's predecessor of its key is the tail.
 *
 * Locking: every function here runs under the partition lock of the lock
 * whose lists it touches (lock_table.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "engine/engine_internal.h"

/*
 * Link a granted entry into its lock's holders, or take one out, keeping
 * the counts, its parent's too (limit_groups.c; taking one out ends a
 * hold, for the statistics).  Caller holds the partition exclusively.
 */
void
sync_holder_link(SyncLock *lock, SyncEntry *e)
{
	Assert(sync_partition_held(lock->hashcode, true));
	Assert(sync_entry_lock(e) == lock && sync_elist_detached(e, SYNC_LOCK_LINK));
	sync_elist_push_tail(&lock->holders, e, SYNC_LOCK_LINK);
	if (lock->groupno != SYNC_ENTRY_NONE)
		sync_group_count(lock, sync_entry_weight(e), 1);	/* both levels */
	else
	{
		lock->nheld++;
		lock->slots_held += sync_entry_weight(e);
	}
	if (e->preemptible)
		sync_preempt_count(lock, e, 1);
}

void
sync_holder_unlink(SyncEntry *e)
{
	SyncLock   *lock = sync_entry_lock(e);

	Assert(sync_partition_held(lock->hashcode, true));
	Assert(lock->nheld > 0 && lock->slots_held >= sync_entry_weight(e));
	sync_elist_delete(&lock->holders, e, SYNC_LOCK_LINK);
	if (lock->groupno != SYNC_ENTRY_NONE)
		sync_group_count(lock, -sync_entry_weight(e), -1);	/* both levels */
	else
	{
		lock->nheld--;
		lock->slots_held -= sync_entry_weight(e);
	}
	if (e->preemptible)
		sync_preempt_count(lock, e, -1);
	sync_stats_hold_ended(sync_lock_stats(lock), e->since);
}

/*
 * Take a pending or dormant entry out of its lock's queue or dormant list,
 * keeping the counts and the queue's tree; its state is the caller's to
 * set.  Caller holds the partition exclusively.
 */
void
sync_queue_remove(SyncEntry *e)
{
	SyncLock   *lock = sync_entry_lock(e);

	Assert(sync_partition_held(lock->hashcode, true));
	Assert(e->state == SYNC_ENTRY_PENDING || e->state == SYNC_ENTRY_DORMANT);
	sync_elist_delete(e->state == SYNC_ENTRY_PENDING ? &lock->waiters : &lock->dormant,
					  e, SYNC_LOCK_LINK);
	if (e->state == SYNC_ENTRY_PENDING)
	{
		Assert(lock->nwaiting > 0);
		lock->nwaiting--;
		sync_rank_remove(lock, e);
	}
	else
	{
		Assert(lock->ndormant > 0);
		lock->ndormant--;
	}
	Assert(sync_rank_check(lock));
}

/*
 * Take a pending or dormant entry out of its lock's queue or dormant list
 * without a grant: its wait ended as 'how' says (for the statistics).
 * Caller holds the partition exclusively.
 */
void
sync_waiter_unlink(SyncEntry *e, SyncWaitEnd how)
{
	sync_queue_remove(e);
	sync_stats_wait_ended(sync_lock_stats(sync_entry_lock(e)), how, e->since);
}

/* Are a and b entries of the same fair key? */
static inline bool
sync_same_fair_key(const SyncEntry *a, const SyncEntry *b)
{
	return a->fair_hash == b->fair_hash && strcmp(a->fair_key, b->fair_key) == 0;
}

/*
 * Does entry a go before entry b of the same fair key, or in the dormant
 * list?  Priority first (higher first), then the queue time (a keyed
 * request may give its workflow's creation time, as Argo orders), then
 * arrival.
 */
static bool
sync_arrival_precedes(const SyncEntry *a, const SyncEntry *b)
{
	if (a->priority != b->priority)
		return a->priority > b->priority;
	if (a->queued_at != b->queued_at)
		return a->queued_at < b->queued_at;
	return a->seq < b->seq;
}

/*
 * Does entry a go before entry b in a queue?  Priority first, then the
 * fair tag, then as sync_arrival_precedes().
 */
bool
sync_entry_precedes(const SyncEntry *a, const SyncEntry *b)
{
	if (a->priority != b->priority)
		return a->priority > b->priority;
	if (a->fair_tag != b->fair_tag)
		return a->fair_tag < b->fair_tag;
	if (a->queued_at != b->queued_at)
		return a->queued_at < b->queued_at;
	return a->seq < b->seq;
}

/* The tag of the entry of e's key that comes next after e. */
static inline double
sync_fair_next_tag(const SyncEntry *e)
{
	Assert(e->fair_weight >= 1);
	return e->fair_tag + (double) e->slots / (double) e->fair_weight;
}

/*
 * Insert into the dormant list, which is in order.  Newcomers usually
 * belong at the tail, so search from there; one that goes before the head
 * (a higher priority) is placed at once, whatever the length of the list.
 */
static void
sync_ordered_insert(SyncEntryList *list, SyncEntry *entry,
					bool (*precedes) (const SyncEntry *, const SyncEntry *))
{
	Assert(sync_elist_detached(entry, SYNC_LOCK_LINK));
	if (sync_elist_is_empty(list) || precedes(entry, sync_elist_head(list)))
	{
		sync_elist_push_head(list, entry, SYNC_LOCK_LINK);
		return;
	}
	sync_elist_foreach_reverse(other, list, lock_link)
	{
		if (precedes(other, entry))
		{
			sync_elist_insert_after(list, other, entry, SYNC_LOCK_LINK);
			return;
		}
	}
	sync_elist_push_head(list, entry, SYNC_LOCK_LINK);
}

/*
 * Put the entries of 'moved', in queue order among themselves and all
 * after 'from', back into the queue of 'lock' where their tags place them:
 * one pass over the queue from 'from', as both are in order.
 */
static void
sync_queue_merge(SyncLock *lock, SyncEntry *from, SyncEntryList *moved)
{
	SyncEntry  *cur = from;

	while (!sync_elist_is_empty(moved))
	{
		SyncEntry  *m = sync_elist_head(moved);
		SyncEntry  *next;

		sync_elist_delete(moved, m, SYNC_LOCK_LINK);
		while ((next = sync_elist_next(cur, SYNC_LOCK_LINK)) != NULL &&
			   sync_entry_precedes(next, m))
			cur = next;
		sync_elist_insert_after(&lock->waiters, cur, m, SYNC_LOCK_LINK);
		sync_rank_insert(lock, m, cur);
		cur = m;
	}
}

/*
 * Tag again the entries of from's fair key and priority that follow it in
 * the queue, each after the one before it (with the weights they have
 * now), and move them where their new tags place them.  'from' keeps its
 * tag.  Caller holds the partition exclusively.
 */
static void
sync_fair_retag_after(SyncLock *lock, SyncEntry *from)
{
	SyncEntryList moved;
	SyncEntry  *e = sync_elist_next(from, SYNC_LOCK_LINK);
	double		tag = sync_fair_next_tag(from);

	sync_elist_init(&moved);
	from->fair_retag = false;
	while (e != NULL)
	{
		SyncEntry  *next = sync_elist_next(e, SYNC_LOCK_LINK);

		if (e->priority != from->priority)
			break;
		if (sync_same_fair_key(e, from))
		{
			e->fair_tag = tag;
			e->fair_retag = false;
			tag = sync_fair_next_tag(e);
			sync_elist_delete(&lock->waiters, e, SYNC_LOCK_LINK);
			sync_rank_remove(lock, e);
			sync_elist_push_tail(&moved, e, SYNC_LOCK_LINK);
		}
		e = next;
	}
	sync_queue_merge(lock, from, &moved);
}

/*
 * Link pending entry e into its lock's queue right after 'prev' (NULL: at
 * the front), and into the queue's tree.
 */
static void
sync_queue_link_after(SyncLock *lock, SyncEntry *e, SyncEntry *prev)
{
	sync_elist_insert_after(&lock->waiters, prev, e, SYNC_LOCK_LINK);
	sync_rank_insert(lock, e, prev);
}

/*
 * Tag a pending entry and put it into its lock's queue (see the fair
 * queueing rule at the top of this file).  The queue's tree finds the last
 * entry of the newcomer's priority or a higher one (queue_rank.c), so the
 * lower priorities behind cost nothing; from there one walk back through
 * its own priority finds the entry's predecessor of its key, or failing
 * that the head of its priority (with one key in the queue, that is the
 * first entry looked at), and then its place.
 */
static void
sync_fair_insert(SyncLock *lock, SyncEntry *entry)
{
	SyncEntry  *last = NULL;	/* of its key and priority, before it */
	SyncEntry  *later = NULL;	/* ... after it: the earliest */
	SyncEntry  *head = NULL;	/* of its priority */
	SyncEntry  *band_end = sync_rank_last_at_least(lock, entry->priority);
	SyncEntry  *prev;

	entry->fair_retag = false;
	if (band_end == NULL)
	{
		/* the first of its priority and before every other: the front */
		entry->fair_tag = 0;
		sync_queue_link_after(lock, entry, NULL);
		return;
	}
	for (SyncEntry *o = band_end; o != NULL && o->priority == entry->priority;
		 o = sync_elist_prev(o, SYNC_LOCK_LINK))
	{
		head = o;
		if (sync_same_fair_key(o, entry))
		{
			if (sync_arrival_precedes(o, entry))
			{
				last = o;
				break;
			}
			later = o;
		}
	}
	if (last != NULL)
		entry->fair_tag = sync_fair_next_tag(last);
	else
		entry->fair_tag = (head != NULL) ? head->fair_tag : 0;

	/* its place: after the last entry of its band that precedes it */
	prev = band_end;
	while (prev != NULL && !sync_entry_precedes(prev, entry))
		prev = sync_elist_prev(prev, SYNC_LOCK_LINK);
	sync_queue_link_after(lock, entry, prev);
	if (later != NULL)
		sync_fair_retag_after(lock, entry);
}

/*
 * Tag again, after a change of weights, the entries of each key of which
 * some entry has fair_retag set: from the first entry of that key and
 * priority.  Caller holds the partition exclusively.
 */
void
sync_fair_retag(SyncLock *lock)
{
	Assert(sync_partition_held(lock->hashcode, true));
	for (;;)
	{
		SyncEntry  *first = NULL;

		sync_elist_foreach(e, &lock->waiters, lock_link)
		{
			if (e->fair_retag)
			{
				first = e;
				break;
			}
		}
		if (first == NULL)
			return;
		sync_fair_retag_after(lock, first);
	}
}

/*
 * Set the fair key of a request's entry (NULL: none) and its weight on the
 * entry's lock, before it is queued.
 */
void
sync_entry_set_fair(SyncEntry *e, const char *fair_key, int32 weight)
{
	Assert(weight >= 1);
	if (fair_key == NULL)
	{
		/* the implicit key: nothing to copy or hash */
		e->fair_key[0] = '\0';
		e->fair_hash = 0;
	}
	else
	{
		strlcpy(e->fair_key, fair_key, sizeof(e->fair_key));
		e->fair_hash = hash_bytes((const unsigned char *) e->fair_key,
								  strlen(e->fair_key));
	}
	e->fair_weight = weight;
	e->fair_tag = 0;
	e->fair_retag = false;
}

/*
 * Put a pending entry into its lock's queue, at its effective priority
 * (priority_aging.c).  Caller holds its partition exclusively.
 */
void
sync_queue_insert(SyncLock *lock, SyncEntry *entry)
{
	Assert(sync_partition_held(lock->hashcode, true));
	Assert(sync_entry_lock(entry) == lock && entry->state != SYNC_ENTRY_HELD);
	entry->state = SYNC_ENTRY_PENDING;
	lock->nwaiting++;
	sync_aging_queued(lock, entry);
	sync_fair_insert(lock, entry);
	Assert(sync_rank_check(lock));
}

/*
 * Put a pending entry of an inactive controller into its lock's dormant
 * list: it keeps its order there, is passed over by the grant pass, and
 * goes back into the queue, tagged anew, when its controller heartbeats
 * again.  Caller
 * holds its partition exclusively.
 */
void
sync_dormant_insert(SyncLock *lock, SyncEntry *entry)
{
	Assert(sync_partition_held(lock->hashcode, true));
	Assert(sync_entry_lock(entry) == lock && entry->state != SYNC_ENTRY_HELD);
	entry->state = SYNC_ENTRY_DORMANT;
	lock->ndormant++;
	sync_ordered_insert(&lock->dormant, entry, sync_arrival_precedes);
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
		SyncLock   *lock = sync_entry_lock(e);

		Assert(sync_partition_held(lock->hashcode, false));
		if (lock->max_waiters >= 0 &&
			lock->nwaiting + lock->ndormant > lock->max_waiters)
			return e;
		e = sync_next_in_request(e);
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
		sync_queue_remove(e);
		e->state = SYNC_ENTRY_FREE;
		e = sync_next_in_request(e);
	} while (e != first);
}

/*
 * 1-based position of a pending entry in its queue; 0 if not queued.
 * O(log n) in the queue's length (queue_rank.c).  Caller holds its
 * partition.
 */
int
sync_queue_position(SyncEntry *entry)
{
	Assert(sync_partition_held(sync_entry_lock(entry)->hashcode, false));
	if (entry->state != SYNC_ENTRY_PENDING)
		return 0;
	return sync_rank_position(entry);
}
