/*-------------------------------------------------------------------------
 *
 * keyed_xact.c
 *		What a transaction did to keyed holds and controllers, applied when
 *		it commits and undone when it (or a savepoint) aborts: requests it
 *		made, rows of sync_state it deleted (releases), new priorities and
 *		lease expiries, grants the worker wrote, a TRUNCATE, heartbeats and
 *		deleted controllers; and, at pre-commit, the hand-off of each
 *		release of a held entry.  keyed_xact_record.c records what the
 *		transaction does as it goes.  See holder_table.c for how shared
 *		memory and the table are kept in step.
 *
 * This file owns the record, sync_keyed_xact (keyed_internal.h): its lists
 * are backend-local, in TopTransactionContext, and forgotten at commit and
 * abort.  Applying them takes holders_lock and partition locks
 * (holder_table.c, lock_table.c) and controllers_lock (controllers.c) in
 * that module's order.  syncwf.c calls the sync_keyed_xact_at_* functions
 * from its transaction callbacks.
 *
 * Hand-offs.  At pre-commit, each release of a held entry reserves the
 * waiter that the grant pass would give its slot to
 * (sync_keyed_xact_handoffs(): reserved_xid, under holders_lock and the
 * partition, both exclusive), with the fencing token and grant time it
 * will have; the engine (keyed_ops.c) writes that grant to sync_state and
 * queues its NOTIFY in this transaction, or gives the reservation back if
 * the row is locked.  At commit the slot passes straight to the reserved
 * waiter (sync_handoff_grant()); at abort the reservation is dropped and
 * the grant pass runs, so a slot freed meanwhile is not left idle.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "keyed/keyed_internal.h"

/* What this transaction did (recorded by keyed_xact_record.c). */
SyncKeyedXact sync_keyed_xact = {NIL, NIL, InvalidTransactionId, false};

/*-------------------------------------------------------------------------
 * Hand-offs at pre-commit
 *-------------------------------------------------------------------------
 */

/*
 * The grant of a hand-off, as its row must read: the waiter's name,
 * holder, controller and lease with the reserved token and grant time.
 */
static SyncHandoff *
sync_handoff_row(KeyedOp *op)
{
	SyncEntry  *next = op->next;
	SyncHandoff *h = palloc0(sizeof(SyncHandoff));

	h->op = op;
	h->row.name = pstrdup(sync_entry_lock(next)->tag.name);
	h->row.holder = pstrdup(sync_entry_holder(next)->tag.key);
	h->row.controller = (next->controller >= 0) ?
		pstrdup(sync_controller_name(next->controller)) : NULL;
	h->row.held = true;
	h->row.token = (int64) op->token;
	h->row.granted_at = op->at;
	h->row.lease_expires = (next->lease_us > 0) ? op->at + next->lease_us : 0;
	h->row.request_id = (int64) next->request_id;
	return h;
}

/*
 * Reserve the waiter that the slot of released entry op->entry goes to, if
 * it is a committed keyed request for this lock alone that nobody else is
 * changing; NULL if there is none.
 */
static SyncHandoff *
sync_reserve_next(KeyedOp *op)
{
	SyncEntry  *e = op->entry;
	SyncHandoff *h = NULL;

	LWLockAcquire(sync_holders_lock(), LW_EXCLUSIVE);
	if (sync_keyed_entry_is(e, op->request_id) &&
		e->release_xid == sync_keyed_xact.xid)
	{
		LWLock	   *partition = sync_partition_lock(sync_entry_lock(e)->hashcode);

		LWLockAcquire(partition, LW_EXCLUSIVE);
		if (e->state == SYNC_ENTRY_HELD)
		{
			SyncEntry  *next = sync_queue_handoff_candidate(e);

			if (next != NULL && next->scope == SYNC_SCOPE_KEYED &&
				!TransactionIdIsValid(next->created_xid) &&
				!TransactionIdIsValid(next->release_xid) &&
				!TransactionIdIsValid(next->reserved_xid))
			{
				Assert(next->nlocks == 1 && !next->claim);
				op->next = next;
				op->next_request_id = next->request_id;
				op->token = sync_next_token();
				op->at = GetCurrentTimestamp();
				next->reserved_xid = sync_keyed_xact.xid;
			}
		}
		/* the reservation is recorded: an error now is undone at abort */
		if (op->next != NULL)
			h = sync_handoff_row(op);
		LWLockRelease(partition);
	}
	LWLockRelease(sync_holders_lock());
	return h;
}

