/*-------------------------------------------------------------------------
 *
 * lock_table.c
 *		The shared-memory lock table: the control block, the partitioned hash
 *		table of live locks, the partition LWLocks, and the pool of locks.
 *		The pool and the hash's buckets grow with use (core/shared_pool.c);
 *		everything links by number.  The entries (holds and queue entries)
 *		are entry_pool.c's.
 *
 * Locking rules (see docs/architecture.md):
 *	- a SyncLock and every entry linked to it are protected by the LWLock of
 *	  the lock's partition (hashcode % SYNC_NUM_PARTITIONS);
 *	- code that needs several partitions takes them in ascending partition
 *	  order (sync_lock_partitions), which makes deadlock between them
 *	  impossible;
 *	- each partition has its own hash chains (SyncShmem.lock_hash), whose
 *	  bucket array doubles when the partition holds more locks than it has
 *	  buckets, at the next request's start (sync_lock_buckets_grow(): not
 *	  under the partition lock, since allocating may raise an error);
 *	- the pool's free lists have spinlocks of their own (shared_pool.c);
 *	- a partition's lists of live locks and of idle ones (cached
 *	  semaphores) are protected by that partition's lock.  A lock that is
 *	  not cached is on the live list (list_link); a cached one is on the
 *	  idle list (idle_link), where a lock stays while it is live again
 *	  until the eviction walk meets it.  A rate-limited semaphore whose
 *	  front waiter waits for tokens is also on its partition's rate list
 *	  (rate_link), for the pass that grants it when they come
 *	  (wait_queue.c).
 *
 * A lock whose last holder or waiter leaves stays cached (sync_lock_idle):
 * a semaphore keeps its limit, and a mutex used over and over is not
 * removed and made again each time.  A new lock evicts a cached one only
 * while they are many (sync_cache_is_large), or at the memory cap
 * (sync_make_room); otherwise the pool grows.  Cached locks are evicted in
 * second-chance order (CLOCK), not strict LRU, so that using a cached
 * lock and caching it again touch no
 * other lock's memory: a lock goes to the tail of the idle list when it is
 * first cached and stays there; using it again only marks it live, caching
 * it again only marks it referenced.  The eviction walk, from the head,
 * takes off the live locks it meets, sends a referenced one to the tail
 * with its mark cleared, and evicts the first one that is neither.
 *
 * The partition locks are the tranche "syncwf partitions".  Other shared
 * state has its own block, sized and created by its own file (tokens.c,
 * outbox.c, controllers.c, holder_table.c); syncwf.c calls each in turn.
 *
 * Each lock points to its row of statistics (stats.c) from its first count
 * until it leaves the hash.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"

#include "engine/engine_internal.h"

/*
 * Cached locks kept, even when they outnumber the live ones, before a new
 * lock evicts one rather than grow memory: 100,000 locks, 40 MB.
 */
#define SYNC_CACHE_KEEP		100000

SyncShmem  *sync_shmem = NULL;

/* Did syncwf.max_locks refuse the last lock this backend asked for? */
static bool refused_by_count = false;

/* This backend's addresses of the partitions' bucket arrays. */
static SyncBucketsCache lock_buckets[SYNC_NUM_PARTITIONS];

/* Each partition's first buckets; the array doubles as it fills. */
#define SYNC_LOCK_BUCKETS_INIT	256

Size
sync_lock_table_shmem_size(void)
{
	return add_size(add_size(MAXALIGN(sizeof(SyncShmem)), sync_groups_shmem_size()),
					sync_preempt_shmem_size());
}

/* A new slab's locks: on no list. */
static void
sync_lock_init(SyncPooled *obj)
{
	SyncLock   *lock = (SyncLock *) obj;

	lock->list_link.prev = lock->list_link.next = SYNC_ENTRY_DETACHED;
	lock->idle_link = lock->rate_link = lock->group_link = lock->list_link;
	lock->groupno = SYNC_ENTRY_NONE;
	lock->group_ready = SYNC_READY_NOT;
}

/* Module load, in every process: the pools of locks and entries. */
void
sync_lock_table_init(void)
{
	sync_pool_define(SYNC_POOL_LOCKS, "locks", sizeof(SyncLock),
					 sync_lock_init);
	sync_entry_pool_init();
	sync_groups_init();
}

