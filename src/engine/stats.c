/*-------------------------------------------------------------------------
 *
 * stats.c
 *		Per-lock statistics, the rows behind the view sync_lock_stats:
 *		grants (at once or after a wait), waits and how they ended, a
 *		histogram of wait times, released holds and their total time, the
 *		longest queue seen.
 *
 * The rows live in a bounded shared hash ("syncwf lock stats") keyed, and
 * hashed, like the lock table: by lock tag (core/core.h).  A lock that enters the lock table
 * attaches to a row (lock_table.c) and counts through that pointer until
 * it leaves.  Which row:
 *	- its own, while fewer than syncwf.stats_max_locks locks have one;
 *	- beyond that, its namespace's ("<kind>/<namespace>/\*"), while fewer than
 *	  SYNC_STATS_NAMESPACE_ROWS namespaces have one;
 *	- beyond that, the one overflow row "*", over all databases.
 * A lock keeps the row it attached to while it stays in the lock table; a
 * semaphore cached there keeps it too.  Rows stay until sync_stats_reset()
 * or a restart.
 *
 * Across a clean restart, on PostgreSQL 18 and later: at shutdown the
 * checkpointer hands every row, as a SyncStatsSaved, to stats_persist.c,
 * which stores it in the cumulative statistics system (sync_stats_save());
 * at the next start the rows come back the first time any process uses
 * them (attach, view, reset): sync_stats_restore_pending() calls the
 * restore hook stats_persist.c set at load, once, with every partition
 * held exclusive, and the hook hands each saved row to
 * sync_stats_restore_row().  A lock that comes back later finds its row by
 * its tag, as if the server had never stopped.  After a crash PostgreSQL
 * discards every saved statistic, so the rows start from zero; before 18
 * they start from zero at any restart.
 *
 * Locking: the hash has SYNC_STATS_PARTITIONS partitions, each with an
 * LWLock (tranche "syncwf stats"), taken shared to find a row and attach
 * to it, exclusive to add or remove one; the view and a reset of every row
 * take them all, in ascending order.  A caller may hold lock-table
 * partitions when it takes one, never the reverse.  Counters are atomics,
 * updated without any lock by whoever holds a pointer to the row.  A row's
 * refcount counts the locks attached to it: a row is only removed at 0,
 * and zeroed instead while a lock still points to it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "port/atomics.h"
#include "port/pg_bitutils.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"

#include "engine/engine_internal.h"

#define SYNC_STATS_TRANCHE		"syncwf stats"
#define SYNC_STATS_PARTITIONS	16
#define SYNC_STATS_NAMESPACE_ROWS 256

/*
 * The wait-time histogram, in microseconds: 0-15 exactly, then four
 * buckets per power of two (each a quarter of its octave wide) up to 2^40
 * us (12.7 days), the last bucket taking anything longer.  A percentile is
 * reported as the middle of its bucket, at most 12.5% off.
 */
#define SYNC_HIST_EXACT			16
#define SYNC_HIST_SUB			4
#define SYNC_HIST_OCTAVES		36
#define SYNC_HIST_BUCKETS		(SYNC_HIST_EXACT + SYNC_HIST_SUB * SYNC_HIST_OCTAVES)

/*
 * Saved across a clean restart by position (SyncStatsSaved): a new counter
 * takes a new position, before SC_NCOUNTERS; moving one changes
 * SYNC_STATS_SAVED_FORMAT.
 */
typedef enum SyncStatsCounter
{
	SC_GRANTS_IMMEDIATE,
	SC_GRANTS_WAITED,
	SC_TIMEOUTS,
	SC_CANCELS,
	SC_DEADLOCKS,
	SC_WAIT_TOTAL,
	SC_WAIT_MAX,
	SC_HOLD_COUNT,
	SC_HOLD_TOTAL,
	SC_RESET_AT,
	SC_PREEMPTIONS,
	SC_NCOUNTERS
} SyncStatsCounter;

typedef enum SyncStatsRowKind
{
	SYNC_ROW_LOCK,
	SYNC_ROW_NAMESPACE,
	SYNC_ROW_OVERFLOW
} SyncStatsRowKind;

