/*-------------------------------------------------------------------------
 *
 * sem_limits.c
 *		Semaphore limits: reading them from the sync_limit table, caching
 *		them in each backend, and carrying changes into shared memory when
 *		the changing transaction commits.
 *
 * The table is the truth.  A semaphore in the lock table (live, or cached
 * after its last holder left: see lock_table.c) carries its limit and the
 * OID of the sync_limit table it came from; only a semaphore missing from
 * the lock table costs a query.  Every committed change to sync_limit bumps
 * sync_shmem->limit_generation *before* it updates the lock table, and a
 * backend that read limits re-checks the generation under the partition
 * locks before it creates a lock from them (holds.c, holders.c), so a limit read
 * before a concurrent change can never be installed after it.
 *
 * Limits are read as committed: a change takes effect when its transaction
 * commits, for everyone, the changing transaction included, so the lock
 * table never holds a limit that could still roll back.
 *
 * Changes are collected by a row trigger (and a TRUNCATE trigger) on
 * sync_limit (triggers.c, which calls sync_limits_changed()).  Just before commit the changed rows are read again with a
 * fresh snapshot, which sees exactly what this transaction leaves behind
 * (rolled-back savepoints included); at commit those values are installed
 * and every raised limit immediately grants waiters.  An aborted transaction
 * changes nothing.
 *
 * Locking: backend-local state, except at commit, which takes the
 * partition lock of each changed semaphore (every partition after a
 * TRUNCATE).
 *
 * Layer 3: calls layers 0-2 (names.c, tables.c, lock_table.c, wait_queue.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type_d.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "sem_limits.h"
#include "lock_table.h"
#include "names.h"
#include "tables.h"
#include "wait_queue.h"

#define LIMIT_UNDEFINED		(-1)

/* Changed rows past which pre-commit reads the whole table instead. */
#define LIMIT_BULK_CHANGE	1000

typedef struct LimitEntry
{
	char		name[SYNC_NAME_BUFLEN]; /* "<namespace>/<key>", hash key */
	int32		limit;			/* LIMIT_UNDEFINED: no row */
} LimitEntry;

/* Prepared lookup, for the sync_limit table it was built for. */
static SPIPlanPtr lookup_plan = NULL;
static Oid	lookup_plan_relid = InvalidOid;

/* This transaction's changes to sync_limit. */
static List *pending_names = NIL;	/* char *, in TopTransactionContext */
static bool pending_all = false;	/* TRUNCATE: every row may have changed */
static Oid	pending_relid = InvalidOid;
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

/* Build (once per table) the plan that reads one limit. */
static SPIPlanPtr
sync_lookup_plan(Oid relid)
{
	if (lookup_plan == NULL || lookup_plan_relid != relid)
	{
		char	   *query;
		Oid			argtypes[1] = {TEXTOID};
		SPIPlanPtr	plan;

		query = psprintf("SELECT sizelimit FROM %s WHERE name OPERATOR(pg_catalog.=) $1",
						 quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
													get_rel_name(relid)));
		plan = SPI_prepare(query, 1, argtypes);
		if (plan == NULL)
			elog(ERROR, "SPI_prepare failed for \"%s\": %s",
				 query, SPI_result_code_string(SPI_result));
		if (SPI_keepplan(plan) != 0)
			elog(ERROR, "SPI_keepplan failed");
		if (lookup_plan != NULL)
			SPI_freeplan(lookup_plan);
		lookup_plan = plan;
		lookup_plan_relid = relid;
	}
	return lookup_plan;
}

/*
 * Read one row of sync_limit.  Caller is connected to SPI.  Returns
 * LIMIT_UNDEFINED for no row.
 *
 * committed_only: what the lock table may hold -- the committed row, never
 * a change of this transaction that could still roll back.  The latest
 * snapshot (not the transaction snapshot: in REPEATABLE READ that could be
 * older than the limit generation the caller checks), with its command id
 * moved back to the transaction's first command: for rows this transaction
 * wrote, heap visibility then hides what it inserted and still shows what it
 * deleted or updated, which is the committed table.
 *
 * Otherwise: the table as this transaction leaves it (pre-commit).
 */
