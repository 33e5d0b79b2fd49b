/*-------------------------------------------------------------------------
 *
 * outbox.c
 *		The outbox: grants of pending keyed entries, made where no table can
 *		be written (when someone else's release commits, in a commit
 *		callback, at a session's exit), that the background worker writes
 *		to sync_state and announces.
 *
 * Shared state (SyncOutbox): a ring protected by its one LWLock (tranche
 * "syncwf outbox"), held only to push or take items.  When the ring is
 * full a push sets 'overflow' instead, and the next round looks at every
 * unwritten grant.  Waking the worker is worker_deadlines.c's.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/shmem.h"

#include "engine/engine_internal.h"

/* A grant in the ring: its entry by number, the same in every backend. */
typedef struct SyncOutboxSlot
{
	int32		entry;
	uint64		request_id;
	uint64		token;
} SyncOutboxSlot;

typedef struct SyncOutbox
{
	LWLock	   *lock;			/* the ring below */
	uint32		head;			/* next item to read */
	uint32		tail;			/* next free slot */
	bool		overflow;		/* items were dropped: scan everything */
	SyncOutboxSlot items[SYNC_OUTBOX_SIZE];
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

/* Create or attach to the ring.  Caller holds AddinShmemInitLock. */
void
sync_outbox_shmem_init(void)
{
	bool		found;

	Outbox = ShmemInitStruct("syncwf outbox", sizeof(SyncOutbox), &found);
	if (!found)
	{
		memset(Outbox, 0, sizeof(SyncOutbox));
		Outbox->lock = &GetNamedLWLockTranche(SYNC_OUTBOX_TRANCHE)->lock;
	}
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
	{
		SyncOutboxSlot *slot = &Outbox->items[Outbox->tail++ % SYNC_OUTBOX_SIZE];

		slot->entry = sync_entry_index(item->entry);
		slot->request_id = item->request_id;
		slot->token = item->token;
	}
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
	SyncOutboxSlot items[64];
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

			copy->entry = sync_entry_at(items[i].entry);
			copy->request_id = items[i].request_id;
			copy->token = items[i].token;
			result = lappend(result, copy);
		}
	}
	return result;
}