struct SyncStats
{
	SyncLockTag key;			/* hash key; must be first */
	uint8		kind;			/* SyncStatsRowKind */
	pg_atomic_uint32 refcount;	/* locks attached */
	pg_atomic_uint32 max_queue;
	pg_atomic_uint64 counters[SC_NCOUNTERS];
	pg_atomic_uint64 hist[SYNC_HIST_BUCKETS];
};

typedef struct SyncStatsShared
{
	LWLockPadded *locks;		/* SYNC_STATS_PARTITIONS, tranche above */
	int32		max_lock_rows;	/* syncwf.stats_max_locks at start */
	pg_atomic_uint32 nlock_rows;	/* rows of one lock each */
	pg_atomic_uint32 nnamespace_rows;	/* rows "<namespace>/\*" */
	pg_atomic_uint32 restored;	/* the saved rows are back (or none are
								 * saved on this major) */
	SyncStats	overflow;		/* the row "*", never in the hash */
} SyncStatsShared;

static SyncStatsShared *StatsShared = NULL;
static HTAB *StatsHash = NULL;

/* Set at load by stats_persist.c, on 18 and later (see the opening comment). */
static SyncStatsRestoreHook restore_hook = NULL;

static void sync_stats_lock_all(LWLockMode mode);
static void sync_stats_unlock_all(void);

/* Keys are lock tags, hashed and compared as the lock table does (core/core.h). */
static uint32
sync_stats_hash_fn(const void *key, Size keysize)
{
	return sync_lock_tag_hash(key);
}

static int
sync_stats_match(const void *key1, const void *key2, Size keysize)
{
	return sync_lock_tag_cmp(key1, key2);
}

static int
sync_stats_rows(int max_lock_rows)
{
	return max_lock_rows + SYNC_STATS_NAMESPACE_ROWS;
}

Size
sync_stats_shmem_size(int max_lock_rows)
{
	return add_size(MAXALIGN(sizeof(SyncStatsShared)),
					hash_estimate_size(sync_stats_rows(max_lock_rows),
									   sizeof(SyncStats)));
}

void
sync_stats_shmem_request(void)
{
	RequestNamedLWLockTranche(SYNC_STATS_TRANCHE, SYNC_STATS_PARTITIONS);
}

static void
sync_stats_zero(SyncStats *s, TimestampTz now)
{
	for (int i = 0; i < SC_NCOUNTERS; i++)
		pg_atomic_write_u64(&s->counters[i], 0);
	for (int i = 0; i < SYNC_HIST_BUCKETS; i++)
		pg_atomic_write_u64(&s->hist[i], 0);
	pg_atomic_write_u32(&s->max_queue, 0);
	pg_atomic_write_u64(&s->counters[SC_RESET_AT], (uint64) now);
}

static void
sync_stats_init_row(SyncStats *s, SyncStatsRowKind kind, TimestampTz now)
{
	s->kind = (uint8) kind;
	pg_atomic_init_u32(&s->refcount, 0);
	pg_atomic_init_u32(&s->max_queue, 0);
	for (int i = 0; i < SC_NCOUNTERS; i++)
		pg_atomic_init_u64(&s->counters[i], 0);
	for (int i = 0; i < SYNC_HIST_BUCKETS; i++)
		pg_atomic_init_u64(&s->hist[i], 0);
	pg_atomic_write_u64(&s->counters[SC_RESET_AT], (uint64) now);
}

