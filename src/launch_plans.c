/*-------------------------------------------------------------------------
 *
 * launch_plans.c
 *		Launch-plan concurrency policies (Flyte's WAIT / ABORT / REPLACE /
 *		SKIP) over versioned launch plans and their executions, built on the
 *		keyed holds of keyed.c.
 *
 * Each launch plan name (project, domain, name) is the semaphore
 *		sem/launchplan/<project>/<domain>/<name>
 * whose keyed holders are execution ids, so its slots show in sync_locks,
 * sync_holders and sync_waiters beside every other lock.  The semaphore
 * needs no sync_limit row (a row 'launchplan/<project>/<domain>/<name>'
 * would set an overall cap); each execution's request carries the limit of
 * the version it launches (SyncEntry.admit_limit).  So the count is
 * version-agnostic (every holder of the plan's semaphore) and the
 * enforcement version-specific (the request's own limit), as Flyte's page
 * describes.  A plan registered in a transaction can be launched in it.
 *
 * Phases, by rank (a phase never goes to a lower rank; terminal is final):
 *	0 PENDING (waiting for a slot; holds none)
 *	1 QUEUED, 2 RUNNING, 3 SUCCEEDING / FAILING / ABORTING (hold a slot)
 *	4 SUCCEEDED / FAILED / ABORTED / TIMED_OUT (terminal; slot released)
 * An execution moved to ABORTING by a REPLACE has lost its slot already.
 *
 * A pending execution is promoted to QUEUED when its keyed request is
 * granted: state_table.c calls sync_launch_promoted() when it writes the
 * grant (the worker, sync_reconcile(), or a repeated request), in the same
 * transaction as the row and the NOTIFY.
 *
 * Events (skip, abort, replace, promotion, time-out) are rows of
 * sync_launch_event and NOTIFYs on channel "syncwf_launch" (JSON).
 *
 *-------------------------------------------------------------------------
 */
#include "syncwf.h"

#include "access/xact.h"
#include "catalog/pg_type_d.h"
#include "commands/async.h"
#include "commands/trigger.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/value.h"
#include "utils/builtins.h"
#include "utils/formatting.h"
#include "utils/lsyscache.h"
#include "utils/json.h"
#include "utils/timestamp.h"

#define SYNC_LAUNCH_CHANNEL "syncwf_launch"

typedef enum LaunchPhase
{
	PH_PENDING,
	PH_QUEUED,
	PH_RUNNING,
	PH_SUCCEEDING,
	PH_FAILING,
	PH_ABORTING,
	PH_SUCCEEDED,
	PH_FAILED,
	PH_ABORTED,
	PH_TIMED_OUT,
	PH_COUNT
} LaunchPhase;

static const char *const phase_names[PH_COUNT] = {
	"PENDING", "QUEUED", "RUNNING", "SUCCEEDING", "FAILING", "ABORTING",
	"SUCCEEDED", "FAILED", "ABORTED", "TIMED_OUT"
};
static const int phase_rank[PH_COUNT] = {0, 1, 2, 3, 3, 3, 4, 4, 4, 4};

#define PHASE_TERMINAL(p)	(phase_rank[p] == 4)

