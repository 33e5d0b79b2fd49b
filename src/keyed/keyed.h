/*-------------------------------------------------------------------------
 *
 * keyed/keyed.h
 *		The public header of keyed holds (keyed/README.md): the rows of
 *		sync_state, holder entries, requests, what a transaction did, the
 *		operations on keyed holds and the views' copies -- what launch/ and
 *		entry/ may use.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_KEYED_KEYED_H
#define SYNC_KEYED_KEYED_H

#include "access/htup.h"
#include "datatype/timestamp.h"
#include "nodes/pg_list.h"
#include "storage/lwlock.h"
#include "utils/relcache.h"
#include "engine/engine.h"

/*
 * controllers.c: The controller registry: one slot per controller, its last
 * heartbeat, and whether its pending entries are queued.
 */

#define SYNC_CONTROLLERS_TRANCHE	"syncwf controllers"

extern Size sync_controllers_shmem_size(void);
extern void sync_controllers_shmem_request(void);
extern void sync_controllers_shmem_init(void);
extern const char *sync_controller_name(int slot);
extern TimestampTz sync_controllers_check(TimestampTz now);

/*
 * holder_table.c: Keyed holds in shared memory: entries owned by a holder
 * key instead of a backend, the holder table that finds them, and requests,
 * lookups and releases on behalf of a holder.
 */

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
	SyncPooled	pooled;			/* its number; next in its hash chain */
	SyncHolderTag tag;			/* hash key */
	uint32		hashcode;		/* hash of tag */
	int32		nentries;
	SyncEntryList entries;		/* SyncEntry.holder_link */
} SyncHolder;

static inline SyncHolder *
sync_holder_at(int32 n)
{
	return (SyncHolder *) sync_pool_object(SYNC_POOL_HOLDERS, sizeof(SyncHolder), n);
}

static inline uint32
sync_holder_key_hash(Oid dbid, const char *key)
{
	return hash_combine(hash_bytes_uint32((uint32) dbid),
						hash_bytes((const unsigned char *) key, strlen(key)));
}

/* The holder record of a keyed entry (core/shared_pool.c: by number). */
static inline SyncHolder *
sync_entry_holder(const SyncEntry *e)
{
	if (e->holderno == SYNC_ENTRY_NONE)
		return NULL;
	return (SyncHolder *) sync_pool_object(SYNC_POOL_HOLDERS, sizeof(SyncHolder),
										   e->holderno);
}

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

extern bool sync_keyed_lookup(const char *name, const char *holder,
							  SyncKeyedInfo *info);

typedef bool (*SyncKeyedFilter) (SyncEntry *e, void *arg);

/*
 * the rows of sync_state: A row of sync_state and of sync_controller, as
 * syncwf reads and writes them: what the table I/O (state_spi.c) and the
 * keyed holds in shared memory (holder_table.c, keyed_load.c) hand each
 * other through the engine (keyed_ops.c).  Types only.
 */

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
	bool		preemptible;	/* a waiter may preempt its hold */
	TimestampTz preempt_deadline;	/* held and preempted: its grace ends */
	SyncLimitValue limit;		/* read: what sync_limit says of the
								 * semaphore (limit -1: nothing) */
} SyncStateRow;

/* A row of sync_controller. */
typedef struct SyncControllerRow
{
	char	   *name;
	TimestampTz heartbeat;
} SyncControllerRow;

/*
 * keyed_load.c: Keyed holds and shared memory in bulk: the rebuild from rows
 * of sync_state, and the worker's scans.
 */

extern List *sync_keyed_expired(TimestampTz now, TimestampTz *next);
extern List *sync_keyed_unfit(bool *retry);

/*
 * keyed_request.c: A request on behalf of a holder key, in shared memory:
 * what is asked, and what was found and done.
 */

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
	bool		preemptible;	/* one lock only: a waiter may preempt it */

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

/*
 * keyed_xact.c: What a transaction did to keyed holds and controllers,
 * applied at its commit and undone at its abort; the hand-offs of its
 * releases at pre-commit.
 */

/*
 * A hand-off reserved at pre-commit (sync_keyed_xact_handoffs()): the
 * grant its waiter's row must show, to be written in this transaction.
 */
typedef struct SyncHandoff
{
	SyncStateRow row;
	void	   *op;				/* keyed_xact.c's record of the release */
} SyncHandoff;

/* transaction events, called by syncwf.c */
extern bool sync_keyed_xact_pending(void);
extern void sync_keyed_xact_at_commit(void);
extern void sync_keyed_xact_at_abort(void);
extern void sync_keyed_xact_at_subabort(SubTransactionId subid);
extern void sync_keyed_xact_at_subcommit(SubTransactionId subid,
										 SubTransactionId parent);

/*
 * keyed_xact_record.c: What a transaction does to keyed holds and
 * controllers, recorded as it happens for keyed_xact.c.
 */

extern void sync_keyed_xact_truncated(void);
/* What a claim of a keyed entry found (sync_keyed_xact_claim). */
typedef enum SyncClaimOutcome
{
	SYNC_CLAIM_GRANTED,			/* granted now, for this transaction */
	SYNC_CLAIM_HELD,			/* held already */
	SYNC_CLAIM_BUSY,			/* cannot be granted now */
	SYNC_CLAIM_MISSING			/* no such entry */
} SyncClaimOutcome;