/* shmem_startup_hook, under AddinShmemInitLock. */
void
sync_stats_shmem_init(int max_lock_rows)
{
	HASHCTL		info;
	bool		found;

	StatsShared = ShmemInitStruct("syncwf lock stats control",
								  sizeof(SyncStatsShared), &found);
	if (!found)
	{
		StatsShared->locks = GetNamedLWLockTranche(SYNC_STATS_TRANCHE);
		StatsShared->max_lock_rows = max_lock_rows;
		pg_atomic_init_u32(&StatsShared->nlock_rows, 0);
		pg_atomic_init_u32(&StatsShared->nnamespace_rows, 0);
		pg_atomic_init_u32(&StatsShared->restored, restore_hook == NULL);
		memset(&StatsShared->overflow.key, 0, sizeof(SyncLockTag));
		strcpy(StatsShared->overflow.key.name, "*");
		sync_stats_init_row(&StatsShared->overflow, SYNC_ROW_OVERFLOW,
							GetCurrentTimestamp());
	}
	info.keysize = sizeof(SyncLockTag);
	info.entrysize = sizeof(SyncStats);
	info.hash = sync_stats_hash_fn;
	info.match = sync_stats_match;
	info.num_partitions = SYNC_STATS_PARTITIONS;
	StatsHash = ShmemInitHash("syncwf lock stats",
							  sync_stats_rows(max_lock_rows),
							  sync_stats_rows(max_lock_rows),
							  &info,
							  HASH_ELEM | HASH_FUNCTION | HASH_COMPARE |
							  HASH_PARTITION | HASH_FIXED_SIZE);
}

static LWLock *
sync_stats_lock(uint32 hashcode)
{
	return &StatsShared->locks[hashcode % SYNC_STATS_PARTITIONS].lock;
}

/*
 * Before the first use of the rows after a start, the saved ones come back
 * (see the opening comment): once, by whichever process gets here first.
 */
static inline void
sync_stats_restore_pending(void)
{
	if (likely(pg_atomic_read_u32(&StatsShared->restored) != 0))
		return;
	sync_stats_lock_all(LW_EXCLUSIVE);
	if (pg_atomic_read_u32(&StatsShared->restored) == 0)
	{
		restore_hook();
		pg_atomic_write_u32(&StatsShared->restored, 1);
	}
	sync_stats_unlock_all();
}

/* Take one of 'limit' places counted by 'n'; false if none is left. */
static bool
sync_stats_reserve(pg_atomic_uint32 *n, int32 limit)
{
	if (pg_atomic_fetch_add_u32(n, 1) < (uint32) limit)
		return true;
	pg_atomic_fetch_sub_u32(n, 1);
	return false;
}

static pg_atomic_uint32 *
sync_stats_count_of(SyncStatsRowKind kind)
{
	return kind == SYNC_ROW_LOCK ? &StatsShared->nlock_rows
		: &StatsShared->nnamespace_rows;
}

/*
 * Attach to the row 'key' (whose hash is 'hashcode') names, adding it if
 * there is room for one more of its kind; NULL if it does not exist and
 * there is none.
 */
static SyncStats *
sync_stats_find_or_add(const SyncLockTag *key, uint32 hashcode,
					   SyncStatsRowKind kind)
{
	LWLock	   *partition = sync_stats_lock(hashcode);
	SyncStats  *s;
	bool		found;
	int32		limit = kind == SYNC_ROW_LOCK ? StatsShared->max_lock_rows
		: SYNC_STATS_NAMESPACE_ROWS;

	LWLockAcquire(partition, LW_SHARED);
	s = hash_search_with_hash_value(StatsHash, key, hashcode, HASH_FIND, NULL);
	if (s != NULL)
		pg_atomic_fetch_add_u32(&s->refcount, 1);
	LWLockRelease(partition);
	if (s != NULL || !sync_stats_reserve(sync_stats_count_of(kind), limit))
		return s;

	LWLockAcquire(partition, LW_EXCLUSIVE);
	s = hash_search_with_hash_value(StatsHash, key, hashcode,
									HASH_ENTER_NULL, &found);
	if (s == NULL || found)
		pg_atomic_fetch_sub_u32(sync_stats_count_of(kind), 1);
	if (s != NULL && !found)
		sync_stats_init_row(s, kind, GetCurrentTimestamp());
	if (s != NULL)
		pg_atomic_fetch_add_u32(&s->refcount, 1);
	LWLockRelease(partition);
	return s;
}

/*
 * The row the lock 'tag' (hash code 'hashcode', the lock table's) counts
 * in, as it enters the lock table (see the opening comment); the caller
 * passes it back to sync_stats_detach() when the lock leaves.  NULL before
 * the shared memory exists.
 */
