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
 *		sql_api.c     SQL-callable functions and the monitoring SRFs
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNCWF_H
#define SYNCWF_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "lib/ilist.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/hsearch.h"

/* Longest lock name, in bytes ("sem/<namespace>/<key>"). */
#define SYNC_NAME_MAXLEN		255
#define SYNC_NAME_BUFLEN		(SYNC_NAME_MAXLEN + 1)

/* Most locks one all-or-nothing request may name. */
#define SYNC_MAX_REQUEST_LOCKS	64

/* Lock table partitions; each has its own LWLock.  Must be a power of 2. */
#define SYNC_NUM_PARTITIONS		16

typedef enum SyncLockKind
{
	SYNC_KIND_MUTEX = 0,
	SYNC_KIND_SEMAPHORE = 1
} SyncLockKind;

typedef enum SyncEntryState
{
	SYNC_ENTRY_FREE = 0,		/* on the pool's free list */
	SYNC_ENTRY_PENDING,			/* in a lock's wait queue */
	SYNC_ENTRY_HELD				/* in a lock's holder list */
} SyncEntryState;

typedef enum SyncScope
{
	SYNC_SCOPE_SESSION = 0,
	SYNC_SCOPE_XACT = 1
	/* keyed (durable) holders come in a later version */
} SyncScope;

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
	dlist_head	holders;		/* SyncEntry, in grant order */
	dlist_head	waiters;		/* SyncEntry, in queue order */
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
} SyncEntry;

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
} SyncShared;

/* guc.c */
extern int	sync_max_locks;
extern int	sync_max_entries;
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
extern void sync_lock_idle(SyncLock *lock);
extern void sync_lock_uncache(SyncLock *lock);
extern void sync_lock_remove(SyncLock *lock);
extern SyncEntry *sync_entry_alloc(void);
extern void sync_entry_free(SyncEntry *entry);
extern void sync_lock_partitions(uint32 partmask, LWLockMode mode);
extern void sync_unlock_partitions(uint32 partmask);
extern HTAB *sync_lock_hash(void);

/* tokens.c */
extern void sync_tokens_startup(void);
extern uint64 sync_next_token(void);

/* wait_queue.c */
extern void sync_queue_insert(SyncLock *lock, SyncEntry *entry);
extern bool sync_request_grantable(SyncEntry *entry, bool respect_queue);
extern void sync_request_grant(SyncEntry *entry);
extern void sync_grant_waiters(SyncLock *lock);
extern void sync_grant_deferred(void);
extern int	sync_lock_slots(SyncLock *lock);

/* limits.c */
extern Oid	sync_limit_relid(Oid fn_oid);
extern int32 sync_limit_lookup(const char *lock_name, Oid relid);
extern bool sync_limits_pending(void);
extern void sync_limits_precommit(void);
extern void sync_limits_at_commit(void);
extern void sync_limits_forget(void);

/* names.c */
extern SyncLockKind sync_parse_lock_name(const char *name);

/* holds.c */
extern bool sync_acquire_locks(char **names, int nnames, int32 priority,
							   SyncScope scope, bool wait, int64 timeout_us,
							   Oid fn_oid, int64 *tokens);
extern void sync_backend_setup(void);
extern bool sync_release_lock(const char *name);
extern int	sync_release_all_holds(void);

#endif							/* SYNCWF_H */