/*
 * Pre-commit: reserve the hand-off of every release of a held entry not
 * looked at yet, and return the grants to write (SyncHandoff *).  The
 * caller writes each, or gives it back with sync_keyed_xact_handoff_failed();
 * writing may release more (a launch plan's promotion), so it calls again
 * until the list is empty.
 */
List *
sync_keyed_xact_handoffs(void)
{
	ListCell   *lc;
	List	   *handoffs = NIL;

	foreach(lc, sync_keyed_xact.ops)
	{
		KeyedOp    *op = (KeyedOp *) lfirst(lc);
		SyncHandoff *h;

		if (op->kind != KEYED_OP_RELEASE || op->handoff_tried)
			continue;
		op->handoff_tried = true;
		if ((h = sync_reserve_next(op)) != NULL)
			handoffs = lappend(handoffs, h);
	}
	return handoffs;
}

/* Has this transaction released an entry whose hand-off is not tried? */
bool
sync_keyed_xact_has_releases(void)
{
	ListCell   *lc;

	foreach(lc, sync_keyed_xact.ops)
	{
		KeyedOp    *op = (KeyedOp *) lfirst(lc);

		if (op->kind == KEYED_OP_RELEASE && !op->handoff_tried)
			return true;
	}
	return false;
}

/*
 * Is op->next still the waiter this transaction reserved (the same request,
 * still reserved by it)?  Caller holds holders_lock.
 */
static bool
sync_reservation_stands(KeyedOp *op)
{
	return op->next != NULL &&
		sync_keyed_entry_is(op->next, op->next_request_id) &&
		op->next->reserved_xid == sync_keyed_xact.xid;
}

/*
 * Give a reservation back: the waiter is queued as before, and the grant
 * pass runs for any slot freed meanwhile (it passed over the waiter).
 */
static void
sync_unreserve(KeyedOp *op)
{
	SyncEntry  *next = op->next;

	LWLockAcquire(sync_holders_lock(), LW_EXCLUSIVE);
	if (sync_reservation_stands(op))
	{
		LWLock	   *partition = sync_partition_lock(sync_entry_lock(next)->hashcode);

		LWLockAcquire(partition, LW_EXCLUSIVE);
		next->reserved_xid = InvalidTransactionId;
		if (next->state == SYNC_ENTRY_PENDING)
			sync_grant_waiters(sync_entry_lock(next));
		LWLockRelease(partition);
	}
	op->next = NULL;
	LWLockRelease(sync_holders_lock());
	sync_grant_deferred();
}

/*
 * The grant of a hand-off could not be written (its row is locked by an
 * open transaction, or gone): the slot is handed on at commit by the grant
 * pass instead, like a release's that nothing can write.
 */
void
sync_keyed_xact_handoff_failed(SyncHandoff *h)
{
	sync_unreserve((KeyedOp *) h->op);
}

/*-------------------------------------------------------------------------
 * Commit and abort
 *-------------------------------------------------------------------------
 */

/* Has this transaction recorded anything to apply at commit? */
bool
sync_keyed_xact_pending(void)
{
	return sync_keyed_xact.ops != NIL || sync_keyed_xact.provisionals != NIL;
}

/*
 * Commit: the entry's row is gone for good.  A held entry's slot goes to
 * the waiter reserved at pre-commit, whose grant this commit wrote, or
 * else to whoever the grant pass picks.
 */
