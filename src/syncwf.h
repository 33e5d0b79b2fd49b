/*-------------------------------------------------------------------------
 *
 * syncwf.h
 *		Shared declarations of the syncwf extension: the shared-memory lock
 *		table, its entries (holds and queue entries), and the interfaces
 *		between the files that own them.
 *
 * Who owns what:
 *		syncwf.c      module load, hooks, the "must be preloaded" check
 *		guc.c         every GUC
 *		lock_table.c  shared memory: the lock hash, its partition LWLocks,
 *		              the entry pool
 *		tokens.c      fencing tokens that never go backwards
 *		wait_queue.c  queue order and the grant pass: THE place a grant happens
 *		holds.c       this backend's holds: acquire, wait, release, scopes,
 *		              transaction and exit callbacks
 *		limits.c      semaphore limits: sync_limit lookup, local cache,
 *		              commit-time propagation of changes
 *		names.c       lock name grammar and validation
 *		keyed.c       durable keyed holds in shared memory: the holder table,
 *		              requests and releases on behalf of a holder key, and
 *		              what a transaction did to them (applied at commit)
 *		state_table.c the sync_state and sync_controller tables: writes,
 *		              triggers, NOTIFY events, and the rebuild after a start
 *		controllers.c the controller registry: heartbeats and staleness
 *		worker.c      the background worker and sync_reconcile()
 *		launch_plans.c launch-plan concurrency policies over executions
 *		sql_api.c     SQL-callable functions and the monitoring SRFs
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNCWF_H
#define SYNCWF_H

#include "postgres.h"

#include "access/transam.h"
#include "datatype/timestamp.h"
#include "lib/ilist.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/condition_variable.h"
#include "storage/spin.h"
#include "nodes/pg_list.h"
#include "executor/spi.h"
#include "utils/hsearch.h"

/* Longest lock name, in bytes ("sem/<namespace>/<key>"). */
#define SYNC_NAME_MAXLEN		255
#define SYNC_NAME_BUFLEN		(SYNC_NAME_MAXLEN + 1)

/* The semaphores of launch plans: sem/launchplan/<project>/<domain>/<name>. */
#define SYNC_LAUNCH_LOCK_PREFIX "sem/launchplan/"

/*
 * How often a request refused for a full lock table makes room (evicting a
 * cached semaphore, waiting for partitions if need be) and tries again
 * before it reports the table full.
 */
#define SYNC_MAKE_ROOM_ATTEMPTS	8

/* Most locks one all-or-nothing request may name. */
#define SYNC_MAX_REQUEST_LOCKS	64

/* Lock table partitions; each has its own LWLock.  Must be a power of 2. */
#define SYNC_NUM_PARTITIONS		16
/* A partition mask naming every partition. */
#define SYNC_ALL_PARTITIONS		((uint32) ((1U << SYNC_NUM_PARTITIONS) - 1))

typedef enum SyncLockKind
{
	SYNC_KIND_MUTEX = 0,
	SYNC_KIND_SEMAPHORE = 1
} SyncLockKind;

typedef enum SyncEntryState
{
	SYNC_ENTRY_FREE = 0,		/* on the pool's free list */
	SYNC_ENTRY_PENDING,			/* in a lock's wait queue */
	SYNC_ENTRY_HELD,			/* in a lock's holder list */
	SYNC_ENTRY_DORMANT			/* pending, but its controller is inactive:
								 * in the lock's dormant list, passed over */
} SyncEntryState;

typedef enum SyncScope
{
	SYNC_SCOPE_SESSION = 0,
	SYNC_SCOPE_XACT = 1,
	SYNC_SCOPE_KEYED = 2		/* owned by a holder key, kept in sync_state */
} SyncScope;

/* SQLSTATE of sync_refresh() on a hold that is gone ("syncwf", class SW). */
#define ERRCODE_SYNC_HOLD_LOST	MAKE_SQLSTATE('S','W','0','0','1')

/* Longest holder key and controller name, in bytes. */
#define SYNC_KEY_MAXLEN			255
#define SYNC_KEY_BUFLEN			(SYNC_KEY_MAXLEN + 1)

/*
 * Hash key of a lock: the database it lives in, and its full name, zero
 * padded so that the key can be hashed and compared as a blob.
 */
typedef struct SyncLockTag
{
	Oid			dbid;
	char		name[SYNC_NAME_BUFLEN];
} SyncLockTag;