/* The statements; %1$s is the extension's schema. */
static SyncOwnedPlan get_execution = {
	"SELECT project, domain, name, version, phase, reason "
	"FROM %1$s.sync_execution WHERE execution_id OPERATOR(pg_catalog.=) $1",
	1, {TEXTOID}
};
static SyncOwnedPlan lock_execution = {
	"SELECT project, domain, name, version, phase, owner::pg_catalog.oid "
	"FROM %1$s.sync_execution WHERE execution_id OPERATOR(pg_catalog.=) $1 FOR UPDATE",
	1, {TEXTOID}
};
static SyncOwnedPlan get_policy = {
	"SELECT max_concurrency, behavior, scheduling, "
	"(extract(epoch FROM max_pending) * 1000000)::pg_catalog.int8 "
	"FROM %1$s.sync_launch_plan WHERE project OPERATOR(pg_catalog.=) $1 "
	"AND domain OPERATOR(pg_catalog.=) $2 AND name OPERATOR(pg_catalog.=) $3 "
	"AND version OPERATOR(pg_catalog.=) $4",
	4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID}
};
static SyncOwnedPlan plan_tracked = {
	/* does any version of the plan have a policy? */
	"SELECT 1 FROM %1$s.sync_launch_plan WHERE project OPERATOR(pg_catalog.=) $1 "
	"AND domain OPERATOR(pg_catalog.=) $2 AND name OPERATOR(pg_catalog.=) $3 "
	"AND max_concurrency IS NOT NULL LIMIT 1",
	3, {TEXTOID, TEXTOID, TEXTOID}
};
static SyncOwnedPlan insert_execution = {
	"INSERT INTO %1$s.sync_execution (execution_id, project, domain, name, version, "
	"phase, reason, priority, created_at, queued_at, finished_at, owner) "
	"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) "
	"ON CONFLICT (execution_id) DO NOTHING",
	12, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT4OID,
	TIMESTAMPTZOID, TIMESTAMPTZOID, TIMESTAMPTZOID, REGROLEOID}
};
static SyncOwnedPlan set_phase = {
	"UPDATE %1$s.sync_execution SET phase = $2, "
	"reason = CASE WHEN $5 THEN $3 ELSE reason END, "
	"queued_at = CASE WHEN $2 OPERATOR(pg_catalog.=) 'QUEUED' THEN pg_catalog.clock_timestamp() ELSE queued_at END, "
	"started_at = CASE WHEN $2 OPERATOR(pg_catalog.=) 'RUNNING' AND started_at IS NULL "
	"THEN pg_catalog.clock_timestamp() ELSE started_at END, "
	"finished_at = CASE WHEN $4 THEN pg_catalog.clock_timestamp() ELSE finished_at END "
	"WHERE execution_id OPERATOR(pg_catalog.=) $1",
	5, {TEXTOID, TEXTOID, TEXTOID, BOOLOID, BOOLOID}
};
static SyncOwnedPlan promote_execution = {
	"UPDATE %1$s.sync_execution SET phase = 'QUEUED', reason = NULL, "
	"queued_at = pg_catalog.clock_timestamp() "
	"WHERE execution_id OPERATOR(pg_catalog.=) $1 AND phase OPERATOR(pg_catalog.=) 'PENDING' "
	"RETURNING project, domain, name, version",
	1, {TEXTOID}
};
static SyncOwnedPlan oldest_active = {
	"SELECT e.execution_id FROM %1$s.sync_execution e "
	"WHERE e.project OPERATOR(pg_catalog.=) $1 AND e.domain OPERATOR(pg_catalog.=) $2 "
	"AND e.name OPERATOR(pg_catalog.=) $3 "
	"AND e.phase IN ('QUEUED', 'RUNNING', 'SUCCEEDING', 'FAILING') "
	"AND EXISTS (SELECT 1 FROM %1$s.sync_state s WHERE s.name OPERATOR(pg_catalog.=) $4 "
	"AND s.workflowkey OPERATOR(pg_catalog.=) e.execution_id AND s.held) "
	"ORDER BY e.created_at, e.execution_id LIMIT 1 FOR UPDATE OF e",
	4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID}
};
static SyncOwnedPlan insert_event = {
	"INSERT INTO %1$s.sync_launch_event (event, project, domain, name, version, "
	"execution_id, replaced_execution_id, reason) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
	8, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID}
};
/* reconciliation: executions whose slot is not what their phase says */
static SyncOwnedPlan to_reconcile = {
	"SELECT e.execution_id, e.project, e.domain, e.name, e.version, e.phase, "
	"p.max_concurrency, s.held, s.admit_limit, "
	"(e.created_at OPERATOR(pg_catalog.+) p.max_pending) OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp(), "
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
	"WHERE e.phase IN ('PENDING', 'QUEUED', 'RUNNING', 'SUCCEEDING', 'FAILING', 'ABORTING') "
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
	"SELECT min(e.created_at OPERATOR(pg_catalog.+) p.max_pending) "
	"FROM %1$s.sync_execution e JOIN %1$s.sync_launch_plan p USING (project, domain, name, version) "
	"WHERE e.phase OPERATOR(pg_catalog.=) 'PENDING' AND p.max_pending IS NOT NULL",
	0, {InvalidOid}
};

/* Set while this backend's API updates sync_execution (see the trigger). */
static bool launch_api_writing = false;

/*-------------------------------------------------------------------------
 * Arguments and small helpers
 *-------------------------------------------------------------------------
 */

static char *
sync_ident_arg(FunctionCallInfo fcinfo, int argno, const char *what, bool slash_ok)
{
	char	   *v;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", what)));
	v = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	if (v[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", what)));
	if (strlen(v) > (slash_ok ? SYNC_KEY_MAXLEN : 63))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is too long", what),
				 errdetail("It is %zu bytes; at most %d are allowed.", strlen(v),
						   slash_ok ? SYNC_KEY_MAXLEN : 63)));
	for (const char *p = v; *p; p++)
		if ((unsigned char) *p < 0x20 || *p == 0x7f || (!slash_ok && *p == '/'))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must not contain %s", what,
							*p == '/' ? "\"/\"" : "control characters")));
	return v;
}

static LaunchPhase
sync_phase_of(const char *name, bool must)
{
	for (int i = 0; i < PH_COUNT; i++)
		if (pg_strcasecmp(name, phase_names[i]) == 0)
			return (LaunchPhase) i;
	if (must)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown execution phase \"%s\"", name),
				 errhint("Phases are PENDING, QUEUED, RUNNING, SUCCEEDING, SUCCEEDED, FAILING, FAILED, ABORTING, ABORTED and TIMED_OUT.")));
	return PH_COUNT;
}

static char *
sync_plan_lock(const char *project, const char *domain, const char *name)
{
	return psprintf("%s%s/%s/%s", SYNC_LAUNCH_LOCK_PREFIX, project, domain, name);
}

