/*-------------------------------------------------------------------------
 *
 * outbox.h
 *		What backends leave for the background worker (outbox.c): grants of
 *		pending keyed entries to write and announce, the deadlines it must
 *		wake for (leases, launch-plan time-outs), and its latch.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_OUTBOX_H
#define SYNC_OUTBOX_H

#include "lock_table.h"
#include "nodes/pg_list.h"

#define SYNC_OUTBOX_TRANCHE		"syncwf outbox"

/* Grants of pending keyed entries, for the worker to write and announce. */
#define SYNC_OUTBOX_SIZE		4096

typedef struct SyncOutboxItem
{
	SyncEntry  *entry;
	uint64		request_id;
	uint64		token;
} SyncOutboxItem;

extern Size sync_outbox_shmem_size(void);
extern void sync_outbox_shmem_request(void);
extern void sync_outbox_shmem_init(void);

/* the worker's latch */
extern void sync_worker_attach(void);
extern void sync_worker_detach(void);
extern void sync_worker_wake(void);

/* grants to write */
extern void sync_outbox_push(SyncEntry *entry);
extern void sync_outbox_requeue(const SyncOutboxItem *item);
extern List *sync_outbox_drain(bool *overflow);

/* deadlines: the earliest lease expiry, launch plans' time-outs and changes */
extern void sync_lease_scheduled(TimestampTz expires);
extern uint64 sync_lease_due(void);
extern void sync_lease_reset(void);
extern void sync_launch_deadline(TimestampTz at);
extern uint64 sync_launch_due(void);
extern void sync_launch_reset_deadline(void);
extern void sync_launch_set_dirty(void);
extern bool sync_launch_take_dirty(void);
extern void sync_rate_worker_attach(bool attach);
extern void sync_rate_scheduled(TimestampTz due, bool wake);
extern uint64 sync_rate_deadline(void);
extern void sync_rate_reset(void);
extern void sync_unfit_set(void);
extern bool sync_unfit_take(void);

#endif							/* SYNC_OUTBOX_H */
