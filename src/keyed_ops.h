/*-------------------------------------------------------------------------
 *
 * keyed_ops.h
 *		The operations on keyed holds (keyed_ops.c): what each SQL function
 *		of keyed holds, each trigger on their tables and each round of the
 *		worker does, over shared memory and the tables together.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_KEYED_OPS_H
#define SYNC_KEYED_OPS_H

#include "holders.h"
#include "keyed_request.h"
#include "keyed_xact.h"

/* SQLSTATE of sync_refresh() on a hold that is gone ("syncwf", class SW). */
#define ERRCODE_SYNC_HOLD_LOST	MAKE_SQLSTATE('S','W','0','0','1')

extern bool sync_keyed_try_load(bool nowait);
extern void sync_keyed_ensure_loaded(void);

extern void sync_keyed_request(SyncKeyedRequest *kr, SyncKeyedResult *results);
/* a busy claim is looked at again every 10 ms for a second */
#define SYNC_CLAIM_WAIT_MS	10
#define SYNC_CLAIM_WAITS	100
extern SyncClaimOutcome sync_keyed_claim(const char *name, const char *holder,
										 const char *controller,
										 struct SyncStateRow *row);
extern bool sync_keyed_release(const char *name, const char *holder);
extern int	sync_keyed_release_holder(const char *holder);
extern bool sync_keyed_force_release(const char *name, const char *holder);
extern TimestampTz sync_keyed_refresh(const char *name, const char *holder,
									  int64 lease_us);
extern bool sync_keyed_is_held(const char *name, const char *holder,
							   bool has_token, int64 token);
extern void sync_keyed_wait(char **names, int nnames, const char *holder,
							int64 timeout_us, int64 *tokens);
extern TimestampTz sync_keyed_heartbeat(const char *controller);
extern int	sync_keyed_forget_controller(const char *controller,
										 bool release_holds);
extern int	sync_keyed_delete(const char *name, const char *holder,
							  const char *reason);
extern int	sync_keyed_row_removed(const char *name, const char *holder,
								   int64 request_id, const char *controller,
								   const char *reason);
extern void sync_keyed_readmit(const char *name, const char *holder,
							   int32 limit, bool grant);
extern int	sync_keyed_persist_grants(bool *retry);
extern void sync_keyed_handoff(void);

/*
 * Called when a grant of a pending entry has been written to sync_state,
 * in the transaction that wrote it; set by syncwf.c at load (launch plans
 * promote the execution that got the slot).
 */
typedef void (*SyncGrantWrittenHook) (const char *name, const char *holder);
extern void sync_keyed_set_grant_written_hook(SyncGrantWrittenHook hook);

#endif							/* SYNC_KEYED_OPS_H */
