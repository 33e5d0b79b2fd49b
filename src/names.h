/*-------------------------------------------------------------------------
 *
 * names.h
 *		What a valid lock name, holder key, controller name and launch-plan
 *		identifier is (names.c), and the value conversions the SQL functions
 *		share.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_NAMES_H
#define SYNC_NAMES_H

#include "common/hashfn.h"
#include "datatype/timestamp.h"

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
sync_lock_tag_hash(const SyncLockTag *tag)
{
	return hash_combine(hash_bytes_uint32((uint32) tag->dbid),
						hash_bytes((const unsigned char *) tag->name,
								   strnlen(tag->name, sizeof(tag->name))));
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
extern bool sync_lock_is_launch_plan(const char *name);
extern void sync_check_key(const char *key, const char *what);
extern void sync_check_fair_key(const char *key);
extern void sync_check_ident(const char *value, const char *what, bool slash_ok);
extern int64 sync_interval_us(Interval *iv);

#endif							/* SYNC_NAMES_H */
