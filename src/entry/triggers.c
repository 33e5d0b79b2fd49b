/*-------------------------------------------------------------------------
 *
 * triggers.c
 *		Every trigger function of syncwf: what a change to one of its tables
 *		means for the engine, so that plain SQL on the tables behaves like
 *		the API.
 *
 *	sync_state       an INSERT by anyone but syncwf is a claim-only keyed
 *	                 request, and an UPDATE setting held = true its claim
 *	                 (Argo's controller writes so: docs/argo.md); a
 *	                 DELETE releases (or withdraws) at commit and hands the
 *	                 slot on, a TRUNCATE does so for every row
 *	sync_controller  INSERT and UPDATE are heartbeats, stamped with the
 *	                 server's clock; DELETE and TRUNCATE make controllers
 *	                 inactive at commit
 *	sync_limit       changed limits take effect at commit (sem_limits.c)
 *	sync_launch_plan, sync_execution
 *	                 changes made by hand have the worker reconcile launch
 *	                 plans when they commit; an execution written by SQL
 *	                 gets finished_at set exactly when its phase is final
 *
 * No state of its own.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "common/hashfn.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "entry/entry_internal.h"

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

/* A column of a sync_state row, by name; NULL when absent. */
static Datum
sync_state_column(Relation rel, HeapTuple tuple, const char *column, bool *isnull)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			attnum = SPI_fnumber(desc, column);

	if (attnum <= 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	return heap_getattr(tuple, attnum, desc, isnull);
}

static char *
sync_state_text(Relation rel, HeapTuple tuple, const char *column)
{
	bool		isnull;
	Datum		d = sync_state_column(rel, tuple, column, &isnull);

	return isnull ? NULL : TextDatumGetCString(d);
}

/*
 * The row 'tuple' with the columns syncwf owns set from 'row': all of them
 * for a new row (all = true), those of the grant for a claimed one.
 */
static HeapTuple
sync_state_fill(Relation rel, HeapTuple tuple, const SyncStateRow *row, bool all)
{
	static const char *const columns[] = {
		"held", "token", "granted_at", "lease_expires",
		/* a new row's only */
		"priority", "time", "lease", "owner", "request_id", "seq",
		"admit_limit", "claim"
	};
	TupleDesc	desc = RelationGetDescr(rel);
	int			ncols = all ? lengthof(columns) : 4;
	int			cols[lengthof(columns)];
	Datum		values[lengthof(columns)];
	bool		isnull[lengthof(columns)];

	memset(isnull, 0, sizeof(isnull));
	values[0] = BoolGetDatum(row->held);
	values[1] = Int64GetDatum(row->token);
	values[2] = TimestampTzGetDatum(row->granted_at);
	/* held without a token: a claim that is tried again at commit */
	isnull[1] = isnull[2] = (!row->held || row->token == 0);
	values[3] = TimestampTzGetDatum(row->lease_expires);
	isnull[3] = (row->lease_expires == 0);
	values[4] = Int32GetDatum(row->priority);
	values[5] = TimestampTzGetDatum(row->queued_at);
	values[6] = (Datum) 0;
	isnull[6] = true;			/* no lease: Argo has none */
	values[7] = ObjectIdGetDatum(row->owner);
	values[8] = Int64GetDatum(row->request_id);
	values[9] = Int64GetDatum(row->seq);
	values[10] = Int32GetDatum(row->admit_limit);
	isnull[10] = (row->admit_limit < 0);
	values[11] = BoolGetDatum(row->claim);
	for (int i = 0; i < ncols; i++)
	{
		cols[i] = SPI_fnumber(desc, columns[i]);
		if (cols[i] <= 0)
			elog(ERROR, "column \"%s\" of sync_state is missing", columns[i]);
	}
	tuple = heap_modify_tuple_by_cols(tuple, desc, ncols, cols, values, isnull);
	if (all && SPI_fnumber(desc, "mode") > 0)
	{
		/* a mutex's mode is spelled out, as syncwf writes its own rows */
		int			col = SPI_fnumber(desc, "mode");
		Datum		mode = sync_state_mode_datum(row->name, row->shared);

		isnull[0] = (mode == (Datum) 0);
		tuple = heap_modify_tuple_by_cols(tuple, desc, 1, &col, &mode, isnull);
	}
	if (all && SPI_fnumber(desc, "preempt_deadline") > 0)
	{
		/* a new row is not preempted, whatever its writer said */
		int			col = SPI_fnumber(desc, "preempt_deadline");
		Datum		none = (Datum) 0;

		isnull[0] = true;
		tuple = heap_modify_tuple_by_cols(tuple, desc, 1, &col, &none, isnull);
	}
	return tuple;
}