static void
sync_launch_notify(const char *event, const char *execution_id,
				   const char *project, const char *domain, const char *name,
				   const char *version, const char *reason,
				   const char *replaced)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"event\": ");
	escape_json(&buf, event);
	appendStringInfoString(&buf, ", \"execution_id\": ");
	escape_json(&buf, execution_id);
	appendStringInfoString(&buf, ", \"project\": ");
	escape_json(&buf, project);
	appendStringInfoString(&buf, ", \"domain\": ");
	escape_json(&buf, domain);
	appendStringInfoString(&buf, ", \"name\": ");
	escape_json(&buf, name);
	appendStringInfoString(&buf, ", \"version\": ");
	escape_json(&buf, version);
	if (reason)
	{
		appendStringInfoString(&buf, ", \"reason\": ");
		escape_json(&buf, reason);
	}
	if (replaced)
	{
		appendStringInfoString(&buf, ", \"replaced_execution_id\": ");
		escape_json(&buf, replaced);
	}
	appendStringInfoChar(&buf, '}');
	Async_Notify(SYNC_LAUNCH_CHANNEL, buf.data);
	pfree(buf.data);
}

/* Record an event (a row and a NOTIFY, both at commit). */
static void
sync_launch_event(const char *event, const char *execution_id,
				  const char *project, const char *domain, const char *name,
				  const char *version, const char *reason, const char *replaced)
{
	Datum		values[8];
	char		nulls[8];

	memset(nulls, ' ', sizeof(nulls));
	values[0] = CStringGetTextDatum(event);
	values[1] = CStringGetTextDatum(project);
	values[2] = CStringGetTextDatum(domain);
	values[3] = CStringGetTextDatum(name);
	values[4] = CStringGetTextDatum(version);
	values[5] = CStringGetTextDatum(execution_id);
	if (replaced)
		values[6] = CStringGetTextDatum(replaced);
	else
		nulls[6] = 'n';
	if (reason)
		values[7] = CStringGetTextDatum(reason);
	else
		nulls[7] = 'n';
	(void) sync_exec_owned(&insert_event, values, nulls, NULL);
	{
		char	   *lower = asc_tolower(event, strlen(event));

		sync_launch_notify(lower, execution_id, project, domain, name,
						   version, reason, replaced);
	}
}

/*
 * Move an execution to 'phase'.  set_reason: replace its reason with
 * 'reason' (NULL clears it); otherwise keep the reason it has.
 */
static void
sync_set_phase(const char *execution_id, LaunchPhase phase, bool set_reason,
			   const char *reason)
{
	Datum		values[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};

	values[0] = CStringGetTextDatum(execution_id);
	values[1] = CStringGetTextDatum(phase_names[phase]);
	if (reason)
		values[2] = CStringGetTextDatum(reason);
	else
		nulls[2] = 'n';
	values[3] = BoolGetDatum(PHASE_TERMINAL(phase));
	values[4] = BoolGetDatum(set_reason);
	launch_api_writing = true;
	PG_TRY();
	{
		(void) sync_exec_owned(&set_phase, values, nulls, NULL);
	}
	PG_FINALLY();
	{
		launch_api_writing = false;
	}
	PG_END_TRY();
}

static bool
sync_insert_execution(const char *id, const char *project, const char *domain,
					  const char *name, const char *version, LaunchPhase phase,
					  const char *reason, int32 priority, TimestampTz created)
{
	Datum		values[12];
	char		nulls[12];

	memset(nulls, ' ', sizeof(nulls));
	values[0] = CStringGetTextDatum(id);
	values[1] = CStringGetTextDatum(project);
	values[2] = CStringGetTextDatum(domain);
	values[3] = CStringGetTextDatum(name);
	values[4] = CStringGetTextDatum(version);
	values[5] = CStringGetTextDatum(phase_names[phase]);
	if (reason)
		values[6] = CStringGetTextDatum(reason);
	else
		nulls[6] = 'n';
	values[7] = Int32GetDatum(priority);
	values[8] = TimestampTzGetDatum(created);
	values[9] = TimestampTzGetDatum(created);
	if (phase != PH_QUEUED)
		nulls[9] = 'n';
	values[10] = TimestampTzGetDatum(created);
	if (!PHASE_TERMINAL(phase))
		nulls[10] = 'n';
	values[11] = ObjectIdGetDatum(GetUserId());
	/* false: another transaction created this id first (and committed) */
	return sync_exec_owned(&insert_execution, values, nulls, NULL) > 0;
}

/* Request the plan's semaphore for an execution; see keyed.c for modes. */
static SyncKeyedResult
sync_take_slot(const char *lock, const char *execution_id, SyncKeyedMode mode,
			   int32 limit, int32 priority, TimestampTz order_at)
{
	SyncKeyedResult result;
	char	   *names[1];

	names[0] = (char *) lock;
	memset(&result, 0, sizeof(result));
	sync_keyed_request(names, 1, execution_id, mode, limit, true, priority,
					   NULL, 0, true, order_at, &result);
	return result;
}

