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

#include "access/htup.h"
#include "access/tupdesc.h"
#include "utils/hsearch.h"

#include "lock_table.h"

/* No sync_limit row applies (SyncLimitValue.limit). */
#define SYNC_LIMIT_UNDEFINED	(-1)

/*
 * What sync_limit says of one semaphore: the row that applies to
 * "sem/<namespace>/<key>" is its own row "<namespace>/<key>" if there is
 * one, else the longest pattern row "<prefix>/\*" whose prefix the key
 * starts with (a default limit for a namespace or part of one).
 */
typedef struct SyncLimitValue
{
	int32		limit;			/* sizelimit; SYNC_LIMIT_UNDEFINED: no row */
	int32		max_waiters;	/* queue cap; -1: none */
	int16		pattern_len;	/* 0: the semaphore's own row; else the row
								 * is the key's first pattern_len bytes
								 * (ending in '/') followed by '*' */
	int32		rate_limit;		/* tokens of its rate; 0: no rate */
	int64		rate_period_us; /* ... refilled over this long */
	bool		best_effort;	/* queueing = 'best_effort' */
} SyncLimitValue;

extern char *sync_limit_cap_rate_columns(Oid relid, const char *alias);
extern char *sync_limit_queueing_column(Oid relid, const char *alias);
extern void sync_limit_lookup(const char *lock_name, Oid relid, SyncLimitValue *value);
extern void sync_limit_lookup_optional(const char *lock_name, Oid relid,
									   SyncLimitValue *value);
extern HTAB *sync_limit_patterns(Oid relid);
extern void sync_limit_match(HTAB *rows, const char *key, SyncLimitValue *value);
extern bool sync_limit_plan_default(const char *lock_name, SyncLimitValue *value);
extern void sync_limit_set(SyncLock *lock, const SyncLimitValue *value);
extern void sync_limit_rate_of(HeapTuple tup, TupleDesc desc, int col,
							   SyncLimitValue *value);
extern char *sync_limit_row_name(const SyncLock *lock);
extern void sync_limits_changed(Oid relid, const char *name);
extern bool sync_limits_pending(void);
extern void sync_limits_precommit(void);
extern void sync_limits_at_commit(void);
extern void sync_limits_forget(void);

#endif							/* SYNC_SEM_LIMITS_H */