/* shmem_request_hook: one LWLock per partition. */
void
sync_lock_table_shmem_request(void)
{
	RequestNamedLWLockTranche(SYNC_PARTITIONS_TRANCHE, SYNC_NUM_PARTITIONS);
	sync_groups_shmem_request();
}

/*
 * shmem_startup_hook: create or attach to the control block, and make each
 * partition's first buckets.  Caller holds AddinShmemInitLock.
 */
void
sync_lock_table_shmem_init(void)
{
	bool		found;

	sync_groups_shmem_init();
	sync_preempt_shmem_init();
	sync_shmem = ShmemInitStruct("syncwf lock table", sizeof(SyncShmem), &found);
	if (found)
		return;
	memset(sync_shmem, 0, sizeof(SyncShmem));
	sync_shmem->partition_locks = GetNamedLWLockTranche(SYNC_PARTITIONS_TRANCHE);
	for (int i = 0; i < SYNC_NUM_PARTITIONS; i++)
	{
		/* a partition's hash codes all end in i: the bucket uses the rest */
		sync_buckets_init(&sync_shmem->lock_hash[i], SYNC_LOCK_BUCKETS_INIT,
						  pg_leftmost_one_pos32(SYNC_NUM_PARTITIONS));
		sync_elist_init(&sync_shmem->live_locks[i]);
		sync_elist_init(&sync_shmem->idle_locks[i]);
		sync_elist_init(&sync_shmem->rate_locks[i]);
	}
	pg_atomic_init_u32(&sync_shmem->nlocks, 0);
	pg_atomic_init_u64(&sync_shmem->next_seq, 1);
	pg_atomic_init_u64(&sync_shmem->next_request_id, 1);
	pg_atomic_init_u64(&sync_shmem->limit_generation, 1);
	pg_atomic_init_u64(&sync_shmem->fair_generation, 1);
}

/*
 * Every entry point calls this before touching shared memory.  _PG_init
 * already refuses to load without shared_preload_libraries, so this only
 * fires if shared memory setup was skipped for another reason.
 */
void
sync_require_shmem(void)
{
	if (sync_shmem == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("syncwf shared memory is not initialized"),
				 errhint("Add syncwf to shared_preload_libraries in postgresql.conf and restart the server.")));
}

void
sync_make_tag(SyncLockTag *tag, Oid dbid, const char *name)
{
	memset(tag, 0, sizeof(SyncLockTag));
	tag->dbid = dbid;
	strlcpy(tag->name, name, sizeof(tag->name));
}

/* The hash of a tag, as the lock hash computes it (sync_tag_hash_fn()). */
uint32
sync_tag_hash(const SyncLockTag *tag)
{
	return sync_lock_tag_hash(tag);
}

int
sync_partition_of(uint32 hashcode)
{
	return hashcode % SYNC_NUM_PARTITIONS;
}

LWLock *
sync_partition_lock(uint32 hashcode)
{
	return &sync_shmem->partition_locks[sync_partition_of(hashcode)].lock;
}

/*
 * Take the partition locks named by mask, in ascending order (one step per
 * partition named: most requests name one).
 */
void
sync_lock_partitions(uint32 partmask, LWLockMode mode)
{
	Assert((partmask & ~SYNC_ALL_PARTITIONS) == 0);
	for (uint32 m = partmask; m != 0; m &= m - 1)
		LWLockAcquire(&sync_shmem->partition_locks[pg_rightmost_one_pos32(m)].lock,
					  mode);
}

/* ... and let them go, in descending order. */
void
sync_unlock_partitions(uint32 partmask)
{
	Assert((partmask & ~SYNC_ALL_PARTITIONS) == 0);
	for (uint32 m = partmask; m != 0;)
	{
		int			i = pg_leftmost_one_pos32(m);

		LWLockRelease(&sync_shmem->partition_locks[i].lock);
		m &= ~(1U << i);
	}
}

/*
 * The lists of locks of a partition (live, idle, rate) link locks by
 * number through one of their SyncEntryLink fields, as entry lists do.
 */
