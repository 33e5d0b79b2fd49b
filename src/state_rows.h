/*-------------------------------------------------------------------------
 *
 * state_rows.h
 *		The rows of sync_state and sync_controller (state_rows.c): table I/O
 *		with no knowledge of shared memory.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_STATE_ROWS_H
#define SYNC_STATE_ROWS_H

#include "access/htup.h"
#include "nodes/pg_list.h"
#include "utils/relcache.h"
#include "rows.h"

/* The reason of a release by its holder: no event is sent. */
#define SYNC_REASON_RELEASED	"released"
/* why the worker withdraws a request a lowered limit left too big */
#define SYNC_REASON_LIMIT_LOWERED	"limit lowered"

extern void sync_state_set_priority(const char *name, const char *holder,
									int32 priority);
extern void sync_state_set_admit_limit(const char *name, const char *holder,
									   int32 limit);
extern TimestampTz sync_state_refresh(const char *name, const char *holder,
									  int64 lease_us, bool *found);
extern bool sync_state_persist(SyncStateRow *row, bool *skipped);
extern int	sync_state_expire(List *expired);
extern int	sync_state_withdraw(List *rows, const char *reason);
extern List *sync_state_read_all(List **controllers);
extern TimestampTz sync_controller_upsert(const char *controller);
extern int	sync_controller_rows_delete(const char *controller,
										bool release_holds);

/* for the triggers on sync_state */
extern bool sync_state_writing(void);
extern const char *sync_state_delete_reason(void);
extern void sync_state_cascaded(int n);

#endif							/* SYNC_STATE_ROWS_H */
