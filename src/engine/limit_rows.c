/*-------------------------------------------------------------------------
 *
 * limit_rows.c
 *		The rows of sync_limit as the engine reads them: the select list of
 *		the columns each version of the table has (a column an older
 *		schema lacks reads as NULL, until ALTER EXTENSION syncwf UPDATE),
 *		and one row of a result turned into a SyncLimitValue.  Which row
 *		applies to a semaphore, and when, is sem_limits.c's.
 *
 * Locking: none; the caller is connected to SPI.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "engine/engine_internal.h"

/*
 * Columns of sync_limit table relid that came after 1.4, as a select list
 * for a query that names the table 'alias' (NULL: unqualified), each NULL
 * when the table does not have it yet (an older schema, before ALTER
 * EXTENSION syncwf UPDATE): max_waiters, rate_limit, rate_period (1.5)...
 */
char *
sync_limit_cap_rate_columns(Oid relid, const char *alias)
{
	const char *a = alias ? psprintf("%s.", alias) : "";

	if (get_attnum(relid, "max_waiters") == InvalidAttrNumber)
		return "NULL::pg_catalog.int4, NULL::pg_catalog.int4, NULL::pg_catalog.interval";
	return psprintf("%smax_waiters, %srate_limit, %srate_period", a, a, a);
}

/* ... and queueing (1.6), true when it says 'best_effort'. */
char *
sync_limit_queueing_column(Oid relid, const char *alias)
{
	if (get_attnum(relid, "queueing") == InvalidAttrNumber)
		return "false";
	return psprintf("%s%squeueing OPERATOR(pg_catalog.=) 'best_effort'",
					alias ? alias : "", alias ? "." : "");
}

/*
 * ... and parent (1.8), with the parent's sizelimit, whether some row
 * names this one as its parent, guarantee, aging_interval,
 * aging_max_priority, preempt_grace and the parent's preempt_grace, for
 * table relid read as 'alias'.
 */
char *
sync_limit_tree_columns(Oid relid, const char *alias)
{
	char	   *table = sync_qualified(relid);

	if (get_attnum(relid, "parent") == InvalidAttrNumber)
		return "NULL::pg_catalog.text, NULL::pg_catalog.int4, false, NULL::pg_catalog.int4, "
			"NULL::pg_catalog.interval, NULL::pg_catalog.int4, NULL::pg_catalog.interval, "
			"NULL::pg_catalog.interval";
	return psprintf("%s.parent, (SELECT p.sizelimit FROM %s p WHERE p.name OPERATOR(pg_catalog.=) %s.parent), "
					"EXISTS (SELECT FROM %s c WHERE c.parent OPERATOR(pg_catalog.=) %s.name), %s.guarantee, "
					"%s.aging_interval, %s.aging_max_priority, %s.preempt_grace, "
					"(SELECT p.preempt_grace FROM %s p WHERE p.name OPERATOR(pg_catalog.=) %s.parent)",
					alias, table, alias, table, alias, alias, alias, alias, alias, table, alias);
}

/*
 * The columns at 'col' .. col + 7 of 'tup' (sync_limit_tree_columns()).
 */
void
sync_limit_tree_of(HeapTuple tup, TupleDesc desc, int col, SyncLimitValue *value)
{
	bool		isnull;
	bool		max_null;
	Datum		d;
	Datum		max;

	value->parent[0] = '\0';
	value->parent_limit = 0;
	d = SPI_getbinval(tup, desc, col, &isnull);
	if (!isnull)
		text_to_cstring_buffer(DatumGetTextPP(d), value->parent, SYNC_NAME_BUFLEN);
	d = SPI_getbinval(tup, desc, col + 1, &isnull);
	if (!isnull)
		value->parent_limit = DatumGetInt32(d);
	d = SPI_getbinval(tup, desc, col + 2, &isnull);
	value->is_parent = !isnull && DatumGetBool(d);
	d = SPI_getbinval(tup, desc, col + 3, &isnull);
	value->guarantee = isnull ? 0 : DatumGetInt32(d);
	/* aging: both columns or neither (the table's CHECK) */
	d = SPI_getbinval(tup, desc, col + 4, &isnull);
	max = SPI_getbinval(tup, desc, col + 5, &max_null);
	value->aging_interval_us = (isnull || max_null) ? 0 :
		Max(sync_interval_us(DatumGetIntervalP(d)), 0);
	value->aging_max = value->aging_interval_us > 0 ? DatumGetInt32(max) : 0;
	/* preemption: its own grace, and its parent's */
	d = SPI_getbinval(tup, desc, col + 6, &isnull);
	value->preempt = !isnull;
	value->preempt_grace_us = isnull ? 0 : Max(sync_interval_us(DatumGetIntervalP(d)), 0);
	d = SPI_getbinval(tup, desc, col + 7, &isnull);
	value->parent_preempt = !isnull;
	value->parent_grace_us = isnull ? 0 : Max(sync_interval_us(DatumGetIntervalP(d)), 0);
}

/*
 * The columns every query here reads: name, sizelimit, max_waiters,
 * rate_limit, rate_period, whether queueing is best-effort, parent, its
 * sizelimit and whether the row is a parent, from table relid.
 */
char *
sync_limit_select(Oid relid)
{
	return psprintf("SELECT l.name, l.sizelimit, %s, %s, %s FROM %s l",
					sync_limit_cap_rate_columns(relid, "l"),
					sync_limit_queueing_column(relid, "l"),
					sync_limit_tree_columns(relid, "l"),
					sync_qualified(relid));
}

/*
 * The rate of a row: columns rate_limit and rate_period at 'col' and
 * col + 1 of 'tup' (both NULL, or both set: the table's CHECK).
 */
void
sync_limit_rate_of(HeapTuple tup, TupleDesc desc, int col, SyncLimitValue *value)
{
	bool		limit_null,
				period_null;
	Datum		limit = SPI_getbinval(tup, desc, col, &limit_null);
	Datum		period = SPI_getbinval(tup, desc, col + 1, &period_null);

	value->rate_limit = 0;
	value->rate_period_us = 0;
	if (limit_null || period_null || DatumGetInt32(limit) <= 0)
		return;
	value->rate_period_us = sync_interval_us(DatumGetIntervalP(period));
	if (value->rate_period_us > 0)
		value->rate_limit = DatumGetInt32(limit);
	else
		value->rate_period_us = 0;
}

/* Read the value of row 'i' of the last SPI result of sync_limit_select(). */
char *
sync_limit_row(uint64 i, SyncLimitValue *value)
{
	HeapTuple	tup = SPI_tuptable->vals[i];
	TupleDesc	desc = SPI_tuptable->tupdesc;
	bool		isnull;
	Datum		d;

	d = SPI_getbinval(tup, desc, 2, &isnull);
	value->limit = isnull ? SYNC_LIMIT_UNDEFINED : DatumGetInt32(d);
	d = SPI_getbinval(tup, desc, 3, &isnull);
	value->max_waiters = isnull ? -1 : DatumGetInt32(d);
	value->pattern_len = 0;
	sync_limit_rate_of(tup, desc, 4, value);
	d = SPI_getbinval(tup, desc, 6, &isnull);
	value->best_effort = !isnull && DatumGetBool(d);
	sync_limit_tree_of(tup, desc, 7, value);
	return SPI_getvalue(tup, desc, 1);
}