/*
 * One lock.  Lives in the shared hash table while it has at least one holder
 * or queue entry.  When the last one leaves, a mutex is removed; a semaphore
 * stays as a *cached* entry on its partition's idle list, remembering its
 * limit so that the next acquire needs no table lookup, until the table
 * needs the room (least recently used first) or its sync_limit row changes.
 * Every field is protected by the lock's partition LWLock.
 */
typedef struct SyncLock
{
	SyncLockTag tag;			/* hash key; must be first */
	uint32		hashcode;		/* hash of tag; picks the partition */
	uint8		kind;			/* SyncLockKind */
	bool		limit_defined;	/* semaphore: sync_limit row exists */
	bool		cached;			/* idle, on the partition's idle list */
	int32		limit;			/* slots: 1 for a mutex, sizelimit otherwise */
	Oid			limit_relid;	/* semaphore: sync_limit table it came from */
	dlist_node	idle_link;		/* in SyncShared.idle_locks[partition] */
	int32		nheld;			/* entries in holders */
	int32		nwaiting;		/* entries in waiters */
	int32		ndormant;		/* entries in dormant */
	dlist_head	holders;		/* SyncEntry, in grant order */
	dlist_head	waiters;		/* SyncEntry, in queue order */
	dlist_head	dormant;		/* pending entries of inactive controllers,
								 * in queue order */
} SyncLock;

/*
 * A hold or a queue entry of one lock.  Entries of one request (a call that
 * names several locks, all or nothing) form a ring through next_in_request;
 * a single-lock request's ring is the entry itself.
 *
 * Protected by the partition LWLock of entry->lock.  The immutable fields
 * (request_id, nlocks, partmask, next_in_request, lock, owner fields) are set
 * before the entry becomes visible and may be read under any one of the
 * request's partition locks.
 */
typedef struct SyncEntry
{
	dlist_node	lock_link;		/* in lock->holders or lock->waiters */
	struct SyncEntry *next_in_request;
	struct SyncLock *lock;
	uint64		request_id;		/* unique per request, never reused */
	uint64		seq;			/* arrival order within a priority */
	uint64		token;			/* fencing token, once granted */
	TimestampTz since;			/* queued at, then granted at */
	int32		priority;
	int32		pid;			/* owning backend */
	int32		procno;			/* owning backend's PGPROC number */
	uint32		partmask;		/* partitions of every lock in the request */
	uint16		nlocks;			/* locks in the request */
	uint8		state;			/* SyncEntryState */
	uint8		scope;			/* SyncScope */
	int32		next_free;		/* pool free-list link, when FREE */

	/* Keyed entries only (scope SYNC_SCOPE_KEYED); pid and procno are 0/-1. */
	struct SyncHolder *holder;	/* owning holder record */
	dlist_node	holder_link;	/* in holder->entries, under holders_lock */
	TimestampTz queued_at;		/* queue order after priority (all entries) */
	int64		lease_us;		/* lease length, 0 = none */
	TimestampTz lease_expires;	/* held with a lease: expiry, else 0 */
	TransactionId created_xid;	/* creating transaction, until it commits */
	TransactionId release_xid;	/* transaction deleting its row, until it
								 * ends */
	Oid			owner;			/* role that requested it */
	int32		controller;		/* controller slot, or -1 */
	int32		admit_limit;	/* granted only while fewer hold the lock;
								 * -1: the lock's limit alone */
	bool		persisted;		/* held, and sync_state says so */
} SyncEntry;

/*
 * A holder key (Argo's workflow key) with at least one keyed entry.  Lives
 * in a shared hash protected by SyncShared.holders_lock.
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

/*
 * A controller (Argo's controllerName).  Slots live in a fixed array; the
 * name and the active flag change under controllers_lock, the heartbeat is
 * an atomic so that readers need no lock.
 */
typedef struct SyncController
{
	Oid			dbid;
	bool		in_use;
	bool		active;			/* its pending entries are in the queues */
	char		name[SYNC_KEY_BUFLEN];
	pg_atomic_uint64 heartbeat; /* last heartbeat (TimestampTz), 0 = none */
	pg_atomic_uint32 nentries;	/* keyed entries naming it */
} SyncController;

/* Load state of the durable database's keyed holds. */
typedef enum SyncKeyedLoadState
{
	SYNC_KEYED_NOT_LOADED = 0,
	SYNC_KEYED_LOADED
} SyncKeyedLoadState;

/* Grants of pending keyed entries, for the worker to write and announce. */
#define SYNC_OUTBOX_SIZE		4096

