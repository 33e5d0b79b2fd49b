/*-------------------------------------------------------------------------
 *
 * syncwf.c
 *		The module's entry point, in the top subsystem: refuses to load
 *		unless preloaded, defines the GUCs, registers the background worker
 *		(worker.c), and owns what every subsystem needs once per server or
 *		per backend -- the shared memory (each file's size, tranche and
 *		initialization, in a fixed order), the transaction callbacks (each
 *		subsystem's commit and abort work, in a fixed order), the hooks
 *		through which a lower subsystem tells a higher one what happened,
 *		and DISCARD ALL, which ends the session's holds.  src/README.md
 *		lists the subsystems.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "tcop/utility.h"
#include "utils/resowner.h"

#include "entry/entry_internal.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static ProcessUtility_hook_type prev_ProcessUtility_hook = NULL;

/* shmem_request_hook: every module's memory and LWLocks. */
static void
syncwf_shmem_request(void)
{
	Size		size = 0;

	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	size = add_size(size, sync_memory_shmem_size());
	size = add_size(size, sync_lock_table_shmem_size());
	size = add_size(size, sync_tokens_shmem_size());
	size = add_size(size, sync_outbox_shmem_size());
	size = add_size(size, sync_worker_wake_shmem_size());
	size = add_size(size, sync_controllers_shmem_size());
	size = add_size(size, sync_holders_shmem_size());
	size = add_size(size, sync_wakeups_shmem_size());
	size = add_size(size, sync_stats_shmem_size(sync_stats_max_locks));
	RequestAddinShmemSpace(size);

	sync_memory_shmem_request();
	sync_lock_table_shmem_request();
	sync_tokens_shmem_request();
	sync_outbox_shmem_request();
	sync_controllers_shmem_request();
	sync_holders_shmem_request();
	sync_stats_shmem_request();
	sync_deadlock_shmem_request();
}

/* shmem_startup_hook: create or attach to every module's structures. */
static void
syncwf_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	sync_memory_shmem_init();	/* first: the others make their buckets in it */
	sync_lock_table_shmem_init();
	sync_tokens_shmem_init();
	sync_outbox_shmem_init();
	sync_worker_wake_shmem_init();
	sync_controllers_shmem_init();
	sync_holders_shmem_init();
	sync_wakeups_shmem_init();
	sync_stats_shmem_init(sync_stats_max_locks);
	sync_deadlock_shmem_init();
	sync_memory_shmem_done();
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Transaction events, for every module that keeps work for them: session
 * holds (backend_holds.c), limit changes (sem_limits.c), keyed holds and controllers
 * (keyed_xact.c), in that order; at pre-commit, a release of a keyed hold
 * also writes the grant of the waiter its slot goes to (keyed_ops.c).
 * Commit work runs after the commit is durable and must not fail.
 * Transaction-scope holds end later, after the transaction's heavyweight
 * locks (syncwf_resource_release).
 */
static void
syncwf_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			sync_limits_precommit();
			sync_fair_weights_precommit();
			sync_keyed_handoff();
			break;
		case XACT_EVENT_PRE_PREPARE:
			sync_holds_at_prepare();
			if (sync_limits_pending())
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that changed sync_limit"),
						 errhint("Change sync_limit in a transaction that commits directly.")));
			if (sync_fair_weights_pending())
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that changed sync_fair_weight"),
						 errhint("Change sync_fair_weight in a transaction that commits directly.")));
			if (sync_keyed_xact_pending())
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that changed keyed holds or controllers"),
						 errhint("Request, release and heartbeat in a transaction that commits directly.")));
			break;
		case XACT_EVENT_COMMIT:
			sync_limits_at_commit();
			sync_fair_weights_at_commit();
			if (sync_keyed_xact_pending())
				sync_tokens_note_commit();
			sync_keyed_xact_at_commit();
			break;
		case XACT_EVENT_ABORT:
			sync_holds_at_abort();
			sync_limits_forget();
			sync_fair_weights_forget();
			sync_keyed_xact_at_abort();
			break;
		default:
			break;
	}
}

/*
 * The end of the transaction's resource release, after its heavyweight
 * locks: transaction-scope holds end here (backend_holds.c), at commit and abort.
 * Called for each resource owner of the transaction; only the first call
 * finds holds to release.
 */
