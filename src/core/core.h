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
