/*-------------------------------------------------------------------------
 *
 * grant_rules.c
 *		Who may be granted now: whether a request fits its lock (slots, a
 *		mutex's mode, a launch plan's own limit, a rate's tokens), whether
 *		it can never fit (a limit lowered under it), which waiter is a
 *		lock's front, whether a request may go before the waiters ahead of
 *		it, and the step the grant pass takes at each waiter
 *		(sync_pass_step()).  The grants themselves, and the passes that
 *		walk the queues, are wait_queue.c's.
 *
 * Rules:
 *	- a lock's queue is ordered by priority (higher first), then queue time
 *	  (a keyed request may give its workflow's creation time), then arrival;
 *	- only a request at the front of a lock's queue may be granted, except
 *	  that a request carrying its own limit (a launch plan execution) passes
 *	  waiters that are held back only by their own, lower, limit;
 *	- a request naming several locks is granted all at once, when it is at
 *	  the front of every one of its queues and each lock has room for it;
 *	  until then it blocks every queue it fronts (Argo's rule);
 *	- a request has room when its weight fits (sync_entry_fits()): the
 *	  slots it asks of a semaphore are free, all at once; an exclusive
 *	  mutex request finds no holder; a shared one finds no exclusive
 *	  holder.  A front request that does not fit stops the pass, so small
 *	  or shared requests behind it never starve it; consecutive shared
 *	  requests at the front are granted in one pass;
 *	- a request for more slots than its semaphore's limit, or than its
 *	  rate's tokens (a limit lowered under it) can never be granted:
 *	  everyone passes over it, and its owner is told
 *	  (sync_queue_wake_unfit());
 *	- best-effort queueing (sync_limit's queueing = 'best_effort', a
 *	  semaphore's): a waiter that cannot be granted yet -- its slots are
 *	  not free, or it is a request of several locks that another of its
 *	  locks holds back -- does not stop the pass; requests behind it that
 *	  fit are granted, and each such grant counts as one pass of every
 *	  waiter ahead (SyncEntry.passes).  A waiter passed syncwf.max_passes
 *	  times stops the pass again, so it waits for at most that many grants
 *	  to later requests before strict order resumes for it.  A pass looks
 *	  past at most SYNC_PASS_AHEAD_MAX such waiters.  One that fits but
 *	  lacks a rate's tokens is not passed: the tokens come by themselves;
 *	- a rate-limited semaphore grants only while its bucket has a token for
 *	  each slot (rate_limits.c).  A front request that fits but lacks
 *	  tokens stops the pass like one that does not fit; its lock goes on
 *	  its partition's rate list (sync_rate_check()), and the rate worker
 *	  (worker.c) wakes at the moment the tokens come to run the grant pass
 *	  again, in sync_rate_pass() -- no one polls;
 *	- nested limits: a semaphore whose row names a parent row is granted
 *	  only when the parent admits it too (limit_groups.c): the parent has
 *	  room, and no sibling's waiter goes before it; otherwise the pass
 *	  stops at it (SYNC_PASS_PARENT);
 *	- whoever frees a slot (release, session or transaction end, a raised
 *	  limit, a cancelled waiter) runs the grant pass for that lock, grants
 *	  the front request(s) and sets their owners' latches.  Waiters sleep on
 *	  their latch and never poll;
 *	- a keyed waiter *reserved* by a transaction that releases a hold of the
 *	  lock (reserved_xid, see keyed_xact.c) gets that hold's slot when the
 *	  transaction commits, in sync_handoff_grant(); until then everyone
 *	  passes over it as if it were not queued, and it takes no free slot.
 *
 * Locking: every function here runs under the partition locks of the locks
 * it looks at (lock_table.c); the list of requests found held back is
 * backend-local.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "utils/memutils.h"

#include "engine/engine_internal.h"

/*
 * Requests of several locks that sync_grant_deferred() (wait_queue.c) found
 * held back by one of their locks, by request id: on a best-effort lock the
 * pass may pass them, until sync_grant_deferred() returns and clears the
 * list.  Backend-local.
 */