/*
 * Argo orders its queue by priority and the workflow's creation time, which
 * Kubernetes keeps in whole seconds: workflows created in the same second
 * tie, and PostgreSQL returns tied rows in any order, not necessarily the
 * same in each lock's queue.  A workflow with two locks can then be first
 * in one queue while another is first in the other, and each waits for the
 * other forever.  So a time of a whole second gets a fraction of a second
 * of its own, the same for every row of a holder (a hash of its key):
 * ties are broken alike in every queue, Argo's and syncwf's.
 */
static TimestampTz
sync_tie_break(TimestampTz t, const char *holder)
{
	if (t % USECS_PER_SEC != 0)
		return t;
	return t + (TimestampTz) (hash_bytes((const unsigned char *) holder,
										 (int) strlen(holder)) % USECS_PER_SEC);
}

/*
 * The claim of (name, holder) by the statement running now: true when it is
 * granted (row has the grant), false when it cannot be granted yet.  Then
 * the row is written held = true without a token, and the deferred trigger
 * sync_state_claimed() tries again at commit: a claim that still cannot be
 * granted fails the transaction there, as a serialization failure found at
 * commit does, which every version of Argo retries.
 */
static bool
sync_state_claim_now(const char *name, const char *holder,
					 const char *controller, SyncStateRow *row)
{
	switch (sync_keyed_claim(name, holder, controller, row))
	{
		case SYNC_CLAIM_GRANTED:
		case SYNC_CLAIM_HELD:
			return true;
		case SYNC_CLAIM_BUSY:
			row->held = true;
			row->token = 0;
			return false;
		case SYNC_CLAIM_MISSING:
			break;
	}
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("lock \"%s\" has no request of holder \"%s\" to claim", name, holder)));
	return false;				/* keep the compiler quiet */
}

/* A claim that cannot be granted at commit: the writer is to retry. */
static void
sync_claim_refused(const char *name, const char *holder)
{
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("serialization failure: syncwf cannot grant lock \"%s\" to \"%s\" now",
					name, holder),
			 errdetail("The lock has no free slot for it, or a request made through syncwf's functions is ahead of it in the queue."),
			 errhint("Retry the transaction, as after any serialization failure.")));
}

/*
 * The key of a row a writer inserts (lock name and holder, both required
 * and checked) and its controller (may be NULL).  Returns the lock name.
 */
static char *
sync_foreign_keys(Relation rel, HeapTuple tuple, SyncKeyedRequest *kr)
{
	char	   *name = sync_state_text(rel, tuple, "name");

	kr->holder = sync_state_text(rel, tuple, "workflowkey");
	if (name == NULL || kr->holder == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("null value in column \"%s\" of relation \"sync_state\"",
						name == NULL ? "name" : "workflowkey")));
	(void) sync_parse_lock_name(name);
	if (sync_lock_is_launch_plan(name))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lock \"%s\" belongs to launch plans", name),
				 errhint("Create executions with sync_execution_create().")));
	sync_check_key(kr->holder, "holder");
	kr->controller = sync_state_text(rel, tuple, "controller");
	if (kr->controller)
		sync_check_key(kr->controller, "controller");
	return name;
}

/*
 * The place in the queue a written row asks for: its priority (NULL: 0)
 * and its time (NULL: now), a finite time made unique per holder.
 */
static void
sync_foreign_queue_place(Relation rel, HeapTuple tuple, SyncKeyedRequest *kr)
{
	bool		isnull;
	Datum		d;

	d = sync_state_column(rel, tuple, "priority", &isnull);
	kr->has_priority = true;
	kr->priority = isnull ? 0 : DatumGetInt32(d);
	d = sync_state_column(rel, tuple, "time", &isnull);
	kr->has_queued_at = !isnull;
	kr->queued_at = isnull ? 0 : DatumGetTimestampTz(d);
	if (kr->has_queued_at && TIMESTAMP_NOT_FINITE(kr->queued_at))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("time of a sync_state row must be a finite time"),
				 errhint("Write the workflow's creation time, or NULL for now.")));
	if (kr->has_queued_at)
		kr->queued_at = sync_tie_break(kr->queued_at, kr->holder);
}

/*
 * The columns later versions added, where the table has them: slots (NULL:
 * 1), mode (NULL: exclusive), fair_key and preemptible.
 */
