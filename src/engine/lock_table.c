/*-------------------------------------------------------------------------
 *
 * lock_table.c
 *		The shared-memory lock table: the control block, the partitioned hash
 *		table of live locks, the partition LWLocks, and the pool of entries
 *		(holds and queue entries).
 *
 * Locking rules (see docs/architecture.md):
 *	- a SyncLock and every entry linked to it are protected by the LWLock of
 *	  the lock's partition (hashcode % SYNC_NUM_PARTITIONS);
 *	- code that needs several partitions takes them in ascending partition
 *	  order (sync_lock_partitions), which makes deadlock between them
 *	  impossible;
 *	- the entry pool is SYNC_POOL_LISTS free lists, each protected by its
 *	  own spinlock, held only to push or pop one entry (or to read its
 *	  count); a process gives entries back to the list of its process id
 *	  and takes from it first;
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
 * removed and made again each time.  Cached locks are evicted in
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

SyncShmem  *sync_shmem = NULL;
SyncEntry  *sync_entry_pool = NULL;
static HTAB *SyncLockHash = NULL;
static SyncEntryFreeHook entry_free_hook = NULL;

/* Searches for a free hash element a reserved lock slot may take. */
#define SYNC_HASH_ENTER_ATTEMPTS 16

/* The hash and equality of lock tags (core/core.h), for dynahash. */
static uint32
sync_tag_hash_fn(const void *key, Size keysize)
{
	return sync_lock_tag_hash(key);
}

static int
sync_tag_match(const void *key1, const void *key2, Size keysize)
{
	return sync_lock_tag_cmp(key1, key2);
}

static Size
sync_entries_size(void)
{
	return mul_size(sync_max_entries, sizeof(SyncEntry));
}

Size
sync_lock_table_shmem_size(void)
{
	Size		size = MAXALIGN(sizeof(SyncShmem));

	size = add_size(size, MAXALIGN(sync_entries_size()));
	size = add_size(size, hash_estimate_size(sync_max_locks, sizeof(SyncLock)));
	return size;
}

/* shmem_request_hook: one LWLock per partition. */
void
sync_lock_table_shmem_request(void)
{
	RequestNamedLWLockTranche(SYNC_PARTITIONS_TRANCHE, SYNC_NUM_PARTITIONS);
}

/*
 * shmem_startup_hook: create or attach to the control block, the entry
 * pool and the lock hash.  Caller holds AddinShmemInitLock.
 */
void
sync_lock_table_shmem_init(void)
{
	bool		found_state;
	bool		found_entries;
	HASHCTL		info;

	sync_shmem = ShmemInitStruct("syncwf lock table", sizeof(SyncShmem), &found_state);
	sync_entry_pool = ShmemInitStruct("syncwf entries", sync_entries_size(),
								  &found_entries);

	if (!found_state)
	{
		memset(sync_shmem, 0, sizeof(SyncShmem));
		sync_shmem->partition_locks = GetNamedLWLockTranche(SYNC_PARTITIONS_TRANCHE);
		for (int i = 0; i < SYNC_NUM_PARTITIONS; i++)
		{
			dlist_init(&sync_shmem->live_locks[i]);
			dlist_init(&sync_shmem->idle_locks[i]);
			dlist_init(&sync_shmem->rate_locks[i]);
		}
		for (int i = 0; i < SYNC_POOL_LISTS; i++)
		{
			SpinLockInit(&sync_shmem->pool[i].list.mutex);
			sync_shmem->pool[i].list.head = -1;
			sync_shmem->pool[i].list.nfree = 0;
		}
		pg_atomic_init_u32(&sync_shmem->nlocks, 0);
		pg_atomic_init_u64(&sync_shmem->next_seq, 1);
		pg_atomic_init_u64(&sync_shmem->next_request_id, 1);
		pg_atomic_init_u64(&sync_shmem->limit_generation, 1);
		pg_atomic_init_u64(&sync_shmem->fair_generation, 1);

		/* thread every entry onto a free list, in turn */
		for (int i = sync_max_entries - 1; i >= 0; i--)
		{
			SyncPoolList *list = &sync_shmem->pool[i % SYNC_POOL_LISTS].list;

			memset(&sync_entry_pool[i], 0, sizeof(SyncEntry));
			sync_elist_link_init(&sync_entry_pool[i], SYNC_LOCK_LINK);
			sync_elist_link_init(&sync_entry_pool[i], SYNC_HOLDER_LINK);
			sync_entry_pool[i].state = SYNC_ENTRY_FREE;
			sync_entry_pool[i].next_free = list->head;
			list->head = i;
			list->nfree++;
		}
	}

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(SyncLockTag);
	info.entrysize = sizeof(SyncLock);
	info.num_partitions = SYNC_NUM_PARTITIONS;
	info.hash = sync_tag_hash_fn;
	info.match = sync_tag_match;
	SyncLockHash = ShmemInitHash("syncwf locks",
								 sync_max_locks, sync_max_locks,
								 &info,
								 HASH_ELEM | HASH_FUNCTION | HASH_COMPARE |
								 HASH_PARTITION | HASH_FIXED_SIZE);
}

