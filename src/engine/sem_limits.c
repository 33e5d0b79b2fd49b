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
 * locks before it creates a lock from them (backend_holds.c, holder_table.c), so a limit read
 * before a concurrent change can never be installed after it.
 *
 * The row that applies to semaphore "sem/<namespace>/<key>" is its own row
 * "<namespace>/<key>", else the longest *pattern* row "<prefix>/\*" (a name
 * ending in "/\*") whose prefix the key starts with: "exports/\*" is the
 * default limit of every "sem/exports/..." without a row of its own,
 * "exports/eu/\*" of those under "exports/eu/" (and beats "exports/\*"
 * there).  A lock remembers which row it took (pattern_len), for the
 * sync_locks view and error messages.  Besides sizelimit, a row carries
 * max_waiters, the longest the semaphore's queue may be.
 *
 * Limits are read as committed: a change takes effect when its transaction
 * commits, for everyone, the changing transaction included, so the lock
 * table never holds a limit that could still roll back.
 *
 * Changes are collected by a row trigger (and a TRUNCATE trigger) on
 * sync_limit (triggers.c, which calls sync_limits_changed()); a changed
 * pattern row may concern any semaphore, so it counts as a change of every
 * row, as a TRUNCATE does.  Just before commit the changed rows are read again with a
 * fresh snapshot, which sees exactly what this transaction leaves behind
 * (rolled-back savepoints included); at commit those values are installed
 * and every raised limit immediately grants waiters.  An aborted transaction
 * changes nothing.
 *
 * Locking: backend-local state, except at commit, which takes the
 * partition lock of each changed semaphore (every partition after a
 * TRUNCATE).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type_d.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "engine/engine_internal.h"

#define LIMIT_UNDEFINED		SYNC_LIMIT_UNDEFINED

/* Changed rows past which pre-commit reads the whole table instead. */
#define LIMIT_BULK_CHANGE	1000

/*
 * A row of sync_limit, by name: pattern rows (sync_limit_patterns()), the
 * whole table (pre-commit after a TRUNCATE or a pattern change), or the
 * value that applies to each changed row's semaphore (other pre-commits).
 */
typedef struct LimitEntry
{
	char		name[SYNC_NAME_BUFLEN]; /* "<namespace>/<key>", hash key */
	SyncLimitValue value;
} LimitEntry;

/* Prepared lookup, for the sync_limit table it was built for. */
static SPIPlanPtr lookup_plan = NULL;
static Oid	lookup_plan_relid = InvalidOid;

/* This transaction's changes to sync_limit. */
static List *pending_names = NIL;	/* char *, in TopTransactionContext */
static bool pending_all = false;	/* TRUNCATE: every row may have changed */
static Oid	pending_relid = InvalidOid;
static HTAB *pending_values = NULL; /* LimitEntry, read at pre-commit */
static uint64 pending_gen = 0;	/* limit generation before that read */

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

/* Is this sync_limit name a pattern ("<prefix>/\*")? */
static bool
sync_limit_is_pattern(const char *name)
{
	size_t		len = strlen(name);

	return len >= 2 && name[len - 2] == '/' && name[len - 1] == '*';
}

/* Finds the row named 'name' in 'rows' (a caller's set of rows). */
typedef bool (*LimitFind) (void *rows, const char *name, SyncLimitValue *row);

/*
 * What the rows 'find' sees say of the semaphore of key 'key': its own row,
 * else the longest pattern.  value->limit is LIMIT_UNDEFINED when none
 * applies.  The one place that rule is written.
 */
static void
sync_limit_resolve(const char *key, LimitFind find, void *rows, SyncLimitValue *value)
{
	SyncPatternCandidate c;

	sync_pattern_candidates_init(&c, key);
	while (sync_pattern_next_candidate(&c))
		if (find(rows, c.name, value) && value->limit != LIMIT_UNDEFINED)
		{
			value->pattern_len = c.pattern_len;
			return;
		}
	value->limit = LIMIT_UNDEFINED;
	value->max_waiters = -1;
	value->pattern_len = 0;
	value->rate_limit = 0;
	value->rate_period_us = 0;
	value->best_effort = false;
	value->is_parent = false;
	value->guarantee = 0;
	value->aging_interval_us = 0;
	value->aging_max = 0;
	value->preempt = value->parent_preempt = false;
	value->parent_limit = 0;
	value->parent[0] = '\0';
}

/* LimitFind over the last SPI result of sync_limit_select() (a few rows). */
static bool
sync_limit_find_spi(void *rows, const char *name, SyncLimitValue *row)
{
	(void) rows;
	for (uint64 i = 0; i < SPI_processed; i++)
		if (strcmp(sync_limit_row(i, row), name) == 0)
			return true;
	return false;
}