#define SYNC_LIVE_LINK	offsetof(SyncLock, list_link)
#define SYNC_IDLE_LINK	offsetof(SyncLock, idle_link)
#define SYNC_RATE_LINK	offsetof(SyncLock, rate_link)

static inline SyncEntryLink *
lock_link(SyncLock *lock, size_t field)
{
	return (SyncEntryLink *) ((char *) lock + field);
}

static inline bool
lock_detached(SyncLock *lock, size_t field)
{
	return lock_link(lock, field)->next == SYNC_ENTRY_DETACHED;
}

static inline void
lock_list_push_tail(SyncEntryList *list, SyncLock *lock, size_t field)
{
	SyncEntryLink *link = lock_link(lock, field);
	int32		self = lock->pooled.self;

	Assert(lock_detached(lock, field));
	link->prev = list->tail;
	link->next = SYNC_ENTRY_NONE;
	if (list->tail == SYNC_ENTRY_NONE)
		list->head = self;
	else
		lock_link(sync_lock_at(list->tail), field)->next = self;
	list->tail = self;
}

static inline void
lock_list_delete(SyncEntryList *list, SyncLock *lock, size_t field)
{
	SyncEntryLink *link = lock_link(lock, field);

	Assert(!lock_detached(lock, field));
	if (link->prev == SYNC_ENTRY_NONE)
		list->head = link->next;
	else
		lock_link(sync_lock_at(link->prev), field)->next = link->next;
	if (link->next == SYNC_ENTRY_NONE)
		list->tail = link->prev;
	else
		lock_link(sync_lock_at(link->next), field)->prev = link->prev;
	link->prev = link->next = SYNC_ENTRY_DETACHED;
}

/* Find a lock, live or cached.  Caller holds its partition lock. */
SyncLock *
sync_lock_lookup(const SyncLockTag *tag, uint32 hashcode)
{
	int			p = sync_partition_of(hashcode);
	int32		n;

	Assert(sync_partition_held(hashcode, false));
	n = sync_buckets_first(&sync_shmem->lock_hash[p], &lock_buckets[p], hashcode);
	while (n >= 0)
	{
		SyncLock   *lock = sync_lock_at(n);

		if (lock->hashcode == hashcode && sync_lock_tag_cmp(&lock->tag, tag) == 0)
			return lock;
		n = lock->pooled.next;
	}
	return NULL;
}

/*
 * Visit every lock in the table, live or cached, once.  Caller holds every
 * partition exclusively; 'visit' may remove the lock it is given (and
 * nothing else).
 */
void
sync_lock_foreach(SyncLockVisitor visit, void *arg)
{
	Assert(sync_partitions_held(SYNC_ALL_PARTITIONS, true));
	for (int p = 0; p < SYNC_NUM_PARTITIONS; p++)
	{
		SyncBuckets *b = &sync_shmem->lock_hash[p];

		for (uint32 k = 0; k < b->nbuckets; k++)
		{
			int32		n = sync_buckets_array(b, &lock_buckets[p])[k];

			while (n >= 0)
			{
				SyncLock   *lock = sync_lock_at(n);

				n = lock->pooled.next;
				visit(lock, arg);
			}
		}
	}
}

/*
 * Take the partition of the lock 'name' of database 'dbid' in 'mode', and
 * find the lock, live or cached (NULL if it is not in the table).
 * *partition is the partition lock, which the caller releases.
 */
SyncLock *
sync_lock_find(Oid dbid, const char *name, LWLockMode mode, LWLock **partition)
{
	SyncLockTag tag;
	uint32		hashcode;

	sync_make_tag(&tag, dbid, name);
	hashcode = sync_tag_hash(&tag);
	*partition = sync_partition_lock(hashcode);
	LWLockAcquire(*partition, mode);
	return sync_lock_lookup(&tag, hashcode);
}

