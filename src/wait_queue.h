/*-------------------------------------------------------------------------
 *
 * wait_queue.h
 *		The grant pass (wait_queue.c): the one place a grant of a syncwf
 *		lock happens.  Who may be granted is grant_rules.h's.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_WAIT_QUEUE_H
#define SYNC_WAIT_QUEUE_H

#include "lock_table.h"

extern void sync_queue_waiting(SyncEntry *first);
extern TimestampTz sync_rate_pass(TimestampTz now);
/* How a request comes to be granted (counted in sync_lock_stats). */
typedef enum SyncGrantHow
{
	SYNC_GRANT_AT_ONCE,			/* by its requester, as it arrives */
	SYNC_GRANT_FORCED,			/* ... whatever the limit and the queue */
	SYNC_GRANT_WAITED			/* after waiting in the queue */
} SyncGrantHow;

extern void sync_request_grant(SyncEntry *entry, SyncGrantHow how);
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
