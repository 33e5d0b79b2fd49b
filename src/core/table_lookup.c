/*-------------------------------------------------------------------------
 *
 * table_lookup.c
 *		Where syncwf's tables are: the one lookup of the extension's tables
 *		in this database (sync_state, sync_controller, sync_limit, and the
 *		schema the launch-plan tables share) and the one relcache callback
 *		that says when to look again.
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
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "core/core.h"

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


char *
sync_qualified(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
}

