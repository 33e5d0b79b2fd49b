/*-------------------------------------------------------------------------
 *
 * rate_limits.c
 *		The token bucket of a rate-limited semaphore (sync_limit's rate_limit
 *		and rate_period): rate_limit tokens, refilled evenly over
 *		rate_period; a grant of k slots spends k tokens.
 *
 * The bucket is kept as a generic cell rate algorithm (GCRA): one number,
 * the theoretical arrival time 'tat' (microseconds since 2000, as a
 * double), the time at which the bucket would be full again if nothing
 * more were spent.  With the emission interval T = rate_period / rate_limit
 * and the bucket's depth tau = rate_period (rate_limit tokens), at time t
 * the bucket holds (tau - max(tat - t, 0)) / T tokens; spending k sets
 * tat = max(tat, t) + k * T, which it may do when that stays within tau of
 * t.  No timer refills anything: the tokens of any moment follow from tat,
 * so a waiter held back for tokens knows the moment it can go
 * (sync_rate_due()), and the grant pass (wait_queue.c) runs again then.
 * tat = 0 is a full bucket: every bucket starts full, when its semaphore
 * enters the lock table, and so after a restart (shared memory is new) or
 * after its cached entry was evicted to make room (lock_table.c).
 *
 * Locking: the fields are the SyncLock's, under its partition lock; the
 * functions here only compute, and the caller holds the partition.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "engine/engine_internal.h"

/* A token counts as there when fewer than this many microseconds short. */
#define RATE_SLACK_US	0.5

static inline double
sync_rate_interval(const SyncLock *lock)
{
	return (double) lock->rate_period_us / (double) lock->rate_limit;
}

/* Tokens in the bucket at 'now', as a fraction. */
static double
sync_rate_level(const SyncLock *lock, TimestampTz now)
{
	double		debt = Max(lock->rate_tat - (double) now, 0.0);

	return ((double) lock->rate_period_us - debt) / sync_rate_interval(lock);
}

/*
 * Give 'lock' the rate of its sync_limit row: 'limit' tokens (0: no rate)
 * refilled over 'period_us'.  A new rate starts with a full bucket; a
 * changed one keeps the tokens the bucket has now, as far as the new depth
 * allows.
 */
void
sync_rate_configure(SyncLock *lock, int32 limit, int64 period_us, TimestampTz now)
{
	double		tokens;

	if (limit <= 0 || period_us <= 0)
	{
		lock->rate_limit = 0;
		lock->rate_period_us = 0;
		lock->rate_tat = 0;
		return;
	}
	if (lock->rate_limit == limit && lock->rate_period_us == period_us)
		return;
	tokens = lock->rate_limit > 0 ? sync_rate_level(lock, now) : (double) limit;
	lock->rate_limit = limit;
	lock->rate_period_us = period_us;
	tokens = Min(tokens, (double) limit);
	lock->rate_tat = (tokens >= (double) limit) ? 0 :
		(double) now + (double) period_us - tokens * sync_rate_interval(lock);
}

/* Does the bucket of 'lock' hold k tokens at 'now'?  (True without a rate.) */
bool
sync_rate_allows(const SyncLock *lock, int32 k, TimestampTz now)
{
	double		t = (double) now;

	if (lock->rate_limit <= 0)
		return true;
	return Max(lock->rate_tat, t) + k * sync_rate_interval(lock) - t <=
		(double) lock->rate_period_us + RATE_SLACK_US;
}

/* Spend k tokens at 'now' (a grant of k slots). */
void
sync_rate_spend(SyncLock *lock, int32 k, TimestampTz now)
{
	if (lock->rate_limit <= 0)
		return;
	lock->rate_tat = Max(lock->rate_tat, (double) now) + k * sync_rate_interval(lock);
}

/* The first moment the bucket of 'lock' holds k tokens (given no spending). */
TimestampTz
sync_rate_due(const SyncLock *lock, int32 k)
{
	double		due;

	Assert(lock->rate_limit > 0);
	due = lock->rate_tat + k * sync_rate_interval(lock) - (double) lock->rate_period_us;
	return (TimestampTz) ceil(due - RATE_SLACK_US);
}

/*
 * The whole tokens of 'lock' at 'now', and in *next_refill the moment the
 * next one comes (0 when the bucket is full).  Only for a rate-limited
 * lock.
 */
int32
sync_rate_tokens(const SyncLock *lock, TimestampTz now, TimestampTz *next_refill)
{
	double		level;
	int32		tokens;

	Assert(lock->rate_limit > 0);
	level = floor(sync_rate_level(lock, now) + RATE_SLACK_US / sync_rate_interval(lock));
	/* (below 0 after forced grants spent more than the bucket held) */
	tokens = (level <= 0) ? 0 :
		(level >= (double) lock->rate_limit) ? lock->rate_limit : (int32) level;
	*next_refill = (tokens >= lock->rate_limit) ? 0 :
		(TimestampTz) ceil(lock->rate_tat - (double) lock->rate_period_us +
						   (tokens + 1) * sync_rate_interval(lock) - RATE_SLACK_US);
	return tokens;
}
