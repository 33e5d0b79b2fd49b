/*-------------------------------------------------------------------------
 *
 * sql_views.c
 *		The set-returning functions behind the monitoring views sync_locks,
 *		sync_holders and sync_waiters: each passes the entry guard, takes
 *		a copy from view_snapshots.c and forms the rows; the view sync_lock_stats
 *		and sync_stats_reset(), over stats.c; the view sync_memory, over the
 *		counts of core/shared_pool.c, lock_table.c and holder_table.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "entry/entry_internal.h"

static const char *
sync_scope_name(uint8 scope)
{
	return scope == SYNC_SCOPE_XACT ? "transaction" :
		scope == SYNC_SCOPE_KEYED ? "keyed" : "session";
}

PG_FUNCTION_INFO_V1(sync_lock_status);
Datum
sync_lock_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	LockRow    *rows;
	int			nrows;

	sync_enter(SYNC_ENTER_LOADED, NULL);
	InitMaterializedSRF(fcinfo, 0);
	nrows = sync_status_locks(&rows);
	/*
	 * Columns past the fifth are filled only if the SQL function has them:
	 * with the 1.4 definition, before ALTER EXTENSION syncwf UPDATE, it has
	 * five (tuplestore_putvalues() takes as many as the descriptor has).
	 */
	Assert(rsinfo->setDesc->natts <= 15);
	for (int i = 0; i < nrows; i++)
	{
		Datum		values[15];
		bool		nulls[15] = {false};

		values[0] = CStringGetTextDatum(rows[i].name);
		values[1] = CStringGetTextDatum(rows[i].kind == SYNC_KIND_MUTEX ? "mutex" : "semaphore");
		values[2] = Int32GetDatum(rows[i].limit);
		nulls[2] = (rows[i].limit < 0);
		values[3] = Int32GetDatum(rows[i].nheld);
		values[4] = Int32GetDatum(rows[i].nwaiting);
		values[5] = rows[i].limit_row ? CStringGetTextDatum(rows[i].limit_row) : (Datum) 0;
		nulls[5] = (rows[i].limit_row == NULL);
		values[6] = Int32GetDatum(rows[i].max_waiters);
		nulls[6] = (rows[i].max_waiters < 0);
		values[7] = Int32GetDatum(rows[i].slots_held);
		values[8] = Int32GetDatum(rows[i].rate_tokens);
		nulls[8] = (rows[i].rate_tokens < 0);
		values[9] = TimestampTzGetDatum(rows[i].rate_next_refill);
		nulls[9] = (rows[i].rate_next_refill == 0);
		/* its parent row (1.8): the level above its own limit */
		values[10] = rows[i].parent_row ? CStringGetTextDatum(rows[i].parent_row) : (Datum) 0;
		nulls[10] = nulls[11] = nulls[12] = (rows[i].parent_row == NULL);
		values[11] = Int32GetDatum(rows[i].parent_limit);
		values[12] = Int32GetDatum(rows[i].parent_slots_held);
		/* its guarantee under the parent, and the slots it holds beyond */
		values[13] = Int32GetDatum(rows[i].guarantee);
		values[14] = Int32GetDatum(Max(rows[i].slots_held - rows[i].guarantee, 0));
		nulls[13] = nulls[14] = nulls[10];
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* Microseconds as an interval (NULL below 0: nothing measured yet). */
static Datum
measured_interval(int64 us, bool *isnull)
{
	Interval   *iv = palloc0(sizeof(Interval));

	*isnull = (us < 0);
	iv->time = us;
	return IntervalPGetDatum(iv);
}

/*
 * The five columns of why a waiter waits (1.8): waiting_for,
 * waiting_for_row, blocking_pids, blocking_holders, estimated_wait; all
 * NULL for a hold.
 */
static void
sync_entry_reason_values(const EntryRow *row, Datum *values, bool *nulls)
{
	Datum	   *pids;
	Datum	   *holders;

	if (row->waiting_for == NULL)
	{
		for (int i = 0; i < 5; i++)
			nulls[i] = true;
		return;
	}
	values[0] = CStringGetTextDatum(row->waiting_for);
	values[1] = row->waiting_row ? CStringGetTextDatum(row->waiting_row) : (Datum) 0;
	nulls[1] = (row->waiting_row == NULL);
	pids = palloc(sizeof(Datum) * Max(row->nblocking_pids, 1));
	for (int i = 0; i < row->nblocking_pids; i++)
		pids[i] = Int32GetDatum(row->blocking_pids[i]);
	holders = palloc(sizeof(Datum) * Max(row->nblocking_holders, 1));
	for (int i = 0; i < row->nblocking_holders; i++)
		holders[i] = CStringGetTextDatum(row->blocking_holders[i]);
	values[2] = PointerGetDatum(construct_array(pids, row->nblocking_pids, INT4OID,
												sizeof(int32), true, TYPALIGN_INT));
	values[3] = PointerGetDatum(construct_array(holders, row->nblocking_holders,
												TEXTOID, -1, false, TYPALIGN_INT));
	values[4] = measured_interval(row->estimate_us, &nulls[4]);
}

PG_FUNCTION_INFO_V1(sync_entry_status);
Datum
sync_entry_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	EntryRow   *rows;
	int			nrows;

	sync_enter(SYNC_ENTER_LOADED, NULL);
	InitMaterializedSRF(fcinfo, 0);
	nrows = sync_status_entries(&rows);
	/*
	 * slots and mode only with the 1.5 definition, passes, fair_key and
	 * fair_weight with 1.6, why it waits and the effective priority with
	 * 1.8 (see above)
	 */
	Assert(rsinfo->setDesc->natts <= 24);
	for (int i = 0; i < nrows; i++)
	{
		EntryRow   *row = &rows[i];
		Datum		values[24];
		bool		nulls[24] = {false};
		bool		held = (row->state == SYNC_ENTRY_HELD);
		bool		keyed = (row->scope == SYNC_SCOPE_KEYED);

		values[0] = CStringGetTextDatum(row->name);
		values[1] = CStringGetTextDatum(held ? "held" : "pending");
		values[2] = Int32GetDatum(row->pid);
		nulls[2] = keyed;
		values[3] = CStringGetTextDatum(sync_scope_name(row->scope));
		values[4] = Int64GetDatum((int64) row->token);
		nulls[4] = !held;
		values[5] = Int32GetDatum(row->priority);
		values[6] = Int32GetDatum(row->position);
		nulls[6] = held || row->state == SYNC_ENTRY_DORMANT;
		values[7] = Int32GetDatum(row->nlocks);
		values[8] = TimestampTzGetDatum(row->since);
		values[9] = row->holder ? CStringGetTextDatum(row->holder) : (Datum) 0;
		nulls[9] = (row->holder == NULL);
		values[10] = row->controller ? CStringGetTextDatum(row->controller) : (Datum) 0;
		nulls[10] = (row->controller == NULL);
		values[11] = TimestampTzGetDatum(row->lease_expires);
		nulls[11] = (row->lease_expires == 0);
		values[12] = BoolGetDatum(row->state != SYNC_ENTRY_DORMANT);
		values[13] = Int32GetDatum(row->slots);
		values[14] = row->kind == SYNC_KIND_MUTEX
			? CStringGetTextDatum(row->shared ? "shared" : "exclusive") : (Datum) 0;
		nulls[14] = (row->kind != SYNC_KIND_MUTEX);
		values[15] = Int32GetDatum(row->passes);
		nulls[15] = held;
		values[16] = row->fair_key ? CStringGetTextDatum(row->fair_key) : (Datum) 0;
		nulls[16] = (row->fair_key == NULL);
		values[17] = Int32GetDatum(row->fair_weight);
		nulls[17] = held;
		sync_entry_reason_values(row, &values[18], &nulls[18]);
		values[23] = Int32GetDatum(row->effective_priority);
		nulls[23] = held;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}


PG_FUNCTION_INFO_V1(sync_lock_stats_rows);
Datum
sync_lock_stats_rows(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	SyncStatsRow *rows;
	int			nrows;

	sync_enter(0, NULL);
	InitMaterializedSRF(fcinfo, 0);
	nrows = sync_stats_snapshot(MyDatabaseId, &rows);
	for (int i = 0; i < nrows; i++)
	{
		SyncStatsRow *row = &rows[i];
		Datum		values[16];
		bool		nulls[16] = {false};

		values[0] = CStringGetTextDatum(row->name);
		values[1] = Int64GetDatum(row->grants_immediate);
		values[2] = Int64GetDatum(row->grants_waited);
		values[3] = Int64GetDatum(row->timeouts);
		values[4] = Int64GetDatum(row->cancels);
		values[5] = Int64GetDatum(row->deadlocks);
		values[6] = Int64GetDatum(row->wait_count);
		values[7] = measured_interval(row->wait_total_us, &nulls[7]);
		values[8] = measured_interval(row->wait_p50_us, &nulls[8]);
		values[9] = measured_interval(row->wait_p99_us, &nulls[9]);
		values[10] = measured_interval(row->wait_count > 0 ? row->wait_max_us : -1,
										 &nulls[10]);
		values[11] = Int64GetDatum(row->hold_count);
		values[12] = measured_interval(row->hold_total_us, &nulls[12]);
		values[13] = Int32GetDatum(row->max_queue);
		values[14] = TimestampTzGetDatum(row->reset_at);
		values[15] = Int64GetDatum(row->preemptions);	/* 1.8 on */
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(sync_stats_reset_sql);
Datum
sync_stats_reset_sql(PG_FUNCTION_ARGS)
{
	char	   *name = NULL;

	sync_enter(0, "reset syncwf statistics");
	if (!PG_ARGISNULL(0))
	{
		name = text_to_cstring(PG_GETARG_TEXT_PP(0));
		if (strcmp(name, "*") != 0)
			(void) sync_parse_lock_name(name);	/* 22023 if invalid */
	}
	PG_RETURN_TIMESTAMPTZ(sync_stats_reset(MyDatabaseId, name));
}

/*
 * The one row of sync_memory: syncwf's shared memory that grows with use,
 * and what is in it.  Counts are read without locks: a moment's picture.
 */
PG_FUNCTION_INFO_V1(sync_memory_status);
Datum
sync_memory_status(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[11];
	bool		nulls[11] = {false};
	uint64		allocated;
	uint64		cap;
	uint64		refused;
	int64		made[SYNC_NUM_POOLS];
	int64		nfree[SYNC_NUM_POOLS];
	int64		used;
	int64		locks;
	int64		cached;

	sync_enter(0, NULL);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	sync_memory_totals(&allocated, &cap, &refused);
	used = (int64) allocated;
	for (int id = 0; id < SYNC_NUM_POOLS; id++)
	{
		sync_pool_counts(id, &made[id], &nfree[id]);
		used -= nfree[id] * (int64) sync_pool_objsize(id);
	}
	sync_lock_counts(&locks, &cached);
	values[0] = Int64GetDatum((int64) allocated);
	values[1] = Int64GetDatum(Max(used, 0));
	values[2] = Int64GetDatum((int64) cap);
	values[3] = Int64GetDatum(locks);
	values[4] = Int64GetDatum(cached);
	values[5] = Int64GetDatum(made[SYNC_POOL_ENTRIES] - nfree[SYNC_POOL_ENTRIES]);
	values[6] = Int64GetDatum(made[SYNC_POOL_HOLDERS] - nfree[SYNC_POOL_HOLDERS]);
	values[7] = Int64GetDatum(made[SYNC_POOL_LOCKS]);
	values[8] = Int64GetDatum(made[SYNC_POOL_ENTRIES]);
	values[9] = Int64GetDatum(made[SYNC_POOL_HOLDERS]);
	values[10] = Int64GetDatum((int64) refused);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
