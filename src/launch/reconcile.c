/*-------------------------------------------------------------------------
 *
 * reconcile.c
 *		One round of maintenance of keyed holds and launch plans, run by the
 *		background worker (worker.c) and by sync_reconcile() (sql_keyed.c),
 *		in the database named by syncwf.database:
 *
 *	1. loads the keyed holds from the tables if that has not happened yet
 *	   (the worker never waits for a table lock to do so: it tries again
 *	   100 ms later);
 *	2. writes every grant in the outbox (pending entries granted because
 *	   someone else's release committed) to sync_state and sends its NOTIFY;
 *	   a row that an open transaction has locked is skipped, never waited
 *	   for, and written by a round 100 ms later;
 *	3. releases holds whose lease has expired (their rows are deleted; the
 *	   trigger announces "lost" and hands the slot on at commit);
 *	4. withdraws keyed requests a lowered limit or rate left with more slots
 *	   than the semaphore grants (announced "withdrawn", reason "limit
 *	   lowered");
 *	   a row an open transaction has locked is tried again 100 ms later;
 *	5. turns controllers without a recent heartbeat inactive;
 *	6. reconciles launch plans (launch_policy.c) when plans or execution phases
 *	   were changed by hand or a max_pending deadline has come, and on
 *	   every sync_reconcile() call.
 *
 * No state of its own; the deadlines live in worker_deadlines.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/timestamp.h"

#include "launch/launch_internal.h"

/*
 * Step 3: release the holds whose lease has expired, if the earliest lease
 * is due.  Returns the number released.
 */
static int
reconcile_leases(TimestampTz now)
{
	TimestampTz next_lease;
	List	   *expired;
	int			n;

	if ((uint64) now < sync_lease_due())
		return 0;
	/* reset first: leases scheduled during the scan lower it again */
	sync_lease_reset();
	expired = sync_keyed_expired(now, &next_lease);
	if (next_lease != DT_NOEND)
		sync_lease_scheduled(next_lease);
	n = sync_state_expire(expired);

	/*
	 * A lease whose row could not be deleted yet (being released or
	 * refreshed by an open transaction) is looked at again soon.
	 */
	if (list_length(expired) > 0)
		sync_lease_scheduled(now + USECS_PER_SEC / 2);
	return n;
}

/*
 * Step 4: withdraw the keyed requests that a lowered limit or rate left
 * with more slots than the semaphore grants, if any may have.  Returns the
 * number withdrawn; *retry is set if a round should look again soon.
 */
static int
reconcile_unfit(bool *retry)
{
	bool		locked;
	List	   *unfit;
	int			n;

	*retry = false;
	if (!sync_unfit_take())
		return 0;
	unfit = sync_keyed_unfit(&locked);
	n = sync_state_withdraw(unfit, SYNC_REASON_LIMIT_LOWERED);

	/*
	 * Look again soon: for rows not committed yet, or locked (the next scan
	 * finds nothing once this round's deletes have committed).
	 */
	if (locked || unfit != NIL)
	{
		sync_unfit_set();
		*retry = true;
	}
	return n;
}

/*
 * Step 6: reconcile launch plans when plans or phases were changed by hand,
 * at a max_pending deadline, and on every sync_reconcile() call ('always').
 * Returns the number of changes.
 */
static int
reconcile_launch_plans(TimestampTz now, bool always)
{
	TimestampTz next_launch;
	int			n;

	if (!always &&
		!sync_launch_take_dirty() &&
		(uint64) now < sync_launch_due())
		return 0;
	sync_launch_reset_deadline();
	n = sync_launch_reconcile(now, &next_launch);
	if (next_launch != DT_NOEND)
		sync_launch_deadline(next_launch);
	return n;
}

/*
 * One round of maintenance in the current transaction.  Returns the number
 * of things done (grants written, leases expired); *next_wake (if not NULL)
 * gets the next moment a round has work to do, DT_NOEND if none is known.
 * next_wake is NULL for sync_reconcile(), which always reconciles launch
 * plans and may wait for a table lock to load the keyed holds.
 */
int
sync_reconcile_round(TimestampTz *next_wake)
{
	int			n = 0;
	TimestampTz now;
	TimestampTz next;
	TimestampTz next_ctl;
	uint64		lease_due;
	bool		persist_retry;
	bool		unfit_retry;
	bool		preempt_retry;

	if (next_wake)
		*next_wake = DT_NOEND;
	if (!sync_keyed_database())
		return 0;
	if (!sync_keyed_try_load(next_wake != NULL))
	{
		/* the worker does not wait for table locks: try again soon */
		*next_wake = GetCurrentTimestamp() + USECS_PER_SEC / 10;
		return 0;
	}
	if (!OidIsValid(sync_state_relid(true)))
		return 0;

	n += sync_keyed_persist_grants(&persist_retry);
	now = GetCurrentTimestamp();
	/* preemptions first: a grace of 0 ends in this round's lease expiry */
	n += sync_keyed_preempt(now, &preempt_retry);
	n += reconcile_leases(now);
	n += reconcile_unfit(&unfit_retry);
	next_ctl = sync_controllers_check(now);
	n += reconcile_launch_plans(now, next_wake == NULL);

	lease_due = sync_lease_due();
	next = Min(next_ctl, (TimestampTz) Min(lease_due, (uint64) DT_NOEND));
	next = Min(next, (TimestampTz) Min(sync_launch_due(), (uint64) DT_NOEND));
	/* a grant whose row an open transaction had locked: look again soon */
	if (persist_retry || unfit_retry || preempt_retry)
		next = Min(next, now + USECS_PER_SEC / 10);
	if (next_wake)
		*next_wake = next;
	return n;
}
