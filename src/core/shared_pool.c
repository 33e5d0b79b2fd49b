/*-------------------------------------------------------------------------
 *
 * shared_pool.c
 *		Shared memory that grows with use: one DSA area, the pools of
 *		numbered objects carved from it (locks, queue entries, holder keys),
 *		the growable bucket arrays of the hashes that find them, and the
 *		cap on it all (syncwf.max_memory).
 *
 * The area is created in place in the main shared memory segment when the
 * server starts, as the cumulative statistics system creates its own; it
 * starts with SYNC_AREA_PLACE_SIZE bytes there and grows in DSM segments
 * that PostgreSQL creates on demand.  A backend maps those segments at an
 * address of its own, so nothing in shared memory points into the area:
 * every object is named by its number, the same in every backend.
 *
 * A pool hands out objects of one size.  It grows by one slab of
 * SYNC_SLAB_SIZE objects at a time; object n lives in slab n >> 12, at
 * place n & 4095.  A backend keeps the address of each slab it has mapped
 * (sync_slab_base), so that finding an object costs a load and a multiply.
 * A slab is never freed: a freed object goes to one of the pool's free lists
 * and is reused, and the area's memory goes back to the operating system
 * only when the server restarts.
 *
 * Locking:
 *	- each free list has a spinlock, held only to push or pop (a process
 *	  gives objects back to the list of its process id, and takes from it
 *	  first);
 *	- grow_lock (tranche "syncwf memory") serializes growth: making a slab,
 *	  and a hash's bucket array when it is replaced; it is taken after any
 *	  other syncwf lock and nothing is taken under it but the area's own;
 *	- a slab is published (nslabs) only once every object in it is made,
 *	  and an object's number reaches another backend only through a
 *	  structure its own lock protects, so the slab of any number a backend
 *	  reads is published;
 *	- a hash's buckets (SyncBuckets) are protected by whatever protects the
 *	  hash (a partition lock, holders_lock).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/memutils.h"

#include "core/core.h"

/* Room the area starts with, in the main segment: the first bucket arrays. */
#define SYNC_AREA_PLACE_SIZE	(256 * 1024)

#define SYNC_MEMORY_TRANCHE		"syncwf memory"

typedef struct SyncPoolShared
{
	pg_atomic_uint32 nslabs;	/* slabs made, published in order */
	SyncPoolListPadded lists[SYNC_POOL_LISTS];	/* free objects */
	dsa_pointer slabs[SYNC_POOL_MAX_SLABS];
} SyncPoolShared;

typedef struct SyncMemory
{
	int			area_tranche;	/* the area's own LWLocks */
	LWLock	   *grow_lock;		/* see above */
	pg_atomic_uint64 allocated; /* bytes asked of the area and not freed */
	pg_atomic_uint64 refused;	/* growths refused at the cap */
	SyncPoolShared pools[SYNC_NUM_POOLS];
	char		area[FLEXIBLE_ARRAY_MEMBER];	/* the area, in place */
} SyncMemory;

static SyncMemory *Memory = NULL;
static dsa_area *sync_area = NULL;

/* This backend's addresses of the slabs, by pool; NULL: not mapped yet. */
char	   *sync_slab_base[SYNC_NUM_POOLS][SYNC_POOL_MAX_SLABS];

/* What each pool's objects are: set in every process at load. */
typedef struct SyncPoolDef
{
	const char *name;
	Size		objsize;
	SyncPoolInit init;
} SyncPoolDef;

static SyncPoolDef pool_defs[SYNC_NUM_POOLS];

/* Why the last growth of this backend failed. */
static SyncGrowFailure last_failure = SYNC_GROW_OK;

/* The cap, in bytes. */
static Size
sync_memory_cap(void)
{
	return (Size) sync_max_memory * 1024 * 1024;
}

Size
sync_memory_shmem_size(void)
{
	return add_size(MAXALIGN(offsetof(SyncMemory, area)), SYNC_AREA_PLACE_SIZE);
}