typedef struct SyncOutboxItem
{
	SyncEntry  *entry;
	uint64		request_id;
	uint64		token;
} SyncOutboxItem;

/*
 * The shared control block.
 */
typedef struct SyncShared
{
	LWLockPadded *partition_locks;	/* SYNC_NUM_PARTITIONS of them */
	dlist_head	idle_locks[SYNC_NUM_PARTITIONS];	/* cached semaphores, LRU
													 * first; under the
													 * partition lock */
	LWLock	   *token_lock;		/* serializes token reservation writes */
	slock_t		pool_mutex;		/* protects the entry free list */
	int32		pool_free_head;	/* first free entry index, or -1 */
	int32		pool_nfree;
	pg_atomic_uint32 nlocks;	/* entries in the lock hash, cached included */
	pg_atomic_uint64 next_seq;	/* arrival counter */
	pg_atomic_uint64 next_request_id;
	pg_atomic_uint64 next_token;	/* next fencing token to hand out */
	pg_atomic_uint64 token_reserved;	/* tokens below this are durable */
	pg_atomic_uint64 limit_generation;	/* bumped by every limit change */

	/* keyed holds (keyed.c, state_table.c, controllers.c, worker.c) */
	LWLock	   *holders_lock;	/* the holder hash and holder_link lists */
	LWLock	   *controllers_lock;	/* controller slots; taken before
										 * holders_lock and partitions */
	slock_t		keyed_mutex;	/* the load state below */
	int			keyed_load_state;	/* SyncKeyedLoadState */
	Oid			keyed_dbid;		/* database the keyed holds live in */
	Oid			keyed_state_relid;	/* sync_state they were loaded from */
	slock_t		outbox_mutex;
	uint32		outbox_head;	/* next item to read */
	uint32		outbox_tail;	/* next free slot */
	bool		outbox_overflow;	/* items were dropped: scan everything */
	SyncOutboxItem outbox[SYNC_OUTBOX_SIZE];
	pg_atomic_uint64 next_lease_expiry; /* earliest lease deadline, or max */
	pg_atomic_uint32 launch_dirty;	/* launch plans or phases changed by hand */
	pg_atomic_uint64 launch_deadline;	/* earliest max_pending time-out */
	pg_atomic_uint32 worker_pid;
	int			worker_procno;	/* -1 when no worker runs */
} SyncShared;

/* guc.c */
extern int	sync_max_locks;
extern int	sync_max_entries;
extern int	sync_max_holders;
extern int	sync_max_controllers;
extern char *sync_database;
extern int	sync_inactive_controller_timeout;
extern bool sync_worker_enabled;
extern void sync_define_gucs(void);

/* lock_table.c */
extern SyncShared *SyncState;
extern SyncEntry *SyncEntries;
extern void sync_shmem_request(void);
extern void sync_shmem_startup(void);
extern void sync_require_shmem(void);
extern void sync_make_tag(SyncLockTag *tag, Oid dbid, const char *name);
extern uint32 sync_tag_hash(const SyncLockTag *tag);
extern LWLock *sync_partition_lock(uint32 hashcode);
extern int	sync_partition_of(uint32 hashcode);
extern SyncLock *sync_lock_lookup(const SyncLockTag *tag, uint32 hashcode);
extern SyncLock *sync_lock_create(const SyncLockTag *tag, uint32 hashcode,
								  bool *found);
extern bool sync_make_room(uint32 hashcode);
extern void sync_lock_idle(SyncLock *lock);
extern void sync_lock_uncache(SyncLock *lock);
extern void sync_lock_remove(SyncLock *lock);
extern SyncEntry *sync_entry_alloc(void);
extern void sync_entry_free(SyncEntry *entry);
extern void sync_lock_partitions(uint32 partmask, LWLockMode mode);
extern void sync_unlock_partitions(uint32 partmask);
extern HTAB *sync_lock_hash(void);

/*
 * For assertions: does this backend hold the partition lock of 'hashcode',
 * every partition lock named by 'partmask', or any partition lock at all?
 * 'exclusive' asks for exclusive mode; otherwise either mode will do.
 */
static inline bool
sync_partitions_held(uint32 partmask, bool exclusive)
{
	for (int i = 0; i < SYNC_NUM_PARTITIONS; i++)
	{
		LWLock	   *partition = &SyncState->partition_locks[i].lock;

		if ((partmask & (1U << i)) &&
			!(exclusive ? LWLockHeldByMeInMode(partition, LW_EXCLUSIVE) :
			  LWLockHeldByMe(partition)))
			return false;
	}
	return true;
}

