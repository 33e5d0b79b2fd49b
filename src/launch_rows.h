/*-------------------------------------------------------------------------
 *
 * launch_rows.h
 *		The rows of the launch-plan tables and their events (launch_rows.c):
 *		table I/O with no knowledge of shared memory.  Rows come back as
 *		arrays of strings (NULL for SQL NULL).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_LAUNCH_ROWS_H
#define SYNC_LAUNCH_ROWS_H

#include "datatype/timestamp.h"
#include "nodes/pg_list.h"

extern List *sync_launch_execution(const char *id);
extern List *sync_launch_policy(const char *project, const char *domain,
								const char *name, const char *version);
extern bool sync_launch_tracked(const char *project, const char *domain,
								const char *name);
extern List *sync_launch_oldest_active(const char *project, const char *domain,
									   const char *name, const char *lock);
extern List *sync_launch_to_reconcile(void);
extern bool sync_launch_lock_if_free(const char *id, const char *phase);
extern char *sync_launch_next_deadline(void);
extern void sync_launch_register_row(Datum *values, const char *nulls);
extern void sync_launch_event(const char *event, const char *execution_id,
							  const char *project, const char *domain,
							  const char *name, const char *version,
							  const char *reason, const char *replaced);
extern bool sync_launch_insert_execution(const char *id, const char *project,
										 const char *domain, const char *name,
										 const char *version, const char *phase,
										 bool queued, bool terminal,
										 const char *reason, int32 priority,
										 TimestampTz created);

#endif							/* SYNC_LAUNCH_ROWS_H */