extern void sync_keyed_xact_controller(const char *controller, bool deleted,
									   TimestampTz at);
extern void sync_keyed_wake_at_commit(void);

/*
 * keyed_ops.c: The operations on keyed holds: what each SQL function of
 * keyed holds, each trigger on their tables and each round of the worker
 * does, over shared memory and the tables together.
 */

/* SQLSTATE of sync_refresh() on a hold that is gone ("syncwf", class SW). */
#define ERRCODE_SYNC_HOLD_LOST	MAKE_SQLSTATE('S','W','0','0','1')

extern bool sync_keyed_try_load(bool nowait);
extern void sync_keyed_ensure_loaded(void);

extern void sync_keyed_request(SyncKeyedRequest *kr, SyncKeyedResult *results);
/* a busy claim is looked at again every 10 ms for a second */
#define SYNC_CLAIM_WAIT_MS	10
#define SYNC_CLAIM_WAITS	100
extern SyncClaimOutcome sync_keyed_claim(const char *name, const char *holder,
										 const char *controller,
										 struct SyncStateRow *row);
extern bool sync_keyed_release(const char *name, const char *holder);
extern int	sync_keyed_release_holder(const char *holder);
extern bool sync_keyed_force_release(const char *name, const char *holder);
extern TimestampTz sync_keyed_refresh(const char *name, const char *holder,
									  int64 lease_us);
extern bool sync_keyed_is_held(const char *name, const char *holder,
							   bool has_token, int64 token);
extern void sync_keyed_wait(char **names, int nnames, const char *holder,
							int64 timeout_us, int64 *tokens);
extern TimestampTz sync_keyed_heartbeat(const char *controller);
extern int	sync_keyed_forget_controller(const char *controller,
										 bool release_holds);
extern int	sync_keyed_delete(const char *name, const char *holder,
							  const char *reason);
extern int	sync_keyed_row_removed(const char *name, const char *holder,
								   int64 request_id, const char *controller,
								   const char *reason);
extern void sync_keyed_readmit(const char *name, const char *holder,
							   int32 limit, bool grant);
extern int	sync_keyed_persist_grants(bool *retry);
extern void sync_keyed_handoff(void);

/* keyed_preempt.c: the worker's step of preemption. */
extern int	sync_keyed_preempt(TimestampTz now, bool *retry);

/*
 * Called when a grant of a pending entry has been written to sync_state,
 * in the transaction that wrote it; set by syncwf.c at load (launch plans
 * promote the execution that got the slot).
 */
typedef void (*SyncGrantWrittenHook) (const char *name, const char *holder);
extern void sync_keyed_set_grant_written_hook(SyncGrantWrittenHook hook);

/*
 * state_heap.c: The hot path of sync_state: a request's row, a release's
 * delete, a hand-off's grant, written through the table access method; a row
 * read for the delete trigger.
 */

extern Datum sync_state_mode_datum(const char *name, bool shared);
extern bool sync_state_row_of(Relation rel, HeapTuple tuple, SyncStateRow *row);

/*
 * state_spi.c: The rows of sync_state and sync_controller: table I/O with no
 * knowledge of shared memory.
 */

/* The reason of a release by its holder: no event is sent. */
#define SYNC_REASON_RELEASED	"released"
/* why the worker withdraws a request a lowered limit left too big */
#define SYNC_REASON_LIMIT_LOWERED	"limit lowered"
/* why a preempted hold ended (its grace ran out) */
#define SYNC_REASON_PREEMPTED	"preempted"

extern bool sync_state_persist(SyncStateRow *row, bool *skipped);
extern int	sync_state_expire(List *expired);
extern bool sync_state_preempt(const SyncStateRow *row, TimestampTz deadline);
extern int	sync_state_withdraw(List *rows, const char *reason);

/* for the triggers on sync_state */
extern bool sync_state_writing(void);
extern const char *sync_state_delete_reason(void);
extern void sync_state_cascaded(int n);

/*
 * view_snapshots.c: What the monitoring views show: copies of the lock table
 * and its entries in this database.
 */

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
	char	   *parent_row;		/* its row's parent row, or NULL */
	int32		parent_limit;	/* ... that row's sizelimit */
	int32		parent_slots_held;	/* ... the slots its children hold */
	int32		guarantee;		/* its guarantee under the parent */
} LockRow;

typedef struct EntryRow
{
	const char *name;
	uint8		state;
	uint8		scope;
	int32		pid;
	int32		priority;		/* as asked */
	int32		effective_priority; /* pending: as aged (priority aging) */
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
	/* pending: why it waits (engine's wait_reasons.c) */
	const char *waiting_for;	/* the reason; NULL when held */
	char	   *waiting_row;	/* the sync_limit row in the way, or NULL */
	int32		nblocking_pids;
	int32	   *blocking_pids;	/* backends whose entries it needs gone */
	int32		nblocking_holders;
	char	  **blocking_holders;	/* ... holder keys */
	int64		estimate_us;	/* -1: no estimate */
} EntryRow;

extern int	sync_status_locks(LockRow **rows);
extern int	sync_status_entries(EntryRow **rows);

#endif							/* SYNC_KEYED_KEYED_H */