static inline bool
sync_partition_held(uint32 hashcode, bool exclusive)
{
	return sync_partitions_held(1U << sync_partition_of(hashcode), exclusive);
}

static inline bool
sync_any_partition_held(void)
{
	for (int i = 0; i < SYNC_NUM_PARTITIONS; i++)
		if (LWLockHeldByMe(&SyncState->partition_locks[i].lock))
			return true;
	return false;
}

/* tokens.c */
extern void sync_tokens_startup(void);
extern uint64 sync_next_token(void);
extern void sync_tokens_advance(uint64 next);
extern void sync_atomic_advance(pg_atomic_uint64 *counter, uint64 next);
extern bool sync_atomic_lower(pg_atomic_uint64 *counter, uint64 value);

/* wait_queue.c */
extern void sync_queue_insert(SyncLock *lock, SyncEntry *entry);
extern bool sync_request_grantable(SyncEntry *entry, bool respect_queue);
extern void sync_request_grant(SyncEntry *entry, bool forced);
extern void sync_grant_waiters(SyncLock *lock);
extern void sync_grant_deferred(void);
extern int	sync_lock_slots(SyncLock *lock);
extern void sync_dormant_insert(SyncLock *lock, SyncEntry *entry);
extern int	sync_queue_position(SyncEntry *entry);

/* keyed.c */
/* How a keyed request treats a lock that is not free. */
typedef enum SyncKeyedMode
{
	SYNC_KEYED_QUEUE = 0,		/* queue until granted (sync_request) */
	SYNC_KEYED_TRY,				/* grant now or leave no trace */
	SYNC_KEYED_FORCE			/* grant now, whatever the limit (a slot
								 * taken over from a replaced holder, or one
								 * that only counts) */
} SyncKeyedMode;

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
	SyncEntry  *entry;			/* valid only for operations noted below */
} SyncKeyedInfo;

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
	int32		limit;			/* read: semaphore's sizelimit, -1 if none */
} SyncStateRow;

typedef struct SyncControllerRow
{
	char	   *name;
	TimestampTz heartbeat;
} SyncControllerRow;

extern Size sync_keyed_shmem_size(void);
extern void sync_keyed_shmem_init(void);
extern bool sync_keyed_database(void);
extern void sync_keyed_require_database(void);
extern void sync_keyed_require_writable(void);
extern void sync_keyed_ensure_loaded(void);
extern bool sync_keyed_try_load(bool nowait);
extern void sync_keyed_request(char **names, int nnames, const char *holder,
							   SyncKeyedMode mode, int32 admit_limit,
							   bool has_priority, int32 priority,
							   const char *controller,
							   int64 lease_us, bool has_queued_at,
							   TimestampTz queued_at, SyncKeyedResult *results);
extern bool sync_keyed_lookup(const char *name, const char *holder,
							  SyncKeyedInfo *info);
extern List *sync_keyed_holder_locks(const char *holder);
extern List *sync_keyed_request_locks(SyncEntry *entry, uint64 request_id);
extern void sync_keyed_row_deleted(const char *name, const char *holder,
								   uint64 request_id, SyncKeyedInfo *info);
extern void sync_keyed_truncated(void);
extern void sync_keyed_note_refresh(SyncEntry *entry, uint64 request_id,
									int64 lease_us, TimestampTz expires);
extern void sync_keyed_note_persisted(SyncEntry *entry, uint64 request_id,
									  uint64 token);
extern void sync_keyed_note_controller(const char *controller, bool forget,
									   TimestampTz at);
extern bool sync_keyed_pending_work(void);
extern void sync_keyed_at_commit(void);
extern void sync_keyed_at_abort(void);
extern void sync_keyed_at_subabort(SubTransactionId subid);
extern void sync_keyed_at_subcommit(SubTransactionId subid,
									SubTransactionId parent);
extern void sync_keyed_granted(SyncEntry *entry);
extern void sync_keyed_free_entry(SyncEntry *entry);
extern List *sync_keyed_unpersisted(void);
extern List *sync_keyed_expired(TimestampTz now, TimestampTz *next);
extern bool sync_keyed_grant_info(SyncOutboxItem *item, SyncStateRow *row);
extern void sync_keyed_wake_at_commit(void);
extern void sync_keyed_set_admit_limit(const char *name, const char *holder,
									   int32 limit, bool grant);
extern void sync_keyed_regrant(const char *name);

