/*-------------------------------------------------------------------------
 *
 * privileges.c
 *		Who may act on whose keyed holds: administrators of keyed holds
 *		(superusers, the extension's owner, members of syncwf_admin), and
 *		the check that a role may release or refresh an entry.
 *
 * No state.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/acl.h"

#include "core/core.h"

/* May this role administer keyed holds (force releases, forget controllers)? */
bool
sync_is_admin(Oid roleid)
{
	Oid			admin = get_role_oid("syncwf_admin", true);

	return superuser_arg(roleid) ||
		has_privs_of_role(roleid, sync_tables(false)->owner) ||
		(OidIsValid(admin) && has_privs_of_role(roleid, admin));
}

/* A role may act on a keyed entry it (or a role it belongs to) requested. */
void
sync_check_owner(Oid owner, const char *lock_name, const char *holder)
{
	Oid			me = GetUserId();

	if (owner == me || has_privs_of_role(me, owner) || sync_is_admin(me))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for keyed hold \"%s\" of holder \"%s\"",
					lock_name, holder),
			 errdetail("It was requested by role \"%s\".",
					   GetUserNameFromId(owner, true) ? GetUserNameFromId(owner, true) : "?"),
			 errhint("Only that role, its members, and members of syncwf_admin may release or refresh it.")));
}

