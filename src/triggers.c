/*-------------------------------------------------------------------------
 *
 * triggers.c
 *		Every trigger function of syncwf: what a change to one of its tables
 *		means for the engine, so that plain SQL on the tables behaves like
 *		the API.
 *
 *	sync_state       INSERT/UPDATE only by syncwf itself (the guard); a
 *	                 DELETE releases (or withdraws) at commit and hands the
 *	                 slot on, a TRUNCATE does so for every row
 *	sync_controller  INSERT and UPDATE are heartbeats, stamped with the
 *	                 server's clock; DELETE and TRUNCATE make controllers
 *	                 inactive at commit
 *	sync_limit       changed limits take effect at commit (sem_limits.c)
 *	sync_launch_plan, sync_execution
 *	                 changes made by hand have the worker reconcile launch
 *	                 plans when they commit
 *
 * No state of its own.
 *
 * Layer 10: calls layers 0-9.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "guc.h"
#include "keyed_ops.h"
#include "keyed_xact.h"
#include "launch_rows.h"
#include "sem_limits.h"
#include "lock_table.h"
#include "state_rows.h"

static TriggerData *
sync_trigger_data(FunctionCallInfo fcinfo, const char *fname)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("%s() can only be called as a trigger", fname)));
	return (TriggerData *) fcinfo->context;
}

static char *
sync_tuple_text(HeapTuple tuple, TupleDesc desc, const char *column)
{
	return SPI_getvalue(tuple, desc, SPI_fnumber(desc, column));
}

/*
 * BEFORE INSERT OR UPDATE on sync_state: only syncwf writes rows; people
 * release by deleting them.
 */
PG_FUNCTION_INFO_V1(sync_state_guard);
Datum
sync_state_guard(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = sync_trigger_data(fcinfo, "sync_state_guard");

	if (!sync_state_writing())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("rows of sync_state are written by syncwf only"),
				 errhint("Use sync_request() to request a lock; DELETE a row (or call sync_release()) to release it.")));
	return PointerGetDatum(TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event) ?
						   trigdata->tg_newtuple : trigdata->tg_trigtuple);
}

/*
 * AFTER DELETE (row) and AFTER TRUNCATE on sync_state: a DELETE that is not
 * syncwf's own fast-path delete (a manual one, or a DELETE statement of
 * state_rows.c) releases at commit like sync_release(); see
 * sync_keyed_row_removed() in keyed_ops.c.
 */
PG_FUNCTION_INFO_V1(sync_state_deleted);
Datum
sync_state_deleted(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = sync_trigger_data(fcinfo, "sync_state_deleted");
	SyncStateRow row;

	sync_require_shmem();
	if (!sync_keyed_database())
		return PointerGetDatum(NULL);
	sync_keyed_ensure_loaded();

	if (TRIGGER_FIRED_BY_TRUNCATE(trigdata->tg_event))
	{
		sync_keyed_xact_truncated();
		return PointerGetDatum(NULL);
	}
	if (!sync_state_row_of(trigdata->tg_relation, trigdata->tg_trigtuple, &row))
		return PointerGetDatum(NULL);
	sync_state_cascaded(sync_keyed_row_removed(row.name, row.holder,
											   row.request_id, row.controller,
											   sync_state_delete_reason()));
	return PointerGetDatum(NULL);
}

/*
 * BEFORE INSERT OR UPDATE (row) on sync_controller: the heartbeat time is
 * the database server's clock, whatever the writer's clock says, so that
 * controllers' clocks never need to agree.
 */
PG_FUNCTION_INFO_V1(sync_controller_stamp);
Datum
sync_controller_stamp(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = sync_trigger_data(fcinfo, "sync_controller_stamp");
	HeapTuple	tuple = TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event) ?
		trigdata->tg_newtuple : trigdata->tg_trigtuple;
	TupleDesc	desc = RelationGetDescr(trigdata->tg_relation);
	int			col = SPI_fnumber(desc, "time");
	Datum		value = TimestampTzGetDatum(GetCurrentTimestamp());
	bool		isnull = false;

	if (col <= 0)
		return PointerGetDatum(tuple);
	return PointerGetDatum(heap_modify_tuple_by_cols(tuple, desc, 1, &col,
													 &value, &isnull));
}

