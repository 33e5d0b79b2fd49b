/*-------------------------------------------------------------------------
 *
 * launch_spi.c
 *		The rarer statements on the launch-plan tables (sync_launch_plan,
 *		sync_execution, sync_state): registering a plan version,
 *		reconciliation's reads and row locks, the victim of a REPLACE.  The
 *		hot path (executions, policies, events) is launch_heap.c's.
 *		Table I/O only, with no knowledge of shared memory; launch_policy.c
 *		decides what to run.
 *
 * Statements run as the tables' owner (owner_statements.c), prepared once per
 * sync_state table, schema-qualified and with OPERATOR(pg_catalog.=), so
 * that nothing depends on the caller's search_path; a plan is registered
 * with the caller's own privileges.  Their rows come back as strings
 * (sync_exec_owned) and leave this file typed: each statement's columns are
 * read here, beside its text, and nowhere else (a SyncLaunchRow for
 * reconciliation's rows).
 *
 * Backend-local state only.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type_d.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "launch/launch_internal.h"

/*
 * The statements; %1$s is the extension's schema.  Those that look for live
 * executions say finished_at IS NULL, the predicate of the index
 * sync_execution_live (set exactly when the phase is final, from version
 * 1.4 on; under 1.3's SQL objects it is a filter that changes nothing for
 * rows syncwf wrote).
 */
static SyncOwnedPlan plan_tracked = {
	/* does any version of the plan have a policy? */
	"SELECT 1 FROM %1$s.sync_launch_plan WHERE project OPERATOR(pg_catalog.=) $1 "
	"AND domain OPERATOR(pg_catalog.=) $2 AND name OPERATOR(pg_catalog.=) $3 "
	"AND max_concurrency IS NOT NULL LIMIT 1",
	3, {TEXTOID, TEXTOID, TEXTOID}
};
static SyncOwnedPlan oldest_active = {
	"SELECT e.execution_id FROM %1$s.sync_execution e "
	"WHERE e.project OPERATOR(pg_catalog.=) $1 AND e.domain OPERATOR(pg_catalog.=) $2 "
	"AND e.name OPERATOR(pg_catalog.=) $3 "
	"AND e.finished_at IS NULL AND e.phase IN ('QUEUED', 'RUNNING', 'SUCCEEDING', 'FAILING') "
	"AND EXISTS (SELECT 1 FROM %1$s.sync_state s WHERE s.name OPERATOR(pg_catalog.=) $4 "
	"AND s.workflowkey OPERATOR(pg_catalog.=) e.execution_id AND s.held) "
	"ORDER BY e.created_at, e.execution_id LIMIT 1 FOR UPDATE OF e",
	4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID}
};
/*
 * The columns of to_reconcile, in the order it returns them;
 * launch_row_from() reads them into a SyncLaunchRow.
 */
enum
{
	LR_ID,						/* execution_id, or the slot's holder */
	LR_PROJECT,					/* NULL if the execution's row is gone, */
	LR_DOMAIN,					/* as are domain, name and version */
	LR_NAME,
	LR_VERSION,
	LR_PHASE,
	LR_MAX_CONCURRENCY,			/* the version's; NULL: no policy */
	LR_HELD,					/* the sync_state row's; NULL: no row */
	LR_ADMIT_LIMIT,				/* the sync_state row's */
	LR_TIMED_OUT,				/* created_at + max_pending has passed */
	LR_MAX_PENDING,				/* max_pending in seconds (float8) */
	LR_LOCK,					/* the plan's semaphore */
	LR_TRACKED					/* any version of the plan has a policy */
};

/*
 * Reconciliation: executions whose slot is not what their phase says.
 * Deadlines (created_at + max_pending) are computed here and in
 * next_deadline in seconds since the epoch, as numeric, which no value an
 * administrator may write into the tables can overflow (a timestamptz sum
 * past the end of time would fail the whole round, every round); a month
 * of max_pending counts as 30 days, as everywhere else in syncwf.
 */
