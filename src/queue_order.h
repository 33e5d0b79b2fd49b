/*-------------------------------------------------------------------------
 *
 * queue_order.h
 *		A lock's lists of entries and their order (queue_order.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_QUEUE_ORDER_H
#define SYNC_QUEUE_ORDER_H

#include "lock_table.h"

extern bool sync_entry_precedes(const SyncEntry *a, const SyncEntry *b);
extern void sync_entry_set_fair(SyncEntry *e, const char *fair_key, int32 weight);
extern void sync_queue_insert(SyncLock *lock, SyncEntry *entry);
extern void sync_fair_retag(SyncLock *lock);
extern void sync_dormant_insert(SyncLock *lock, SyncEntry *entry);
extern int	sync_queue_position(SyncEntry *entry);
extern SyncEntry *sync_queue_over_cap(SyncEntry *first);
extern void sync_queue_unlink(SyncEntry *first);
extern void sync_holder_link(SyncLock *lock, SyncEntry *e);
extern void sync_holder_unlink(SyncEntry *e);
extern void sync_waiter_unlink(SyncEntry *e, SyncWaitEnd how);

#endif							/* SYNC_QUEUE_ORDER_H */