static void
sync_launch_prepare(void)
{
	sync_require_shmem();
	sync_backend_setup();
	sync_keyed_require_database();
	sync_keyed_require_writable();
	sync_keyed_ensure_loaded();
}

/*-------------------------------------------------------------------------
 * sync_launch_plan_register
 *-------------------------------------------------------------------------
 */

PG_FUNCTION_INFO_V1(sync_launch_plan_register);
Datum
sync_launch_plan_register(PG_FUNCTION_ARGS)
{
	char	   *project = sync_ident_arg(fcinfo, 0, "project", false);
	char	   *domain = sync_ident_arg(fcinfo, 1, "domain", false);
	char	   *name = sync_ident_arg(fcinfo, 2, "name", false);
	char	   *version = sync_ident_arg(fcinfo, 3, "version", true);
	bool		has_max = !PG_ARGISNULL(4);
	int32		max = has_max ? PG_GETARG_INT32(4) : 0;
	char	   *behavior = PG_ARGISNULL(5) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(5));
	char	   *scheduling = PG_ARGISNULL(6) ? pstrdup("FIFO") : text_to_cstring(PG_GETARG_TEXT_PP(6));
	Datum		values[8];
	char		nulls[8];
	char	   *sql;
	int			rc;

	if (has_max && max < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_concurrency must not be negative"),
				 errhint("Pass NULL for a version without a concurrency policy.")));
	if (behavior)
	{
		behavior = asc_toupper(behavior, strlen(behavior));
		if (strcmp(behavior, "WAIT") != 0 && strcmp(behavior, "ABORT") != 0 &&
			strcmp(behavior, "REPLACE") != 0 && strcmp(behavior, "SKIP") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown concurrency behavior \"%s\"", behavior),
					 errhint("Use WAIT, ABORT, REPLACE or SKIP.")));
		if (!has_max)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a behavior needs a max_concurrency"),
					 errhint("Pass max_concurrency too, or neither for a version without a policy.")));
	}
	else if (has_max)
		behavior = "SKIP";		/* Flyte's default */
	scheduling = asc_toupper(scheduling, strlen(scheduling));
	if (strcmp(scheduling, "FIFO") != 0 && strcmp(scheduling, "LIFO") != 0 &&
		strcmp(scheduling, "PRIORITY") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown scheduling order \"%s\"", scheduling),
				 errhint("Use FIFO, LIFO or PRIORITY.")));
	if (!PG_ARGISNULL(7))
	{
		int64		us = sync_interval_us(PG_GETARG_INTERVAL_P(7));

		if (us <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("max_pending must be positive"),
					 errhint("Pass NULL for no limit on the time an execution may wait.")));
	}

	sync_require_shmem();
	sync_keyed_require_database();

	/*
	 * A plain upsert, with the caller's privileges: plans are rows that
	 * their owners may write (the extension's owner and syncwf_admin).
	 */
	memset(nulls, ' ', sizeof(nulls));
	values[0] = CStringGetTextDatum(project);
	values[1] = CStringGetTextDatum(domain);
	values[2] = CStringGetTextDatum(name);
	values[3] = CStringGetTextDatum(version);
	values[4] = Int32GetDatum(max);
	if (!has_max)
		nulls[4] = 'n';
	values[5] = behavior ? CStringGetTextDatum(behavior) : (Datum) 0;
	if (!behavior)
		nulls[5] = 'n';
	values[6] = CStringGetTextDatum(scheduling);
	values[7] = PG_ARGISNULL(7) ? (Datum) 0 : PG_GETARG_DATUM(7);
	if (PG_ARGISNULL(7))
		nulls[7] = 'n';
	sql = psprintf("INSERT INTO %s.sync_launch_plan AS p (project, domain, name, version, "
				   "max_concurrency, behavior, scheduling, max_pending) "
				   "VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
				   "ON CONFLICT (project, domain, name, version) DO UPDATE SET "
				   "max_concurrency = excluded.max_concurrency, behavior = excluded.behavior, "
				   "scheduling = excluded.scheduling, max_pending = excluded.max_pending, "
				   "updated_at = pg_catalog.now()",
				   quote_identifier(get_namespace_name(get_func_namespace(fcinfo->flinfo->fn_oid))));
	{
		Oid			types[8] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT4OID, TEXTOID,
		TEXTOID, INTERVALOID};

		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		rc = SPI_execute_with_args(sql, 8, types, values, nulls, false, 0);
		if (rc != SPI_OK_INSERT)
			elog(ERROR, "could not register launch plan: %s", SPI_result_code_string(rc));
		SPI_finish();
	}
	PG_RETURN_VOID();
}

/*
 * Trigger on sync_launch_plan (AFTER INSERT OR UPDATE OR DELETE, per
 * statement): have the worker reconcile pending executions when this
 * commits (a version that lost its policy, a changed limit).
 */
