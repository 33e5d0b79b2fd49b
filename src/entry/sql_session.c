/*-------------------------------------------------------------------------
 *
 * sql_session.c
 *		The SQL-callable functions of session and transaction holds:
 *		sync_acquire(), sync_try_acquire() and their _xact and array forms,
 *		sync_release() and sync_release_all().  Each reads its arguments,
 *		passes the entry guard, calls backend_holds.c once and forms the result.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "utils/array.h"

#include "entry/entry_internal.h"

/*
 * The two forms of each acquire function, whose arguments differ after the
 * lock name(s) and priority.
 */
typedef enum AcquireForm
{
	ACQUIRE_WAITING,			/* timeout, slots, mode, fair_key */
	ACQUIRE_TRYING				/* slots, mode */
} AcquireForm;

/* The options of an acquire in 'scope', from its arguments after the names. */
static void
sync_acquire_options(FunctionCallInfo fcinfo, SyncScope scope, AcquireForm form,
					 SyncAcquireOptions *opts)
{
	bool		wait = (form == ACQUIRE_WAITING);

	memset(opts, 0, sizeof(SyncAcquireOptions));
	opts->scope = scope;
	opts->wait = wait;
	opts->priority = sync_priority_arg(fcinfo, 1);
	opts->timeout_us = wait ? sync_timeout_arg(fcinfo, 2) : -1;
	opts->slots = sync_slots_arg(fcinfo, wait ? 3 : 2);
	opts->shared = sync_mode_arg(fcinfo, wait ? 4 : 3);
	opts->fair_key = wait ? sync_fair_key_arg(fcinfo, 5) : NULL;
}

static Datum
sync_acquire_one(FunctionCallInfo fcinfo, SyncScope scope, AcquireForm form)
{
	char	   *name = sync_name_arg(fcinfo, 0);
	SyncAcquireOptions opts;
	int64		token;

	sync_acquire_options(fcinfo, scope, form, &opts);
	sync_enter(SYNC_ENTER_LOADED, NULL);
	if (!sync_acquire_locks(&name, 1, &opts, &token))
		PG_RETURN_NULL();
	PG_RETURN_INT64(token);
}

static Datum
sync_acquire_many(FunctionCallInfo fcinfo, SyncScope scope, AcquireForm form)
{
	int			nnames;
	char	  **names = sync_names_arg(fcinfo, 0, &nnames);
	SyncAcquireOptions opts;
	int64	   *tokens;

	sync_acquire_options(fcinfo, scope, form, &opts);
	tokens = palloc(sizeof(int64) * nnames);
	sync_enter(SYNC_ENTER_LOADED, NULL);
	if (!sync_acquire_locks(names, nnames, &opts, tokens))
		PG_RETURN_NULL();
	PG_RETURN_ARRAYTYPE_P(sync_tokens_array(tokens, nnames));
}

PG_FUNCTION_INFO_V1(sync_acquire);
Datum
sync_acquire(PG_FUNCTION_ARGS)
{
	return sync_acquire_one(fcinfo, SYNC_SCOPE_SESSION, ACQUIRE_WAITING);
}

PG_FUNCTION_INFO_V1(sync_try_acquire);
Datum
sync_try_acquire(PG_FUNCTION_ARGS)
{
	return sync_acquire_one(fcinfo, SYNC_SCOPE_SESSION, ACQUIRE_TRYING);
}

PG_FUNCTION_INFO_V1(sync_acquire_xact);
Datum
sync_acquire_xact(PG_FUNCTION_ARGS)
{
	return sync_acquire_one(fcinfo, SYNC_SCOPE_XACT, ACQUIRE_WAITING);
}

PG_FUNCTION_INFO_V1(sync_try_acquire_xact);
Datum
sync_try_acquire_xact(PG_FUNCTION_ARGS)
{
	return sync_acquire_one(fcinfo, SYNC_SCOPE_XACT, ACQUIRE_TRYING);
}

PG_FUNCTION_INFO_V1(sync_acquire_array);
Datum
sync_acquire_array(PG_FUNCTION_ARGS)
{
	return sync_acquire_many(fcinfo, SYNC_SCOPE_SESSION, ACQUIRE_WAITING);
}

PG_FUNCTION_INFO_V1(sync_try_acquire_array);
Datum
sync_try_acquire_array(PG_FUNCTION_ARGS)
{
	return sync_acquire_many(fcinfo, SYNC_SCOPE_SESSION, ACQUIRE_TRYING);
}

PG_FUNCTION_INFO_V1(sync_acquire_xact_array);
Datum
sync_acquire_xact_array(PG_FUNCTION_ARGS)
{
	return sync_acquire_many(fcinfo, SYNC_SCOPE_XACT, ACQUIRE_WAITING);
}

PG_FUNCTION_INFO_V1(sync_try_acquire_xact_array);
Datum
sync_try_acquire_xact_array(PG_FUNCTION_ARGS)
{
	return sync_acquire_many(fcinfo, SYNC_SCOPE_XACT, ACQUIRE_TRYING);
}

PG_FUNCTION_INFO_V1(sync_release);
Datum
sync_release(PG_FUNCTION_ARGS)
{
	char	   *name = sync_name_arg(fcinfo, 0);

	sync_enter(0, NULL);
	PG_RETURN_BOOL(sync_release_lock(name));
}

PG_FUNCTION_INFO_V1(sync_release_all);
Datum
sync_release_all(PG_FUNCTION_ARGS)
{
	sync_enter(0, NULL);
	PG_RETURN_INT32(sync_release_all_holds());
}
