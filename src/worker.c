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
 * Its latch and the deadlines it sleeps until are in outbox.c.
 *
 * Layer 12 (entry point): calls layers 0-11.
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

#include "compat.h"
#include "guc.h"
#include "outbox.h"
#include "reconcile.h"

PGDLLEXPORT void sync_worker_main(Datum main_arg);

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
