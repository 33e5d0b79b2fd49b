/*-------------------------------------------------------------------------
 *
 * wait_reasons.c
 *		Why a pending entry waits, for the view sync_waiters: what it waits
 *		for, at which sync_limit row, whose entries it needs out of the
 *		way, and an estimate of how long.
 *
 * The reason mirrors the grant pass (wait_queue.c, with the rules of
 * grant_rules.c): the first of these that applies.
 *	- controller: dormant, its controller is inactive;
 *	- reserved: a releasing transaction hands it a slot at its commit;
 *	- claim: a claim-only request, waiting for its writer's claim;
 *	- unfit: it asks more slots than the limit or the rate, or (with the
 *	  other children in its request) than the parent;
 *	- queue / fair_share: the pass, walked with sync_pass_step() as the
 *	  grant pass walks it (best-effort and launch-plan passing included),
 *	  stops before it.  fair_share when a waiter ahead of it has its
 *	  priority, another fair key, and came after it (a later queue time,
 *	  or the same and a later arrival): the fair tags put that one ahead
 *	  (of the SYNC_PASS_AHEAD_MAX nearest waiters ahead);
 *	- admit_limit: its own launch-plan version limit is reached;
 *	- preemption: it would be limit or parent, but holds in their
 *	  preemption grace (preemption.c) give back the room it needs;
 *	- limit: its lock's holders take the slots it needs;
 *	- rate: it fits, but its rate's tokens have not come;
 *	- parent: its parent row's group has no room for it, or owes its free
 *	  slots to a sibling's waiter (sync_group_admits());
 *	- other_lock: it would be granted here, but another lock of its
 *	  request holds it back;
 *	- none: it is grantable now (a grant is in flight).
 *
 * Blockers (whose entries it needs gone): for preemption the holds in
 * their grace, with an estimate of the time until the last grace ends;
 * for limit and admit_limit the
 * holders of its lock that conflict with it; for parent the holders of
 * every child of the parent; for other_lock the holders of that lock; at
 * most SYNC_WHY_BLOCKERS_EACH of backends and as many of holder keys.
 * For queue and fair_share the waiters ahead of it, nearest first, at most
 * SYNC_WHY_AHEAD_MAX.
 *
 * The estimate, from the lock's row of sync_lock_stats: the mean hold
 * (hold_total / hold_count) times the rounds of holds it waits for,
 * max(1, ceil((slots ahead + its own - free slots) / limit)).  For
 * parent, the parent's limit and free slots and its own slots; for
 * admit_limit its own limit; for rate the time until its tokens come;
 * for other_lock the other lock's estimate.  None (-1) without statistics,
 * for a paused limit, and for controller, reserved, claim and unfit.
 *
 * Locking: the caller holds every partition (shared is enough); the walk
 * of a grouped lock takes its group's stripe shared, after the partitions,
 * and lets it go before it looks at another lock.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>
#include <math.h>

#include "utils/timestamp.h"

#include "engine/engine_internal.h"

/* Most waiters ahead named for queue and fair_share. */
#define SYNC_WHY_AHEAD_MAX		8

/* What one lock says of entry e, before its request's other locks. */
typedef struct WhyStep
{
	const char *reason;
	SyncEntry  *stopper;		/* queue: the waiter the pass stops at */
	int32		ahead;			/* slots of the waiters before it */
	int32		nheld;			/* the holders, grants in flight counted */
	int32		slots_held;
} WhyStep;

/*
 * Is the request of multi-lock waiter w held back by another of its locks
 * (it does not fit there, or is not that queue's front)?  A plain look,
 * for best-effort passing.
 */
static bool
sync_why_held_elsewhere(SyncEntry *w)
{
	TimestampTz now = 0;

	for (SyncEntry *x = sync_next_in_request(w); x != w;
		 x = sync_next_in_request(x))
		if (!sync_entry_fits(x, &now) ||
			sync_queue_front(sync_entry_lock(x)) != x)
			return true;
	return false;
}

