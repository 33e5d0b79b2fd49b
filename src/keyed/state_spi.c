/*-------------------------------------------------------------------------
 *
 * state_spi.c
 *		The rows of sync_state and sync_controller: the writes syncwf makes
 *		to them as SQL statements (with the "granted" event of a grant it
 *		writes), and reading them back to rebuild shared memory.  Table I/O only: this file knows
 *		nothing of shared memory; the engine (keyed_ops.c) decides what to
 *		write and what a deleted row means.
 *
 * Writes run as the tables' owner (the extension's owner), so that roles
 * which may only read the tables can still request and release through
 * the API, and queries are schema-qualified and use OPERATOR(pg_catalog.=),
 * so that nothing depends on the caller's search_path.  The writes of
 * every keyed request, release and hand-off -- inserting and deleting a
 * sync_state row, writing a hand-off's grant -- bypass SPI and go through
 * the table access method and the primary key directly (state_heap.c).
 *
 * Rows of sync_state can only be inserted and updated by syncwf itself:
 * the guard trigger (triggers.c) asks sync_state_writing().  A DELETE
 * statement run here fires the delete trigger, which tells the engine; its
 * reason and the rows it deleted besides are kept here for it
 * (sync_state_delete_reason, sync_state_cascaded).
 *
 * Events go out with NOTIFY (notify_payloads.c: payload and channels), so
 * only when the transaction that caused them commits.
 *
 * Backend-local state only.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type_d.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "keyed/keyed_internal.h"

/* Set while syncwf itself writes sync_state (checked by the guard trigger). */
static bool api_writing = false;

/* Rows the trigger deleted because a row of their request was deleted. */
static uint64 cascaded_rows = 0;

/* Why rows are being deleted; NULL for a manual DELETE. */
static const char *delete_reason = NULL;


typedef enum StatePlan
{
	PLAN_SET_PRIORITY,
	PLAN_REFRESH,
	PLAN_PERSIST,
	PLAN_PERSIST_SKIP_LOCKED,
	PLAN_PERSIST_PENDING,
	PLAN_EXPIRE,
	PLAN_WITHDRAW,
	PLAN_CTL_UPSERT,
	PLAN_CTL_DELETE,
	PLAN_DELETE_BY_CONTROLLER,
	PLAN_SET_ADMIT,
	PLAN_REFRESH_CAPPED,
	PLAN_PREEMPT,
	NUM_PLANS
} StatePlan;

static SPIPlanPtr plans[NUM_PLANS];
static Oid	plans_relid = InvalidOid;

/*
 * The statements, by StatePlan.  "%s" is the table: sync_controller for the
 * plans marked so, sync_state otherwise (both schema-qualified).
 */
#define EQ " OPERATOR(pg_catalog.=) "
typedef struct PlanDef
{
	bool		on_controller;
	const char *sql;
	int			nargs;
	Oid			types[6];
} PlanDef;

/*
 * Writing a grant (the PLAN_PERSIST* statements, one set of parameters:
 * name, holder, token, granted_at, lease_expires, request_id): the row of
 * that request, unless it records this grant already.
 */
#define PERSIST_SET \
	"SET held = true, token = $3, granted_at = $4, lease_expires = $5 "
#define PERSIST_MATCH \
	"name" EQ "$1 AND workflowkey" EQ "$2 AND request_id" EQ "$6 " \
	"AND (NOT held OR token IS DISTINCT FROM $3)"
#define PERSIST_TYPES \
	{TEXTOID, TEXTOID, INT8OID, TIMESTAMPTZOID, TIMESTAMPTZOID, INT8OID}

