/*-------------------------------------------------------------------------
 *
 * keyed_xact.h
 *		What a transaction did to keyed holds and controllers, applied at
 *		its commit (keyed_xact.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_KEYED_XACT_H
#define SYNC_KEYED_XACT_H

#include "holders.h"
#include "rows.h"

/* recording */
extern void sync_keyed_xact_created(SyncEntry **entries, int nentries,
									uint64 request_id);
extern void sync_keyed_xact_row_deleted(const char *name, const char *holder,
										uint64 request_id, SyncKeyedInfo *info);
extern void sync_keyed_xact_resort(SyncEntry *first, uint64 request_id,
								   int32 priority);
extern bool sync_keyed_xact_priority(uint64 request_id, int32 *priority);
extern void sync_keyed_xact_truncated(void);
extern void sync_keyed_xact_refresh(SyncEntry *entry, uint64 request_id,
									int64 lease_us, TimestampTz expires);
/* What a claim of a keyed entry found (sync_keyed_xact_claim). */
typedef enum SyncClaimOutcome
{
	SYNC_CLAIM_GRANTED,			/* granted now, for this transaction */
	SYNC_CLAIM_HELD,			/* held already */
	SYNC_CLAIM_BUSY,			/* cannot be granted now */
	SYNC_CLAIM_MISSING			/* no such entry */
} SyncClaimOutcome;

extern SyncClaimOutcome sync_keyed_xact_claim(const char *name,
											  const char *holder,
											  SyncKeyedInfo *info,
											  TimestampTz *granted_at);
extern bool sync_keyed_unwritten_grants(const char *name);
extern void sync_keyed_xact_persisted(SyncEntry *entry, uint64 request_id,
									  uint64 token);
extern void sync_keyed_xact_controller(const char *controller, bool deleted,
									   TimestampTz at);
extern void sync_keyed_wake_at_commit(void);

/*
 * A hand-off reserved at pre-commit (sync_keyed_xact_handoffs()): the
 * grant its waiter's row must show, to be written in this transaction.
 */
typedef struct SyncHandoff
{
	SyncStateRow row;
	void	   *op;				/* keyed_xact.c's record of the release */
} SyncHandoff;

extern bool sync_keyed_xact_has_releases(void);
extern List *sync_keyed_xact_handoffs(void);
extern void sync_keyed_xact_handoff_failed(SyncHandoff *h);

/* transaction events, called by syncwf.c */
extern bool sync_keyed_xact_pending(void);
extern void sync_keyed_xact_at_commit(void);
extern void sync_keyed_xact_at_abort(void);
extern void sync_keyed_xact_at_subabort(SubTransactionId subid);
extern void sync_keyed_xact_at_subcommit(SubTransactionId subid,
										 SubTransactionId parent);

#endif							/* SYNC_KEYED_XACT_H */
