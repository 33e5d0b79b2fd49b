/*-------------------------------------------------------------------------
 *
 * limits.c
 *		Semaphore limits: reading them from the sync_limit table, caching
 *		them in each backend, and carrying changes into shared memory when
 *		the changing transaction commits.
 *
 * The table is the truth.  A live semaphore keeps its limit in its SyncLock;
 * a backend creating a semaphore reads the limit through a backend-local
 * cache.  Every committed change to sync_limit bumps
 * SyncState->limit_generation *before* it updates the live locks, and:
 *
 *	- a backend flushes its cache whenever the generation moved;
 *	- a backend creating a lock re-checks the generation under the lock's
 *	  partition lock and starts over if it moved (holds.c), so a limit read
 *	  before a concurrent change can never be installed after it.
 *
 * Changes are collected by a row trigger (and a TRUNCATE trigger) on
 * sync_limit.  Just before commit the changed rows are read again with a
 * fresh snapshot, which sees exactly what this transaction leaves behind
 * (rolled-back savepoints included); at commit those values are installed
 * and every raised limit immediately grants waiters.  An aborted transaction
 * changes nothing.
 *
 *-------------------------------------------------------------------------
 */
#include "syncwf.h"

#include "access/xact.h"
#include "catalog/pg_type_d.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#define LIMIT_CACHE_MAX		10000
#define LIMIT_UNDEFINED		(-1)

typedef struct LimitEntry
{
	char		name[SYNC_NAME_BUFLEN]; /* "<namespace>/<key>", hash key */
	int32		limit;			/* LIMIT_UNDEFINED: no row */
} LimitEntry;

/* Backend-local cache of sync_limit, valid for one generation. */
static HTAB *limit_cache = NULL;
static uint64 limit_cache_generation = 0;

/* Prepared lookup, for the schema it was built for. */
static SPIPlanPtr lookup_plan = NULL;
static Oid	lookup_plan_nsp = InvalidOid;

/* This transaction's changes to sync_limit. */
static List *pending_names = NIL;	/* char *, in TopTransactionContext */
static bool pending_all = false;	/* TRUNCATE: every row may have changed */
static Oid	pending_nsp = InvalidOid;
static HTAB *pending_values = NULL; /* LimitEntry, read at pre-commit */

static HTAB *
sync_limit_hash_create(const char *name, MemoryContext cxt, long size)
{
	HASHCTL		ctl;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = SYNC_NAME_BUFLEN;
	ctl.entrysize = sizeof(LimitEntry);
	ctl.hcxt = cxt;
	return hash_create(name, size, &ctl, HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
}

static void
sync_limit_cache_reset(uint64 generation)
{
	if (limit_cache != NULL)
		hash_destroy(limit_cache);
	limit_cache = sync_limit_hash_create("syncwf limit cache",
										 TopMemoryContext, 256);
	limit_cache_generation = generation;
}

/* Build (once per schema) the plan that reads one limit. */
static SPIPlanPtr
sync_lookup_plan(Oid nsp)
{
	if (lookup_plan == NULL || lookup_plan_nsp != nsp)
	{
		char	   *query;
		Oid			argtypes[1] = {TEXTOID};
		SPIPlanPtr	plan;

		query = psprintf("SELECT sizelimit FROM %s.sync_limit WHERE name = $1",
						 quote_identifier(get_namespace_name(nsp)));
		plan = SPI_prepare(query, 1, argtypes);
		if (plan == NULL)
			elog(ERROR, "SPI_prepare failed for \"%s\": %s",
				 query, SPI_result_code_string(SPI_result));
		if (SPI_keepplan(plan) != 0)
			elog(ERROR, "SPI_keepplan failed");
		if (lookup_plan != NULL)
			SPI_freeplan(lookup_plan);
		lookup_plan = plan;
		lookup_plan_nsp = nsp;
	}
	return lookup_plan;
}

/*
 * Read one row of sync_limit with the latest snapshot (not the transaction
 * snapshot: in REPEATABLE READ that could be older than the generation we
 * checked).  Caller is connected to SPI.  Returns LIMIT_UNDEFINED for no row.
 */
static int32
sync_limit_read(Oid nsp, const char *limit_name)
{
	Datum		values[1];
	int			rc;
	int32		limit = LIMIT_UNDEFINED;

	values[0] = CStringGetTextDatum(limit_name);
	rc = SPI_execute_snapshot(sync_lookup_plan(nsp), values, NULL,
							  GetLatestSnapshot(), InvalidSnapshot,
							  true, false, 1);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read sync_limit: %s", SPI_result_code_string(rc));
	if (SPI_processed > 0)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0],
									  SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
			limit = DatumGetInt32(d);
	}
	return limit;
}

