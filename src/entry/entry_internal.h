/*-------------------------------------------------------------------------
 *
 * entry/entry_internal.h
 *		What the files of entry/ share: reading arguments and the entry
 *		guard (sql_common.c).  Nothing outside entry/ includes it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_ENTRY_ENTRY_INTERNAL_H
#define SYNC_ENTRY_ENTRY_INTERNAL_H

#include "fmgr.h"
#include "utils/array.h"
#include "launch/launch.h"

/*
 * sql_common.c: What every SQL-callable function of syncwf shares: reading
 * and checking its arguments, the bigint[] of tokens the array forms return,
 * and its one entry guard.
 */

/* What sync_enter() checks, in this order after shared memory. */
#define SYNC_ENTER_KEYED_DB		0x01	/* in the database of keyed holds */
#define SYNC_ENTER_WRITE		0x02	/* not a standby, not read-only */
#define SYNC_ENTER_LOADED		0x04	/* keyed holds loaded (if this is
										 * their database) */

extern void sync_enter(int flags, const char *admin_action);

extern char *sync_name_arg(FunctionCallInfo fcinfo, int argno);
extern char **sync_names_arg(FunctionCallInfo fcinfo, int argno, int *nnames);
extern int32 sync_priority_arg(FunctionCallInfo fcinfo, int argno);
extern int32 sync_slots_arg(FunctionCallInfo fcinfo, int argno);
extern bool sync_mode_arg(FunctionCallInfo fcinfo, int argno);
extern char *sync_fair_key_arg(FunctionCallInfo fcinfo, int argno);
extern int64 sync_timeout_arg(FunctionCallInfo fcinfo, int argno);
extern char *sync_key_arg(FunctionCallInfo fcinfo, int argno, const char *what,
						  bool nullable);
extern int64 sync_duration_arg(FunctionCallInfo fcinfo, int argno,
							   const char *what, const char *null_hint);
extern int64 sync_lease_arg(FunctionCallInfo fcinfo, int argno);
extern char *sync_ident_arg(FunctionCallInfo fcinfo, int argno,
							const char *what, bool slash_ok);
extern ArrayType *sync_tokens_array(const int64 *tokens, int n);

#endif							/* SYNC_ENTRY_ENTRY_INTERNAL_H */