/* Drop a lock from the hash.  Caller holds its partition exclusively. */
void
sync_lock_remove(SyncLock *lock)
{
	int			p = sync_partition_of(lock->hashcode);

	Assert(sync_partition_held(lock->hashcode, true));
	Assert(lock->nheld == 0 && lock->nwaiting == 0 && lock->ndormant == 0);
	Assert(lock->slots_held == 0);
	Assert(lock_detached(lock, SYNC_RATE_LINK));
	Assert(lock->cached == lock_detached(lock, SYNC_LIVE_LINK));
	if (!lock_detached(lock, SYNC_LIVE_LINK))
		lock_list_delete(&sync_shmem->live_locks[p], lock, SYNC_LIVE_LINK);
	if (!lock_detached(lock, SYNC_IDLE_LINK))
		lock_list_delete(&sync_shmem->idle_locks[p], lock, SYNC_IDLE_LINK);
	if (lock->cached)
		sync_shmem->ncached[p]--;
	sync_stats_detach(lock->stats);
	lock->stats = NULL;
	sync_group_leave(lock);

	sync_buckets_unlink(&sync_shmem->lock_hash[p], &lock_buckets[p], lock->hashcode,
						SYNC_POOL_LOCKS, sizeof(SyncLock), &lock->pooled);
	sync_pool_free(SYNC_POOL_LOCKS, &lock->pooled);
	pg_atomic_fetch_sub_u32(&sync_shmem->nlocks, 1);
}

/*
 * A cached lock is about to be used again: it joins the live list and
 * stays where it is on the idle list (the eviction walk takes it off).
 * Caller holds its partition exclusively.
 */
void
sync_lock_uncache(SyncLock *lock)
{
	Assert(sync_partition_held(lock->hashcode, true));
	if (lock->cached)
	{
		int			p = sync_partition_of(lock->hashcode);

		lock_list_push_tail(&sync_shmem->live_locks[p], lock, SYNC_LIVE_LINK);
		lock->cached = false;
		sync_shmem->ncached[p]--;
	}
}

/*
 * Evict one cached lock of partition p in second-chance order; false
 * if it has none.  Caller holds the partition exclusively.  Each step takes
 * a live lock off the list, clears a mark (which nothing sets meanwhile) or
 * evicts, so the walk ends.
 */
static bool
sync_evict_one(int p)
{
	SyncEntryList *idle = &sync_shmem->idle_locks[p];

	while (idle->head != SYNC_ENTRY_NONE)
	{
		SyncLock   *lock = sync_lock_at(idle->head);

		if (!lock->cached)
			lock_list_delete(idle, lock, SYNC_IDLE_LINK);	/* live now */
		else if (lock->referenced)
		{
			lock->referenced = false;
			lock_list_delete(idle, lock, SYNC_IDLE_LINK);
			lock_list_push_tail(idle, lock, SYNC_IDLE_LINK);
		}
		else
		{
			sync_lock_remove(lock);
			return true;
		}
	}
	return false;
}

/*
 * Drop a cached lock (sync_evict_one) of some partition, trying
 * the partitions in turn from the one of 'hashcode'.  Without 'wait',
 * partitions this backend holds exclusively are used as they are and others
 * are only tried with a conditional acquire, which cannot deadlock whatever
 * else we hold.  With 'wait' (the caller holds no partition), each one is
 * waited for.  False if nothing could be evicted.
 */
static bool
sync_evict_cached(uint32 hashcode, bool wait)
{
	int			home = sync_partition_of(hashcode);

	Assert(!wait || !sync_any_partition_held());
	for (int k = 0; k < SYNC_NUM_PARTITIONS; k++)
	{
		int			p = (home + k) % SYNC_NUM_PARTITIONS;
		LWLock	   *partition = &sync_shmem->partition_locks[p].lock;
		bool		acquired = false;
		bool		evicted = false;

		if (wait)
		{
			Assert(!LWLockHeldByMe(partition));
			LWLockAcquire(partition, LW_EXCLUSIVE);
			acquired = true;
		}
		else if (!LWLockHeldByMeInMode(partition, LW_EXCLUSIVE))
		{
			if (LWLockHeldByMe(partition) ||
				!LWLockConditionalAcquire(partition, LW_EXCLUSIVE))
				continue;
			acquired = true;
		}
		evicted = sync_evict_one(p);
		if (acquired)
			LWLockRelease(partition);
		if (evicted)
			return true;
	}
	return false;
}