static uint64 *blocked_requests = NULL;
static int	nblocked = 0;
static int	maxblocked = 0;

/* Note the request of 'entry' as held back; false if it was already. */
bool
sync_blocked_note(const SyncEntry *entry)
{
	if (sync_request_known_blocked(entry))
		return false;
	if (nblocked >= maxblocked)
	{
		int			newmax = Max(16, maxblocked * 2);

		if (blocked_requests == NULL)
			blocked_requests = MemoryContextAlloc(TopMemoryContext,
												  newmax * sizeof(uint64));
		else
			blocked_requests = repalloc(blocked_requests, newmax * sizeof(uint64));
		maxblocked = newmax;
	}
	blocked_requests[nblocked++] = entry->request_id;
	return true;
}

void
sync_blocked_clear(void)
{
	nblocked = 0;
}

int
sync_lock_slots(SyncLock *lock)
{
	return lock->kind == SYNC_KIND_MUTEX ? 1 : lock->limit;
}

/*
 * Can entry 'e' never be granted, because it asks for more slots than its
 * semaphore's limit or its rate, or its request more under e's parent than
 * the parent's limit (lowered since it came, or a request of several
 * children)?  If so, returns that limit, and *why says whose; else 0.  A
 * limit of 0 pauses a semaphore: then everyone waits, and nobody is unfit
 * for it.  sync_entry_unfit() asks only whether.
 */
int32
sync_entry_unfit_limit(const SyncEntry *e, SyncUnfitKind *why)
{
	SyncLock   *lock = sync_entry_lock(e);
	int32		limit;

	*why = SYNC_UNFIT_LIMIT;
	if (lock->kind != SYNC_KIND_SEMAPHORE)
		return 0;
	if (lock->limit > 0 && e->slots > lock->limit)
		return lock->limit;
	/* a bucket never holds more tokens than its rate */
	if (lock->rate_limit > 0 && e->slots > lock->rate_limit)
	{
		*why = SYNC_UNFIT_RATE;
		return lock->rate_limit;
	}
	if (lock->groupno != SYNC_ENTRY_NONE &&
		(limit = sync_group_unfit_limit(e)) > 0)
	{
		*why = SYNC_UNFIT_PARENT;
		return limit;
	}
	return 0;
}

bool
sync_entry_unfit(const SyncEntry *e)
{
	SyncUnfitKind why;

	return sync_entry_unfit_limit(e, &why) > 0;
}

/*
 * Does entry 'e' fit into its lock, as far as the lock's own limit goes,
 * when the lock has 'nheld' holders taking 'slots_held' slots?  A
 * semaphore needs all of e's slots free; an exclusive mutex request no
 * holder at all; a shared one no exclusive holder (shared holders take no
 * slot: sync_entry_weight()).
 */
static inline bool
sync_lock_fits(const SyncEntry *e, int nheld, int slots_held)
{
	SyncLock   *lock = sync_entry_lock(e);

	if (lock->kind == SYNC_KIND_MUTEX)
		return e->shared ? slots_held == 0 : nheld == 0;
	return slots_held <= lock->limit - e->slots;
}

/*
 * Is entry 'e' held back by its own limit (a launch plan version's
 * max_concurrency, see launch_policy.c): the lock has that many holders?
 */
static inline bool
sync_entry_at_own_limit(const SyncEntry *e, int nheld)
{
	return e->admit_limit >= 0 && nheld >= e->admit_limit;
}

/*
 * Does entry 'e' fit now, under the lock's limit and its own, with tokens
 * for its slots if the lock has a rate?  *now: the clock, read if needed.
 */
