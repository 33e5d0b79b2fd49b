/*-------------------------------------------------------------------------
 *
 * wait_queue.c
 *		The grant pass.  Every grant of a syncwf lock happens
 *		in sync_request_grant(), called from here, or by the requester
 *		(backend_holds.c, holder_table.c) for a request that is grantable when it
 *		arrives; a claim in sync_claim_grant(); a hand-off reserved by a
 *		releasing transaction in sync_handoff_grant().
 *
 * The rules -- queue order, fitting, who may pass whom, best-effort
 * passing -- are grant_rules.c's (sync_pass_step() and
 * sync_request_grantable()); this file applies them.
 *
 * A single-lock front request is granted in place, under the one partition
 * lock the caller holds.  A multi-lock front request needs the partitions of
 * all its locks, which may only be taken in ascending order, so it is
 * recorded here and granted by sync_grant_deferred() after the caller has
 * released its partition lock.
 *
 * A keyed entry (owned by a holder key, not a backend) is told of its grant
 * through the hook holder_table.c sets: this file knows nothing of holders.
 *
 * Locking: every function here runs under the partition locks of the locks
 * it touches (lock_table.c); the deferred list is backend-local.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "engine/engine_internal.h"

/*
 * Multi-lock requests found at the front of a queue, to be tried later;
 * or (entry NULL) a group whose free slots a child in another partition
 * is owed (limit_groups.c).
 */
typedef struct DeferredRequest
{
	SyncEntry  *entry;
	uint64		request_id;
	uint32		partmask;
	int32		groupno;
} DeferredRequest;

static SyncGrantHook keyed_grant_hook = NULL;

static DeferredRequest *deferred = NULL;
static int	ndeferred = 0;
static int	maxdeferred = 0;

/* In sync_rate_pass(), which collects the next moment due itself. */
static bool in_rate_pass = false;

static TimestampTz sync_grant_pass(SyncLock *lock);
static void sync_group_pass(int32 groupno);
static void sync_grant_deferred_items(void);

static void sync_queue_rate_check(SyncEntry *first);

/* The group whose pass runs now: it records no pass of itself. */
static int32 in_group_pass = SYNC_ENTRY_NONE;

/* Most rounds of one group pass (each grants, or puts a waiter right). */
#define SYNC_GROUP_PASS_ROUNDS	10000

void
sync_queue_set_grant_hook(SyncGrantHook hook)
{
	keyed_grant_hook = hook;
}

/*
 * Grant every entry of the request: move each from its queue (if queued) to
 * its lock's holders, give it a fencing token, and wake the owner.  Caller
 * holds the partitions of every lock of the request exclusively and has
 * checked sync_request_grantable(), unless the grant is SYNC_GRANT_FORCED:
 * a keyed request granted whatever the limit and the queue
 * (SYNC_KEYED_FORCE), whose entries are not queued.  'how' also says
 * whether the request waited, for the statistics (stats.c).
 */
void
sync_request_grant(SyncEntry *entry, SyncGrantHow how)
{
	TimestampTz now = GetCurrentTimestamp();
	SyncEntry  *e = entry;

#ifdef USE_ASSERT_CHECKING
	do
	{
		Assert(sync_partition_held(sync_entry_lock(e)->hashcode, true));
		/* the parent's room was checked under the stripe we still hold */
		Assert(sync_entry_lock(e)->groupno == SYNC_ENTRY_NONE ||
			   sync_group_held(sync_group_at(sync_entry_lock(e)->groupno), true));
		Assert(e->state == entry->state);
		Assert(how == SYNC_GRANT_FORCED ? e->state == SYNC_ENTRY_FREE :
			   sync_entry_grantable_check(e));
		e = sync_next_in_request(e);
	} while (e != entry);
#endif

	do
	{
		SyncLock   *lock = sync_entry_lock(e);

		if (lock->best_effort)
			sync_count_passes(lock, e);
		if (e->state == SYNC_ENTRY_PENDING)
			sync_queue_remove(e);
		Assert(sync_elist_detached(e, SYNC_LOCK_LINK));
		sync_stats_granted(sync_lock_stats(lock), how == SYNC_GRANT_WAITED,
						   e->since, now);
		e->state = SYNC_ENTRY_HELD;
		e->token = sync_next_token();
		e->since = now;
		sync_holder_link(lock, e);
		sync_rate_spend(lock, e->slots, now);
		if (e->scope == SYNC_SCOPE_KEYED)
		{
			Assert(keyed_grant_hook != NULL);
			keyed_grant_hook(e);
		}
		e = sync_next_in_request(e);
	} while (e != entry);

	/* a keyed holder is told by the worker's NOTIFY instead (holder_table.c) */
	if (entry->scope != SYNC_SCOPE_KEYED && entry->procno != sync_my_procno())
		SetLatch(&GetPGProcByNumber(entry->procno)->procLatch);
}

