/*-------------------------------------------------------------------------
 *
 * names.c
 *		The lock name grammar, and its validation.
 *
 *		lock-name = kind "/" namespace "/" key
 *		kind      = "mtx" / "sem"
 *		namespace = 1*( any byte except "/" and control characters )
 *		key       = 1*( any byte except control characters )   ; may contain "/"
 *
 * A whole name is at most SYNC_NAME_MAXLEN (255) bytes.  Control characters
 * are bytes 0x01-0x1F and 0x7F.  The limit of "sem/<namespace>/<key>" is the
 * sync_limit row named "<namespace>/<key>".
 *
 *-------------------------------------------------------------------------
 */
#include "syncwf.h"


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
	size_t		len = strlen(name);
	SyncLockKind kind;
	const char *ns;
	const char *slash;

	if (len > SYNC_NAME_MAXLEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("syncwf lock name is too long"),
				 errdetail("The name is %zu bytes long; the maximum is %d bytes.",
						   len, SYNC_NAME_MAXLEN)));

	for (size_t i = 0; i < len; i++)
		if (sync_is_control((unsigned char) name[i]))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("syncwf lock name contains a control character"),
					 errdetail("Byte %zu of the name is 0x%02X.",
							   i + 1, (unsigned char) name[i]),
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
	slash = strchr(ns, '/');
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
 * Is this the semaphore of a launch plan (launch_plans.c)?  Its executions
 * carry their version's own limit; the lock itself has no limit unless a
 * sync_limit row sets an overall one.
 */
bool
sync_lock_is_launch_plan(const char *name)
{
	return strncmp(name, SYNC_LAUNCH_LOCK_PREFIX, strlen(SYNC_LAUNCH_LOCK_PREFIX)) == 0;
}
