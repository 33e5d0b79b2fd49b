/*-------------------------------------------------------------------------
 *
 * view_snapshots.c
 *		What the monitoring views (sync_locks, sync_holders, sync_waiters)
 *		show: copies of the lock table and its entries in this database,
 *		made under every partition lock (shared, in order), so that the
 *		views build their rows with no lock held; a waiter's reason
 *		(sync_wait_reason()) is worked out in the same snapshot.
 *
 * No state of its own.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "keyed/keyed_internal.h"

/*
 * Why pending entry e waits (the engine's sync_wait_reason()), in row:
 * its blockers as pids of backends and holder keys.  Every partition held.
 */
static void
sync_copy_reason(SyncEntry *e, EntryRow *row)
{
	SyncWhy		why;

	sync_wait_reason(e, &why);
	row->waiting_for = why.reason;
	row->waiting_row = why.row;
	row->estimate_us = why.estimate_us;
	row->nblocking_pids = row->nblocking_holders = 0;
	row->blocking_pids = palloc(sizeof(int32) * Max(why.nblockers, 1));
	row->blocking_holders = palloc(sizeof(char *) * Max(why.nblockers, 1));
	for (int i = 0; i < why.nblockers; i++)
	{
		SyncEntry  *b = why.blockers[i];

		if (b->scope == SYNC_SCOPE_KEYED)
			row->blocking_holders[row->nblocking_holders++] =
				pstrdup(sync_entry_holder(b)->tag.key);
		else
			row->blocking_pids[row->nblocking_pids++] = b->pid;
	}
}

static int
sync_copy_entries(SyncEntryList *list, EntryRow *rows, int nrows, const char *name,
				  bool queued)
{
	int			position = 0;

	sync_elist_foreach(e, list, lock_link)
	{
		EntryRow   *row = &rows[nrows++];

		row->name = name;
		row->state = e->state;
		row->scope = e->scope;
		row->pid = e->pid;
		row->priority = e->base_priority;
		row->effective_priority = e->priority;
		row->position = queued ? ++position : 0;
		row->nlocks = e->nlocks;
		row->slots = e->slots;
		row->passes = e->passes;
		row->fair_weight = e->fair_weight;
		row->fair_key = e->fair_key[0] ? pstrdup(e->fair_key) : NULL;
		row->shared = e->shared;
		row->kind = sync_entry_lock(e)->kind;
		row->token = e->token;
		row->since = e->since;
		row->holder = NULL;
		row->controller = NULL;
		row->lease_expires = 0;
		if (e->scope == SYNC_SCOPE_KEYED)
		{
			row->holder = pstrdup(sync_entry_holder(e)->tag.key);
			if (e->controller >= 0)
				row->controller = pstrdup(sync_controller_name(e->controller));
			row->lease_expires = e->lease_expires;
		}
		row->waiting_for = NULL;
		if (e->state != SYNC_ENTRY_HELD)
			sync_copy_reason(e, row);
	}
	return nrows;
}

/*
 * Every live lock of this database (cached locks, which have no
 * holder and no waiter, are not shown).  Returns how many; *rows is
 * palloc'd.
 */
int
sync_status_locks(LockRow **rows_out)
{
	uint32		all = SYNC_ALL_PARTITIONS;
	SyncLiveIter it;
	LockRow    *rows;
	int			nrows = 0;
	int			maxrows = 0;
	TimestampTz now;
	char		parent[SYNC_NAME_BUFLEN];

	now = GetCurrentTimestamp();
	sync_lock_partitions(all, LW_SHARED);
	sync_foreach_live_lock(it)
		maxrows++;
	rows = palloc_extended(sizeof(LockRow) * Max(maxrows, 1), MCXT_ALLOC_HUGE);
	sync_foreach_live_lock(it)
	{
		SyncLock   *lock = sync_live_lock(it);
		LockRow    *row;

		if (lock->tag.dbid != MyDatabaseId)
			continue;
		row = &rows[nrows++];
		row->name = pstrdup(lock->tag.name);
		row->kind = lock->kind;
		/* (a launch plan's lock without an overall limit shows none) */
		row->limit = (lock->limit_defined && sync_lock_slots(lock) != PG_INT32_MAX) ?
			sync_lock_slots(lock) : -1;
		row->nheld = lock->nheld;
		row->slots_held = lock->slots_held;
		row->rate_tokens = -1;
		row->rate_next_refill = 0;
		if (lock->rate_limit > 0)
			row->rate_tokens = sync_rate_tokens(lock, now, &row->rate_next_refill);
		row->nwaiting = lock->nwaiting + lock->ndormant;
		row->limit_row = sync_limit_row_name(lock);
		row->max_waiters = (row->limit_row != NULL) ? lock->max_waiters : -1;
		row->parent_row = NULL;
		if (sync_lock_group_info(lock, parent, &row->parent_limit,
								 &row->parent_slots_held))
			row->parent_row = pstrdup(parent);
		row->guarantee = lock->guarantee;
	}
	sync_unlock_partitions(all);
	*rows_out = rows;
	return nrows;
}

/*
 * Every hold and queue entry of this database: holders, then the queue in
 * order, then entries of inactive controllers, lock by lock.  Returns how
 * many; *rows is palloc'd.
 */
int
sync_status_entries(EntryRow **rows_out)
{
	uint32		all = SYNC_ALL_PARTITIONS;
	SyncLiveIter it;
	EntryRow   *rows;
	int			nrows = 0;
	int			maxrows;

	sync_lock_partitions(all, LW_SHARED);
	/* every entry belongs to a live lock, so this bounds the row count */
	maxrows = Max(sync_entries_in_use(), 1);
	rows = palloc_extended(sizeof(EntryRow) * maxrows, MCXT_ALLOC_HUGE);
	sync_foreach_live_lock(it)
	{
		SyncLock   *lock = sync_live_lock(it);
		char	   *name;

		if (lock->tag.dbid != MyDatabaseId)
			continue;
		name = pstrdup(lock->tag.name);
		nrows = sync_copy_entries(&lock->holders, rows, nrows, name, false);
		nrows = sync_copy_entries(&lock->waiters, rows, nrows, name, true);
		nrows = sync_copy_entries(&lock->dormant, rows, nrows, name, false);
	}
	sync_unlock_partitions(all);
	*rows_out = rows;
	return nrows;
}
