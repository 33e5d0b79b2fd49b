/*-------------------------------------------------------------------------
 *
 * stats.h
 *		Per-lock statistics (stats.c): what the engine counts through a
 *		lock's row, and the copies the view sync_lock_stats shows.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_STATS_H
#define SYNC_STATS_H

#include "datatype/timestamp.h"

#include "names.h"

/* A row of counts: one lock's, one namespace's, or the overflow row's. */
typedef struct SyncStats SyncStats;

/* How a wait ended without a grant. */
typedef enum SyncWaitEnd
{
	SYNC_WAIT_TIMEOUT,			/* its timeout passed */
	SYNC_WAIT_CANCEL,			/* anything else: cancel, error, withdrawal */
	SYNC_WAIT_DEADLOCK			/* its waiter was a deadlock's victim */
} SyncWaitEnd;

/* A copy of one row, for the view. */
typedef struct SyncStatsRow
{
	char		name[SYNC_NAME_BUFLEN];	/* lock, "<namespace>/\*" or "*" */
	int64		grants_immediate;
	int64		grants_waited;
	int64		timeouts;
	int64		cancels;
	int64		deadlocks;
	int64		wait_count;
	int64		wait_total_us;
	int64		wait_p50_us;	/* -1: no wait yet */
	int64		wait_p99_us;
	int64		wait_max_us;
	int64		hold_count;
	int64		hold_total_us;
	int32		max_queue;
	TimestampTz reset_at;
} SyncStatsRow;

extern Size sync_stats_shmem_size(int max_lock_rows);
extern void sync_stats_shmem_request(void);
extern void sync_stats_shmem_init(int max_lock_rows);

extern SyncStats *sync_stats_attach(const SyncLockTag *tag, uint32 hashcode);
extern void sync_stats_detach(SyncStats *s);

extern void sync_stats_granted(SyncStats *s, bool waited, TimestampTz since,
							   TimestampTz now);
extern void sync_stats_wait_ended(SyncStats *s, SyncWaitEnd how,
								  TimestampTz since);
extern void sync_stats_hold_ended(SyncStats *s, TimestampTz since);
extern void sync_stats_queued(SyncStats *s, int32 nwaiting);

extern int	sync_stats_snapshot(Oid dbid, SyncStatsRow **rows);
extern TimestampTz sync_stats_reset(Oid dbid, const char *name);

/*
 * A row as it is saved across a clean restart (PostgreSQL 18 and later,
 * stats_persist.c).  Its size never changes, so that a file written by one
 * build of syncwf can be read by the next: counters are kept by their
 * position, with room for more of them; SYNC_STATS_SAVED_FORMAT changes
 * whenever what a position means changes (the rows of an older format are
 * then dropped, not restored).
 */
#define SYNC_STATS_SAVED_FORMAT		1
#define SYNC_STATS_SAVED_COUNTERS	32
#define SYNC_STATS_SAVED_BUCKETS	160

typedef struct SyncStatsSaved
{
	SyncLockTag tag;			/* the row's name, zero padded */
	uint8		kind;			/* lock, namespace or overflow row */
	uint32		max_queue;
	uint64		counters[SYNC_STATS_SAVED_COUNTERS];	/* unused ones are 0 */
	uint64		hist[SYNC_STATS_SAVED_BUCKETS];
} SyncStatsSaved;

/* Called once, before the rows are first used, to restore the saved ones. */
typedef void (*SyncStatsRestoreHook) (void);

extern void sync_stats_set_restore_hook(SyncStatsRestoreHook hook);
extern bool sync_stats_restore_row(const SyncStatsSaved *saved);
extern int	sync_stats_save(void (*save) (const SyncStatsSaved *saved, void *arg),
							void *arg);

#endif							/* SYNC_STATS_H */