static int32
sync_limit_read(Oid relid, const char *limit_name, bool committed_only)
{
	Datum		values[1];
	int			rc;
	int32		limit = LIMIT_UNDEFINED;
	Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
	int			nestlevel = sync_search_path_restrict();

	if (committed_only)
		snapshot->curcid = FirstCommandId;

	values[0] = CStringGetTextDatum(limit_name);
	rc = SPI_execute_snapshot(sync_lookup_plan(relid), values, NULL,
							  snapshot, InvalidSnapshot,
							  true, false, 1);
	UnregisterSnapshot(snapshot);
	sync_search_path_restore(nestlevel);
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
 * The committed limit of semaphore lock_name ("sem/<namespace>/<key>") from
 * the sync_limit table relid, LIMIT_UNDEFINED (-1) when it has no committed
 * row; sync_limit_lookup() raises 42704 instead.  A change this transaction
 * made is not seen: limits take effect at commit, for the changing
 * transaction too.
 */
int32
sync_limit_lookup_optional(const char *lock_name, Oid relid)
{
	int32		limit;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	limit = sync_limit_read(relid, lock_name + 4, true);
	SPI_finish();
	return limit;
}

int32
sync_limit_lookup(const char *lock_name, Oid relid)
{
	const char *limit_name = lock_name + 4;
	int32		limit;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	limit = sync_limit_read(relid, limit_name, true);
	SPI_finish();

	if (limit == LIMIT_UNDEFINED)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("semaphore \"%s\" has no limit", lock_name),
				 errdetail("The table sync_limit has no row named \"%s\".", limit_name),
				 errhint("Insert one, for example: INSERT INTO sync_limit (name, sizelimit) VALUES ('%s', 1);",
						 limit_name)));
	return limit;
}

/*
 * A row of sync_limit 'relid' named 'name' was written or deleted by this
 * transaction (NULL: the table was truncated).  Called by its triggers.
 */
void
sync_limits_changed(Oid relid, const char *name)
{
	MemoryContext oldcxt;

	pending_relid = relid;
	if (name == NULL)
	{
		pending_all = true;
		return;
	}
	/* past a bulk change, one read of the whole table is cheaper */
	if (pending_all)
		return;
	if (list_length(pending_names) >= LIMIT_BULK_CHANGE)
	{
		pending_all = true;
		list_free_deep(pending_names);
		pending_names = NIL;
		return;
	}
	oldcxt = MemoryContextSwitchTo(TopTransactionContext);
	pending_names = lappend(pending_names, pstrdup(name));
	MemoryContextSwitchTo(oldcxt);
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
		char	   *query = psprintf("SELECT name, sizelimit FROM %s",
									 quote_qualified_identifier(get_namespace_name(get_rel_namespace(pending_relid)),
																get_rel_name(pending_relid)));
		int			rc;
		int			nestlevel = sync_search_path_restrict();

		PushActiveSnapshot(GetLatestSnapshot());
		rc = SPI_execute(query, true, 0);
		PopActiveSnapshot();
		sync_search_path_restore(nestlevel);
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
				entry->limit = sync_limit_read(pending_relid, name, false);
		}
	}
	SPI_finish();
}

/*
 * Install one committed limit into the semaphore of that name in the lock
 * table.  Caller holds its partition exclusively.
 */
static void
sync_limit_apply(SyncLock *lock, int32 limit)
{
	Assert(sync_partition_held(lock->hashcode, true));
	if (limit == LIMIT_UNDEFINED && sync_lock_is_launch_plan(lock->tag.name))
		limit = PG_INT32_MAX;	/* no overall limit: only the versions' */
	if (limit == LIMIT_UNDEFINED)
	{
		if (lock->cached)
		{
			/* nobody uses it: forget it, the next acquire will fail */
			sync_lock_remove(lock);
			return;
		}
		/* holders and waiters keep the old limit; newcomers are refused */
		lock->limit_defined = false;
		return;
	}
	lock->limit = limit;
	lock->limit_relid = pending_relid;
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

	/* first invalidate every lock creation in flight (see holds.c) */
	pg_atomic_fetch_add_u64(&sync_shmem->limit_generation, 1);

	if (pending_all)
	{
		uint32		all = SYNC_ALL_PARTITIONS;
		SyncLock   *lock;

		sync_lock_partitions(all, LW_EXCLUSIVE);
		hash_seq_init(&status, sync_lock_hash());
		while ((lock = hash_seq_search(&status)) != NULL)
		{
			LimitEntry *value;

			if (lock->tag.dbid != MyDatabaseId || lock->kind != SYNC_KIND_SEMAPHORE)
				continue;
			/* (removing the entry just returned is allowed during a scan) */
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