bool
sync_entry_fits(const SyncEntry *e, TimestampTz *now)
{
	SyncLock   *lock = sync_entry_lock(e);

	if (!sync_lock_fits(e, lock->nheld, lock->slots_held) ||
		sync_entry_at_own_limit(e, lock->nheld))
		return false;
	return lock->rate_limit <= 0 ||
		sync_rate_allows(lock, e->slots, sync_lazy_now(now));
}

/* Did sync_grant_deferred() find this request held back by another lock? */
bool
sync_request_known_blocked(const SyncEntry *e)
{
	for (int i = 0; i < nblocked; i++)
		if (blocked_requests[i] == e->request_id)
			return true;
	return false;
}

/*
 * Best-effort queueing: may waiter 'w', which cannot be granted now, be
 * passed by requests behind it?  Only on a best-effort lock, while fewer
 * than syncwf.max_passes grants to requests behind it were made since it
 * came, and while the walk has passed fewer than SYNC_PASS_AHEAD_MAX
 * waiters.  'be' (NULL: strict order, always no) records the pass.
 */
bool
sync_best_effort_pass(const SyncEntry *w, SyncBestEffort *be)
{
	int			left;

	if (be == NULL || !sync_entry_lock(w)->best_effort)
		return false;
	left = sync_max_passes - w->passes;
	if (left <= 0 || be->budget <= 0 || be->npassed >= SYNC_PASS_AHEAD_MAX)
		return false;
	be->budget = Min(be->budget, left);
	be->npassed++;
	return true;
}

/*
 * Best-effort queueing: may entry 'e', which fits now, go before every
 * waiter ahead of it (the whole queue if it is not queued)?  Only if each
 * is reserved or unfit, or cannot be granted now itself (its slots are not
 * free, or it is a request of several locks held back by another) and may
 * still be passed.
 */
static bool
sync_best_effort_passes(SyncLock *lock, SyncEntry *e)
{
	SyncBestEffort be = SYNC_BEST_EFFORT_INIT;

	if (!lock->best_effort)
		return false;
	sync_elist_foreach(w, &lock->waiters, lock_link)
	{
		if (w == e)
			return true;
		if (TransactionIdIsValid(w->reserved_xid) || sync_entry_unfit(w))
			continue;
		if (sync_lock_fits(w, lock->nheld, lock->slots_held) &&
			!(w->nlocks > 1 && sync_request_known_blocked(w)))
			return false;
		if (!sync_best_effort_pass(w, &be))
			return false;
	}
	return true;
}

/*
 * Entry 'e' of a best-effort lock is being granted: it passes every waiter
 * ahead of it (the whole queue if it is not queued) that is neither
 * reserved nor unfit.  Caller holds the partition exclusively.
 */
void
sync_count_passes(SyncLock *lock, SyncEntry *e)
{
	sync_elist_foreach(w, &lock->waiters, lock_link)
	{
		if (w == e)
			break;
		if (!TransactionIdIsValid(w->reserved_xid) && !sync_entry_unfit(w) &&
			w->passes < PG_INT32_MAX)
			w->passes++;
	}
}

/*
 * The first waiter of a lock that is neither reserved nor unfit, or NULL.
 */
SyncEntry *
sync_queue_front(SyncLock *lock)
{
	sync_elist_foreach(w, &lock->waiters, lock_link)
	{
		if (!TransactionIdIsValid(w->reserved_xid) && !sync_entry_unfit(w))
			return w;
	}
	return NULL;
}

/*
 * After the limit or rate of a lock was lowered: wake the owners of session and
 * transaction requests that can never be granted now (sync_entry_unfit()),
 * which then end with an error (backend_holds.c).  Returns whether a keyed request
 * is among them: the worker withdraws those.  Caller holds the partition.
 */