/*
 * The limit of semaphore lock_name ("sem/<namespace>/<key>"), from the
 * sync_limit table in the schema of the calling function.  Raises 42704 when
 * the table has no row for it.
 */
int32
sync_limit_lookup(const char *lock_name, Oid fn_oid)
{
	const char *limit_name = lock_name + 4;
	uint64		generation = pg_atomic_read_u64(&SyncState->limit_generation);
	LimitEntry *cached;
	int32		limit;
	bool		found;

	if (limit_cache == NULL || generation != limit_cache_generation)
		sync_limit_cache_reset(generation);

	cached = hash_search(limit_cache, limit_name, HASH_FIND, NULL);
	if (cached != NULL)
		return cached->limit;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	limit = sync_limit_read(get_func_namespace(fn_oid), limit_name);
	SPI_finish();

	if (limit == LIMIT_UNDEFINED)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("semaphore \"%s\" has no limit", lock_name),
				 errdetail("The table sync_limit has no row named \"%s\".", limit_name),
				 errhint("Insert one, for example: INSERT INTO sync_limit (name, sizelimit) VALUES ('%s', 1);",
						 limit_name)));

	if (hash_get_num_entries(limit_cache) >= LIMIT_CACHE_MAX)
		sync_limit_cache_reset(generation);
	cached = hash_search(limit_cache, limit_name, HASH_ENTER, &found);
	cached->limit = limit;
	return limit;
}

/*
 * Trigger on sync_limit: remember which names this transaction changed.
 */
PG_FUNCTION_INFO_V1(sync_limit_changed);
Datum
sync_limit_changed(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	TupleDesc	tupdesc;
	MemoryContext oldcxt;
	HeapTuple	tuples[2];
	int			ntuples = 0;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("sync_limit_changed() can only be called as a trigger")));

	sync_require_shmem();
	sync_backend_setup();		/* so that our commit callback runs */
	pending_nsp = RelationGetNamespace(trigdata->tg_relation);

	if (TRIGGER_FIRED_BY_TRUNCATE(trigdata->tg_event))
	{
		pending_all = true;
		return PointerGetDatum(NULL);
	}

	tupdesc = RelationGetDescr(trigdata->tg_relation);
	if (TRIGGER_FIRED_BY_INSERT(trigdata->tg_event))
		tuples[ntuples++] = trigdata->tg_trigtuple;
	else if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
	{
		tuples[ntuples++] = trigdata->tg_trigtuple;
		tuples[ntuples++] = trigdata->tg_newtuple;
	}
	else if (TRIGGER_FIRED_BY_DELETE(trigdata->tg_event))
		tuples[ntuples++] = trigdata->tg_trigtuple;

	oldcxt = MemoryContextSwitchTo(TopTransactionContext);
	for (int i = 0; i < ntuples; i++)
	{
		bool		isnull;
		Datum		name = heap_getattr(tuples[i], 1, tupdesc, &isnull);

		if (!isnull)
			pending_names = lappend(pending_names, TextDatumGetCString(name));
	}
	MemoryContextSwitchTo(oldcxt);

	return PointerGetDatum(NULL);
}

bool
sync_limits_pending(void)
{
	return pending_names != NIL || pending_all;
}

/*
 * Pre-commit: read the final value of every changed row (or of the whole
 * table after a TRUNCATE) while we can still run queries.
 */