PG_FUNCTION_INFO_V1(sync_launch_plan_changed);
Datum
sync_launch_plan_changed(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("sync_launch_plan_changed() can only be called as a trigger")));
	sync_require_shmem();
	sync_backend_setup();
	sync_keyed_wake_at_commit();
	return PointerGetDatum(NULL);
}

/*
 * Trigger on sync_execution (AFTER UPDATE OR DELETE, per statement): a change not
 * made by syncwf's own functions (another system moving phases) gets the
 * slots repaired by the worker when it commits.
 */
PG_FUNCTION_INFO_V1(sync_execution_changed);
Datum
sync_execution_changed(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("sync_execution_changed() can only be called as a trigger")));
	if (!launch_api_writing)
	{
		sync_require_shmem();
		sync_backend_setup();
		sync_keyed_wake_at_commit();
	}
	return PointerGetDatum(NULL);
}

/*-------------------------------------------------------------------------
 * sync_execution_create
 *-------------------------------------------------------------------------
 */

typedef struct CreateResult
{
	LaunchPhase phase;
	bool		skipped;
	char	   *reason;
	char	   *replaced;
} CreateResult;

/*
 * If execution 'id' exists, fill *res with its state and return true; an
 * id of another launch plan is an error.
 */
static bool
sync_existing_execution(const char *id, const char *project, const char *domain,
						const char *name, CreateResult *res)
{
	Datum		values[1];
	List	   *rows;
	char	  **row;

	values[0] = CStringGetTextDatum(id);
	(void) sync_exec_owned(&get_execution, values, NULL, &rows);
	if (rows == NIL)
		return false;
	row = (char **) linitial(rows);
	if (strcmp(row[0], project) != 0 || strcmp(row[1], domain) != 0 ||
		strcmp(row[2], name) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNIQUE_VIOLATION),
				 errmsg("execution \"%s\" already exists for launch plan %s/%s/%s",
						id, row[0], row[1], row[2]),
				 errhint("Execution ids are unique across launch plans; use a new id.")));
	memset(res, 0, sizeof(CreateResult));
	res->phase = sync_phase_of(row[4], false);
	res->reason = row[5];
	return true;
}

/*
 * Insert the execution; if a concurrent call created the same id first,
 * report that one instead (and record nothing).
 */
#define INSERT_OR_REPORT(phase_, reason_) \
	do { \
		if (!sync_insert_execution(id, project, domain, name, version, (phase_), \
								   (reason_), priority, now)) \
		{ \
			(void) sync_existing_execution(id, project, domain, name, &res); \
			return res; \
		} \
	} while (0)

static void
sync_limit_reached(bool raise, const char *reason)
{
	if (raise)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("%s", reason),
				 errhint("Retry later, or call sync_execution_create() without raise_on_limit to have the outcome recorded.")));
}