static const PlanDef plan_defs[NUM_PLANS] = {
	[PLAN_SET_PRIORITY] = {false,
		"UPDATE %s SET priority = $3 WHERE name" EQ "$1 AND workflowkey" EQ "$2",
	3, {TEXTOID, TEXTOID, INT4OID}},
	[PLAN_REFRESH] = {false,
		"UPDATE %s SET lease = COALESCE($3, lease), lease_expires = pg_catalog.clock_timestamp() "
		"OPERATOR(pg_catalog.+) COALESCE($3, lease) WHERE name" EQ "$1 AND workflowkey" EQ "$2 "
		"AND held RETURNING lease_expires",
	3, {TEXTOID, TEXTOID, INTERVALOID}},
	[PLAN_PERSIST] = {false,
		"UPDATE %s " PERSIST_SET "WHERE " PERSIST_MATCH " RETURNING controller",
	6, PERSIST_TYPES},
	/* the worker's: a row locked by an open transaction is skipped */
	[PLAN_PERSIST_SKIP_LOCKED] = {false,
		"UPDATE %1$s " PERSIST_SET "WHERE ctid" EQ "(SELECT ctid FROM %1$s "
		"WHERE " PERSIST_MATCH " FOR UPDATE SKIP LOCKED) RETURNING controller",
	6, PERSIST_TYPES},
	/* ... and whether it was: the row is there but was not written */
	[PLAN_PERSIST_PENDING] = {false,
		"SELECT 1 FROM %s WHERE " PERSIST_MATCH,
	6, PERSIST_TYPES},
	/* a row locked by an open transaction is skipped, not waited for */
	[PLAN_EXPIRE] = {false,
		"DELETE FROM %1$s WHERE ctid" EQ "(SELECT ctid FROM %1$s "
		"WHERE name" EQ "$1 AND workflowkey" EQ "$2 AND token" EQ "$3 AND held "
		"AND lease_expires OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp() "
		"FOR UPDATE SKIP LOCKED)",
	3, {TEXTOID, TEXTOID, INT8OID}},
	/* the same, for a pending request */
	[PLAN_WITHDRAW] = {false,
		"DELETE FROM %1$s WHERE ctid" EQ "(SELECT ctid FROM %1$s "
		"WHERE name" EQ "$1 AND workflowkey" EQ "$2 AND request_id" EQ "$3 "
		"AND NOT held FOR UPDATE SKIP LOCKED)",
	3, {TEXTOID, TEXTOID, INT8OID}},
	[PLAN_CTL_UPSERT] = {true,
		"INSERT INTO %s AS c (controller, time) VALUES ($1, pg_catalog.clock_timestamp()) "
		"ON CONFLICT (controller) DO UPDATE SET time = excluded.time RETURNING time",
	1, {TEXTOID}},
	[PLAN_CTL_DELETE] = {true,
		"DELETE FROM %s WHERE controller" EQ "$1",
	1, {TEXTOID}},
	[PLAN_DELETE_BY_CONTROLLER] = {false,
		"DELETE FROM %s WHERE controller" EQ "$1 AND (NOT held OR $2)",
	2, {TEXTOID, BOOLOID}},
	[PLAN_SET_ADMIT] = {false,
		"UPDATE %s SET admit_limit = $3 WHERE name" EQ "$1 AND workflowkey" EQ "$2",
	3, {TEXTOID, TEXTOID, INT4OID}},
	/* 1.8 on: a refresh never takes a preempted hold past its grace */
	[PLAN_REFRESH_CAPPED] = {false,
		"UPDATE %s SET lease = COALESCE($3, lease), lease_expires = LEAST("
		"pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+) COALESCE($3, lease), preempt_deadline) "
		"WHERE name" EQ "$1 AND workflowkey" EQ "$2 AND held RETURNING lease_expires",
	3, {TEXTOID, TEXTOID, INTERVALOID}},
	/* the worker's: a preempted hold ends at $4; a locked row is skipped */
	[PLAN_PREEMPT] = {false,
		"UPDATE %1$s SET preempt_deadline = $4, lease_expires = LEAST("
		"COALESCE(lease_expires, $4), $4) WHERE ctid" EQ "(SELECT ctid FROM %1$s "
		"WHERE name" EQ "$1 AND workflowkey" EQ "$2 AND token" EQ "$3 AND held "
		"AND preempt_deadline IS NULL FOR UPDATE SKIP LOCKED)",
	4, {TEXTOID, TEXTOID, INT8OID, TIMESTAMPTZOID}},
};
#undef EQ
#undef PERSIST_SET
#undef PERSIST_MATCH
#undef PERSIST_TYPES

