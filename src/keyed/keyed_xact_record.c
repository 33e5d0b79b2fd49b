/*-------------------------------------------------------------------------
 *
 * keyed_xact_record.c
 *		What a transaction does to keyed holds and controllers, recorded as
 *		it happens: requests it makes, rows of sync_state it deletes
 *		(releases), new priorities and lease expiries, grants the worker
 *		writes, a TRUNCATE, heartbeats and deleted controllers, and claims,
 *		which are granted at once for the transaction.  keyed_xact.c applies
 *		the record when the transaction commits and undoes it when it (or a
 *		savepoint) aborts.
 *
 * The record is keyed_xact.c's sync_keyed_xact (keyed_internal.h):
 * backend-local, its lists in TopTransactionContext, appended to here
 * with no lock.  Marking a release takes holders_lock (holder_table.c); a
 * claim takes holders_lock shared, then the entry's partition lock
 * exclusively.  Callers (the engine in keyed_ops.c, the triggers, launch
 * plans) hold no LWLock.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "keyed/keyed_internal.h"

/* Remember an operation of this transaction. */
static KeyedOp *
sync_keyed_new_op(KeyedOpKind kind)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(TopTransactionContext);
	KeyedOp    *op = palloc0(sizeof(KeyedOp));

	op->kind = kind;
	op->subid = GetCurrentSubTransactionId();
	sync_keyed_xact.ops = lappend(sync_keyed_xact.ops, op);
	MemoryContextSwitchTo(oldcxt);
	return op;
}

/*-------------------------------------------------------------------------
 * Recording
 *-------------------------------------------------------------------------
 */

/*
 * A request this transaction made (holder_table.c created its entries): it
 * becomes durable at commit and is withdrawn at abort.
 */
void
sync_keyed_xact_created(SyncEntry **entries, int nentries, uint64 request_id)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(TopTransactionContext);
	Provisional *prov = palloc(offsetof(Provisional, entries) +
							   sizeof(SyncEntry *) * nentries);

	prov->subid = GetCurrentSubTransactionId();
	prov->request_id = request_id;
	prov->nentries = nentries;
	memcpy(prov->entries, entries, sizeof(SyncEntry *) * nentries);
	sync_keyed_xact.provisionals = lappend(sync_keyed_xact.provisionals, prov);
	MemoryContextSwitchTo(oldcxt);
	sync_keyed_xact.xid = GetTopTransactionId();
}

/*
 * The row of (name, holder, request_id) was deleted by this transaction:
 * mark the entry, and release it at commit.  Fills *info with what the
 * caller needs (whether it was held, its token, controller, request size).
 */
void
sync_keyed_xact_row_deleted(const char *name, const char *holder,
							uint64 request_id, SyncKeyedInfo *info)
{
	KeyedOp    *op;

	memset(info, 0, sizeof(SyncKeyedInfo));
	if (!sync_keyed_mark_release(name, holder, request_id, GetTopTransactionId(),
								 info))
		return;
	sync_keyed_xact.xid = GetTopTransactionId();
	op = sync_keyed_new_op(KEYED_OP_RELEASE);
	op->entry = info->entry;
	op->request_id = request_id;
}

/* A pending request takes a new priority at commit. */
void
sync_keyed_xact_resort(SyncEntry *first, uint64 request_id, int32 priority)
{
	KeyedOp    *op = sync_keyed_new_op(KEYED_OP_RESORT);

	op->entry = first;
	op->request_id = request_id;
	op->priority = priority;
}

/*
 * The priority this transaction gave request 'request_id', which applies
 * at commit but counts already; false if it gave none.
 */
bool
sync_keyed_xact_priority(uint64 request_id, int32 *priority)
{
	ListCell   *lc;
	bool		found = false;

	foreach(lc, sync_keyed_xact.ops)
	{
		KeyedOp    *op = (KeyedOp *) lfirst(lc);

		if (op->kind == KEYED_OP_RESORT && op->request_id == request_id)
		{
			found = true;
			*priority = op->priority;
		}
	}
	return found;
}

/* Have the worker reconcile launch plans when this transaction commits. */
void
sync_keyed_wake_at_commit(void)
{
	sync_keyed_xact.wake_at_commit = true;
}

/*-------------------------------------------------------------------------
 * Recorded by triggers and the engine
 *-------------------------------------------------------------------------
 */

/* sync_state was truncated: at commit, only later requests stay. */
void
sync_keyed_xact_truncated(void)
{
	KeyedOp    *op = sync_keyed_new_op(KEYED_OP_TRUNCATE);

	op->nprovisional = list_length(sync_keyed_xact.provisionals);
}

/* A held entry's lease was refreshed: the new expiry applies at commit. */
void
sync_keyed_xact_refresh(SyncEntry *entry, uint64 request_id, int64 lease_us,
						TimestampTz expires)
{
	KeyedOp    *op = sync_keyed_new_op(KEYED_OP_REFRESH);

	op->entry = entry;
	op->request_id = request_id;
	op->lease_us = lease_us;
	op->at = expires;
}

