/*-------------------------------------------------------------------------
 *
 * launch/launch_internal.h
 *		What only the files of launch/ share.  Includes launch.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_LAUNCH_LAUNCH_INTERNAL_H
#define SYNC_LAUNCH_LAUNCH_INTERNAL_H

#include "datatype/timestamp.h"
#include "nodes/pg_list.h"
#include "launch/launch.h"

/*
 * launch_policy.c: Launch-plan concurrency policies over executions.
 */

extern int	sync_launch_reconcile(TimestampTz now, TimestampTz *next);

/*
 * launch_heap.c: The hot path of the launch-plan tables: reading and
 * inserting executions, moving them to a phase, reading a plan version's
 * policy, and recording events.
 */

/* An execution's row, as sync_execution_read(), _change() or _move() found it. */
typedef struct SyncExecutionRow
{
	char	   *project;
	char	   *domain;
	char	   *name;
	char	   *version;
	char	   *phase;
	char	   *reason;
	Oid			owner;			/* InvalidOid if NULL */
} SyncExecutionRow;

/* A new execution, for sync_execution_insert(). */
typedef struct SyncExecutionNew
{
	const char *id;
	const char *project;
	const char *domain;
	const char *name;
	const char *version;
	const char *phase;
	bool		queued;			/* phase is QUEUED: sets queued_at */
	bool		terminal;		/* phase is final: sets finished_at */
	const char *reason;			/* or NULL */
	int32		priority;
	TimestampTz created;
} SyncExecutionNew;

/* The policy of a launch plan version. */
typedef struct SyncLaunchPolicy
{
	bool		has_policy;		/* max_concurrency is not NULL */
	int32		max_concurrency;
	char	   *behavior;
	char	   *scheduling;
	bool		has_max_pending;
} SyncLaunchPolicy;

/*
 * What sync_execution_change() is to write: the phase, whether it is final
 * (sets finished_at), and whether to replace the reason (NULL clears it).
 */
typedef struct SyncExecutionMove
{
	const char *phase;
	bool		terminal;
	bool		set_reason;
	const char *reason;
} SyncExecutionMove;

/*
 * The caller's decision on an execution just found: fill *move and return
 * true to move it, or return false to leave it.  It may raise an error.
 */
typedef bool (*SyncExecutionDecide) (const SyncExecutionRow *row, void *arg,
									 SyncExecutionMove *move);

typedef enum SyncExecutionChange
{
	SYNC_EXECUTION_MISSING,		/* no such execution */
	SYNC_EXECUTION_KEPT,		/* the decision was to leave it */
	SYNC_EXECUTION_MOVED
} SyncExecutionChange;

extern bool sync_execution_read(const char *id, SyncExecutionRow *row);
extern SyncExecutionChange sync_execution_change(const char *id,
												 SyncExecutionDecide decide,
												 void *arg,
												 SyncExecutionRow *row);
extern bool sync_execution_move(const char *id, const char *from,
								const char *phase, bool terminal,
								bool set_reason, const char *reason,
								SyncExecutionRow *row);
extern bool sync_execution_insert(const SyncExecutionNew *e);
extern bool sync_launch_policy_read(const char *project, const char *domain,
									const char *name, const char *version,
									SyncLaunchPolicy *policy);
extern void sync_launch_event(const char *event, const char *execution_id,
							  const char *project, const char *domain,
							  const char *name, const char *version,
							  const char *reason, const char *replaced);

/*
 * launch_spi.c: The rarer statements on the launch-plan tables: table I/O
 * with no knowledge of shared memory.  Rows come back typed.
 */

/*
 * A row of sync_launch_to_reconcile(): an execution whose slot may not be
 * what its phase says, or the slot of an execution that is terminal or
 * whose row was deleted (then project, domain, name and version are NULL
 * and the phase is ABORTED).
 */
typedef struct SyncLaunchRow
{
	char	   *execution_id;	/* the holder of the slot */
	char	   *project;		/* NULL: the execution's row is gone */
	char	   *domain;
	char	   *name;
	char	   *version;
	LaunchPhase phase;			/* PH_COUNT: not a phase syncwf knows */
	bool		has_policy;		/* the version has a max_concurrency */
	int32		max_concurrency;	/* 0 if !has_policy */
	bool		has_entry;		/* it has a row of sync_state (reconciliation
								 * sets it and 'held' from shared memory
								 * once it has locked the execution) */
	bool		held;			/* ... which holds a slot */
	bool		has_admit_limit;	/* that row has an admit_limit */
	int32		admit_limit;	/* the limit its request waits against */
	bool		timed_out;		/* pending longer than max_pending */
	char	   *max_pending_secs;	/* max_pending in seconds as printed
									 * (float8), for messages; NULL: none */
	char	   *lock;			/* the plan's semaphore */
	bool		tracked;		/* some version of the plan has a policy */
} SyncLaunchRow;

extern bool sync_launch_tracked(const char *project, const char *domain,
								const char *name);
extern char *sync_launch_oldest_active(const char *project, const char *domain,
									   const char *name, const char *lock);
extern List *sync_launch_to_reconcile(void);
extern bool sync_launch_lock_if_free(const char *id, const char *phase);
extern TimestampTz sync_launch_next_deadline(void);

#endif							/* SYNC_LAUNCH_LAUNCH_INTERNAL_H */