static CreateResult
sync_create_execution(const char *project, const char *domain, const char *name,
					  const char *version, const char *id, int32 priority,
					  bool raise)
{
	CreateResult res;
	List	   *rows;
	Datum		values[4];
	char	  **row;
	char	   *lock = sync_plan_lock(project, domain, name);
	TimestampTz now = GetCurrentTimestamp();
	int32		max;
	const char *behavior;
	const char *scheduling;
	int32		order_priority = 0;
	TimestampTz order_at = now;
	SyncKeyedResult slot;

	memset(&res, 0, sizeof(res));

	/* An existing execution: report it, change nothing. */
	if (sync_existing_execution(id, project, domain, name, &res))
		return res;

	/* The version's policy. */
	values[0] = CStringGetTextDatum(project);
	values[1] = CStringGetTextDatum(domain);
	values[2] = CStringGetTextDatum(name);
	values[3] = CStringGetTextDatum(version);
	(void) sync_exec_owned(&get_policy, values, NULL, &rows);
	if (rows == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("launch plan %s/%s/%s version \"%s\" is not registered",
						project, domain, name, version),
				 errhint("Register it first: SELECT sync_launch_plan_register('%s', '%s', '%s', '%s', ...);",
						 project, domain, name, version)));
	row = (char **) linitial(rows);

	if (row[0] == NULL)
	{
		/*
		 * No policy: QUEUED at once.  If other versions of the plan have a
		 * policy, it takes a slot all the same (never refused), so that it
		 * counts for them: counting is version-agnostic.
		 */
		if (sync_exec_owned(&plan_tracked, values, NULL, NULL) > 0)
			(void) sync_take_slot(lock, id, SYNC_KEYED_FORCE, -1, 0, now);
		INSERT_OR_REPORT(PH_QUEUED, NULL);
		res.phase = PH_QUEUED;
		return res;
	}
	max = pg_strtoint32(row[0]);
	behavior = row[1];
	scheduling = row[2];
	if (strcmp(scheduling, "PRIORITY") == 0)
		order_priority = priority;
	else if (strcmp(scheduling, "LIFO") == 0)
		order_at = -now;		/* newest first: the queue key is negated */

	slot = sync_take_slot(lock, id,
						  strcmp(behavior, "WAIT") == 0 ? SYNC_KEYED_QUEUE : SYNC_KEYED_TRY,
						  max, order_priority, order_at);
	if (slot.held)
	{
		INSERT_OR_REPORT(PH_QUEUED, NULL);
		res.phase = PH_QUEUED;
		return res;
	}
	if (!slot.refused)
	{
		/* WAIT: pending until a slot frees */
		res.phase = PH_PENDING;
		res.reason = psprintf("Waiting for a slot: concurrency limit (%d) reached for launch plan %s/%s/%s",
							  max, project, domain, name);
		INSERT_OR_REPORT(PH_PENDING, res.reason);
		/*
		 * Its max_pending deadline: the worker looks for deadlines when
		 * this commits (not before: it cannot see the row yet).
		 */
		if (row[3] != NULL)
			sync_keyed_wake_at_commit();
		return res;
	}

	res.reason = psprintf("Concurrency limit (%d) reached for launch plan %s/%s/%s",
						  max, project, domain, name);
	if (strcmp(behavior, "REPLACE") == 0)
	{
		values[0] = CStringGetTextDatum(project);
		values[1] = CStringGetTextDatum(domain);
		values[2] = CStringGetTextDatum(name);
		values[3] = CStringGetTextDatum(lock);
		(void) sync_exec_owned(&oldest_active, values, NULL, &rows);
		if (rows == NIL)
		{
			/*
			 * The execution it found was replaced by a concurrent call that
			 * committed while we waited for its row lock; that call's own
			 * execution is only visible to a new statement.
			 */
			(void) sync_exec_owned(&oldest_active, values, NULL, &rows);
		}
		if (rows != NIL)
		{
			char	   *victim = ((char **) linitial(rows))[0];
			char	   *why = psprintf("Replaced by execution %s: concurrency limit (%d) reached for launch plan %s/%s/%s",
									   id, max, project, domain, name);

			sync_set_phase(victim, PH_ABORTING, true, why);
			(void) sync_state_delete(lock, victim, "replaced");
			/* the slot it held is ours: taken over, not queued for */
			(void) sync_take_slot(lock, id, SYNC_KEYED_FORCE, max, order_priority, order_at);
			INSERT_OR_REPORT(PH_QUEUED, NULL);
			sync_launch_event("REPLACED", id, project, domain, name, version,
							  why, victim);
			res.phase = PH_QUEUED;
			res.reason = NULL;
			res.replaced = victim;
			return res;
		}
		/* nothing to replace (a limit of 0): refused like ABORT */
		res.reason = psprintf("%s; no running execution to replace", res.reason);
		behavior = "ABORT";
	}

	sync_limit_reached(raise, res.reason);
	if (strcmp(behavior, "ABORT") == 0)
	{
		INSERT_OR_REPORT(PH_FAILED, res.reason);
		sync_launch_event("ABORTED", id, project, domain, name, version,
						  res.reason, NULL);
		res.phase = PH_FAILED;
		return res;
	}
	/* SKIP: no execution, an event */
	sync_launch_event("SKIPPED", id, project, domain, name, version,
					  res.reason, NULL);
	res.skipped = true;
	return res;
}

PG_FUNCTION_INFO_V1(sync_execution_create);
Datum
sync_execution_create(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *project = sync_ident_arg(fcinfo, 0, "project", false);
	char	   *domain = sync_ident_arg(fcinfo, 1, "domain", false);
	char	   *name = sync_ident_arg(fcinfo, 2, "name", false);
	char	   *version = sync_ident_arg(fcinfo, 3, "version", true);
	char	   *id = sync_ident_arg(fcinfo, 4, "execution_id", true);
	int32		priority;
	bool		raise = (PG_NARGS() > 6 && !PG_ARGISNULL(6)) ? PG_GETARG_BOOL(6) : false;
	CreateResult res;
	Datum		out[3];
	bool		nulls[3] = {false, false, false};

	if (PG_ARGISNULL(5))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("priority must not be null"),
				 errhint("Omit the argument for the default priority 0.")));
	priority = PG_GETARG_INT32(5);

	InitMaterializedSRF(fcinfo, 0);
	sync_launch_prepare();
	res = sync_create_execution(project, domain, name, version, id, priority, raise);

	out[0] = CStringGetTextDatum(res.skipped ? "SKIPPED" : phase_names[res.phase]);
	out[1] = res.reason ? CStringGetTextDatum(res.reason) : (Datum) 0;
	nulls[1] = (res.reason == NULL);
	out[2] = res.replaced ? CStringGetTextDatum(res.replaced) : (Datum) 0;
	nulls[2] = (res.replaced == NULL);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, out, nulls);
	return (Datum) 0;
}

/*-------------------------------------------------------------------------
 * sync_execution_update
 *-------------------------------------------------------------------------
 */

/*
 * Give up an execution's slot (or its place in the queue), if it has one.
 * The caller checked that it may act on the execution.
 */
static void
sync_drop_slot(const char *lock, const char *id)
{
	SyncKeyedInfo info;

	if (sync_keyed_lookup(lock, id, &info))
		(void) sync_state_delete(lock, id, "released");
}

