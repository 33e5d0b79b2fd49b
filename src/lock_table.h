/*-------------------------------------------------------------------------
 *
 * lock_table.h
 *		The shared-memory lock table (lock_table.c): locks, their entries
 *		(holds and queue entries), the partition LWLocks that protect them,
 *		and the pool entries come from.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_LOCK_TABLE_H
#define SYNC_LOCK_TABLE_H

#include "access/transam.h"
#include "datatype/timestamp.h"
#include "lib/ilist.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/hsearch.h"

#include "guc.h"
#include "names.h"
#include "stats.h"

#define SYNC_PARTITIONS_TRANCHE	"syncwf partitions"

/*
 * How often a request refused for a full lock table makes room (evicting a
 * cached semaphore, waiting for partitions if need be) and tries again
 * before it reports the table full.
 */
#define SYNC_MAKE_ROOM_ATTEMPTS	8

/* Lock table partitions; each has its own LWLock.  Must be a power of 2. */
#define SYNC_NUM_PARTITIONS		16
/* A partition mask naming every partition. */
#define SYNC_ALL_PARTITIONS		((uint32) ((1U << SYNC_NUM_PARTITIONS) - 1))

typedef enum SyncEntryState
{
	SYNC_ENTRY_FREE = 0,		/* on the pool's free list */
	SYNC_ENTRY_PENDING,			/* in a lock's wait queue */
	SYNC_ENTRY_HELD,			/* in a lock's holder list */
	SYNC_ENTRY_DORMANT			/* pending, but its controller is inactive:
								 * in the lock's dormant list, passed over */
} SyncEntryState;

typedef enum SyncScope
{
	SYNC_SCOPE_SESSION = 0,
	SYNC_SCOPE_XACT = 1,
	SYNC_SCOPE_KEYED = 2		/* owned by a holder key, kept in sync_state */
} SyncScope;

/*
 * One lock.  Lives in the shared hash table while it has at least one holder
 * or queue entry.  When the last one leaves, a mutex is removed; a semaphore
 * stays as a *cached* entry on its partition's idle list, remembering its
 * limit so that the next acquire needs no table lookup, until the table
 * needs the room (second-chance order: lock_table.c) or its sync_limit row
 * changes.
 * Every field is protected by the lock's partition LWLock.
 */
typedef struct SyncLock
{
	SyncLockTag tag;			/* hash key; must be first */
	uint32		hashcode;		/* hash of tag; picks the partition */
	uint8		kind;			/* SyncLockKind */
	bool		limit_defined;	/* semaphore: sync_limit row exists */
	bool		cached;			/* idle, kept for its limit (on the idle list) */
	int32		limit;			/* slots: 1 for a mutex, sizelimit otherwise */
	Oid			limit_relid;	/* semaphore: sync_limit table it came from */
	int32		max_waiters;	/* semaphore: queue cap, or -1 for none */
	dlist_node	list_link;		/* in its partition's SyncShmem.live_locks
								 * while not cached; detached when cached */
	dlist_node	idle_link;		/* in its partition's idle_locks from the
								 * first time it is cached until the
								 * eviction walk takes it off (it may be
								 * live again meanwhile) */
	bool		referenced;		/* cached again since the walk last saw it */
	bool		best_effort;	/* semaphore: queueing = 'best_effort', a
								 * waiter that fits may pass one that does
								 * not, a bounded number of times
								 * (grant_rules.c) */
	int16		pattern_len;	/* semaphore: its limit comes from a pattern
								 * row (sem_limits.c: SyncLimitValue), or 0 */
	int32		nheld;			/* entries in holders */
	int32		slots_held;		/* slots the holders take: the sum of their
								 * weights (sync_entry_weight()) */
	int32		nwaiting;		/* entries in waiters */
	int32		ndormant;		/* entries in dormant */
	int32		rate_limit;		/* semaphore: tokens of its rate, 0: none
								 * (rate_limits.c owns the three rate_
								 * fields) */
	int64		rate_period_us; /* ... refilled over this long */
	double		rate_tat;		/* the bucket is full from this moment */
	dlist_node	rate_link;		/* in its partition's rate_locks while its
								 * front waiter waits for tokens */
	dlist_head	holders;		/* SyncEntry, in grant order */
	dlist_head	waiters;		/* SyncEntry, in queue order */
	dlist_head	dormant;		/* pending entries of inactive controllers,
								 * in queue order */
	SyncStats  *stats;			/* its row of sync_lock_stats (stats.c),
								 * from the first count until it leaves the
								 * table; NULL before */
} SyncLock;