static void
sync_apply_release(KeyedOp *op)
{
	SyncEntry  *e = op->entry;
	bool		handed = false;

	LWLockAcquire(sync_holders_lock(), LW_EXCLUSIVE);
	if (sync_keyed_entry_is(e, op->request_id) &&
		e->release_xid == sync_keyed_xact.xid)
	{
		LWLock	   *partition = sync_partition_lock(sync_entry_lock(e)->hashcode);
		bool		held;

		LWLockAcquire(partition, LW_SHARED);
		held = (e->state == SYNC_ENTRY_HELD);
		LWLockRelease(partition);
		if (held)
		{
			/* the hand-off reserved at pre-commit, if it still stands */
			handed = sync_reservation_stands(op);
			sync_keyed_release_held(e, handed ? op->next : NULL, op->token,
									op->at);
		}
		else
			sync_withdraw_request(e, SYNC_WAIT_CANCEL);	/* the whole pending request */
	}
	LWLockRelease(sync_holders_lock());
	if (op->next != NULL && !handed)
		sync_unreserve(op);
}

/* Commit: a pending request takes its new priority. */
static void
sync_apply_resort(KeyedOp *op)
{
	SyncEntry  *first = op->entry;

	LWLockAcquire(sync_holders_lock(), LW_SHARED);
	if (sync_keyed_entry_is(first, op->request_id))
	{
		uint32		partmask = first->partmask;
		SyncEntry  *e;

		sync_lock_partitions(partmask, LW_EXCLUSIVE);
		e = first;
		do
		{
			if (e->state == SYNC_ENTRY_PENDING || e->state == SYNC_ENTRY_DORMANT)
			{
				SyncLock   *lock = sync_entry_lock(e);
				bool		dormant = (e->state == SYNC_ENTRY_DORMANT);

				sync_queue_remove(e);
				e->priority = op->priority;
				e->base_priority = op->priority;
				if (dormant)
					sync_dormant_insert(lock, e);
				else
					sync_queue_insert(lock, e);
			}
			e = sync_next_in_request(e);
		} while (e != first);
		e = first;
		do
		{
			sync_grant_waiters(sync_entry_lock(e));
			e = sync_next_in_request(e);
		} while (e != first);
		sync_unlock_partitions(partmask);
	}
	LWLockRelease(sync_holders_lock());
}

/* Commit: a refreshed lease, or a grant the table now records. */
static void
sync_apply_entry_update(KeyedOp *op)
{
	SyncEntry  *e = op->entry;

	LWLockAcquire(sync_holders_lock(), LW_SHARED);
	if (sync_keyed_entry_is(e, op->request_id))
	{
		LWLock	   *partition = sync_partition_lock(sync_entry_lock(e)->hashcode);

		LWLockAcquire(partition, LW_EXCLUSIVE);
		if (e->state == SYNC_ENTRY_HELD)
		{
			if (op->kind == KEYED_OP_REFRESH)
			{
				if (op->lease_us > 0)
					e->lease_us = op->lease_us;
				/* a preempted hold ends with its grace, whatever its lease */
				e->lease_expires = op->at;
				if (e->preempt_deadline != 0 &&
					(op->at == 0 || op->at > e->preempt_deadline))
					e->lease_expires = e->preempt_deadline;
				if (op->at != 0)
					sync_lease_scheduled(op->at);
			}
			else if (e->token == op->token)
			{
				e->persisted = true;
				if (e->preemptible)
					sync_preempt_settled(sync_entry_lock(e));	/* a candidate now */
				/* a sync_wait in a snapshot transaction waits for this */
				sync_holder_changed(sync_entry_holder(e)->tag.dbid, sync_entry_holder(e)->tag.key);
			}
		}
		LWLockRelease(partition);
	}
	LWLockRelease(sync_holders_lock());
}

/* TRUNCATE keeps only requests this transaction made after it. */
static bool
sync_truncate_filter(SyncEntry *e, void *arg)
{
	List	   *before = (List *) arg;
	ListCell   *lc;

	if (!TransactionIdIsValid(e->created_xid))
		return true;
	foreach(lc, before)
	{
		Provisional *prov = (Provisional *) lfirst(lc);

		if (prov->request_id == e->request_id)
			return true;
	}
	return false;
}