bool
sync_queue_wake_unfit(SyncLock *lock)
{
	SyncEntryList *lists[2] = {&lock->waiters, &lock->dormant};
	bool		keyed = false;

	Assert(sync_partition_held(lock->hashcode, false));
	if (lock->kind != SYNC_KIND_SEMAPHORE)
		return false;
	for (int l = 0; l < 2; l++)
	{
		sync_elist_foreach(w, lists[l], lock_link)
		{
			if (!sync_entry_unfit(w))
				continue;
			if (w->scope == SYNC_SCOPE_KEYED)
				keyed = true;
			else if (w->procno != sync_my_procno())
				SetLatch(&GetPGProcByNumber(w->procno)->procLatch);
		}
	}
	return keyed;
}

/*
 * May entry 'e', which carries its own limit, go before the waiters ahead of
 * it (all of them if it is not queued)?  Only if each of them is held back
 * by its own limit, not by the lock's: a launch plan's waiting execution of
 * a version with a low limit does not stop one of a version with a higher
 * limit (enforcement is version-specific, and a free slot is used).
 * Entries without their own limit keep strict queue order.
 */
static bool
sync_passes_waiters(SyncLock *lock, SyncEntry *e)
{
	if (e->admit_limit < 0)
		return false;
	sync_elist_foreach(w, &lock->waiters, lock_link)
	{
		if (w == e)
			return true;
		if (TransactionIdIsValid(w->reserved_xid) || sync_entry_unfit(w))
			continue;
		if (!sync_entry_at_own_limit(w, lock->nheld))
			return false;
	}
	return true;
}

/*
 * Can the request that 'entry' belongs to be granted now?  Caller holds the
 * partitions of every lock of the request.
 *
 * A queued entry must be at the front of its queue.  An entry not yet queued
 * (a try-acquire, or the first look at a new request) must find the queue
 * empty when respect_queue is set: it never jumps waiters.
 */
bool
sync_request_grantable(SyncEntry *entry, bool respect_queue)
{
	SyncEntry  *e = entry;
	TimestampTz now = 0;

	do
	{
		SyncLock   *lock = sync_entry_lock(e);

		Assert(sync_partition_held(lock->hashcode, false));
		if (!sync_entry_fits(e, &now))
			return false;
		/* a reserved entry is granted by its hand-off only */
		if (TransactionIdIsValid(e->reserved_xid))
			return false;
		/* its parent's room and order (limit_groups.c) */
		if (lock->groupno != SYNC_ENTRY_NONE && !sync_group_admits(e, 0))
			return false;
		if (respect_queue)
		{
			SyncEntry  *front = sync_queue_front(lock);

			if (e->state == SYNC_ENTRY_PENDING ? front != e : front != NULL)
			{
				if (!sync_passes_waiters(lock, e) &&
					!sync_best_effort_passes(lock, e))
					return false;
			}
		}
		e = sync_next_in_request(e);
	} while (e != entry);

	return true;
}

#ifdef USE_ASSERT_CHECKING
/* Most waiters ahead of a granted entry that the check below looks at. */
#define SYNC_CHECK_PASSED_MAX	64

/*
 * May entry 'e' be granted now, as far as its own lock goes?  For
 * assertions, independently of the code that decides: the lock has room
 * for it under the lock's limit and its own (so a grant never takes a lock
 * past its limit; a lowered limit may leave more holders, but then nobody
 * is granted), and it is at the front of the queue.  That is, every waiter
 * ahead of it (the whole queue, if it is not queued) is reserved, unfit,
 * one that only a request with a limit of its own may pass, one held
 * back by its own limit, or on a best-effort lock one not yet passed
 * syncwf.max_passes times;
 * entries of inactive controllers are in the dormant list, not the queue,
 * so they are passed over whatever they are.  At most
 * SYNC_CHECK_PASSED_MAX waiters ahead are looked at.
 */
