/*-------------------------------------------------------------------------
 *
 * keyed_xact.c
 *		What a transaction did to keyed holds and controllers, applied when
 *		it commits and undone when it (or a savepoint) aborts: requests it
 *		made, rows of sync_state it deleted (releases), new priorities and
 *		lease expiries, grants the worker wrote, a TRUNCATE, heartbeats and
 *		deleted controllers.  See holder_table.c for how shared memory and the
 *		table are kept in step.
 *
 * The lists are backend-local, in TopTransactionContext.  Applying them
 * takes holders_lock and partition locks (holder_table.c, lock_table.c) and
 * controllers_lock (controllers.c) in that module's order.  syncwf.c calls
 * the sync_keyed_xact_at_* functions from its transaction callbacks.
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

/* What this transaction did to keyed entries, applied at commit. */
typedef enum KeyedOpKind
{
	KEYED_OP_RELEASE,			/* the entry's row was deleted */
	KEYED_OP_RESORT,			/* a new priority for a pending request */
	KEYED_OP_REFRESH,			/* a new lease expiry */
	KEYED_OP_PERSISTED,			/* the worker wrote a grant to the table */
	KEYED_OP_CLAIM,				/* a claim-only request was granted */
	KEYED_OP_TRUNCATE,			/* sync_state was truncated */
	KEYED_OP_FORGET,			/* a sync_controller row was deleted */
	KEYED_OP_BEAT				/* a sync_controller row was written */
} KeyedOpKind;

typedef struct KeyedOp
{
	KeyedOpKind kind;
	SubTransactionId subid;
	SyncEntry  *entry;
	uint64		request_id;
	uint64		token;			/* PERSISTED, CLAIM; RELEASE: the hand-off's */
	int32		priority;
	int64		lease_us;
	TimestampTz at;				/* REFRESH, BEAT; RELEASE: the hand-off's */
	int			nprovisional;	/* TRUNCATE: requests made before it */
	char	   *controller;		/* FORGET, BEAT */
	/* RELEASE of a held entry: the waiter it hands its slot to, if any */
	bool		handoff_tried;
	SyncEntry  *next;
	uint64		next_request_id;
} KeyedOp;

/* A request this transaction made. */
typedef struct Provisional
{
	SubTransactionId subid;
	uint64		request_id;
	int			nentries;
	SyncEntry  *entries[FLEXIBLE_ARRAY_MEMBER];
} Provisional;

static List *keyed_ops = NIL;	/* KeyedOp *, in TopTransactionContext */
static bool wake_at_commit = false; /* launch plans changed: reconcile */
static List *provisionals = NIL;	/* Provisional *, likewise */
static TransactionId keyed_xid = InvalidTransactionId;	/* their transaction */

/* Remember an operation of this transaction. */
static KeyedOp *
sync_keyed_new_op(KeyedOpKind kind)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(TopTransactionContext);
	KeyedOp    *op = palloc0(sizeof(KeyedOp));

	op->kind = kind;
	op->subid = GetCurrentSubTransactionId();
	keyed_ops = lappend(keyed_ops, op);
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
	provisionals = lappend(provisionals, prov);
	MemoryContextSwitchTo(oldcxt);
	keyed_xid = GetTopTransactionId();
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
	keyed_xid = GetTopTransactionId();
	op = sync_keyed_new_op(KEYED_OP_RELEASE);
	op->entry = info->entry;
	op->request_id = request_id;
}

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
	h->row.name = pstrdup(next->lock->tag.name);
	h->row.holder = pstrdup(next->holder->tag.key);
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
	if (sync_keyed_entry_is(e, op->request_id) && e->release_xid == keyed_xid)
	{
		LWLock	   *partition = sync_partition_lock(e->lock->hashcode);

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
				next->reserved_xid = keyed_xid;
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

	foreach(lc, keyed_ops)
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

	foreach(lc, keyed_ops)
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
		op->next->reserved_xid == keyed_xid;
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
		LWLock	   *partition = sync_partition_lock(next->lock->hashcode);

		LWLockAcquire(partition, LW_EXCLUSIVE);
		next->reserved_xid = InvalidTransactionId;
		if (next->state == SYNC_ENTRY_PENDING)
			sync_grant_waiters(next->lock);
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

	foreach(lc, keyed_ops)
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
	wake_at_commit = true;
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

	op->nprovisional = list_length(provisionals);
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
		LWLock	   *partition = sync_partition_lock(e->lock->hashcode);

		LWLockAcquire(partition, LW_EXCLUSIVE);
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
			sync_holder_changed(e->holder->tag.dbid, e->holder->tag.key);
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
	SyncLockTag tag;
	uint32		hashcode;
	LWLock	   *partition;
	SyncLock   *lock;
	bool		unwritten = false;

	sync_make_tag(&tag, MyDatabaseId, name);
	hashcode = sync_tag_hash(&tag);
	partition = sync_partition_lock(hashcode);
	LWLockAcquire(partition, LW_SHARED);
	lock = sync_lock_lookup(&tag, hashcode);
	if (lock != NULL)
	{
		dlist_iter	iter;

		dlist_foreach(iter, &lock->holders)
		{
			SyncEntry  *e = dlist_container(SyncEntry, lock_link, iter.cur);

			if (e->scope == SYNC_SCOPE_KEYED && !e->persisted)
				unwritten = true;
		}
	}
	LWLockRelease(partition);
	return unwritten;
}

