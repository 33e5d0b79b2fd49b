/*-------------------------------------------------------------------------
 *
 * sql_api.c
 *		The SQL-callable functions: argument checking and conversion around
 *		holds.c, and the set-returning functions behind the monitoring views.
 *
 *-------------------------------------------------------------------------
 */
#include "syncwf.h"

#include "catalog/pg_type_d.h"
#include "common/int.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

/*
 * Interval argument -> microseconds, saturating at PG_INT64_MAX;
 * NULL -> -1 (wait forever).
 */
static int64
sync_timeout_arg(FunctionCallInfo fcinfo, int argno)
{
	Interval   *iv;
	int64		us;

	if (PG_NARGS() <= argno || PG_ARGISNULL(argno))
		return -1;
	iv = PG_GETARG_INTERVAL_P(argno);
	if (pg_mul_s64_overflow((int64) iv->month, (int64) DAYS_PER_MONTH * USECS_PER_DAY, &us) ||
		pg_add_s64_overflow(us, (int64) iv->day * USECS_PER_DAY, &us) ||
		pg_add_s64_overflow(us, iv->time, &us))
	{
		/* beyond int64 microseconds (292,000 years): its sign is all we need */
		double		approx = (double) iv->month * DAYS_PER_MONTH * USECS_PER_DAY +
			(double) iv->day * USECS_PER_DAY + (double) iv->time;

		us = (approx < 0) ? -1 : PG_INT64_MAX;
	}
	if (us < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("timeout must not be negative"),
				 errhint("Pass NULL to wait until the lock is granted, or interval '0' not to wait.")));
	return us;
}

static int32
sync_priority_arg(FunctionCallInfo fcinfo, int argno)
{
	if (PG_NARGS() <= argno)
		return 0;
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("priority must not be null"),
				 errhint("Omit the argument for the default priority 0.")));
	return PG_GETARG_INT32(argno);
}

static char *
sync_name_arg(FunctionCallInfo fcinfo, int argno)
{
	char	   *name;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lock name must not be null")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	(void) sync_parse_lock_name(name);
	return name;
}

/* text[] argument -> validated, distinct lock names. */
static char **
sync_names_arg(FunctionCallInfo fcinfo, int argno, int *nnames)
{
	ArrayType  *array;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	char	  **names;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lock names must not be null")));
	array = PG_GETARG_ARRAYTYPE_P(argno);
	if (ARR_NDIM(array) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("lock names must be a one-dimensional array")));
	deconstruct_array(array, TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &nulls, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lock names must not be empty"),
				 errhint("Pass at least one lock name.")));
	if (n > SYNC_MAX_REQUEST_LOCKS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many locks in one request"),
				 errdetail("The request names %d locks; at most %d are allowed.",
						   n, SYNC_MAX_REQUEST_LOCKS)));

	names = palloc(sizeof(char *) * n);
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("lock names must not contain null")));
		names[i] = TextDatumGetCString(elems[i]);
		(void) sync_parse_lock_name(names[i]);
		for (int j = 0; j < i; j++)
			if (strcmp(names[i], names[j]) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("lock \"%s\" appears more than once in the request",
								names[i]),
						 errhint("Name each lock once.")));
	}
	*nnames = n;
	return names;
}

static Datum
sync_acquire_one(FunctionCallInfo fcinfo, SyncScope scope, bool wait)
{
	char	   *name = sync_name_arg(fcinfo, 0);
	int32		priority = sync_priority_arg(fcinfo, 1);
	int64		timeout_us = wait ? sync_timeout_arg(fcinfo, 2) : -1;
	int64		token;

	if (!sync_acquire_locks(&name, 1, priority, scope, wait, timeout_us,
							fcinfo->flinfo->fn_oid, &token))
		PG_RETURN_NULL();
	PG_RETURN_INT64(token);
}