static void
sync_defer_item(SyncEntry *entry, int32 groupno)
{
	if (ndeferred >= maxdeferred)
	{
		int			newmax = Max(16, maxdeferred * 2);

		if (deferred == NULL)
			deferred = MemoryContextAlloc(TopMemoryContext,
										  newmax * sizeof(DeferredRequest));
		else
			deferred = repalloc(deferred, newmax * sizeof(DeferredRequest));
		maxdeferred = newmax;
	}
	deferred[ndeferred].entry = entry;
	deferred[ndeferred].request_id = entry ? entry->request_id : 0;
	deferred[ndeferred].partmask = entry ? entry->partmask : 0;
	deferred[ndeferred].groupno = groupno;
	ndeferred++;
}

static void
sync_defer_request(SyncEntry *entry)
{
	sync_defer_item(entry, SYNC_ENTRY_NONE);
}

/*
 * Record a pass of group 'groupno' (limit_groups.c: a child in another
 * partition may be owed a slot), once.  Caller holds a partition or the
 * group's stripe, and calls sync_grant_deferred() once it holds none.
 */
void
sync_defer_group(int32 groupno)
{
	if (groupno == in_group_pass)
		return;
	for (int i = 0; i < ndeferred; i++)
		if (deferred[i].entry == NULL && deferred[i].groupno == groupno)
			return;
	sync_defer_item(NULL, groupno);
}

/*
 * After the grant pass of a rate-limited lock (or a request queued on
 * one): if its front waiter waits only for tokens, or has them already
 * (they came since the last pass), or a waiter's priority rises at some
 * moment (priority_aging.c), put the lock on its partition's rate list
 * and make sure the rate worker wakes at the earliest of those, or now;
 * otherwise take it off.  Returns that moment, or 0.  Caller holds the
 * partition exclusively.
 */
static TimestampTz
sync_rate_check(SyncLock *lock)
{
	bool		passing = false;
	SyncBestEffort be = SYNC_BEST_EFFORT_INIT;
	TimestampTz now = 0;
	TimestampTz due = 0;

	if (lock->rate_limit > 0)
		sync_elist_foreach(w, &lock->waiters, lock_link)
		{
			SyncPassStep step = sync_pass_step(w, lock->nheld, lock->slots_held,
											   &passing, &be, &now);

			if (step == SYNC_PASS_NEXT)
				continue;
			if (step == SYNC_PASS_STOP || step == SYNC_PASS_PARENT ||
				(step == SYNC_PASS_GRANT && w->nlocks > 1))
				break;
			/*
			 * Its tokens are there (they came since the last pass): the
			 * rate pass grants it at once.  (A request of several locks at
			 * the front is the deferred pass's.)
			 */
			due = (step == SYNC_PASS_GRANT) ? sync_lazy_now(&now) :
				sync_rate_due(lock, w->slots);
			break;
		}
	/* priority aging: the rate pass also promotes waiters, when they rise */
	if (lock->nwaiting == 0)
		lock->aging_due = 0;
	if (lock->aging_due != 0 && (due == 0 || lock->aging_due < due))
		due = lock->aging_due;
	if (due == 0)
	{
		sync_lock_rate_done(lock);
		return 0;
	}
	sync_lock_rate_wait(lock);
	/* the rate pass wakes for it itself */
	sync_rate_scheduled(due, !in_rate_pass);
	return due;
}

/*
 * A request was just queued and not granted: for each of its locks with a
 * rate, see whether the front waits for tokens (sync_rate_check()).
 * Caller holds the request's partitions exclusively.
 */
static void
sync_queue_rate_check(SyncEntry *first)
{
	SyncEntry  *e = first;

	do
	{
		if (sync_entry_lock(e)->rate_limit > 0 || sync_entry_lock(e)->aging_due != 0)
			(void) sync_rate_check(sync_entry_lock(e));
		e = sync_next_in_request(e);
	} while (e != first);
}