PG_FUNCTION_INFO_V1(sync_execution_update);
Datum
sync_execution_update(PG_FUNCTION_ARGS)
{
	char	   *id = sync_ident_arg(fcinfo, 0, "execution_id", true);
	char	   *want_name;
	LaunchPhase want;
	LaunchPhase cur;
	List	   *rows;
	char	  **row;
	Datum		values[1];

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("phase must not be null")));
	want_name = text_to_cstring(PG_GETARG_TEXT_PP(1));
	want = sync_phase_of(want_name, true);
	sync_launch_prepare();

	values[0] = CStringGetTextDatum(id);
	(void) sync_exec_owned(&lock_execution, values, NULL, &rows);
	if (rows == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("execution \"%s\" does not exist", id),
				 errhint("Create it with sync_execution_create().")));
	row = (char **) linitial(rows);
	cur = sync_phase_of(row[4], false);
	if (cur == PH_COUNT)
		cur = PH_QUEUED;		/* a phase written by hand: treat as queued */

	/* only the role that created it (a member, or an administrator) */
	if (row[5] != NULL)
		sync_check_owner((Oid) strtoul(row[5], NULL, 10),
						 sync_plan_lock(row[0], row[1], row[2]), id);

	if (want == cur)
		PG_RETURN_TEXT_P(cstring_to_text(phase_names[cur]));
	if (PHASE_TERMINAL(cur))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("execution \"%s\" is %s, which is final", id, phase_names[cur]),
				 errhint("A terminal phase never changes.")));
	if (phase_rank[want] <= phase_rank[cur])
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("execution \"%s\" cannot go from %s back to %s", id,
						phase_names[cur], phase_names[want]),
				 errhint("Phases only move forward: PENDING, QUEUED, RUNNING, then SUCCEEDING, FAILING or ABORTING, then a terminal phase.")));
	if (cur == PH_PENDING && !PHASE_TERMINAL(want))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("execution \"%s\" is waiting for a slot", id),
				 errdetail("A PENDING execution becomes QUEUED when its launch plan has a free slot."),
				 errhint("To give up waiting, move it to ABORTED.")));

	/* leaving PENDING, the reason it waited no longer applies */
	sync_set_phase(id, want, cur == PH_PENDING, NULL);
	if (PHASE_TERMINAL(want))
		sync_drop_slot(sync_plan_lock(row[0], row[1], row[2]), id);
	PG_RETURN_TEXT_P(cstring_to_text(phase_names[want]));
}

/*-------------------------------------------------------------------------
 * Promotion and reconciliation
 *-------------------------------------------------------------------------
 */

/*
 * The keyed grant of a pending execution has just been written (in this
 * transaction): it is QUEUED now.
 */
void
sync_launch_promoted(const char *execution_id)
{
	Datum		values[1];
	List	   *rows;

	values[0] = CStringGetTextDatum(execution_id);
	launch_api_writing = true;
	PG_TRY();
	{
		(void) sync_exec_owned(&promote_execution, values, NULL, &rows);
	}
	PG_FINALLY();
	{
		launch_api_writing = false;
	}
	PG_END_TRY();
	if (rows != NIL)
	{
		char	  **row = (char **) linitial(rows);

		sync_launch_event("PROMOTED", execution_id, row[0], row[1], row[2],
						  row[3], NULL, NULL);
	}
}

/*
 * Is there anything to do for this execution (a row of to_reconcile) in
 * sync_launch_reconcile(), given whether it has a keyed entry and whether
 * that entry holds a slot?
 */
static bool
sync_launch_needs_action(char **r, LaunchPhase phase, bool has_entry, bool held,
						 bool tracked)
{
	if (PHASE_TERMINAL(phase))
		return has_entry;
	if (phase == PH_PENDING)
		return (r[9] && r[9][0] == 't') || r[6] == NULL || !has_entry ||
			(!held && (r[8] == NULL || pg_strtoint32(r[8]) != pg_strtoint32(r[6])));
	return !held && phase != PH_ABORTING && tracked;
}

/*
 * One round of launch-plan maintenance (from sync_reconcile_round):
 *	- pending executions whose version lost its policy are QUEUED;
 *	- pending executions whose version's limit changed wait against the
 *	  new limit (a raised one grants at once);
 *	- pending executions older than max_pending are TIMED_OUT;
 *	- slots are repaired after direct updates of phases: a terminal
 *	  execution gives its slot back, an active one without a slot takes one.
 * Returns the number of changes; *next is the next time-out (DT_NOEND).
 */
