/*-------------------------------------------------------------------------
 *
 * sql_launch.c
 *		The SQL-callable functions of launch plans:
 *		sync_launch_plan_register(), sync_execution_create() and
 *		sync_execution_update().  Each reads and checks its arguments,
 *		passes the entry guard, calls launch_policy.c (or, to register a plan,
 *		launch_spi.c) once and forms the result.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/formatting.h"
#include "utils/timestamp.h"

#include "entry/entry_internal.h"

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
	(void) sync_duration_arg(fcinfo, 7, "max_pending",
							 "Pass NULL for no limit on the time an execution may wait.");

	sync_enter(SYNC_ENTER_KEYED_DB, NULL);

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
	sync_launch_register_row(values, nulls);
	PG_RETURN_VOID();
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
	sync_enter(SYNC_ENTER_KEYED_DB | SYNC_ENTER_WRITE | SYNC_ENTER_LOADED, NULL);
	res = sync_launch_create(project, domain, name, version, id, priority, raise);

	out[0] = CStringGetTextDatum(res.skipped ? "SKIPPED" : sync_phase_names[res.phase]);
	out[1] = res.reason ? CStringGetTextDatum(res.reason) : (Datum) 0;
	nulls[1] = (res.reason == NULL);
	out[2] = res.replaced ? CStringGetTextDatum(res.replaced) : (Datum) 0;
	nulls[2] = (res.replaced == NULL);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, out, nulls);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(sync_execution_update);
Datum
sync_execution_update(PG_FUNCTION_ARGS)
{
	char	   *id = sync_ident_arg(fcinfo, 0, "execution_id", true);
	char	   *want_name;
	LaunchPhase want;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("phase must not be null")));
	want_name = text_to_cstring(PG_GETARG_TEXT_PP(1));
	want = sync_phase_of(want_name, true);
	sync_enter(SYNC_ENTER_KEYED_DB | SYNC_ENTER_WRITE | SYNC_ENTER_LOADED, NULL);
	PG_RETURN_TEXT_P(cstring_to_text(sync_phase_names[sync_launch_update(id, want)]));
}