void
sync_memory_shmem_request(void)
{
	RequestNamedLWLockTranche(SYNC_MEMORY_TRANCHE, 1);
}

/*
 * shmem_startup_hook: create the area, or find it.  The creator (the
 * postmaster) stays attached until sync_memory_shmem_done(), so that the
 * hashes can make their first buckets in place.  Caller holds
 * AddinShmemInitLock.
 */
void
sync_memory_shmem_init(void)
{
	bool		found;

	Memory = ShmemInitStruct("syncwf memory", sync_memory_shmem_size(), &found);
	if (found)
		return;
	memset(Memory, 0, offsetof(SyncMemory, area));
	Memory->grow_lock = &GetNamedLWLockTranche(SYNC_MEMORY_TRANCHE)->lock;
	pg_atomic_init_u64(&Memory->allocated, 0);
	pg_atomic_init_u64(&Memory->refused, 0);
	for (int p = 0; p < SYNC_NUM_POOLS; p++)
	{
		SyncPoolShared *ps = &Memory->pools[p];

		pg_atomic_init_u32(&ps->nslabs, 0);
		for (int i = 0; i < SYNC_POOL_LISTS; i++)
		{
			SpinLockInit(&ps->lists[i].list.mutex);
			ps->lists[i].list.head = -1;
			ps->lists[i].list.nfree = 0;
		}
		for (int i = 0; i < SYNC_POOL_MAX_SLABS; i++)
			ps->slabs[i] = InvalidDsaPointer;
	}
	Memory->area_tranche = LWLockNewTrancheId();
	sync_area = dsa_create_in_place(Memory->area, SYNC_AREA_PLACE_SIZE,
									Memory->area_tranche, NULL);
	dsa_pin(sync_area);
	memset(sync_slab_base, 0, sizeof(sync_slab_base));
}

/*
 * End of shmem_startup_hook: the postmaster lets go of the area, which its
 * children attach to on their own (sync_memory_area()).
 */
void
sync_memory_shmem_done(void)
{
	if (!IsUnderPostmaster && sync_area != NULL)
	{
		dsa_detach(sync_area);
		sync_area = NULL;
		memset(sync_slab_base, 0, sizeof(sync_slab_base));
	}
}

/* Module load, in every process: what each pool holds. */
void
sync_pool_define(SyncPoolId id, const char *name, Size objsize,
				 SyncPoolInit init)
{
	Assert(objsize >= sizeof(SyncPooled));
	pool_defs[id].name = name;
	pool_defs[id].objsize = objsize;
	pool_defs[id].init = init;
}

/*
 * The area, attached on first use.  Its mappings last as long as the
 * process; its reference is given back at exit.
 */
static dsa_area *
sync_memory_area(void)
{
	if (unlikely(sync_area == NULL))
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		Assert(Memory != NULL);
		LWLockRegisterTranche(Memory->area_tranche, "syncwf memory area");
		sync_area = dsa_attach_in_place(Memory->area, NULL);
		on_shmem_exit(dsa_on_shmem_exit_release_in_place,
					  PointerGetDatum(Memory->area));
		dsa_pin_mapping(sync_area);
		MemoryContextSwitchTo(old);
	}
	return sync_area;
}

/*
 * Allocate 'bytes' of the area, or return an invalid pointer when the cap
 * refuses.  The area itself is bounded by the cap too (DSA makes no
 * segment beyond its size limit, which this backend's syncwf.max_memory
 * sets first), so that the segments never take more than the cap, whatever
 * they hold.  An error if the operating system refuses a segment.  Caller
 * holds grow_lock.
 */
static dsa_pointer
sync_area_allocate(Size bytes, int flags)
{
	Assert(LWLockHeldByMeInMode(Memory->grow_lock, LW_EXCLUSIVE));
	dsa_set_size_limit(sync_memory_area(), sync_memory_cap() + SYNC_AREA_PLACE_SIZE);
	return dsa_allocate_extended(sync_memory_area(), bytes, DSA_ALLOC_NO_OOM | flags);
}

