/*-------------------------------------------------------------------------
 *
 * launch/launch.h
 *		The public header of launch plans (launch/README.md): the policies,
 *		registering a plan, and the round of maintenance -- what entry/ may
 *		use.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_LAUNCH_LAUNCH_H
#define SYNC_LAUNCH_LAUNCH_H

#include "datatype/timestamp.h"
#include "nodes/pg_list.h"
#include "keyed/keyed.h"

/*
 * launch_policy.c: Launch-plan concurrency policies over executions.
 */

typedef enum LaunchPhase
{
	PH_PENDING,
	PH_QUEUED,
	PH_RUNNING,
	PH_SUCCEEDING,
	PH_FAILING,
	PH_ABORTING,
	PH_SUCCEEDED,
	PH_FAILED,
	PH_ABORTED,
	PH_TIMED_OUT,
	PH_COUNT
} LaunchPhase;

extern const char *const sync_phase_names[PH_COUNT];

/* What sync_launch_create() did. */
typedef struct CreateResult
{
	LaunchPhase phase;
	bool		skipped;
	char	   *reason;
	char	   *replaced;
} CreateResult;

extern LaunchPhase sync_phase_of(const char *name, bool must);
extern bool sync_phase_terminal(LaunchPhase phase);
extern CreateResult sync_launch_create(const char *project, const char *domain,
									   const char *name, const char *version,
									   const char *id, int32 priority,
									   bool raise);
extern LaunchPhase sync_launch_update(const char *id, LaunchPhase want);
extern void sync_launch_grant_written(const char *name, const char *holder);

/*
 * launch_spi.c: The rarer statements on the launch-plan tables: table I/O
 * with no knowledge of shared memory.
 */

extern void sync_launch_register_row(Datum *values, const char *nulls);

/*
 * reconcile.c: One round of maintenance.
 */

extern int	sync_reconcile_round(TimestampTz *next_wake);

#endif							/* SYNC_LAUNCH_LAUNCH_H */
