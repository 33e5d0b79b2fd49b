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

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

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

