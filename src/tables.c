/*-------------------------------------------------------------------------
 *
 * tables.c
 *		Where syncwf's tables are: the one lookup of the extension's tables
 *		in this database (sync_state, sync_controller, sync_limit, and the
 *		schema the launch-plan tables share) and the one relcache callback
 *		that says when to look again; statements run as the tables' owner;
 *		the search_path every statement of syncwf runs with; and who may
 *		act on whose keyed holds.
 *
 * The OIDs are looked up once and again after an invalidation of one of
 * the tables.  The relcache callback only counts those invalidations (the
 * OIDs are current while none came since they were found); it never clears
 * the OIDs: an invalidation is processed at any catalog access (VACUUM or
 * ANALYZE of sync_state sends one), and a lookup in progress, or a caller
 * between two uses of these OIDs, must not see them change under it.  They
 * change for real only when the extension is dropped and created again, or
 * a table is renamed, which the next lookup sees.
 *
 * Backend-local state only; no shared memory, no lock.
 *
 * Layer 0: calls no other file of syncwf.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "tables.h"

/* What the last lookup found; all-or-nothing for the three tables. */
static SyncTables found_tables;
/* sync_limit on its own: a session's semaphores need only it. */
static Oid	found_limit = InvalidOid;
static uint64 tables_invalidations = 0;	/* of our tables, by the callback */
static uint64 tables_found_at = PG_UINT64_MAX;	/* tables_invalidations when
												 * the OIDs were found */
static bool relcache_callback_registered = false;

static void
sync_tables_relcache_callback(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == found_tables.state ||
		relid == found_tables.controller || relid == found_limit)
		tables_invalidations++;
}

/*
 * How many invalidations of our tables this backend has processed: a cache
 * of something about them (a column layout) is current while this has not
 * changed since it was built.
 */
uint64
sync_tables_invalidations(void)
{
	return tables_invalidations;
}

/* The schema extension 'extoid' lives in. */
static Oid
sync_extension_schema(Oid extoid)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	Oid			nsp = InvalidOid;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(extoid));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		nsp = ((Form_pg_extension) GETSTRUCT(tuple))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return nsp;
}

/*
 * Look up the extension's tables, unless what was found last is current.
 * Everything is read into locals first
 * and published at the end; if an invalidation was processed meanwhile (by
 * one of the catalog reads here), what was found is used, and the next
 * call looks again.
 */
static void
sync_lookup_tables(void)
{
	Oid			ext;
	Oid			nsp;
	Oid			state = InvalidOid;
	Oid			controller = InvalidOid;
	Oid			limit = InvalidOid;
	Oid			owner = InvalidOid;
	uint64		invalidations;

	if (tables_found_at == tables_invalidations)
		return;
	if (!relcache_callback_registered)
	{
		CacheRegisterRelcacheCallback(sync_tables_relcache_callback, (Datum) 0);
		relcache_callback_registered = true;
	}
	invalidations = tables_invalidations;
	ext = get_extension_oid("syncwf", true);
	nsp = OidIsValid(ext) ? sync_extension_schema(ext) : InvalidOid;
	if (OidIsValid(nsp))
	{
		state = get_relname_relid("sync_state", nsp);
		controller = get_relname_relid("sync_controller", nsp);
		limit = get_relname_relid("sync_limit", nsp);
	}
	if (OidIsValid(state))
	{
		HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(state));

		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for relation %u", state);
		owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
		ReleaseSysCache(tup);
	}

	found_limit = limit;
	if (!OidIsValid(state) || !OidIsValid(controller) || !OidIsValid(limit))
		state = controller = limit = owner = InvalidOid;
	found_tables.schema = nsp;
	found_tables.controller = controller;
	found_tables.limit = limit;
	found_tables.state = state;
	found_tables.owner = owner;
	/*
	 * Only a complete find is kept: tables that do not exist yet send no
	 * invalidation this callback counts when they are created.  An
	 * invalidation processed meanwhile makes the next call look again.
	 */
	if (OidIsValid(state))
		tables_found_at = invalidations;
}

/*
 * The extension's tables: sync_state, sync_controller and sync_limit, all
 * of them or none (missing_ok; otherwise an error says to create the
 * extension).
 */
const SyncTables *
sync_tables(bool missing_ok)
{
	sync_lookup_tables();
	if (!OidIsValid(found_tables.state) && !missing_ok)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the tables of extension syncwf do not exist in this database"),
				 errhint("Run CREATE EXTENSION syncwf.")));
	return &found_tables;
}

Oid
sync_state_relid(bool missing_ok)
{
	return sync_tables(missing_ok)->state;
}

/*
 * The sync_limit table, which a semaphore of a session needs (whatever
 * the keyed holds' tables are doing).
 */
Oid
sync_limit_relid(void)
{
	sync_lookup_tables();
	if (!OidIsValid(found_limit))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("table sync_limit of extension syncwf does not exist"),
				 errhint("Recreate the extension: DROP EXTENSION syncwf; CREATE EXTENSION syncwf;")));
	return found_limit;
}

/*
 * Prepare 'sql' and keep the plan for the life of the backend, freeing
 * 'old' (NULL: none), the plan it replaces.  Caller is connected to SPI.
 */
SPIPlanPtr
sync_prepare_kept(const char *sql, int nargs, Oid *types, SPIPlanPtr old)
{
	SPIPlanPtr	plan = SPI_prepare(sql, nargs, types);

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
 * One of the launch-plan tables (sync_execution, sync_launch_event), in the
 * extension's schema; an error if it is missing.
 */
Oid
sync_launch_table_relid(const char *relname)
{
	Oid			relid = get_relname_relid(relname, sync_tables(false)->schema);

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("table %s of extension syncwf does not exist", relname),
				 errhint("Recreate the extension: DROP EXTENSION syncwf; CREATE EXTENSION syncwf;")));
	return relid;
}