static SyncOwnedPlan to_reconcile = {
	"SELECT e.execution_id, e.project, e.domain, e.name, e.version, e.phase, "
	"p.max_concurrency, s.held, s.admit_limit, "
	"extract(epoch FROM e.created_at) OPERATOR(pg_catalog.+) extract(epoch FROM p.max_pending) "
	"OPERATOR(pg_catalog.<=) extract(epoch FROM pg_catalog.clock_timestamp()), "
	"extract(epoch FROM p.max_pending)::pg_catalog.float8, "
	"'sem/launchplan/' OPERATOR(pg_catalog.||) e.project OPERATOR(pg_catalog.||) '/' "
	"OPERATOR(pg_catalog.||) e.domain OPERATOR(pg_catalog.||) '/' OPERATOR(pg_catalog.||) e.name, "
	/* does any version of the plan have a policy (then every execution counts)? */
	"EXISTS (SELECT 1 FROM %1$s.sync_launch_plan q WHERE q.project OPERATOR(pg_catalog.=) e.project "
	"  AND q.domain OPERATOR(pg_catalog.=) e.domain AND q.name OPERATOR(pg_catalog.=) e.name "
	"  AND q.max_concurrency IS NOT NULL) "
	"FROM %1$s.sync_execution e "
	"LEFT JOIN %1$s.sync_launch_plan p USING (project, domain, name, version) "
	"LEFT JOIN %1$s.sync_state s ON s.name OPERATOR(pg_catalog.=) "
	"  ('sem/launchplan/' OPERATOR(pg_catalog.||) e.project OPERATOR(pg_catalog.||) '/' "
	"   OPERATOR(pg_catalog.||) e.domain OPERATOR(pg_catalog.||) '/' OPERATOR(pg_catalog.||) e.name) "
	"  AND s.workflowkey OPERATOR(pg_catalog.=) e.execution_id "
	"WHERE e.finished_at IS NULL "
	"AND e.phase IN ('PENDING', 'QUEUED', 'RUNNING', 'SUCCEEDING', 'FAILING', 'ABORTING') "
	"UNION ALL "
	/* slots of terminal executions, and of executions whose row was deleted */
	"SELECT s.workflowkey, e.project, e.domain, e.name, e.version, "
	"COALESCE(e.phase, 'ABORTED'), NULL, s.held, s.admit_limit, false, NULL, s.name, false "
	"FROM %1$s.sync_state s LEFT JOIN %1$s.sync_execution e "
	"  ON e.execution_id OPERATOR(pg_catalog.=) s.workflowkey "
	"WHERE s.name OPERATOR(pg_catalog.~~) 'sem/launchplan/%%' "
	"AND (e.execution_id IS NULL OR e.phase IN ('SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED_OUT'))",
	0, {InvalidOid}
};
static SyncOwnedPlan lock_if_free = {
	/*
	 * Reconciliation never waits for an execution a transaction is changing,
	 * and acts only if its phase is still the one it read: another round
	 * (the worker's, or a sync_reconcile()) that acted on it and committed
	 * after this round's read changed the phase.
	 */
	"SELECT 1 FROM %1$s.sync_execution WHERE execution_id OPERATOR(pg_catalog.=) $1 "
	"AND phase OPERATOR(pg_catalog.=) $2 FOR UPDATE SKIP LOCKED",
	2, {TEXTOID, TEXTOID}
};
static SyncOwnedPlan next_deadline = {
	/* past the end of time (1e12 s is the year 33658): never; before 1970: now */
	"SELECT pg_catalog.to_timestamp(GREATEST(LEAST(d, 1e12), 0)::pg_catalog.float8) "
	"FROM (SELECT min(extract(epoch FROM e.created_at) OPERATOR(pg_catalog.+) extract(epoch FROM p.max_pending)) AS d "
	"FROM %1$s.sync_execution e JOIN %1$s.sync_launch_plan p USING (project, domain, name, version) "
	"WHERE e.finished_at IS NULL AND e.phase OPERATOR(pg_catalog.=) 'PENDING' "
	"AND p.max_pending IS NOT NULL) m "
	"WHERE d IS NOT NULL",
	0, {InvalidOid}
};

/* A row of statement 'plan' with up to four text arguments (NULL: none). */
static List *
sync_launch_query(SyncOwnedPlan *plan, const char *a1, const char *a2,
				  const char *a3, const char *a4)
{
	const char *args[4] = {a1, a2, a3, a4};
	Datum		values[4];
	List	   *rows;

	for (int i = 0; i < plan->nargs; i++)
		values[i] = CStringGetTextDatum(args[i]);
	(void) sync_exec_owned(plan, values, NULL, &rows);
	return rows;
}

/* Does any version of the plan have a policy? */
bool
sync_launch_tracked(const char *project, const char *domain, const char *name)
{
	return sync_launch_query(&plan_tracked, project, domain, name, NULL) != NIL;
}

/*
 * The oldest execution of the plan that holds a slot of semaphore 'lock',
 * its row locked: its id, or NULL if there is none.
 */
char *
sync_launch_oldest_active(const char *project, const char *domain,
						  const char *name, const char *lock)
{
	List	   *rows = sync_launch_query(&oldest_active, project, domain, name, lock);

	return rows != NIL ? ((char **) linitial(rows))[0] : NULL;
}