SyncStats *
sync_stats_attach(const SyncLockTag *tag, uint32 hashcode)
{
	SyncLockTag key;
	SyncStats  *s;
	const char *name = tag->name;
	const char *slash;

	if (StatsHash == NULL)
		return NULL;
	sync_stats_restore_pending();
	s = sync_stats_find_or_add(tag, hashcode, SYNC_ROW_LOCK);
	if (s != NULL)
		return s;

	/* "<kind>/<namespace>/\*" of "<kind>/<namespace>/<key>" */
	slash = strchr(name, '/');
	if (slash != NULL)
		slash = strchr(slash + 1, '/');
	memset(&key, 0, sizeof(key));
	key.dbid = tag->dbid;
	snprintf(key.name, sizeof(key.name), "%.*s/*",
			 slash ? (int) (slash - name) : (int) strlen(name), name);
	s = sync_stats_find_or_add(&key, sync_lock_tag_hash(&key),
							   SYNC_ROW_NAMESPACE);
	if (s != NULL)
		return s;

	s = &StatsShared->overflow;
	pg_atomic_fetch_add_u32(&s->refcount, 1);
	return s;
}

/* The lock that attached to 's' leaves the lock table. */
void
sync_stats_detach(SyncStats *s)
{
	if (s != NULL)
		pg_atomic_fetch_sub_u32(&s->refcount, 1);
}

static void
sync_stats_add(SyncStats *s, SyncStatsCounter c, uint64 n)
{
	pg_atomic_fetch_add_u64(&s->counters[c], n);
}

static void
sync_stats_max(pg_atomic_uint64 *m, uint64 v)
{
	uint64		cur = pg_atomic_read_u64(m);

	while (v > cur && !pg_atomic_compare_exchange_u64(m, &cur, v))
		;
}

static int
sync_hist_bucket(uint64 us)
{
	int			octave;

	if (us < SYNC_HIST_EXACT)
		return (int) us;
	octave = pg_leftmost_one_pos64(us);
	if (octave >= 4 + SYNC_HIST_OCTAVES)
		return SYNC_HIST_BUCKETS - 1;
	return SYNC_HIST_EXACT + (octave - 4) * SYNC_HIST_SUB +
		(int) ((us >> (octave - 2)) & (SYNC_HIST_SUB - 1));
}

/* The middle of bucket b, in microseconds. */
static int64
sync_hist_value(int b)
{
	int			octave;
	int64		width;

	if (b < SYNC_HIST_EXACT)
		return b;
	octave = 4 + (b - SYNC_HIST_EXACT) / SYNC_HIST_SUB;
	width = INT64CONST(1) << (octave - 2);
	return (INT64CONST(1) << octave) +
		((b - SYNC_HIST_EXACT) % SYNC_HIST_SUB) * width + width / 2;
}

static void
sync_stats_wait(SyncStats *s, TimestampTz since, TimestampTz now)
{
	uint64		us = now > since ? (uint64) (now - since) : 0;

	pg_atomic_fetch_add_u64(&s->hist[sync_hist_bucket(us)], 1);
	sync_stats_add(s, SC_WAIT_TOTAL, us);
	sync_stats_max(&s->counters[SC_WAIT_MAX], us);
}

/*
 * Counting, by whoever holds the partition of the lock attached to 's'
 * (NULL: not counted).  A grant: at once, or after waiting since 'since'.
 */
void
sync_stats_granted(SyncStats *s, bool waited, TimestampTz since,
				   TimestampTz now)
{
	if (s == NULL)
		return;
	if (!waited)
	{
		sync_stats_add(s, SC_GRANTS_IMMEDIATE, 1);
		return;
	}
	sync_stats_add(s, SC_GRANTS_WAITED, 1);
	sync_stats_wait(s, since, now);
}

/* A wait that began at 'since' ended without a grant, now. */
void
sync_stats_wait_ended(SyncStats *s, SyncWaitEnd how, TimestampTz since)
{
	if (s == NULL)
		return;
	sync_stats_add(s, how == SYNC_WAIT_TIMEOUT ? SC_TIMEOUTS :
				   how == SYNC_WAIT_DEADLOCK ? SC_DEADLOCKS : SC_CANCELS, 1);
	sync_stats_wait(s, since, GetCurrentTimestamp());
}

/* A hold was preempted (preemption.c). */
void
sync_stats_preempted(SyncStats *s)
{
	if (s != NULL)
		sync_stats_add(s, SC_PREEMPTIONS, 1);
}