/* Map slab 'slab' of pool 'id' (published) in this backend. */
char *
sync_pool_map_slab(SyncPoolId id, int32 slab)
{
	SyncPoolShared *ps = &Memory->pools[id];
	dsa_pointer dp;

	Assert(slab >= 0 && slab < (int32) pg_atomic_read_u32(&ps->nslabs));
	pg_read_barrier();
	dp = ps->slabs[slab];
	Assert(DsaPointerIsValid(dp));
	sync_slab_base[id][slab] = dsa_get_address(sync_memory_area(), dp);
	return sync_slab_base[id][slab];
}

/* This process's own free list of each pool: MyProcPid % SYNC_POOL_LISTS. */
static int	my_list = -1;

/* The free lists of a pool, counted from this process's own (i = 0). */
static inline SyncPoolList *
sync_pool_list(SyncPoolShared *ps, int i)
{
	if (unlikely(my_list < 0 || i != 0))
	{
		if (my_list < 0)
			my_list = MyProcPid % SYNC_POOL_LISTS;
		return &ps->lists[(my_list + i) % SYNC_POOL_LISTS].list;
	}
	return &ps->lists[my_list].list;
}

/*
 * Pop the first object of 'list', or -1.  Its slab is mapped first, outside
 * the spinlock (mapping may attach a segment), and the pop tried again.
 */
static inline int32
sync_pool_pop(SyncPoolId id, SyncPoolList *list)
{
	for (;;)
	{
		int32		n;
		char	   *base;
		SyncPooled *obj;

		SpinLockAcquire(&list->mutex);
		n = list->head;
		if (n < 0)
		{
			SpinLockRelease(&list->mutex);
			return -1;
		}
		base = sync_slab_base[id][n >> SYNC_SLAB_SHIFT];
		if (base == NULL)
		{
			SpinLockRelease(&list->mutex);
			sync_pool_map_slab(id, n >> SYNC_SLAB_SHIFT);
			continue;
		}
		obj = (SyncPooled *) (base + (Size) (n & SYNC_SLAB_MASK) * pool_defs[id].objsize);
		list->head = obj->next;
		list->nfree--;
		SpinLockRelease(&list->mutex);
		Assert(obj->self == n);
		obj->next = -1;
		return n;
	}
}

/*
 * Add a slab to pool 'id' and put its objects on this process's free list.
 * True if the pool grew (here or meanwhile in another backend); false, with
 * last_failure set, when the cap, the pool's size or the operating system
 * refuses.
 */
static bool
sync_pool_grow(SyncPoolId id, uint32 seen)
{
	SyncPoolShared *ps = &Memory->pools[id];
	const SyncPoolDef *def = &pool_defs[id];
	Size		bytes = (Size) SYNC_SLAB_SIZE * def->objsize;
	SyncPoolList *list = sync_pool_list(ps, 0);
	uint32		slab;
	dsa_pointer dp;
	char	   *base;
	SyncPooled *last = NULL;

	LWLockAcquire(Memory->grow_lock, LW_EXCLUSIVE);
	slab = pg_atomic_read_u32(&ps->nslabs);
	if (slab != seen)
	{
		LWLockRelease(Memory->grow_lock);
		return true;			/* another backend grew it */
	}
	last_failure = SYNC_GROW_OK;
	if (slab >= SYNC_POOL_MAX_SLABS)
		last_failure = SYNC_GROW_POOL_FULL;
	else if (pg_atomic_read_u64(&Memory->allocated) + bytes > sync_memory_cap())
		last_failure = SYNC_GROW_CAP;
	else
	{
		dp = sync_area_allocate(bytes, 0);
		if (!DsaPointerIsValid(dp))
			last_failure = SYNC_GROW_CAP;
	}
	if (last_failure != SYNC_GROW_OK)
	{
		pg_atomic_fetch_add_u64(&Memory->refused, 1);
		LWLockRelease(Memory->grow_lock);
		return false;
	}

	base = dsa_get_address(sync_memory_area(), dp);
	memset(base, 0, bytes);
	for (int i = SYNC_SLAB_SIZE - 1; i >= 0; i--)
	{
		SyncPooled *obj = (SyncPooled *) (base + (Size) i * def->objsize);

		obj->self = (int32) ((slab << SYNC_SLAB_SHIFT) | i);
		obj->next = (i == SYNC_SLAB_SIZE - 1) ? -1 : obj->self + 1;
		if (def->init)
			def->init(obj);
		if (last == NULL)
			last = obj;
	}
	sync_slab_base[id][slab] = base;
	ps->slabs[slab] = dp;
	pg_write_barrier();
	pg_atomic_write_u32(&ps->nslabs, slab + 1);
	pg_atomic_fetch_add_u64(&Memory->allocated, bytes);
	LWLockRelease(Memory->grow_lock);

	/* the slab's objects, chained in order, go on our list at once */
	SpinLockAcquire(&list->mutex);
	last->next = list->head;
	list->head = (int32) (slab << SYNC_SLAB_SHIFT);
	list->nfree += SYNC_SLAB_SIZE;
	SpinLockRelease(&list->mutex);
	return true;
}

