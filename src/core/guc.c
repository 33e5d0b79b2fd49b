/*-------------------------------------------------------------------------
 *
 * guc.c
 *		Every configuration parameter of syncwf, and whether this backend is
 *		in the database they name for keyed holds.  The reference
 *		(docs/reference.md, section Configuration) describes each one; keep
 *		the two in step (test/t/011_docs_gucs.pl checks).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "core/core.h"

/*
 * Shared memory syncwf may take for locks, queue entries and holder keys
 * (core/shared_pool.c), in megabytes.  It grows as they are made, up to
 * this; 2 GB holds 2,000,000 locks each with a hold and a waiter.
 */
int			sync_max_memory = 2048;

/*
 * Optional caps on how many locks (cached ones included), entries and
 * holder keys can be live at once; -1: only syncwf.max_memory bounds them.
 */
int			sync_max_locks = -1;
int			sync_max_entries = -1;
int			sync_max_holders = -1;

/* Controllers known at once, over all databases. */
int			sync_max_controllers = 1024;

/* The database whose sync_state and sync_controller tables hold keyed holds. */
char	   *sync_database = NULL;

/* Seconds without a heartbeat after which a controller is inactive. */
int			sync_inactive_controller_timeout = 300;

/* Whether the background worker does its rounds (else: sync_reconcile()). */
bool		sync_worker_enabled = true;

/*
 * Whether a release writes the grant of the waiter it hands its slot to, in
 * its own transaction (keyed_ops.c); else the worker does.
 */
bool		sync_handoff_in_transaction = true;

/*
 * On a semaphore whose sync_limit row says queueing = 'best_effort': how
 * many grants to requests behind it a waiter that cannot be granted yet lets
 * pass before strict queue order resumes for it (grant_rules.c).
 */
int			sync_max_passes = 10;

/* Whether grants, waits and holds are counted per lock (stats.c). */
bool		sync_track_stats = true;

/* Locks with a statistics row of their own (stats.c), over all databases. */
int			sync_stats_max_locks = 1000;

/*
 * How much shared memory the lock table may grow to, and optional caps on
 * what it holds; all changed with a reload.
 */
static void
sync_define_size_gucs(void)
{
	DefineCustomIntVariable("syncwf.max_memory",
							"Shared memory syncwf may grow to for locks, queue entries and holder keys.",
							"It is taken as they are made and reused when they are freed; "
							"a request that would need more fails. Changed with a reload.",
							&sync_max_memory,
							2048,
							8,
							INT_MAX,
							PGC_SIGHUP,
							GUC_UNIT_MB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("syncwf.max_locks",
							"Maximum number of distinct syncwf locks in the lock table at once, or -1 for no cap.",
							"Live and cached locks count. Without a cap, syncwf.max_memory bounds them.",
							&sync_max_locks,
							-1,
							-1,
							INT_MAX / 2,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("syncwf.max_entries",
							"Maximum number of syncwf holds and queue entries at once, or -1 for no cap.",
							"Each hold and each queued request for one lock takes an entry. "
							"Without a cap, syncwf.max_memory bounds them.",
							&sync_max_entries,
							-1,
							-1,
							INT_MAX / 2,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("syncwf.max_holders",
							"Maximum number of distinct holder keys with keyed holds or requests, or -1 for no cap.",
							"Without a cap, syncwf.max_memory bounds them.",
							&sync_max_holders,
							-1,
							-1,
							INT_MAX / 2,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("syncwf.max_controllers",
							"Maximum number of controllers known at once.",
							"A controller is known from its first heartbeat or request "
							"until the server restarts or its slot is reused.",
							&sync_max_controllers,
							1024,
							16,
							1000000,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);
}

/*
 * Keyed holds: the database they live in, and what keeps them current
 * (controllers' heartbeats, the background worker).
 */
static void
sync_define_keyed_gucs(void)
{
	DefineCustomStringVariable("syncwf.database",
							   "Database whose sync_state and sync_controller tables hold keyed holds.",
							   "Keyed holds (sync_request and friends) work only in this database; "
							   "the background worker connects to it.",
							   &sync_database,
							   "postgres",
							   PGC_POSTMASTER,
							   0,
							   NULL, NULL, NULL);

	DefineCustomIntVariable("syncwf.inactive_controller_timeout",
							"Time without a heartbeat after which a controller is inactive.",
							"Pending requests of an inactive controller are passed over in "
							"their queues until it heartbeats again.",
							&sync_inactive_controller_timeout,
							300,
							1,
							INT_MAX / 1000,
							PGC_SIGHUP,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("syncwf.enable_worker",
							 "Whether the syncwf background worker expires leases, tracks controllers and announces grants.",
							 "Turn it off only if sync_reconcile() runs regularly instead (for example from pg_cron).",
							 &sync_worker_enabled,
							 true,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);
}

/*
 * How a freed slot is handed on: who writes a keyed hand-off, and how far
 * best-effort queueing may bend the queue order.
 */
static void
sync_define_grant_gucs(void)
{
	DefineCustomBoolVariable("syncwf.handoff_in_transaction",
							 "Whether a transaction that releases keyed holds writes and announces the grants of the waiters it hands their slots to.",
							 "Off leaves those grants to the background worker (or sync_reconcile()), a moment after the release commits.",
							 &sync_handoff_in_transaction,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("syncwf.max_passes",
							"How many grants to requests behind it a waiter that cannot be granted yet lets pass, on a semaphore with queueing = 'best_effort', before strict order resumes for it.",
							"0 makes best-effort queueing strict. Changed with a reload.",
							&sync_max_passes,
							10,
							0, 1000000,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);
}

/* The per-lock statistics of the view sync_lock_stats. */
static void
sync_define_stats_gucs(void)
{
	DefineCustomBoolVariable("syncwf.track_stats",
							 "Whether syncwf counts grants, waits and holds per lock for the view sync_lock_stats.",
							 "Off stops counting; the rows counted so far stay.",
							 &sync_track_stats,
							 true,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("syncwf.stats_max_locks",
							"Maximum number of locks with a row of their own in sync_lock_stats.",
							"Locks beyond it are counted in their namespace's row. "
							"Each row costs about 1.7 kB of shared memory.",
							&sync_stats_max_locks,
							1000,
							0, 1000000,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);
}

/*
 * Define every parameter, and reserve the prefix so that a misspelt
 * syncwf.* setting is reported.  Called once, from _PG_init().
 */
void
sync_define_gucs(void)
{
	sync_define_size_gucs();
	sync_define_keyed_gucs();
	sync_define_grant_gucs();
	sync_define_stats_gucs();

	MarkGUCPrefixReserved("syncwf");
}

/* Is this the database named by syncwf.database? */
bool
sync_keyed_database(void)
{
	static Oid	checked_db = InvalidOid;
	static bool is_keyed_db = false;

	if (checked_db != MyDatabaseId)
	{
		char	   *name = get_database_name(MyDatabaseId);

		is_keyed_db = (name != NULL && sync_database != NULL &&
					   strcmp(name, sync_database) == 0);
		checked_db = MyDatabaseId;
	}
	return is_keyed_db;
}