/*
 * A request was just queued and not granted (its owner waits, or it is a
 * keyed request): see whether the fronts of its rate-limited locks wait
 * for tokens (sync_queue_rate_check()), and on each best-effort lock whose
 * front is a request of several locks, defer that request, so that
 * sync_grant_deferred() finds out whether another of its locks holds it
 * back, and if so lets this one pass it.  Caller holds the request's
 * partitions exclusively, and calls sync_grant_deferred() after releasing
 * them.
 */
void
sync_queue_waiting(SyncEntry *first)
{
	SyncEntry  *e = first;

	sync_queue_rate_check(first);
	do
	{
		SyncLock   *lock = sync_entry_lock(e);

		/* a child whose front now waits for its parent becomes ready */
		if (lock->groupno != SYNC_ENTRY_NONE)
			(void) sync_grant_pass(lock);
		else if (lock->preempt_grace_us >= 0 && lock->npreemptible > 0 &&
				 sync_queue_front(lock) != NULL)
			sync_preempt_note(lock, sync_queue_front(lock));	/* may preempt */
		sync_stats_queued(sync_lock_stats(sync_entry_lock(e)), sync_entry_lock(e)->nwaiting);
		if (sync_entry_lock(e)->best_effort)
		{
			SyncEntry  *front = sync_queue_front(sync_entry_lock(e));

			if (front != NULL && front != e && front->nlocks > 1)
				sync_defer_request(front);
		}
		e = sync_next_in_request(e);
	} while (e != first);
}

/*
 * The rate pass (the rate worker's, worker.c): run the grant pass of every
 * lock on a rate list, which grants the front waiters whose tokens have
 * come by 'now'.  Returns the earliest moment
 * one of the locks still waiting may go (DT_NOEND: none).  Caller holds no
 * partition.
 */
TimestampTz
sync_rate_pass(TimestampTz now)
{
	TimestampTz next = DT_NOEND;

	Assert(!sync_any_partition_held());
	in_rate_pass = true;
	for (int p = 0; p < SYNC_NUM_PARTITIONS; p++)
	{
		LWLock	   *partition = &sync_shmem->partition_locks[p].lock;

		/*
		 * (An unlocked look: a lock put on the list meanwhile lowers the
		 * deadline, after the caller reset it, and so wakes the worker.)
		 */
		if (sync_shmem->rate_locks[p].head == SYNC_ENTRY_NONE)
			continue;
		LWLockAcquire(partition, LW_EXCLUSIVE);
		sync_foreach_rate_lock(lock, p)
		{
			/*
			 * Promotes the waiters whose priority rose, grants what the
			 * tokens allow now, and leaves the lock on the list only if
			 * its front still waits for tokens or a waiter rises later
			 * (then 'due' is the earliest of those moments).
			 */
			TimestampTz due;

			if (lock->aging_due != 0 && lock->aging_due <= now)
				lock->aging_due = sync_aging_apply(lock, now);
			due = sync_grant_pass(lock);

			if (due != 0)
				next = Min(next, due);
		}
		LWLockRelease(partition);
	}
	in_rate_pass = false;
	sync_grant_deferred();
	return next;
}

/*
 * The grant pass for one lock: grant front requests while slots are free.
 * Caller holds the lock's partition exclusively.  A multi-lock request at
 * the front stops the pass and is deferred; the caller must call
 * sync_grant_deferred() once it holds no partition lock.  So must it for
 * a lock with a parent (limit_groups.c), whose pass takes the group's
 * stripe, and may record a group pass.  Returns what sync_rate_check()
 * says of the lock afterwards: the moment its front waiter's tokens come,
 * or 0.
 */