/*
 * Drop the cached locks of database 'dbid': every one, or only the one
 * named 'name'.  For a reset of sync_lock_stats, which removes the rows of
 * the locks nobody uses and must find none of them attached to a cached
 * lock.  Takes each partition lock in turn; caller holds none.  Costs a
 * walk of the idle lists (the named one: one probe).
 */
void
sync_lock_drop_cached(Oid dbid, const char *name)
{
	Assert(!sync_any_partition_held());
	if (name != NULL)
	{
		LWLock	   *partition;
		SyncLock   *lock = sync_lock_find(dbid, name, LW_EXCLUSIVE, &partition);

		if (lock != NULL && lock->cached)
			sync_lock_remove(lock);
		LWLockRelease(partition);
		return;
	}
	for (int p = 0; p < SYNC_NUM_PARTITIONS; p++)
	{
		SyncEntryList *idle = &sync_shmem->idle_locks[p];
		int32		n;

		LWLockAcquire(&sync_shmem->partition_locks[p].lock, LW_EXCLUSIVE);
		for (n = idle->head; n != SYNC_ENTRY_NONE;)
		{
			SyncLock   *lock = sync_lock_at(n);

			n = lock->idle_link.next;
			if (!lock->cached)
				lock_list_delete(idle, lock, SYNC_IDLE_LINK);	/* live now */
			else if (lock->tag.dbid == dbid)
				sync_lock_remove(lock);
		}
		LWLockRelease(&sync_shmem->partition_locks[p].lock);
	}
}

/*
 * Make room for a request of 'nlocks' locks that sync_lock_create()
 * refused, holding no partition lock.  The bind already took every free
 * lock and evicted every cached lock it could without waiting, and never
 * grows memory itself (growing may raise an error, which must not come
 * while shared state is half-changed); so grow the pool of locks until it
 * has a free lock for each, or, where syncwf.max_memory refuses, evict a
 * cached lock for each: wait for each partition in turn, starting with the
 * lock's own, and evict from the first one that has any (others held the
 * partitions for a moment, as a reader of every partition does).  The request is then made
 * again.  False if the table is full of live locks and the caps refuse
 * more; an error if the operating system refuses memory.
 */
bool
sync_make_room(uint32 hashcode, int nlocks)
{
	bool		evicted = false;

	if (!refused_by_count && sync_pool_reserve(SYNC_POOL_LOCKS, nlocks))
		return true;
	/* one cached lock for each the request may need */
	for (int i = 0; i < nlocks && sync_evict_cached(hashcode, true); i++)
		evicted = true;
	return evicted;
}

/*
 * Whether the cached locks are more than the lock table should keep while
 * memory may grow: more than the live locks, and more than
 * SYNC_CACHE_KEEP.  Below that, a new lock grows the pool rather than
 * evict one, so that a server with many live locks keeps its working set
 * of idle ones (each eviction costs a later acquire of that name a new
 * lock and its statistics attach again), and the cached ones take at most
 * as much memory as the live ones, or SYNC_CACHE_KEEP locks' worth.  The
 * counts are read without locks: a moment's approximation is enough.
 */
static bool
sync_cache_is_large(void)
{
	int64		locks;
	int64		cached;

	sync_lock_counts(&locks, &cached);
	return cached > Max(locks - cached, SYNC_CACHE_KEEP);
}

/*
 * Take a lock object for a new lock of partition 'hashcode': a free one,
 * else, while the cache is large, that of a cached lock evicted for it.
 * NULL when none can be had without waiting or growing (the caller then
 * undoes its work and calls sync_make_room(), which grows memory or, at
 * the cap, evicts whatever the cache's size); refused_by_count says whether
 * syncwf.max_locks refused.
 */
