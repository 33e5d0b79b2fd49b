/*-------------------------------------------------------------------------
 *
 * names.c
 *		What syncwf accepts as a name: the lock name grammar, holder keys and
 *		controller names, launch-plan identifiers, and the control-character
 *		rule they share.  The SQL constraints of syncwf's tables repeat part
 *		of it; sql/name_rules.sql checks that the two agree.  Also the
 *		conversion of interval arguments every SQL function shares.
 *
 *		lock-name = kind "/" namespace "/" key
 *		kind      = "mtx" / "sem"
 *		namespace = 1*( any byte except "/" and control characters )
 *		key       = 1*( any byte except control characters )   ; may contain "/"
 *
 * A whole name is at most SYNC_NAME_MAXLEN (260) bytes.  Control characters
 * are bytes 0x01-0x1F and 0x7F.  The limit of "sem/<namespace>/<key>" is the
 * sync_limit row named "<namespace>/<key>" (at most 256 bytes).  Holder keys
 * and controller names are at most SYNC_KEY_MAXLEN (256) bytes.  The
 * lengths are Argo's (varchar(256) names and workflow keys) for the ASCII
 * names Kubernetes gives; they are bytes, not characters, because shared
 * memory keeps every name in a buffer of that size.  A fair key is at most
 * SYNC_FAIR_KEY_MAXLEN (63) bytes, kept in every queue entry.
 *
 * Also the rule of pattern tables (sync_limit, sync_fair_weight): which
 * rows may apply to a lock, most specific first.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type_d.h"
#include "common/int.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "core/core.h"


static inline bool
sync_is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7F;
}

/*
 * Check a lock name; return its kind or raise an error that says what is
 * wrong with it (SQLSTATE 22023).
 */
SyncLockKind
sync_parse_lock_name(const char *name)
{
	const unsigned char *p = (const unsigned char *) name;
	size_t		len;
	size_t		control = SIZE_MAX;	/* the first control character */
	SyncLockKind kind;
	const char *ns;
	const char *slash = NULL;	/* the first '/' after "mtx/" or "sem/" */

	/* one pass over the name (it is checked on every call) */
	for (len = 0; p[len] != '\0'; len++)
	{
		if (unlikely(sync_is_control(p[len])) && control == SIZE_MAX)
			control = len;
		else if (p[len] == '/' && slash == NULL && len > 3)
			slash = name + len;
	}

	if (len > SYNC_NAME_MAXLEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("syncwf lock name is too long"),
				 errdetail("The name is %zu bytes long; the maximum is %d bytes.",
						   len, SYNC_NAME_MAXLEN)));

	if (control != SIZE_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("syncwf lock name contains a control character"),
				 errdetail("Byte %zu of the name is 0x%02X.",
						   control + 1, p[control]),
				 errhint("Lock names may not contain control characters such as newlines or tabs.")));

	if (strncmp(name, "mtx/", 4) == 0)
		kind = SYNC_KIND_MUTEX;
	else if (strncmp(name, "sem/", 4) == 0)
		kind = SYNC_KIND_SEMAPHORE;
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid syncwf lock name \"%s\"", name),
				 errdetail("A lock name starts with \"mtx/\" (a mutex) or \"sem/\" (a semaphore)."),
				 errhint("Write the name as mtx/<namespace>/<key> or sem/<namespace>/<key>.")));

	ns = name + 4;
	if (slash == ns)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid syncwf lock name \"%s\"", name),
				 errdetail("The namespace is empty."),
				 errhint("Write the name as %s/<namespace>/<key>.",
						 kind == SYNC_KIND_MUTEX ? "mtx" : "sem")));
	if (slash == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid syncwf lock name \"%s\"", name),
				 errdetail("The name has no key: it needs a \"/\" between the namespace and the key."),
				 errhint("Write the name as %s/<namespace>/<key>.",
						 kind == SYNC_KIND_MUTEX ? "mtx" : "sem")));
	if (slash[1] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid syncwf lock name \"%s\"", name),
				 errdetail("The key is empty."),
				 errhint("Write the name as %s/<namespace>/<key>.",
						 kind == SYNC_KIND_MUTEX ? "mtx" : "sem")));
	return kind;
}

/*
 * Is this the semaphore of a launch plan (launch_policy.c)?  Its executions
 * carry their version's own limit; the lock itself has no limit unless a
 * sync_limit row sets an overall one.
 */
bool
sync_lock_is_launch_plan(const char *name)
{
	return strncmp(name, SYNC_LAUNCH_LOCK_PREFIX, strlen(SYNC_LAUNCH_LOCK_PREFIX)) == 0;
}