static void
sync_foreign_added_columns(Relation rel, HeapTuple tuple, SyncKeyedRequest *kr)
{
	bool		isnull;
	Datum		d;

	kr->slots = 1;
	if (SPI_fnumber(RelationGetDescr(rel), "slots") > 0)
	{
		d = sync_state_column(rel, tuple, "slots", &isnull);
		kr->slots = isnull ? 1 : DatumGetInt32(d);
	}
	if (SPI_fnumber(RelationGetDescr(rel), "mode") > 0)
	{
		char	   *mode = sync_state_text(rel, tuple, "mode");

		if (mode != NULL && strcmp(mode, "shared") != 0 &&
			strcmp(mode, "exclusive") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown lock mode \"%s\" in a sync_state row", mode),
					 errhint("The modes are 'exclusive' (the default) and 'shared'; leave mode NULL for a semaphore.")));
		kr->shared = (mode != NULL && strcmp(mode, "shared") == 0);
	}
	if (SPI_fnumber(RelationGetDescr(rel), "fair_key") > 0)
	{
		kr->fair_key = sync_state_text(rel, tuple, "fair_key");
		if (kr->fair_key != NULL)
			sync_check_fair_key(kr->fair_key);
	}
	if (SPI_fnumber(RelationGetDescr(rel), "preemptible") > 0)
	{
		d = sync_state_column(rel, tuple, "preemptible", &isnull);
		kr->preemptible = !isnull && DatumGetBool(d);
	}
}

/*
 * The holder has an entry for lock 'name' already, so the request made
 * none (result says whose it is): the insert fails.
 */
static void
sync_foreign_duplicate(const SyncKeyedRequest *kr, const SyncKeyedResult *result,
					   const char *name)
{
	if (result->controller != kr->controller_slot)
	{
		/*
		 * The workflow key has an entry for this lock already, made by
		 * another controller (or through the functions).  Argo's own
		 * table would take a second row, but Argo's code treats the key
		 * as the holder whichever controller wrote it, so the second
		 * workflow would run beside the first.  Make it wait instead: a
		 * serialization failure, which Argo retries until the first
		 * workflow's row is gone (docs/argo.md).
		 */
		const char *other = result->controller >= 0
			? pstrdup(sync_controller_name(result->controller)) : NULL;

		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not serialize access: holder \"%s\" already has an entry for lock \"%s\"",
						kr->holder, name),
				 other != NULL
				 ? errdetail("The entry was made by controller \"%s\"; a holder key has one entry per lock, whichever controller made it.",
							 other)
				 : errdetail("The entry was made without a controller; a holder key has one entry per lock, whichever controller made it."),
				 errhint("Retry when that entry has been released, or give this workflow another key.")));
	}
	/* the same controller has an entry for this lock already */
	ereport(ERROR,
			(errcode(ERRCODE_UNIQUE_VIOLATION),
			 errmsg("duplicate key value violates unique constraint \"sync_state_pkey\""),
			 errdetail("Key (name, workflowkey)=(%s, %s) already exists.", name, kr->holder),
			 errhint("A controller has one entry per lock and workflow key.")));
}

/*
 * INSERT by someone other than syncwf: a keyed request for (name,
 * workflowkey) with the row's controller, priority and time, claim-only:
 * held = false queues it until its writer claims it, held = true also
 * claims it at once (sync_state_claim_now()).
 */
static HeapTuple
sync_state_foreign_insert(Relation rel, HeapTuple tuple)
{
	SyncKeyedRequest kr;
	SyncKeyedResult result;
	SyncStateRow row;
	char	   *name;
	bool		isnull,
				held;
	Datum		d;

	memset(&kr, 0, sizeof(kr));
	memset(&result, 0, sizeof(result));
	memset(&row, 0, sizeof(row));
	name = sync_foreign_keys(rel, tuple, &kr);
	d = sync_state_column(rel, tuple, "held", &isnull);
	held = !isnull && DatumGetBool(d);
	kr.mode = SYNC_KEYED_QUEUE;
	sync_foreign_queue_place(rel, tuple, &kr);
	sync_foreign_added_columns(rel, tuple, &kr);
	kr.names = &name;
	kr.nnames = 1;
	kr.admit_limit = -1;
	kr.claim = true;
	kr.row_out = &row;

	sync_keyed_request(&kr, &result);
	if (row.name == NULL)
		sync_foreign_duplicate(&kr, &result, name);
	/* a held row: the request, then its claim (Argo's InsertHeldState) */
	if (held)
		(void) sync_state_claim_now(name, kr.holder, kr.controller, &row);
	return sync_state_fill(rel, tuple, &row, true);
}

/*
 * UPDATE by someone other than syncwf: only setting held = true on a
 * pending row, nothing else changed, which is its claim.
 */