/* Build (once per table) the plan for one statement. */
static SPIPlanPtr
sync_plan(StatePlan which)
{
	const PlanDef *def = &plan_defs[which];
	char	   *sql;
	SPIPlanPtr	plan;

	const SyncTables *t = sync_tables(false);

	if (plans_relid != t->state)
	{
		for (int i = 0; i < NUM_PLANS; i++)
			if (plans[i] != NULL)
			{
				SPI_freeplan(plans[i]);
				plans[i] = NULL;
			}
		plans_relid = t->state;
	}
	if (plans[which] != NULL)
		return plans[which];

	sql = psprintf(def->sql,
				   sync_qualified(def->on_controller ? t->controller : t->state));
	plan = sync_prepare_kept(sql, def->nargs, (Oid *) def->types, NULL);
	plans[which] = plan;
	return plan;
}

/*
 * Run one planned statement as the tables' owner, with the guard trigger
 * told that this write is syncwf's own.  Returns rows processed; the first
 * returned value (if any) goes to *result.
 */
static uint64
sync_exec(StatePlan which, Datum *values, const char *nulls, Datum *result,
		  bool *result_null)
{
	Oid			save_userid;
	int			save_sec_context;
	bool		save_writing = api_writing;
	int			rc;
	volatile uint64 processed = 0;
	int			nestlevel;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	nestlevel = sync_search_path_restrict();
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(sync_tables(false)->owner,
						   save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
	api_writing = true;
	PG_TRY();
	{
		rc = SPI_execute_plan(sync_plan(which), values, nulls, false, 0);
		if (rc < 0)
			elog(ERROR, "syncwf table statement failed: %s", SPI_result_code_string(rc));
		processed = SPI_processed;
		if (result != NULL)
		{
			*result_null = true;
			if (processed > 0 && SPI_tuptable != NULL)
			{
				Datum		d = SPI_getbinval(SPI_tuptable->vals[0],
											  SPI_tuptable->tupdesc, 1, result_null);

				if (!*result_null)
				{
					Form_pg_attribute att = TupleDescAttr(SPI_tuptable->tupdesc, 0);

					*result = SPI_datumTransfer(d, att->attbyval, att->attlen);
				}
			}
		}
	}
	PG_FINALLY();
	{
		api_writing = save_writing;
		SetUserIdAndSecContext(save_userid, save_sec_context);
	}
	PG_END_TRY();
	sync_search_path_restore(nestlevel);
	SPI_finish();
	return processed;
}


/*
 * Run a DELETE of sync_state rows with 'reason' for the trigger (see
 * sync_state_delete).  Returns the rows deleted, those the trigger deleted
 * with them (the rest of a pending request naming several locks) included.
 */
static int
sync_exec_delete(StatePlan which, Datum *values, const char *reason)
{
	const char *save_reason = delete_reason;
	uint64		save_cascaded = cascaded_rows;
	volatile uint64 n = 0;

	delete_reason = reason;
	cascaded_rows = 0;
	PG_TRY();
	{
		n = sync_exec(which, values, NULL, NULL, NULL);
		n += cascaded_rows;
	}
	PG_FINALLY();
	{
		delete_reason = save_reason;
		cascaded_rows = save_cascaded;
	}
	PG_END_TRY();
	return (int) n;
}

/* Set an integer column of the row of (name, holder) with 'which'. */
static void
sync_state_set_int(StatePlan which, const char *name, const char *holder,
				   int32 value)
{
	Datum		values[3];

	values[0] = CStringGetTextDatum(name);
	values[1] = CStringGetTextDatum(holder);
	values[2] = Int32GetDatum(value);
	(void) sync_exec(which, values, NULL, NULL, NULL);
}

void
sync_state_set_admit_limit(const char *name, const char *holder, int32 limit)
{
	sync_state_set_int(PLAN_SET_ADMIT, name, holder, limit);
}

void
sync_state_set_priority(const char *name, const char *holder, int32 priority)
{
	sync_state_set_int(PLAN_SET_PRIORITY, name, holder, priority);
}

TimestampTz
sync_state_refresh(const char *name, const char *holder, int64 lease_us,
				   bool *found)
{
	Datum		values[3];
	Datum		result = 0;
	bool		isnull = true;

	char		nulls[3] = {' ', ' ', ' '};

	values[0] = CStringGetTextDatum(name);
	values[1] = CStringGetTextDatum(holder);
	if (lease_us > 0)
		values[2] = sync_interval_datum(lease_us);
	else
		nulls[2] = 'n';			/* keep the row's lease */
	*found = sync_exec(get_attnum(sync_tables(false)->state, "preempt_deadline") !=
					   InvalidAttrNumber ? PLAN_REFRESH_CAPPED : PLAN_REFRESH,
					   values, nulls, &result, &isnull) > 0;
	return (*found && !isnull) ? DatumGetTimestampTz(result) : 0;
}

/*
 * Write one grant of a pending entry (row: name, holder, token, granted_at,
 * lease_expires, request_id, controller) to sync_state and announce it, in
 * the current transaction; false if the row already says so or is gone.
 * With 'skipped' (the worker, sync_reconcile()), a row that an open
 * transaction has locked is not waited for: *skipped is set, and the grant
 * is written by a later round.  The worker never waits for a row lock, so
 * it can never be part of a deadlock, nor be held up by one session's open
 * transaction while other hand-offs wait to be announced.
 */
bool
sync_state_persist(SyncStateRow *row, bool *skipped)
{
	Datum		values[6];
	char		nulls[6];

	memset(nulls, ' ', sizeof(nulls));
	values[0] = CStringGetTextDatum(row->name);
	values[1] = CStringGetTextDatum(row->holder);
	values[2] = Int64GetDatum(row->token);
	values[3] = TimestampTzGetDatum(row->granted_at);
	if (row->lease_expires != 0)
		values[4] = TimestampTzGetDatum(row->lease_expires);
	else
		nulls[4] = 'n';
	values[5] = Int64GetDatum(row->request_id);
	if (sync_exec(skipped ? PLAN_PERSIST_SKIP_LOCKED : PLAN_PERSIST,
				  values, nulls, NULL, NULL) == 0)
	{
		if (skipped && sync_exec(PLAN_PERSIST_PENDING, values, nulls, NULL, NULL) > 0)
			*skipped = true;
		return false;
	}
	sync_keyed_notify("granted", row->name, row->holder, row->token,
					  row->controller, NULL);
	return true;
}

/*
 * Run the DELETE 'which' for each row of 'rows' (name, holder, and the
 * row's token or request id as the third parameter), with 'reason' for
 * the trigger.  Returns how many rows went, with the trigger's.
 */
static int
sync_exec_delete_each(StatePlan which, List *rows, bool by_token, const char *reason)
{
	ListCell   *lc;
	int			n = 0;

	foreach(lc, rows)
	{
		SyncStateRow *row = (SyncStateRow *) lfirst(lc);
		Datum		values[3];

		values[0] = CStringGetTextDatum(row->name);
		values[1] = CStringGetTextDatum(row->holder);
		values[2] = Int64GetDatum(by_token ? row->token : row->request_id);
		n += sync_exec_delete(which, values, reason);
	}
	return n;
}

/*
 * Delete the rows of expired leases (the delete trigger announces and
 * releases them: "lease expired", or "preempted" for a preempted hold whose
 * grace ended); returns how many rows went, with the trigger's.
 */
int
sync_state_expire(List *expired)
{
	List	   *ended = NIL;
	List	   *preempted = NIL;
	ListCell   *lc;
	int			n;

	foreach(lc, expired)
	{
		SyncStateRow *row = (SyncStateRow *) lfirst(lc);

		if (row->preempt_deadline != 0)
			preempted = lappend(preempted, row);
		else
			ended = lappend(ended, row);
	}
	n = sync_exec_delete_each(PLAN_EXPIRE, ended, true, "lease expired");
	n += sync_exec_delete_each(PLAN_EXPIRE, preempted, true, SYNC_REASON_PREEMPTED);
	list_free(ended);
	list_free(preempted);
	return n;
}

/*
 * Write the preemption of a held row (name, holder, token): its grace ends
 * at 'deadline', and its lease with it; announce it.  False if the row is
 * not there, not held with that token, preempted already, or locked by an
 * open transaction (skipped, not waited for).
 */
bool
sync_state_preempt(const SyncStateRow *row, TimestampTz deadline)
{
	Datum		values[4];

	values[0] = CStringGetTextDatum(row->name);
	values[1] = CStringGetTextDatum(row->holder);
	values[2] = Int64GetDatum(row->token);
	values[3] = TimestampTzGetDatum(deadline);
	if (sync_exec(PLAN_PREEMPT, values, NULL, NULL, NULL) == 0)
		return false;
	sync_keyed_notify_preempt(row->name, row->holder, row->token, row->controller,
							  deadline);
	return true;
}

/*
 * Delete the rows of pending requests 'rows' (name, holder, request id),
 * announced as "withdrawn" with 'reason' by the delete trigger, which
 * withdraws them at commit.  A row an open transaction has locked is
 * skipped.  Returns how many rows went, with the trigger's.
 */
int
sync_state_withdraw(List *rows, const char *reason)
{
	return sync_exec_delete_each(PLAN_WITHDRAW, rows, false, reason);
}

/*
 * The query that reads every row of sync_state, held first and then in
 * queue order, each semaphore's with its sync_limit row (if it has one of
 * its own).  Columns a release added are read as their default when the
 * installed version's tables lack them.
 */
static char *
sync_state_read_sql(const SyncTables *t, const char *state, const char *limits)
{
	return psprintf("SELECT s.name, s.workflowkey, s.controller, s.held, s.priority, s.time, "
					"s.token, s.granted_at, s.lease, s.lease_expires, s.owner::pg_catalog.oid, "
					"s.request_id, s.seq, l.sizelimit, s.admit_limit, %s, %s, %s, %s, %s, %s, %s, %s "
					"FROM %s s LEFT JOIN %s l ON l.name OPERATOR(pg_catalog.=) "
					"pg_catalog.substr(s.name, 5) AND s.name OPERATOR(pg_catalog.~~) 'sem/%%' "
					"ORDER BY s.held DESC, s.priority DESC, s.time, s.seq",
					get_attnum(t->state, "claim") != InvalidAttrNumber ? "s.claim" : "false",
					sync_limit_cap_rate_columns(t->limit, "l"),
					get_attnum(t->state, "slots") != InvalidAttrNumber ?
					"s.slots" : "1",
					get_attnum(t->state, "mode") != InvalidAttrNumber ?
					"s.mode OPERATOR(pg_catalog.=) 'shared'" : "false",
					sync_limit_queueing_column(t->limit, "l"),
					get_attnum(t->state, "fair_key") != InvalidAttrNumber ?
					"s.fair_key" : "NULL::pg_catalog.text",
					sync_limit_tree_columns(t->limit, "l"),
					get_attnum(t->state, "preemptible") != InvalidAttrNumber ?
					"s.preemptible, s.preempt_deadline" :
					"false, NULL::pg_catalog.timestamptz",
					state, limits);
}

/*
 * One row of sync_state_read_sql()'s result, allocated in the current
 * memory context.
 */
static SyncStateRow *
sync_state_read_row(HeapTuple tup, TupleDesc desc)
{
	SyncStateRow *row = palloc0(sizeof(SyncStateRow));
	bool		isnull;
	Datum		d;

	row->name = SPI_getvalue(tup, desc, 1);
	row->holder = SPI_getvalue(tup, desc, 2);
	row->controller = SPI_getvalue(tup, desc, 3);
	row->held = DatumGetBool(SPI_getbinval(tup, desc, 4, &isnull));
	row->priority = DatumGetInt32(SPI_getbinval(tup, desc, 5, &isnull));
	row->queued_at = DatumGetTimestampTz(SPI_getbinval(tup, desc, 6, &isnull));
	d = SPI_getbinval(tup, desc, 7, &isnull);
	row->token = isnull ? 0 : DatumGetInt64(d);
	d = SPI_getbinval(tup, desc, 8, &isnull);
	row->granted_at = isnull ? row->queued_at : DatumGetTimestampTz(d);
	d = SPI_getbinval(tup, desc, 9, &isnull);
	row->lease_us = isnull ? 0 : Max(sync_interval_us(DatumGetIntervalP(d)), 1);
	d = SPI_getbinval(tup, desc, 10, &isnull);
	row->lease_expires = isnull ? 0 : DatumGetTimestampTz(d);
	row->owner = DatumGetObjectId(SPI_getbinval(tup, desc, 11, &isnull));
	row->request_id = DatumGetInt64(SPI_getbinval(tup, desc, 12, &isnull));
	row->seq = DatumGetInt64(SPI_getbinval(tup, desc, 13, &isnull));
	d = SPI_getbinval(tup, desc, 14, &isnull);
	row->limit.limit = isnull ? -1 : DatumGetInt32(d);
	d = SPI_getbinval(tup, desc, 15, &isnull);
	row->admit_limit = isnull ? -1 : DatumGetInt32(d);
	row->claim = DatumGetBool(SPI_getbinval(tup, desc, 16, &isnull));
	d = SPI_getbinval(tup, desc, 17, &isnull);
	row->limit.max_waiters = isnull ? -1 : DatumGetInt32(d);
	row->limit.pattern_len = 0;
	sync_limit_rate_of(tup, desc, 18, &row->limit);
	d = SPI_getbinval(tup, desc, 20, &isnull);
	row->slots = isnull ? 1 : DatumGetInt32(d);
	d = SPI_getbinval(tup, desc, 21, &isnull);
	row->shared = !isnull && DatumGetBool(d);
	d = SPI_getbinval(tup, desc, 22, &isnull);
	row->limit.best_effort = !isnull && DatumGetBool(d);
	row->fair_key = SPI_getvalue(tup, desc, 23);
	sync_limit_tree_of(tup, desc, 24, &row->limit);
	d = SPI_getbinval(tup, desc, 32, &isnull);
	row->preemptible = !isnull && DatumGetBool(d);
	d = SPI_getbinval(tup, desc, 33, &isnull);
	row->preempt_deadline = isnull ? 0 : DatumGetTimestampTz(d);
	return row;
}

/*
 * Every row of sync_state as of 'snapshot', in 'cxt'.  Caller is connected
 * to SPI.
 */
static List *
sync_state_rows_read(const SyncTables *t, const char *state,
					 const char *limits, Snapshot snapshot, MemoryContext cxt)
{
	List	   *rows = NIL;
	char	   *sql = sync_state_read_sql(t, state, limits);
	int			rc;

	rc = SPI_execute_snapshot(SPI_prepare(sql, 0, NULL), NULL, NULL, snapshot,
							  InvalidSnapshot, true, false, 0);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read sync_state: %s", SPI_result_code_string(rc));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		MemoryContext old = MemoryContextSwitchTo(cxt);

		rows = lappend(rows, sync_state_read_row(SPI_tuptable->vals[i],
												 SPI_tuptable->tupdesc));
		MemoryContextSwitchTo(old);
	}
	return rows;
}

