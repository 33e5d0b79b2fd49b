/*-------------------------------------------------------------------------
 *
 * owner_statements.c
 *		SQL statements syncwf runs through SPI: plans kept for the life of
 *		the backend, the search_path every statement runs with, and running
 *		a statement as the tables' owner.
 *
 * Backend-local state only: the plans, kept by their callers.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"

#include "core/core.h"

/*
 * Prepare 'sql' and keep the plan for the life of the backend, freeing
 * 'old' (NULL: none), the plan it replaces.  Caller is connected to SPI.
 *
 * The plan is generic from the first call: every statement kept here
 * reads or writes rows by key, which a generic plan does as well as a
 * custom one.  Left to the plan cache, the lookup of sync_limit (a key
 * = ANY ($1), with a subquery per parent column) was planned again at
 * every call, the generic plan's estimate for an array of unknown length
 * costing more than a custom plan's: a third of the throughput of
 * acquiring a new semaphore went to the planner.
 */
SPIPlanPtr
sync_prepare_kept(const char *sql, int nargs, Oid *types, SPIPlanPtr old)
{
	SPIPlanPtr	plan = SPI_prepare_cursor(sql, nargs, types, CURSOR_OPT_GENERIC_PLAN);

	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s", sql,
			 SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "SPI_keepplan failed");
	if (old != NULL)
		SPI_freeplan(old);
	return plan;
}

/*
 * Every statement syncwf runs through SPI runs with search_path set to
 * "pg_catalog, pg_temp" (what PostgreSQL 17 calls RestrictSearchPath()):
 * an operator or function its text leaves unqualified (= in an IN list or
 * IS DISTINCT FROM, an aggregate) must never be one of a schema the caller
 * put first, which, in a statement run as the tables' owner, would run the
 * caller's code with the owner's rights.  Returns the GUC nest level for
 * sync_search_path_restore(); an error unwinds it with its (sub)transaction.
 */
int
sync_search_path_restrict(void)
{
	int			nestlevel = NewGUCNestLevel();

	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	return nestlevel;
}

void
sync_search_path_restore(int nestlevel)
{
	AtEOXact_GUC(true, nestlevel);
}

/*
 * Run one statement of another part of syncwf (launch_spi.c) as the
 * tables' owner.  The statement is prepared once per sync_state table and
 * kept in *plan; in sql, "%1$s" stands for the extension's schema.  Returns
 * the rows processed; with rows_out, the result rows as arrays of strings
 * (NULL for SQL NULL), in the caller's memory context.
 */
uint64
sync_exec_owned(SyncOwnedPlan *plan, Datum *values, const char *nulls,
				List **rows_out)
{
	Oid			save_userid;
	int			save_sec_context;
	MemoryContext caller = CurrentMemoryContext;
	volatile uint64 processed = 0;
	int			nestlevel;
	const SyncTables *tables;

	if (rows_out)
		*rows_out = NIL;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	tables = sync_tables(false);
	nestlevel = sync_search_path_restrict();
	if (plan->plan == NULL || plan->relid != tables->state)
	{
		char	   *sql = psprintf(plan->sql,
								   quote_identifier(get_namespace_name(tables->schema)));

		plan->plan = sync_prepare_kept(sql, plan->nargs, plan->types, plan->plan);
		plan->relid = tables->state;
	}
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(tables->owner, save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
	PG_TRY();
	{
		int			rc = SPI_execute_plan(plan->plan, values, nulls, false, 0);

		if (rc < 0)
			elog(ERROR, "syncwf statement failed: %s", SPI_result_code_string(rc));
		processed = SPI_processed;
		if (rows_out && SPI_tuptable != NULL)
		{
			TupleDesc	desc = SPI_tuptable->tupdesc;

			for (uint64 i = 0; i < SPI_processed; i++)
			{
				MemoryContext old = MemoryContextSwitchTo(caller);
				char	  **cols = palloc0(sizeof(char *) * desc->natts);

				for (int c = 0; c < desc->natts; c++)
				{
					char	   *v = SPI_getvalue(SPI_tuptable->vals[i], desc, c + 1);

					cols[c] = v ? pstrdup(v) : NULL;
				}
				*rows_out = lappend(*rows_out, cols);
				MemoryContextSwitchTo(old);
			}
		}
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(save_userid, save_sec_context);
	}
	PG_END_TRY();
	sync_search_path_restore(nestlevel);
	SPI_finish();
	return processed;
}

