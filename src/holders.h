/*-------------------------------------------------------------------------
 *
 * holders.h
 *		Keyed holds in shared memory (holders.c): entries owned by a holder
 *		key instead of a backend, the holder table that finds them, and
 *		requests, lookups and releases on behalf of a holder.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_HOLDERS_H
#define SYNC_HOLDERS_H

#include "lock_table.h"
#include "nodes/pg_list.h"
#include "outbox.h"

#define SYNC_HOLDERS_TRANCHE	"syncwf holders"

/*
 * A holder key (Argo's workflow key) with at least one keyed entry.  Lives
 * in a shared hash protected by holders_lock.
 */
typedef struct SyncHolderTag
{
	Oid			dbid;
	char		key[SYNC_KEY_BUFLEN];
} SyncHolderTag;

typedef struct SyncHolder
{
	SyncHolderTag tag;			/* hash key; must be first */
	int32		nentries;
	dlist_head	entries;		/* SyncEntry.holder_link */
} SyncHolder;

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
	bool		claim;			/* claim-only (a row its writer inserted),
								 * QUEUE only: queued, never granted here;
								 * see sync_keyed_claim() */
	int64		lease_us;		/* 0: none */
	struct SyncStateRow *row_out;	/* non-NULL: a new request's rows are
									 * returned here (nnames of them), not
									 * written */
	bool		has_queued_at;	/* false: queued now */
	TimestampTz queued_at;

	/* set by the engine (keyed_ops.c) before the request is made */
	int			controller_slot;	/* -1: none */
	bool		controller_beating; /* inactive, heartbeat written now */
	Oid			limit_relid;

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

typedef struct SyncKeyedInfo
{
	bool		found;
	uint8		state;			/* SyncEntryState */
	int64		token;
	Oid			owner;
	int64		lease_us;
	TimestampTz lease_expires;
	uint64		request_id;
	int			nlocks;
	int			controller;
	bool		persisted;
	SyncEntry  *entry;			/* to name it in a later operation */
} SyncKeyedInfo;

/* Is this keyed entry still the one an operation or a list was about? */
static inline bool
sync_keyed_entry_is(SyncEntry *e, uint64 request_id)
{
	return e->state != SYNC_ENTRY_FREE && e->scope == SYNC_SCOPE_KEYED &&
		e->request_id == request_id;
}

extern Size sync_holders_shmem_size(void);
extern void sync_holders_shmem_request(void);
extern void sync_holders_shmem_init(void);
extern void sync_holders_init(void);
extern LWLock *sync_holders_lock(void);

extern bool sync_keyed_loaded(Oid relid);
extern void sync_keyed_set_loaded(Oid relid);

extern SyncHolder *sync_holder_lookup(const char *key, bool create);
extern SyncEntry *sync_holder_entry(SyncHolder *holder, const char *name);

extern SyncKeyedOutcome sync_holders_request(SyncKeyedRequest *kr,
											 SyncKeyedResult *results);
extern void sync_keyed_entry_info(SyncEntry *e, SyncKeyedInfo *info);
extern bool sync_keyed_lookup(const char *name, const char *holder,
							  SyncKeyedInfo *info);
extern List *sync_keyed_holder_locks(const char *holder);
extern List *sync_keyed_request_locks(SyncEntry *entry, uint64 request_id);
extern bool sync_keyed_mark_release(const char *name, const char *holder,
									uint64 request_id, TransactionId xid,
									SyncKeyedInfo *info);
extern void sync_keyed_release_held(SyncEntry *e, SyncEntry *next,
									uint64 token, TimestampTz since);

typedef bool (*SyncKeyedFilter) (SyncEntry *e, void *arg);
extern int	sync_keyed_purge(SyncKeyedFilter filter, void *arg);

#endif							/* SYNC_HOLDERS_H */