/* A hold granted at 'since' was released, now. */
void
sync_stats_hold_ended(SyncStats *s, TimestampTz since)
{
	TimestampTz now;

	if (s == NULL)
		return;
	now = GetCurrentTimestamp();
	sync_stats_add(s, SC_HOLD_COUNT, 1);
	sync_stats_add(s, SC_HOLD_TOTAL, now > since ? (uint64) (now - since) : 0);
}

/*
 * The mean time of the holds released in row s, in microseconds, or -1
 * before the first (the estimates of sync_waiters, wait_reasons.c).
 */
int64
sync_stats_mean_hold(SyncStats *s)
{
	uint64		count = pg_atomic_read_u64(&s->counters[SC_HOLD_COUNT]);

	if (count == 0)
		return -1;
	return (int64) (pg_atomic_read_u64(&s->counters[SC_HOLD_TOTAL]) / count);
}

/* The queue is now 'nwaiting' long. */
void
sync_stats_queued(SyncStats *s, int32 nwaiting)
{
	uint32		cur;

	if (s == NULL)
		return;
	cur = pg_atomic_read_u32(&s->max_queue);
	while ((uint32) nwaiting > cur &&
		   !pg_atomic_compare_exchange_u32(&s->max_queue, &cur, (uint32) nwaiting))
		;
}

/* The value below which a fraction 'q' of the waits in 'counts' fall. */
static int64
sync_hist_quantile(const uint64 *counts, uint64 total, double q, int64 max_us)
{
	uint64		rank = (uint64) ceil(q * (double) total);
	uint64		seen = 0;

	if (total == 0)
		return -1;
	rank = Max(rank, 1);
	for (int b = 0; b < SYNC_HIST_BUCKETS; b++)
	{
		seen += counts[b];
		if (seen >= rank)
			return Min(sync_hist_value(b), max_us);
	}
	return max_us;
}

static void
sync_stats_copy(SyncStats *s, SyncStatsRow *row)
{
	uint64		counts[SYNC_HIST_BUCKETS];
	uint64		total = 0;

	strlcpy(row->name, s->key.name, sizeof(row->name));
	row->grants_immediate = (int64) pg_atomic_read_u64(&s->counters[SC_GRANTS_IMMEDIATE]);
	row->grants_waited = (int64) pg_atomic_read_u64(&s->counters[SC_GRANTS_WAITED]);
	row->timeouts = (int64) pg_atomic_read_u64(&s->counters[SC_TIMEOUTS]);
	row->cancels = (int64) pg_atomic_read_u64(&s->counters[SC_CANCELS]);
	row->deadlocks = (int64) pg_atomic_read_u64(&s->counters[SC_DEADLOCKS]);
	row->preemptions = (int64) pg_atomic_read_u64(&s->counters[SC_PREEMPTIONS]);
	row->wait_total_us = (int64) pg_atomic_read_u64(&s->counters[SC_WAIT_TOTAL]);
	row->wait_max_us = (int64) pg_atomic_read_u64(&s->counters[SC_WAIT_MAX]);
	row->hold_count = (int64) pg_atomic_read_u64(&s->counters[SC_HOLD_COUNT]);
	row->hold_total_us = (int64) pg_atomic_read_u64(&s->counters[SC_HOLD_TOTAL]);
	row->reset_at = (TimestampTz) pg_atomic_read_u64(&s->counters[SC_RESET_AT]);
	row->max_queue = (int32) pg_atomic_read_u32(&s->max_queue);
	for (int b = 0; b < SYNC_HIST_BUCKETS; b++)
	{
		counts[b] = pg_atomic_read_u64(&s->hist[b]);
		total += counts[b];
	}
	row->wait_count = (int64) total;
	row->wait_p50_us = sync_hist_quantile(counts, total, 0.50, row->wait_max_us);
	row->wait_p99_us = sync_hist_quantile(counts, total, 0.99, row->wait_max_us);
}

static bool
sync_stats_in_use(SyncStats *s)
{
	if (pg_atomic_read_u32(&s->refcount) > 0)
		return true;
	for (int i = 0; i < SC_NCOUNTERS; i++)
		if (i != SC_RESET_AT &&
			pg_atomic_read_u64(&s->counters[i]) != 0)
			return true;
	return false;
}

