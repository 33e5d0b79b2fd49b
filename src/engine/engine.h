/*-------------------------------------------------------------------------
 *
 * engine/engine.h
 *		The public header of the lock engine (engine/README.md): the lock
 *		table and its entries, requests and grants, this backend's holds,
 *		limits, weights, rates, deadlocks, statistics, the outbox and the
 *		workers' deadlines -- what keyed/, launch/ and entry/ may use.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_ENGINE_ENGINE_H
#define SYNC_ENGINE_ENGINE_H

#include "access/htup.h"
#include "access/transam.h"
#include "access/tupdesc.h"
#include "datatype/timestamp.h"
#include "lib/ilist.h"
#include "nodes/pg_list.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"
#include "core/core.h"

/* stats.c: Per-lock statistics: what the engine counts, the view's copies. */

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
	int64		preemptions;	/* holds of it preempted */
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

extern int	sync_stats_snapshot(Oid dbid, SyncStatsRow **rows);
extern TimestampTz sync_stats_reset(Oid dbid, const char *name);

/*
 * lock_table.c, entry_pool.c: The shared-memory lock table: locks, their
 * entries (holds and queue entries) and the partition LWLocks that protect
 * them.
 */

/* Tries to make room for a request before it reports the lock table full. */
#define SYNC_MAKE_ROOM_ATTEMPTS	8

/* Lock table partitions; each has its own LWLock.  Must be a power of 2. */
#define SYNC_NUM_PARTITIONS		16
/* A partition mask naming every partition. */
#define SYNC_ALL_PARTITIONS		((uint32) ((1U << SYNC_NUM_PARTITIONS) - 1))

/*
 * Lists of pool entries (a lock's holders, queue and dormant entries; a holder key's entries)
 * linked by entry number, not pointer: a link means the same in every backend.  NONE ends a
 * list; an entry in no list has both links DETACHED.  entry_pool.c has the functions.
 */
#define SYNC_ENTRY_NONE		(-1)
#define SYNC_ENTRY_DETACHED	(-2)

typedef struct SyncEntryLink
{
	int32		prev;
	int32		next;
} SyncEntryLink;

typedef struct SyncEntryList
{
	int32		head;
	int32		tail;
} SyncEntryList;

typedef enum SyncEntryState
{
	SYNC_ENTRY_FREE = 0,		/* on the pool's free list */
	SYNC_ENTRY_PENDING,			/* in a lock's wait queue */
	SYNC_ENTRY_HELD,			/* in a lock's holder list */
	SYNC_ENTRY_DORMANT			/* pending; controller inactive: dormant list */
} SyncEntryState;

typedef enum SyncScope
{
	SYNC_SCOPE_SESSION = 0,
	SYNC_SCOPE_XACT = 1,
	SYNC_SCOPE_KEYED = 2		/* owned by a holder key, kept in sync_state */
} SyncScope;

/*
 * One lock, in its partition's hash (lock_table.c) while it has a holder or a queue entry, then
 * *cached* on the idle list (keeping a semaphore's limit) until the room is needed or its
 * sync_limit row goes away.  Every field is protected by the lock's partition LWLock.
 */