static SyncLock *
sync_lock_take(uint32 hashcode)
{
	int32		n;

	refused_by_count = false;
	while (pg_atomic_fetch_add_u32(&sync_shmem->nlocks, 1) >= (uint32) sync_max_locks &&
		   sync_max_locks >= 0)
	{
		pg_atomic_fetch_sub_u32(&sync_shmem->nlocks, 1);
		if (!sync_evict_cached(hashcode, false))
		{
			refused_by_count = true;
			return NULL;
		}
	}
	n = sync_pool_alloc(SYNC_POOL_LOCKS, false);
	if (n < 0 && sync_cache_is_large() && sync_evict_cached(hashcode, false))
		n = sync_pool_alloc(SYNC_POOL_LOCKS, false);
	if (n < 0)
	{
		pg_atomic_fetch_sub_u32(&sync_shmem->nlocks, 1);
		return NULL;
	}
	return sync_lock_at(n);
}

/*
 * Find or create a lock.  Caller holds its partition lock exclusively.
 * A cached lock that is found joins the live list again: the caller
 * is about to use it.  Returns NULL, without raising an error, when the table
 * is full and no cached lock can be evicted without waiting: the
 * caller undoes its own work, and then makes room with sync_make_room() and
 * tries again, or reports it (sync_report_locks_full()).  A new lock has
 * no holders, no waiters and no limit; the caller sets kind and limit.
 */
SyncLock *
sync_lock_create(const SyncLockTag *tag, uint32 hashcode, bool *found)
{
	int			p = sync_partition_of(hashcode);
	SyncBuckets *b = &sync_shmem->lock_hash[p];
	SyncLock   *lock;

	Assert(sync_partition_held(hashcode, true));
	lock = sync_lock_lookup(tag, hashcode);
	if (lock != NULL)
	{
		*found = true;
		sync_lock_uncache(lock);
		return lock;
	}
	*found = false;
	lock = sync_lock_take(hashcode);
	if (lock == NULL)
		return NULL;

	memcpy(&lock->tag, tag, sizeof(SyncLockTag));
	lock->hashcode = hashcode;
	lock->kind = SYNC_KIND_MUTEX;
	lock->limit_defined = true;
	lock->cached = false;
	lock->referenced = false;
	lock->limit = 1;
	lock->limit_relid = InvalidOid;
	lock->pattern_len = 0;
	lock->max_waiters = -1;
	lock->best_effort = false;
	lock->is_parent = false;
	Assert(lock->groupno == SYNC_ENTRY_NONE && !lock->group_ready);
	Assert(lock_detached(lock, SYNC_IDLE_LINK) && lock_detached(lock, SYNC_RATE_LINK));
	lock_list_push_tail(&sync_shmem->live_locks[p], lock, SYNC_LIVE_LINK);
	lock->nheld = 0;
	lock->slots_held = 0;
	lock->rate_limit = 0;		/* a full bucket, when it gets a rate */
	lock->rate_period_us = 0;
	lock->rate_tat = 0;
	lock->aging_interval_us = 0;	/* no aging, until its limit has some */
	lock->aging_max = 0;
	lock->aging_due = 0;
	lock->preempt_grace_us = -1;	/* no preemption, until its limit allows */
	lock->npreemptible = 0;
	lock->slots_preempting = 0;
	lock->preempt_seen = 0;
	lock->nwaiting = 0;
	lock->ndormant = 0;
	sync_elist_init(&lock->holders);
	sync_elist_init(&lock->waiters);
	sync_elist_init(&lock->dormant);
	lock->rank_root = SYNC_ENTRY_NONE;
	lock->stats = NULL;			/* attached at its first count */

	/* into its chain; the partition's buckets double as it fills */
	if (sync_buckets_link(b, &lock_buckets[p], hashcode, &lock->pooled) > b->nbuckets)
		sync_shmem->buckets_wanted = true;	/* sync_lock_buckets_grow() */
	return lock;
}

/*
 * Double the buckets of each partition that holds more locks than it has
 * buckets (sync_lock_create() asks for it), or, with 'nlocks', give every
 * partition room for its share of that many.  The caller holds no
 * partition lock (sync_buckets_grow() allocates before it locks); a
 * request calls this before it binds, a load before its passes.
 */
void
sync_lock_buckets_grow(int64 nlocks)
{
	uint32		want = (uint32) Min(nlocks / SYNC_NUM_PARTITIONS, PG_INT32_MAX);

	Assert(!sync_any_partition_held());
	sync_shmem->buckets_wanted = false;
	for (int p = 0; p < SYNC_NUM_PARTITIONS; p++)
		sync_buckets_grow(&sync_shmem->lock_hash[p], &lock_buckets[p],
						  &sync_shmem->partition_locks[p].lock,
						  SYNC_POOL_LOCKS, offsetof(SyncLock, hashcode), want);
}