static void
sync_stats_lock_all(LWLockMode mode)
{
	for (int i = 0; i < SYNC_STATS_PARTITIONS; i++)
		LWLockAcquire(&StatsShared->locks[i].lock, mode);
}

static void
sync_stats_unlock_all(void)
{
	for (int i = SYNC_STATS_PARTITIONS - 1; i >= 0; i--)
		LWLockRelease(&StatsShared->locks[i].lock);
}

/*
 * Copies of the rows of database 'dbid', and of the overflow row if
 * anything counts there, palloc'd in the current memory context.
 */
int
sync_stats_snapshot(Oid dbid, SyncStatsRow **rows)
{
	HASH_SEQ_STATUS seq;
	SyncStats  *s;
	int			n = 0;
	int			max;

	sync_stats_restore_pending();
	sync_stats_lock_all(LW_SHARED);
	max = (int) hash_get_num_entries(StatsHash) + 1;
	*rows = palloc(sizeof(SyncStatsRow) * max);
	hash_seq_init(&seq, StatsHash);
	while ((s = hash_seq_search(&seq)) != NULL)
		if (s->key.dbid == dbid)
			sync_stats_copy(s, &(*rows)[n++]);
	if (sync_stats_in_use(&StatsShared->overflow))
		sync_stats_copy(&StatsShared->overflow, &(*rows)[n++]);
	sync_stats_unlock_all();
	return n;
}

/* Reset one row: remove it if no lock is attached, else zero it. */
static void
sync_stats_reset_row(SyncStats *s, TimestampTz now)
{
	if (s->kind == SYNC_ROW_OVERFLOW ||
		pg_atomic_read_u32(&s->refcount) > 0)
	{
		sync_stats_zero(s, now);
		return;
	}
	pg_atomic_fetch_sub_u32(sync_stats_count_of(s->kind), 1);
	hash_search(StatsHash, &s->key, HASH_REMOVE, NULL);
}

/*
 * Reset the row named 'name' ("*" is the overflow row) of database 'dbid',
 * or, when 'name' is NULL, every row of that database and the overflow
 * row: the row of a lock nobody holds or waits for is removed (a lock kept
 * cached in the lock table is dropped from it first), the row of a lock in
 * use is set to zero.  Caller holds no partition lock.  Returns the moment
 * of the reset.
 */
TimestampTz
sync_stats_reset(Oid dbid, const char *name)
{
	TimestampTz now = GetCurrentTimestamp();

	sync_stats_restore_pending();
	/* an idle lock kept in the lock table gives its row up too */
	if (name == NULL || strcmp(name, "*") != 0)
		sync_lock_drop_cached(dbid, name);
	if (name != NULL && strcmp(name, "*") == 0)
		sync_stats_zero(&StatsShared->overflow, now);
	else if (name != NULL)
	{
		SyncLockTag key;
		uint32		hashcode;
		LWLock	   *partition;
		SyncStats  *s;

		memset(&key, 0, sizeof(key));
		key.dbid = dbid;
		strlcpy(key.name, name, sizeof(key.name));
		hashcode = sync_lock_tag_hash(&key);
		partition = sync_stats_lock(hashcode);
		LWLockAcquire(partition, LW_EXCLUSIVE);
		s = hash_search_with_hash_value(StatsHash, &key, hashcode, HASH_FIND, NULL);
		if (s != NULL)
			sync_stats_reset_row(s, now);
		LWLockRelease(partition);
	}
	else
	{
		HASH_SEQ_STATUS seq;
		SyncStats  *s;

		sync_stats_lock_all(LW_EXCLUSIVE);
		hash_seq_init(&seq, StatsHash);
		while ((s = hash_seq_search(&seq)) != NULL)
			if (s->key.dbid == dbid)
				sync_stats_reset_row(s, now);	/* dynahash allows removing
												 * the current element */
		sync_stats_zero(&StatsShared->overflow, now);
		sync_stats_unlock_all();
	}
	return now;
}

#ifdef SYNC_HAVE_CUSTOM_STATS

