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
 * lock_table.c: more of the lists of entries (engine.h: SyncEntryList).
 */

static inline bool
sync_elist_is_empty(const SyncEntryList *list)
{
	return list->head == SYNC_ENTRY_NONE;
}

static inline void
sync_elist_link_init(SyncEntry *e, size_t field)
{
	sync_link_of(e, field)->prev = sync_link_of(e, field)->next = SYNC_ENTRY_DETACHED;
}

static inline SyncEntry *
sync_elist_tail(const SyncEntryList *list)
{
	return sync_entry_at(list->tail);
}

static inline SyncEntry *
sync_elist_next(const SyncEntry *e, size_t field)
{
	return sync_entry_at(sync_link_of(e, field)->next);
}

static inline SyncEntry *
sync_elist_prev(const SyncEntry *e, size_t field)
{
	return sync_entry_at(sync_link_of(e, field)->prev);
}

static inline void
sync_elist_push_head(SyncEntryList *list, SyncEntry *e, size_t field)
{
	sync_elist_insert_after(list, NULL, e, field);
}

/* Visit the entries of a list from its tail (sync_elist_foreach()). */
#define sync_elist_foreach_reverse(e, list, field) \
	for (SyncEntry *e = sync_elist_tail(list); e != NULL; \
		 e = sync_entry_at(e->field.prev))

/*
 * Visit every lock of partition p whose front waiter waits for tokens
 * (sync_lock_rate_wait()).  The caller holds the partition exclusively; the
 * body may take the visited lock off the list.
 */