void
sync_entry_set_free_hook(SyncEntryFreeHook hook)
{
	entry_free_hook = hook;
}

/*
 * Every entry point calls this before touching shared memory.  _PG_init
 * already refuses to load without shared_preload_libraries, so this only
 * fires if shared memory setup was skipped for another reason.
 */
void
sync_require_shmem(void)
{
	if (sync_shmem == NULL || SyncLockHash == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("syncwf shared memory is not initialized"),
				 errhint("Add syncwf to shared_preload_libraries in postgresql.conf and restart the server.")));
}

HTAB *
sync_lock_hash(void)
{
	return SyncLockHash;
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

/* Find a lock, live or cached.  Caller holds its partition lock. */
SyncLock *
sync_lock_lookup(const SyncLockTag *tag, uint32 hashcode)
{
	Assert(sync_partition_held(hashcode, false));
	return (SyncLock *) hash_search_with_hash_value(SyncLockHash, tag, hashcode,
													HASH_FIND, NULL);
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
	Assert(sync_partition_held(lock->hashcode, true));
	Assert(lock->nheld == 0 && lock->nwaiting == 0 && lock->ndormant == 0);
	Assert(lock->slots_held == 0);
	Assert(dlist_node_is_detached(&lock->rate_link));
	Assert(lock->cached == dlist_node_is_detached(&lock->list_link));
	if (!dlist_node_is_detached(&lock->list_link))
		dlist_delete_thoroughly(&lock->list_link);
	if (!dlist_node_is_detached(&lock->idle_link))
		dlist_delete_thoroughly(&lock->idle_link);
	sync_stats_detach(lock->stats);
	hash_search_with_hash_value(SyncLockHash, &lock->tag, lock->hashcode,
								HASH_REMOVE, NULL);
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
		Assert(dlist_node_is_detached(&lock->list_link));
		dlist_push_tail(&sync_shmem->live_locks[sync_partition_of(lock->hashcode)],
						&lock->list_link);
		lock->cached = false;
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
	dlist_head *idle = &sync_shmem->idle_locks[p];

	while (!dlist_is_empty(idle))
	{
		SyncLock   *lock = dlist_head_element(SyncLock, idle_link, idle);

		if (!lock->cached)
			dlist_delete_thoroughly(&lock->idle_link);	/* live now */
		else if (lock->referenced)
		{
			lock->referenced = false;
			dlist_move_tail(idle, &lock->idle_link);
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
		dlist_mutable_iter iter;

		LWLockAcquire(&sync_shmem->partition_locks[p].lock, LW_EXCLUSIVE);
		dlist_foreach_modify(iter, &sync_shmem->idle_locks[p])
		{
			SyncLock   *lock = dlist_container(SyncLock, idle_link, iter.cur);

			if (!lock->cached)
				dlist_delete_thoroughly(&lock->idle_link);	/* live now */
			else if (lock->tag.dbid == dbid)
				sync_lock_remove(lock);
		}
		LWLockRelease(&sync_shmem->partition_locks[p].lock);
	}
}

/*
 * Make room for a lock while holding no partition lock: wait for each
 * partition in turn, starting with the lock's own, and drop a cached
 * semaphore of the first one that has any.  For a
 * request that sync_lock_create() refused although cached locks may
 * exist: its conditional eviction skips partitions that others hold, and a
 * reader of every partition (sync_locks, sync_holders) holds them all for
 * a moment.  The request is then made again.  False if no partition has a
 * cached lock: the table is full of live locks.
 */
bool
sync_make_room(uint32 hashcode)
{
	return sync_evict_cached(hashcode, true);
}

/*
 * Find or create a lock.  Caller holds its partition lock exclusively.
 * A cached lock that is found joins the live list again: the caller
 * is about to use it.  Returns NULL, without raising an error, when the table
 * is full and no cached lock can be evicted without waiting: the
 * caller undoes its own work, and then makes room with sync_make_room() and
 * tries again, or reports it.  A new lock has no holders, no waiters
 * and no limit; the caller sets kind and limit.
 */
SyncLock *
sync_lock_create(const SyncLockTag *tag, uint32 hashcode, bool *found)
{
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

	while (pg_atomic_fetch_add_u32(&sync_shmem->nlocks, 1) >= (uint32) sync_max_locks)
	{
		pg_atomic_fetch_sub_u32(&sync_shmem->nlocks, 1);
		if (!sync_evict_cached(hashcode, false))
			return NULL;
	}

	/*
	 * Our place in nlocks guarantees a free element.  But dynahash looks for
	 * it in one of its freelists after another, and inserts and removals in
	 * other partitions can move it to a freelist already looked at: when
	 * the table is nearly full, a search can come back empty.  Look again.
	 */
	for (int attempt = 0; attempt < SYNC_HASH_ENTER_ATTEMPTS; attempt++)
	{
		lock = (SyncLock *) hash_search_with_hash_value(SyncLockHash, tag, hashcode,
														HASH_ENTER_NULL, NULL);
		if (lock != NULL)
			break;
	}
	if (lock == NULL)
	{
		pg_atomic_fetch_sub_u32(&sync_shmem->nlocks, 1);
		return NULL;
	}

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
	dlist_push_tail(&sync_shmem->live_locks[sync_partition_of(hashcode)],
					&lock->list_link);
	dlist_node_init(&lock->idle_link);
	lock->nheld = 0;
	lock->slots_held = 0;
	lock->rate_limit = 0;		/* a full bucket, when it gets a rate */
	lock->rate_period_us = 0;
	lock->rate_tat = 0;
	dlist_node_init(&lock->rate_link);
	lock->nwaiting = 0;
	lock->ndormant = 0;
	sync_elist_init(&lock->holders);
	sync_elist_init(&lock->waiters);
	sync_elist_init(&lock->dormant);
	lock->rank_root = SYNC_ENTRY_NONE;
	lock->stats = NULL;			/* attached at its first count */
	return lock;
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
	if (dlist_node_is_detached(&lock->rate_link))
		dlist_push_tail(&sync_shmem->rate_locks[sync_partition_of(lock->hashcode)],
						&lock->rate_link);
}

/* ... or no longer: take it off the list.  Same locking. */
void
sync_lock_rate_done(SyncLock *lock)
{
	Assert(sync_partition_held(lock->hashcode, true));
	if (!dlist_node_is_detached(&lock->rate_link))
		dlist_delete_thoroughly(&lock->rate_link);
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
		dlist_delete_thoroughly(&lock->list_link);
		lock->cached = true;
		if (dlist_node_is_detached(&lock->idle_link))
		{
			lock->referenced = false;
			dlist_push_tail(&sync_shmem->idle_locks[sync_partition_of(lock->hashcode)],
							&lock->idle_link);
		}
		else
			lock->referenced = true;
	}
	else
		sync_lock_remove(lock);
}

/*
 * Put entry e, which is in no list, into 'list' right after 'prev' (NULL:
 * at the head), through its link 'field'.  The caller holds what protects
 * the list (engine.h: SyncEntryList).
 */
void
sync_elist_insert_after(SyncEntryList *list, SyncEntry *prev, SyncEntry *e,
						size_t field)
{
	SyncEntryLink *link = sync_link_of(e, field);
	int32		self = sync_entry_index(e);
	int32		next;

	Assert(sync_elist_detached(e, field));
	if (prev == NULL)
	{
		next = list->head;
		list->head = self;
	}
	else
	{
		Assert(!sync_elist_detached(prev, field));
		next = sync_link_of(prev, field)->next;
		sync_link_of(prev, field)->next = self;
	}
	link->prev = sync_entry_index(prev);
	link->next = next;
	if (next == SYNC_ENTRY_NONE)
		list->tail = self;
	else
		sync_link_of(sync_entry_at(next), field)->prev = self;
}

/* Take entry e out of 'list'; it is then in no list.  Same locking. */
void
sync_elist_delete(SyncEntryList *list, SyncEntry *e, size_t field)
{
	SyncEntryLink *link = sync_link_of(e, field);

	Assert(!sync_elist_detached(e, field));
	if (link->prev == SYNC_ENTRY_NONE)
		list->head = link->next;
	else
		sync_link_of(sync_entry_at(link->prev), field)->next = link->next;
	if (link->next == SYNC_ENTRY_NONE)
		list->tail = link->prev;
	else
		sync_link_of(sync_entry_at(link->next), field)->prev = link->prev;
	link->prev = link->next = SYNC_ENTRY_DETACHED;
}

/*
 * The pool's free lists, counted from this process's own (i = 0): a process
 * gives entries back to that list and takes from it first.
 */
static SyncPoolList *
sync_pool_list(int i)
{
	return &sync_shmem->pool[(MyProcPid + i) % SYNC_POOL_LISTS].list;
}

/* Take an entry from the pool; NULL when the pool is empty. */
SyncEntry *
sync_entry_alloc(void)
{
	SyncEntry  *entry = NULL;

	/*
	 * This process's list first, then the others; a list that looks empty
	 * is skipped in the first round only, so that an entry given back
	 * meanwhile is still found when the pool is nearly exhausted.
	 */
	for (int round = 0; round < 2 && entry == NULL; round++)
		for (int i = 0; i < SYNC_POOL_LISTS && entry == NULL; i++)
		{
			SyncPoolList *list = sync_pool_list(i);

			if (round == 0 && list->nfree == 0)
				continue;
			SpinLockAcquire(&list->mutex);
			if (list->head >= 0)
			{
				entry = &sync_entry_pool[list->head];
				list->head = entry->next_free;
				list->nfree--;
			}
			SpinLockRelease(&list->mutex);
		}

	if (entry != NULL)
	{
		Assert(entry->state == SYNC_ENTRY_FREE);
		Assert(sync_elist_detached(entry, SYNC_LOCK_LINK));
		Assert(sync_elist_detached(entry, SYNC_HOLDER_LINK));
		entry->next_free = -1;
		entry->lock = NULL;
		entry->next_in_request = sync_entry_index(entry);
		entry->token = 0;
		entry->scope = SYNC_SCOPE_SESSION;
		entry->holder = NULL;
		entry->lease_us = 0;
		entry->lease_expires = 0;
		entry->created_xid = InvalidTransactionId;
		entry->release_xid = InvalidTransactionId;
		entry->reserved_xid = InvalidTransactionId;
		entry->owner = InvalidOid;
		entry->controller = -1;
		entry->admit_limit = -1;
		entry->persisted = false;
		entry->claim = false;
		entry->shared = false;
		entry->slots = 1;
		entry->passes = 0;
		entry->rank_parent = entry->rank_left = entry->rank_right = SYNC_ENTRY_NONE;
		entry->rank_size = 0;
	}
	return entry;
}

/* Return an entry to the pool.  It must be unlinked from every list. */
void
sync_entry_free(SyncEntry *entry)
{
	int			index = entry - sync_entry_pool;
	SyncPoolList *list;

	Assert(index >= 0 && index < sync_max_entries);
	if (entry->holder != NULL)
	{
		Assert(entry_free_hook != NULL);
		entry_free_hook(entry);
	}
	Assert(sync_elist_detached(entry, SYNC_LOCK_LINK));
	Assert(sync_elist_detached(entry, SYNC_HOLDER_LINK));
	entry->state = SYNC_ENTRY_FREE;
	entry->lock = NULL;
	entry->request_id = 0;

	list = sync_pool_list(0);
	SpinLockAcquire(&list->mutex);
	entry->next_free = list->head;
	list->head = index;
	list->nfree++;
	SpinLockRelease(&list->mutex);
}

/* Entries in the pool, free to take. */
int
sync_entries_free(void)
{
	int			nfree = 0;

	for (int i = 0; i < SYNC_POOL_LISTS; i++)
	{
		SyncPoolList *list = sync_pool_list(i);

		SpinLockAcquire(&list->mutex);
		nfree += list->nfree;
		SpinLockRelease(&list->mutex);
	}
	return nfree;
}