/*
 * A hold or a queue entry of one lock.  Entries of one request (a call that
 * names several locks, all or nothing) form a ring through next_in_request;
 * a single-lock request's ring is the entry itself.
 *
 * Protected by the partition LWLock of entry->lock.  The immutable fields
 * (request_id, nlocks, partmask, next_in_request, lock, owner fields) are set
 * before the entry becomes visible and may be read under any one of the
 * request's partition locks.
 */
typedef struct SyncEntry
{
	dlist_node	lock_link;		/* in lock->holders or lock->waiters */
	struct SyncEntry *next_in_request;
	struct SyncLock *lock;
	uint64		request_id;		/* unique per request, never reused */
	uint64		seq;			/* arrival order within a priority */
	uint64		token;			/* fencing token, once granted */
	TimestampTz since;			/* queued at, then granted at */
	int32		priority;
	int32		pid;			/* owning backend */
	int32		procno;			/* owning backend's PGPROC number */
	uint32		partmask;		/* partitions of every lock in the request */
	uint16		nlocks;			/* locks in the request */
	uint8		state;			/* SyncEntryState */
	uint8		scope;			/* SyncScope */
	int32		next_free;		/* pool free-list link, when FREE */

	/*
	 * Keyed entries only (scope SYNC_SCOPE_KEYED; pid and procno are 0/-1).
	 * holders.c owns these fields; see there for their locking.
	 */
	struct SyncHolder *holder;	/* owning holder record */
	dlist_node	holder_link;	/* in holder->entries, under holders_lock */
	TimestampTz queued_at;		/* queue order after priority (all entries) */
	int64		lease_us;		/* lease length, 0 = none */
	TimestampTz lease_expires;	/* held with a lease: expiry, else 0 */
	TransactionId created_xid;	/* creating transaction, until it commits */
	TransactionId release_xid;	/* transaction deleting its row, until it
								 * ends */
	TransactionId reserved_xid; /* pending: the transaction whose release
								 * hands it a slot at commit (keyed_xact.c),
								 * between its pre-commit and its end; the
								 * grant pass passes over it */
	Oid			owner;			/* role that requested it */
	int32		controller;		/* controller slot, or -1 */
	int32		admit_limit;	/* granted only while fewer hold the lock;
								 * -1: the lock's limit alone */
	bool		persisted;		/* held, and sync_state says so */
	bool		claim;			/* granted only when its writer claims it
								 * (UPDATE sync_state SET held = true, as
								 * Argo's controller does): the grant pass
								 * stops at it; see sync_claim_grantable() */
	bool		shared;			/* mutex: a shared hold (any number coexist,
								 * an exclusive one excludes them all) */
	int32		slots;			/* semaphore: slots it takes; 1 otherwise */
	int32		passes;			/* pending: grants to requests behind it
								 * while it waited (best-effort queueing,
								 * grant_rules.c) */

	/*
	 * Fair queueing (queue_order.c, which owns these fields; fair_weights.c
	 * changes fair_weight and sets fair_retag when sync_fair_weight changes).
	 * Set before the entry is queued; protected by its partition lock.
	 */
	double		fair_tag;		/* pending: virtual tag, orders the queue
								 * within a priority */
	int32		fair_weight;	/* weight of its fair key on this lock, >= 1 */
	uint32		fair_hash;		/* hash of fair_key, to compare keys fast */
	bool		fair_retag;		/* its weight changed: tag again */
	char		fair_key[SYNC_FAIR_KEY_BUFLEN]; /* "": none (the implicit key
												 * such requests share) */
} SyncEntry;

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

/*
 * One of the entry pool's free lists, alone in its cache line: backends
 * take and give back entries through the list of their process id, so
 * that acquires and releases in different backends seldom touch the same
 * spinlock or free entry.
 */
#define SYNC_POOL_LISTS 16

typedef struct SyncPoolList
{
	slock_t		mutex;			/* protects head, nfree and the chain */
	int32		head;			/* first free entry index, or -1 */
	int32		nfree;
} SyncPoolList;

typedef union SyncPoolListPadded
{
	SyncPoolList list;
	char		pad[PG_CACHE_LINE_SIZE];
} SyncPoolListPadded;