static HeapTuple
sync_state_foreign_update(Relation rel, HeapTuple oldtup, HeapTuple newtup)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			held_col = SPI_fnumber(desc, "held");
	bool		was_held = false,
				now_held = false;
	SyncStateRow row;
	char	   *name,
			   *holder;

	for (int i = 1; i <= desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i - 1);
		bool		oldnull,
					newnull;
		Datum		oldval,
					newval;

		if (att->attisdropped)
			continue;
		oldval = heap_getattr(oldtup, i, desc, &oldnull);
		newval = heap_getattr(newtup, i, desc, &newnull);
		if (i == held_col)
		{
			was_held = !oldnull && DatumGetBool(oldval);
			now_held = !newnull && DatumGetBool(newval);
			continue;
		}
		if (oldnull != newnull ||
			(!oldnull && !datumIsEqual(oldval, newval, att->attbyval, att->attlen)))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("column \"%s\" of sync_state is written by syncwf only",
							NameStr(att->attname)),
					 errhint("An UPDATE may only set held = true on a pending row, to claim it; use the functions, or DELETE a row to release it.")));
	}
	if (was_held == now_held)
		return newtup;
	if (was_held)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a held row of sync_state cannot be set back to pending"),
				 errhint("DELETE the row (or call sync_release()) to release it.")));

	name = sync_state_text(rel, oldtup, "name");
	holder = sync_state_text(rel, oldtup, "workflowkey");
	memset(&row, 0, sizeof(row));
	(void) sync_state_claim_now(name, holder, sync_state_text(rel, oldtup, "controller"), &row);
	return sync_state_fill(rel, newtup, &row, false);
}

/*
 * BEFORE INSERT OR UPDATE (row) on sync_state.  syncwf's own writes pass.
 * Anyone else's, as Argo's controller writes them (docs/argo.md), is a
 * request or a claim: see sync_state_foreign_insert() and
 * sync_state_foreign_update().  A claim that cannot be granted now is a
 * serialization failure (40001), which Argo retries.
 */
PG_FUNCTION_INFO_V1(sync_state_guard);
Datum
sync_state_guard(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = sync_trigger_data(fcinfo, "sync_state_guard");
	Relation	rel = trigdata->tg_relation;
	bool		update = TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event);

	if (sync_state_writing())
		return PointerGetDatum(update ? trigdata->tg_newtuple : trigdata->tg_trigtuple);

	sync_require_shmem();
	if (!sync_keyed_database())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("keyed holds are kept in database \"%s\", not in this one",
						sync_database),
				 errhint("Write sync_state in the database that syncwf.database names.")));
	if (SPI_fnumber(RelationGetDescr(rel), "claim") <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("rows of sync_state are written by syncwf only in this version of the extension"),
				 errhint("ALTER EXTENSION syncwf UPDATE, then write rows as Argo does; or use sync_request().")));
	sync_keyed_ensure_loaded();
	if (update)
		return PointerGetDatum(sync_state_foreign_update(rel, trigdata->tg_trigtuple,
														 trigdata->tg_newtuple));
	return PointerGetDatum(sync_state_foreign_insert(rel, trigdata->tg_trigtuple));
}

/*
 * AFTER INSERT OR UPDATE (row) on sync_state, deferred to commit, for a row
 * written held = true without a token: a claim that could not be granted
 * when its statement ran (sync_state_claim_now()).  Tried again now
 * (waiting, as then, for grants the worker is writing); granted, the grant
 * is written into the row; still not, the transaction fails with 40001.  A
 * row this transaction has deleted since needs nothing.
 */
PG_FUNCTION_INFO_V1(sync_state_claimed);
Datum
sync_state_claimed(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = sync_trigger_data(fcinfo, "sync_state_claimed");
	Relation	rel = trigdata->tg_relation;
	HeapTuple	tuple = TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event) ?
		trigdata->tg_newtuple : trigdata->tg_trigtuple;
	SyncStateRow row;
	bool		isnull;
	Datum		d;

	sync_require_shmem();
	if (!sync_keyed_database())
		return PointerGetDatum(NULL);
	memset(&row, 0, sizeof(row));
	row.name = sync_state_text(rel, tuple, "name");
	row.holder = sync_state_text(rel, tuple, "workflowkey");
	row.controller = sync_state_text(rel, tuple, "controller");
	d = sync_state_column(rel, tuple, "request_id", &isnull);
	if (row.name == NULL || row.holder == NULL || isnull)
		return PointerGetDatum(NULL);
	row.request_id = DatumGetInt64(d);
	switch (sync_keyed_claim(row.name, row.holder, row.controller, &row))
	{
		case SYNC_CLAIM_GRANTED:
		case SYNC_CLAIM_HELD:
			(void) sync_state_persist(&row, NULL);
			break;
		case SYNC_CLAIM_BUSY:
			sync_claim_refused(row.name, row.holder);
			break;
		case SYNC_CLAIM_MISSING:
			break;				/* deleted since */
	}
	return PointerGetDatum(NULL);
}

