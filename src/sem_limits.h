/*-------------------------------------------------------------------------
 *
 * sem_limits.h
 *		Semaphore limits (sem_limits.c): reading them from sync_limit, and
 *		carrying a transaction's changes into the lock table when it
 *		commits.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_SEM_LIMITS_H
#define SYNC_SEM_LIMITS_H

extern int32 sync_limit_lookup(const char *lock_name, Oid relid);
extern int32 sync_limit_lookup_optional(const char *lock_name, Oid relid);
extern void sync_limits_changed(Oid relid, const char *name);
extern bool sync_limits_pending(void);
extern void sync_limits_precommit(void);
extern void sync_limits_at_commit(void);
extern void sync_limits_forget(void);

#endif							/* SYNC_SEM_LIMITS_H */