/*
 * Semaphores without a sync_limit row of their own take their limit from
 * the pattern rows, read once (only if some row needs them).
 */
static void
sync_state_pattern_limits(List *rows, Oid limit_relid)
{
	HTAB	   *patterns = NULL;
	ListCell   *lc;

	foreach(lc, rows)
	{
		SyncStateRow *row = (SyncStateRow *) lfirst(lc);

		if (row->limit.limit >= 0 || strncmp(row->name, "sem/", 4) != 0)
			continue;
		if (patterns == NULL)
			patterns = sync_limit_patterns(limit_relid);
		sync_limit_match(patterns, row->name + 4, &row->limit);
	}
}

/*
 * Every row of sync_controller ('ctl') as of 'snapshot', in 'cxt'.  Caller
 * is connected to SPI.
 */
static List *
sync_controller_rows_read(const char *ctl, Snapshot snapshot,
						  MemoryContext cxt)
{
	List	   *controllers = NIL;
	char	   *sql = psprintf("SELECT controller, time FROM %s", ctl);
	int			rc;

	rc = SPI_execute_snapshot(SPI_prepare(sql, 0, NULL), NULL, NULL, snapshot,
							  InvalidSnapshot, true, false, 0);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read sync_controller: %s", SPI_result_code_string(rc));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		MemoryContext old = MemoryContextSwitchTo(cxt);
		SyncControllerRow *c = palloc0(sizeof(SyncControllerRow));
		bool		isnull;

		c->name = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		c->heartbeat = DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[i],
														 SPI_tuptable->tupdesc, 2, &isnull));
		controllers = lappend(controllers, c);
		MemoryContextSwitchTo(old);
	}
	return controllers;
}