#define sync_foreach_rate_lock(lock, p) \
	for (SyncLock *lock = sync_lock_at(sync_shmem->rate_locks[p].head), \
		 *lock##_next_ = (lock != NULL ? sync_lock_at(lock->rate_link.next) : NULL); \
		 lock != NULL; \
		 lock = lock##_next_, \
		 lock##_next_ = (lock != NULL ? sync_lock_at(lock->rate_link.next) : NULL))

/* Is the lock on its partition's rate list? */
static inline bool
sync_lock_rate_waiting(const SyncLock *lock)
{
	return lock->rate_link.next != SYNC_ENTRY_DETACHED;
}

/*
 * grant_rules.c: Who may be granted now: what only the engine's files use.
 */

/* The clock, read once per caller and only when a rate needs it. */
static inline TimestampTz
sync_lazy_now(TimestampTz *now)
{
	if (*now == 0)
		*now = GetCurrentTimestamp();
	return *now;
}

/* Most waiters one grant may pass on a best-effort lock. */
#define SYNC_PASS_AHEAD_MAX	64

/*
 * What a walk down a queue has passed over so far under best-effort
 * queueing: how many waiters, and how many more grants to requests behind
 * them the one closest to its bound allows.
 */
typedef struct SyncBestEffort
{
	int			budget;
	int			npassed;
} SyncBestEffort;

#define SYNC_BEST_EFFORT_INIT {INT_MAX, 0}

/* What the grant pass does with the waiter it looks at. */
typedef enum SyncPassStep
{
	SYNC_PASS_GRANT,			/* grant it (a multi-lock one: defer it) */
	SYNC_PASS_NEXT,				/* pass over it, look at the next */
	SYNC_PASS_STOP,				/* the pass ends here */
	SYNC_PASS_TOKENS,			/* ... because it waits for tokens */
	SYNC_PASS_PARENT			/* ... because its parent does not admit it */
} SyncPassStep;

/*
 * stats.c: Per-lock statistics: what the engine counts through a lock's row,
 * and the copies the view sync_lock_stats shows.
 */

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

extern SyncStats *sync_stats_attach(const SyncLockTag *tag, uint32 hashcode);
extern void sync_stats_detach(SyncStats *s);
extern void sync_stats_granted(SyncStats *s, bool waited, TimestampTz since,
							   TimestampTz now);
extern void sync_stats_wait_ended(SyncStats *s, SyncWaitEnd how,
								  TimestampTz since);
extern void sync_stats_hold_ended(SyncStats *s, TimestampTz since);
extern void sync_stats_preempted(SyncStats *s);
extern void sync_stats_queued(SyncStats *s, int32 nwaiting);
extern int64 sync_stats_mean_hold(SyncStats *s);
extern void sync_stats_set_restore_hook(SyncStatsRestoreHook hook);
extern bool sync_stats_restore_row(const SyncStatsSaved *saved);
extern int	sync_stats_save(void (*save) (const SyncStatsSaved *saved, void *arg),
							void *arg);

/*
 * lock_table.c: The shared-memory lock table: locks, their entries (holds
 * and queue entries), the partition LWLocks that protect them, and the pool
 * entries come from.
 */

#define SYNC_PARTITIONS_TRANCHE	"syncwf partitions"

/*
 * Slots a held entry takes of its lock's limit: a semaphore's entry its
 * slots, an exclusive mutex entry the mutex's one slot, a shared one none
 * (shared holders only keep the slot from an exclusive request: see
 * sync_entry_fits() in wait_queue.c).
 */
static inline int32
sync_entry_weight(const SyncEntry *e)
{
	return e->shared ? 0 : e->slots;
}

extern SyncLock *sync_lock_lookup(const SyncLockTag *tag, uint32 hashcode);
extern void sync_lock_uncache(SyncLock *lock);
extern void sync_lock_remove(SyncLock *lock);
extern void sync_lock_drop_cached(Oid dbid, const char *name);
extern void sync_lock_rate_wait(SyncLock *lock);
extern void sync_lock_rate_done(SyncLock *lock);
extern void sync_entry_pool_init(void);
typedef void (*SyncLockVisitor) (SyncLock *lock, void *arg);
extern void sync_lock_foreach(SyncLockVisitor visit, void *arg);


/*
 * limit_groups.c: Nested limits: the group of a parent row, counting its
 * children's holds, and the order among its children's waiters.
 */

/*
 * SyncLock.group_ready: not ready; ready, its front a request of one lock,
 * which the parent's order waits for; ready, its front a request of
 * several locks, which the parent's order never waits for (only the group
 * pass looks at it, to try it when the parent has room).
 */
#define SYNC_READY_NOT		0
#define SYNC_READY_ONE		1
#define SYNC_READY_MULTI	2

/* Stripes of the group hash, each with its LWLock.  A power of 2. */
#define SYNC_GROUP_STRIPES	16

/* One parent row of one database.  Protected by its stripe. */
typedef struct SyncGroup
{
	SyncPooled	pooled;			/* its number; next in its stripe's chain */
	SyncLockTag tag;			/* the parent row's name, in its database */
	uint32		hashcode;		/* hash of tag; picks the stripe */
	int32		limit;			/* the parent row's sizelimit */
	uint64		limit_gen;		/* the limit generation it was read at */
	int32		slots_held;		/* slots its children's holders take */
	int32		nheld;			/* holders of its children */
	int32		nmembers;		/* locks linked to it, cached ones too */
	int32		nready;			/* locks in its ready tree */
	int64		preempt_grace_us;	/* the parent row's preempt_grace, or -1 */
	int32		npreemptible;	/* its children's preemptible holders, */
	int32		slots_preempting;	/* ... and slots of those in a grace */
	int32		ready_root;		/* the tree of children whose front waits
								 * only for it (group_ready.c), or none */
} SyncGroup;

static inline SyncGroup *
sync_group_at(int32 n)
{
	return (SyncGroup *) sync_pool_object(SYNC_POOL_GROUPS, sizeof(SyncGroup), n);
}

/*
 * Guarantees: 0 if granting 'weight' more slots of 'lock' keeps it within
 * its guarantee (a child under its guarantee goes first), else 1.
 */
static inline int
sync_guarantee_class(const SyncLock *lock, int32 weight)
{
	return lock->slots_held + weight <= lock->guarantee ? 0 : 1;
}

/*
 * A waiter's place in the parent's order: a child under its guarantee
 * first (class 0), then one that would borrow (1), then a request of
 * several locks (2, ready locks only); then priority, queue time, arrival.
 */
typedef struct SyncReadyKey
{
	int			cls;
	int32		priority;
	TimestampTz queued_at;
	uint64		seq;
} SyncReadyKey;

/* ... of entry e of a grouped lock, asking now */
static inline SyncReadyKey
sync_entry_key(const SyncEntry *e)
{
	SyncReadyKey k = {sync_guarantee_class(sync_entry_lock(e), sync_entry_weight(e)),
	e->priority, e->queued_at, e->seq};

	return k;
}

/* Does the waiter of key a go before that of key b? */
static inline bool
sync_key_before(SyncReadyKey a, SyncReadyKey b)
{
	if (a.cls != b.cls)
		return a.cls < b.cls;
	if (a.priority != b.priority)
		return a.priority > b.priority;
	if (a.queued_at != b.queued_at)
		return a.queued_at < b.queued_at;
	return a.seq < b.seq;
}

/* group_ready.c: the order of a group's ready children. */
extern SyncReadyKey sync_ready_key(const SyncLock *m);
extern void sync_ready_insert(SyncGroup *g, SyncLock *m);
extern void sync_ready_remove(SyncGroup *g, SyncLock *m);
extern SyncLock *sync_ready_first(const SyncGroup *g);
extern SyncLock *sync_ready_next(const SyncLock *m);
#ifdef USE_ASSERT_CHECKING
extern bool sync_ready_check(const SyncGroup *g);
#endif

extern void sync_groups_init(void);
extern Size sync_groups_shmem_size(void);
extern void sync_groups_shmem_request(void);
extern void sync_groups_shmem_init(void);
extern bool sync_group_held(const SyncGroup *g, bool exclusive);
extern bool sync_group_committed(const char *name, int32 limit, int64 grace_us,
								 uint64 gen);
extern void sync_group_count_preempting(SyncLock *lock, int32 dslots, int32 dn);
extern bool sync_group_join(SyncLock *lock, const SyncLimitValue *value);
extern void sync_group_leave(SyncLock *lock);
extern void sync_group_count(SyncLock *lock, int32 dslots, int32 dheld);
extern bool sync_group_admits(const SyncEntry *e, int32 released);
extern bool sync_group_has_room(const SyncEntry *e);
extern bool sync_group_full_for(const SyncEntry *w);
extern int32 sync_group_unfit_limit(const SyncEntry *e);
extern uint32 sync_groups_share_lock(const SyncLock *lock);
extern void sync_group_set_ready(SyncLock *lock, const SyncEntry *front);
extern int32 sync_group_first_ready(int32 groupno, uint32 *hashcode, uint64 *seq);
extern void sync_defer_group(int32 groupno);	/* wait_queue.c */

/*
 * backend_wait.c: A session's wait for the grant of its request.
 */

extern void sync_wait_loop(SyncEntry *first, char **names, int nnames,
						   int64 timeout_us, SyncEntry **waiting);

/*
 * deadlock.c: Waits-for cycles through syncwf's waits and PostgreSQL's
 * heavyweight locks.
 */

/* A cycle found through the caller's request, ready to be reported. */
typedef struct SyncDeadlock SyncDeadlock;

extern SyncDeadlock *sync_deadlock_check(SyncEntry *first);
extern void sync_deadlock_report(SyncDeadlock *deadlock);

/*
 * grant_rules.c: Who may be granted now.
 */

extern void sync_report_locks_full(void);	/* lock_table.c */
extern void sync_report_entries_full(void); /* entry_pool.c */

/* limit_rows.c: the rows of sync_limit, read with SPI. */
extern char *sync_limit_select(Oid relid);
extern char *sync_limit_row(uint64 i, SyncLimitValue *value);

/* preemption.c: what the grant pass and the holder lists tell it. */
extern Size sync_preempt_shmem_size(void);
extern void sync_preempt_shmem_init(void);
extern void sync_preempt_count(SyncLock *lock, const SyncEntry *e, int dir);
extern void sync_preempt_note(SyncLock *lock, const SyncEntry *front);

/* priority_aging.c: a waiter's priority rises with its wait. */
extern void sync_aging_configure(SyncLock *lock, int64 interval_us, int32 max);
extern void sync_aging_queued(SyncLock *lock, SyncEntry *e);
extern TimestampTz sync_aging_apply(SyncLock *lock, TimestampTz now);

/* Which limit leaves a request unfit (sync_entry_unfit_limit()) */
typedef enum SyncUnfitKind
{
	SYNC_UNFIT_LIMIT,			/* its semaphore's sizelimit */
	SYNC_UNFIT_RATE,			/* its semaphore's rate_limit */
	SYNC_UNFIT_PARENT			/* its semaphore's parent row's sizelimit */
} SyncUnfitKind;

extern int32 sync_entry_unfit_limit(const SyncEntry *e, SyncUnfitKind *why);
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
 * outbox.c: grants of pending keyed entries for the worker.
 */

#define SYNC_OUTBOX_TRANCHE		"syncwf outbox"
#define SYNC_OUTBOX_SIZE		4096

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
