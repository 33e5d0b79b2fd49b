/*-------------------------------------------------------------------------
 *
 * launch_direct.h
 *		The hot path of sync_execution (launch_direct.c): reading an
 *		execution's row and moving it to a phase.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_LAUNCH_DIRECT_H
#define SYNC_LAUNCH_DIRECT_H

/* An execution's row, as sync_execution_read() or _move() found it. */
typedef struct SyncExecutionRow
{
	char	   *project;
	char	   *domain;
	char	   *name;
	char	   *version;
	char	   *phase;
	Oid			owner;			/* InvalidOid if NULL */
} SyncExecutionRow;

extern bool sync_execution_read(const char *id, SyncExecutionRow *row);
extern bool sync_execution_move(const char *id, const char *from,
								const char *phase, bool terminal,
								bool set_reason, const char *reason,
								SyncExecutionRow *row);

#endif							/* SYNC_LAUNCH_DIRECT_H */