/* The worker wrote a grant to sync_state: it counts as written at commit. */
void
sync_keyed_xact_persisted(SyncEntry *entry, uint64 request_id, uint64 token)
{
	KeyedOp    *op = sync_keyed_new_op(KEYED_OP_PERSISTED);

	op->entry = entry;
	op->request_id = request_id;
	op->token = token;
}

/*
 * The worker marked a hold preempted: counted at commit, undone at abort
 * (the caller sets entry NULL if it undoes it itself).
 */
KeyedOp *
sync_keyed_xact_preempted(SyncEntry *entry, uint64 request_id, TimestampTz old_lease)
{
	KeyedOp    *op = sync_keyed_new_op(KEYED_OP_PREEMPT);

	op->entry = entry;
	op->request_id = request_id;
	op->at = old_lease;
	return op;
}

/*
 * A row of sync_controller was written (a heartbeat at 'at') or deleted
 * (deleted; controller NULL: the table was truncated): the controller
 * becomes active or inactive at commit.
 */
void
sync_keyed_xact_controller(const char *controller, bool deleted, TimestampTz at)
{
	KeyedOp    *op = sync_keyed_new_op(deleted ? KEYED_OP_FORGET : KEYED_OP_BEAT);

	op->controller = controller ?
		MemoryContextStrdup(TopTransactionContext, controller) : NULL;
	op->at = at;
}

/*
 * A writer of sync_state set held = true on the row of (name, holder): grant
 * its entry now if sync_claim_grantable() says it may be, for this
 * transaction (the grant is undone if it aborts).  On SYNC_CLAIM_GRANTED,
 * *info describes the grant (info->lease_expires is set from the lease)
 * and *granted_at says when.
 */
SyncClaimOutcome
sync_keyed_xact_claim(const char *name, const char *holder,
					  SyncKeyedInfo *info, TimestampTz *granted_at)
{
	SyncClaimOutcome outcome = SYNC_CLAIM_MISSING;
	SyncEntry  *e;
	KeyedOp    *op;

	memset(info, 0, sizeof(SyncKeyedInfo));
	/* allocated first: once granted, nothing may fail before it is recorded */
	op = sync_keyed_new_op(KEYED_OP_CLAIM);
	LWLockAcquire(sync_holders_lock(), LW_SHARED);
	e = sync_holder_entry(sync_holder_lookup(holder, false), name);
	if (e != NULL && TransactionIdIsValid(e->created_xid) &&
		!TransactionIdIsCurrentTransactionId(e->created_xid))
		e = NULL;
	if (e != NULL)
	{
		LWLock	   *partition = sync_partition_lock(sync_entry_lock(e)->hashcode);
		uint32		stripes;

		LWLockAcquire(partition, LW_EXCLUSIVE);
		stripes = sync_groups_enter_lock(sync_entry_lock(e));	/* its parent */
		if (TransactionIdIsValid(e->release_xid) &&
			TransactionIdIsCurrentTransactionId(e->release_xid))
			outcome = SYNC_CLAIM_MISSING;	/* this transaction deleted it */
		else if (e->state == SYNC_ENTRY_HELD)
			outcome = SYNC_CLAIM_HELD;
		else if (TransactionIdIsValid(e->release_xid) || !sync_claim_grantable(e))
			outcome = SYNC_CLAIM_BUSY;
		else
		{
			sync_claim_grant(e);
			/* no grant hook for a claim: wake sync_wait here */
			sync_holder_changed(sync_entry_holder(e)->tag.dbid, sync_entry_holder(e)->tag.key);
			if (e->lease_us > 0)
				e->lease_expires = e->since + e->lease_us;
			e->persisted = true;	/* the claiming UPDATE writes it */
			outcome = SYNC_CLAIM_GRANTED;
			op->entry = e;
			op->request_id = e->request_id;
			op->token = e->token;
		}
		if (outcome == SYNC_CLAIM_GRANTED || outcome == SYNC_CLAIM_HELD)
		{
			*granted_at = e->since;
			sync_keyed_entry_info(e, info);
		}
		sync_groups_leave(stripes);
		LWLockRelease(partition);
	}
	LWLockRelease(sync_holders_lock());

	if (outcome == SYNC_CLAIM_GRANTED && info->lease_expires != 0)
		sync_lease_scheduled(info->lease_expires);
	return outcome;
}

/*
 * Has the lock 'name' a keyed grant that sync_state does not show yet (the
 * worker writes it in a moment)?
 */
bool
sync_keyed_unwritten_grants(const char *name)
{
	LWLock	   *partition;
	SyncLock   *lock = sync_lock_find(MyDatabaseId, name, LW_SHARED,
									  &partition);
	bool		unwritten = false;

	if (lock != NULL)
	{
		sync_elist_foreach(e, &lock->holders, lock_link)
		{
			if (e->scope == SYNC_SCOPE_KEYED && !e->persisted)
				unwritten = true;
		}
	}
	LWLockRelease(partition);
	return unwritten;
}
