/*-------------------------------------------------------------------------
 *
 * sql_common.c
 *		What every SQL-callable function of syncwf shares: reading and
 *		checking its arguments (the rules themselves are names.c's), the
 *		bigint[] of tokens the array forms return, and its one entry
 *		guard, sync_enter(), which checks what the function needs in one
 *		fixed order: shared memory, the database of keyed
 *		holds, administrator rights, a writable transaction, and keyed
 *		holds loaded.
 *
 * No state of its own.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "common/int.h"
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "entry/entry_internal.h"

static void
sync_require_keyed_database(void)
{
	if (!sync_keyed_database())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("keyed holds are only available in database \"%s\"",
						sync_database),
				 errdetail("syncwf keeps keyed holds, controllers and their tables in the one database named by syncwf.database."),
				 errhint("Connect to database \"%s\", or set syncwf.database in postgresql.conf and restart the server.",
						 sync_database)));
}

/* Keyed holds are written to tables: not on a standby, not read-only. */
static void
sync_require_writable(void)
{
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot change keyed holds during recovery"),
				 errhint("Keyed holds are served by the primary; after promotion this server serves them.")));
	if (XactReadOnly)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot change keyed holds in a read-only transaction")));
}

static void
sync_require_admin(const char *action)
{
	if (!sync_is_admin(GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to %s", action),
				 errhint("Only the extension's owner and members of syncwf_admin may do this.")));
}

/*
 * The entry guard: every SQL-callable function calls it once, before it
 * touches shared memory or the tables.  admin_action: the function is for
 * administrators only (see sync_is_admin); it names what they may do.
 */
void
sync_enter(int flags, const char *admin_action)
{
	sync_require_shmem();
	if (flags & SYNC_ENTER_KEYED_DB)
		sync_require_keyed_database();
	if (admin_action != NULL)
		sync_require_admin(admin_action);
	if (flags & SYNC_ENTER_WRITE)
		sync_require_writable();
	if (flags & SYNC_ENTER_LOADED)
		sync_keyed_ensure_loaded();
}

/*-------------------------------------------------------------------------
 * Arguments
 *-------------------------------------------------------------------------
 */

/*
 * Interval argument -> microseconds, saturating at PG_INT64_MAX;
 * NULL -> -1 (wait forever).
 */
int64
sync_timeout_arg(FunctionCallInfo fcinfo, int argno)
{
	int64		us;

	if (PG_NARGS() <= argno || PG_ARGISNULL(argno))
		return -1;
	us = sync_interval_us(PG_GETARG_INTERVAL_P(argno));
	if (us < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("timeout must not be negative"),
				 errhint("Pass NULL to wait until the lock is granted, or interval '0' not to wait.")));
	return us;
}

int32
sync_priority_arg(FunctionCallInfo fcinfo, int argno)
{
	if (PG_NARGS() <= argno)
		return 0;
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("priority must not be null"),
				 errhint("Omit the argument for the default priority 0.")));
	return PG_GETARG_INT32(argno);
}

/*
 * slots argument (1 when the function's SQL definition predates it); the
 * range is checked against the locks named (request.c).
 */
int32
sync_slots_arg(FunctionCallInfo fcinfo, int argno)
{
	if (PG_NARGS() <= argno)
		return 1;
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("slots must not be null"),
				 errhint("Omit the argument to take 1 slot.")));
	return PG_GETARG_INT32(argno);
}

/*
 * fair_key argument: NULL when null or when the function's SQL definition
 * predates it; otherwise checked (names.c).
 */
char *
sync_fair_key_arg(FunctionCallInfo fcinfo, int argno)
{
	char	   *key;

	if (PG_NARGS() <= argno || PG_ARGISNULL(argno))
		return NULL;
	key = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	sync_check_fair_key(key);
	return key;
}

/* Is text t exactly the C string s? */
static inline bool
sync_text_equals(const text *t, const char *s)
{
	size_t		len = strlen(s);

	return VARSIZE_ANY_EXHDR(t) == len && memcmp(VARDATA_ANY(t), s, len) == 0;
}

/*
 * mode argument: true for 'shared', false for 'exclusive' (and when the
 * function's SQL definition predates it).
 */