static void
sync_apply_truncate(KeyedOp *op)
{
	uint32		all = SYNC_ALL_PARTITIONS;
	List	   *before = list_truncate(list_copy(sync_keyed_xact.provisionals),
										   op->nprovisional);

	LWLockAcquire(sync_holders_lock(), LW_EXCLUSIVE);
	sync_lock_partitions(all, LW_EXCLUSIVE);
	(void) sync_keyed_purge(sync_truncate_filter, before);
	sync_unlock_partitions(all);
	LWLockRelease(sync_holders_lock());
}

/*
 * Commit: the requests of this transaction become durable; grants they got
 * while it was open are handed to the worker.
 */
static void
sync_apply_provisionals(void)
{
	ListCell   *lc;

	LWLockAcquire(sync_holders_lock(), LW_EXCLUSIVE);
	foreach(lc, sync_keyed_xact.provisionals)
	{
		Provisional *prov = (Provisional *) lfirst(lc);

		for (int i = 0; i < prov->nentries; i++)
		{
			SyncEntry  *e = prov->entries[i];
			LWLock	   *partition;

			if (!sync_keyed_entry_is(e, prov->request_id))
				continue;
			partition = sync_partition_lock(sync_entry_lock(e)->hashcode);
			LWLockAcquire(partition, LW_EXCLUSIVE);
			e->created_xid = InvalidTransactionId;
			if (e->state == SYNC_ENTRY_HELD && !e->persisted)
				sync_outbox_push(e);
			else if (e->state == SYNC_ENTRY_HELD && e->preemptible)
				sync_preempt_settled(sync_entry_lock(e));	/* a candidate now */
			LWLockRelease(partition);
		}
	}
	LWLockRelease(sync_holders_lock());
}

static void
sync_keyed_forget_all(void)
{
	/* the memory belongs to TopTransactionContext */
	sync_keyed_xact.ops = NIL;
	sync_keyed_xact.provisionals = NIL;
	sync_keyed_xact.xid = InvalidTransactionId;
}

/* Commit: apply what this transaction did, in order.  Must not fail. */
void
sync_keyed_xact_at_commit(void)
{
	ListCell   *lc;

	if (sync_keyed_xact.wake_at_commit)
	{
		sync_keyed_xact.wake_at_commit = false;
		sync_launch_set_dirty();
		sync_worker_wake();
	}
	if (sync_keyed_xact.ops == NIL && sync_keyed_xact.provisionals == NIL)
		return;

	foreach(lc, sync_keyed_xact.ops)
	{
		KeyedOp    *op = (KeyedOp *) lfirst(lc);

		switch (op->kind)
		{
			case KEYED_OP_RELEASE:
				sync_apply_release(op);
				break;
			case KEYED_OP_RESORT:
				sync_apply_resort(op);
				break;
			case KEYED_OP_REFRESH:
			case KEYED_OP_PERSISTED:
				sync_apply_entry_update(op);
				break;
			case KEYED_OP_CLAIM:
				break;			/* granted already */
			case KEYED_OP_TRUNCATE:
				sync_apply_truncate(op);
				break;
			case KEYED_OP_FORGET:
				sync_controller_deactivate(op->controller);
				break;
			case KEYED_OP_BEAT:
				sync_controller_beat(sync_controller_slot_noerror(op->controller),
									 op->at);
				break;
			case KEYED_OP_PREEMPT:
				sync_keyed_preempt_end(op->entry, op->request_id, op->at, true);
				break;
		}
		sync_grant_deferred();
	}
	sync_apply_provisionals();
	sync_grant_deferred();
	sync_keyed_forget_all();
}

/*
 * Undo one operation: a release that will not happen, or a claim that
 * takes its slot back.
 */