/* Where the grant pass stops before e, if it does: the rest of WhyStep. */
static SyncEntry *
sync_why_walk(SyncLock *lock, SyncEntry *e, WhyStep *st, bool *passing)
{
	SyncBestEffort be = SYNC_BEST_EFFORT_INIT;
	TimestampTz now = 0;

	sync_elist_foreach(w, &lock->waiters, lock_link)
	{
		SyncPassStep step;

		if (w == e)
			return NULL;
		if (!TransactionIdIsValid(w->reserved_xid) && !sync_entry_unfit(w))
			st->ahead += sync_entry_weight(w);
		step = sync_pass_step(w, st->nheld, st->slots_held, passing, &be, &now);
		if (step == SYNC_PASS_NEXT)
			continue;
		if (step != SYNC_PASS_GRANT)
			return w;
		if (w->nlocks > 1)
		{
			if (lock->best_effort && sync_why_held_elsewhere(w) &&
				sync_best_effort_pass(w, &be))
				continue;
			return w;
		}
		/* granted by the pass in flight: it takes its slots */
		st->nheld++;
		st->slots_held += sync_entry_weight(w);
		if (be.npassed > 0 && --be.budget <= 0)
			return w;
	}
	return NULL;
}

/* Did e come before w (queue time, then arrival)? */
static inline bool
sync_why_came_first(const SyncEntry *e, const SyncEntry *w)
{
	return e->queued_at != w->queued_at ? e->queued_at < w->queued_at :
		e->seq < w->seq;
}

/*
 * Is a waiter of another fair key, of e's priority, that came after e
 * ahead of it (only the fair tags put it there)?  Looks at the
 * SYNC_PASS_AHEAD_MAX nearest waiters ahead.
 */
static bool
sync_why_fair_ahead(SyncEntry *e)
{
	int			looked = 0;

	for (SyncEntry *w = sync_elist_prev(e, SYNC_LOCK_LINK);
		 w != NULL && w->priority == e->priority && looked++ < SYNC_PASS_AHEAD_MAX;
		 w = sync_elist_prev(w, SYNC_LOCK_LINK))
		if (!TransactionIdIsValid(w->reserved_xid) && !sync_entry_unfit(w) &&
			strcmp(w->fair_key, e->fair_key) != 0 && sync_why_came_first(e, w))
			return true;
	return false;
}

/*
 * Why pending entry e waits as far as its own lock goes.  Takes and lets
 * go the stripe of the lock's group.
 */
static void
sync_why_own(SyncEntry *e, WhyStep *st)
{
	SyncLock   *lock = sync_entry_lock(e);
	uint32		stripes = sync_groups_share_lock(lock);
	TimestampTz now = 0;
	bool		passing = false;

	st->nheld = lock->nheld;
	st->slots_held = lock->slots_held;
	st->ahead = 0;
	st->stopper = sync_why_walk(lock, e, st, &passing);
	if (st->stopper != NULL || (passing && e->admit_limit < 0))
		st->reason = sync_why_fair_ahead(e) ? "fair_share" : "queue";
	else if (e->admit_limit >= 0 && st->nheld >= e->admit_limit)
		st->reason = "admit_limit";
	else if (lock->kind == SYNC_KIND_MUTEX
			 ? (e->shared ? st->slots_held > 0 : st->nheld > 0)
			 : st->slots_held > lock->limit - e->slots)
		st->reason = "limit";
	else if (lock->rate_limit > 0 &&
			 !sync_rate_allows(lock, e->slots, sync_lazy_now(&now)))
		st->reason = "rate";
	else if (lock->groupno != SYNC_ENTRY_NONE && !sync_group_admits(e, 0))
		st->reason = "parent";
	else
		st->reason = "none";
	sync_groups_leave(stripes);
}

/* Add entry x to the blockers, at most SYNC_WHY_BLOCKERS_EACH of a kind. */
static void
sync_why_add(SyncWhy *why, SyncEntry *x, int *nkeyed, int *nbackend)
{
	int		   *n = (x->scope == SYNC_SCOPE_KEYED) ? nkeyed : nbackend;

	for (int i = 0; i < why->nblockers; i++)
	{
		SyncEntry  *b = why->blockers[i];

		if (x->scope == SYNC_SCOPE_KEYED ? b->holderno == x->holderno :
			(b->scope != SYNC_SCOPE_KEYED && b->pid == x->pid))
			return;
	}
	if (*n >= SYNC_WHY_BLOCKERS_EACH)
		return;
	(*n)++;
	why->blockers[why->nblockers++] = x;
}

