/*-------------------------------------------------------------------------
 *
 * grant_rules.h
 *		Who may be granted now (grant_rules.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNCWF_GRANT_RULES_H
#define SYNCWF_GRANT_RULES_H

#include "utils/timestamp.h"

#include "lock_table.h"

/* The clock, read once per caller and only when a rate needs it. */
static inline TimestampTz
sync_lazy_now(TimestampTz *now)
{
	if (*now == 0)
		*now = GetCurrentTimestamp();
	return *now;
}

/* Most waiters one grant may pass on a best-effort lock. */
#define SYNC_PASS_AHEAD_MAX	64

/*
 * What a walk down a queue has passed over so far under best-effort
 * queueing: how many waiters, and how many more grants to requests behind
 * them the one closest to its bound allows.
 */
typedef struct SyncBestEffort
{
	int			budget;
	int			npassed;
} SyncBestEffort;

#define SYNC_BEST_EFFORT_INIT {INT_MAX, 0}

/* What the grant pass does with the waiter it looks at. */
typedef enum SyncPassStep
{
	SYNC_PASS_GRANT,			/* grant it (a multi-lock one: defer it) */
	SYNC_PASS_NEXT,				/* pass over it, look at the next */
	SYNC_PASS_STOP,				/* the pass ends here */
	SYNC_PASS_TOKENS			/* ... because it waits for tokens */
} SyncPassStep;

extern int	sync_lock_slots(SyncLock *lock);
extern int32 sync_entry_unfit_limit(const SyncEntry *e, bool *rate);
extern bool sync_entry_unfit(const SyncEntry *e);
extern bool sync_entry_fits(const SyncEntry *e, TimestampTz *now);
extern SyncEntry *sync_queue_front(SyncLock *lock);
extern bool sync_queue_wake_unfit(SyncLock *lock);
extern bool sync_request_grantable(SyncEntry *entry, bool respect_queue);
extern SyncPassStep sync_pass_step(SyncEntry *w, int nheld, int slots_held,
								   bool *passing, SyncBestEffort *be,
								   TimestampTz *now);
extern bool sync_best_effort_pass(const SyncEntry *w, SyncBestEffort *be);
extern void sync_count_passes(SyncLock *lock, SyncEntry *e);
extern bool sync_request_known_blocked(const SyncEntry *e);
extern bool sync_blocked_note(const SyncEntry *entry);
extern void sync_blocked_clear(void);
#ifdef USE_ASSERT_CHECKING
extern bool sync_entry_grantable_check(SyncEntry *e);
#endif

#endif							/* SYNCWF_GRANT_RULES_H */