typedef struct SyncLock
{
	SyncPooled	pooled;			/* its number; next in its hash chain */
	SyncLockTag tag;			/* hash key */
	uint32		hashcode;		/* hash of tag; picks the partition */
	uint8		kind;			/* SyncLockKind */
	bool		limit_defined;	/* semaphore: sync_limit row exists */
	bool		cached;			/* idle, kept for its limit (on the idle list) */
	int32		limit;			/* slots: 1 for a mutex, sizelimit otherwise */
	Oid			limit_relid;	/* semaphore: sync_limit table it came from */
	int32		max_waiters;	/* semaphore: queue cap, or -1 for none */
	SyncEntryLink list_link;	/* in its partition's SyncShmem.live_locks
								 * while not cached; detached when cached */
	SyncEntryLink idle_link;	/* in its partition's idle_locks from its
								 * first caching until the eviction walk */
	bool		referenced;		/* cached again since the walk last saw it */
	bool		best_effort;	/* semaphore: queueing = 'best_effort' */
	int16		pattern_len;	/* semaphore: from a pattern row, or 0 */
	int32		nheld;			/* entries in holders */
	int32		slots_held;		/* sum of the holders' sync_entry_weight() */
	int32		nwaiting;		/* entries in waiters */
	int32		ndormant;		/* entries in dormant */
	int32		rate_limit;		/* tokens of its rate, 0: none (rate_limits.c
								 * owns the rate_ fields) */
	int64		rate_period_us; /* ... refilled over this long */
	double		rate_tat;		/* the bucket is full from this moment */
	SyncEntryLink rate_link;	/* in its partition's rate_locks while its
								 * front waits for tokens, or for aging */
	/* priority aging (priority_aging.c): 0 interval: none */
	int64		aging_interval_us;	/* a waiter gains 1 per interval waited */
	int32		aging_max;		/* ... up to this priority */
	TimestampTz aging_due;		/* the next waiter's promotion, or 0 */
	/* preemption (preemption.c): grace -1: its row allows none */
	int64		preempt_grace_us;
	int32		npreemptible;	/* preemptible holders not in a grace */
	int32		slots_preempting;	/* slots of holders in their grace */
	uint64		preempt_seen;	/* the front last sent to the worker */
	int32		preempt_seen_key;	/* ... its priority and the lock's slots */
	SyncEntryList holders;		/* SyncEntry.lock_link, in grant order */
	SyncEntryList waiters;		/* SyncEntry.lock_link, in queue order */
	SyncEntryList dormant;		/* inactive controllers' entries, queue order */
	int32		rank_root;		/* the waiters' treap (queue_rank.c), or none */
	SyncStats  *stats;			/* its row of sync_lock_stats (stats.c),
								 * from the first count until it leaves the
								 * table; NULL before */
	/* nested limits: limit_groups.c owns these, and says how they are locked */
	int32		groupno;		/* its parent row's group, or SYNC_ENTRY_NONE */
	SyncEntryLink group_link;	/* ready: left, right in the group's treap */
	int32		ready_up;		/* ... and its parent there (group_ready.c) */
	uint32		ready_heap;		/* ... and its heap priority */
	bool		is_parent;		/* semaphore: its row is a parent row */
	int32		guarantee;		/* its row's guarantee under the parent, or 0 */
	uint8		group_ready;	/* SYNC_READY_*: its front waits for it: */
	int32		ready_priority; /* ... that front's priority, weight, */
	int32		ready_slots;
	TimestampTz ready_queued_at;	/* queue time and arrival */
	uint64		ready_seq;
} SyncLock;

/*
 * A hold or a queue entry of one lock.  Entries of one request (several locks, all or nothing)
 * form a ring through next_in_request (a single-lock request's ring is the entry itself).
 * Protected by the partition LWLock of entry->lock.  The immutable fields (request_id, nlocks,
 * partmask, next_in_request, lock, owner fields) are set before the entry becomes visible and
 * may be read under any one of the request's partition locks.
 */
