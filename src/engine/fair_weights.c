/*-------------------------------------------------------------------------
 *
 * fair_weights.c
 *		The weights of fair keys: reading them from the sync_fair_weight
 *		table, caching them in each backend, and carrying a transaction's
 *		changes into the queues when it commits.
 *
 * The table is the truth.  The weight of fair key K on lock
 * "<kind>/<namespace>/<key>" is the weight of the row (P, K) whose pattern
 * P is "<namespace>/<key>" itself, else the longest "<prefix>/\*" the key
 * starts with (core/core.h: SyncPatternCandidate, the rule sync_limit follows);
 * 1 when no row applies.  Requests without a fair key share one implicit
 * key of weight 1.  Weights are read as committed, like limits
 * (sem_limits.c): a change takes effect when its transaction commits.
 *
 * A request with a fair key names one lock (sync_fair_request_weight()
 * says why), and reads the weight of its key on that lock before it takes
 * any partition lock (backend_holds.c, keyed_ops.c), through a backend-local cache
 * that every committed change to the table invalidates: it bumps
 * sync_shmem->fair_generation, and a backend that finds the generation
 * moved empties its cache.  So a request of a key costs one index scan of
 * the table per lock the first time, none after.  Rebuilding keyed holds
 * (keyed_load.c) reads each row's weight the same way.
 *
 * A change is collected by the triggers on the table (triggers.c calls
 * sync_fair_weights_changed()); just before commit the whole table is read
 * (it is meant to be small: one row per tenant and lock pattern that is
 * not weighted 1), and at commit each queued or dormant entry of this
 * database with a fair key gets the weight that now applies, and the
 * queues whose weights changed are tagged again (queue_order.c) and given
 * a grant pass.  An aborted transaction changes nothing.
 *
 * Locking: backend-local state, except at commit, which takes every
 * partition lock exclusively for the walk over the live locks.
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

#include "engine/engine_internal.h"

/* Entries of the backend-local cache past which it is emptied. */
#define FAIR_CACHE_MAX		4096

/* A weight, by the row's pattern (or a lock's "<namespace>/<key>") and key. */
typedef struct FairWeightKey
{
	char		name[SYNC_NAME_BUFLEN + 1];
	char		fair_key[SYNC_FAIR_KEY_BUFLEN];
} FairWeightKey;

typedef struct FairWeightEntry
{
	FairWeightKey key;			/* hash key, zero padded */
	int32		weight;
} FairWeightEntry;

/* Weights this backend read: by lock "<namespace>/<key>" and fair key. */
static HTAB *weight_cache = NULL;
static uint64 weight_cache_generation = 0;

/* Prepared lookup, for the table it was built for. */
static SPIPlanPtr lookup_plan = NULL;
static Oid	lookup_plan_relid = InvalidOid;

/* This transaction changed the table; the rows it leaves (pre-commit). */
static bool pending_change = false;
static HTAB *pending_rows = NULL;	/* FairWeightEntry, by pattern and key */

