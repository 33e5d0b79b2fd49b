/*-------------------------------------------------------------------------
 *
 * holder_wakeups.c
 *		Waking the backends that wait for a holder's keyed entries
 *		(sync_wait, keyed_wait.c) when one of them is granted or freed
 *		(released, withdrawn, lost): holder_table.c reports both from its grant
 *		and free hooks.
 *
 * Holder keys are hashed, with their database, onto SYNC_WAKEUP_BUCKETS
 * buckets.  A waiting backend writes its bucket into its own slot (one per
 * PGPROC of a backend, indexed by its number) and counts itself in the
 * bucket; a change to a holder's entries sets the latch of every backend
 * whose slot names that holder's bucket.  One bucket serves every lock of
 * a holder, so a wait for several locks of one holder is one wait.  The
 * waiter checks its entries after joining and before each sleep, and the
 * latch protocol does the rest: a change after its check sets its latch.
 * Holders that share a bucket wake each other's waiters, which look at
 * their entries and sleep again; with 1024 buckets that is rare.  A change
 * to a holder nobody waits for costs a hash and one atomic read; otherwise
 * the slots are scanned (a few microseconds for a thousand backends).
 *
 * PostgreSQL's ConditionVariable is not used: a condition variable sleep
 * cannot also watch the client's socket (client_wait.c), and re-arming one
 * around another kind of sleep passes each wake-up on to another waiter on
 * PostgreSQL 15, where two waiters would wake each other forever.
 *
 * Shared state: atomics only, no lock.  A waiter writes its slot, then
 * increments the bucket's count (a full barrier), then checks its entries
 * under their locks; a change is made under those locks, then the count
 * and the slots are read.  Either the waiter's check sees the change, or
 * the change's reads see the waiter.  A backend leaves its bucket when its
 * wait ends, on error, and at exit (before_shmem_exit).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shmem.h"

#include "core/core.h"

/* A power of two. */
#define SYNC_WAKEUP_BUCKETS	1024

typedef struct SyncWakeups
{
	pg_atomic_uint32 waiting[SYNC_WAKEUP_BUCKETS];	/* backends per bucket */
	pg_atomic_uint32 bucket_of[FLEXIBLE_ARRAY_MEMBER];	/* per backend
														 * (PGPROC number <
														 * MaxBackends): its
														 * bucket + 1, or 0 */
} SyncWakeups;

static SyncWakeups *Wakeups = NULL;

/* This backend's bucket while it waits, else -1. */
static int	my_bucket = -1;
static bool exit_hook_set = false;

Size
sync_wakeups_shmem_size(void)
{
	return MAXALIGN(add_size(offsetof(SyncWakeups, bucket_of),
							 mul_size(MaxBackends, sizeof(pg_atomic_uint32))));
}

/* Create or attach to the block.  Caller holds AddinShmemInitLock. */
void
sync_wakeups_shmem_init(void)
{
	bool		found;

	Wakeups = ShmemInitStruct("syncwf wakeups", sync_wakeups_shmem_size(), &found);
	if (!found)
	{
		for (int i = 0; i < SYNC_WAKEUP_BUCKETS; i++)
			pg_atomic_init_u32(&Wakeups->waiting[i], 0);
		for (int i = 0; i < MaxBackends; i++)
			pg_atomic_init_u32(&Wakeups->bucket_of[i], 0);
	}
}

static int
sync_holder_bucket(Oid dbid, const char *holder)
{
	uint32		h = hash_bytes((const unsigned char *) holder, strlen(holder));

	h = hash_combine(h, hash_bytes_uint32((uint32) dbid));
	return (int) (h & (SYNC_WAKEUP_BUCKETS - 1));
}

static void
sync_wakeup_exit(int code, Datum arg)
{
	sync_wakeup_leave();
}

/*
 * This backend is about to wait for entries of 'holder': from now on, a
 * change to them sets its latch.  Call before the first check of the
 * entries; sync_wakeup_leave() when the wait ends, also on error.
 */
void
sync_wakeup_join(Oid dbid, const char *holder)
{
	int			procno = sync_my_procno();

	Assert(procno >= 0 && procno < MaxBackends);
	Assert(my_bucket < 0);
	if (!exit_hook_set)
	{
		before_shmem_exit(sync_wakeup_exit, (Datum) 0);
		exit_hook_set = true;
	}
	my_bucket = sync_holder_bucket(dbid, holder);
	pg_atomic_write_u32(&Wakeups->bucket_of[procno], (uint32) my_bucket + 1);
	/* a full barrier: the slot is seen by whoever sees the count */
	(void) pg_atomic_fetch_add_u32(&Wakeups->waiting[my_bucket], 1);
}

/* The wait has ended (or never began). */
void
sync_wakeup_leave(void)
{
	if (my_bucket < 0)
		return;
	pg_atomic_write_u32(&Wakeups->bucket_of[sync_my_procno()], 0);
	(void) pg_atomic_fetch_sub_u32(&Wakeups->waiting[my_bucket], 1);
	my_bucket = -1;
}

/*
 * An entry of 'holder' was granted or freed: set the latch of every backend
 * that waits for one of its entries.  Called with the locks held under
 * which the change was made (it reads atomics and sets latches).
 */
void
sync_holder_changed(Oid dbid, const char *holder)
{
	int			bucket = sync_holder_bucket(dbid, holder);

	pg_memory_barrier();
	if (pg_atomic_read_u32(&Wakeups->waiting[bucket]) == 0)
		return;
	pg_read_barrier();
	for (int procno = 0; procno < MaxBackends; procno++)
		if (pg_atomic_read_u32(&Wakeups->bucket_of[procno]) == (uint32) bucket + 1)
			SetLatch(&GetPGProcByNumber(procno)->procLatch);
}
