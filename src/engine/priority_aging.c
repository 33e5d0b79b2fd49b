/*-------------------------------------------------------------------------
 *
 * priority_aging.c
 *		Priority aging (sync_limit's aging_interval and aging_max_priority):
 *		a waiter's effective priority rises by one for every interval it
 *		has waited, up to a ceiling, so that low priorities do not starve.
 *
 * Each entry keeps the priority it asked for (base_priority); its
 * priority, which orders the queue, is the effective one: base + the
 * whole intervals since its queue time (SyncEntry.since: when it came, or
 * the queue time a keyed request gave), at most max(base, aging_max).  An
 * entry is given its effective priority whenever it is put into a queue
 * (sync_aging_queued()); the lock remembers the earliest moment one of
 * its waiters rises next (aging_due), and stays on its partition's rate
 * list until then, so the rate worker's pass (wait_queue.c), which runs
 * at that moment, promotes the waiters that rose (sync_aging_apply()) and
 * then runs the lock's grant pass.  A promoted entry leaves the queue and
 * goes in again at its new priority, by the queue's own rule
 * (queue_order.c): behind the entries of that priority that go before it
 * (an earlier queue time or arrival, a smaller fair tag), so aging never
 * reorders waiters within one effective priority and key.
 *
 * Cost: nothing for a lock without aging.  With aging, a promotion walks
 * the lock's queue once per due moment, at most once per aging_interval
 * (1 second or more) per lock: O(waiters) per interval, not per call.
 *
 * Locking: the fields are the SyncLock's and SyncEntry's, under the lock's
 * partition, which the caller holds exclusively.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/int.h"
#include "utils/timestamp.h"

#include "engine/engine_internal.h"

/*
 * The effective priority of pending entry e of 'lock' at 'now', and in
 * *next the moment it rises again (0: never, at its ceiling or without
 * aging).
 */
static int32
sync_aging_effective(const SyncLock *lock, const SyncEntry *e, TimestampTz now,
					 TimestampTz *next)
{
	int32		base = e->base_priority;
	int64		room = (int64) Max(base, lock->aging_max) - base;
	int64		steps;
	int64		wait;

	*next = 0;
	if (lock->aging_interval_us <= 0 || room <= 0)
		return base;
	steps = (now > e->since) ? (now - e->since) / lock->aging_interval_us : 0;
	if (steps >= room)
		return base + (int32) room;
	/* (an interval of centuries, or 'infinity': it never rises again) */
	if (pg_mul_s64_overflow(steps + 1, lock->aging_interval_us, &wait) ||
		pg_add_s64_overflow(e->since, wait, next))
		*next = 0;
	return base + (int32) steps;
}

/*
 * A lock's aging from its sync_limit row (sem_limits.c): 'interval_us'
 * (0: none) and the ceiling 'max'.  A change is applied to the waiters at
 * the next rate pass, which the caller's grant pass schedules (due at
 * once); waiters keep what they rose to, and a waiter queued again (a new
 * priority, a controller back) gets what the new setting gives it.
 */
void
sync_aging_configure(SyncLock *lock, int64 interval_us, int32 max)
{
	Assert(sync_partition_held(lock->hashcode, true));
	if (lock->aging_interval_us == interval_us && lock->aging_max == max)
		return;
	lock->aging_interval_us = interval_us;
	lock->aging_max = max;
	lock->aging_due = (interval_us > 0 && lock->nwaiting > 0) ? 1 : 0;
}

/*
 * Entry e is being put into the queue of 'lock': give it its effective
 * priority, and make the lock due when e rises next, if that is the
 * earliest.  The caller's grant pass (sync_rate_check()) puts the lock on
 * the rate list for that moment.
 */
void
sync_aging_queued(SyncLock *lock, SyncEntry *e)
{
	TimestampTz next;

	if (lock->aging_interval_us <= 0)
	{
		e->priority = e->base_priority;
		return;
	}
	e->priority = sync_aging_effective(lock, e, GetCurrentTimestamp(), &next);
	if (next != 0 && (lock->aging_due == 0 || next < lock->aging_due))
		lock->aging_due = next;
}

/*
 * The rate pass, at or after lock->aging_due: promote every waiter whose
 * effective priority rose by 'now', each into its place at its new
 * priority.  Returns the next moment a waiter rises (the new aging_due;
 * 0: none).
 */
TimestampTz
sync_aging_apply(SyncLock *lock, TimestampTz now)
{
	TimestampTz due = 0;
	int32	   *rising = NULL;
	int			nrising = 0;

	Assert(sync_partition_held(lock->hashcode, true));
	if (lock->aging_interval_us <= 0)
		return 0;
	/* first find them: moving one changes the queue being walked */
	sync_elist_foreach(e, &lock->waiters, lock_link)
	{
		TimestampTz next;

		if (sync_aging_effective(lock, e, now, &next) > e->priority)
		{
			if (rising == NULL)
				rising = palloc(sizeof(int32) * lock->nwaiting);
			rising[nrising++] = sync_entry_index(e);
		}
		if (next != 0 && (due == 0 || next < due))
			due = next;
	}
	/* each goes in again at its new priority (sync_aging_queued()) */
	for (int i = 0; i < nrising; i++)
	{
		SyncEntry  *e = sync_entry_at(rising[i]);

		sync_queue_remove(e);
		sync_queue_insert(lock, e);
	}
	if (rising != NULL)
		pfree(rising);
	return due;
}