static void
sync_undo_op(KeyedOp *op)
{
	if (op->kind == KEYED_OP_CLAIM)
	{
		SyncEntry  *e = op->entry;

		if (e == NULL)
			return;				/* nothing was granted */
		LWLockAcquire(sync_holders_lock(), LW_SHARED);
		if (sync_keyed_entry_is(e, op->request_id))
		{
			LWLock	   *partition = sync_partition_lock(sync_entry_lock(e)->hashcode);

			LWLockAcquire(partition, LW_EXCLUSIVE);
			if (e->state == SYNC_ENTRY_HELD && e->token == op->token)
			{
				e->persisted = false;
				sync_claim_undo(e);
			}
			LWLockRelease(partition);
		}
		LWLockRelease(sync_holders_lock());
	}
	else if (op->kind == KEYED_OP_RELEASE)
	{
		SyncEntry  *e = op->entry;

		if (op->next != NULL)
			sync_unreserve(op);
		LWLockAcquire(sync_holders_lock(), LW_EXCLUSIVE);
		if (sync_keyed_entry_is(e, op->request_id) &&
			e->release_xid == sync_keyed_xact.xid)
		{
			e->release_xid = InvalidTransactionId;
			if (e->preemptible)
			{
				LWLock	   *partition = sync_partition_lock(sync_entry_lock(e)->hashcode);

				/* a hold that stays: a candidate for preemption again */
				LWLockAcquire(partition, LW_EXCLUSIVE);
				if (e->state == SYNC_ENTRY_HELD)
					sync_preempt_settled(sync_entry_lock(e));
				LWLockRelease(partition);
			}
		}
		LWLockRelease(sync_holders_lock());
	}
	else if (op->kind == KEYED_OP_PERSISTED)
	{
		SyncOutboxItem item;

		/* the grant is still unwritten: a later round writes it */
		item.entry = op->entry;
		item.request_id = op->request_id;
		item.token = op->token;
		sync_outbox_requeue(&item);
	}
	else if (op->kind == KEYED_OP_PREEMPT)
		sync_keyed_preempt_end(op->entry, op->request_id, op->at, false);
}

/* Withdraw a request this transaction made: it leaves no trace. */
static void
sync_undo_provisional(Provisional *prov)
{
	LWLockAcquire(sync_holders_lock(), LW_EXCLUSIVE);
	for (int i = 0; i < prov->nentries; i++)
	{
		SyncEntry  *e = prov->entries[i];

		if (sync_keyed_entry_is(e, prov->request_id))
		{
			sync_withdraw_request(e, SYNC_WAIT_CANCEL);	/* the whole request */
			break;
		}
	}
	LWLockRelease(sync_holders_lock());
}

void
sync_keyed_xact_at_abort(void)
{
	ListCell   *lc;

	sync_keyed_xact.wake_at_commit = false;

	if (sync_keyed_xact.ops == NIL && sync_keyed_xact.provisionals == NIL)
		return;
	foreach(lc, sync_keyed_xact.ops)
		sync_undo_op((KeyedOp *) lfirst(lc));
	foreach(lc, sync_keyed_xact.provisionals)
		sync_undo_provisional((Provisional *) lfirst(lc));
	sync_grant_deferred();
	sync_keyed_forget_all();
}

void
sync_keyed_xact_at_subabort(SubTransactionId subid)
{
	ListCell   *lc;

	foreach(lc, sync_keyed_xact.ops)
	{
		KeyedOp    *op = (KeyedOp *) lfirst(lc);

		if (op->subid != subid)
			continue;
		sync_undo_op(op);
		sync_keyed_xact.ops = foreach_delete_current(sync_keyed_xact.ops, lc);
	}
	foreach(lc, sync_keyed_xact.provisionals)
	{
		Provisional *prov = (Provisional *) lfirst(lc);

		if (prov->subid != subid)
			continue;
		sync_undo_provisional(prov);
		sync_keyed_xact.provisionals =
			foreach_delete_current(sync_keyed_xact.provisionals, lc);
	}
	sync_grant_deferred();
}

void
sync_keyed_xact_at_subcommit(SubTransactionId subid, SubTransactionId parent)
{
	ListCell   *lc;

	foreach(lc, sync_keyed_xact.ops)
	{
		KeyedOp    *op = (KeyedOp *) lfirst(lc);

		if (op->subid == subid)
			op->subid = parent;
	}
	foreach(lc, sync_keyed_xact.provisionals)
	{
		Provisional *prov = (Provisional *) lfirst(lc);

		if (prov->subid == subid)
			prov->subid = parent;
	}
}

