/*-------------------------------------------------------------------------
 *
 * outbox.c
 *		What backends leave for the background worker: the outbox of grants
 *		of pending keyed entries (made when someone else's release commits,
 *		where no table can be written) that the worker writes to sync_state
 *		and announces; the deadlines it must wake for (the earliest lease
 *		expiry, the earliest launch-plan max_pending time-out, launch plans
 *		changed by hand, the earliest moment a waiter held back for tokens
 *		may go, keyed requests a lowered limit left too big); and the latch
 *		that wakes it.
 *
 * Shared state (SyncOutbox): the ring of grants is protected by its one
 * LWLock (tranche "syncwf outbox"), held only to push or take items; the
 * deadlines are atomics; the worker's procno is written by the worker only.
 * When the ring is full a push sets 'overflow' instead, and the next round
 * looks at every unwritten grant.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shmem.h"

#include "engine/engine_internal.h"

typedef struct SyncOutbox
{
	LWLock	   *lock;			/* the ring below */
	uint32		head;			/* next item to read */
	uint32		tail;			/* next free slot */
	bool		overflow;		/* items were dropped: scan everything */
	SyncOutboxItem items[SYNC_OUTBOX_SIZE];
	pg_atomic_uint64 next_lease_expiry; /* earliest lease deadline, or max */
	pg_atomic_uint64 next_rate_due; /* earliest moment a waiter held back
									 * for tokens may go, or max */
	pg_atomic_uint32 launch_dirty;	/* launch plans or phases changed by hand */
	pg_atomic_uint32 unfit;		/* a lowered limit left keyed requests too
								 * big to be granted */
	pg_atomic_uint64 launch_deadline;	/* earliest max_pending time-out */
	pg_atomic_uint32 worker_pid;
	int			worker_procno;	/* -1 when no worker runs */
	int			rate_worker_procno; /* the rate worker's; -1: none */
} SyncOutbox;

static SyncOutbox *Outbox = NULL;

Size
sync_outbox_shmem_size(void)
{
	return MAXALIGN(sizeof(SyncOutbox));
}

void
sync_outbox_shmem_request(void)
{
	RequestNamedLWLockTranche(SYNC_OUTBOX_TRANCHE, 1);
}

