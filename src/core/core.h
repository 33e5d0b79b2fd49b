/*-------------------------------------------------------------------------
 *
 * core/core.h
 *		The public header of core/: names and tags, fencing tokens, settings,
 *		syncwf's tables and statements, privileges, waiting for a client,
 *		wake-ups of a holder's waiters, NOTIFY payloads.  Every other
 *		subsystem includes it; it includes compat.h.  See core/README.md.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_CORE_CORE_H
#define SYNC_CORE_CORE_H

#include "access/tableam.h"
#include "common/hashfn.h"
#include "datatype/timestamp.h"
#include "executor/spi.h"
#include "nodes/pg_list.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/dsa.h"
#include "core/compat.h"

/*
 * client_wait.c: Sleeping on this process's latch while also noticing that
 * its client went away.
 */

extern void sync_sleep(long timeout_ms, uint32 wait_event_info);

/*
 * guc.c: The configuration parameters of syncwf, and the one question about
 * them every subsystem asks: is this the database of keyed holds?
 */

extern int	sync_max_locks;
extern int	sync_max_entries;
extern int	sync_max_holders;
extern int	sync_max_memory;
extern int	sync_max_controllers;
extern char *sync_database;
extern int	sync_inactive_controller_timeout;
extern bool sync_worker_enabled;
extern bool sync_handoff_in_transaction;
extern int	sync_max_passes;
extern bool sync_track_stats;
extern int	sync_stats_max_locks;

extern void sync_define_gucs(void);
extern bool sync_keyed_database(void);

/*
 * notify_payloads.c: The NOTIFY events of keyed holds: their payload, and
 * the channels they go out on.
 */

/* The channel of every event of keyed holds. */
#define SYNC_NOTIFY_CHANNEL		"syncwf"

extern void sync_controller_channel(const char *controller, char *channel);
extern void sync_keyed_notify(const char *event, const char *name,
							  const char *holder, int64 token,
							  const char *controller, const char *reason);
extern void sync_keyed_notify_preempt(const char *name, const char *holder, int64 token,
									  const char *controller, TimestampTz deadline);

/*
 * names.c: What a valid lock name, holder key, controller name and launch-
 * plan identifier is, and the value conversions the SQL functions share.
 */

/*
 * Longest lock name, in bytes: "sem/" and the 256 bytes of the longest
 * sync_limit name, as long as Argo's varchar(256) names (docs/argo.md).
 */
#define SYNC_NAME_MAXLEN		260
#define SYNC_NAME_BUFLEN		(SYNC_NAME_MAXLEN + 1)

/*
 * Hash key of a lock, in the lock table (lock_table.c) and among the rows
 * of its statistics (stats.c): the database it lives in, and its full
 * name, zero padded (sync_make_tag) so that the key can be copied as a
 * blob.
 *
 * Its hash and equality read the name only up to its end: a successful
 * lookup compares the whole name with the entry's, which is usually not in
 * the CPU's cache, and a name is mostly far shorter than its buffer (a
 * blob comparison would read all SYNC_NAME_BUFLEN bytes of it).  Both
 * tables hash a tag alike, so a lock's hash code finds its statistics row
 * too.
 */
typedef struct SyncLockTag
{
	Oid			dbid;
	char		name[SYNC_NAME_BUFLEN];
} SyncLockTag;

static inline uint32
sync_lock_name_hash(Oid dbid, const char *name)
{
	return hash_combine(hash_bytes_uint32((uint32) dbid),
						hash_bytes((const unsigned char *) name,
								   strnlen(name, SYNC_NAME_BUFLEN)));
}

static inline uint32
sync_lock_tag_hash(const SyncLockTag *tag)
{
	return sync_lock_name_hash(tag->dbid, tag->name);
}

/* 0 if a and b are the same lock (dynahash's match convention) */
static inline int
sync_lock_tag_cmp(const SyncLockTag *a, const SyncLockTag *b)
{
	if (a->dbid != b->dbid)
		return 1;
	return strncmp(a->name, b->name, sizeof(a->name));
}

/* Longest holder key and controller name, in bytes (Argo's workflow keys). */
#define SYNC_KEY_MAXLEN			256
#define SYNC_KEY_BUFLEN			(SYNC_KEY_MAXLEN + 1)

/*
 * Longest fair key (a tenant, user or project that shares a lock's queue
 * fairly with others: queue_order.c), in bytes, as long as an identifier.
 */