/* LimitFind over a hash table of LimitEntry. */
static bool
sync_limit_find_hash(void *rows, const char *name, SyncLimitValue *row)
{
	LimitEntry *entry = hash_search((HTAB *) rows, name, HASH_FIND, NULL);

	if (entry == NULL)
		return false;
	*row = entry->value;
	return true;
}

/* Build (once per table) the plan that reads the rows that may apply. */
static SPIPlanPtr
sync_lookup_plan(Oid relid)
{
	if (lookup_plan == NULL || lookup_plan_relid != relid)
	{
		Oid			argtypes[1] = {TEXTARRAYOID};

		lookup_plan = sync_prepare_kept(psprintf("%s WHERE name OPERATOR(pg_catalog.=) ANY ($1)",
												 sync_limit_select(relid)),
										1, argtypes, lookup_plan);
		lookup_plan_relid = relid;
	}
	return lookup_plan;
}

/*
 * Read what sync_limit says of the semaphore of key 'key' (its own row or
 * a pattern).  Caller is connected to SPI.  value->limit is LIMIT_UNDEFINED
 * when no row applies.
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
static void
sync_limit_read(Oid relid, const char *key, bool committed_only,
				SyncLimitValue *value)
{
	Datum		values[1];
	int			rc;
	Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
	int			nestlevel = sync_search_path_restrict();

	if (committed_only)
		snapshot->curcid = FirstCommandId;

	values[0] = sync_pattern_candidate_array(key);
	rc = SPI_execute_snapshot(sync_lookup_plan(relid), values, NULL,
							  snapshot, InvalidSnapshot,
							  true, false, 0);
	UnregisterSnapshot(snapshot);
	sync_search_path_restore(nestlevel);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read sync_limit: %s", SPI_result_code_string(rc));
	sync_limit_resolve(key, sync_limit_find_spi, NULL, value);
}

/*
 * What the committed sync_limit table relid says of semaphore lock_name
 * ("sem/<namespace>/<key>"): value->limit is LIMIT_UNDEFINED (-1) when no
 * committed row applies; sync_limit_lookup() raises 42704 instead.  A
 * change this transaction made is not seen: limits take effect at commit,
 * for the changing transaction too.
 */
void
sync_limit_lookup_optional(const char *lock_name, Oid relid, SyncLimitValue *value)
{
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	sync_limit_read(relid, lock_name + 4, true, value);
	SPI_finish();
}

void
sync_limit_lookup(const char *lock_name, Oid relid, SyncLimitValue *value)
{
	const char *limit_name = lock_name + 4;

	sync_limit_lookup_optional(lock_name, relid, value);
	if (value->limit == LIMIT_UNDEFINED)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("semaphore \"%s\" has no limit", lock_name),
				 errdetail("The table sync_limit has no row named \"%s\", and no pattern row such as \"%.*s*\" covers it.",
						   limit_name, (int) (strchr(limit_name, '/') - limit_name + 1), limit_name),
				 errhint("Insert one, for example: INSERT INTO sync_limit (name, sizelimit) VALUES ('%s', 1);",
						 limit_name)));
}

/*
 * Every committed pattern row of sync_limit table relid, by name, in a hash
 * table of the current memory context, for sync_limit_match(): for callers
 * that resolve many semaphores at once (keyed holds loaded from sync_state).
 */
HTAB *
sync_limit_patterns(Oid relid)
{
	HTAB	   *rows = sync_limit_hash_create("syncwf limit patterns",
											  CurrentMemoryContext, 16);
	Snapshot	snapshot;
	char	   *query;
	int			rc;
	int			nestlevel;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	nestlevel = sync_search_path_restrict();
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	snapshot->curcid = FirstCommandId;	/* committed only: sync_limit_read() */
	query = psprintf("%s WHERE name OPERATOR(pg_catalog.~~) '%%/*'",
					 sync_limit_select(relid));
	rc = SPI_execute_snapshot(SPI_prepare(query, 0, NULL), NULL, NULL, snapshot,
							  InvalidSnapshot, true, false, 0);
	UnregisterSnapshot(snapshot);
	sync_search_path_restore(nestlevel);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read sync_limit: %s", SPI_result_code_string(rc));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		SyncLimitValue row;
		char	   *name = sync_limit_row(i, &row);
		LimitEntry *entry;

		if (!sync_limit_is_pattern(name) || row.limit == LIMIT_UNDEFINED)
			continue;
		entry = hash_search(rows, name, HASH_ENTER, NULL);
		entry->value = row;
	}
	SPI_finish();
	return rows;
}

/*
 * What the rows in 'rows' (by name) say of the semaphore of key 'key': its
 * own row if 'rows' has it, else the longest pattern.  value->limit is
 * LIMIT_UNDEFINED when none applies.
 */