static TimestampTz
sync_grant_pass(SyncLock *lock)
{
	bool		passing = false;
	SyncBestEffort be = SYNC_BEST_EFFORT_INIT;
	TimestampTz now = 0;
	TimestampTz due = 0;
	uint32		stripes = sync_groups_enter_lock(lock);
	SyncEntry  *ready = NULL;
	SyncEntry  *blocked = NULL;

	Assert(sync_partition_held(lock->hashcode, true));
	sync_elist_foreach_modify(front, &lock->waiters, lock_link)
	{
		SyncPassStep step = sync_pass_step(front, lock->nheld, lock->slots_held,
										   &passing, &be, &now);

		if (step == SYNC_PASS_NEXT)
			continue;
		if (step == SYNC_PASS_PARENT)
		{
			/* (the group never waits for a request of several locks) */
			ready = blocked = front;
			break;
		}
		if (step == SYNC_PASS_STOP)
			blocked = front;
		if (step == SYNC_PASS_STOP || step == SYNC_PASS_TOKENS)
			break;
		if (front->nlocks > 1)
		{
			/* best-effort: passed, if another of its locks holds it back */
			if (sync_request_known_blocked(front) &&
				sync_best_effort_pass(front, &be))
				continue;
			sync_defer_request(front);
			break;
		}
		sync_request_grant(front, SYNC_GRANT_WAITED);
		now = 0;				/* a rate's tokens are looked at after it */
		/* each waiter passed over was passed once more */
		if (be.npassed > 0 && --be.budget <= 0)
			break;
	}
	if (lock->groupno != SYNC_ENTRY_NONE)
		sync_group_set_ready(lock, ready);
	if (blocked != NULL)
		sync_preempt_note(lock, blocked);	/* preemption.c */
	if (lock->rate_limit > 0 || lock->aging_due != 0 || sync_lock_rate_waiting(lock))
		due = sync_rate_check(lock);
	sync_groups_leave(stripes);
	return due;
}

void
sync_grant_waiters(SyncLock *lock)
{
	(void) sync_grant_pass(lock);
}

/*
 * Move a keyed entry from its lock's queue or dormant list to its holders,
 * with the given token and grant time (a claim, a hand-off).  Caller holds
 * the partition exclusively.
 */
static void
sync_waiting_to_held(SyncEntry *e, uint64 token, TimestampTz since)
{
	SyncLock   *lock = sync_entry_lock(e);

	Assert(e->state == SYNC_ENTRY_PENDING || e->state == SYNC_ENTRY_DORMANT);
	sync_queue_remove(e);
	sync_stats_granted(sync_lock_stats(lock), true, e->since, since);
	e->state = SYNC_ENTRY_HELD;
	e->token = token;
	e->since = since;
	sync_holder_link(lock, e);
	sync_rate_spend(lock, e->slots, since);
}

/*
 * The hand-off's look ahead (keyed_xact.c): the waiter the grant pass
 * would grant first if 'held' gave up its slot now, or NULL if the pass
 * would grant nobody, or would stop at a request of several locks (which
 * needs every one of its partitions), or at one that takes more slots
 * than 'held' (see below).  Caller holds the lock's partition.
 */
SyncEntry *
sync_queue_handoff_candidate(SyncEntry *held)
{
	SyncLock   *lock = sync_entry_lock(held);
	bool		passing = false;
	TimestampTz now = 0;
	SyncEntry  *result = NULL;
	uint32		stripes;

	Assert(sync_partition_held(lock->hashcode, false));
	Assert(held->state == SYNC_ENTRY_HELD && lock->nheld > 0);
	/*
	 * A rate's tokens are not the released hold's to give: the grant pass
	 * after the commit spends them.
	 */
	if (lock->rate_limit > 0)
		return NULL;
	stripes = sync_groups_enter_lock(lock);
	sync_elist_foreach(w, &lock->waiters, lock_link)
	{
		SyncPassStep step = sync_pass_step(w, lock->nheld - 1,
										   lock->slots_held - sync_entry_weight(held),
										   &passing, NULL, &now);

		if (step == SYNC_PASS_NEXT)
			continue;
		/* the parent, with the released slots: w may still be owed none */
		if (step == SYNC_PASS_PARENT &&
			sync_group_admits(w, sync_entry_weight(held)))
			step = SYNC_PASS_GRANT;
		if (step != SYNC_PASS_GRANT || w->nlocks > 1)
			break;

		/*
		 * Only a waiter that takes no more than 'held' gives up: until the
		 * hand-off commits, everyone passes over the reserved waiter, so
		 * free slots it would need besides (or, for an exclusive waiter
		 * after a shared holder, the room no shared holder may take
		 * meanwhile) could go to others first.  A bigger waiter is granted
		 * by the grant pass after the commit instead.
		 */
		if (sync_entry_weight(w) <= sync_entry_weight(held))
			result = w;
		break;
	}
	sync_groups_leave(stripes);
	return result;
}