/*
 * AFTER DELETE (row) and AFTER TRUNCATE on sync_state: a DELETE that is not
 * syncwf's own fast-path delete (a manual one, or a DELETE statement of
 * state_spi.c) releases at commit like sync_release(); see
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
 * TRUNCATE): remember which names this transaction changed, and the
 * parent rows they named before and after (which may have become, or
 * stopped being, parents: sem_limits.c).
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
	int			parent_att;

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
	parent_att = SPI_fnumber(tupdesc, "parent");
	for (int i = 0; i < ntuples; i++)
	{
		bool		isnull;
		Datum		name = heap_getattr(tuples[i], 1, tupdesc, &isnull);

		if (!isnull)
			sync_limits_changed(relid, TextDatumGetCString(name));
		/* a row named as a parent, or no longer, is changed too (1.8) */
		if (parent_att <= 0)
			continue;
		name = heap_getattr(tuples[i], parent_att, tupdesc, &isnull);
		if (!isnull)
			sync_limits_changed(relid, TextDatumGetCString(name));
	}
	return PointerGetDatum(NULL);
}

/*
 * Trigger on sync_fair_weight (AFTER INSERT OR UPDATE OR DELETE OR
 * TRUNCATE, per statement): the weights are read again at pre-commit and
 * applied at commit (fair_weights.c).
 */
PG_FUNCTION_INFO_V1(sync_fair_weight_changed);
Datum
sync_fair_weight_changed(PG_FUNCTION_ARGS)
{
	(void) sync_trigger_data(fcinfo, "sync_fair_weight_changed");
	sync_require_shmem();
	sync_fair_weights_changed();
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
 * change made by SQL (another system moving phases) gets the slots repaired
 * by the worker when it commits.  syncwf's own functions write the rows
 * through the table access method (launch_heap.c) and fire no trigger.
 */
PG_FUNCTION_INFO_V1(sync_execution_changed);
Datum
sync_execution_changed(PG_FUNCTION_ARGS)
{
	(void) sync_trigger_data(fcinfo, "sync_execution_changed");
	sync_require_shmem();
	sync_keyed_wake_at_commit();
	return PointerGetDatum(NULL);
}

/*
 * BEFORE INSERT OR UPDATE OF phase, finished_at (row) on sync_execution
 * (from version 1.4): finished_at is set exactly when the phase is final,
 * whatever the writer says, so that the index sync_execution_live (WHERE
 * finished_at IS NULL) holds exactly the live executions.  A final phase
 * keeps the finished_at written (the server's clock when none is); a live
 * phase clears it.  An unknown phase is left to the phase CHECK (23514).
 * syncwf's own functions write finished_at so and fire no trigger
 * (launch_heap.c).
 */
PG_FUNCTION_INFO_V1(sync_execution_finished);
Datum
sync_execution_finished(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = sync_trigger_data(fcinfo, "sync_execution_finished");
	HeapTuple	tuple;
	TupleDesc	desc;
	int			col;
	char	   *phase;
	LaunchPhase ph;
	bool		isnull;
	Datum		value = (Datum) 0;

	if (!TRIGGER_FIRED_BEFORE(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) ||
		TRIGGER_FIRED_BY_DELETE(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("sync_execution_finished() must be fired BEFORE INSERT OR UPDATE FOR EACH ROW")));
	tuple = TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event) ?
		trigdata->tg_newtuple : trigdata->tg_trigtuple;
	desc = RelationGetDescr(trigdata->tg_relation);
	col = SPI_fnumber(desc, "finished_at");
	phase = sync_tuple_text(tuple, desc, "phase");
	if (col <= 0 || phase == NULL || (ph = sync_phase_of(phase, false)) == PH_COUNT)
		return PointerGetDatum(tuple);
	(void) heap_getattr(tuple, col, desc, &isnull);
	if (sync_phase_terminal(ph) != isnull)
		return PointerGetDatum(tuple);	/* already as it should be */
	/* final without a time: now; live with one: none */
	if (isnull)
		value = TimestampTzGetDatum(GetCurrentTimestamp());
	isnull = !isnull;
	return PointerGetDatum(heap_modify_tuple_by_cols(tuple, desc, 1, &col,
													 &value, &isnull));
}