/* Create or attach to the block.  Caller holds AddinShmemInitLock. */
void
sync_outbox_shmem_init(void)
{
	bool		found;

	Outbox = ShmemInitStruct("syncwf outbox", sizeof(SyncOutbox), &found);
	if (!found)
	{
		memset(Outbox, 0, sizeof(SyncOutbox));
		Outbox->lock = &GetNamedLWLockTranche(SYNC_OUTBOX_TRANCHE)->lock;
		pg_atomic_init_u64(&Outbox->next_lease_expiry, PG_UINT64_MAX);
		pg_atomic_init_u64(&Outbox->next_rate_due, PG_UINT64_MAX);
		pg_atomic_init_u32(&Outbox->launch_dirty, 1);
		pg_atomic_init_u32(&Outbox->unfit, 1);	/* look once after a start */
		pg_atomic_init_u64(&Outbox->launch_deadline, PG_UINT64_MAX);
		pg_atomic_init_u32(&Outbox->worker_pid, 0);
		Outbox->worker_procno = -1;
		Outbox->rate_worker_procno = -1;
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
		Outbox->rate_worker_procno = sync_my_procno();
	else if (Outbox != NULL && Outbox->rate_worker_procno == sync_my_procno())
		Outbox->rate_worker_procno = -1;
}

/* The worker starts: backends wake it from now on. */
void
sync_worker_attach(void)
{
	Outbox->worker_procno = sync_my_procno();
	pg_atomic_write_u32(&Outbox->worker_pid, (uint32) MyProcPid);
}

/* The worker exits. */
void
sync_worker_detach(void)
{
	if (Outbox != NULL && Outbox->worker_procno == sync_my_procno())
	{
		Outbox->worker_procno = -1;
		pg_atomic_write_u32(&Outbox->worker_pid, 0);
	}
}

void
sync_worker_wake(void)
{
	int			procno;

	if (Outbox == NULL)
		return;
	procno = Outbox->worker_procno;
	if (procno >= 0)
		SetLatch(&GetPGProcByNumber(procno)->procLatch);
}

/*
 * Append a grant to the ring; when the ring is full, set 'overflow'
 * instead, and the next round looks at every unwritten grant.
 */
static void
sync_outbox_append(const SyncOutboxItem *item)
{
	LWLockAcquire(Outbox->lock, LW_EXCLUSIVE);
	if (Outbox->tail - Outbox->head < SYNC_OUTBOX_SIZE)
		Outbox->items[Outbox->tail++ % SYNC_OUTBOX_SIZE] = *item;
	else
		Outbox->overflow = true;
	LWLockRelease(Outbox->lock);
}

/* Queue a grant for the worker to write and announce.  Never fails. */
void
sync_outbox_push(SyncEntry *entry)
{
	SyncOutboxItem item;

	item.entry = entry;
	item.request_id = entry->request_id;
	item.token = entry->token;
	sync_outbox_append(&item);
	sync_worker_wake();
}

/*
 * Put back a grant whose writing was skipped (its row was locked) or rolled
 * back, for a later round, without waking the worker: the round that
 * skipped it looks again soon.  Only if the ring is full does the next
 * round look at every unwritten grant, a scan of every held lock that
 * holds every partition lock for its length, which a requeued item spares
 * the backends.  Never fails.
 */
void
sync_outbox_requeue(const SyncOutboxItem *item)
{
	sync_outbox_append(item);
}

/* Take everything out of the outbox; *overflow: items were dropped. */
List *
sync_outbox_drain(bool *overflow)
{
	SyncOutboxItem items[64];
	List	   *result = NIL;

	*overflow = false;
	for (;;)
	{
		int			n = 0;

		LWLockAcquire(Outbox->lock, LW_EXCLUSIVE);
		if (Outbox->overflow)
		{
			*overflow = true;
			Outbox->overflow = false;
		}
		while (n < lengthof(items) && Outbox->head != Outbox->tail)
		{
			items[n++] = Outbox->items[Outbox->head % SYNC_OUTBOX_SIZE];
			Outbox->head++;
		}
		LWLockRelease(Outbox->lock);
		if (n == 0)
			break;
		for (int i = 0; i < n; i++)
		{
			SyncOutboxItem *copy = palloc(sizeof(SyncOutboxItem));

			*copy = items[i];
			result = lappend(result, copy);
		}
	}
	return result;
}

/* A pending execution times out at 'at': make sure the worker wakes then. */
void
sync_launch_deadline(TimestampTz at)
{
	if (sync_atomic_lower(&Outbox->launch_deadline, (uint64) at))
		sync_worker_wake();
}

/* A lease now runs until 'expires': make sure the worker wakes for it. */
void
sync_lease_scheduled(TimestampTz expires)
{
	if (sync_atomic_lower(&Outbox->next_lease_expiry, (uint64) expires))
		sync_worker_wake();
}

/* The earliest lease expiry (PG_UINT64_MAX: none). */
uint64
sync_lease_due(void)
{
	return pg_atomic_read_u64(&Outbox->next_lease_expiry);
}

/* Forget the earliest lease expiry, before a scan finds it again. */
void
sync_lease_reset(void)
{
	pg_atomic_write_u64(&Outbox->next_lease_expiry, PG_UINT64_MAX);
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

	if (!sync_atomic_lower(&Outbox->next_rate_due, (uint64) due) || !wake)
		return;
	procno = Outbox->rate_worker_procno;
	if (procno >= 0)
		SetLatch(&GetPGProcByNumber(procno)->procLatch);
}

/* The earliest moment a waiter held back for tokens may go (max: none). */
uint64
sync_rate_deadline(void)
{
	return pg_atomic_read_u64(&Outbox->next_rate_due);
}

/* Forget it, before the rate pass finds it again. */
void
sync_rate_reset(void)
{
	pg_atomic_write_u64(&Outbox->next_rate_due, PG_UINT64_MAX);
}

/* The earliest launch-plan time-out (PG_UINT64_MAX: none). */
uint64
sync_launch_due(void)
{
	return pg_atomic_read_u64(&Outbox->launch_deadline);
}

void
sync_launch_reset_deadline(void)
{
	pg_atomic_write_u64(&Outbox->launch_deadline, PG_UINT64_MAX);
}

/* Launch plans or phases changed: the next round reconciles them. */
void
sync_launch_set_dirty(void)
{
	pg_atomic_write_u32(&Outbox->launch_dirty, 1);
}

/*
 * A lowered limit left keyed requests that can never be granted: the
 * worker withdraws them at its next round (reconcile.c).  The caller wakes
 * it if that round is to be now.
 */
void
sync_unfit_set(void)
{
	pg_atomic_write_u32(&Outbox->unfit, 1);
}

/* Were keyed requests left too big since the last call? */
bool
sync_unfit_take(void)
{
	return pg_atomic_exchange_u32(&Outbox->unfit, 0) != 0;
}

/* Were launch plans changed since the last call? */
bool
sync_launch_take_dirty(void)
{
	return pg_atomic_exchange_u32(&Outbox->launch_dirty, 0) != 0;
}