/* The holders of 'lock' that conflict with e (a shared one: exclusive ones). */
static void
sync_why_holders(SyncWhy *why, SyncLock *lock, const SyncEntry *e,
				 int *nkeyed, int *nbackend)
{
	sync_elist_foreach(h, &lock->holders, lock_link)
	{
		if (e->shared && h->shared)
			continue;
		sync_why_add(why, h, nkeyed, nbackend);
	}
}

/* The holders of every child of e's parent (all partitions held). */
static void
sync_why_children(SyncWhy *why, const SyncEntry *e)
{
	int32		groupno = sync_entry_lock(e)->groupno;
	SyncLiveIter it;
	int			nkeyed = 0;
	int			nbackend = 0;

	sync_foreach_live_lock(it)
	{
		SyncLock   *m = sync_live_lock(it);

		if (m->groupno == groupno)
			sync_why_holders(why, m, e, &nkeyed, &nbackend);
		if (nkeyed >= SYNC_WHY_BLOCKERS_EACH &&
			nbackend >= SYNC_WHY_BLOCKERS_EACH)
			break;
	}
}

/*
 * e waits for the room of its lock ('parent': of its parent): if holds in
 * their preemption grace give that room back, it waits for them, at most
 * until the last grace ends.  Sets *why and returns true if so.  All
 * partitions held.
 */
static bool
sync_why_preemption(SyncWhy *why, SyncEntry *e, bool parent)
{
	SyncLock   *lock = sync_entry_lock(e);
	int32		preempting = lock->slots_preempting;
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz last = now;
	SyncLiveIter it;
	int			nkeyed = 0;
	int			nbackend = 0;

	if (parent)
	{
		uint32		stripes = sync_groups_share_lock(lock);

		preempting = sync_group_at(lock->groupno)->slots_preempting;
		sync_groups_leave(stripes);
	}
	if (preempting == 0)
		return false;
	why->reason = "preemption";
	sync_foreach_live_lock(it)
	{
		SyncLock   *m = sync_live_lock(it);

		if (parent ? m->groupno != lock->groupno : m != lock)
			continue;
		sync_elist_foreach(h, &m->holders, lock_link)
			if (h->preempt_deadline != 0)
			{
				sync_why_add(why, h, &nkeyed, &nbackend);
				last = Max(last, h->preempt_deadline);
			}
	}
	why->estimate_us = last - now;
	return true;
}

/* The waiters ahead of e that the pass does not pass over, nearest first. */
static void
sync_why_ahead(SyncWhy *why, SyncEntry *e)
{
	for (SyncEntry *w = sync_elist_prev(e, SYNC_LOCK_LINK);
		 w != NULL && why->nblockers < SYNC_WHY_AHEAD_MAX;
		 w = sync_elist_prev(w, SYNC_LOCK_LINK))
		if (!TransactionIdIsValid(w->reserved_xid) && !sync_entry_unfit(w))
			why->blockers[why->nblockers++] = w;
}

/* Mean hold in microseconds of lock's statistics, or -1. */
static int64
sync_why_mean_hold(const SyncLock *lock)
{
	if (!sync_track_stats || lock->stats == NULL)
		return -1;
	return sync_stats_mean_hold(lock->stats);
}

/* mean * max(1, ceil((need - free) / limit)), or -1. */
static int64
sync_why_rounds(int64 mean, int64 need, int64 free, int64 limit)
{
	int64		rounds;

	if (mean < 0 || limit <= 0)
		return -1;
	rounds = need - Max(free, 0) <= 0 ? 1 :
		(need - Max(free, 0) + limit - 1) / limit;
	return mean * Max(rounds, 1);
}

/* The estimate for reason st->reason of e (see the opening comment). */
static int64
sync_why_estimate(SyncEntry *e, const WhyStep *st)
{
	SyncLock   *lock = sync_entry_lock(e);
	int64		mean = sync_why_mean_hold(lock);
	int64		limit = sync_lock_slots(lock);

	if (strcmp(st->reason, "none") == 0)
		return 0;
	if (strcmp(st->reason, "rate") == 0)
		return Max(sync_rate_due(lock, e->slots) - GetCurrentTimestamp(), 0);
	if (strcmp(st->reason, "admit_limit") == 0)
		return sync_why_rounds(mean, 1, e->admit_limit - st->nheld,
							   e->admit_limit);
	if (strcmp(st->reason, "parent") == 0)
	{
		char		name[SYNC_NAME_BUFLEN];
		int32		plimit;
		int32		pheld;

		if (!sync_lock_group_info(lock, name, &plimit, &pheld))
			return -1;
		return sync_why_rounds(mean, sync_entry_weight(e), plimit - pheld, plimit);
	}
	return sync_why_rounds(mean, (int64) st->ahead + sync_entry_weight(e),
						   limit - st->slots_held, limit);
}