StaticAssertDecl(SC_NCOUNTERS <= SYNC_STATS_SAVED_COUNTERS,
				 "a saved row has room for every counter");
StaticAssertDecl(SYNC_HIST_BUCKETS == SYNC_STATS_SAVED_BUCKETS,
				 "a saved row has the buckets of the histogram");

/* At load: stats_persist.c restores the saved rows through 'hook'. */
void
sync_stats_set_restore_hook(SyncStatsRestoreHook hook)
{
	restore_hook = hook;
}

static void
sync_stats_save_row(SyncStats *s, SyncStatsSaved *saved)
{
	memset(saved, 0, sizeof(*saved));
	saved->tag = s->key;
	saved->kind = s->kind;
	saved->max_queue = pg_atomic_read_u32(&s->max_queue);
	for (int i = 0; i < SC_NCOUNTERS; i++)
		saved->counters[i] = pg_atomic_read_u64(&s->counters[i]);
	for (int b = 0; b < SYNC_HIST_BUCKETS; b++)
		saved->hist[b] = pg_atomic_read_u64(&s->hist[b]);
}

/*
 * Hand every row (the overflow row if anything counts there) to 'save', as
 * the checkpointer writes the statistics file at shutdown.  Returns how
 * many, or -1 if the rows saved at the last shutdown were never restored
 * (nothing used them since the start): those are still in the statistics
 * system, to be written again as they are.
 */
int
sync_stats_save(void (*save) (const SyncStatsSaved *saved, void *arg),
				void *arg)
{
	HASH_SEQ_STATUS seq;
	SyncStats  *s;
	SyncStatsSaved saved;
	int			n = 0;

	if (StatsHash == NULL || pg_atomic_read_u32(&StatsShared->restored) == 0)
		return -1;
	sync_stats_lock_all(LW_SHARED);
	hash_seq_init(&seq, StatsHash);
	while ((s = hash_seq_search(&seq)) != NULL)
	{
		sync_stats_save_row(s, &saved);
		save(&saved, arg);
		n++;
	}
	if (sync_stats_in_use(&StatsShared->overflow))
	{
		sync_stats_save_row(&StatsShared->overflow, &saved);
		save(&saved, arg);
		n++;
	}
	sync_stats_unlock_all();
	return n;
}

/*
 * Put back one saved row, from the restore hook (every partition is held
 * exclusive).  False if it is not a row, or there is no room for it: a
 * lower syncwf.stats_max_locks than at the shutdown, a second copy of a row.
 */
bool
sync_stats_restore_row(const SyncStatsSaved *saved)
{
	SyncStats  *s;
	SyncLockTag key;
	bool		found;

	if (saved->kind > SYNC_ROW_OVERFLOW || saved->tag.name[0] == '\0' ||
		memchr(saved->tag.name, '\0', sizeof(saved->tag.name)) == NULL)
		return false;
	if (saved->kind == SYNC_ROW_OVERFLOW)
		s = &StatsShared->overflow;
	else
	{
		memset(&key, 0, sizeof(key));
		key.dbid = saved->tag.dbid;
		strlcpy(key.name, saved->tag.name, sizeof(key.name));
		if (!sync_stats_reserve(sync_stats_count_of(saved->kind),
								saved->kind == SYNC_ROW_LOCK ?
								StatsShared->max_lock_rows :
								SYNC_STATS_NAMESPACE_ROWS))
			return false;
		s = hash_search(StatsHash, &key, HASH_ENTER_NULL, &found);
		if (s == NULL || found)
		{
			pg_atomic_fetch_sub_u32(sync_stats_count_of(saved->kind), 1);
			return false;
		}
		sync_stats_init_row(s, saved->kind, 0);
	}
	pg_atomic_write_u32(&s->max_queue, saved->max_queue);
	for (int i = 0; i < SC_NCOUNTERS; i++)
		pg_atomic_write_u64(&s->counters[i], saved->counters[i]);
	for (int b = 0; b < SYNC_HIST_BUCKETS; b++)
		pg_atomic_write_u64(&s->hist[b], saved->hist[b]);
	return true;
}

#endif							/* SYNC_HAVE_CUSTOM_STATS */
