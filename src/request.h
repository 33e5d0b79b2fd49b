/*-------------------------------------------------------------------------
 *
 * request.h
 *		A request being bound to locks (request.c): the building blocks a
 *		session's acquire (holds.c) and a holder key's request (holders.c)
 *		share, and withdrawing a request from its queues.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_REQUEST_H
#define SYNC_REQUEST_H

#include "lock_table.h"
#include "sem_limits.h"

/*
 * A request being made: the locks it names, and the shared entries
 * reserved for those the requester does not hold yet (and, for a session,
 * whether local placeholders were added: holds.c).
 */
typedef struct AcquireRequest
{
	char	  **names;
	int			nnames;
	int			nneeded;
	bool	   *needed;			/* not held by this session yet */
	SyncLockKind *kinds;
	SyncLimitValue *limits;		/* semaphores: what sync_limit says */
	bool		have_limits;	/* limits[] were read (at generation) */
	Oid			limit_relid;	/* sync_limit table of this database */
	SyncLockTag *tags;
	uint32	   *hashes;
	SyncEntry **entries;		/* reserved shared entries, or NULL */
	int32		slots;			/* slots of each semaphore (1 for mutexes) */
	bool		shared;			/* shared holds of the mutexes */
	const char *fair_key;		/* NULL: none (queue_order.c); a request
								 * with one names one lock */
	int32		fair_weight;	/* weight of fair_key on that lock; 1 */
	int32		failed_limit;	/* SYNC_BIND_TOO_MANY_SLOTS: the limit, */
	bool		failed_rate;	/* ... of the semaphore's rate if set */
	bool		placeholders;	/* local placeholders were added */
	uint32		partmask;
	uint64		generation;		/* limit generation the limits were read at */
} AcquireRequest;

extern void sync_request_init(AcquireRequest *req, char **names, int nnames,
							  int32 slots, bool shared);
extern void sync_discard_request(AcquireRequest *req);
extern void sync_withdraw_request(SyncEntry *first, SyncWaitEnd how);
extern void sync_reserve_entries(AcquireRequest *req);
extern void sync_read_limits(AcquireRequest *req);
extern bool sync_limits_missing(AcquireRequest *req);
/* What sync_bind_request() returns (holders.c adds the holder table's). */
typedef enum SyncBindResult
{
	SYNC_BIND_OK = 0,
	SYNC_BIND_TABLE_FULL,		/* no lock slot, none evictable now */
	SYNC_BIND_NO_LIMIT,			/* a semaphore lost its sync_limit row */
	SYNC_BIND_TOO_MANY_SLOTS,	/* more slots than a semaphore's limit */
	SYNC_BIND_HOLDERS_FULL		/* keyed: no holder slot */
} SyncBindResult;

extern int	sync_bind_request(AcquireRequest *req, int32 priority,
							  SyncScope scope, SyncEntry **first, int *failed);
extern void sync_unbind_request(AcquireRequest *req);
extern void sync_report_bind_error(AcquireRequest *req, int error, int failed);
/* A queue at its cap that refused a request (sync_refuse_over_cap()). */
typedef struct SyncQueueFull
{
	char	   *lock_name;
	int32		nwaiting;		/* its queue, without the request */
	int32		max_waiters;
	char	   *row;			/* the sync_limit row that sets the cap */
} SyncQueueFull;

extern bool sync_refuse_over_cap(AcquireRequest *req, SyncEntry *first,
								 SyncQueueFull *full);
extern void sync_report_queue_full(const SyncQueueFull *full);
#endif							/* SYNC_REQUEST_H */