static void
syncwf_resource_release(ResourceReleasePhase phase, bool isCommit,
						bool isTopLevel, void *arg)
{
	if (phase == RESOURCE_RELEASE_AFTER_LOCKS && isTopLevel)
		sync_holds_at_xact_end();
}

static void
syncwf_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						SubTransactionId parentSubid, void *arg)
{
	switch (event)
	{
		case SUBXACT_EVENT_ABORT_SUB:
			sync_keyed_xact_at_subabort(mySubid);
			sync_holds_at_subabort(mySubid);
			break;
		case SUBXACT_EVENT_COMMIT_SUB:
			sync_keyed_xact_at_subcommit(mySubid, parentSubid);
			sync_holds_at_subcommit(mySubid, parentSubid);
			break;
		default:
			break;
	}
}

/*
 * DISCARD ALL ends the session's holds, as it releases the session's
 * advisory locks: a pooler (PgBouncer's session pooling) runs it before it
 * hands the server connection to another client, which must not inherit
 * them.  (It cannot run in a transaction block, so no transaction-scope
 * hold and no wait is open.)
 */
static void
syncwf_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
					  bool readOnlyTree, ProcessUtilityContext context,
					  ParamListInfo params, QueryEnvironment *queryEnv,
					  DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *stmt = pstmt->utilityStmt;

	if (prev_ProcessUtility_hook)
		prev_ProcessUtility_hook(pstmt, queryString, readOnlyTree, context,
								 params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);

	if (IsA(stmt, DiscardStmt) && ((DiscardStmt *) stmt)->target == DISCARD_ALL)
		(void) sync_release_all_holds();
}

/* Register a background worker of worker.c: entry 'function', named 'name'. */
static void
sync_register_worker(const char *function, const char *name,
					 BgWorkerStartTime start, int restart_s)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = start;
	worker.bgw_restart_time = restart_s;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "syncwf");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "%s", function);
	snprintf(worker.bgw_name, BGW_MAXLEN, "%s", name);
	snprintf(worker.bgw_type, BGW_MAXLEN, "%s", name);
	RegisterBackgroundWorker(&worker);
}

/*
 * The background worker (worker.c), started once recovery has finished, and
 * the rate worker, as soon as the server is consistent (a standby's too: it
 * connects to no database, only to be seen in pg_stat_activity).
 */
static void
sync_worker_register(void)
{
	sync_register_worker("sync_worker_main", "syncwf worker",
						 BgWorkerStart_RecoveryFinished, 5);
	sync_register_worker("sync_rate_worker_main", "syncwf rate worker",
						 BgWorkerStart_ConsistentState, 1);
}

void
_PG_init(void)
{
	/*
	 * Locks live in shared memory, which can only be set up at server start.
	 * Refusing to load otherwise makes CREATE EXTENSION, and every function
	 * of an extension created earlier, fail with this message.
	 */
	if (!process_shared_preload_libraries_in_progress)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("syncwf must be loaded via shared_preload_libraries"),
				 errhint("Add 'syncwf' to shared_preload_libraries in postgresql.conf "
						 "(for example: ALTER SYSTEM SET shared_preload_libraries = 'syncwf'), "
						 "then restart the server.")));

	sync_define_gucs();
	/* fencing-token reservations are WAL records, replayed by standbys */
	sync_tokens_register_rmgr();
	sync_worker_register();
	/* on 18, per-lock statistics saved across a clean restart */
	sync_stats_persist_init();

	/* the pools of shared memory, and what lower modules report upward */
	sync_lock_table_init();
	sync_holders_init();
	sync_keyed_set_grant_written_hook(sync_launch_grant_written);

	/* every backend (they inherit them) gets the transaction callbacks */
	RegisterXactCallback(syncwf_xact_callback, NULL);
	RegisterSubXactCallback(syncwf_subxact_callback, NULL);
	RegisterResourceReleaseCallback(syncwf_resource_release, NULL);

	prev_ProcessUtility_hook = ProcessUtility_hook;
	ProcessUtility_hook = syncwf_ProcessUtility;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = syncwf_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = syncwf_shmem_startup;
}
