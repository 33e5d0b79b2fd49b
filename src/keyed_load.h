/*-------------------------------------------------------------------------
 *
 * keyed_load.h
 *		Keyed holds and shared memory in bulk (keyed_load.c): the rebuild
 *		from rows of sync_state, and the worker's scans.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_KEYED_LOAD_H
#define SYNC_KEYED_LOAD_H

#include "nodes/pg_list.h"
#include "outbox.h"
#include "rows.h"

extern void sync_keyed_install(List *rows, List *controllers, Oid limit_relid);
extern List *sync_keyed_unpersisted(void);
extern List *sync_keyed_expired(TimestampTz now, TimestampTz *next);
extern List *sync_keyed_unfit(bool *retry);
extern bool sync_keyed_grant_info(SyncOutboxItem *item, SyncStateRow *row);
extern void sync_keyed_set_admit_limit(const char *name, const char *holder,
									   int32 limit, bool grant);

#endif							/* SYNC_KEYED_LOAD_H */
