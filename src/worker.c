/*-------------------------------------------------------------------------
 *
 * worker.c
 *		The background worker and sync_reconcile(): one round of
 *		maintenance of the keyed holds, and the outbox of grants waiting to
 *		be written and announced.
 *
 * A round, in the database named by syncwf.database:
 *	1. loads the keyed holds from the tables if that has not happened yet
 *	   (the worker never waits for a table lock to do so: it tries again
 *	   100 ms later);
 *	2. writes every grant in the outbox (pending entries granted because
 *	   someone else's release committed) to sync_state and sends its NOTIFY;
 *	   a row that an open transaction has locked is skipped, never waited
 *	   for, and written by a round 100 ms later;
 *	3. releases holds whose lease has expired (their rows are deleted; the
 *	   trigger announces "lost" and hands the slot on at commit);
 *	4. turns controllers without a recent heartbeat inactive;
 *	5. reconciles launch plans (launch_plans.c) when plans or execution
 *	   phases were changed by hand or a max_pending deadline has come.
 *
 * The worker sleeps on its latch until the earliest lease expiry or
 * controller deadline; grants, new leases and loads set its latch.  It
 * never polls.  It starts once recovery has finished (so a standby starts
 * one when promoted), reloads its configuration on SIGHUP, and the
 * postmaster restarts it if it fails.  With syncwf.enable_worker = off it
 * idles, and sync_reconcile() (for example from pg_cron) does the rounds.
 *
 *-------------------------------------------------------------------------
 */
#include "compat.h"
#include "syncwf.h"

#include "access/xact.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

PGDLLEXPORT void sync_worker_main(Datum main_arg);

void
sync_worker_register(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 5;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "syncwf");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "sync_worker_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "syncwf worker");
	snprintf(worker.bgw_type, BGW_MAXLEN, "syncwf worker");
	RegisterBackgroundWorker(&worker);
}

void
sync_worker_wake(void)
{
	int			procno;

	if (SyncState == NULL)
		return;
	procno = SyncState->worker_procno;
	if (procno >= 0)
		SetLatch(&GetPGProcByNumber(procno)->procLatch);
}

/* Queue a grant for the worker to write and announce.  Never fails. */
void
sync_outbox_push(SyncEntry *entry)
{
	SpinLockAcquire(&SyncState->outbox_mutex);
	if (SyncState->outbox_tail - SyncState->outbox_head < SYNC_OUTBOX_SIZE)
	{
		SyncOutboxItem *item = &SyncState->outbox[SyncState->outbox_tail % SYNC_OUTBOX_SIZE];

		item->entry = entry;
		item->request_id = entry->request_id;
		item->token = entry->token;
		SyncState->outbox_tail++;
	}
	else
		SyncState->outbox_overflow = true;	/* the next round scans */
	SpinLockRelease(&SyncState->outbox_mutex);
	sync_worker_wake();
}

/*
 * Have the next round look at every unwritten grant, not only the outbox's
 * (a grant whose writing was skipped or rolled back).  Never fails.
 */
void
sync_outbox_rescan(void)
{
	SpinLockAcquire(&SyncState->outbox_mutex);
	SyncState->outbox_overflow = true;
	SpinLockRelease(&SyncState->outbox_mutex);
}

/* Take everything out of the outbox; *overflow: items were dropped. */
List *
sync_outbox_drain(bool *overflow)
{
	SyncOutboxItem items[64];
	List	   *result = NIL;

	*overflow = false;
	for (;;)
	{
		int			n = 0;

		SpinLockAcquire(&SyncState->outbox_mutex);
		if (SyncState->outbox_overflow)
		{
			*overflow = true;
			SyncState->outbox_overflow = false;
		}
		while (n < lengthof(items) && SyncState->outbox_head != SyncState->outbox_tail)
		{
			items[n++] = SyncState->outbox[SyncState->outbox_head % SYNC_OUTBOX_SIZE];
			SyncState->outbox_head++;
		}
		SpinLockRelease(&SyncState->outbox_mutex);
		if (n == 0)
			break;
		for (int i = 0; i < n; i++)
		{
			SyncOutboxItem *copy = palloc(sizeof(SyncOutboxItem));

			*copy = items[i];
			result = lappend(result, copy);
		}
	}
	return result;
}

/* A pending execution times out at 'at': make sure the worker wakes then. */
void
sync_launch_deadline(TimestampTz at)
{
	if (sync_atomic_lower(&SyncState->launch_deadline, (uint64) at))
		sync_worker_wake();
}