/*
 * Read every row of sync_state (held first, then in queue order, with the
 * semaphores' limits) and of sync_controller, with the latest snapshot.
 */
List *
sync_state_read_all(List **controllers)
{
	char	   *state;
	char	   *limits;
	char	   *ctl;
	List	   *rows;
	Snapshot	snapshot;
	int			nestlevel;
	MemoryContext cxt = CurrentMemoryContext;

	const SyncTables *t = sync_tables(false);

	state = sync_qualified(t->state);
	limits = sync_qualified(t->limit);
	ctl = sync_qualified(t->controller);
	*controllers = NIL;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	nestlevel = sync_search_path_restrict();
	/*
	 * What is committed, not this transaction's own changes: see
	 * sync_limit_read() in sem_limits.c for the command id trick.
	 */
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	snapshot->curcid = FirstCommandId;

	rows = sync_state_rows_read(t, state, limits, snapshot, cxt);
	sync_state_pattern_limits(rows, t->limit);
	*controllers = sync_controller_rows_read(ctl, snapshot, cxt);

	UnregisterSnapshot(snapshot);
	sync_search_path_restore(nestlevel);
	SPI_finish();
	return rows;
}

/* Record a heartbeat row; returns its time (the server's clock). */
TimestampTz
sync_controller_upsert(const char *controller)
{
	Datum		values[1];
	Datum		result = 0;
	bool		isnull = true;

	values[0] = CStringGetTextDatum(controller);
	(void) sync_exec(PLAN_CTL_UPSERT, values, NULL, &result, &isnull);
	return isnull ? GetCurrentTimestamp() : DatumGetTimestampTz(result);
}

/*
 * Delete a controller's row, and the sync_state rows of its pending
 * entries, and of its holds if asked (the delete triggers do the rest).
 * Returns the number of sync_state rows deleted.
 */
int
sync_controller_rows_delete(const char *controller, bool release_holds)
{
	Datum		values[2];

	values[0] = CStringGetTextDatum(controller);
	(void) sync_exec(PLAN_CTL_DELETE, values, NULL, NULL, NULL);
	values[1] = BoolGetDatum(release_holds);
	return sync_exec_delete(PLAN_DELETE_BY_CONTROLLER, values, "controller forgotten");
}


/* Is syncwf itself writing sync_state (the guard trigger asks)? */
bool
sync_state_writing(void)
{
	return api_writing;
}

/* Why the rows of the DELETE statement running now are deleted (NULL: by hand). */
const char *
sync_state_delete_reason(void)
{
	return delete_reason;
}

/*
 * The delete trigger deleted 'n' rows besides (the rest of a pending
 * request naming several locks): count them for the statement's caller.
 */
void
sync_state_cascaded(int n)
{
	cascaded_rows += n;
}
