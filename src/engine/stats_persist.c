/*-------------------------------------------------------------------------
 *
 * stats_persist.c
 *		Per-lock statistics across a clean restart, on PostgreSQL 18 and
 *		later: stats.c's rows saved as custom cumulative statistics.
 *
 * The counters live in stats.c's shared memory, where counting costs a few
 * atomics; they only pass through the cumulative statistics system
 * (pgstat) when the server stops and starts.  Two kinds of statistics,
 * registered at load (from shared_preload_libraries, which _PG_init
 * requires anyway):
 *
 *	- SYNC_PGSTAT_KIND_ROWS (27, "syncwf_lock_stats"), variable-numbered:
 *	  one entry per row of stats.c, its data a SyncStatsSaved (the row's
 *	  database and name, its counters and histogram, its reset time), keyed
 *	  by the row's database and a 64-bit hash of its name;
 *	- SYNC_PGSTAT_KIND_SAVED (28, "syncwf_lock_stats_saved"),
 *	  fixed-numbered: the format of the saved rows and their count.
 *
 * Saving.  At a clean shutdown the checkpointer's last act is
 * pgstat_write_statsfile(), which builds the snapshot of every
 * fixed-numbered kind and writes it, then walks pgstat's shared hash and
 * writes every entry.  The snapshot callback of SYNC_PGSTAT_KIND_SAVED is
 * the hook: when pgStatLocal.shmem->is_shutdown is set (then and only
 * then), it inserts one entry of SYNC_PGSTAT_KIND_ROWS per row into the
 * shared hash, as the reader of the file does (straight into the hash: no
 * entry reference may be taken once is_shutdown is set), and the walk that
 * follows writes them out.  Anywhere else (a backend building a snapshot
 * of every kind) it only copies the small fixed data.
 *
 * Restoring.  At the next start the startup process reads the file back
 * into pgstat's shared memory; the first process that uses stats.c's rows
 * calls the restore hook set here, which moves every entry of
 * SYNC_PGSTAT_KIND_ROWS into stats.c's rows and drops it, in one pass over
 * the shared hash (pgstat_drop_matching_entries()).  So the entries only
 * exist from a start to the first use of the rows, and during a shutdown.
 *
 * Why one entry per row and not one fixed-numbered kind holding every row:
 * pgstat reads a fixed-numbered kind back by the size it has at
 * registration, and discards the whole file, its own statistics too, when
 * an entry does not read.  The rows' number depends on
 * syncwf.stats_max_locks, which may change between two starts (and up to
 * a million rows of 1.8 kB would be a second copy of that size in shared
 * memory).  An entry per row, of a size that never changes
 * (SyncStatsSaved), reads back whatever syncwf.stats_max_locks is, and
 * whatever counters a later build adds; rows that do not fit any more are
 * dropped, with a LOG line.
 *
 * After a crash or an immediate shutdown PostgreSQL discards the file
 * (pgstat_discard_stats()), and so every row starts from zero, as its own
 * statistics do.
 *
 * The IDs: 24 is PGSTAT_KIND_EXPERIMENTAL, 25 and 26 are the test module
 * injection_points'; 27 and 28 are this extension's.  Another preloaded
 * extension that takes one of them stops the server at start ("already
 * registered").
 *
 * Before 18, sync_stats_persist_init() does nothing, and the rows start
 * from zero at every start.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "engine/engine_internal.h"

#ifdef SYNC_HAVE_CUSTOM_STATS

#include "common/hashfn.h"
#include "lib/dshash.h"
#include "utils/dsa.h"
#include "utils/pgstat_internal.h"


#define SYNC_PGSTAT_KIND_ROWS	27
#define SYNC_PGSTAT_KIND_SAVED	28

/* An entry of SYNC_PGSTAT_KIND_ROWS in pgstat's shared hash. */
typedef struct SyncStatsSavedEntry
{
	PgStatShared_Common header;
	SyncStatsSaved row;
} SyncStatsSavedEntry;

/* The data of SYNC_PGSTAT_KIND_SAVED. */
typedef struct SyncStatsSavedFile
{
	uint32		format;			/* SYNC_STATS_SAVED_FORMAT of the rows */
	uint32		nrows;			/* how many were saved */
} SyncStatsSavedFile;

static void sync_stats_saved_init_shmem(void *stats);
static void sync_stats_saved_reset_all(TimestampTz ts);
static void sync_stats_saved_snapshot(void);

static const PgStat_KindInfo sync_stats_rows_kind = {
	.name = "syncwf_lock_stats",
	.fixed_amount = false,
	.accessed_across_databases = false,
	.write_to_file = true,
	.shared_size = sizeof(SyncStatsSavedEntry),
	.shared_data_off = offsetof(SyncStatsSavedEntry, row),
	.shared_data_len = sizeof(SyncStatsSaved),
	.pending_size = 0,
};

static const PgStat_KindInfo sync_stats_saved_kind = {
	.name = "syncwf_lock_stats_saved",
	.fixed_amount = true,
	.write_to_file = true,
	.shared_size = sizeof(SyncStatsSavedFile),
	.shared_data_off = 0,
	.shared_data_len = sizeof(SyncStatsSavedFile),
	.init_shmem_cb = sync_stats_saved_init_shmem,
	.reset_all_cb = sync_stats_saved_reset_all,
	.snapshot_cb = sync_stats_saved_snapshot,
};

static void
sync_stats_saved_init_shmem(void *stats)
{
	memset(stats, 0, sizeof(SyncStatsSavedFile));
}