typedef struct SyncEntry
{
	SyncPooled	pooled;			/* its number; the free list's link */
	SyncEntryLink lock_link;	/* in lock->holders, waiters or dormant */
	int32		next_in_request;	/* entry number (sync_next_in_request()) */
	int32		lockno;			/* its lock's number (sync_entry_lock()) */
	uint64		request_id;		/* unique per request, never reused */
	uint64		seq;			/* arrival order within a priority */
	uint64		token;			/* fencing token, once granted */
	TimestampTz since;			/* queued at, then granted at */
	int32		priority;		/* effective: base_priority, aged */
	int32		base_priority;	/* the priority it asked for */
	int32		pid;			/* owning backend */
	int32		procno;			/* owning backend's PGPROC number */
	uint32		partmask;		/* partitions of every lock in the request */
	uint16		nlocks;			/* locks in the request */
	uint8		state;			/* SyncEntryState */
	uint8		scope;			/* SyncScope */

	/* pending: its node in the queue's treap (queue_rank.c), entry numbers */
	int32		rank_parent;
	int32		rank_left;
	int32		rank_right;
	int32		rank_size;		/* entries in its subtree, itself included */
	uint32		rank_heap;		/* the treap's heap priority */

	/*
	 * Keyed entries only (scope SYNC_SCOPE_KEYED; pid and procno are 0/-1).
	 * holder_table.c owns these fields; see there for their locking.
	 */
	int32		holderno;		/* owning holder record's number, or -1 */
	SyncEntryLink holder_link;	/* in holder->entries, under holders_lock */
	TimestampTz queued_at;		/* queue order after priority (all entries) */
	int64		lease_us;		/* lease length, 0 = none */
	TimestampTz lease_expires;	/* held with a lease: expiry, else 0 */
	TransactionId created_xid;	/* creating transaction, until it commits */
	TransactionId release_xid;	/* transaction deleting its row, to its end */
	TransactionId reserved_xid; /* pending: the releasing transaction that
								 * hands it a slot at commit (keyed_xact.c) */
	Oid			owner;			/* role that requested it */
	int32		controller;		/* controller slot, or -1 */
	int32		admit_limit;	/* granted only while fewer hold the lock;
								 * -1: the lock's limit alone */
	bool		persisted;		/* held, and sync_state says so */
	bool		claim;			/* granted only when its writer claims it
								 * (sync_claim_grantable()) */
	bool		shared;			/* mutex: a shared hold (any number coexist,
								 * an exclusive one excludes them all) */
	bool		preemptible;	/* keyed: a waiter may preempt its hold */
	TimestampTz preempt_deadline;	/* held, preempted: its grace ends, or 0 */
	int32		slots;			/* semaphore: slots it takes; 1 otherwise */
	int32		passes;			/* pending: grants that passed it while it
								 * waited (best-effort, grant_rules.c) */

	/* fair queueing: queue_order.c owns these (fair_weights.c re-weighs) */
	double		fair_tag;		/* pending: virtual tag, orders the queue
								 * within a priority */
	int32		fair_weight;	/* weight of its fair key on this lock, >= 1 */
	uint32		fair_hash;		/* hash of fair_key, to compare keys fast */
	bool		fair_retag;		/* its weight changed: tag again */
	char		fair_key[SYNC_FAIR_KEY_BUFLEN]; /* "": none (the implicit key
												 * such requests share) */
} SyncEntry;

/*
 * Entries and locks by number (core/shared_pool.c): the same in every
 * backend, wherever a backend maps the memory they live in.
 */
static inline SyncEntry *
sync_entry_at(int32 i)
{
	Assert(i != SYNC_ENTRY_DETACHED);
	if (i == SYNC_ENTRY_NONE)
		return NULL;
	return (SyncEntry *) sync_pool_object(SYNC_POOL_ENTRIES, sizeof(SyncEntry), i);
}

static inline int32
sync_entry_index(const SyncEntry *e)
{
	return e == NULL ? SYNC_ENTRY_NONE : e->pooled.self;
}

static inline SyncLock *
sync_lock_at(int32 i)
{
	if (i == SYNC_ENTRY_NONE)
		return NULL;
	return (SyncLock *) sync_pool_object(SYNC_POOL_LOCKS, sizeof(SyncLock), i);
}

/* The lock of an entry that is not free. */
static inline SyncLock *
sync_entry_lock(const SyncEntry *e)
{
	return sync_lock_at(e->lockno);
}

/* The next entry of e's request (its ring: e itself when it is alone). */
static inline SyncEntry *
sync_next_in_request(const SyncEntry *e)
{
	return sync_entry_at(e->next_in_request);
}

/* The link fields of an entry, for the list functions. */
#define SYNC_LOCK_LINK		offsetof(SyncEntry, lock_link)
#define SYNC_HOLDER_LINK	offsetof(SyncEntry, holder_link)

static inline SyncEntryLink *
sync_link_of(const SyncEntry *e, size_t field)
{
	return (SyncEntryLink *) ((char *) e + field);
}

static inline void
sync_elist_init(SyncEntryList *list)
{
	list->head = list->tail = SYNC_ENTRY_NONE;
}

static inline bool
sync_elist_detached(const SyncEntry *e, size_t field)
{
	return sync_link_of(e, field)->next == SYNC_ENTRY_DETACHED;
}

static inline SyncEntry *
sync_elist_head(const SyncEntryList *list)
{
	return sync_entry_at(list->head);
}

extern void sync_elist_insert_after(SyncEntryList *list, SyncEntry *prev,
									SyncEntry *e, size_t field);
extern void sync_elist_delete(SyncEntryList *list, SyncEntry *e, size_t field);

static inline void
sync_elist_push_tail(SyncEntryList *list, SyncEntry *e, size_t field)
{
	sync_elist_insert_after(list, sync_entry_at(list->tail), e, field);
}