/*
 * Take an object from pool 'id': its number, or -1.  This process's list
 * first, then the others; a list that looks empty is skipped in the first
 * round only, so that an object given back meanwhile is still found.  With
 * 'grow', an empty pool grows by a slab, within the cap; -1 then means the
 * cap (or the system) refused, and sync_memory_report_full() reports why.
 *
 * Growing may raise an error (the operating system refusing a segment), so
 * a caller holding shared state half-changed takes without 'grow' and, when
 * the pool is empty, undoes its work and calls sync_pool_reserve().
 */
int32
sync_pool_alloc(SyncPoolId id, bool grow)
{
	SyncPoolShared *ps = &Memory->pools[id];
	SyncPoolList *own = sync_pool_list(ps, 0);

	/* the usual case: this process's list has one */
	if (likely(own->nfree > 0))
	{
		int32		n = sync_pool_pop(id, own);

		if (n >= 0)
			return n;
	}
	for (int attempt = 0; attempt < 4; attempt++)
	{
		uint32		seen = pg_atomic_read_u32(&ps->nslabs);

		for (int round = 0; round < 2; round++)
			for (int i = 0; i < SYNC_POOL_LISTS; i++)
			{
				SyncPoolList *list = sync_pool_list(ps, i);
				int32		n;

				if (round == 0 && list->nfree == 0)
					continue;
				n = sync_pool_pop(id, list);
				if (n >= 0)
					return n;
			}
		if (!grow)
		{
			last_failure = SYNC_GROW_OK;
			return -1;
		}
		if (!sync_pool_grow(id, seen))
			return -1;
	}
	last_failure = SYNC_GROW_BUSY;
	return -1;
}

/*
 * Make pool 'id' have at least n free objects, growing it as needed: false
 * when the cap refuses (sync_memory_report_full() reports why).  Others may take
 * the objects before the caller does; it tries again.
 */
bool
sync_pool_reserve(SyncPoolId id, int64 n)
{
	SyncPoolShared *ps = &Memory->pools[id];

	for (;;)
	{
		uint32		seen = pg_atomic_read_u32(&ps->nslabs);
		int64		nfree = 0;

		/* (unlocked reads: a count is read whole, and this is a guess) */
		for (int i = 0; i < SYNC_POOL_LISTS; i++)
			nfree += ((volatile SyncPoolList *) &ps->lists[i].list)->nfree;
		if (nfree >= n)
			return true;
		if (!sync_pool_grow(id, seen))
			return false;
	}
}