#define SYNC_FAIR_KEY_MAXLEN	63
#define SYNC_FAIR_KEY_BUFLEN	(SYNC_FAIR_KEY_MAXLEN + 1)

/* Longest launch-plan project, domain and name, in bytes. */
#define SYNC_IDENT_MAXLEN		63

/* Longest launch-plan version and execution id, in bytes. */
#define SYNC_VERSION_MAXLEN		255

/* Most locks one all-or-nothing request may name. */
#define SYNC_MAX_REQUEST_LOCKS	64

/* The semaphores of launch plans: sem/launchplan/<project>/<domain>/<name>. */
#define SYNC_LAUNCH_LOCK_PREFIX "sem/launchplan/"

typedef enum SyncLockKind
{
	SYNC_KIND_MUTEX = 0,
	SYNC_KIND_SEMAPHORE = 1
} SyncLockKind;

/*
 * The names of the rows of a pattern table (sync_limit, sync_fair_weight)
 * that may apply to a lock's "<namespace>/<key>", most specific first: the
 * key itself (pattern_len 0), then "<prefix>/\*" for each of its prefixes
 * ending in '/', longest first (pattern_len: the prefix's length).  The one
 * place that rule is written.
 *
 *		SyncPatternCandidate c;
 *		sync_pattern_candidates_init(&c, key);
 *		while (sync_pattern_next_candidate(&c))
 *			... c.name, c.pattern_len ...
 */
typedef struct SyncPatternCandidate
{
	const char *key;
	int			next;			/* where the next '/' is looked for; -1
								 * before the key itself */
	char		name[SYNC_NAME_BUFLEN + 1];
	int16		pattern_len;
} SyncPatternCandidate;

extern void sync_pattern_candidates_init(SyncPatternCandidate *c, const char *key);
extern bool sync_pattern_next_candidate(SyncPatternCandidate *c);
extern Datum sync_pattern_candidate_array(const char *key);

extern SyncLockKind sync_parse_lock_name(const char *name);

/*
 * The kind of a lock name already checked by sync_parse_lock_name() (it
 * starts with "mtx/" or "sem/"), without checking it again.
 */
static inline SyncLockKind
sync_lock_kind(const char *name)
{
	return name[0] == 'm' ? SYNC_KIND_MUTEX : SYNC_KIND_SEMAPHORE;
}
extern bool sync_lock_is_launch_plan(const char *name);
extern void sync_check_key(const char *key, const char *what);
extern void sync_check_fair_key(const char *key);
extern void sync_check_ident(const char *value, const char *what, bool slash_ok);
extern int64 sync_interval_us(Interval *iv);

/*
 * table_lookup.c: where syncwf's tables are -- the one lookup of the
 * extension's tables in this database and its one invalidation callback.
 */

/* The extension's tables in this database (InvalidOid: not there). */
typedef struct SyncTables
{
	Oid			schema;			/* the extension's schema */
	Oid			state;			/* sync_state */
	Oid			controller;		/* sync_controller */
	Oid			limit;			/* sync_limit */
	Oid			owner;			/* owner of sync_state: the extension's */
} SyncTables;

extern const SyncTables *sync_tables(bool missing_ok);
extern Oid	sync_state_relid(bool missing_ok);
extern Oid	sync_limit_relid(void);
extern uint64 sync_tables_invalidations(void);
extern Oid	sync_launch_table_relid(const char *relname);
extern char *sync_qualified(Oid relid);

/*
 * table_rows.c: writing rows of syncwf's tables through the table access
 * method, with their index entries.
 */
extern TupleTableSlot *sync_row_slot(Relation rel, TupleTableSlot *old);
extern void sync_row_insert(Relation rel, TupleTableSlot *slot);
extern TM_Result sync_row_update(Relation rel, TupleTableSlot *old,
								 TupleTableSlot *slot, Snapshot snapshot,
								 bool wait);
extern void sync_check_serializable(TM_Result result);
extern Datum sync_interval_datum(int64 us);

/*
 * owner_statements.c: statements through SPI -- plans kept for the backend's
 * life, the search_path they run with, and running one as the tables' owner.
 */

/* A statement run by sync_exec_owned(). */
typedef struct SyncOwnedPlan
{
	const char *sql;			/* "%1$s" stands for the extension's schema */
	int			nargs;
	Oid			types[12];
	SPIPlanPtr	plan;			/* prepared, for relid */
	Oid			relid;
} SyncOwnedPlan;