/*
 * Why pending or dormant entry e waits: fills *why (see the opening
 * comment).  *row and the blockers are set where the reason has them.
 * Caller holds every partition, shared or exclusive, and no stripe.
 */
void
sync_wait_reason(SyncEntry *e, SyncWhy *why)
{
	SyncLock   *lock = sync_entry_lock(e);
	int			nkeyed = 0;
	int			nbackend = 0;
	SyncUnfitKind unfit;
	WhyStep		st;

	why->row = NULL;
	why->nblockers = 0;
	why->estimate_us = -1;
	if (e->state == SYNC_ENTRY_DORMANT)
	{
		why->reason = "controller";
		return;
	}
	Assert(e->state == SYNC_ENTRY_PENDING);
	if (TransactionIdIsValid(e->reserved_xid) || e->claim ||
		sync_entry_unfit_limit(e, &unfit) > 0)
	{
		why->reason = TransactionIdIsValid(e->reserved_xid) ? "reserved" :
			e->claim ? "claim" : "unfit";
		if (e->claim || TransactionIdIsValid(e->reserved_xid))
			return;
		if (unfit == SYNC_UNFIT_PARENT)
		{
			char		name[SYNC_NAME_BUFLEN];
			int32		plimit;
			int32		pheld;

			if (sync_lock_group_info(lock, name, &plimit, &pheld))
				why->row = pstrdup(name);
		}
		else
			why->row = sync_limit_row_name(lock);
		return;
	}
	sync_why_own(e, &st);
	why->reason = st.reason;
	why->estimate_us = sync_why_estimate(e, &st);
	/* the room it needs comes when preempted holds' graces end */
	if ((strcmp(st.reason, "limit") == 0 && sync_why_preemption(why, e, false)) ||
		(strcmp(st.reason, "parent") == 0 && sync_why_preemption(why, e, true)))
	{
		char		name[SYNC_NAME_BUFLEN];
		int32		plimit;
		int32		pheld;

		if (strcmp(st.reason, "limit") == 0)
			why->row = sync_limit_row_name(lock);
		else if (sync_lock_group_info(lock, name, &plimit, &pheld))
			why->row = pstrdup(name);
		return;
	}
	if (strcmp(st.reason, "limit") == 0 || strcmp(st.reason, "rate") == 0)
		why->row = sync_limit_row_name(lock);
	if (strcmp(st.reason, "limit") == 0 || strcmp(st.reason, "admit_limit") == 0)
		sync_why_holders(why, lock, e, &nkeyed, &nbackend);
	else if (strcmp(st.reason, "queue") == 0 ||
			 strcmp(st.reason, "fair_share") == 0)
		sync_why_ahead(why, e);
	else if (strcmp(st.reason, "parent") == 0)
	{
		char		name[SYNC_NAME_BUFLEN];
		int32		plimit;
		int32		pheld;

		if (sync_lock_group_info(lock, name, &plimit, &pheld))
			why->row = pstrdup(name);
		sync_why_children(why, e);
	}
	else if (strcmp(st.reason, "none") == 0 && e->nlocks > 1)
	{
		/* the first other lock of its request that holds it back */
		for (SyncEntry *x = sync_next_in_request(e); x != e;
			 x = sync_next_in_request(x))
		{
			WhyStep		other;

			sync_why_own(x, &other);
			if (strcmp(other.reason, "none") == 0)
				continue;
			why->reason = "other_lock";
			why->row = pstrdup(sync_entry_lock(x)->tag.name);
			why->estimate_us = sync_why_estimate(x, &other);
			sync_why_holders(why, sync_entry_lock(x), x, &nkeyed, &nbackend);
			break;
		}
	}
}