void
sync_limit_match(HTAB *rows, const char *key, SyncLimitValue *value)
{
	sync_limit_resolve(key, sync_limit_find_hash, rows, value);
}

/*
 * A launch plan's semaphore that no row applies to has no overall limit,
 * only its versions' (launch_policy.c): if 'value' says no row applies to
 * semaphore lock_name and it is a launch plan's, make it say so and return
 * true.
 */
bool
sync_limit_plan_default(const char *lock_name, SyncLimitValue *value)
{
	if (value->limit != LIMIT_UNDEFINED || !sync_lock_is_launch_plan(lock_name))
		return false;
	value->limit = PG_INT32_MAX;
	value->max_waiters = -1;
	value->pattern_len = 0;
	value->rate_limit = 0;
	value->rate_period_us = 0;
	value->best_effort = false;
	value->is_parent = false;
	value->guarantee = 0;
	value->aging_interval_us = 0;
	value->aging_max = 0;
	value->preempt = value->parent_preempt = false;
	value->parent_limit = 0;
	value->parent[0] = '\0';
	return true;
}

/*
 * Give 'lock' (a semaphore) what sync_limit says of it: its limit, queue
 * cap and rate (a new rate starts with a full bucket, a changed one keeps
 * the tokens it has: rate_limits.c), its parent's group (limit_groups.c:
 * the caller made sure it exists) and whether it is a parent itself.
 * Caller holds its partition exclusively.
 */
void
sync_limit_set(SyncLock *lock, const SyncLimitValue *value)
{
	Assert(sync_partition_held(lock->hashcode, true));
	lock->limit = value->limit;
	lock->max_waiters = value->max_waiters;
	lock->pattern_len = value->pattern_len;
	lock->best_effort = value->best_effort;
	sync_rate_configure(lock, value->rate_limit, value->rate_period_us,
						value->rate_limit > 0 ? GetCurrentTimestamp() : 0);
	sync_aging_configure(lock, value->aging_interval_us, value->aging_max);
	if (lock->preempt_grace_us != (value->preempt ? value->preempt_grace_us : -1))
		lock->preempt_seen = 0; /* its front may preempt now */
	lock->preempt_grace_us = value->preempt ? value->preempt_grace_us : -1;
	if (!sync_group_join(lock, value))
		elog(WARNING, "syncwf: semaphore \"%s\" counts without its parent \"%s\"",
			 lock->tag.name, value->parent);
}

/*
 * The name of the sync_limit row that applies to semaphore 'lock', palloc'd
 * (NULL for a mutex, or a launch plan's semaphore without a row).  Caller
 * holds its partition.
 */
char *
sync_limit_row_name(const SyncLock *lock)
{
	const char *key = lock->tag.name + 4;

	if (lock->kind != SYNC_KIND_SEMAPHORE || !lock->limit_defined ||
		lock->limit == PG_INT32_MAX)
		return NULL;
	if (lock->pattern_len == 0)
		return pstrdup(key);
	return psprintf("%.*s*", (int) lock->pattern_len, key);
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
	if (name == NULL || sync_limit_is_pattern(name))
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
 * Pre-commit, after reading the changed rows: make the group of every
 * parent they name (limit_groups.c), so that the commit, which must not
 * fail, only links locks to groups that exist.  The groups get their
 * limits at commit.
 */
static void
sync_limits_precommit_groups(void)
{
	HASH_SEQ_STATUS status;
	LimitEntry *value;

	hash_seq_init(&status, pending_values);
	while ((value = hash_seq_search(&status)) != NULL)
		if (value->value.parent[0] != '\0')
			sync_group_ensure(value->value.parent, 0, -1, 0);
}

/*
 * Commit: give the groups of changed parent rows their new limits
 * (generation 'gen'), and those that changed rows name as parent the
 * limit that was read with them, unless the parent changed since.
 */
static bool
sync_limits_commit_groups(uint64 gen)
{
	HASH_SEQ_STATUS status;
	LimitEntry *value;
	bool		lowered = false;

	hash_seq_init(&status, pending_values);
	while ((value = hash_seq_search(&status)) != NULL)
	{
		const SyncLimitValue *v = &value->value;

		/* a parent row's own value (not a pattern's, after its delete) */
		if (sync_group_committed(value->name, v->pattern_len == 0 ? v->limit : 0,
								 v->pattern_len == 0 && v->preempt ? v->preempt_grace_us : -1,
								 gen))
			lowered = true;
		if (v->parent[0] != '\0' &&
			hash_search(pending_values, v->parent, HASH_FIND, NULL) == NULL &&
			sync_group_committed(v->parent, v->parent_limit,
								 v->parent_preempt ? v->parent_grace_us : -1,
								 pending_gen))
			lowered = true;
	}
	return lowered;
}

/*
 * sync_lock_foreach() visitor, after a parent's limit was lowered: a
 * grouped semaphore of this database tells the owners of the requests
 * that take more slots under its parent now than the parent has
 * (*(bool *) arg: a keyed one is among them), and grants again, as its
 * ready waiter may be one of them.
 */
static void
sync_limit_wake_grouped(SyncLock *lock, void *arg)
{
	if (lock->tag.dbid != MyDatabaseId || lock->groupno == SYNC_ENTRY_NONE)
		return;
	if (sync_queue_wake_unfit(lock))
		*(bool *) arg = true;
	sync_grant_waiters(lock);
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
	pending_gen = pg_atomic_read_u64(&sync_shmem->limit_generation);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	if (pending_all)
	{
		char	   *query = sync_limit_select(pending_relid);
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
			SyncLimitValue row;
			char	   *name = sync_limit_row(i, &row);
			LimitEntry *entry = hash_search(pending_values, name, HASH_ENTER, NULL);

			entry->value = row;
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
				sync_limit_read(pending_relid, name, false, &entry->value);
		}
	}
	SPI_finish();
	sync_limits_precommit_groups();
}

