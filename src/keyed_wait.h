/*-------------------------------------------------------------------------
 *
 * keyed_wait.h
 *		Waiting until a holder's keyed entries are held (keyed_wait.c), for
 *		sync_wait().
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_KEYED_WAIT_H
#define SYNC_KEYED_WAIT_H

#include "outbox.h"

/*
 * SQLSTATE of sync_wait() when the entry it waits for does not exist or
 * ends while it waits ("syncwf", class SW).
 */
#define ERRCODE_SYNC_NO_REQUEST	MAKE_SQLSTATE('S','W','0','0','2')

/* A wait for the entries of one holder for names[]. */
typedef struct SyncKeyedWait
{
	char	  **names;
	int			nnames;
	const char *holder;
	int64		timeout_us;		/* -1: none */
	TimestampTz deadline;
	bool		until_written;	/* a grant counts once sync_state has it */

	/* per name */
	SyncOutboxItem *grants;		/* its entry and request; the token once held */
	bool	   *held;			/* seen held: its end is a loss */
	bool	   *unwritten;		/* held, not yet written to sync_state */
} SyncKeyedWait;

extern void sync_keyed_wait_begin(SyncKeyedWait *w, char **names, int nnames,
								  const char *holder, int64 timeout_us,
								  bool until_written);
extern void sync_keyed_wait_held(SyncKeyedWait *w);

#endif							/* SYNC_KEYED_WAIT_H */