/*
 * The hand-off: 'releasing', a holder of the lock, gives its slot to
 * 'next', the waiter its transaction reserved (sync_queue_handoff_candidate()
 * chose it at pre-commit), which takes the fencing token and grant time
 * that transaction wrote to sync_state.  'next' may have gone dormant
 * meanwhile (its controller went inactive): its grant is committed, so it
 * is granted all the same.  The releasing entry is unlinked here; the
 * caller frees it and runs the grant pass for any other free slot.  Caller
 * holds the partition exclusively.
 */
void
sync_handoff_grant(SyncEntry *releasing, SyncEntry *next, uint64 token,
				   TimestampTz since)
{
	Assert(sync_partition_held(sync_entry_lock(next)->hashcode, true));
	Assert(sync_entry_lock(releasing) == sync_entry_lock(next) && releasing->state == SYNC_ENTRY_HELD);
	Assert(next->scope == SYNC_SCOPE_KEYED && next->nlocks == 1);
	Assert(TransactionIdIsValid(next->reserved_xid));
	Assert(next->state == SYNC_ENTRY_PENDING || next->state == SYNC_ENTRY_DORMANT);
	sync_holder_unlink(releasing);
	sync_waiting_to_held(next, token, since);
	Assert(keyed_grant_hook != NULL);
	keyed_grant_hook(next);
}

/*
 * May keyed entry 'e' (pending or dormant) be granted now by a claim,
 * that is, by its writer setting held = true in sync_state
 * (Argo's controller)?  Only a request for one lock can be claimed; the
 * lock must have a slot for it; and every waiter ahead of it must be
 * claim-only too.  The writer has decided the order among claim-only
 * requests itself (Argo lets the first of its queue in, by priority and
 * creation time, and its queue leaves out inactive controllers and rows
 * without one), so they need not agree with ours; requests made through
 * the functions keep their places ahead of it.  Caller holds the
 * partition.
 */
bool
sync_claim_grantable(SyncEntry *e)
{
	SyncLock   *lock = sync_entry_lock(e);
	TimestampTz now = 0;

	Assert(sync_partition_held(lock->hashcode, false));
	if (e->nlocks != 1 || !sync_entry_fits(e, &now) ||
		TransactionIdIsValid(e->reserved_xid))
		return false;
	/* its parent's room and order: the caller holds the stripe */
	if (lock->groupno != SYNC_ENTRY_NONE && !sync_group_admits(e, 0))
		return false;
	sync_elist_foreach(w, &lock->waiters, lock_link)
	{
		if (w == e || !sync_entry_precedes(w, e))
			break;
		if (!w->claim && !TransactionIdIsValid(w->reserved_xid))
			return false;
	}
	return true;
}

/*
 * Grant keyed entry 'e' on its claim (sync_claim_grantable() said yes).  Its
 * writer writes the row, so the grant hook is not called.  Caller holds the
 * partition exclusively.
 */
void
sync_claim_grant(SyncEntry *e)
{
	Assert(sync_partition_held(sync_entry_lock(e)->hashcode, true));
	Assert(e->scope == SYNC_SCOPE_KEYED && sync_claim_grantable(e));
	sync_waiting_to_held(e, sync_next_token(), GetCurrentTimestamp());
}

/*
 * Undo sync_claim_grant() when the claiming transaction aborts: the entry
 * goes back to its place in the queue, and the slot to whoever may have it
 * now.  Caller holds the partition exclusively.
 */
void
sync_claim_undo(SyncEntry *e)
{
	SyncLock   *lock = sync_entry_lock(e);

	Assert(sync_partition_held(lock->hashcode, true));
	Assert(e->state == SYNC_ENTRY_HELD);
	sync_holder_unlink(e);
	e->token = 0;
	e->since = e->queued_at;
	e->lease_expires = 0;
	e->state = SYNC_ENTRY_PENDING;	/* sync_queue_insert() links it */
	sync_queue_insert(lock, e);
	sync_grant_waiters(lock);
}

/*
 * A request of several locks that one of its locks holds back: on each of
 * its best-effort locks, let the requests behind it pass it now (the
 * grant pass would otherwise stop at it, see sync_grant_pass()).  Caller
 * holds the partitions of all its locks exclusively.
 */
