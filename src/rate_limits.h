/*-------------------------------------------------------------------------
 *
 * rate_limits.h
 *		The token bucket of a rate-limited semaphore (rate_limits.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_RATE_LIMITS_H
#define SYNC_RATE_LIMITS_H

#include "lock_table.h"

extern void sync_rate_configure(SyncLock *lock, int32 limit, int64 period_us,
								TimestampTz now);
extern bool sync_rate_allows(const SyncLock *lock, int32 k, TimestampTz now);
extern void sync_rate_spend(SyncLock *lock, int32 k, TimestampTz now);
extern TimestampTz sync_rate_due(const SyncLock *lock, int32 k);
extern int32 sync_rate_tokens(const SyncLock *lock, TimestampTz now,
							  TimestampTz *next_refill);

#endif							/* SYNC_RATE_LIMITS_H */
