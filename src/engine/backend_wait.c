/*-------------------------------------------------------------------------
 *
 * backend_wait.c
 *		A session's wait for the grant of its request (backend_holds.c):
 *		the sleep on its latch, the time-out, the deadlock check every
 *		deadlock_timeout, and a request that a lowered limit or rate left
 *		unable ever to be granted; the errors each of these raises.
 *
 * Locking: the request's partitions are taken one at a time, shared, to
 * look at its entries (lock_table.c); nothing is held while it sleeps.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/int.h"
#include "storage/proc.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "engine/engine_internal.h"

/*
 * Raise the timeout error for a request.  The caller has withdrawn it.
 */
static void
sync_report_timeout(char **names, int nnames, int64 timeout_us)
{
	if (nnames == 1)
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("could not obtain syncwf lock \"%s\" within %s",
						names[0],
						psprintf(INT64_FORMAT " ms", timeout_us / 1000)),
				 errhint("Raise the timeout argument, or pass NULL to wait until the lock is granted.")));
	else
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("could not obtain syncwf locks \"%s\" and %d more within %s",
						names[0], nnames - 1,
						psprintf(INT64_FORMAT " ms", timeout_us / 1000)),
				 errhint("Raise the timeout argument, or pass NULL to wait until the locks are granted.")));
}

/* A request that can never be granted: which lock, and why. */
typedef struct SyncUnfit
{
	char		lock_name[SYNC_NAME_BUFLEN];
	int32		slots;			/* the request's */
	int32		limit;			/* the lock's limit, rate_limit or parent's */
	SyncUnfitKind why;			/* ... which one */
	char		parent[SYNC_NAME_BUFLEN];	/* SYNC_UNFIT_PARENT: its row */
} SyncUnfit;

/*
 * Can the request 'first' never be granted now (a semaphore's limit, rate
 * or parent was lowered under its slots)?  If so, *unfit says why.  Takes each
 * entry's partition in turn.
 */
static bool
sync_request_unfit(SyncEntry *first, SyncUnfit *unfit)
{
	SyncEntry  *e = first;

	do
	{
		SyncLock   *lock = sync_entry_lock(e);
		LWLock	   *partition = sync_partition_lock(lock->hashcode);
		bool		found;

		LWLockAcquire(partition, LW_SHARED);
		unfit->limit = sync_entry_unfit_limit(e, &unfit->why);
		found = (unfit->limit > 0);
		if (found)
		{
			int32		limit,
						held;

			strlcpy(unfit->lock_name, lock->tag.name, sizeof(unfit->lock_name));
			unfit->slots = e->slots;
			if (unfit->why == SYNC_UNFIT_PARENT)
				(void) sync_lock_group_info(lock, unfit->parent, &limit, &held);
		}
		LWLockRelease(partition);
		if (found)
			return true;
		e = sync_next_in_request(e);
	} while (e != first);
	return false;
}

/*
 * Raise the error for a request that can never be granted (*unfit).  The
 * caller has withdrawn it.
 */
static void
sync_report_unfit(const SyncUnfit *unfit)
{
	const char *lock_name = unfit->lock_name;
	int32		limit = unfit->limit;
	int32		slots = unfit->slots;
	bool		rate = (unfit->why == SYNC_UNFIT_RATE);

	if (unfit->why == SYNC_UNFIT_PARENT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("syncwf request for semaphore \"%s\" can never be granted", lock_name),
				 errdetail_plural("Its parent limit \"%s\" was lowered to %d slot while the request waited, fewer than the request takes under it.",
								  "Its parent limit \"%s\" was lowered to %d slots while the request waited, fewer than the request takes under it.",
								  limit, unfit->parent, limit),
				 errhint("Ask for fewer slots or fewer of its children at once, or raise the sizelimit of the parent's sync_limit row again.")));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("syncwf request for %d slots of semaphore \"%s\" can never be granted",
					slots, lock_name),
			 rate ?
			 errdetail_plural("The semaphore's rate_limit was lowered to %d token while the request waited.",
							  "The semaphore's rate_limit was lowered to %d tokens while the request waited.",
							  limit, limit) :
			 errdetail_plural("The semaphore's limit was lowered to %d slot while the request waited.",
							  "The semaphore's limit was lowered to %d slots while the request waited.",
							  limit, limit),
			 errhint("Ask for at most %d slots, or raise the limit again.", limit)));
}

/*
 * Sleep on our latch until the request 'first' is granted.  Whoever grants
 * it sets our latch (for a waiter of a rate-limited semaphore, the rate
 * worker's pass, when the tokens come).  Raises 55P03 at the deadline, and
 * 22023 when a lowered limit or rate leaves the request more slots than it
 * has (sem_limits.c wakes us then).  Every deadlock_timeout it looks for a
 * waits-for cycle through the request (deadlock.c; a look at the holders'
 * PGPROCs unless one of them waits itself) and, if this backend is in one,
 * withdraws the request and raises 40P01.  A client that goes away
 * meanwhile ends the backend at once (client_wait.c), and the exit
 * callback withdraws the request.  Before it withdraws the request itself
 * and raises an error, it clears *waiting (the caller's note that the
 * request waits, which its error handler would withdraw again).
 */
void
sync_wait_loop(SyncEntry *first, char **names, int nnames, int64 timeout_us,
			   SyncEntry **waiting)
{
	LWLock	   *partition = sync_partition_lock(sync_entry_lock(first)->hashcode);
	TimestampTz deadline = 0;
	TimestampTz next_check;

	if (timeout_us >= 0 &&
		pg_add_s64_overflow(GetCurrentTimestamp(), timeout_us, &deadline))
		deadline = PG_INT64_MAX;	/* later than any clock reading */
	next_check = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
											 DeadlockTimeout);

	for (;;)
	{
		bool		granted;
		SyncUnfit	unfit;
		SyncDeadlock *deadlock;
		TimestampTz now;
		long		sleep_ms;

		LWLockAcquire(partition, LW_SHARED);
		granted = (first->state == SYNC_ENTRY_HELD);
		LWLockRelease(partition);
		if (granted)
			break;
		if (sync_request_unfit(first, &unfit))
		{
			*waiting = NULL;
			sync_withdraw_request(first, SYNC_WAIT_CANCEL);
			sync_report_unfit(&unfit);
		}

		now = GetCurrentTimestamp();
		if (timeout_us >= 0 && now >= deadline)
		{
			*waiting = NULL;
			sync_withdraw_request(first, SYNC_WAIT_TIMEOUT);
			sync_report_timeout(names, nnames, timeout_us);
		}
		if (now >= next_check)
		{
			deadlock = sync_deadlock_check(first);
			if (deadlock != NULL)
			{
				/* withdrawn before the next check may look */
				*waiting = NULL;
				sync_withdraw_request(first, SYNC_WAIT_DEADLOCK);
				sync_deadlock_report(deadlock);
			}
			now = GetCurrentTimestamp();
			next_check = TimestampTzPlusMilliseconds(now, DeadlockTimeout);
		}

		/* round up, so that we never wake before the deadline */
		sleep_ms = (long) Min((next_check - now + 999) / 1000, (int64) INT_MAX);
		if (timeout_us >= 0)
			sleep_ms = Min(sleep_ms,
						   (long) Min((deadline - now + 999) / 1000, (int64) INT_MAX));

		/* also ends the backend (FATAL) if its client went away */
		sync_sleep(sleep_ms, sync_wait_event(SYNC_WAIT_ACQUIRE));
	}
}
