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

/* An interval in microseconds, saturating at PG_INT64_MAX (or -1). */
int64
sync_interval_us(Interval *iv)
{
	int64		us;

	if (pg_mul_s64_overflow((int64) iv->month, (int64) DAYS_PER_MONTH * USECS_PER_DAY, &us) ||
		pg_add_s64_overflow(us, (int64) iv->day * USECS_PER_DAY, &us) ||
		pg_add_s64_overflow(us, iv->time, &us))
	{
		/* beyond int64 microseconds (292,000 years): its sign is all we need */
		double		approx = (double) iv->month * DAYS_PER_MONTH * USECS_PER_DAY +
			(double) iv->day * USECS_PER_DAY + (double) iv->time;

		us = (approx < 0) ? -1 : PG_INT64_MAX;
	}
	return us;
}

/*
 * Interval argument -> microseconds, saturating at PG_INT64_MAX;
 * NULL -> -1 (wait forever).
 */
static int64
sync_timeout_arg(FunctionCallInfo fcinfo, int argno)
{
	int64		us;

	if (PG_NARGS() <= argno || PG_ARGISNULL(argno))
		return -1;
	us = sync_interval_us(PG_GETARG_INTERVAL_P(argno));
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
	char	   *holder;			/* keyed */
	char	   *controller;		/* keyed, with a controller */
	TimestampTz lease_expires;	/* keyed, with a lease */
} EntryRow;

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
	uint32		all = SYNC_ALL_PARTITIONS;
	HASH_SEQ_STATUS status;
	SyncLock   *lock;
	LockRow    *rows;
	int			nrows = 0;
	int			maxrows;

	sync_require_shmem();
	sync_keyed_ensure_loaded();
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
		/* (a launch plan's lock without an overall limit shows none) */
		row->limit = (lock->limit_defined && sync_lock_slots(lock) != PG_INT32_MAX) ?
			sync_lock_slots(lock) : -1;
		row->nheld = lock->nheld;
		row->nwaiting = lock->nwaiting + lock->ndormant;
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
		row->holder = NULL;
		row->controller = NULL;
		row->lease_expires = 0;
		if (e->scope == SYNC_SCOPE_KEYED)
		{
			row->holder = pstrdup(e->holder->tag.key);
			if (e->controller >= 0)
				row->controller = pstrdup(sync_controller_name(e->controller));
			row->lease_expires = e->lease_expires;
		}
	}
	return nrows;
}

PG_FUNCTION_INFO_V1(sync_entry_status);
Datum
sync_entry_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	uint32		all = SYNC_ALL_PARTITIONS;
	HASH_SEQ_STATUS status;
	SyncLock   *lock;
	EntryRow   *rows;
	int			nrows = 0;
	int			maxrows;

	sync_require_shmem();
	sync_keyed_ensure_loaded();
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
		nrows = sync_copy_entries(&lock->dormant, rows, nrows, name, false);
	}
	sync_unlock_partitions(all);

	for (int i = 0; i < nrows; i++)
	{
		EntryRow   *row = &rows[i];
		Datum		values[13];
		bool		nulls[13] = {false};
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
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*-------------------------------------------------------------------------
 * Keyed holds
 *-------------------------------------------------------------------------
 */

/* A holder key or controller name: not empty, at most 255 bytes, no controls. */
static char *
sync_key_arg(FunctionCallInfo fcinfo, int argno, const char *what, bool nullable)
{
	char	   *key;

	if (PG_ARGISNULL(argno))
	{
		if (nullable)
			return NULL;
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", what)));
	}
	key = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	if (key[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", what),
				 strcmp(what, "holder") == 0 ?
				 errhint("Use the workflow key, for example 'namespace/workflow'.") :
				 errhint("Use the controller's name, or NULL for none.")));
	if (strlen(key) > SYNC_KEY_MAXLEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is too long", what),
				 errdetail("It is %zu bytes; at most %d are allowed.",
						   strlen(key), SYNC_KEY_MAXLEN)));
	for (const char *p = key; *p; p++)
		if ((unsigned char) *p < 0x20 || *p == 0x7f)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must not contain control characters", what)));
	return key;
}

/* A lease: NULL for none, otherwise positive. */
static int64
sync_lease_arg(FunctionCallInfo fcinfo, int argno)
{
	int64		us;

	if (PG_NARGS() <= argno || PG_ARGISNULL(argno))
		return 0;
	us = sync_interval_us(PG_GETARG_INTERVAL_P(argno));
	if (us <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lease must be positive"),
				 errhint("Pass NULL for a hold without a lease.")));
	return us;
}