static void
sync_best_effort_blocked(SyncEntry *entry)
{
	SyncEntry  *e = entry;
	bool		any = false;

	do
	{
		any |= sync_entry_lock(e)->best_effort;
		e = sync_next_in_request(e);
	} while (e != entry);
	if (!any || !sync_blocked_note(entry))
		return;
	do
	{
		if (sync_entry_lock(e)->best_effort)
			sync_grant_waiters(sync_entry_lock(e));
		e = sync_next_in_request(e);
	} while (e != entry);
}

/*
 * A group pass (limit_groups.c): while group 'groupno' has room for the
 * waiter that goes first among its ready children, run that child's grant
 * pass under its partition.  Each round grants, or finds the child's
 * waiter changed; a round that does neither ends it.  Caller holds no
 * partition.
 */
static void
sync_group_pass(int32 groupno)
{
	int32		lockno;
	uint32		hashcode;
	uint64		seq;

	in_group_pass = groupno;
	/* (bounded all the same, against others' churn) */
	for (int round = 0; round < SYNC_GROUP_PASS_ROUNDS &&
		 (lockno = sync_group_first_ready(groupno, &hashcode, &seq)) != SYNC_ENTRY_NONE;
		 round++)
	{
		LWLock	   *partition = sync_partition_lock(hashcode);
		SyncLock   *lock = sync_lock_at(lockno);
		bool		same;

		LWLockAcquire(partition, LW_EXCLUSIVE);
		/* the same lock still, in the group, ready (numbers are reused) */
		if (lock->hashcode == hashcode && lock->groupno == groupno &&
			lock->group_ready)
			(void) sync_grant_pass(lock);
		same = (lock->groupno == groupno && lock->group_ready &&
				lock->ready_seq == seq);
		LWLockRelease(partition);
		if (same)
			break;
	}
	in_group_pass = SYNC_ENTRY_NONE;
}

/*
 * Try the multi-lock requests recorded by sync_grant_waiters(), and run
 * the group passes recorded.  Caller holds no partition lock.  Each
 * request is re-checked under all of its partitions: in the meantime it
 * may have been granted by someone else, withdrawn, or its entries reused
 * (request ids are never reused, so a mismatch tells).
 */
void
sync_grant_deferred(void)
{
	Assert(!sync_any_partition_held());
	/* (most calls find nothing: the work is out of line) */
	if (ndeferred > 0)
		sync_grant_deferred_items();
}

static pg_noinline void
sync_grant_deferred_items(void)
{
	while (ndeferred > 0)
	{
		DeferredRequest item = deferred[--ndeferred];
		SyncEntry  *entry = item.entry;
		uint32		stripes;

		if (entry == NULL)
		{
			sync_group_pass(item.groupno);
			continue;
		}
		sync_lock_partitions(item.partmask, LW_EXCLUSIVE);
		stripes = 0;
		if (entry->request_id != item.request_id ||
			entry->state != SYNC_ENTRY_PENDING)
			;					/* granted or withdrawn meanwhile */
		else if (stripes = sync_groups_enter_request(entry),
				 !sync_request_grantable(entry, true))
		{
			sync_queue_rate_check(entry);	/* it may wait for tokens */
			sync_best_effort_blocked(entry);
		}
		else
		{
			SyncEntry  *e = entry;

			sync_request_grant(entry, SYNC_GRANT_WAITED);
			/* slots may remain for the requests behind it */
			do
			{
				sync_grant_waiters(sync_entry_lock(e));
				e = sync_next_in_request(e);
			} while (e != entry);
		}
		sync_groups_leave(stripes);
		sync_unlock_partitions(item.partmask);
	}
	sync_blocked_clear();
}

/*
 * Run the grant pass of the lock named 'name' in this database, if it is
 * in the table (after several of its requests got new limits of their own,
 * so that they are granted in queue order).  Caller holds no partition.
 */
void
sync_grant_waiters_of(const char *name)
{
	LWLock	   *partition;
	SyncLock   *lock = sync_lock_find(MyDatabaseId, name, LW_EXCLUSIVE,
									  &partition);

	if (lock != NULL)
		sync_grant_waiters(lock);
	LWLockRelease(partition);
	sync_grant_deferred();
}
