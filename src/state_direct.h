/*-------------------------------------------------------------------------
 *
 * state_direct.h
 *		The hot path of sync_state (state_direct.c): a request's row, a
 *		release's delete, a hand-off's grant, written through the table
 *		access method; a row read for the delete trigger.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_STATE_DIRECT_H
#define SYNC_STATE_DIRECT_H

#include "access/htup.h"
#include "nodes/pg_list.h"
#include "utils/relcache.h"
#include "rows.h"

extern void sync_state_insert(SyncStateRow *row);
extern Datum sync_state_mode_datum(const char *name, bool shared);
extern List *sync_state_delete(const char *name, const char *holder);
extern bool sync_state_grant(SyncStateRow *row);
extern bool sync_state_row_of(Relation rel, HeapTuple tuple, SyncStateRow *row);

#endif							/* SYNC_STATE_DIRECT_H */
