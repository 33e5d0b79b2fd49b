/*-------------------------------------------------------------------------
 *
 * status.h
 *		What the monitoring views show (status.c): copies of the lock table
 *		and its entries in this database.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_STATUS_H
#define SYNC_STATUS_H

#include "datatype/timestamp.h"

typedef struct LockRow
{
	char	   *name;
	uint8		kind;
	int32		limit;
	int32		nheld;
	int32		slots_held;		/* slots the holders take */
	int32		rate_tokens;	/* rate-limited: tokens now; -1: no rate */
	TimestampTz rate_next_refill;	/* ... when the next comes; 0: full */
	int32		nwaiting;
	char	   *limit_row;		/* sync_limit row that applies, or NULL */
	int32		max_waiters;	/* -1: no cap */
} LockRow;

typedef struct EntryRow
{
	const char *name;
	uint8		state;
	uint8		scope;
	int32		pid;
	int32		priority;
	int32		position;
	int32		nlocks;
	int32		slots;			/* of a semaphore; 1 for a mutex */
	int32		passes;			/* pending: times best-effort queueing passed it */
	int32		fair_weight;	/* weight of its fair key on the lock */
	char	   *fair_key;		/* NULL: none */
	bool		shared;			/* a shared hold of a mutex */
	uint8		kind;			/* of its lock: SyncLockKind */
	uint64		token;
	TimestampTz since;
	char	   *holder;			/* keyed */
	char	   *controller;		/* keyed, with a controller */
	TimestampTz lease_expires;	/* keyed, with a lease */
} EntryRow;

extern int	sync_status_locks(LockRow **rows);
extern int	sync_status_entries(EntryRow **rows);

#endif							/* SYNC_STATUS_H */