/*
 * The index entries of a row version just written to 'rel' through the
 * table access method: in every index, or only in the summarizing ones
 * (see sync_tuple_update()).  Partial indexes get the row if it matches
 * their predicate, unique ones check it.
 */
static void
sync_index_tuples(Relation rel, TupleTableSlot *slot, bool only_summarizing)
{
	EState	   *estate = CreateExecutorState();
	ResultRelInfo *rri = makeNode(ResultRelInfo);
	List	   *recheck;

	InitResultRelInfo(rri, rel, 1, NULL, 0);
	ExecOpenIndices(rri, false);
	recheck = sync_insert_index_tuples(rri, slot, estate, only_summarizing);
	Assert(recheck == NIL);		/* no deferrable constraint */
	(void) recheck;
	ExecCloseIndices(rri);
	FreeExecutorState(estate);
}

/*
 * Rows of syncwf's tables written through the table access method (the hot
 * paths, state_direct.c and launch_direct.c): a virtual slot for a new row
 * of 'rel', with every column of 'old' (a row found by a scan), or every
 * column NULL if 'old' is NULL.  The caller sets its columns, stores it
 * (ExecStoreVirtualTuple), writes it, and drops it.
 */
TupleTableSlot *
sync_row_slot(Relation rel, TupleTableSlot *old)
{
	int			natts = RelationGetDescr(rel)->natts;
	TupleTableSlot *slot = table_slot_create(rel, NULL);

	ExecClearTuple(slot);
	if (old != NULL)
	{
		slot_getallattrs(old);
		memcpy(slot->tts_values, old->tts_values, natts * sizeof(Datum));
		memcpy(slot->tts_isnull, old->tts_isnull, natts * sizeof(bool));
	}
	else
	{
		for (int i = 0; i < natts; i++)
		{
			slot->tts_values[i] = (Datum) 0;
			slot->tts_isnull[i] = true;
		}
	}
	return slot;
}

/* Insert the row in 'slot' (stored) into 'rel', with its index entries. */
void
sync_row_insert(Relation rel, TupleTableSlot *slot)
{
	table_tuple_insert(rel, slot, GetCurrentCommandId(true), 0, NULL);
	sync_index_tuples(rel, slot, false);
}

/*
 * Write the row in 'slot' (stored) as the new version of the row 'old'
 * found, with its index entries if that worked; 'wait' as for
 * sync_tuple_update().
 */
TM_Result
sync_row_update(Relation rel, TupleTableSlot *old, TupleTableSlot *slot,
				Snapshot snapshot, bool wait)
{
	TM_FailureData tmfd;
	TM_Result	result;
	bool		update_indexes;
	bool		only_summarizing;

	result = sync_tuple_update(rel, &old->tts_tid, slot, GetCurrentCommandId(true),
							   snapshot, wait, &tmfd, &update_indexes,
							   &only_summarizing);
	if (result == TM_Ok && update_indexes)
		sync_index_tuples(rel, slot, only_summarizing);
	return result;
}

/*
 * A row this transaction found changed (TM_Updated) or deleted (TM_Deleted)
 * by a transaction that committed meanwhile: under REPEATABLE READ or
 * SERIALIZABLE that is a serialization failure, as for an UPDATE or DELETE.
 * (Under READ COMMITTED the caller looks at the row's latest version.)
 */
void
sync_check_serializable(TM_Result result)
{
	if ((result == TM_Updated || result == TM_Deleted) && IsolationUsesXactSnapshot())
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 result == TM_Updated ?
				 errmsg("could not serialize access due to concurrent update") :
				 errmsg("could not serialize access due to concurrent delete")));
}

char *
sync_qualified(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
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
 * Run one statement of another part of syncwf (launch_rows.c) as the
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

	if (rows_out)
		*rows_out = NIL;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	(void) sync_tables(false);
	nestlevel = sync_search_path_restrict();
	if (plan->plan == NULL || plan->relid != found_tables.state)
	{
		char	   *sql = psprintf(plan->sql,
								   quote_identifier(get_namespace_name(found_tables.schema)));

		plan->plan = sync_prepare_kept(sql, plan->nargs, plan->types, plan->plan);
		plan->relid = found_tables.state;
	}
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(found_tables.owner, save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
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

/* May this role administer keyed holds (force releases, forget controllers)? */
bool
sync_is_admin(Oid roleid)
{
	Oid			admin = get_role_oid("syncwf_admin", true);

	(void) sync_tables(false);
	return superuser_arg(roleid) ||
		has_privs_of_role(roleid, found_tables.owner) ||
		(OidIsValid(admin) && has_privs_of_role(roleid, admin));
}

/* A role may act on a keyed entry it (or a role it belongs to) requested. */
void
sync_check_owner(Oid owner, const char *lock_name, const char *holder)
{
	Oid			me = GetUserId();

	if (owner == me || has_privs_of_role(me, owner) || sync_is_admin(me))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for keyed hold \"%s\" of holder \"%s\"",
					lock_name, holder),
			 errdetail("It was requested by role \"%s\".",
					   GetUserNameFromId(owner, true) ? GetUserNameFromId(owner, true) : "?"),
			 errhint("Only that role, its members, and members of syncwf_admin may release or refresh it.")));
}

/* A length in microseconds as an interval datum (the lease column). */
Datum
sync_interval_datum(int64 us)
{
	Interval   *iv = palloc0(sizeof(Interval));

	iv->time = us;
	return IntervalPGetDatum(iv);
}
