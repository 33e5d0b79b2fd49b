/*-------------------------------------------------------------------------
 *
 * engine/engine_internal.h
 *		What only the files of engine/ share.  Includes engine.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_ENGINE_ENGINE_INTERNAL_H
#define SYNC_ENGINE_ENGINE_INTERNAL_H

#include "access/htup.h"
#include "access/transam.h"
#include "access/tupdesc.h"
#include "datatype/timestamp.h"
#include "lib/ilist.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"
#include "engine/engine.h"

/*
 * stats.c: Per-lock statistics: what the engine counts through a lock's row,
 * and the copies the view sync_lock_stats shows.
 */

extern SyncStats *sync_stats_attach(const SyncLockTag *tag, uint32 hashcode);
extern void sync_stats_detach(SyncStats *s);
extern void sync_stats_granted(SyncStats *s, bool waited, TimestampTz since,
							   TimestampTz now);
extern void sync_stats_wait_ended(SyncStats *s, SyncWaitEnd how,
								  TimestampTz since);
extern void sync_stats_hold_ended(SyncStats *s, TimestampTz since);
extern void sync_stats_queued(SyncStats *s, int32 nwaiting);
extern void sync_stats_set_restore_hook(SyncStatsRestoreHook hook);
extern bool sync_stats_restore_row(const SyncStatsSaved *saved);
extern int	sync_stats_save(void (*save) (const SyncStatsSaved *saved, void *arg),
							void *arg);

/*
 * lock_table.c: The shared-memory lock table: locks, their entries (holds
 * and queue entries), the partition LWLocks that protect them, and the pool
 * entries come from.
 */

extern void sync_lock_uncache(SyncLock *lock);
extern void sync_lock_remove(SyncLock *lock);
extern void sync_lock_drop_cached(Oid dbid, const char *name);
extern void sync_lock_rate_wait(SyncLock *lock);
extern void sync_lock_rate_done(SyncLock *lock);
extern HTAB *sync_lock_hash(void);

/*
 * Entries by number: the pool is one array, and an entry's number is its
 * place in it, the same in every backend (links between entries that must
 * not be pointers use these).
 */
#define SYNC_ENTRY_NONE		(-1)
extern SyncEntry *sync_entry_pool;

static inline SyncEntry *
sync_entry_at(int32 i)
{
	return i == SYNC_ENTRY_NONE ? NULL : &sync_entry_pool[i];
}

static inline int32
sync_entry_index(const SyncEntry *e)
{
	return e == NULL ? SYNC_ENTRY_NONE : (int32) (e - sync_entry_pool);
}

/*
 * backend_wait.c: A session's wait for the grant of its request.
 */

extern void sync_wait_loop(SyncEntry *first, char **names, int nnames,
						   int64 timeout_us, SyncEntry **waiting);

/*
 * deadlock.c: Waits-for cycles through syncwf's waits and PostgreSQL's
 * heavyweight locks.
 */

extern SyncDeadlock *sync_deadlock_check(SyncEntry *first);
extern void sync_deadlock_report(SyncDeadlock *deadlock);

/*
 * grant_rules.c: Who may be granted now.
 */

extern int32 sync_entry_unfit_limit(const SyncEntry *e, bool *rate);
extern bool sync_entry_fits(const SyncEntry *e, TimestampTz *now);
extern SyncEntry *sync_queue_front(SyncLock *lock);
extern bool sync_queue_wake_unfit(SyncLock *lock);
extern SyncPassStep sync_pass_step(SyncEntry *w, int nheld, int slots_held,
								   bool *passing, SyncBestEffort *be,
								   TimestampTz *now);
extern bool sync_best_effort_pass(const SyncEntry *w, SyncBestEffort *be);
extern void sync_count_passes(SyncLock *lock, SyncEntry *e);
extern bool sync_request_known_blocked(const SyncEntry *e);
extern bool sync_blocked_note(const SyncEntry *entry);
extern void sync_blocked_clear(void);
extern bool sync_entry_grantable_check(SyncEntry *e);

/*
 * queue_order.c: A lock's lists of entries and their order.
 */

extern bool sync_entry_precedes(const SyncEntry *a, const SyncEntry *b);
extern void sync_fair_retag(SyncLock *lock);
extern SyncEntry *sync_queue_over_cap(SyncEntry *first);
extern void sync_queue_unlink(SyncEntry *first);

/*
 * queue_rank.c: The order-statistic tree of a lock's queue.
 */

extern void sync_rank_insert(SyncLock *lock, SyncEntry *e, SyncEntry *prev);
extern void sync_rank_remove(SyncLock *lock, SyncEntry *e);
extern int	sync_rank_position(const SyncEntry *e);
extern SyncEntry *sync_rank_last_at_least(SyncLock *lock, int32 priority);
#ifdef USE_ASSERT_CHECKING
extern bool sync_rank_check(SyncLock *lock);
#endif

/*
 * rate_limits.c: The token bucket of a rate-limited semaphore.
 */

extern void sync_rate_configure(SyncLock *lock, int32 limit, int64 period_us,
								TimestampTz now);
extern bool sync_rate_allows(const SyncLock *lock, int32 k, TimestampTz now);
extern void sync_rate_spend(SyncLock *lock, int32 k, TimestampTz now);
extern TimestampTz sync_rate_due(const SyncLock *lock, int32 k);

/*
 * sem_limits.c: Semaphore limits: reading them from sync_limit, and carrying
 * a transaction's changes into the lock table when it commits.
 */

extern void sync_limit_lookup(const char *lock_name, Oid relid, SyncLimitValue *value);
extern void sync_limit_lookup_optional(const char *lock_name, Oid relid,
									   SyncLimitValue *value);

#endif							/* SYNC_ENGINE_ENGINE_INTERNAL_H */