extern SPIPlanPtr sync_prepare_kept(const char *sql, int nargs, Oid *types,
								    SPIPlanPtr old);
extern int	sync_search_path_restrict(void);
extern void sync_search_path_restore(int nestlevel);
extern uint64 sync_exec_owned(SyncOwnedPlan *plan, Datum *values,
							  const char *nulls, List **rows_out);

/* privileges.c: who may act on whose keyed holds. */
extern bool sync_is_admin(Oid roleid);
extern void sync_check_owner(Oid owner, const char *lock_name,
							 const char *holder);

/*
 * shared_pool.c: Shared memory that grows with use -- one DSA area, the
 * pools of numbered objects carved from it, the growable bucket arrays of
 * the hashes over them, and the cap (syncwf.max_memory).
 */

#define SYNC_SLAB_SHIFT			12
#define SYNC_SLAB_SIZE			(1 << SYNC_SLAB_SHIFT)	/* objects per slab */
#define SYNC_SLAB_MASK			(SYNC_SLAB_SIZE - 1)
#define SYNC_POOL_MAX_SLABS		4096	/* 16,777,216 objects per pool */
#define SYNC_POOL_LISTS			16

typedef enum SyncPoolId
{
	SYNC_POOL_ENTRIES = 0,		/* holds and queue entries (engine) */
	SYNC_POOL_LOCKS,			/* locks (engine) */
	SYNC_POOL_HOLDERS,			/* holder keys (keyed) */
	SYNC_POOL_GROUPS,			/* parent rows' groups (engine) */
	SYNC_NUM_POOLS
} SyncPoolId;

/*
 * What every pooled object starts with: its number, and a link by number
 * (the free list while it is free; its owner's use, such as a hash chain,
 * while it is not).
 */
typedef struct SyncPooled
{
	int32		self;
	int32		next;
} SyncPooled;

typedef void (*SyncPoolInit) (SyncPooled *obj);

/*
 * One of a pool's free lists, alone in its cache line: backends take and
 * give back objects through the list of their process id, so that
 * different backends seldom touch the same spinlock.
 */
typedef struct SyncPoolList
{
	slock_t		mutex;			/* protects head, nfree and the chain */
	int32		head;			/* first free object, or -1 */
	int32		nfree;
} SyncPoolList;

typedef union SyncPoolListPadded
{
	SyncPoolList list;
	char		pad[PG_CACHE_LINE_SIZE];
} SyncPoolListPadded;

/* Why memory could not grow. */
typedef enum SyncGrowFailure
{
	SYNC_GROW_OK = 0,
	SYNC_GROW_CAP,				/* syncwf.max_memory */
	SYNC_GROW_POOL_FULL,		/* SYNC_POOL_MAX_SLABS */
	SYNC_GROW_BUSY				/* others took every new object first */
} SyncGrowFailure;

/*
 * A hash's buckets: chains of objects by number (through SyncPooled.next),
 * in an array of the area that doubles as the hash fills (by
 * sync_buckets_grow(), called where no LWLock is held).  Protected by what
 * protects the hash; a backend caches the array's address.
 */
typedef struct SyncBuckets
{
	dsa_pointer array;			/* int32[nbuckets], -1: empty */
	uint32		nbuckets;		/* a power of two */
	uint32		count;			/* objects in the hash */
	uint32		generation;		/* bumped when the array is replaced */
	int			shift;			/* bucket of h: (h >> shift) & (nbuckets-1) */
} SyncBuckets;

typedef struct SyncBucketsCache
{
	dsa_pointer array;
	uint32		generation;
	int32	   *addr;
} SyncBucketsCache;

extern char *sync_slab_base[SYNC_NUM_POOLS][SYNC_POOL_MAX_SLABS];

extern Size sync_memory_shmem_size(void);
extern void sync_memory_shmem_request(void);
extern void sync_memory_shmem_init(void);
extern void sync_memory_shmem_done(void);
extern void sync_pool_define(SyncPoolId id, const char *name, Size objsize,
							 SyncPoolInit init);