static HTAB *
sync_fair_hash_create(const char *name, MemoryContext cxt)
{
	HASHCTL		ctl;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(FairWeightKey);
	ctl.entrysize = sizeof(FairWeightEntry);
	ctl.hcxt = cxt;
	return hash_create(name, 64, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

static void
sync_fair_make_key(FairWeightKey *k, const char *name, const char *fair_key)
{
	memset(k, 0, sizeof(*k));
	strlcpy(k->name, name, sizeof(k->name));
	strlcpy(k->fair_key, fair_key, sizeof(k->fair_key));
}

/* The table sync_fair_weight, or InvalidOid before version 1.6. */
static Oid
sync_fair_weight_relid(void)
{
	const SyncTables *tables = sync_tables(true);

	if (!OidIsValid(tables->schema))
		return InvalidOid;
	return get_relname_relid("sync_fair_weight", tables->schema);
}

/* Build (once per table) the plan that reads the rows that may apply. */
static SPIPlanPtr
sync_fair_lookup_plan(Oid relid)
{
	if (lookup_plan == NULL || lookup_plan_relid != relid)
	{
		Oid			argtypes[2] = {TEXTARRAYOID, TEXTOID};

		lookup_plan = sync_prepare_kept(psprintf("SELECT pattern, weight FROM %s"
												 " WHERE pattern OPERATOR(pg_catalog.=) ANY ($1)"
												 " AND fair_key OPERATOR(pg_catalog.=) $2",
												 sync_qualified(relid)),
										2, argtypes, lookup_plan);
		lookup_plan_relid = relid;
	}
	return lookup_plan;
}

/*
 * Read the committed weight of fair_key on the lock of "<namespace>/<key>"
 * 'key': the most specific row, or 1.  The latest snapshot with its
 * command id moved back to the transaction's first command, as
 * sync_limit_read() does, so that an uncommitted change of this
 * transaction is not seen.
 */
static int32
sync_fair_read(Oid relid, const char *key, const char *fair_key)
{
	Datum		values[2];
	int			rc;
	Snapshot	snapshot;
	int			nestlevel;
	int32		weight = 1;
	int			best = -1;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	snapshot->curcid = FirstCommandId;
	nestlevel = sync_search_path_restrict();
	values[0] = sync_pattern_candidate_array(key);
	values[1] = CStringGetTextDatum(fair_key);
	rc = SPI_execute_snapshot(sync_fair_lookup_plan(relid), values, NULL,
							  snapshot, InvalidSnapshot, true, false, 0);
	UnregisterSnapshot(snapshot);
	sync_search_path_restore(nestlevel);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read sync_fair_weight: %s", SPI_result_code_string(rc));

	/* the most specific row: the key itself, else the longest pattern */
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		char	   *pattern = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull);
		int			rank;

		if (isnull)
			continue;
		rank = (strcmp(pattern, key) == 0) ? INT_MAX : (int) strlen(pattern);
		if (rank > best)
		{
			best = rank;
			weight = DatumGetInt32(d);
		}
	}
	SPI_finish();
	return Max(weight, 1);
}

/*
 * The weight of fair key 'fair_key' (NULL: none, weight 1) on lock
 * 'lock_name', as committed.  Reads the table once per lock and key, then
 * answers from this backend's cache until the table changes.  No LWLock
 * may be held.
 */
int32
sync_fair_weight_of(const char *lock_name, const char *fair_key)
{
	uint64		generation;
	FairWeightKey key;
	FairWeightEntry *entry;
	bool		found;
	Oid			relid;
	int32		weight;

	if (fair_key == NULL)
		return 1;
	generation = pg_atomic_read_u64(&sync_shmem->fair_generation);
	if (weight_cache != NULL &&
		(weight_cache_generation != generation ||
		 hash_get_num_entries(weight_cache) >= FAIR_CACHE_MAX))
	{
		hash_destroy(weight_cache);
		weight_cache = NULL;
	}
	if (weight_cache == NULL)
	{
		weight_cache = sync_fair_hash_create("syncwf fair weights", TopMemoryContext);
		weight_cache_generation = generation;
	}

	/* the name without its kind: "mtx/" and "sem/" share the rows */
	sync_fair_make_key(&key, lock_name + 4, fair_key);
	entry = hash_search(weight_cache, &key, HASH_FIND, NULL);
	if (entry != NULL)
		return entry->weight;

	relid = sync_fair_weight_relid();
	weight = OidIsValid(relid) ? sync_fair_read(relid, key.name, fair_key) : 1;
	/* a change that committed while we read is not cached */
	if (pg_atomic_read_u64(&sync_shmem->fair_generation) == weight_cache_generation)
	{
		entry = hash_search(weight_cache, &key, HASH_ENTER, &found);
		entry->weight = weight;
	}
	return weight;
}

/*
 * The weight of a request's fair key (NULL: none, weight 1) on the lock it
 * names.  A fair key is for a request of one lock: requests of several
 * locks are granted all or nothing, and only because any two of them are
 * in the same order in every queue they share (queue time and arrival are
 * global) can they never wait for each other; fair tags depend on each
 * queue's other entries, and would break that.  No LWLock may be held.
 */
int32
sync_fair_request_weight(char **names, int nnames, const char *fair_key)
{
	if (fair_key == NULL)
		return 1;
	if (nnames > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fair_key is for requests of one lock, and this one names %d", nnames),
				 errdetail("Requests of several locks are queued in the same order in every queue they share, so that two of them never wait for each other; fair keys would order each queue differently."),
				 errhint("Leave fair_key NULL, or request the locks one by one.")));
	return sync_fair_weight_of(names[0], fair_key);
}

/* A trigger on sync_fair_weight saw a change of this transaction. */
void
sync_fair_weights_changed(void)
{
	pending_change = true;
}

