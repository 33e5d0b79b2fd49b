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
	int32	   *limits;			/* semaphores: limit read from sync_limit */
	bool		have_limits;	/* limits[] were read (at generation) */
	Oid			limit_relid;	/* sync_limit table of this database */
	SyncLockTag *tags;
	uint32	   *hashes;
	SyncEntry **entries;		/* reserved shared entries, or NULL */
	bool		placeholders;	/* local placeholders were added */
	uint32		partmask;
	uint64		generation;		/* limit generation the limits were read at */
} AcquireRequest;

extern void sync_request_init(AcquireRequest *req, char **names, int nnames);
extern void sync_discard_request(AcquireRequest *req);
extern void sync_withdraw_request(SyncEntry *first);
extern void sync_reserve_entries(AcquireRequest *req);
extern void sync_read_limits(AcquireRequest *req);
extern bool sync_limits_missing(AcquireRequest *req);
/* What sync_bind_request() returns (holders.c adds the holder table's). */
typedef enum SyncBindResult
{
	SYNC_BIND_OK = 0,
	SYNC_BIND_TABLE_FULL,		/* no lock slot, none evictable now */
	SYNC_BIND_NO_LIMIT,			/* a semaphore lost its sync_limit row */
	SYNC_BIND_HOLDERS_FULL		/* keyed: no holder slot */
} SyncBindResult;

extern int	sync_bind_request(AcquireRequest *req, int32 priority,
							  SyncScope scope, SyncEntry **first, int *failed);
extern void sync_unbind_request(AcquireRequest *req);
extern void sync_report_bind_error(AcquireRequest *req, int error, int failed);
#endif							/* SYNC_REQUEST_H */