void
sync_limits_precommit(void)
{
	ListCell   *lc;

	if (!sync_limits_pending())
		return;

	CommandCounterIncrement();
	pending_values = sync_limit_hash_create("syncwf pending limits",
											TopTransactionContext, 64);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	if (pending_all)
	{
		char	   *query = psprintf("SELECT name, sizelimit FROM %s.sync_limit",
									 quote_identifier(get_namespace_name(pending_nsp)));
		int			rc;

		PushActiveSnapshot(GetLatestSnapshot());
		rc = SPI_execute(query, true, 0);
		PopActiveSnapshot();
		if (rc != SPI_OK_SELECT)
			elog(ERROR, "could not read sync_limit: %s", SPI_result_code_string(rc));
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			char	   *name = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
			bool		isnull;
			Datum		limit = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull);
			LimitEntry *entry = hash_search(pending_values, name, HASH_ENTER, NULL);

			entry->limit = isnull ? LIMIT_UNDEFINED : DatumGetInt32(limit);
		}
	}
	else
	{
		foreach(lc, pending_names)
		{
			char	   *name = (char *) lfirst(lc);
			bool		found;
			LimitEntry *entry = hash_search(pending_values, name, HASH_ENTER, &found);

			if (!found)
				entry->limit = sync_limit_read(pending_nsp, name);
		}
	}
	SPI_finish();
}

/* Install one limit into the live semaphore of that name, if any. */
static void
sync_limit_apply(SyncLock *lock, int32 limit)
{
	if (limit == LIMIT_UNDEFINED)
	{
		/* holders and waiters keep the old limit; newcomers are refused */
		lock->limit_defined = false;
		return;
	}
	lock->limit = limit;
	lock->limit_defined = true;
	/* a raised limit grants at once; a lowered one preempts nobody */
	sync_grant_waiters(lock);
}

/*
 * Commit: install what pre-commit read.  Runs after the commit is durable;
 * must not raise errors.
 */
void
sync_limits_at_commit(void)
{
	HASH_SEQ_STATUS status;

	if (pending_values == NULL)
	{
		sync_limits_forget();
		return;
	}

	/* first invalidate every cache and every lock creation in flight */
	pg_atomic_fetch_add_u64(&SyncState->limit_generation, 1);

	if (pending_all)
	{
		uint32		all = (1U << SYNC_NUM_PARTITIONS) - 1;
		SyncLock   *lock;

		sync_lock_partitions(all, LW_EXCLUSIVE);
		hash_seq_init(&status, sync_lock_hash());
		while ((lock = hash_seq_search(&status)) != NULL)
		{
			LimitEntry *value;

			if (lock->tag.dbid != MyDatabaseId || lock->kind != SYNC_KIND_SEMAPHORE)
				continue;
			value = hash_search(pending_values, lock->tag.name + 4, HASH_FIND, NULL);
			sync_limit_apply(lock, value ? value->limit : LIMIT_UNDEFINED);
		}
		sync_unlock_partitions(all);
	}
	else
	{
		LimitEntry *value;

		hash_seq_init(&status, pending_values);
		while ((value = hash_seq_search(&status)) != NULL)
		{
			SyncLockTag tag;
			char		lock_name[SYNC_NAME_BUFLEN];
			uint32		hashcode;
			LWLock	   *partition;
			SyncLock   *lock;

			snprintf(lock_name, sizeof(lock_name), "sem/%s", value->name);
			sync_make_tag(&tag, MyDatabaseId, lock_name);
			hashcode = sync_tag_hash(&tag);
			partition = sync_partition_lock(hashcode);
			LWLockAcquire(partition, LW_EXCLUSIVE);
			lock = sync_lock_lookup(&tag, hashcode);
			if (lock != NULL)
				sync_limit_apply(lock, value->limit);
			LWLockRelease(partition);
		}
	}
	sync_grant_deferred();
	sync_limits_forget();
}

/* Transaction end: drop this transaction's bookkeeping. */
void
sync_limits_forget(void)
{
	/* the memory belongs to TopTransactionContext */
	pending_names = NIL;
	pending_all = false;
	pending_values = NULL;
}