/*
 * A holder key (what = "holder") or controller name (what = "controller"):
 * not empty, at most SYNC_KEY_MAXLEN bytes, no control characters.
 */
void
sync_check_key(const char *key, const char *what)
{
	if (key[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", what),
				 strcmp(what, "holder") == 0 ?
				 errhint("Use the workflow key, for example 'namespace/workflow'.") :
				 errhint("Use the controller's name, or NULL for none.")));
	if (strlen(key) > SYNC_KEY_MAXLEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is too long", what),
				 errdetail("It is %zu bytes; at most %d are allowed.",
						   strlen(key), SYNC_KEY_MAXLEN)));
	for (const char *p = key; *p; p++)
		if (sync_is_control((unsigned char) *p))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must not contain control characters", what)));
}

/*
 * A fair key: not empty, at most SYNC_FAIR_KEY_MAXLEN bytes, no control
 * characters.  NULL (no key) is the caller's: such requests share one
 * implicit key.
 */
void
sync_check_fair_key(const char *key)
{
	if (key[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fair_key must not be empty"),
				 errhint("Name the tenant, user or project the request is made for, or pass NULL for none.")));
	if (strlen(key) > SYNC_FAIR_KEY_MAXLEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fair_key is too long"),
				 errdetail("It is %zu bytes; at most %d are allowed.",
						   strlen(key), SYNC_FAIR_KEY_MAXLEN)));
	for (const char *p = key; *p; p++)
		if (sync_is_control((unsigned char) *p))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("fair_key must not contain control characters"),
					 errhint("Use printable characters only.")));
}

/* See SyncPatternCandidate in core/core.h. */
void
sync_pattern_candidates_init(SyncPatternCandidate *c, const char *key)
{
	c->key = key;
	c->next = -1;
}

bool
sync_pattern_next_candidate(SyncPatternCandidate *c)
{
	if (c->next < 0)
	{
		strlcpy(c->name, c->key, sizeof(c->name));
		c->pattern_len = 0;
		c->next = (int) strlen(c->name);
		return true;
	}
	while (c->next-- > 0)
	{
		if (c->key[c->next] != '/')
			continue;
		memcpy(c->name, c->key, c->next + 1);
		c->name[c->next + 1] = '*';
		c->name[c->next + 2] = '\0';
		c->pattern_len = (int16) (c->next + 1);
		return true;
	}
	return false;
}

/* The names of the rows that may apply to 'key', as a text[] for a query. */
Datum
sync_pattern_candidate_array(const char *key)
{
	Datum		names[SYNC_NAME_BUFLEN];
	int			n = 0;
	SyncPatternCandidate c;

	sync_pattern_candidates_init(&c, key);
	while (sync_pattern_next_candidate(&c))
		names[n++] = CStringGetTextDatum(c.name);
	return PointerGetDatum(construct_array(names, n, TEXTOID, -1, false, TYPALIGN_INT));
}

/*
 * A launch-plan identifier: not empty, no control characters; a project,
 * domain or name (slash_ok = false) has at most SYNC_IDENT_MAXLEN bytes and
 * no "/", a version or execution id at most SYNC_VERSION_MAXLEN.
 */
void
sync_check_ident(const char *value, const char *what, bool slash_ok)
{
	int			maxlen = slash_ok ? SYNC_VERSION_MAXLEN : SYNC_IDENT_MAXLEN;

	if (value[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", what)));
	if (strlen(value) > maxlen)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is too long", what),
				 errdetail("It is %zu bytes; at most %d are allowed.", strlen(value),
						   maxlen)));
	for (const char *p = value; *p; p++)
		if (sync_is_control((unsigned char) *p) || (!slash_ok && *p == '/'))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must not contain %s", what,
							*p == '/' ? "\"/\"" : "control characters")));
}

/* An interval in microseconds, saturating at PG_INT64_MAX (or -1). */
int64
sync_interval_us(Interval *iv)
{
	int64		us;

	if (pg_mul_s64_overflow((int64) iv->month, (int64) DAYS_PER_MONTH * USECS_PER_DAY, &us) ||
		pg_add_s64_overflow(us, (int64) iv->day * USECS_PER_DAY, &us) ||
		pg_add_s64_overflow(us, iv->time, &us))
	{
		/* beyond int64 microseconds (292,000 years): its sign is all we need */
		double		approx = (double) iv->month * DAYS_PER_MONTH * USECS_PER_DAY +
			(double) iv->day * USECS_PER_DAY + (double) iv->time;

		us = (approx < 0) ? -1 : PG_INT64_MAX;
	}
	return us;
}