/* The setting that refused the last lock, for a hint. */
const char *
sync_locks_full_setting(void)
{
	return refused_by_count ? "syncwf.max_locks" : "syncwf.max_memory";
}

/*
 * Report that a lock could not be made (sync_lock_create() returned NULL
 * and no room could be made): the count cap or the memory refused.
 */
void
sync_report_locks_full(void)
{
	if (refused_by_count)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("syncwf lock table is full"),
				 errdetail("All %d lock slots are in use.", sync_max_locks),
				 errhint("Raise syncwf.max_locks, or set it to -1, and reload the configuration.")));
	sync_memory_report_full(SYNC_POOL_LOCKS);
}

/*
 * Attach a lock to its row of sync_lock_stats (stats.c), which it keeps
 * until sync_lock_remove().  Caller holds its partition exclusively.
 */
void
sync_lock_attach_stats(SyncLock *lock)
{
	Assert(sync_partition_held(lock->hashcode, true));
	if (lock->stats == NULL)
		lock->stats = sync_stats_attach(&lock->tag, lock->hashcode);
}

/*
 * The front waiter of 'lock' waits for tokens: put the lock on its
 * partition's rate list, if it is not there.  Caller holds the partition
 * exclusively.
 */
void
sync_lock_rate_wait(SyncLock *lock)
{
	Assert(sync_partition_held(lock->hashcode, true));
	if (lock_detached(lock, SYNC_RATE_LINK))
		lock_list_push_tail(&sync_shmem->rate_locks[sync_partition_of(lock->hashcode)],
							lock, SYNC_RATE_LINK);
}

/* ... or no longer: take it off the list.  Same locking. */
void
sync_lock_rate_done(SyncLock *lock)
{
	Assert(sync_partition_held(lock->hashcode, true));
	if (!lock_detached(lock, SYNC_RATE_LINK))
		lock_list_delete(&sync_shmem->rate_locks[sync_partition_of(lock->hashcode)],
						 lock, SYNC_RATE_LINK);
}

/*
 * Called whenever a lock may have lost its last holder or waiter.  It is
 * kept as a cached entry (a semaphore only while it has a limit; one whose
 * sync_limit row went away is dropped): at the tail of the idle list if it
 * is not on it, marked referenced if it is.
 * Caller holds its partition exclusively.
 */
void
sync_lock_idle(SyncLock *lock)
{
	Assert(sync_partition_held(lock->hashcode, true));
	if (lock->nheld != 0 || lock->nwaiting != 0 || lock->ndormant != 0 ||
		lock->cached)
		return;
	Assert(sync_elist_is_empty(&lock->holders) &&
		   sync_elist_is_empty(&lock->waiters) &&
		   sync_elist_is_empty(&lock->dormant));
	sync_lock_rate_done(lock);	/* nobody waits */
	if (lock->limit_defined)
	{
		int			p = sync_partition_of(lock->hashcode);

		lock_list_delete(&sync_shmem->live_locks[p], lock, SYNC_LIVE_LINK);
		lock->cached = true;
		sync_shmem->ncached[p]++;
		if (lock_detached(lock, SYNC_IDLE_LINK))
		{
			lock->referenced = false;
			lock_list_push_tail(&sync_shmem->idle_locks[p], lock, SYNC_IDLE_LINK);
		}
		else
			lock->referenced = true;
	}
	else
		sync_lock_remove(lock);
}

/*
 * Locks in the table, cached ones included, and how many of them are
 * cached: for the view sync_memory, without partition locks (each count is
 * read whole, the total is a moment's approximation).
 */
void
sync_lock_counts(int64 *locks, int64 *cached)
{
	*locks = pg_atomic_read_u32(&sync_shmem->nlocks);
	*cached = 0;
	for (int p = 0; p < SYNC_NUM_PARTITIONS; p++)
		*cached += ((volatile SyncShmem *) sync_shmem)->ncached[p];
}