/*
 * The lock table's shared control block.  The partition locks protect the
 * locks and entries of their partitions, and the live and idle lists; each
 * pool list's spinlock its free entries; the counters are atomics.
 */
typedef struct SyncShmem
{
	LWLockPadded *partition_locks;	/* SYNC_NUM_PARTITIONS of them */
	dlist_head	live_locks[SYNC_NUM_PARTITIONS];	/* locks not cached; under
													 * the partition lock */
	dlist_head	idle_locks[SYNC_NUM_PARTITIONS];	/* cached semaphores, in
													 * second-chance order
													 * (lock_table.c); under
													 * the partition lock */
	dlist_head	rate_locks[SYNC_NUM_PARTITIONS];	/* locks whose front
													 * waiter waits for
													 * tokens; under the
													 * partition lock */
	SyncPoolListPadded pool[SYNC_POOL_LISTS];	/* free entries */
	pg_atomic_uint32 nlocks;	/* entries in the lock hash, cached included */
	pg_atomic_uint64 next_seq;	/* arrival counter */
	pg_atomic_uint64 next_request_id;
	pg_atomic_uint64 limit_generation;	/* bumped by every limit change */
	pg_atomic_uint64 fair_generation;	/* bumped by every committed change
										 * of sync_fair_weight
										 * (fair_weights.c) */
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
extern SyncLock *sync_lock_lookup(const SyncLockTag *tag, uint32 hashcode);
extern SyncLock *sync_lock_create(const SyncLockTag *tag, uint32 hashcode,
								  bool *found);
extern bool sync_make_room(uint32 hashcode);
extern void sync_lock_idle(SyncLock *lock);
extern void sync_lock_uncache(SyncLock *lock);
extern void sync_lock_remove(SyncLock *lock);
extern void sync_lock_rate_wait(SyncLock *lock);
extern void sync_lock_rate_done(SyncLock *lock);
extern SyncEntry *sync_entry_alloc(void);
extern void sync_entry_free(SyncEntry *entry);
extern int	sync_entries_free(void);
extern void sync_lock_partitions(uint32 partmask, LWLockMode mode);
extern void sync_unlock_partitions(uint32 partmask);
extern HTAB *sync_lock_hash(void);
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
 * Visit every live lock (one that is not a cached semaphore: it has a
 * holder or a queue entry) of every partition and every database, without
 * walking the hash table: the cost is in proportion to the live locks,
 * whatever the table's size.  The caller holds every partition lock; the
 * body may make the visited lock idle (sync_lock_idle), nothing else.
 *
 *		SyncLiveIter it;
 *		sync_foreach_live_lock(it)
 *		{
 *			SyncLock   *lock = sync_live_lock(it);
 *			...
 *		}
 */
typedef struct SyncLiveIter
{
	int			partition;
	dlist_mutable_iter iter;
} SyncLiveIter;

#define sync_foreach_live_lock(it) \
	for ((it).partition = 0; (it).partition < SYNC_NUM_PARTITIONS; (it).partition++) \
		dlist_foreach_modify((it).iter, &sync_shmem->live_locks[(it).partition])
#define sync_live_lock(it) \
	dlist_container(SyncLock, list_link, (it).iter.cur)

/*
 * Visit every lock of partition p whose front waiter waits for tokens
 * (sync_lock_rate_wait()).  The caller holds the partition exclusively; the
 * body may take the visited lock off the list.
 */
#define sync_foreach_rate_lock(iter, p) \
	dlist_foreach_modify(iter, &sync_shmem->rate_locks[p])
#define sync_rate_lock(iter) \
	dlist_container(SyncLock, rate_link, (iter).cur)

/*
 * Called by sync_entry_free() for a keyed entry (one with a holder) before
 * it goes back to the pool, under its partition lock; set by the module
 * that owns keyed entries (holders.c), at load.
 */
typedef void (*SyncEntryFreeHook) (SyncEntry *entry);
extern void sync_entry_set_free_hook(SyncEntryFreeHook hook);

/*
 * For assertions: does this backend hold the partition lock of 'hashcode',
 * every partition lock named by 'partmask', or any partition lock at all?
 * 'exclusive' asks for exclusive mode; otherwise either mode will do.
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

#endif							/* SYNC_LOCK_TABLE_H */
