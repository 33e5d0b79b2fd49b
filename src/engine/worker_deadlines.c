/*-------------------------------------------------------------------------
 *
 * worker_deadlines.c
 *		What wakes syncwf's two background workers: their latches, and the
 *		deadlines they must wake for -- the earliest lease expiry, the
 *		earliest launch-plan max_pending time-out, launch plans changed by
 *		hand, keyed requests a lowered limit left too big (the worker), and
 *		the earliest moment a waiter held back for tokens may go (the rate
 *		worker).
 *
 * Shared state (SyncWorkerWake): the deadlines and flags are atomics, so
 * no lock; a deadline only moves earlier (sync_atomic_lower) until the
 * worker resets it before the scan that finds it again.  Each worker's
 * procno is written by that worker only, at start and exit.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shmem.h"

#include "engine/engine_internal.h"

typedef struct SyncWorkerWake
{
	pg_atomic_uint64 next_lease_expiry; /* earliest lease deadline, or max */
	pg_atomic_uint64 next_rate_due; /* earliest moment a waiter held back
									 * for tokens may go, or max */
	pg_atomic_uint32 launch_dirty;	/* launch plans or phases changed by hand */
	pg_atomic_uint32 unfit;		/* a lowered limit left keyed requests too
								 * big to be granted */
	pg_atomic_uint64 launch_deadline;	/* earliest max_pending time-out */
	int			worker_procno;	/* -1 when no worker runs */
	int			rate_worker_procno; /* the rate worker's; -1: none */
} SyncWorkerWake;

static SyncWorkerWake *Wake = NULL;

Size
sync_worker_wake_shmem_size(void)
{
	return MAXALIGN(sizeof(SyncWorkerWake));
}

/* Create or attach to the block.  Caller holds AddinShmemInitLock. */
void
sync_worker_wake_shmem_init(void)
{
	bool		found;

	Wake = ShmemInitStruct("syncwf worker deadlines", sizeof(SyncWorkerWake),
						   &found);
	if (!found)
	{
		memset(Wake, 0, sizeof(SyncWorkerWake));
		pg_atomic_init_u64(&Wake->next_lease_expiry, PG_UINT64_MAX);
		pg_atomic_init_u64(&Wake->next_rate_due, PG_UINT64_MAX);
		pg_atomic_init_u32(&Wake->launch_dirty, 1);
		pg_atomic_init_u32(&Wake->unfit, 1);	/* look once after a start */
		pg_atomic_init_u64(&Wake->launch_deadline, PG_UINT64_MAX);
		Wake->worker_procno = -1;
		Wake->rate_worker_procno = -1;
	}
}

/*
 * The rate worker starts (attach) or exits: backends wake it from now on,
 * or no longer.
 */
void
sync_rate_worker_attach(bool attach)
{
	if (attach)
		Wake->rate_worker_procno = sync_my_procno();
	else if (Wake != NULL && Wake->rate_worker_procno == sync_my_procno())
		Wake->rate_worker_procno = -1;
}

/* The worker starts: backends wake it from now on. */
void
sync_worker_attach(void)
{
	Wake->worker_procno = sync_my_procno();
}

/* The worker exits. */
void
sync_worker_detach(void)
{
	if (Wake != NULL && Wake->worker_procno == sync_my_procno())
		Wake->worker_procno = -1;
}

/* Set the worker's latch, if a worker runs. */
void
sync_worker_wake(void)
{
	int			procno;

	if (Wake == NULL)
		return;
	procno = Wake->worker_procno;
	if (procno >= 0)
		SetLatch(&GetPGProcByNumber(procno)->procLatch);
}

/* A pending execution times out at 'at': make sure the worker wakes then. */
void
sync_launch_deadline(TimestampTz at)
{
	if (sync_atomic_lower(&Wake->launch_deadline, (uint64) at))
		sync_worker_wake();
}

/* A lease now runs until 'expires': make sure the worker wakes for it. */
void
sync_lease_scheduled(TimestampTz expires)
{
	if (sync_atomic_lower(&Wake->next_lease_expiry, (uint64) expires))
		sync_worker_wake();
}

/* The earliest lease expiry (PG_UINT64_MAX: none). */
uint64
sync_lease_due(void)
{
	return pg_atomic_read_u64(&Wake->next_lease_expiry);
}

/* Forget the earliest lease expiry, before a scan finds it again. */
void
sync_lease_reset(void)
{
	pg_atomic_write_u64(&Wake->next_lease_expiry, PG_UINT64_MAX);
}

/*
 * A waiter held back for tokens may go at 'due' (wait_queue.c): the rate
 * worker runs the rate pass then.  Wakes it if that is earlier than what
 * it sleeps for, unless the caller is the rate worker ('wake' false).
 */
void
sync_rate_scheduled(TimestampTz due, bool wake)
{
	int			procno;

	if (!sync_atomic_lower(&Wake->next_rate_due, (uint64) due) || !wake)
		return;
	procno = Wake->rate_worker_procno;
	if (procno >= 0)
		SetLatch(&GetPGProcByNumber(procno)->procLatch);
}

/* The earliest moment a waiter held back for tokens may go (max: none). */
uint64
sync_rate_deadline(void)
{
	return pg_atomic_read_u64(&Wake->next_rate_due);
}

/* Forget it, before the rate pass finds it again. */
void
sync_rate_reset(void)
{
	pg_atomic_write_u64(&Wake->next_rate_due, PG_UINT64_MAX);
}

/* The earliest launch-plan time-out (PG_UINT64_MAX: none). */
uint64
sync_launch_due(void)
{
	return pg_atomic_read_u64(&Wake->launch_deadline);
}

void
sync_launch_reset_deadline(void)
{
	pg_atomic_write_u64(&Wake->launch_deadline, PG_UINT64_MAX);
}

/* Launch plans or phases changed: the next round reconciles them. */
void
sync_launch_set_dirty(void)
{
	pg_atomic_write_u32(&Wake->launch_dirty, 1);
}

/*
 * A lowered limit left keyed requests that can never be granted: the
 * worker withdraws them at its next round (reconcile.c).  The caller wakes
 * it if that round is to be now.
 */
void
sync_unfit_set(void)
{
	pg_atomic_write_u32(&Wake->unfit, 1);
}

/* Were keyed requests left too big since the last call? */
bool
sync_unfit_take(void)
{
	return pg_atomic_exchange_u32(&Wake->unfit, 0) != 0;
}

/* Were launch plans changed since the last call? */
bool
sync_launch_take_dirty(void)
{
	return pg_atomic_exchange_u32(&Wake->launch_dirty, 0) != 0;
}