/*
 * AFTER INSERT OR UPDATE OR DELETE (row) and AFTER TRUNCATE on
 * sync_controller: a written row is a heartbeat at its time, a deleted row
 * makes the controller inactive; both at commit.
 */
PG_FUNCTION_INFO_V1(sync_controller_changed);
Datum
sync_controller_changed(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = sync_trigger_data(fcinfo, "sync_controller_changed");
	TupleDesc	desc;
	HeapTuple	tuple;
	char	   *name;

	sync_require_shmem();
	if (!sync_keyed_database())
		return PointerGetDatum(NULL);

	if (TRIGGER_FIRED_BY_TRUNCATE(trigdata->tg_event))
	{
		sync_keyed_xact_controller(NULL, true, 0);
		return PointerGetDatum(NULL);
	}
	desc = RelationGetDescr(trigdata->tg_relation);
	if (TRIGGER_FIRED_BY_DELETE(trigdata->tg_event))
	{
		name = sync_tuple_text(trigdata->tg_trigtuple, desc, "controller");
		if (name)
			sync_keyed_xact_controller(name, true, 0);
		return PointerGetDatum(NULL);
	}
	tuple = TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event) ?
		trigdata->tg_newtuple : trigdata->tg_trigtuple;
	name = sync_tuple_text(tuple, desc, "controller");
	if (name)
	{
		bool		isnull;
		Datum		d = heap_getattr(tuple, SPI_fnumber(desc, "time"), desc, &isnull);

		if (!isnull)
			sync_keyed_xact_controller(name, false, DatumGetTimestampTz(d));
	}
	return PointerGetDatum(NULL);
}

/*
 * Trigger on sync_limit (AFTER INSERT OR UPDATE OR DELETE per row, AFTER
 * TRUNCATE): remember which names this transaction changed.
 */
PG_FUNCTION_INFO_V1(sync_limit_changed);
Datum
sync_limit_changed(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = sync_trigger_data(fcinfo, "sync_limit_changed");
	Oid			relid;
	TupleDesc	tupdesc;
	HeapTuple	tuples[2];
	int			ntuples = 0;

	sync_require_shmem();
	relid = RelationGetRelid(trigdata->tg_relation);
	if (TRIGGER_FIRED_BY_TRUNCATE(trigdata->tg_event))
	{
		sync_limits_changed(relid, NULL);
		return PointerGetDatum(NULL);
	}

	tupdesc = RelationGetDescr(trigdata->tg_relation);
	if (TRIGGER_FIRED_BY_INSERT(trigdata->tg_event))
		tuples[ntuples++] = trigdata->tg_trigtuple;
	else if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
	{
		tuples[ntuples++] = trigdata->tg_trigtuple;
		tuples[ntuples++] = trigdata->tg_newtuple;
	}
	else if (TRIGGER_FIRED_BY_DELETE(trigdata->tg_event))
		tuples[ntuples++] = trigdata->tg_trigtuple;
	for (int i = 0; i < ntuples; i++)
	{
		bool		isnull;
		Datum		name = heap_getattr(tuples[i], 1, tupdesc, &isnull);

		if (!isnull)
			sync_limits_changed(relid, TextDatumGetCString(name));
	}
	return PointerGetDatum(NULL);
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
	(void) sync_trigger_data(fcinfo, "sync_launch_plan_changed");
	sync_require_shmem();
	sync_keyed_wake_at_commit();
	return PointerGetDatum(NULL);
}

/*
 * Trigger on sync_execution (AFTER UPDATE OR DELETE, per statement): a
 * change not made by syncwf's own functions (another system moving phases)
 * gets the slots repaired by the worker when it commits.
 */
PG_FUNCTION_INFO_V1(sync_execution_changed);
Datum
sync_execution_changed(PG_FUNCTION_ARGS)
{
	(void) sync_trigger_data(fcinfo, "sync_execution_changed");
	if (!sync_launch_writing())
	{
		sync_require_shmem();
		sync_keyed_wake_at_commit();
	}
	return PointerGetDatum(NULL);
}
