/*-------------------------------------------------------------------------
 *
 * launch_rows.h
 *		The rarer statements on the launch-plan tables (launch_rows.c):
 *		table I/O with no knowledge of shared memory.  Rows come back as
 *		arrays of strings (NULL for SQL NULL).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_LAUNCH_ROWS_H
#define SYNC_LAUNCH_ROWS_H

#include "datatype/timestamp.h"
#include "nodes/pg_list.h"

extern bool sync_launch_tracked(const char *project, const char *domain,
								const char *name);
extern List *sync_launch_oldest_active(const char *project, const char *domain,
									   const char *name, const char *lock);
extern List *sync_launch_to_reconcile(void);
extern bool sync_launch_lock_if_free(const char *id, const char *phase);
extern char *sync_launch_next_deadline(void);
extern void sync_launch_register_row(Datum *values, const char *nulls);

#endif							/* SYNC_LAUNCH_ROWS_H */
