/*-------------------------------------------------------------------------
 *
 * deadlock.h
 *		Waits-for cycles through syncwf's waits and PostgreSQL's heavyweight
 *		locks (deadlock.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_DEADLOCK_H
#define SYNC_DEADLOCK_H

#include "lock_table.h"

/* A cycle found through the caller's request, ready to be reported. */
typedef struct SyncDeadlock SyncDeadlock;

extern void sync_deadlock_shmem_request(void);
extern void sync_deadlock_shmem_init(void);
extern SyncDeadlock *sync_deadlock_check(SyncEntry *first);
extern void sync_deadlock_report(SyncDeadlock *deadlock);

#endif							/* SYNC_DEADLOCK_H */