/*
 * After a crash, or a file that could not be read: pgstat drops every
 * entry, so there are no rows of any format left.  (No SQL function
 * resets a custom kind.)
 */
static void
sync_stats_saved_reset_all(TimestampTz ts)
{
	memset(pgstat_get_custom_shmem_data(SYNC_PGSTAT_KIND_SAVED), 0,
		   sizeof(SyncStatsSavedFile));
}

/* One row into pgstat's shared hash, at shutdown; counts a failure. */
static void
sync_stats_save_entry(const SyncStatsSaved *saved, void *arg)
{
	int		   *failed = (int *) arg;
	PgStat_HashKey key;
	PgStatShared_HashEntry *entry;
	PgStatShared_Common *header;
	bool		found;

	memset(&key, 0, sizeof(key));
	key.kind = SYNC_PGSTAT_KIND_ROWS;
	key.dboid = saved->tag.dbid;
	key.objid = hash_bytes_extended((const unsigned char *) saved->tag.name,
									(int) strlen(saved->tag.name), 0);
	entry = dshash_find_or_insert(pgStatLocal.shared_hash, &key, &found);
	if (found)
	{
		/* two names of one database with one 64-bit hash */
		dshash_release_lock(pgStatLocal.shared_hash, entry);
		(*failed)++;
		return;
	}
	header = pgstat_init_entry(SYNC_PGSTAT_KIND_ROWS, entry);
	if (header == NULL)
	{
		/* out of memory: no entry without its data */
		dshash_delete_entry(pgStatLocal.shared_hash, entry);
		(*failed)++;
		return;
	}
	memcpy(pgstat_get_entry_data(SYNC_PGSTAT_KIND_ROWS, header), saved,
		   sizeof(SyncStatsSaved));
	dshash_release_lock(pgStatLocal.shared_hash, entry);
}

/*
 * The snapshot of SYNC_PGSTAT_KIND_SAVED: at a clean shutdown, where the
 * rows are saved (see the opening comment); elsewhere a copy of what the
 * last start read.
 */
static void
sync_stats_saved_snapshot(void)
{
	SyncStatsSavedFile *snap =
		pgstat_get_custom_snapshot_data(SYNC_PGSTAT_KIND_SAVED);
	int			failed = 0;
	int			n;

	memcpy(snap, pgstat_get_custom_shmem_data(SYNC_PGSTAT_KIND_SAVED),
		   sizeof(SyncStatsSavedFile));
	if (!pgStatLocal.shmem->is_shutdown)
		return;

	/*
	 * -1: nothing used the rows since the start, so the entries it read are
	 * still in the hash and are written again as they are, under the same
	 * format and count.
	 */
	n = sync_stats_save(sync_stats_save_entry, &failed);
	if (n < 0)
		return;
	snap->format = SYNC_STATS_SAVED_FORMAT;
	snap->nrows = (uint32) (n - failed);
	if (failed > 0)
		ereport(LOG,
				(errmsg("syncwf could not save %d of its %d per-lock statistics rows",
						failed, n)));
}

typedef struct SyncStatsRestoreCounts
{
	bool		keep;			/* the rows are of this build's format */
	int			restored;
	int			dropped;
} SyncStatsRestoreCounts;

/* pgstat_drop_matching_entries(): restore an entry of ours, then drop it. */
static bool
sync_stats_restore_entry(PgStatShared_HashEntry *entry, Datum arg)
{
	SyncStatsRestoreCounts *counts = (SyncStatsRestoreCounts *) DatumGetPointer(arg);
	PgStatShared_Common *header;

	if (entry->key.kind != SYNC_PGSTAT_KIND_ROWS)
		return false;
	header = dsa_get_address(pgStatLocal.dsa, entry->body);
	if (counts->keep &&
		sync_stats_restore_row(pgstat_get_entry_data(SYNC_PGSTAT_KIND_ROWS,
													 header)))
		counts->restored++;
	else
		counts->dropped++;
	return true;
}

/* stats.c's restore hook: the rows saved at the last clean shutdown. */
static void
sync_stats_restore_saved(void)
{
	SyncStatsSavedFile *file =
		pgstat_get_custom_shmem_data(SYNC_PGSTAT_KIND_SAVED);
	SyncStatsRestoreCounts counts = {0};

	counts.keep = (file->format == SYNC_STATS_SAVED_FORMAT);
	pgstat_drop_matching_entries(sync_stats_restore_entry,
								 PointerGetDatum(&counts));
	if (counts.restored > 0 || counts.dropped > 0)
		ereport(LOG,
				(errmsg("syncwf restored %d per-lock statistics rows saved at the last shutdown",
						counts.restored),
				 counts.dropped > 0 ?
				 errdetail("%d saved rows were dropped: of another format (%u), "
						   "or beyond syncwf.stats_max_locks.",
						   counts.dropped, file->format) : 0));
}

/* _PG_init: the two kinds, and stats.c's restore hook. */
void
sync_stats_persist_init(void)
{
	pgstat_register_kind(SYNC_PGSTAT_KIND_ROWS, &sync_stats_rows_kind);
	pgstat_register_kind(SYNC_PGSTAT_KIND_SAVED, &sync_stats_saved_kind);
	sync_stats_set_restore_hook(sync_stats_restore_saved);
}

#else							/* !SYNC_HAVE_CUSTOM_STATS */

/* Before 18 the rows are in shared memory only. */
void
sync_stats_persist_init(void)
{
}

#endif							/* SYNC_HAVE_CUSTOM_STATS */
