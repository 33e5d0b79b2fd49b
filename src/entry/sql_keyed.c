/*-------------------------------------------------------------------------
 *
 * sql_keyed.c
 *		The SQL-callable functions of keyed holds: sync_request() and its
 *		array form, sync_release(lock, holder), sync_release_holder(),
 *		sync_heartbeat(), sync_refresh(), sync_is_held(), sync_wait()
 *		and its array form, sync_channel(), sync_force_release(),
 *		sync_forget_controller() and sync_reconcile().  Each reads its
 *		arguments, passes the entry guard, calls keyed_ops.c (or
 *		reconcile.c, notify_payloads.c) once and forms the result.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "entry/entry_internal.h"

/*
 * A grant is about to be reported: first make sure the synchronous
 * standbys have every keyed commit that PostgreSQL made visible without
 * them (tokens.c); if that wait is canceled, report nothing.
 */
static void
sync_require_replicated(void)
{
	if (!sync_commits_replicated(true))
		ereport(ERROR,
				(errcode(ERRCODE_QUERY_CANCELED),
				 errmsg("canceling: a grant is not yet known to the synchronous standby"),
				 errdetail("A commit of keyed holds became visible on this server without the synchronous standby's acknowledgement, and the wait for it was canceled."),
				 errhint("Ask again once the synchronous standby is reachable.")));
}

/*
 * sync_request(lock_name, holder, priority, controller, lease, queued_at,
 * slots, mode, fair_key, preemptible), for one lock or several (with_names: the rows name their
 * lock).
 */
static void
sync_request_common(FunctionCallInfo fcinfo, char **names, int nnames, bool with_names)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	SyncKeyedRequest kr;
	SyncKeyedResult *results = palloc0(sizeof(SyncKeyedResult) * nnames);

	memset(&kr, 0, sizeof(kr));
	kr.names = names;
	kr.nnames = nnames;
	kr.holder = sync_key_arg(fcinfo, 1, "holder", false);
	kr.mode = SYNC_KEYED_QUEUE;
	kr.admit_limit = -1;
	/* NULL: 0 for a new request, unchanged for an existing one */
	kr.has_priority = !PG_ARGISNULL(2);
	kr.priority = kr.has_priority ? PG_GETARG_INT32(2) : 0;
	kr.controller = sync_key_arg(fcinfo, 3, "controller", true);
	kr.lease_us = sync_lease_arg(fcinfo, 4);
	kr.has_queued_at = !PG_ARGISNULL(5);
	kr.queued_at = kr.has_queued_at ? PG_GETARG_TIMESTAMPTZ(5) : 0;
	if (kr.has_queued_at && TIMESTAMP_NOT_FINITE(kr.queued_at))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("queued_at must be a finite time"),
				 errhint("Pass the workflow's creation time, or NULL for now.")));
	kr.slots = sync_slots_arg(fcinfo, 6);
	kr.shared = sync_mode_arg(fcinfo, 7);
	kr.fair_key = sync_fair_key_arg(fcinfo, 8);
	/* (1.8: a version before it passes no such argument) */
	kr.preemptible = PG_NARGS() > 9 && !PG_ARGISNULL(9) && PG_GETARG_BOOL(9);
	if (kr.preemptible && nnames > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a request of several locks cannot be preemptible"),
				 errdetail("Preemption ends the hold of one lock, for a waiter of that lock."),
				 errhint("Request each lock on its own with preemptible => true, or leave preemptible false.")));

	InitMaterializedSRF(fcinfo, 0);
	sync_enter(SYNC_ENTER_KEYED_DB | SYNC_ENTER_WRITE | SYNC_ENTER_LOADED, NULL);
	sync_keyed_request(&kr, results);
	for (int i = 0; i < nnames; i++)
		if (results[i].held)
		{
			sync_require_replicated();
			break;
		}
	for (int i = 0; i < nnames; i++)
	{
		Datum		values[4];
		bool		nulls[4] = {false};
		int			k = 0;

		if (with_names)
			values[k++] = CStringGetTextDatum(names[i]);
		values[k++] = CStringGetTextDatum(results[i].held ? "held" : "pending");
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

	sync_enter(SYNC_ENTER_KEYED_DB | SYNC_ENTER_WRITE | SYNC_ENTER_LOADED, NULL);
	PG_RETURN_BOOL(sync_keyed_release(name, holder));
}

/* sync_release_holder(holder): everything of that holder. */
PG_FUNCTION_INFO_V1(sync_release_holder);
Datum
sync_release_holder(PG_FUNCTION_ARGS)
{
	char	   *holder = sync_key_arg(fcinfo, 0, "holder", false);

	sync_enter(SYNC_ENTER_KEYED_DB | SYNC_ENTER_WRITE | SYNC_ENTER_LOADED, NULL);
	PG_RETURN_INT32(sync_keyed_release_holder(holder));
}

PG_FUNCTION_INFO_V1(sync_heartbeat);
Datum
sync_heartbeat(PG_FUNCTION_ARGS)
{
	char	   *controller = sync_key_arg(fcinfo, 0, "controller", false);

	sync_enter(SYNC_ENTER_KEYED_DB | SYNC_ENTER_WRITE | SYNC_ENTER_LOADED, NULL);
	PG_RETURN_TIMESTAMPTZ(sync_keyed_heartbeat(controller));
}

