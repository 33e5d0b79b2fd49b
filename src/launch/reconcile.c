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
 *	   were changed by hand or a max_pending deadline has come.
 *
 * No state of its own; the deadlines live in worker_deadlines.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/timestamp.h"

#include "launch/launch_internal.h"

/*
 * One round of maintenance in the current transaction.  Returns the number
 * of things done (grants written, leases expired); *next_wake (if not NULL)
 * gets the next moment a round has work to do, DT_NOEND if none is known.
 */
int
sync_reconcile_round(TimestampTz *next_wake)
{
	int			n = 0;
	TimestampTz now;
	TimestampTz next = DT_NOEND;
	TimestampTz next_ctl;
	uint64		lease_due;
	bool		persist_retry;
	bool		unfit_retry = false;

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
	lease_due = sync_lease_due();
	if ((uint64) now >= lease_due)
	{
		TimestampTz next_lease;
		List	   *expired;

		/* reset first: leases scheduled during the scan lower it again */
		sync_lease_reset();
		expired = sync_keyed_expired(now, &next_lease);
		if (next_lease != DT_NOEND)
			sync_lease_scheduled(next_lease);
		n += sync_state_expire(expired);
		/*
		 * A lease whose row could not be deleted yet (being released or
		 * refreshed by an open transaction) is looked at again soon.
		 */
		if (list_length(expired) > 0)
			sync_lease_scheduled(now + USECS_PER_SEC / 2);
	}

	if (sync_unfit_take())
	{
		bool		retry;
		List	   *unfit = sync_keyed_unfit(&retry);
		n += sync_state_withdraw(unfit, SYNC_REASON_LIMIT_LOWERED);
		/*
		 * Look again soon: for rows not committed yet, or locked (the next
		 * scan finds nothing once this round's deletes have committed).
		 */
		if (retry || unfit != NIL)
		{
			sync_unfit_set();
			unfit_retry = true;
		}
	}

	next_ctl = sync_controllers_check(now);

	/*
	 * Launch plans: when plans or phases were changed by hand, at a
	 * max_pending deadline, and on every sync_reconcile() call.
	 */
	if (next_wake == NULL ||
		sync_launch_take_dirty() ||
		(uint64) now >= sync_launch_due())
	{
		TimestampTz next_launch;

		sync_launch_reset_deadline();
		n += sync_launch_reconcile(now, &next_launch);
		if (next_launch != DT_NOEND)
			sync_launch_deadline(next_launch);
	}

	lease_due = sync_lease_due();
	next = Min(next_ctl, (TimestampTz) Min(lease_due, (uint64) DT_NOEND));
	next = Min(next, (TimestampTz) Min(sync_launch_due(), (uint64) DT_NOEND));
	/* a grant whose row an open transaction had locked: look again soon */
	if (persist_retry || unfit_retry)
		next = Min(next, now + USECS_PER_SEC / 10);
	if (next_wake)
		*next_wake = next;
	return n;
}