bool
sync_mode_arg(FunctionCallInfo fcinfo, int argno)
{
	text	   *mode;

	if (PG_NARGS() <= argno)
		return false;
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("mode must not be null"),
				 errhint("Omit the argument for an exclusive hold.")));
	/* compared in place: no copy for the common case */
	mode = PG_GETARG_TEXT_PP(argno);
	if (sync_text_equals(mode, "exclusive"))
		return false;
	if (sync_text_equals(mode, "shared"))
		return true;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown lock mode \"%s\"", text_to_cstring(mode)),
			 errhint("The modes are 'exclusive' (the default) and 'shared'.")));
	return false;				/* keep the compiler quiet */
}

char *
sync_name_arg(FunctionCallInfo fcinfo, int argno)
{
	char	   *name;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lock name must not be null")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	(void) sync_parse_lock_name(name);
	return name;
}

/* text[] argument -> validated, distinct lock names. */
char **
sync_names_arg(FunctionCallInfo fcinfo, int argno, int *nnames)
{
	ArrayType  *array;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	char	  **names;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lock names must not be null")));
	array = PG_GETARG_ARRAYTYPE_P(argno);
	if (ARR_NDIM(array) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("lock names must be a one-dimensional array")));
	deconstruct_array(array, TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &nulls, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lock names must not be empty"),
				 errhint("Pass at least one lock name.")));
	if (n > SYNC_MAX_REQUEST_LOCKS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many locks in one request"),
				 errdetail("The request names %d locks; at most %d are allowed.",
						   n, SYNC_MAX_REQUEST_LOCKS)));

	names = palloc(sizeof(char *) * n);
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("lock names must not contain null")));
		names[i] = TextDatumGetCString(elems[i]);
		(void) sync_parse_lock_name(names[i]);
		for (int j = 0; j < i; j++)
			if (strcmp(names[i], names[j]) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("lock \"%s\" appears more than once in the request",
								names[i]),
						 errhint("Name each lock once.")));
	}
	*nnames = n;
	return names;
}

/* A holder key or controller name: not empty, at most 256 bytes, no controls. */
char *
sync_key_arg(FunctionCallInfo fcinfo, int argno, const char *what, bool nullable)
{
	char	   *key;

	if (PG_ARGISNULL(argno))
	{
		if (nullable)
			return NULL;
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", what)));
	}
	key = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	sync_check_key(key, what);
	return key;
}

/*
 * A duration that is added to the current time ('what': a lease, a
 * max_pending), in microseconds: 0 for NULL (none; null_hint says so when
 * it is not positive), otherwise positive and short enough that now plus
 * it is a time a timestamptz can hold, so that the expiry stored and every
 * later read of it work.
 */
int64
sync_duration_arg(FunctionCallInfo fcinfo, int argno, const char *what,
				  const char *null_hint)
{
	int64		us;
	TimestampTz until;

	if (PG_NARGS() <= argno || PG_ARGISNULL(argno))
		return 0;
	us = sync_interval_us(PG_GETARG_INTERVAL_P(argno));
	if (us <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be positive", what),
				 errhint("%s", null_hint)));
	if (pg_add_s64_overflow(GetCurrentTimestamp(), us, &until) ||
		!IS_VALID_TIMESTAMP(until))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("%s is too long", what),
				 errdetail("Now plus the %s is past the last time a timestamptz can hold.",
						   what),
				 errhint("Give a shorter interval, or %c%s", pg_tolower((unsigned char) null_hint[0]),
						 null_hint + 1)));
	return us;
}

/* A lease: NULL for none, otherwise positive and storable. */
int64
sync_lease_arg(FunctionCallInfo fcinfo, int argno)
{
	return sync_duration_arg(fcinfo, argno, "lease",
							 "Pass NULL for a hold without a lease.");
}

/*
 * A launch-plan identifier (see sync_check_ident): project, domain and
 * name (slash_ok = false), version and execution id.
 */
char *
sync_ident_arg(FunctionCallInfo fcinfo, int argno, const char *what, bool slash_ok)
{
	char	   *v;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", what)));
	v = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	sync_check_ident(v, what, slash_ok);
	return v;
}

/* The bigint[] of n fencing tokens (the array forms' results). */
ArrayType *
sync_tokens_array(const int64 *tokens, int n)
{
	Datum	   *values = palloc(sizeof(Datum) * n);

	for (int i = 0; i < n; i++)
		values[i] = Int64GetDatum(tokens[i]);
	return construct_array(values, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
}
