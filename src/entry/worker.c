/*-------------------------------------------------------------------------
 *
 * worker.c
 *		The background worker: it does a round of maintenance (reconcile.c)
 *		in the database named by syncwf.database whenever there is work.
 *
 * The worker sleeps on its latch until the earliest lease expiry or
 * controller deadline; grants, new leases and loads set its latch.  It
 * never polls.  It starts once recovery has finished (so a standby starts
 * one when promoted), reloads its configuration on SIGHUP, and the
 * postmaster restarts it if it fails.  With syncwf.enable_worker = off it
 * idles, and sync_reconcile() (for example from pg_cron) does the rounds.
 *
 * Its latch and the deadlines it sleeps until are in worker_deadlines.c.
 *
 * The rate worker (sync_rate_worker_main) is a second, smaller process: it
 * sleeps until the moment the tokens of a rate-limited semaphore's front
 * waiter come, runs the rate pass of wait_queue.c (grants in shared memory
 * only: a keyed grant goes to the outbox, which the worker writes), and
 * sleeps again.  It reads no table and has no database, so no round's
 * writes or commits ever delay it, and it runs as soon as the server is
 * consistent, on a standby too.  Backends set its latch when a waiter's tokens come sooner
 * than it sleeps for.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "entry/entry_internal.h"

PGDLLEXPORT void sync_worker_main(Datum main_arg);
PGDLLEXPORT void sync_rate_worker_main(Datum main_arg);

/* The top of a worker's loop: its latch, interrupts and a reload. */
static void
sync_worker_wakeup(void)
{
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
	if (ConfigReloadPending)
	{
		ConfigReloadPending = false;
		ProcessConfigFile(PGC_SIGHUP);
	}
}

static void
sync_worker_exit(int code, Datum arg)
{
	sync_worker_detach();
}

void
sync_worker_main(Datum main_arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	BackgroundWorkerInitializeConnection(sync_database, NULL, 0);
	pgstat_report_appname("syncwf worker");

	sync_worker_attach();
	before_shmem_exit(sync_worker_exit, (Datum) 0);
	ereport(LOG,
			(errmsg("syncwf worker started in database \"%s\"", sync_database)));

	for (;;)
	{
		TimestampTz next = DT_NOEND;
		long		timeout_ms = -1;
		int			events = WL_LATCH_SET | WL_EXIT_ON_PM_DEATH;

		sync_worker_wakeup();

		if (sync_worker_enabled)
		{
			SetCurrentStatementStartTimestamp();
			StartTransactionCommand();
			PushActiveSnapshot(GetTransactionSnapshot());
			pgstat_report_activity(STATE_RUNNING, "syncwf reconcile round");
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

static void
sync_rate_worker_exit(int code, Datum arg)
{
	sync_rate_worker_attach(false);
}

void
sync_rate_worker_main(Datum main_arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	/* no database: only to be seen in pg_stat_activity, with its waits */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("syncwf rate worker");

	sync_rate_worker_attach(true);
	before_shmem_exit(sync_rate_worker_exit, (Datum) 0);

	for (;;)
	{
		TimestampTz now;
		uint64		due;
		long		timeout_ms = -1;
		int			events = WL_LATCH_SET | WL_EXIT_ON_PM_DEATH;

		sync_worker_wakeup();

		now = GetCurrentTimestamp();
		if ((uint64) now >= sync_rate_deadline())
		{
			TimestampTz next;

			/* reset first: waits that begin during the pass lower it again */
			sync_rate_reset();
			next = sync_rate_pass(now);
			if (next != DT_NOEND)
				sync_rate_scheduled(next, false);
		}

		due = sync_rate_deadline();
		if (due != PG_UINT64_MAX)
		{
			now = GetCurrentTimestamp();
			if ((uint64) now >= due)
				continue;
			if (due - (uint64) now < 1000)
			{
				/*
				 * Less than a millisecond, the latch's resolution: sleep
				 * exactly that long (a waiter that comes meanwhile waits
				 * for it at most).
				 */
				pg_usleep((long) (due - (uint64) now));
				continue;
			}
			/* whole milliseconds, rounded down; the rest as above */
			timeout_ms = (long) Min((due - (uint64) now) / 1000, (uint64) 3600 * 1000);
			events |= WL_TIMEOUT;
		}
		(void) WaitLatch(MyLatch, events, timeout_ms,
						 sync_wait_event(SYNC_WAIT_RATE_WORKER));
	}
}
