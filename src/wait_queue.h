/*-------------------------------------------------------------------------
 *
 * wait_queue.h
 *		Queue order and the grant pass (wait_queue.c): the one place a grant
 *		of a syncwf lock happens.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_WAIT_QUEUE_H
#define SYNC_WAIT_QUEUE_H

#include "lock_table.h"

extern int	sync_lock_slots(SyncLock *lock);
extern int32 sync_entry_unfit_limit(const SyncEntry *e, bool *rate);
extern bool sync_entry_unfit(const SyncEntry *e);
extern bool sync_queue_wake_unfit(SyncLock *lock);
extern void sync_queue_rate_check(SyncEntry *first);
extern TimestampTz sync_rate_pass(TimestampTz now);
extern bool sync_request_grantable(SyncEntry *entry, bool respect_queue);
extern void sync_request_grant(SyncEntry *entry, bool forced);
extern void sync_grant_waiters(SyncLock *lock);
extern bool sync_claim_grantable(SyncEntry *e);
extern void sync_claim_grant(SyncEntry *e);
extern void sync_claim_undo(SyncEntry *e);
extern SyncEntry *sync_queue_handoff_candidate(SyncEntry *held);
extern void sync_handoff_grant(SyncEntry *releasing, SyncEntry *next,
							   uint64 token, TimestampTz since);
extern void sync_grant_waiters_of(const char *name);
extern void sync_grant_deferred(void);

/*
 * Called by sync_request_grant() and sync_handoff_grant() for every keyed
 * entry they grant, under the entry's partition lock; set by the module that owns keyed entries
 * (holders.c), at load.
 */
typedef void (*SyncGrantHook) (SyncEntry *entry);
extern void sync_queue_set_grant_hook(SyncGrantHook hook);

#endif							/* SYNC_WAIT_QUEUE_H */
