/*-------------------------------------------------------------------------
 *
 * guc.c
 *		Every configuration parameter of syncwf.  docs/configuration.md
 *		describes each one; keep the two in step.
 *
 *-------------------------------------------------------------------------
 */
#include "syncwf.h"

#include "utils/guc.h"

/*
 * Distinct live lock names the shared lock table can hold.  The defaults fit
 * 100,000 held locks with room for every backend to wait besides.
 */
int			sync_max_locks = 110000;

/* Holds plus queue entries, over all locks. */
int			sync_max_entries = 140000;

void
sync_define_gucs(void)
{
	DefineCustomIntVariable("syncwf.max_locks",
							"Maximum number of distinct syncwf locks that can be live at once.",
							"A lock is live while it has a holder or a waiter. "
							"Each costs about 340 bytes of shared memory.",
							&sync_max_locks,
							110000,
							16,
							INT_MAX / 2,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("syncwf.max_entries",
							"Maximum number of syncwf holds and queue entries, over all locks.",
							"Each hold and each queued request for one lock takes an entry. "
							"Each costs 88 bytes of shared memory.",
							&sync_max_entries,
							140000,
							16,
							INT_MAX / 2,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	MarkGUCPrefixReserved("syncwf");
}