bool
sync_entry_grantable_check(SyncEntry *e)
{
	SyncLock   *lock = sync_entry_lock(e);
	int			looked = 0;

	if (lock->kind == SYNC_KIND_MUTEX
		? (e->slots != 1 || (e->shared ? lock->slots_held != 0 : lock->nheld != 0))
		: (e->shared || lock->slots_held + e->slots > lock->limit))
		return false;
	if (e->admit_limit >= 0 && lock->nheld >= e->admit_limit)
		return false;
	if (lock->groupno != SYNC_ENTRY_NONE && !sync_group_has_room(e))
		return false;
	if (lock->rate_limit > 0 &&
		!sync_rate_allows(lock, e->slots, GetCurrentTimestamp()))
		return false;
	if (e->state != SYNC_ENTRY_PENDING && e->state != SYNC_ENTRY_FREE)
		return false;
	if (e->state == SYNC_ENTRY_FREE && !sync_elist_detached(e, SYNC_LOCK_LINK))
		return false;
	sync_elist_foreach(w, &lock->waiters, lock_link)
	{
		if (w == e)
			return true;
		if (w->state == SYNC_ENTRY_PENDING &&
			(TransactionIdIsValid(w->reserved_xid) || sync_entry_unfit(w)))
			continue;
		/* best-effort: one that may still be passed */
		if (w->state == SYNC_ENTRY_PENDING && lock->best_effort &&
			w->passes < sync_max_passes)
		{
			if (++looked >= SYNC_CHECK_PASSED_MAX)
				return true;
			continue;
		}
		if (w->state != SYNC_ENTRY_PENDING || e->admit_limit < 0 ||
			w->admit_limit < 0 || lock->nheld < w->admit_limit)
			return false;
		if (++looked >= SYNC_CHECK_PASSED_MAX)
			return true;
	}
	/* an entry that is not queued passes the whole queue */
	return e->state == SYNC_ENTRY_FREE;
}
#endif

/*
 * The rules of the grant pass, for waiter 'w' of 'lock' when the lock has
 * 'nheld' holders taking 'slots_held' slots; *passing says whether a
 * waiter held back by its own limit was passed over already (then only
 * those with a limit of their own may go on); 'be' what best-effort
 * queueing has passed over (NULL: keep strict order); *now is the clock,
 * read if a rate needs it.  Used by the pass itself, by the hand-off's look
 * ahead and by sync_rate_check(), so that they choose alike.
 */
SyncPassStep
sync_pass_step(SyncEntry *w, int nheld, int slots_held, bool *passing,
			   SyncBestEffort *be, TimestampTz *now)
{
	Assert(w->state == SYNC_ENTRY_PENDING);
	/* reserved: its hand-off brings its own slot */
	if (TransactionIdIsValid(w->reserved_xid))
		return SYNC_PASS_NEXT;
	/* more slots than the limit: it never fits, nobody waits for it */
	if (sync_entry_unfit(w))
		return SYNC_PASS_NEXT;
	/*
	 * No room for it: it keeps its place, and those behind wait -- unless
	 * best-effort queueing lets them pass it
	 */
	if (!sync_lock_fits(w, nheld, slots_held))
		return sync_best_effort_pass(w, be) ? SYNC_PASS_NEXT : SYNC_PASS_STOP;
	if (sync_entry_at_own_limit(w, nheld))
	{
		/* held back by its own limit: those behind may go (see above) */
		*passing = true;
		return SYNC_PASS_NEXT;
	}
	/* ... if they carry a limit of their own; the others keep order */
	if (*passing && w->admit_limit < 0)
		return SYNC_PASS_STOP;
	/* a claim-only request at the front waits for its claim */
	if (w->claim)
		return SYNC_PASS_STOP;
	/* its slots are free, but the bucket lacks tokens for them */
	if (sync_entry_lock(w)->rate_limit > 0 &&
		!sync_rate_allows(sync_entry_lock(w), w->slots, sync_lazy_now(now)))
		return SYNC_PASS_TOKENS;
	/* the parent is full, or owes its free slots to a sibling's waiter */
	if (sync_entry_lock(w)->groupno != SYNC_ENTRY_NONE &&
		!sync_group_admits(w, 0))
		return SYNC_PASS_PARENT;
	return SYNC_PASS_GRANT;
}
