/*-------------------------------------------------------------------------
 *
 * rows.h
 *		A row of sync_state and of sync_controller, as syncwf reads and
 *		writes them: what the table I/O (state_rows.c) and the keyed holds
 *		in shared memory (holders.c, keyed_load.c) hand each other through
 *		the engine (keyed_ops.c).  Types only.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_ROWS_H
#define SYNC_ROWS_H

#include "datatype/timestamp.h"

#include "sem_limits.h"

/* A row of sync_state, as read or written. */
typedef struct SyncStateRow
{
	char	   *name;
	char	   *holder;
	char	   *controller;		/* NULL: none */
	bool		held;
	int32		priority;
	TimestampTz queued_at;
	int64		token;
	TimestampTz granted_at;
	int64		lease_us;		/* 0: none */
	TimestampTz lease_expires;	/* 0: none */
	Oid			owner;
	int64		request_id;
	int64		seq;
	int32		admit_limit;	/* -1: none */
	bool		claim;			/* granted only when its writer claims it */
	int32		slots;			/* slots it takes (0 read as 1) */
	bool		shared;			/* a shared hold of a mutex */
	char	   *fair_key;		/* NULL: none */
	SyncLimitValue limit;		/* read: what sync_limit says of the
								 * semaphore (limit -1: nothing) */
} SyncStateRow;

/* A row of sync_controller. */
typedef struct SyncControllerRow
{
	char	   *name;
	TimestampTz heartbeat;
} SyncControllerRow;

#endif							/* SYNC_ROWS_H */