bool
sync_keyed_xact_pending(void)
{
	return keyed_ops != NIL || provisionals != NIL;
}

/*-------------------------------------------------------------------------
 * Commit and abort
 *-------------------------------------------------------------------------
 */

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
	if (sync_keyed_entry_is(e, op->request_id) && e->release_xid == keyed_xid)
	{
		LWLock	   *partition = sync_partition_lock(e->lock->hashcode);
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
				SyncLock   *lock = e->lock;
				bool		dormant = (e->state == SYNC_ENTRY_DORMANT);

				dlist_delete_thoroughly(&e->lock_link);
				if (dormant)
					lock->ndormant--;
				else
					lock->nwaiting--;
				e->priority = op->priority;
				if (dormant)
					sync_dormant_insert(lock, e);
				else
					sync_queue_insert(lock, e);
			}
			e = e->next_in_request;
		} while (e != first);
		e = first;
		do
		{
			sync_grant_waiters(e->lock);
			e = e->next_in_request;
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
		LWLock	   *partition = sync_partition_lock(e->lock->hashcode);

		LWLockAcquire(partition, LW_EXCLUSIVE);
		if (e->state == SYNC_ENTRY_HELD)
		{
			if (op->kind == KEYED_OP_REFRESH)
			{
				if (op->lease_us > 0)
					e->lease_us = op->lease_us;
				e->lease_expires = op->at;
				if (op->at != 0)
					sync_lease_scheduled(op->at);
			}
			else if (e->token == op->token)
			{
				e->persisted = true;
				/* a sync_wait in a snapshot transaction waits for this */
				sync_holder_changed(e->holder->tag.dbid, e->holder->tag.key);
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
	List	   *before = list_truncate(list_copy(provisionals), op->nprovisional);

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
	foreach(lc, provisionals)
	{
		Provisional *prov = (Provisional *) lfirst(lc);

		for (int i = 0; i < prov->nentries; i++)
		{
			SyncEntry  *e = prov->entries[i];
			LWLock	   *partition;

			if (!sync_keyed_entry_is(e, prov->request_id))
				continue;
			partition = sync_partition_lock(e->lock->hashcode);
			LWLockAcquire(partition, LW_EXCLUSIVE);
			e->created_xid = InvalidTransactionId;
			if (e->state == SYNC_ENTRY_HELD && !e->persisted)
				sync_outbox_push(e);
			LWLockRelease(partition);
		}
	}
	LWLockRelease(sync_holders_lock());
}

static void
sync_keyed_forget_all(void)
{
	/* the memory belongs to TopTransactionContext */
	keyed_ops = NIL;
	provisionals = NIL;
	keyed_xid = InvalidTransactionId;
}

/* Commit: apply what this transaction did, in order.  Must not fail. */
void
sync_keyed_xact_at_commit(void)
{
	ListCell   *lc;

	if (wake_at_commit)
	{
		wake_at_commit = false;
		sync_launch_set_dirty();
		sync_worker_wake();
	}
	if (keyed_ops == NIL && provisionals == NIL)
		return;

	foreach(lc, keyed_ops)
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
			LWLock	   *partition = sync_partition_lock(e->lock->hashcode);

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
		if (sync_keyed_entry_is(e, op->request_id) && e->release_xid == keyed_xid)
			e->release_xid = InvalidTransactionId;
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

	wake_at_commit = false;

	if (keyed_ops == NIL && provisionals == NIL)
		return;
	foreach(lc, keyed_ops)
		sync_undo_op((KeyedOp *) lfirst(lc));
	foreach(lc, provisionals)
		sync_undo_provisional((Provisional *) lfirst(lc));
	sync_grant_deferred();
	sync_keyed_forget_all();
}

void
sync_keyed_xact_at_subabort(SubTransactionId subid)
{
	ListCell   *lc;

	foreach(lc, keyed_ops)
	{
		KeyedOp    *op = (KeyedOp *) lfirst(lc);

		if (op->subid != subid)
			continue;
		sync_undo_op(op);
		keyed_ops = foreach_delete_current(keyed_ops, lc);
	}
	foreach(lc, provisionals)
	{
		Provisional *prov = (Provisional *) lfirst(lc);

		if (prov->subid != subid)
			continue;
		sync_undo_provisional(prov);
		provisionals = foreach_delete_current(provisionals, lc);
	}
	sync_grant_deferred();
}

void
sync_keyed_xact_at_subcommit(SubTransactionId subid, SubTransactionId parent)
{
	ListCell   *lc;

	foreach(lc, keyed_ops)
	{
		KeyedOp    *op = (KeyedOp *) lfirst(lc);

		if (op->subid == subid)
			op->subid = parent;
	}
	foreach(lc, provisionals)
	{
		Provisional *prov = (Provisional *) lfirst(lc);

		if (prov->subid == subid)
			prov->subid = parent;
	}
}

