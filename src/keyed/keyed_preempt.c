/*-------------------------------------------------------------------------
 *
 * keyed_preempt.c
 *		The worker's step of preemption (engine/preemption.c says who is
 *		preempted and why): mark the victims the engine chooses, write
 *		their rows and send the "preempt" notifications, in the worker's
 *		transaction; count them at its commit, unmark them at its abort.
 *
 * Locking: the choice is made under holders_lock (shared: no keyed entry
 * is freed meanwhile) and every partition lock, exclusive, which are
 * released before any row is written.  The rows are written with
 * FOR UPDATE SKIP LOCKED: the worker never waits for a client's
 * transaction; a victim whose row is locked is unmarked, and its lock
 * looked at again in a later round.  The end of a grace is the lease
 * expiry's (launch/reconcile.c), which announces it as "preempted".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "keyed/keyed_internal.h"

/* A victim as the worker writes it. */
typedef struct KeyedVictim
{
	SyncPreemption p;
	SyncStateRow row;			/* name, holder, controller, token */
	KeyedOp    *op;				/* its PREEMPT operation */
} KeyedVictim;

/*
 * The victims the engine chooses now, marked in shared memory, with what
 * writing their rows takes.
 */
static List *
sync_keyed_choose_victims(TimestampTz now)
{
	List	   *victims;
	List	   *result = NIL;
	ListCell   *lc;

	LWLockAcquire(sync_holders_lock(), LW_SHARED);
	sync_lock_partitions(SYNC_ALL_PARTITIONS, LW_EXCLUSIVE);
	victims = sync_preempt_choose(now);
	foreach(lc, victims)
	{
		SyncPreemption *p = (SyncPreemption *) lfirst(lc);
		SyncEntry  *e = p->victim;
		KeyedVictim *v = palloc0(sizeof(KeyedVictim));

		v->p = *p;
		v->row.name = pstrdup(sync_entry_lock(e)->tag.name);
		v->row.holder = pstrdup(sync_entry_holder(e)->tag.key);
		v->row.controller = (e->controller >= 0) ?
			pstrdup(sync_controller_name(e->controller)) : NULL;
		v->row.token = (int64) e->token;
		result = lappend(result, v);
	}
	sync_unlock_partitions(SYNC_ALL_PARTITIONS);
	LWLockRelease(sync_holders_lock());
	list_free_deep(victims);
	return result;
}

/*
 * A preemption this process marked is over: written and committed
 * ('committed': counted in sync_lock_stats), or not to be (its row could
 * not be written, or the transaction aborted: unmarked, and its lock
 * looked at again later).  Never fails (called at commit and abort).
 */
void
sync_keyed_preempt_end(SyncEntry *e, uint64 request_id, TimestampTz old_lease,
					   bool committed)
{
	if (e == NULL)
		return;					/* undone already */
	LWLockAcquire(sync_holders_lock(), LW_SHARED);
	if (sync_keyed_entry_is(e, request_id))
	{
		LWLock	   *partition = sync_partition_lock(sync_entry_lock(e)->hashcode);

		LWLockAcquire(partition, LW_EXCLUSIVE);
		if (committed)
			sync_preempt_committed(e);
		else
			sync_preempt_undo(e, old_lease, true);
		LWLockRelease(partition);
	}
	LWLockRelease(sync_holders_lock());
}

/*
 * The worker's step: preempt the holds that waiters noted since the last
 * round need.  Returns how many were preempted; *retry is set if a row
 * was locked (a round soon looks again).
 */
int
sync_keyed_preempt(TimestampTz now, bool *retry)
{
	List	   *victims;
	ListCell   *lc;
	int			n = 0;

	*retry = false;
	if (!sync_preempt_wanted())
		return 0;
	victims = sync_keyed_choose_victims(now);
	/* first recorded, all of them: an error below unmarks them at abort */
	foreach(lc, victims)
	{
		KeyedVictim *v = (KeyedVictim *) lfirst(lc);

		v->op = sync_keyed_xact_preempted(v->p.victim, v->p.request_id, v->p.old_lease);
	}
	foreach(lc, victims)
	{
		KeyedVictim *v = (KeyedVictim *) lfirst(lc);

		if (sync_state_preempt(&v->row, v->p.deadline))
			n++;
		else
		{
			sync_keyed_preempt_end(v->p.victim, v->p.request_id, v->p.old_lease, false);
			v->op->entry = NULL;
			*retry = true;
		}
	}
	return n;
}