/* A lease now runs until 'expires': make sure the worker wakes for it. */
void
sync_lease_scheduled(TimestampTz expires)
{
	if (sync_atomic_lower(&SyncState->next_lease_expiry, (uint64) expires))
		sync_worker_wake();
}

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

	n += sync_state_persist_grants(&persist_retry);

	now = GetCurrentTimestamp();
	lease_due = pg_atomic_read_u64(&SyncState->next_lease_expiry);
	if ((uint64) now >= lease_due)
	{
		TimestampTz next_lease;
		List	   *expired;

		/* reset first: leases scheduled during the scan lower it again */
		pg_atomic_write_u64(&SyncState->next_lease_expiry, PG_UINT64_MAX);
		expired = sync_keyed_expired(now, &next_lease);
		if (next_lease != DT_NOEND)
			sync_lease_scheduled(next_lease);
		n += sync_state_expire_leases(expired);
		/*
		 * A lease whose row could not be deleted yet (being released or
		 * refreshed by an open transaction) is looked at again soon.
		 */
		if (list_length(expired) > 0)
			sync_lease_scheduled(now + USECS_PER_SEC / 2);
	}

	next_ctl = sync_controllers_check(now);

	/*
	 * Launch plans: when plans or phases were changed by hand, at a
	 * max_pending deadline, and on every sync_reconcile() call.
	 */
	if (next_wake == NULL ||
		pg_atomic_exchange_u32(&SyncState->launch_dirty, 0) != 0 ||
		(uint64) now >= pg_atomic_read_u64(&SyncState->launch_deadline))
	{
		TimestampTz next_launch;

		pg_atomic_write_u64(&SyncState->launch_deadline, PG_UINT64_MAX);
		n += sync_launch_reconcile(now, &next_launch);
		if (next_launch != DT_NOEND)
			sync_launch_deadline(next_launch);
	}

	lease_due = pg_atomic_read_u64(&SyncState->next_lease_expiry);
	next = Min(next_ctl, (TimestampTz) Min(lease_due, (uint64) DT_NOEND));
	next = Min(next, (TimestampTz) Min(pg_atomic_read_u64(&SyncState->launch_deadline),
									   (uint64) DT_NOEND));
	/* a grant whose row an open transaction had locked: look again soon */
	if (persist_retry)
		next = Min(next, now + USECS_PER_SEC / 10);
	if (next_wake)
		*next_wake = next;
	return n;
}

static void
sync_worker_exit(int code, Datum arg)
{
	if (SyncState != NULL && SyncState->worker_procno == sync_my_procno())
	{
		SyncState->worker_procno = -1;
		pg_atomic_write_u32(&SyncState->worker_pid, 0);
	}
}

void
sync_worker_main(Datum main_arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	BackgroundWorkerInitializeConnection(sync_database, NULL, 0);
	pgstat_report_appname("syncwf worker");

	SyncState->worker_procno = sync_my_procno();
	pg_atomic_write_u32(&SyncState->worker_pid, (uint32) MyProcPid);
	before_shmem_exit(sync_worker_exit, (Datum) 0);
	ereport(LOG,
			(errmsg("syncwf worker started in database \"%s\"", sync_database)));

	for (;;)
	{
		TimestampTz next = DT_NOEND;
		long		timeout_ms = -1;
		int			events = WL_LATCH_SET | WL_EXIT_ON_PM_DEATH;

		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		if (sync_worker_enabled)
		{
			SetCurrentStatementStartTimestamp();
			StartTransactionCommand();
			PushActiveSnapshot(GetTransactionSnapshot());
			pgstat_report_activity(STATE_RUNNING, "syncwf reconcile round");
			sync_backend_setup();
			(void) sync_reconcile_round(&next);
			PopActiveSnapshot();
			CommitTransactionCommand();
			pgstat_report_stat(true);
			pgstat_report_activity(STATE_IDLE, NULL);
		}

		if (next != DT_NOEND)
		{
			TimestampTz now = GetCurrentTimestamp();

			timeout_ms = (next <= now) ? 0 :
				(long) Min((next - now + 999) / 1000, (int64) 3600 * 1000);
			events |= WL_TIMEOUT;
		}
		(void) WaitLatch(MyLatch, events, timeout_ms,
						 sync_wait_event(SYNC_WAIT_WORKER_MAIN));
	}
}