/* A boolean column as SPI prints it: NULL and false are both false. */
static bool
launch_bool(const char *value)
{
	return value != NULL && value[0] == 't';
}

/*
 * A row of to_reconcile, its columns (strings, NULL for SQL NULL) in the
 * order of LR_*, as a SyncLaunchRow.  The integer columns are integer in
 * every version of the tables, so they always parse.
 */
static SyncLaunchRow *
launch_row_from(char **cols)
{
	SyncLaunchRow *row = palloc0(sizeof(SyncLaunchRow));

	row->execution_id = cols[LR_ID];
	row->project = cols[LR_PROJECT];
	row->domain = cols[LR_DOMAIN];
	row->name = cols[LR_NAME];
	row->version = cols[LR_VERSION];
	/* to_reconcile returns only phases of the list, as the list spells them */
	row->phase = sync_phase_of(cols[LR_PHASE], false);
	row->has_policy = (cols[LR_MAX_CONCURRENCY] != NULL);
	if (row->has_policy)
		row->max_concurrency = pg_strtoint32(cols[LR_MAX_CONCURRENCY]);
	row->has_entry = (cols[LR_HELD] != NULL);
	row->held = launch_bool(cols[LR_HELD]);
	row->has_admit_limit = (cols[LR_ADMIT_LIMIT] != NULL);
	if (row->has_admit_limit)
		row->admit_limit = pg_strtoint32(cols[LR_ADMIT_LIMIT]);
	row->timed_out = launch_bool(cols[LR_TIMED_OUT]);
	row->max_pending_secs = cols[LR_MAX_PENDING];
	row->lock = cols[LR_LOCK];
	row->tracked = launch_bool(cols[LR_TRACKED]);
	return row;
}

/*
 * Executions whose slot may not be what their phase says (see
 * launch_policy.c), as a list of SyncLaunchRow.
 */
List *
sync_launch_to_reconcile(void)
{
	List	   *rows;
	List	   *result = NIL;
	ListCell   *lc;

	(void) sync_exec_owned(&to_reconcile, NULL, NULL, &rows);
	foreach(lc, rows)
		result = lappend(result, launch_row_from((char **) lfirst(lc)));
	return result;
}

/*
 * Lock execution 'id' if it is still in 'phase', without waiting; false if
 * a transaction is changing it or its phase moved on.
 */
bool
sync_launch_lock_if_free(const char *id, const char *phase)
{
	return sync_launch_query(&lock_if_free, id, phase, NULL, NULL) != NIL;
}

/*
 * The next max_pending time-out of a pending execution, DT_NOEND if there
 * is none.  The statement prints it as text; it is read back in the same
 * session, so with the same DateStyle and TimeZone.
 */
TimestampTz
sync_launch_next_deadline(void)
{
	List	   *rows;
	char	   *deadline;

	(void) sync_exec_owned(&next_deadline, NULL, NULL, &rows);
	deadline = rows != NIL ? ((char **) linitial(rows))[0] : NULL;
	if (deadline == NULL)
		return DT_NOEND;
	return DatumGetTimestampTz(DirectFunctionCall3(timestamptz_in,
												   CStringGetDatum(deadline),
												   ObjectIdGetDatum(InvalidOid),
												   Int32GetDatum(-1)));
}

/*
 * Register (or update) a plan version, with the caller's privileges: plans
 * are rows that their owners may write (the extension's owner and
 * syncwf_admin).  values: project, domain, name, version, max_concurrency,
 * behavior, scheduling, max_pending; nulls as for SPI.
 */
void
sync_launch_register_row(Datum *values, const char *nulls)
{
	char	   *sql;
	int			rc;

	sql = psprintf("INSERT INTO %s.sync_launch_plan AS p (project, domain, name, version, "
				   "max_concurrency, behavior, scheduling, max_pending) "
				   "VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
				   "ON CONFLICT (project, domain, name, version) DO UPDATE SET "
				   "max_concurrency = excluded.max_concurrency, behavior = excluded.behavior, "
				   "scheduling = excluded.scheduling, max_pending = excluded.max_pending, "
				   "updated_at = pg_catalog.now()",
				   quote_identifier(get_namespace_name(sync_tables(false)->schema)));
	{
		Oid			types[8] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT4OID, TEXTOID,
		TEXTOID, INTERVALOID};
		int			nestlevel;

		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		nestlevel = sync_search_path_restrict();
		rc = SPI_execute_with_args(sql, 8, types, values, nulls, false, 0);
		sync_search_path_restore(nestlevel);
		if (rc != SPI_OK_INSERT)
			elog(ERROR, "could not register launch plan: %s", SPI_result_code_string(rc));
		SPI_finish();
	}
}