/* state_table.c */
extern Oid	sync_state_relid(bool missing_ok);
extern Oid	sync_limit_relid_cached(void);
extern Oid	sync_controller_relid_cached(void);
extern void sync_state_insert(SyncStateRow *row);
extern int	sync_state_delete(const char *name, const char *holder,
							  const char *reason);
extern void sync_state_set_priority(const char *name, const char *holder,
									int32 priority);
extern void sync_state_set_admit_limit(const char *name, const char *holder,
									   int32 limit);
extern TimestampTz sync_state_refresh(const char *name, const char *holder,
									  int64 lease_us, bool *found);
extern bool sync_state_persist_grant(SyncOutboxItem *item, bool *skipped);
extern int	sync_state_persist_grants(bool *retry);
extern int	sync_state_expire_leases(List *expired);
extern List *sync_state_read_all(List **controllers);
extern void sync_state_notify(const char *event, const char *name,
							  const char *holder, int64 token,
							  const char *controller, const char *reason);
extern TimestampTz sync_controller_upsert(const char *controller);
extern int	sync_controller_forget(const char *controller, bool release_holds);
extern bool sync_is_admin(Oid roleid);
extern void sync_check_owner(Oid owner, const char *lock_name,
							 const char *holder);

/* A statement run by sync_exec_owned(); see state_table.c. */
typedef struct SyncOwnedPlan
{
	const char *sql;
	int			nargs;
	Oid			types[12];
	SPIPlanPtr	plan;			/* prepared, for relid */
	Oid			relid;
} SyncOwnedPlan;

extern uint64 sync_exec_owned(SyncOwnedPlan *plan, Datum *values,
							  const char *nulls, List **rows_out);

/* launch_plans.c */
extern void sync_launch_promoted(const char *execution_id);
extern void sync_launch_deadline(TimestampTz at);
extern int	sync_launch_reconcile(TimestampTz now, TimestampTz *next);

/* controllers.c */
extern Size sync_controllers_shmem_size(void);
extern void sync_controllers_shmem_init(void);
extern int	sync_controller_slot(const char *name, bool create);
extern int	sync_controller_slot_noerror(const char *name);
extern const char *sync_controller_name(int slot);
extern void sync_controller_ref(int slot);
extern void sync_controller_unref(int slot);
extern bool sync_controller_active(int slot);
extern void sync_controller_beat(int slot, TimestampTz at);
extern void sync_controller_restore(const char *name, TimestampTz heartbeat,
									TimestampTz now);
extern void sync_controller_forgotten(const char *name);
extern TimestampTz sync_controllers_check(TimestampTz now);

/* worker.c */
extern void sync_worker_register(void);
extern void sync_worker_wake(void);
extern void sync_outbox_push(SyncEntry *entry);
extern void sync_outbox_rescan(void);
extern List *sync_outbox_drain(bool *overflow);
extern int	sync_reconcile_round(TimestampTz *next_wake);
extern void sync_lease_scheduled(TimestampTz expires);

/* limits.c */
extern Oid	sync_limit_relid(Oid fn_oid);
extern int32 sync_limit_lookup(const char *lock_name, Oid relid);
extern int32 sync_limit_lookup_optional(const char *lock_name, Oid relid);
extern bool sync_limits_pending(void);
extern void sync_limits_precommit(void);
extern void sync_limits_at_commit(void);
extern void sync_limits_forget(void);

/* sql_api.c */
extern int64 sync_interval_us(Interval *iv);

/* names.c */
extern SyncLockKind sync_parse_lock_name(const char *name);
extern bool sync_lock_is_launch_plan(const char *name);

/* holds.c */
/*
 * A request being made: the locks it names, and the shared entries and
 * local placeholders reserved for those this session does not hold yet.
 * Built by holds.c; keyed.c uses the same building blocks.
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
extern void sync_reserve_entries(AcquireRequest *req);
extern void sync_read_limits(AcquireRequest *req);
extern bool sync_limits_missing(AcquireRequest *req);
/* What sync_bind_request() returns (keyed.c adds the holder table's). */
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
extern bool sync_acquire_locks(char **names, int nnames, int32 priority,
							   SyncScope scope, bool wait, int64 timeout_us,
							   Oid fn_oid, int64 *tokens);
extern void sync_backend_setup(void);
extern void sync_withdraw_request(SyncEntry *first);
extern bool sync_release_lock(const char *name);
extern int	sync_release_all_holds(void);

#endif							/* SYNCWF_H */