int
sync_launch_reconcile(TimestampTz now, TimestampTz *next)
{
	List	   *rows;
	List	   *deadline;
	List	   *regrant = NIL;
	ListCell   *lc;
	int			n = 0;
	bool		busy = false;

	*next = DT_NOEND;
	if (!OidIsValid(sync_state_relid(true)))
		return 0;
	(void) sync_exec_owned(&to_reconcile, NULL, NULL, &rows);
	foreach(lc, rows)
	{
		char	  **r = (char **) lfirst(lc);
		char	   *id = r[0];
		LaunchPhase phase = sync_phase_of(r[5], false);
		char	   *lock = r[11];
		bool		has_entry = (r[7] != NULL);
		bool		held = has_entry && r[7][0] == 't';
		bool		tracked = (r[12] != NULL && r[12][0] == 't');

		if (phase == PH_COUNT)
			continue;
		if (!sync_launch_needs_action(r, phase, has_entry, held, tracked))
			continue;

		if (r[1] != NULL)
		{
			Datum		values[2];
			SyncKeyedInfo info;

			/*
			 * Lock the execution's row first, without waiting: one that a
			 * transaction is changing (its phase, its slot), or that another
			 * round has changed since we read it, is looked at again
			 * shortly, and the worker never deadlocks with it.
			 */
			values[0] = CStringGetTextDatum(id);
			values[1] = CStringGetTextDatum(r[5]);
			if (sync_exec_owned(&lock_if_free, values, NULL, NULL) == 0)
			{
				busy = true;
				continue;
			}

			/*
			 * Another round may have acted on it and committed after we read
			 * it, leaving its phase as it was (a RUNNING execution that took
			 * its slot).  Shared memory, updated at that commit before its
			 * locks were released, says what holds now.
			 */
			has_entry = sync_keyed_lookup(lock, id, &info);
			held = has_entry && info.state == SYNC_ENTRY_HELD;
			if (!sync_launch_needs_action(r, phase, has_entry, held, tracked))
				continue;
		}
		if (PHASE_TERMINAL(phase))
		{
			if (has_entry)
			{
				(void) sync_state_delete(lock, id, "released");
				n++;
			}
		}
		else if (phase == PH_PENDING)
		{
			if (r[9] && r[9][0] == 't')
			{
				char	   *why = psprintf("Pending longer than max_pending (%s s) for launch plan %s/%s/%s",
										   r[10], r[1], r[2], r[3]);

				if (has_entry)
					(void) sync_state_delete(lock, id, "released");
				sync_set_phase(id, PH_TIMED_OUT, true, why);
				sync_launch_event("TIMED_OUT", id, r[1], r[2], r[3], r[4], why, NULL);
				n++;
			}
			else if (r[6] == NULL)
			{
				/*
				 * The version lost its policy: no longer waits.  It still
				 * counts (takes a slot, never refused) if another version of
				 * the plan has a policy.
				 */
				if (has_entry)
					(void) sync_state_delete(lock, id, "released");
				if (tracked)
					(void) sync_take_slot(lock, id, SYNC_KEYED_FORCE, -1, 0, now);
				sync_set_phase(id, PH_QUEUED, true, NULL);
				sync_launch_event("PROMOTED", id, r[1], r[2], r[3], r[4],
								  "the launch plan version has no concurrency policy any more", NULL);
				n++;
			}
			else if (has_entry && !held &&
					 (r[8] == NULL || pg_strtoint32(r[8]) != pg_strtoint32(r[6])))
			{
				int32		limit = pg_strtoint32(r[6]);

				/* granted below, once every waiter has its new limit */
				sync_keyed_set_admit_limit(lock, id, limit, false);
				regrant = list_append_unique(regrant, makeString(lock));
				sync_set_phase(id, PH_PENDING, true,
							   psprintf("Waiting for a slot: concurrency limit (%d) reached for launch plan %s/%s/%s",
										limit, r[1], r[2], r[3]));
				n++;
			}
			else if (!has_entry)
			{
				/* queue it (again) */
				(void) sync_take_slot(lock, id, SYNC_KEYED_QUEUE, pg_strtoint32(r[6]), 0,
									  now);
				n++;
			}
		}
		else if (!held && phase != PH_ABORTING)
		{
			/*
			 * Running without a slot (moved by hand): it takes one.  (An
			 * ABORTING execution without one was replaced: it gave its slot
			 * to its replacement.)
			 */
			if (tracked)
			{
				if (has_entry)
					(void) sync_state_delete(lock, id, "released");
				(void) sync_take_slot(lock, id, SYNC_KEYED_FORCE,
									  r[6] ? pg_strtoint32(r[6]) : -1, 0, now);
				n++;
			}
		}
	}

	foreach(lc, regrant)
		sync_keyed_regrant(strVal(lfirst(lc)));
	if (busy)
		pg_atomic_write_u32(&SyncState->launch_dirty, 1);

	(void) sync_exec_owned(&next_deadline, NULL, NULL, &deadline);
	if (deadline != NIL && ((char **) linitial(deadline))[0] != NULL)
	{
		Datum		d = DirectFunctionCall3(timestamptz_in,
										   CStringGetDatum(((char **) linitial(deadline))[0]),
										   ObjectIdGetDatum(InvalidOid),
										   Int32GetDatum(-1));

		*next = DatumGetTimestampTz(d);
	}
	if (busy)
		*next = Min(*next, now + USECS_PER_SEC / 10);
	return n;
}
