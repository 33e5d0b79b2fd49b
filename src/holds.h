/*-------------------------------------------------------------------------
 *
 * holds.h
 *		This backend's holds (holds.c): session and transaction scope.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_HOLDS_H
#define SYNC_HOLDS_H

#include "lock_table.h"

extern bool sync_acquire_locks(char **names, int nnames, int32 priority,
							   int32 slots, bool shared, const char *fair_key,
							   SyncScope scope, bool wait, int64 timeout_us,
							   int64 *tokens);
extern bool sync_release_lock(const char *name);
extern int	sync_release_all_holds(void);

/* transaction events, called by syncwf.c */
extern void sync_holds_at_prepare(void);
extern void sync_holds_at_xact_end(void);
extern void sync_holds_at_abort(void);
extern void sync_holds_at_subabort(SubTransactionId subid);
extern void sync_holds_at_subcommit(SubTransactionId subid,
									SubTransactionId parent);

#endif							/* SYNC_HOLDS_H */