/* Give object 'obj' of pool 'id' back. */
void
sync_pool_free(SyncPoolId id, SyncPooled *obj)
{
	SyncPoolList *list = sync_pool_list(&Memory->pools[id], 0);

	SpinLockAcquire(&list->mutex);
	obj->next = list->head;
	list->head = obj->self;
	list->nfree++;
	SpinLockRelease(&list->mutex);
}

/*
 * Report that pool 'id' could not grow (sync_pool_alloc() returned -1
 * with 'grow'), as the last failure says: 53200 with the sizes, and a hint
 * naming the setting that would help.
 */
void
sync_memory_report_full(SyncPoolId id)
{
	uint64		allocated = pg_atomic_read_u64(&Memory->allocated);
	int64		made;
	int64		nfree;

	sync_pool_counts(id, &made, &nfree);
	if (last_failure == SYNC_GROW_POOL_FULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("syncwf cannot hold more than %d %s",
						SYNC_POOL_MAX_SLABS * SYNC_SLAB_SIZE, pool_defs[id].name),
				 errdetail("All %lld are in use.", (long long) made),
				 errhint("Release holds or cancel waits that are no longer needed.")));
	if (last_failure == SYNC_GROW_BUSY)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("syncwf %s are being taken faster than memory grows", pool_defs[id].name),
				 errhint("Try again.")));
	ereport(ERROR,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("syncwf shared memory is full"),
			 errdetail("It uses %llu kB of the %llu kB syncwf.max_memory allows; all %lld %s made so far are in use.",
					   (unsigned long long) (allocated / 1024),
					   (unsigned long long) (sync_memory_cap() / 1024),
					   (long long) (made - nfree), pool_defs[id].name),
			 errhint("Raise syncwf.max_memory in postgresql.conf and reload the configuration, or release holds and cancel waits that are no longer needed.")));
}

/* Objects pool 'id' has made, and how many of them are free. */
void
sync_pool_counts(SyncPoolId id, int64 *made, int64 *nfree)
{
	SyncPoolShared *ps = &Memory->pools[id];

	*made = (int64) pg_atomic_read_u32(&ps->nslabs) * SYNC_SLAB_SIZE;
	*nfree = 0;
	for (int i = 0; i < SYNC_POOL_LISTS; i++)
	{
		SyncPoolList *list = &ps->lists[i].list;

		SpinLockAcquire(&list->mutex);
		*nfree += list->nfree;
		SpinLockRelease(&list->mutex);
	}
}

/* The area's totals, for the view sync_memory. */
void
sync_memory_totals(uint64 *allocated, uint64 *cap, uint64 *refused)
{
	*allocated = pg_atomic_read_u64(&Memory->allocated);
	*cap = sync_memory_cap();
	*refused = pg_atomic_read_u64(&Memory->refused);
}

/* Size of an object of pool 'id'. */
Size
sync_pool_objsize(SyncPoolId id)
{
	return pool_defs[id].objsize;
}

/*
 * Allocate 'bytes' of the area for a bucket array, within the cap: invalid
 * if it would not fit (last_failure says why).
 */
static dsa_pointer
sync_memory_alloc(Size bytes)
{
	dsa_pointer dp = InvalidDsaPointer;

	LWLockAcquire(Memory->grow_lock, LW_EXCLUSIVE);
	if (pg_atomic_read_u64(&Memory->allocated) + bytes > sync_memory_cap())
		last_failure = SYNC_GROW_CAP;
	else
	{
		dp = sync_area_allocate(bytes, DSA_ALLOC_ZERO);
		if (DsaPointerIsValid(dp))
			pg_atomic_fetch_add_u64(&Memory->allocated, bytes);
		else
			last_failure = SYNC_GROW_CAP;
	}
	LWLockRelease(Memory->grow_lock);
	return dp;
}

static void
sync_memory_free(dsa_pointer dp, Size bytes)
{
	LWLockAcquire(Memory->grow_lock, LW_EXCLUSIVE);
	dsa_free(sync_memory_area(), dp);
	pg_atomic_fetch_sub_u64(&Memory->allocated, bytes);
	LWLockRelease(Memory->grow_lock);
}