/*
 * Visit a list from its head as 'e' (declared here) through link 'field'.  The body must not
 * take 'e' off the list: the _modify form allows that.  More list functions: engine_internal.h.
 */
#define sync_elist_foreach(e, list, field) \
	for (SyncEntry *e = sync_elist_head(list); e != NULL; \
		 e = sync_entry_at(e->field.next))
#define sync_elist_foreach_modify(e, list, field) \
	for (SyncEntry *e = sync_elist_head(list), \
		 *e##_next_ = (e != NULL ? sync_entry_at(e->field.next) : NULL); \
		 e != NULL; \
		 e = e##_next_, \
		 e##_next_ = (e != NULL ? sync_entry_at(e->field.next) : NULL))

/* The lock table's control block: the partition locks protect its lists; counters: atomics. */
typedef struct SyncShmem
{
	LWLockPadded *partition_locks;	/* SYNC_NUM_PARTITIONS of them */
	SyncBuckets lock_hash[SYNC_NUM_PARTITIONS]; /* the locks of each */
	SyncEntryList live_locks[SYNC_NUM_PARTITIONS];	/* locks not cached */
	SyncEntryList idle_locks[SYNC_NUM_PARTITIONS];	/* cached, 2nd-chance order */
	SyncEntryList rate_locks[SYNC_NUM_PARTITIONS];	/* locks whose front
													 * waiter waits for
													 * tokens */
	int32		ncached[SYNC_NUM_PARTITIONS];	/* cached locks in each */
	bool		buckets_wanted; /* a partition's hash needs more buckets */
	pg_atomic_uint32 nlocks;	/* entries in the lock hash, cached included */
	pg_atomic_uint64 next_seq;	/* arrival counter */
	pg_atomic_uint64 next_request_id;
	pg_atomic_uint64 limit_generation;	/* bumped by every limit change */
	pg_atomic_uint64 fair_generation;	/* ... of sync_fair_weight */
} SyncShmem;

extern SyncShmem *sync_shmem;

extern Size sync_lock_table_shmem_size(void);
extern void sync_lock_table_shmem_request(void);
extern void sync_lock_table_shmem_init(void);
extern void sync_require_shmem(void);
extern void sync_make_tag(SyncLockTag *tag, Oid dbid, const char *name);
extern uint32 sync_tag_hash(const SyncLockTag *tag);
extern LWLock *sync_partition_lock(uint32 hashcode);
extern int	sync_partition_of(uint32 hashcode);
extern SyncLock *sync_lock_find(Oid dbid, const char *name, LWLockMode mode,
								LWLock **partition);
extern SyncLock *sync_lock_create(const SyncLockTag *tag, uint32 hashcode,
								  bool *found);
extern bool sync_make_room(uint32 hashcode, int nlocks);
extern void sync_lock_buckets_grow(int64 nlocks);
extern void sync_lock_idle(SyncLock *lock);
extern void sync_lock_table_init(void);
extern SyncEntry *sync_entry_alloc(bool grow);
extern const char *sync_entries_full_setting(void);
extern const char *sync_locks_full_setting(void);
extern void sync_entry_free(SyncEntry *entry);
extern int64 sync_entries_in_use(void);
extern void sync_lock_counts(int64 *locks, int64 *cached);
extern void sync_lock_partitions(uint32 partmask, LWLockMode mode);
extern void sync_unlock_partitions(uint32 partmask);

extern void sync_lock_attach_stats(SyncLock *lock);

/*
 * The row of sync_lock_stats that 'lock' counts in, attaching it at its
 * first count; NULL while syncwf.track_stats is off.  Caller holds the
 * lock's partition exclusively.
 */
static inline SyncStats *
sync_lock_stats(SyncLock *lock)
{
	if (!sync_track_stats)
		return NULL;
	if (unlikely(lock->stats == NULL))
		sync_lock_attach_stats(lock);
	return lock->stats;
}

/*
 * Visit every live lock (not cached: it has a holder or a queue entry) of every partition and
 * database, in proportion to the live locks, not the table.  Every partition lock held; the
 * body may make the lock idle, nothing else: "sync_foreach_live_lock(it) { sync_live_lock(it) }".
 */
typedef struct SyncLiveIter
{
	int			partition;
	int32		cur;
	int32		next;
} SyncLiveIter;

#define sync_foreach_live_lock(it) \
	for ((it).partition = 0; (it).partition < SYNC_NUM_PARTITIONS; (it).partition++) \
		for ((it).cur = sync_shmem->live_locks[(it).partition].head; \
			 (it).cur != SYNC_ENTRY_NONE && \
			 ((it).next = sync_lock_at((it).cur)->list_link.next, true); \
			 (it).cur = (it).next)
#define sync_live_lock(it) sync_lock_at((it).cur)

/*
 * Called by sync_entry_free() for a keyed entry (one with a holder) before
 * it goes back to the pool, under its partition lock; set by the module
 * that owns keyed entries (holder_table.c), at load.
 */
typedef void (*SyncEntryFreeHook) (SyncEntry *entry);
extern void sync_entry_set_free_hook(SyncEntryFreeHook hook);

/*
 * For assertions: does this backend hold the partition of 'hashcode', every partition of
 * 'partmask', or any at all ('exclusive': in exclusive mode; else in either)?
 */
static inline bool
sync_partitions_held(uint32 partmask, bool exclusive)
{
	for (int i = 0; i < SYNC_NUM_PARTITIONS; i++)
	{
		LWLock	   *partition = &sync_shmem->partition_locks[i].lock;

		if ((partmask & (1U << i)) &&
			!(exclusive ? LWLockHeldByMeInMode(partition, LW_EXCLUSIVE) :
			  LWLockHeldByMe(partition)))
			return false;
	}
	return true;
}

static inline bool
sync_partition_held(uint32 hashcode, bool exclusive)
{
	return sync_partitions_held(1U << sync_partition_of(hashcode), exclusive);
}

static inline bool
sync_any_partition_held(void)
{
	for (int i = 0; i < SYNC_NUM_PARTITIONS; i++)
		if (LWLockHeldByMe(&sync_shmem->partition_locks[i].lock))
			return true;
	return false;
}

/* deadlock.c: Waits-for cycles through syncwf's and PostgreSQL's locks. */

extern void sync_deadlock_shmem_request(void);
extern void sync_deadlock_shmem_init(void);

/*
 * fair_weights.c: The weights of fair keys: reading them from
 * sync_fair_weight, and carrying a transaction's changes into the queues
 * when it commits.
 */

extern int32 sync_fair_weight_of(const char *lock_name, const char *fair_key);
extern int32 sync_fair_request_weight(char **names, int nnames,
									  const char *fair_key);
extern void sync_fair_weights_changed(void);
extern bool sync_fair_weights_pending(void);
extern void sync_fair_weights_precommit(void);
extern void sync_fair_weights_at_commit(void);
extern void sync_fair_weights_forget(void);

/*
 * grant_rules.c: Who may be granted now.
 */

extern int	sync_lock_slots(SyncLock *lock);
extern bool sync_entry_unfit(const SyncEntry *e);
extern bool sync_request_grantable(SyncEntry *entry, bool respect_queue);

/*
 * backend_holds.c: This backend's holds: session and transaction scope.
 */

/* How a session asks for its locks (sync_acquire_locks()). */
typedef struct SyncAcquireOptions
{
	SyncScope	scope;			/* session or transaction */
	int32		priority;		/* higher is served first */
	int32		slots;			/* of each semaphore; 1 for mutexes */
	bool		shared;			/* the mutexes in shared mode */
	bool		wait;			/* queue until granted; false: a try */
	int64		timeout_us;		/* a wait's limit; negative: none */
	const char *fair_key;		/* a wait's fair-queueing key; NULL: none */
} SyncAcquireOptions;

extern bool sync_acquire_locks(char **names, int nnames,
							   const SyncAcquireOptions *opts, int64 *tokens);
extern bool sync_release_lock(const char *name);
extern int	sync_release_all_holds(void);

/* transaction events, called by syncwf.c */
extern void sync_holds_at_prepare(void);
extern void sync_holds_at_xact_end(void);
extern void sync_holds_at_abort(void);
extern void sync_holds_at_subabort(SubTransactionId subid);
extern void sync_holds_at_subcommit(SubTransactionId subid,
									SubTransactionId parent);

/*
 * outbox.c: grants of pending keyed entries, made where no table can be
 * written, for the worker to write to sync_state and announce.
 */

/*
 * A grant of a keyed entry, as a backend handles it (the ring keeps the
 * entry by number: outbox.c).
 */
typedef struct SyncOutboxItem
{
	SyncEntry  *entry;
	uint64		request_id;
	uint64		token;
} SyncOutboxItem;

extern Size sync_outbox_shmem_size(void);
extern void sync_outbox_shmem_request(void);
extern void sync_outbox_shmem_init(void);
extern void sync_outbox_push(SyncEntry *entry);
extern void sync_outbox_requeue(const SyncOutboxItem *item);
extern List *sync_outbox_drain(bool *overflow);

/*
 * worker_deadlines.c: the latches of the two workers and the deadlines they
 * wake for (leases, launch-plan time-outs and changes, rates, lowered
 * limits).
 */
extern Size sync_worker_wake_shmem_size(void);
extern void sync_worker_wake_shmem_init(void);
extern void sync_worker_attach(void);
extern void sync_worker_detach(void);
extern void sync_worker_wake(void);
extern void sync_rate_worker_attach(bool attach);
extern void sync_lease_scheduled(TimestampTz expires);
extern uint64 sync_lease_due(void);
extern void sync_lease_reset(void);
extern void sync_launch_deadline(TimestampTz at);
extern uint64 sync_launch_due(void);
extern void sync_launch_reset_deadline(void);
extern void sync_launch_set_dirty(void);
extern bool sync_launch_take_dirty(void);
extern void sync_rate_scheduled(TimestampTz due, bool wake);
extern uint64 sync_rate_deadline(void);
extern void sync_rate_reset(void);
extern void sync_unfit_set(void);
extern bool sync_unfit_take(void);

/*
 * queue_order.c: A lock's lists of entries and their order.
 */

extern void sync_entry_set_fair(SyncEntry *e, const char *fair_key, int32 weight);
extern void sync_queue_insert(SyncLock *lock, SyncEntry *entry);
extern void sync_dormant_insert(SyncLock *lock, SyncEntry *entry);
extern int	sync_queue_position(SyncEntry *entry);
extern void sync_queue_remove(SyncEntry *e);
extern void sync_holder_link(SyncLock *lock, SyncEntry *e);
extern void sync_holder_unlink(SyncEntry *e);
extern void sync_waiter_unlink(SyncEntry *e, SyncWaitEnd how);

/*
 * rate_limits.c: The token bucket of a rate-limited semaphore.
 */

extern int32 sync_rate_tokens(const SyncLock *lock, TimestampTz now,
							  TimestampTz *next_refill);

/*
 * sem_limits.c: Semaphore limits: reading them from sync_limit, and carrying
 * a transaction's changes into the lock table when it commits.
 */

/* No sync_limit row applies (SyncLimitValue.limit). */
#define SYNC_LIMIT_UNDEFINED	(-1)

/*
 * What sync_limit says of one semaphore: the row that applies to
 * "sem/<namespace>/<key>" is its own row "<namespace>/<key>" if there is
 * one, else the longest pattern row "<prefix>/\*" whose prefix the key
 * starts with (a default limit for a namespace or part of one).
 */
typedef struct SyncLimitValue
{
	int32		limit;			/* sizelimit; SYNC_LIMIT_UNDEFINED: no row */
	int32		max_waiters;	/* queue cap; -1: none */
	int16		pattern_len;	/* 0: the semaphore's own row; else the row
								 * is the key's first pattern_len bytes
								 * (ending in '/') followed by '*' */
	int32		rate_limit;		/* tokens of its rate; 0: no rate */
	int64		rate_period_us; /* ... refilled over this long */
	bool		best_effort;	/* queueing = 'best_effort' */
	bool		is_parent;		/* some row names it as its parent */
	int32		guarantee;		/* its guarantee under its parent, or 0 */
	int64		aging_interval_us;	/* priority aging; 0: none */
	int32		aging_max;		/* ... its ceiling */
	bool		preempt;		/* preempt_grace is set: */
	bool		parent_preempt; /* ... its parent's is set: */
	int64		preempt_grace_us;	/* preempt_grace */
	int64		parent_grace_us;	/* ... its parent's */
	int32		parent_limit;	/* its parent's sizelimit */
	char		parent[SYNC_NAME_BUFLEN];	/* its parent row, or "" */
} SyncLimitValue;

extern char *sync_limit_cap_rate_columns(Oid relid, const char *alias);
extern char *sync_limit_queueing_column(Oid relid, const char *alias);
extern char *sync_limit_tree_columns(Oid relid, const char *alias);
extern void sync_limit_tree_of(HeapTuple tup, TupleDesc desc, int col, SyncLimitValue *value);
extern HTAB *sync_limit_patterns(Oid relid);
extern void sync_limit_match(HTAB *rows, const char *key, SyncLimitValue *value);
extern bool sync_limit_plan_default(const char *lock_name, SyncLimitValue *value);
extern void sync_limit_set(SyncLock *lock, const SyncLimitValue *value);
extern void sync_limit_rate_of(HeapTuple tup, TupleDesc desc, int col,
							   SyncLimitValue *value);
extern char *sync_limit_row_name(const SyncLock *lock);
extern void sync_limits_changed(Oid relid, const char *name);
extern bool sync_limits_pending(void);
extern void sync_limits_precommit(void);
extern void sync_limits_at_commit(void);
extern void sync_limits_forget(void);

/* request.c: Binding a request to locks, and withdrawing a request from its queues. */

/*
 * A request being made: the locks it names, the shared entries reserved for those the
 * requester does not hold yet (and a session's local holds and placeholders: backend_holds.c).
 */
#define SYNC_REQUEST_INLINE	2

typedef struct AcquireRequest
{
	char	  **names;
	int			nnames;
	int			nneeded;
	bool	   *needed;			/* not held by this session yet */
	SyncLockKind *kinds;
	SyncLimitValue *limits;		/* semaphores: what sync_limit says */
	bool		have_limits;	/* limits[] were read (at generation) */
	Oid			limit_relid;	/* sync_limit table of this database */
	SyncLockTag *tags;
	uint32	   *hashes;
	SyncEntry **entries;		/* reserved shared entries, or NULL */
	int32		slots;			/* slots of each semaphore (1 for mutexes) */
	bool		shared;			/* shared holds of the mutexes */
	const char *fair_key;		/* NULL: none; a request with one names one lock */
	int32		fair_weight;	/* weight of fair_key on that lock; 1 */
	int32		failed_limit;	/* SYNC_BIND_TOO_MANY_SLOTS: the limit, */
	int8		failed_why;		/* ... whose (a SyncUnfitKind) */
	bool		placeholders;	/* local placeholders were added */
	void	  **local_holds;	/* a session's LocalHold of each lock */
	uint32		partmask;
	uint64		generation;		/* limit generation the limits were read at */

	/* The arrays above for at most SYNC_REQUEST_INLINE locks (no palloc, no copy) */
	struct
	{
		bool		needed[SYNC_REQUEST_INLINE];
		SyncLockKind kinds[SYNC_REQUEST_INLINE];
		SyncLimitValue limits[SYNC_REQUEST_INLINE];
		SyncLockTag tags[SYNC_REQUEST_INLINE];
		uint32		hashes[SYNC_REQUEST_INLINE];
		SyncEntry  *entries[SYNC_REQUEST_INLINE];
		void	   *local_holds[SYNC_REQUEST_INLINE];
	}			inline_arrays;
} AcquireRequest;

extern void sync_request_init(AcquireRequest *req, char **names, int nnames,
							  int32 slots, bool shared);
extern void sync_discard_request(AcquireRequest *req);
extern void sync_withdraw_request(SyncEntry *first, SyncWaitEnd how);
extern void sync_reserve_entries(AcquireRequest *req);
extern void sync_read_limits(AcquireRequest *req);
extern bool sync_limits_missing(AcquireRequest *req);
/* What sync_bind_request() returns (holder_table.c adds the holder table's). */
typedef enum SyncBindResult
{
	SYNC_BIND_OK = 0,
	SYNC_BIND_TABLE_FULL,		/* no lock slot, none evictable now */
	SYNC_BIND_NO_LIMIT,			/* a semaphore lost its sync_limit row */
	SYNC_BIND_TOO_MANY_SLOTS,	/* more slots than a semaphore's limit */
	SYNC_BIND_IS_PARENT,		/* a semaphore's row is a parent row */
	SYNC_BIND_HOLDERS_FULL		/* keyed: no holder slot */
} SyncBindResult;

extern int	sync_bind_request(AcquireRequest *req, int32 priority,
							  SyncScope scope, SyncEntry **first, int *failed);
extern void sync_unbind_request(AcquireRequest *req);
extern void sync_report_bind_error(AcquireRequest *req, int error, int failed);
/* A queue at its cap that refused a request (sync_refuse_over_cap()). */
typedef struct SyncQueueFull
{
	char	   *lock_name;
	int32		nwaiting;		/* its queue, without the request */
	int32		max_waiters;
	char	   *row;			/* the sync_limit row that sets the cap */
} SyncQueueFull;

extern bool sync_refuse_over_cap(AcquireRequest *req, SyncEntry *first,
								 SyncQueueFull *full);
extern void sync_report_queue_full(const SyncQueueFull *full);

/* stats_persist.c: Per-lock statistics across a clean restart. */

extern void sync_stats_persist_init(void);

/* wait_queue.c: The grant pass: the one place a grant happens. */

extern void sync_queue_waiting(SyncEntry *first);
extern TimestampTz sync_rate_pass(TimestampTz now);
/* How a request comes to be granted (counted in sync_lock_stats). */
typedef enum SyncGrantHow
{
	SYNC_GRANT_AT_ONCE,			/* by its requester, as it arrives */
	SYNC_GRANT_FORCED,			/* ... whatever the limit and the queue */
	SYNC_GRANT_WAITED			/* after waiting in the queue */
} SyncGrantHow;

extern void sync_request_grant(SyncEntry *entry, SyncGrantHow how);
extern void sync_grant_waiters(SyncLock *lock);
extern bool sync_claim_grantable(SyncEntry *e);
extern void sync_claim_grant(SyncEntry *e);
extern void sync_claim_undo(SyncEntry *e);
extern SyncEntry *sync_queue_handoff_candidate(SyncEntry *held);
extern void sync_handoff_grant(SyncEntry *releasing, SyncEntry *next,
							   uint64 token, TimestampTz since);
extern void sync_grant_waiters_of(const char *name);
extern void sync_grant_deferred(void);

/* limit_groups.c: Nested limits (the rest is in engine_internal.h). */
extern void sync_group_ensure(const char *name, int32 limit, int64 grace_us,
							  uint64 gen);
extern uint32 sync_groups_enter_lock(const SyncLock *lock);
extern uint32 sync_groups_enter_request(const SyncEntry *first);
extern void sync_groups_leave(uint32 taken);
extern bool sync_lock_group_info(const SyncLock *lock, char *name, int32 *limit,
								 int32 *slots_held);

/*
 * preemption.c: preemptible keyed holds ended for a waiter that cannot be
 * granted otherwise.  The worker chooses, with every partition held.
 */
typedef struct SyncPreemption
{
	SyncEntry  *victim;
	uint64		request_id;
	TimestampTz deadline;		/* its grace ends */
	TimestampTz old_lease;		/* its lease_expires before */
} SyncPreemption;
extern bool sync_preempt_wanted(void);
extern List *sync_preempt_choose(TimestampTz now);
extern void sync_preempt_undo(SyncEntry *e, TimestampTz old_lease, bool retry);
extern void sync_preempt_committed(SyncEntry *e);
extern void sync_preempt_settled(SyncLock *lock);

/* wait_reasons.c: why a pending entry waits (sync_waiters); partitions held. */
#define SYNC_WHY_BLOCKERS_EACH	16	/* of backends' entries, and of holder keys' */
typedef struct SyncWhy
{
	const char *reason;			/* "limit", "queue", ... */
	char	   *row;			/* the sync_limit row in the way, or NULL */
	int			nblockers;		/* whose entries it needs gone: */
	SyncEntry  *blockers[2 * SYNC_WHY_BLOCKERS_EACH];
	int64		estimate_us;	/* -1: no estimate */
} SyncWhy;
extern void sync_wait_reason(SyncEntry *e, SyncWhy *why);

/*
 * Called by sync_request_grant() and sync_handoff_grant() for every keyed entry they
 * grant, under its partition lock; set at load by holder_table.c.
 */
typedef void (*SyncGrantHook) (SyncEntry *entry);
extern void sync_queue_set_grant_hook(SyncGrantHook hook);

#endif							/* SYNC_ENGINE_ENGINE_H */