/*
 * Install one committed limit into the semaphore of that name in the lock
 * table.  Caller holds its partition exclusively.
 */
static void
sync_limit_apply(SyncLock *lock, const SyncLimitValue *given)
{
	SyncLimitValue value = *given;

	Assert(sync_partition_held(lock->hashcode, true));
	(void) sync_limit_plan_default(lock->tag.name, &value);
	if (value.limit == LIMIT_UNDEFINED)
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
	sync_limit_set(lock, &value);
	lock->limit_relid = pending_relid;
	lock->limit_defined = true;
	/*
	 * A raised limit grants at once; a lowered one preempts nobody, and a
	 * lowered max_waiters leaves the queue as it is (it refuses newcomers).
	 * Requests for more slots than a lowered limit are passed over from
	 * now on; their owners are told: a backend wakes and fails, the worker
	 * withdraws a keyed one.
	 */
	if (sync_queue_wake_unfit(lock))
	{
		sync_unfit_set();
		sync_worker_wake();
	}
	sync_grant_waiters(lock);
}

/*
 * sync_lock_foreach() visitor: apply the pending rows to one semaphore of
 * this database (sync_limit_apply() may drop it).
 */
static void
sync_limit_apply_pending(SyncLock *lock, void *arg)
{
	SyncLimitValue value;

	if (lock->tag.dbid != MyDatabaseId || lock->kind != SYNC_KIND_SEMAPHORE)
		return;
	sync_limit_match(pending_values, lock->tag.name + 4, &value);
	sync_limit_apply(lock, &value);
}

/*
 * After a parent's limit was lowered: wake the requests of its children
 * that it leaves unfit.  The children are found by a walk of the lock
 * table, as for a TRUNCATE: a rare change by hand.
 */
static void
sync_limits_wake_lowered(void)
{
	uint32		all = SYNC_ALL_PARTITIONS;
	bool		keyed = false;

	sync_lock_partitions(all, LW_EXCLUSIVE);
	sync_lock_foreach(sync_limit_wake_grouped, &keyed);
	sync_unlock_partitions(all);
	if (keyed)
	{
		sync_unfit_set();
		sync_worker_wake();
	}
}

/*
 * Commit: install what pre-commit read.  Runs after the commit is durable;
 * must not raise errors.
 */
void
sync_limits_at_commit(void)
{
	HASH_SEQ_STATUS status;
	uint64		gen;
	bool		lowered;

	if (pending_values == NULL)
	{
		sync_limits_forget();
		return;
	}

	/* first invalidate every lock creation in flight (see backend_holds.c) */
	gen = pg_atomic_add_fetch_u64(&sync_shmem->limit_generation, 1);
	lowered = sync_limits_commit_groups(gen);

	if (pending_all)
	{
		uint32		all = SYNC_ALL_PARTITIONS;

		sync_lock_partitions(all, LW_EXCLUSIVE);
		sync_lock_foreach(sync_limit_apply_pending, NULL);
		sync_unlock_partitions(all);
	}
	else
	{
		LimitEntry *value;

		hash_seq_init(&status, pending_values);
		while ((value = hash_seq_search(&status)) != NULL)
		{
			char		lock_name[SYNC_NAME_BUFLEN];
			LWLock	   *partition;
			SyncLock   *lock;

			snprintf(lock_name, sizeof(lock_name), "sem/%s", value->name);
			lock = sync_lock_find(MyDatabaseId, lock_name, LW_EXCLUSIVE,
								  &partition);
			if (lock != NULL)
				sync_limit_apply(lock, &value->value);
			LWLockRelease(partition);
		}
	}
	if (lowered)
		sync_limits_wake_lowered();
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