/* sync_refresh(lock_name, holder, lease): extend the lease of a hold. */
PG_FUNCTION_INFO_V1(sync_refresh);
Datum
sync_refresh(PG_FUNCTION_ARGS)
{
	char	   *name = sync_name_arg(fcinfo, 0);
	char	   *holder = sync_key_arg(fcinfo, 1, "holder", false);
	int64		lease_us = sync_lease_arg(fcinfo, 2);
	TimestampTz expires;

	sync_enter(SYNC_ENTER_KEYED_DB | SYNC_ENTER_WRITE | SYNC_ENTER_LOADED, NULL);
	expires = sync_keyed_refresh(name, holder, lease_us);
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
	bool		has_token = (PG_NARGS() > 2 && !PG_ARGISNULL(2));

	sync_enter(SYNC_ENTER_KEYED_DB | SYNC_ENTER_LOADED, NULL);
	/* not while a grant may be missing on the synchronous standby */
	PG_RETURN_BOOL(sync_keyed_is_held(name, holder, has_token,
									  has_token ? PG_GETARG_INT64(2) : 0) &&
				   sync_commits_replicated(false));
}

/* sync_wait(lock_name, holder, timeout): block until held; its token. */
PG_FUNCTION_INFO_V1(sync_wait);
Datum
sync_wait(PG_FUNCTION_ARGS)
{
	char	   *name = sync_name_arg(fcinfo, 0);
	char	   *holder = sync_key_arg(fcinfo, 1, "holder", false);
	int64		timeout_us = sync_timeout_arg(fcinfo, 2);
	int64		token;

	sync_enter(SYNC_ENTER_KEYED_DB | SYNC_ENTER_WRITE | SYNC_ENTER_LOADED, NULL);
	sync_keyed_wait(&name, 1, holder, timeout_us, &token);
	sync_require_replicated();
	PG_RETURN_INT64(token);
}

/* sync_wait(lock_names, holder, timeout): every one held; their tokens. */
PG_FUNCTION_INFO_V1(sync_wait_array);
Datum
sync_wait_array(PG_FUNCTION_ARGS)
{
	int			nnames;
	char	  **names = sync_names_arg(fcinfo, 0, &nnames);
	char	   *holder = sync_key_arg(fcinfo, 1, "holder", false);
	int64		timeout_us = sync_timeout_arg(fcinfo, 2);
	int64	   *tokens = palloc(sizeof(int64) * nnames);

	sync_enter(SYNC_ENTER_KEYED_DB | SYNC_ENTER_WRITE | SYNC_ENTER_LOADED, NULL);
	sync_keyed_wait(names, nnames, holder, timeout_us, tokens);
	sync_require_replicated();
	PG_RETURN_ARRAYTYPE_P(sync_tokens_array(tokens, nnames));
}

/*
 * sync_channel(controller): the NOTIFY channel of that controller's events
 * (see notify_payloads.c).  A function of its argument only: IMMUTABLE.
 */
PG_FUNCTION_INFO_V1(sync_channel);
Datum
sync_channel(PG_FUNCTION_ARGS)
{
	char	   *controller = sync_key_arg(fcinfo, 0, "controller", false);
	char		channel[NAMEDATALEN];

	sync_enter(0, NULL);
	sync_controller_channel(controller, channel);
	PG_RETURN_TEXT_P(cstring_to_text(channel));
}

/* sync_force_release(lock_name, holder): admin; announces "lost". */
PG_FUNCTION_INFO_V1(sync_force_release);
Datum
sync_force_release(PG_FUNCTION_ARGS)
{
	char	   *name = sync_name_arg(fcinfo, 0);
	char	   *holder = sync_key_arg(fcinfo, 1, "holder", false);

	sync_enter(SYNC_ENTER_KEYED_DB | SYNC_ENTER_WRITE | SYNC_ENTER_LOADED,
			   "force-release keyed holds");
	PG_RETURN_BOOL(sync_keyed_force_release(name, holder));
}

/* sync_forget_controller(controller, release_holds): admin. */
PG_FUNCTION_INFO_V1(sync_forget_controller);
Datum
sync_forget_controller(PG_FUNCTION_ARGS)
{
	char	   *controller = sync_key_arg(fcinfo, 0, "controller", false);
	bool		release_holds = PG_ARGISNULL(1) ? false : PG_GETARG_BOOL(1);

	sync_enter(SYNC_ENTER_KEYED_DB | SYNC_ENTER_WRITE | SYNC_ENTER_LOADED,
			   "forget controllers");
	PG_RETURN_INT32(sync_keyed_forget_controller(controller, release_holds));
}

/* sync_reconcile(): one round of the worker's work, in this transaction. */
PG_FUNCTION_INFO_V1(sync_reconcile);
Datum
sync_reconcile(PG_FUNCTION_ARGS)
{
	sync_enter(SYNC_ENTER_KEYED_DB | SYNC_ENTER_WRITE, NULL);
	PG_RETURN_INT32(sync_reconcile_round(NULL));
}