/*
 * A hash's first bucket array, in the area's room in the main segment:
 * 'nbuckets' (a power of two) empty chains; the bucket of hash code h is
 * (h >> shift) & (nbuckets - 1).  At shmem startup, by the creator.
 */
void
sync_buckets_init(SyncBuckets *b, uint32 nbuckets, int shift)
{
	Assert((nbuckets & (nbuckets - 1)) == 0);
	b->array = dsa_allocate_extended(sync_area, nbuckets * sizeof(int32), 0);
	memset(dsa_get_address(sync_area, b->array), 0xff, nbuckets * sizeof(int32));
	pg_atomic_fetch_add_u64(&Memory->allocated, nbuckets * sizeof(int32));
	b->nbuckets = nbuckets;
	b->shift = shift;
	b->count = 0;
	b->generation = 1;
}

/*
 * Map the bucket array of b in this backend (sync_buckets_array()).  A cached
 * address is used only while b still has the array it was taken for, and
 * has had it since (the generation): that array was never freed, so its
 * segment is still mapped where it was.
 */
int32 *
sync_buckets_map(const SyncBuckets *b, SyncBucketsCache *c)
{
	c->addr = dsa_get_address(sync_memory_area(), b->array);
	c->array = b->array;
	c->generation = b->generation;
	return c->addr;
}

/*
 * Give b at least 'want' buckets (a power of two), or twice as many as it
 * has when 'want' is 0 and it holds more objects than buckets, moving each
 * chain over.  The objects are pool 'id''s; hash_offset is where an object
 * keeps its hash code; 'lock' protects b.  The caller holds no LWLock:
 * the new array is allocated first, unlocked, because allocating may raise
 * an error (the operating system refusing a segment), and the chains are
 * moved under 'lock' only if nobody did it meanwhile.  When the cap
 * refuses, the chains just stay longer.
 */
void
sync_buckets_grow(SyncBuckets *b, SyncBucketsCache *c, LWLock *lock,
				  SyncPoolId id, Size hash_offset, uint32 want)
{
	uint32		seen = ((volatile SyncBuckets *) b)->nbuckets;	/* a guess */
	uint32		nbuckets;
	dsa_pointer dp;
	dsa_pointer old_array;
	int32	   *old;
	int32	   *new;

	if (want == 0)
	{
		if (((volatile SyncBuckets *) b)->count <= seen)
			return;
		want = seen * 2;
	}
	want = Min(want, (uint32) 1 << 30);
	if (want <= seen)
		return;
	nbuckets = pg_nextpower2_32(want);
	dp = sync_memory_alloc(nbuckets * sizeof(int32));
	if (!DsaPointerIsValid(dp))
		return;
	new = dsa_get_address(sync_memory_area(), dp);
	memset(new, 0xff, nbuckets * sizeof(int32));

	LWLockAcquire(lock, LW_EXCLUSIVE);
	if (b->nbuckets >= nbuckets)
	{
		LWLockRelease(lock);	/* somebody grew it meanwhile */
		sync_memory_free(dp, nbuckets * sizeof(int32));
		return;
	}
	old = sync_buckets_array(b, c);
	for (uint32 i = 0; i < b->nbuckets; i++)
	{
		int32		n = old[i];

		while (n >= 0)
		{
			SyncPooled *obj = sync_pool_object(id, pool_defs[id].objsize, n);
			uint32		hash = *(uint32 *) ((char *) obj + hash_offset);
			uint32		k = (hash >> b->shift) & (nbuckets - 1);
			int32		next = obj->next;

			obj->next = new[k];
			new[k] = n;
			n = next;
		}
	}
	old_array = b->array;
	seen = b->nbuckets;
	b->array = dp;
	b->nbuckets = nbuckets;
	b->generation++;
	LWLockRelease(lock);
	sync_memory_free(old_array, seen * sizeof(int32));
}