static const char *
sync_keyed_status(SyncKeyedResult *r)
{
	return r->held ? "held" : "pending";
}

/* sync_request(lock_name, holder, priority, controller, lease, queued_at) */
static void
sync_request_common(FunctionCallInfo fcinfo, char **names, int nnames, bool with_names)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *holder = sync_key_arg(fcinfo, 1, "holder", false);
	/* NULL: 0 for a new request, unchanged for an existing one */
	bool		has_priority = !PG_ARGISNULL(2);
	int32		priority = has_priority ? PG_GETARG_INT32(2) : 0;
	char	   *controller = sync_key_arg(fcinfo, 3, "controller", true);
	int64		lease_us = sync_lease_arg(fcinfo, 4);
	bool		has_queued_at = !PG_ARGISNULL(5);
	TimestampTz queued_at = has_queued_at ? PG_GETARG_TIMESTAMPTZ(5) : 0;
	SyncKeyedResult *results = palloc0(sizeof(SyncKeyedResult) * nnames);

	if (has_queued_at && TIMESTAMP_NOT_FINITE(queued_at))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("queued_at must be a finite time"),
				 errhint("Pass the workflow's creation time, or NULL for now.")));

	InitMaterializedSRF(fcinfo, 0);
	sync_keyed_request(names, nnames, holder, SYNC_KEYED_QUEUE, -1,
					   has_priority, priority,
					   controller, lease_us,
					   has_queued_at, queued_at, results);
	for (int i = 0; i < nnames; i++)
	{
		Datum		values[4];
		bool		nulls[4] = {false};
		int			k = 0;

		if (with_names)
			values[k++] = CStringGetTextDatum(names[i]);
		values[k++] = CStringGetTextDatum(sync_keyed_status(&results[i]));
		values[k] = Int64GetDatum(results[i].token);
		nulls[k++] = !results[i].held;
		values[k] = Int32GetDatum(results[i].position);
		nulls[k++] = (results[i].position == 0);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

PG_FUNCTION_INFO_V1(sync_request);
Datum
sync_request(PG_FUNCTION_ARGS)
{
	char	   *name = sync_name_arg(fcinfo, 0);

	sync_request_common(fcinfo, &name, 1, false);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(sync_request_array);
Datum
sync_request_array(PG_FUNCTION_ARGS)
{
	int			nnames;
	char	  **names = sync_names_arg(fcinfo, 0, &nnames);

	sync_request_common(fcinfo, names, nnames, true);
	return (Datum) 0;
}

/* sync_release(lock_name, holder): release the hold or withdraw the request. */
PG_FUNCTION_INFO_V1(sync_release_keyed);
Datum
sync_release_keyed(PG_FUNCTION_ARGS)
{
	char	   *name = sync_name_arg(fcinfo, 0);
	char	   *holder = sync_key_arg(fcinfo, 1, "holder", false);
	SyncKeyedInfo info;

	sync_keyed_require_database();
	sync_keyed_require_writable();
	if (!sync_keyed_lookup(name, holder, &info))
		PG_RETURN_BOOL(false);
	sync_check_owner(info.owner, name, holder);
	PG_RETURN_BOOL(sync_state_delete(name, holder, "released") > 0);
}

/* sync_release_holder(holder): everything of that holder. */
PG_FUNCTION_INFO_V1(sync_release_holder);
Datum
sync_release_holder(PG_FUNCTION_ARGS)
{
	char	   *holder = sync_key_arg(fcinfo, 0, "holder", false);
	List	   *names;
	ListCell   *lc;
	int			n;

	sync_keyed_require_database();
	sync_keyed_require_writable();
	names = sync_keyed_holder_locks(holder);

	/* check every one first: all or nothing */
	foreach(lc, names)
	{
		SyncKeyedInfo info;

		if (sync_keyed_lookup((char *) lfirst(lc), holder, &info))
			sync_check_owner(info.owner, (char *) lfirst(lc), holder);
	}
	n = 0;
	foreach(lc, names)
		n += sync_state_delete((char *) lfirst(lc), holder, "released");
	PG_RETURN_INT32(n);
}

PG_FUNCTION_INFO_V1(sync_heartbeat);
Datum
sync_heartbeat(PG_FUNCTION_ARGS)
{
	char	   *controller = sync_key_arg(fcinfo, 0, "controller", false);
	TimestampTz at;

	sync_require_shmem();
	sync_backend_setup();
	sync_keyed_require_database();
	sync_keyed_require_writable();
	sync_keyed_ensure_loaded();
	/* the slot now, so that a full registry is reported here */
	(void) sync_controller_slot(controller, true);
	/* the trigger on sync_controller applies it when we commit */
	at = sync_controller_upsert(controller);
	PG_RETURN_TIMESTAMPTZ(at);
}

static void
sync_report_lost(const char *name, const char *holder)
{
	ereport(ERROR,
			(errcode(ERRCODE_SYNC_HOLD_LOST),
			 errmsg("keyed hold \"%s\" of holder \"%s\" is lost", name, holder),
			 errdetail("It is not held: it was released, its lease expired, or it was never granted."),
			 errhint("Stop using what it protected, and request it again with sync_request().")));
}

/* sync_refresh(lock_name, holder, lease): extend the lease of a hold. */
PG_FUNCTION_INFO_V1(sync_refresh);
Datum
sync_refresh(PG_FUNCTION_ARGS)
{
	char	   *name = sync_name_arg(fcinfo, 0);
	char	   *holder = sync_key_arg(fcinfo, 1, "holder", false);
	int64		lease_us = sync_lease_arg(fcinfo, 2);
	SyncKeyedInfo info;
	TimestampTz expires;
	bool		found;

	sync_keyed_require_database();
	sync_keyed_require_writable();
	if (!sync_keyed_lookup(name, holder, &info) || info.state != SYNC_ENTRY_HELD)
		sync_report_lost(name, holder);
	sync_check_owner(info.owner, name, holder);
	/* no lease given: the row's (as this transaction left it) */
	expires = sync_state_refresh(name, holder, lease_us, &found);
	if (!found)
		sync_report_lost(name, holder);
	sync_keyed_note_refresh(info.entry, info.request_id, lease_us, expires);
	if (expires == 0)
		PG_RETURN_NULL();		/* held, with no lease to extend */
	PG_RETURN_TIMESTAMPTZ(expires);
}

/* sync_is_held(lock_name, holder, token): is it (that grant) still held? */
PG_FUNCTION_INFO_V1(sync_is_held);
Datum
sync_is_held(PG_FUNCTION_ARGS)
{
	char	   *name = sync_name_arg(fcinfo, 0);
	char	   *holder = sync_key_arg(fcinfo, 1, "holder", false);
	SyncKeyedInfo info;

	/* a grant not yet written to sync_state does not count yet */
	if (!sync_keyed_lookup(name, holder, &info) || info.state != SYNC_ENTRY_HELD ||
		!info.persisted)
		PG_RETURN_BOOL(false);
	if (PG_NARGS() > 2 && !PG_ARGISNULL(2) && PG_GETARG_INT64(2) != info.token)
		PG_RETURN_BOOL(false);
	PG_RETURN_BOOL(true);
}

static void
sync_require_admin(const char *action)
{
	if (!sync_is_admin(GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to %s", action),
				 errhint("Only the extension's owner and members of syncwf_admin may do this.")));
}

/* sync_force_release(lock_name, holder): admin; announces "lost". */
PG_FUNCTION_INFO_V1(sync_force_release);
Datum
sync_force_release(PG_FUNCTION_ARGS)
{
	char	   *name = sync_name_arg(fcinfo, 0);
	char	   *holder = sync_key_arg(fcinfo, 1, "holder", false);

	sync_require_shmem();
	sync_keyed_require_database();
	sync_require_admin("force-release keyed holds");
	sync_keyed_require_writable();
	sync_keyed_ensure_loaded();
	PG_RETURN_BOOL(sync_state_delete(name, holder, "forced release") > 0);
}

/* sync_forget_controller(controller, release_holds): admin. */
PG_FUNCTION_INFO_V1(sync_forget_controller);
Datum
sync_forget_controller(PG_FUNCTION_ARGS)
{
	char	   *controller = sync_key_arg(fcinfo, 0, "controller", false);
	bool		release_holds = PG_ARGISNULL(1) ? false : PG_GETARG_BOOL(1);

	sync_require_shmem();
	sync_keyed_require_database();
	sync_require_admin("forget controllers");
	sync_keyed_require_writable();
	sync_keyed_ensure_loaded();
	PG_RETURN_INT32(sync_controller_forget(controller, release_holds));
}

/* sync_reconcile(): one round of the worker's work, in this transaction. */
PG_FUNCTION_INFO_V1(sync_reconcile);
Datum
sync_reconcile(PG_FUNCTION_ARGS)
{
	sync_require_shmem();
	sync_backend_setup();
	sync_keyed_require_database();
	sync_keyed_require_writable();
	PG_RETURN_INT32(sync_reconcile_round(NULL));
}
