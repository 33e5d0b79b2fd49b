/*-------------------------------------------------------------------------
 *
 * keyed_request.h
 *		A request on behalf of a holder key, in shared memory
 *		(keyed_request.c): what is asked, and what was found and done.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_KEYED_REQUEST_H
#define SYNC_KEYED_REQUEST_H

#include "lock_table.h"
#include "outbox.h"

/* How a keyed request treats a lock that is not free. */
typedef enum SyncKeyedMode
{
	SYNC_KEYED_QUEUE = 0,		/* queue until granted (sync_request) */
	SYNC_KEYED_TRY,				/* grant now or leave no trace */
	SYNC_KEYED_FORCE			/* grant now, whatever the limit (a slot
								 * taken over from a replaced holder, or one
								 * that only counts) */
} SyncKeyedMode;

/* A keyed request: what is asked, and what the steps of making it found. */
typedef struct SyncKeyedRequest
{
	char	  **names;
	int			nnames;
	const char *holder;
	SyncKeyedMode mode;
	int32		admit_limit;	/* granted only while fewer hold the lock;
								 * -1: the lock's limit alone */
	bool		has_priority;	/* false: 0 for a new request, unchanged for
								 * an existing one */
	int32		priority;
	const char *controller;		/* NULL: none */
	int32		slots;			/* slots of each semaphore named (>= 1) */
	bool		shared;			/* shared holds of the mutexes named */
	bool		claim;			/* claim-only (a row its writer inserted),
								 * QUEUE only: queued, never granted here;
								 * see sync_keyed_claim() */
	int64		lease_us;		/* 0: none */
	struct SyncStateRow *row_out;	/* non-NULL: a new request's rows are
									 * returned here (nnames of them), not
									 * written */
	bool		has_queued_at;	/* false: queued now */
	TimestampTz queued_at;
	const char *fair_key;		/* NULL: none (queue_order.c) */

	/* set by the engine (keyed_ops.c) before the request is made */
	int			controller_slot;	/* -1: none */
	bool		controller_beating; /* inactive, heartbeat written now */
	Oid			limit_relid;
	int32		fair_weight;	/* of fair_key on the one lock; 1 without */

	/* set by sync_holders_request() */
	SyncEntry **entries;		/* the request's entries, names[] order */
	uint64		request_id;
	uint64		seq;
	TimestampTz order_at;		/* its queue time */
	Oid			owner;			/* an existing request's owner */
} SyncKeyedRequest;

/* What sync_holders_request() did. */
typedef enum SyncKeyedOutcome
{
	SYNC_KEYED_NEW = 0,			/* a new request, granted or queued */
	SYNC_KEYED_EXISTING,		/* the holder's existing request, reported */
	SYNC_KEYED_REFUSED			/* TRY: not granted, nothing left behind */
} SyncKeyedOutcome;

typedef struct SyncKeyedResult
{
	bool		refused;		/* TRY: not granted, nothing left behind */
	bool		held;
	bool		active;			/* pending: counted in the queue */
	int64		token;
	int32		position;		/* pending and active: 1-based, else 0 */
	int32		priority;
	TimestampTz granted_at;		/* held: when */
	TimestampTz lease_expires;	/* held with a lease: expiry, else 0 */
	int			controller;		/* slot of the entry's controller, -1: none */
	bool		unwritten;		/* held, but sync_state does not say so yet */
	SyncOutboxItem grant;		/* held: the grant, to write it */
} SyncKeyedResult;

extern SyncKeyedOutcome sync_holders_request(SyncKeyedRequest *kr,
											 SyncKeyedResult *results);

#endif							/* SYNC_KEYED_REQUEST_H */