extern char *sync_pool_map_slab(SyncPoolId id, int32 slab);
extern int32 sync_pool_alloc(SyncPoolId id, bool grow);
extern bool sync_pool_reserve(SyncPoolId id, int64 n);
extern void sync_pool_free(SyncPoolId id, SyncPooled *obj);
extern void sync_memory_report_full(SyncPoolId id);
extern void sync_pool_counts(SyncPoolId id, int64 *made, int64 *nfree);
extern Size sync_pool_objsize(SyncPoolId id);
extern void sync_memory_totals(uint64 *allocated, uint64 *cap, uint64 *refused);
extern void sync_buckets_init(SyncBuckets *b, uint32 nbuckets, int shift);
extern int32 *sync_buckets_map(const SyncBuckets *b, SyncBucketsCache *c);
extern void sync_buckets_grow(SyncBuckets *b, SyncBucketsCache *c,
							  LWLock *lock, SyncPoolId id, Size hash_offset,
							  uint32 want);

/*
 * Object n of pool 'id', whose objects are 'size' bytes: a load and a
 * multiply once its slab is mapped in this backend.
 */
static inline void *
sync_pool_object(SyncPoolId id, Size size, int32 n)
{
	char	   *base;

	Assert(n >= 0 && (n >> SYNC_SLAB_SHIFT) < SYNC_POOL_MAX_SLABS);
	base = sync_slab_base[id][n >> SYNC_SLAB_SHIFT];
	if (unlikely(base == NULL))
		base = sync_pool_map_slab(id, n >> SYNC_SLAB_SHIFT);
	return base + (Size) (n & SYNC_SLAB_MASK) * size;
}

/* The bucket array of b in this backend (c caches its address). */
static inline int32 *
sync_buckets_array(const SyncBuckets *b, SyncBucketsCache *c)
{
	if (unlikely(c->array != b->array || c->generation != b->generation))
		return sync_buckets_map(b, c);
	return c->addr;
}

/* The first object of the chain where hash code 'hash' belongs, or -1. */
static inline int32
sync_buckets_first(const SyncBuckets *b, SyncBucketsCache *c, uint32 hash)
{
	return sync_buckets_array(b, c)[(hash >> b->shift) & (b->nbuckets - 1)];
}

/*
 * Put 'obj' at the head of the chain of hash code 'hash'.  Returns the
 * objects now in the hash: more than its buckets asks for a
 * sync_buckets_grow() where no LWLock is held.
 */
static inline uint32
sync_buckets_link(SyncBuckets *b, SyncBucketsCache *c, uint32 hash,
				  SyncPooled *obj)
{
	int32	   *head = sync_buckets_array(b, c) + ((hash >> b->shift) & (b->nbuckets - 1));

	obj->next = *head;
	*head = obj->self;
	return ++b->count;
}

/*
 * Take 'obj', an object of pool 'id' ('size' bytes each) whose hash code is
 * 'hash', out of its chain: a walk of that chain, one or two objects long
 * while the buckets keep up.
 */
static inline void
sync_buckets_unlink(SyncBuckets *b, SyncBucketsCache *c, uint32 hash,
					SyncPoolId id, Size size, SyncPooled *obj)
{
	int32	   *link = sync_buckets_array(b, c) + ((hash >> b->shift) & (b->nbuckets - 1));

	while (*link != obj->self)
	{
		Assert(*link >= 0);
		link = &((SyncPooled *) sync_pool_object(id, size, *link))->next;
	}
	*link = obj->next;
	b->count--;
}

/*
 * tokens.c: Fencing tokens that never go backwards, and the atomic counters
 * that only move one way, which other files share.
 */

extern Size sync_tokens_shmem_size(void);
extern void sync_tokens_shmem_request(void);
extern void sync_tokens_shmem_init(void);
extern void sync_tokens_register_rmgr(void);
extern uint64 sync_next_token(void);
extern bool sync_tokens_confirm(uint64 token);
extern void sync_tokens_note_commit(void);
extern bool sync_commits_replicated(bool wait);
extern void sync_tokens_advance(uint64 next);
extern void sync_atomic_advance(pg_atomic_uint64 *counter, uint64 next);
extern bool sync_atomic_lower(pg_atomic_uint64 *counter, uint64 value);

/*
 * holder_wakeups.c: Waking the backends that wait for a holder's keyed
 * entries: who waits for which holder, and the wake-up sent when one of its
 * entries is granted or freed.
 */

extern Size sync_wakeups_shmem_size(void);
extern void sync_wakeups_shmem_init(void);

extern void sync_wakeup_join(Oid dbid, const char *holder);
extern void sync_wakeup_leave(void);
extern void sync_holder_changed(Oid dbid, const char *holder);

#endif							/* SYNC_CORE_CORE_H */