/* Did this transaction change the table? */
bool
sync_fair_weights_pending(void)
{
	return pending_change;
}

/*
 * Pre-commit: read the table as this transaction leaves it, for the commit
 * to apply.
 */
void
sync_fair_weights_precommit(void)
{
	Oid			relid;
	int			rc;
	int			nestlevel;

	if (!pending_change)
		return;
	relid = sync_fair_weight_relid();
	pending_rows = sync_fair_hash_create("syncwf fair weights at commit",
										 TopTransactionContext);
	if (!OidIsValid(relid))
		return;					/* dropped in this transaction */
	/* so that the snapshot sees the transaction's last statement */
	CommandCounterIncrement();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	nestlevel = sync_search_path_restrict();
	PushActiveSnapshot(GetLatestSnapshot());
	rc = SPI_execute(psprintf("SELECT pattern, fair_key, weight FROM %s",
							  sync_qualified(relid)), true, 0);
	PopActiveSnapshot();
	sync_search_path_restore(nestlevel);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read sync_fair_weight: %s", SPI_result_code_string(rc));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		char	   *pattern = SPI_getvalue(tup, desc, 1);
		char	   *fair_key = SPI_getvalue(tup, desc, 2);
		bool		isnull;
		Datum		d = SPI_getbinval(tup, desc, 3, &isnull);
		FairWeightKey key;
		FairWeightEntry *entry;

		if (pattern == NULL || fair_key == NULL || isnull)
			continue;
		sync_fair_make_key(&key, pattern, fair_key);
		entry = hash_search(pending_rows, &key, HASH_ENTER, NULL);
		entry->weight = Max(DatumGetInt32(d), 1);
	}
	SPI_finish();
}

/* The weight the rows read at pre-commit give fair_key on 'lock'. */
static int32
sync_fair_match(const SyncLock *lock, const char *fair_key)
{
	SyncPatternCandidate c;

	sync_pattern_candidates_init(&c, lock->tag.name + 4);
	while (sync_pattern_next_candidate(&c))
	{
		FairWeightKey key;
		FairWeightEntry *entry;

		sync_fair_make_key(&key, c.name, fair_key);
		entry = hash_search(pending_rows, &key, HASH_FIND, NULL);
		if (entry != NULL)
			return entry->weight;
	}
	return 1;
}

/*
 * Give each entry of 'list' with a fair key the weight that now applies;
 * mark those whose weight changed.  Returns whether any did.
 */
static bool
sync_fair_reweigh(SyncLock *lock, SyncEntryList *list)
{
	bool		changed = false;

	sync_elist_foreach(e, list, lock_link)
	{
		int32		weight;

		if (e->fair_key[0] == '\0')
			continue;
		weight = sync_fair_match(lock, e->fair_key);
		if (weight != e->fair_weight)
		{
			e->fair_weight = weight;
			e->fair_retag = true;
			changed = true;
		}
	}
	return changed;
}

/*
 * Commit: invalidate every backend's cache, then give the queued entries
 * of this database the weights that now apply, and tag their queues again.
 * Runs after the commit is durable; must not raise errors (nothing here
 * allocates: the hash of rows was built at pre-commit).
 */
void
sync_fair_weights_at_commit(void)
{
	SyncLiveIter it;

	if (pending_rows == NULL)
	{
		sync_fair_weights_forget();
		return;
	}
	pg_atomic_fetch_add_u64(&sync_shmem->fair_generation, 1);

	sync_lock_partitions(SYNC_ALL_PARTITIONS, LW_EXCLUSIVE);
	sync_foreach_live_lock(it)
	{
		SyncLock   *lock = sync_live_lock(it);

		if (lock->tag.dbid != MyDatabaseId)
			continue;
		(void) sync_fair_reweigh(lock, &lock->dormant);
		if (sync_fair_reweigh(lock, &lock->waiters))
		{
			sync_fair_retag(lock);
			/* a new order may put an entry that fits at the front */
			sync_grant_waiters(lock);
		}
	}
	sync_unlock_partitions(SYNC_ALL_PARTITIONS);
	sync_grant_deferred();
	sync_fair_weights_forget();
}

/* End of transaction: forget this transaction's changes. */
void
sync_fair_weights_forget(void)
{
	pending_change = false;
	pending_rows = NULL;		/* in TopTransactionContext */
}