static Datum
sync_acquire_many(FunctionCallInfo fcinfo, SyncScope scope, bool wait)
{
	int			nnames;
	char	  **names = sync_names_arg(fcinfo, 0, &nnames);
	int32		priority = sync_priority_arg(fcinfo, 1);
	int64		timeout_us = wait ? sync_timeout_arg(fcinfo, 2) : -1;
	int64	   *tokens = palloc(sizeof(int64) * nnames);
	Datum	   *values = palloc(sizeof(Datum) * nnames);

	if (!sync_acquire_locks(names, nnames, priority, scope, wait, timeout_us,
							fcinfo->flinfo->fn_oid, tokens))
		PG_RETURN_NULL();
	for (int i = 0; i < nnames; i++)
		values[i] = Int64GetDatum(tokens[i]);
	PG_RETURN_ARRAYTYPE_P(construct_array(values, nnames, INT8OID, 8,
										  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

PG_FUNCTION_INFO_V1(sync_acquire);
Datum
sync_acquire(PG_FUNCTION_ARGS)
{
	return sync_acquire_one(fcinfo, SYNC_SCOPE_SESSION, true);
}

PG_FUNCTION_INFO_V1(sync_try_acquire);
Datum
sync_try_acquire(PG_FUNCTION_ARGS)
{
	return sync_acquire_one(fcinfo, SYNC_SCOPE_SESSION, false);
}

PG_FUNCTION_INFO_V1(sync_acquire_xact);
Datum
sync_acquire_xact(PG_FUNCTION_ARGS)
{
	return sync_acquire_one(fcinfo, SYNC_SCOPE_XACT, true);
}

PG_FUNCTION_INFO_V1(sync_try_acquire_xact);
Datum
sync_try_acquire_xact(PG_FUNCTION_ARGS)
{
	return sync_acquire_one(fcinfo, SYNC_SCOPE_XACT, false);
}

PG_FUNCTION_INFO_V1(sync_acquire_array);
Datum
sync_acquire_array(PG_FUNCTION_ARGS)
{
	return sync_acquire_many(fcinfo, SYNC_SCOPE_SESSION, true);
}

PG_FUNCTION_INFO_V1(sync_try_acquire_array);
Datum
sync_try_acquire_array(PG_FUNCTION_ARGS)
{
	return sync_acquire_many(fcinfo, SYNC_SCOPE_SESSION, false);
}

PG_FUNCTION_INFO_V1(sync_acquire_xact_array);
Datum
sync_acquire_xact_array(PG_FUNCTION_ARGS)
{
	return sync_acquire_many(fcinfo, SYNC_SCOPE_XACT, true);
}

PG_FUNCTION_INFO_V1(sync_try_acquire_xact_array);
Datum
sync_try_acquire_xact_array(PG_FUNCTION_ARGS)
{
	return sync_acquire_many(fcinfo, SYNC_SCOPE_XACT, false);
}

PG_FUNCTION_INFO_V1(sync_release);
Datum
sync_release(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(sync_release_lock(sync_name_arg(fcinfo, 0)));
}

PG_FUNCTION_INFO_V1(sync_release_all);
Datum
sync_release_all(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(sync_release_all_holds());
}

/*
 * Monitoring.  Copy what we need under the partition locks (all of them,
 * shared, in order), then build the result with no lock held.  Cached
 * semaphores (no holder, no waiter) are not shown.
 */
typedef struct LockRow
{
	char	   *name;
	uint8		kind;
	int32		limit;
	int32		nheld;
	int32		nwaiting;
} LockRow;

typedef struct EntryRow
{
	const char *name;
	uint8		state;
	uint8		scope;
	int32		pid;
	int32		priority;
	int32		position;
	int32		nlocks;
	uint64		token;
	TimestampTz since;
} EntryRow;

static const char *
sync_scope_name(uint8 scope)
{
	return scope == SYNC_SCOPE_XACT ? "transaction" : "session";
}

PG_FUNCTION_INFO_V1(sync_lock_status);
Datum
sync_lock_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	uint32		all = (1U << SYNC_NUM_PARTITIONS) - 1;
	HASH_SEQ_STATUS status;
	SyncLock   *lock;
	LockRow    *rows;
	int			nrows = 0;
	int			maxrows;

	sync_require_shmem();
	InitMaterializedSRF(fcinfo, 0);

	sync_lock_partitions(all, LW_SHARED);
	maxrows = Max(hash_get_num_entries(sync_lock_hash()), 1);
	rows = palloc_extended(sizeof(LockRow) * maxrows, MCXT_ALLOC_HUGE);
	hash_seq_init(&status, sync_lock_hash());
	while ((lock = hash_seq_search(&status)) != NULL)
	{
		LockRow    *row;

		if (lock->tag.dbid != MyDatabaseId || lock->cached)
			continue;
		row = &rows[nrows++];
		row->name = pstrdup(lock->tag.name);
		row->kind = lock->kind;
		row->limit = lock->limit_defined ? sync_lock_slots(lock) : -1;
		row->nheld = lock->nheld;
		row->nwaiting = lock->nwaiting;
	}
	sync_unlock_partitions(all);

	for (int i = 0; i < nrows; i++)
	{
		Datum		values[5];
		bool		nulls[5] = {false};

		values[0] = CStringGetTextDatum(rows[i].name);
		values[1] = CStringGetTextDatum(rows[i].kind == SYNC_KIND_MUTEX ? "mutex" : "semaphore");
		values[2] = Int32GetDatum(rows[i].limit);
		nulls[2] = (rows[i].limit < 0);
		values[3] = Int32GetDatum(rows[i].nheld);
		values[4] = Int32GetDatum(rows[i].nwaiting);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

static int
sync_copy_entries(dlist_head *list, EntryRow *rows, int nrows, const char *name,
				  bool queued)
{
	dlist_iter	iter;
	int			position = 0;

	dlist_foreach(iter, list)
	{
		SyncEntry  *e = dlist_container(SyncEntry, lock_link, iter.cur);
		EntryRow   *row = &rows[nrows++];

		row->name = name;
		row->state = e->state;
		row->scope = e->scope;
		row->pid = e->pid;
		row->priority = e->priority;
		row->position = queued ? ++position : 0;
		row->nlocks = e->nlocks;
		row->token = e->token;
		row->since = e->since;
	}
	return nrows;
}

PG_FUNCTION_INFO_V1(sync_entry_status);
Datum
sync_entry_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	uint32		all = (1U << SYNC_NUM_PARTITIONS) - 1;
	HASH_SEQ_STATUS status;
	SyncLock   *lock;
	EntryRow   *rows;
	int			nrows = 0;
	int			maxrows;

	sync_require_shmem();
	InitMaterializedSRF(fcinfo, 0);

	sync_lock_partitions(all, LW_SHARED);
	/* every entry belongs to a live lock, so this bounds the row count */
	maxrows = Max(sync_max_entries - SyncState->pool_nfree, 1);
	rows = palloc_extended(sizeof(EntryRow) * maxrows, MCXT_ALLOC_HUGE);
	hash_seq_init(&status, sync_lock_hash());
	while ((lock = hash_seq_search(&status)) != NULL)
	{
		char	   *name;

		if (lock->tag.dbid != MyDatabaseId || lock->cached)
			continue;
		name = pstrdup(lock->tag.name);
		nrows = sync_copy_entries(&lock->holders, rows, nrows, name, false);
		nrows = sync_copy_entries(&lock->waiters, rows, nrows, name, true);
	}
	sync_unlock_partitions(all);

	for (int i = 0; i < nrows; i++)
	{
		EntryRow   *row = &rows[i];
		Datum		values[9];
		bool		nulls[9] = {false};
		bool		held = (row->state == SYNC_ENTRY_HELD);

		values[0] = CStringGetTextDatum(row->name);
		values[1] = CStringGetTextDatum(held ? "held" : "pending");
		values[2] = Int32GetDatum(row->pid);
		values[3] = CStringGetTextDatum(sync_scope_name(row->scope));
		values[4] = Int64GetDatum((int64) row->token);
		nulls[4] = !held;
		values[5] = Int32GetDatum(row->priority);
		values[6] = Int32GetDatum(row->position);
		nulls[6] = held;
		values[7] = Int32GetDatum(row->nlocks);
		values[8] = TimestampTzGetDatum(row->since);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
