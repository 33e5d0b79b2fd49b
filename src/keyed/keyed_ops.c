/*-------------------------------------------------------------------------
 *
 * keyed_ops.c
 *		The operations on keyed holds: what each SQL function of keyed holds
 *		(sql_keyed.c), the delete trigger of sync_state (triggers.c), launch
 *		plans (launch_policy.c) and the worker's rounds (reconcile.c) do,
 *		over the shared memory of keyed holds (holder_table.c, keyed_load.c,
 *		keyed_xact_record.c, keyed_xact.c) and the rows of their tables
 *		(state_spi.c) together.  Each one is a short sequence of named
 *		steps; the callers have checked the entry conditions
 *		(sql_common.c).
 *
 * Holds no state and no lock of its own; the files it calls take theirs.
 * Loading is serialized by a heavyweight (advisory) lock: see
 * sync_keyed_try_load().
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "keyed/keyed_internal.h"

static SyncGrantWrittenHook grant_written_hook = NULL;

void
sync_keyed_set_grant_written_hook(SyncGrantWrittenHook hook)
{
	grant_written_hook = hook;
}

/*-------------------------------------------------------------------------
 * Loading
 *-------------------------------------------------------------------------
 */

/* The heavyweight lock that serializes loading (see below). */
static void
sync_load_locktag(LOCKTAG *tag)
{
	/* an advisory lock with a key no SQL call can take: field4 = 3 */
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, 0x73796e63, 0x6c6f6164, 3);
}

/*
 * Load the keyed holds of this database into shared memory, unless someone
 * did while we waited.  Caller holds the load lock.  Returns false (having
 * changed nothing) if nowait and a table is locked by someone else.
 */
static bool
sync_keyed_load(Oid relid, bool nowait)
{
	List	   *rows = NIL;
	List	   *controllers = NIL;
	ListCell   *lc;
	uint64		gen;

#ifdef USE_ASSERT_CHECKING
	{
		LOCKTAG		tag;

		sync_load_locktag(&tag);
		Assert(sync_lock_held_by_me(&tag, ExclusiveLock));
	}
#endif
	if (sync_keyed_loaded(relid))
		return true;
	if (OidIsValid(relid))
	{
		const SyncTables *t = sync_tables(true);
		Oid			tables[3] = {relid, t->controller, t->limit};

		for (int i = 0; i < 3; i++)
		{
			if (!nowait)
				LockRelationOid(tables[i], AccessShareLock);
			else if (!ConditionalLockRelationOid(tables[i], AccessShareLock))
			{
				while (--i >= 0)
					UnlockRelationOid(tables[i], AccessShareLock);
				return false;
			}
		}
		gen = pg_atomic_read_u64(&sync_shmem->limit_generation);
		rows = sync_state_read_all(&controllers);
		/* the groups of the parents their limits name (limit_groups.c) */
		foreach(lc, rows)
		{
			SyncStateRow *row = (SyncStateRow *) lfirst(lc);

			if (row->limit.parent[0] != '\0')
				sync_group_ensure(row->limit.parent, row->limit.parent_limit,
								  row->limit.parent_preempt ?
								  row->limit.parent_grace_us : -1, gen);
		}
	}
	sync_keyed_install(rows, controllers,
					   OidIsValid(relid) ? sync_tables(true)->limit : InvalidOid);
	if (OidIsValid(relid))
		ereport(DEBUG1,
				(errmsg("syncwf loaded %d keyed entries and %d controllers",
						list_length(rows), list_length(controllers))));

	sync_keyed_set_loaded(relid);
	sync_worker_wake();
	return true;
}

/*
 * Make sure the keyed holds of this database are in shared memory before
 * anything here is granted.  The first caller after a start (usually the
 * worker) reads sync_state; everyone else waits for it.  Does nothing in
 * other databases, and nothing during recovery (a standby serves no keyed
 * holds; after promotion the first caller loads them).
 *
 * Loading is serialized by a heavyweight (advisory) lock, not by anything
 * in shared memory, so that the wait is visible to the deadlock detector: a
 * transaction holding a lock on one of our tables may well call us while
 * another process is loading and waiting for that very lock.  The worker
 * never waits (nowait): it tries again shortly, and the caller that holds
 * the table lock loads instead.  Returns false only when nowait and the
 * load could not be done now.
 */
bool
sync_keyed_try_load(bool nowait)
{
	Oid			relid;
	LOCKTAG		tag;
	bool		done;

	if (!sync_keyed_database() || RecoveryInProgress())
		return true;
	relid = sync_state_relid(true);
	if (sync_keyed_loaded(relid))
		return true;			/* the usual case */

	sync_load_locktag(&tag);
	if (LockAcquire(&tag, ExclusiveLock, false, nowait) == LOCKACQUIRE_NOT_AVAIL)
		return false;
	/* (on error, the transaction's end releases the lock) */
	done = sync_keyed_load(relid, nowait);
	LockRelease(&tag, ExclusiveLock, false);
	return done;
}

void
sync_keyed_ensure_loaded(void)
{
	(void) sync_keyed_try_load(false);
}


/*-------------------------------------------------------------------------
 * Requests
 *-------------------------------------------------------------------------
 */

/*
 * Write one grant of a pending entry to sync_state and announce it, in the
 * current transaction; false if the entry has moved on or the row already
 * says so.  'skipped': see sync_state_persist().
 */
static bool
sync_keyed_persist_grant(SyncOutboxItem *item, bool *skipped)
{
	SyncStateRow row;

	if (!sync_keyed_grant_info(item, &row))
		return false;
	if (!sync_state_persist(&row, skipped))
		return false;
	if (grant_written_hook != NULL)
		grant_written_hook(row.name, row.holder);
	sync_keyed_xact_persisted(item->entry, item->request_id, item->token);
	return true;
}

/*
 * Pre-commit of a transaction that released held entries: hand each freed
 * slot to the waiter that will get it, in this transaction.  Its grant is
 * written to sync_state and announced (and a launch plan's execution
 * promoted) by the same commit that frees the slot, so the waiter hears
 * "granted" one commit after the release instead of two (the worker's).
 * A row locked by an open transaction (one withdrawing or re-sorting that
 * request, a SELECT ... FOR UPDATE) is not waited for: that slot takes the
 * worker's path, as does every release under REPEATABLE READ or
 * SERIALIZABLE, where updating a row that changed after the snapshot
 * would fail the commit, and every release with
 * syncwf.handoff_in_transaction off.
 */
void
sync_keyed_handoff(void)
{
	List	   *handoffs;

	if (!sync_handoff_in_transaction || !sync_keyed_xact_has_releases())
		return;
	if (IsolationUsesXactSnapshot())
		return;
	/* the extension was dropped in this transaction: nothing to write */
	if (!OidIsValid(sync_state_relid(true)))
		return;
	PushActiveSnapshot(GetTransactionSnapshot());
	while ((handoffs = sync_keyed_xact_handoffs()) != NIL)
	{
		ListCell   *lc;

		foreach(lc, handoffs)
		{
			SyncHandoff *h = (SyncHandoff *) lfirst(lc);

			if (!sync_state_grant(&h->row))
			{
				sync_keyed_xact_handoff_failed(h);
				continue;
			}
			sync_keyed_notify("granted", h->row.name, h->row.holder,
							  h->row.token, h->row.controller, NULL);
			if (grant_written_hook != NULL)
				grant_written_hook(h->row.name, h->row.holder);
		}
		list_free_deep(handoffs);
	}
	PopActiveSnapshot();
}

/*
 * Step 1 of a request: the controller's slot.  A controller that requests
 * is alive: an inactive one gets its heartbeat written, which makes it
 * active when this transaction commits (like every heartbeat), and the
 * request is queued as an active controller's.
 */
static void
sync_keyed_request_controller(SyncKeyedRequest *kr)
{
	bool		active;

	kr->controller_slot = -1;
	kr->controller_beating = false;
	if (kr->controller == NULL)
		return;
	kr->controller_slot = sync_controller_slot(kr->controller, true);
	LWLockAcquire(sync_controllers_lock(), LW_SHARED);
	active = sync_controller_active(kr->controller_slot);
	LWLockRelease(sync_controllers_lock());
	if (!active)
	{
		(void) sync_controller_upsert(kr->controller);
		kr->controller_beating = true;
	}
}

/*
 * Step 3, for a request the holder had made already: a grant the worker has
 * not written yet is written now, in this transaction, before we report it
 * (a hold reported by a committed request must survive a crash); and a
 * new priority re-sorts it at commit (this transaction's earlier re-sort
 * counts already).
 */
static void
sync_keyed_request_existing(SyncKeyedRequest *kr, SyncKeyedResult *results)
{
	int32		resorted_to;
	bool		resort = false;

	if (sync_keyed_xact_priority(kr->request_id, &resorted_to))
		for (int i = 0; i < kr->nnames; i++)
			results[i].priority = resorted_to;
	for (int i = 0; i < kr->nnames; i++)
		if (kr->has_priority && !results[i].held &&
			results[i].priority != kr->priority)
			resort = true;

	for (int i = 0; i < kr->nnames; i++)
		if (results[i].unwritten)
			(void) sync_keyed_persist_grant(&results[i].grant, NULL);

	if (resort)
	{
		/* only its owner (or an admin) may move a request in its queue */
		sync_check_owner(kr->owner, kr->names[0], kr->holder);

		for (int i = 0; i < kr->nnames; i++)
			sync_state_set_priority(kr->names[i], kr->holder, kr->priority);
		sync_keyed_xact_resort(kr->entries[0], kr->request_id, kr->priority);
		for (int i = 0; i < kr->nnames; i++)
			results[i].priority = kr->priority;
	}
}

/* Step 3, for a new request: it is this transaction's; write its rows. */
static void
sync_keyed_request_rows(SyncKeyedRequest *kr, SyncKeyedResult *results)
{
	sync_keyed_xact_created(kr->entries, kr->nnames, kr->request_id);
	for (int i = 0; i < kr->nnames; i++)
	{
		SyncStateRow row;

		memset(&row, 0, sizeof(row));
		row.name = kr->names[i];
		row.holder = (char *) kr->holder;
		row.controller = (char *) kr->controller;
		row.held = results[i].held;
		row.priority = kr->priority;
		row.queued_at = kr->order_at;
		row.token = results[i].token;
		row.granted_at = results[i].granted_at;
		row.lease_us = kr->lease_us;
		row.lease_expires = results[i].held ? results[i].lease_expires : 0;
		row.owner = GetUserId();
		row.request_id = (int64) kr->request_id;
		row.seq = (int64) kr->seq;
		row.admit_limit = kr->admit_limit;
		row.claim = kr->claim;
		row.slots = kr->slots;
		row.shared = kr->shared;
		row.fair_key = (char *) kr->fair_key;
		row.preemptible = kr->preemptible;
		if (kr->row_out != NULL)
			kr->row_out[i] = row;	/* the caller's INSERT writes it */
		else
			sync_state_insert(&row);
	}
}

/*
 * Request every lock of kr for its holder (see sync_holders_request() for
 * the modes), in this transaction: its rows are written, and it becomes
 * durable when the transaction commits.  results[i] describes names[i].
 */
void
sync_keyed_request(SyncKeyedRequest *kr, SyncKeyedResult *results)
{
	/* read before any LWLock is taken (fair_weights.c) */
	kr->fair_weight = sync_fair_request_weight(kr->names, kr->nnames, kr->fair_key);
	sync_keyed_request_controller(kr);
	kr->limit_relid = sync_tables(true)->limit;
	switch (sync_holders_request(kr, results))
	{
		case SYNC_KEYED_EXISTING:
			/* a row inserted by its writer is never a repeated request */
			if (!kr->claim)
				sync_keyed_request_existing(kr, results);
			break;
		case SYNC_KEYED_NEW:
			sync_keyed_request_rows(kr, results);
			break;
		case SYNC_KEYED_REFUSED:
			break;
	}
}

/*
 * The claim of (name, holder) by a writer of sync_state that sets held =
 * true on its pending row (Argo's controller, see docs/argo.md): granted
 * now if it may be (sync_claim_grantable()), and the grant's fields are put
 * into *row for the writer's UPDATE; a "granted" notification goes out at
 * commit.  While the lock has grants the worker has not written yet, the
 * claim is retried for up to a second: those grants are what the writer
 * could not see, and once they are in the table its next attempt reads
 * what is true.
 */
SyncClaimOutcome
sync_keyed_claim(const char *name, const char *holder, const char *controller,
				 SyncStateRow *row)
{
	SyncKeyedInfo info;
	TimestampTz granted_at = 0;
	SyncClaimOutcome outcome;

	for (int waits = 0;; waits++)
	{
		outcome = sync_keyed_xact_claim(name, holder, &info, &granted_at);
		if (outcome != SYNC_CLAIM_BUSY || waits >= SYNC_CLAIM_WAITS ||
			!sync_keyed_unwritten_grants(name))
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 SYNC_CLAIM_WAIT_MS, sync_wait_event(SYNC_WAIT_ACQUIRE));
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	if (outcome == SYNC_CLAIM_GRANTED || outcome == SYNC_CLAIM_HELD)
	{
		row->held = true;
		row->token = info.token;
		row->granted_at = granted_at;
		row->lease_expires = info.lease_expires;
	}
	if (outcome == SYNC_CLAIM_GRANTED)
		sync_keyed_notify("granted", name, holder, info.token, controller, NULL);
	return outcome;
}

/*-------------------------------------------------------------------------
 * Releases
 *-------------------------------------------------------------------------
 */

/*
 * Delete the row of (name, holder), if there is one; its entry is released
 * at commit.  reason: SYNC_REASON_RELEASED when the holder lets go (no
 * event), otherwise the reason given in the "lost" or "withdrawn" event.
 * Returns the rows deleted: this one, and the other rows of a pending
 * request that named several locks, which go with it.
 */
int
sync_keyed_delete(const char *name, const char *holder, const char *reason)
{
	List	   *removed = sync_state_delete(name, holder);
	ListCell   *lc;
	int			n = list_length(removed);

	foreach(lc, removed)
	{
		SyncStateRow *row = (SyncStateRow *) lfirst(lc);

		if (row->request_id != 0)
			n += sync_keyed_row_removed(name, holder, row->request_id,
										row->controller, reason);
	}
	return n;
}

/*
 * What deleting the row of (name, holder, request_id) means, whoever
 * deleted it (the delete trigger, or sync_keyed_delete): the entry is
 * released (or withdrawn) when this transaction commits; an entry taken
 * away from its holder (reason is not SYNC_REASON_RELEASED) is announced; and the other rows of a pending request
 * that named several locks go with it.  Returns how many of those were
 * deleted.
 */
int
sync_keyed_row_removed(const char *name, const char *holder, int64 request_id,
					   const char *controller, const char *reason)
{
	SyncKeyedInfo info;
	ListCell   *lc;
	int			n = 0;

	sync_keyed_xact_row_deleted(name, holder, (uint64) request_id, &info);
	if (!info.found)
		return 0;

	if (reason == NULL || strcmp(reason, SYNC_REASON_RELEASED) != 0)
		sync_keyed_notify(info.state == SYNC_ENTRY_HELD ? "lost" : "withdrawn",
						  name, holder,
						  info.state == SYNC_ENTRY_HELD ? info.token : 0,
						  controller, reason ? reason : "deleted");

	/* the other locks of an all-or-nothing request go with it */
	if (info.state != SYNC_ENTRY_HELD && info.nlocks > 1)
		foreach(lc, sync_keyed_request_locks(info.entry, info.request_id))
			n += sync_keyed_delete((char *) lfirst(lc), holder, reason);
	return n;
}

/* sync_release(lock_name, holder): release the hold or withdraw the request. */
bool
sync_keyed_release(const char *name, const char *holder)
{
	SyncKeyedInfo info;

	if (!sync_keyed_lookup(name, holder, &info))
		return false;
	sync_check_owner(info.owner, name, holder);
	return sync_keyed_delete(name, holder, SYNC_REASON_RELEASED) > 0;
}

/* sync_release_holder(holder): everything of that holder, all or nothing. */
int
sync_keyed_release_holder(const char *holder)
{
	List	   *names = sync_keyed_holder_locks(holder);
	ListCell   *lc;
	int			n = 0;

	/* check every one first */
	foreach(lc, names)
	{
		SyncKeyedInfo info;

		if (sync_keyed_lookup((char *) lfirst(lc), holder, &info))
			sync_check_owner(info.owner, (char *) lfirst(lc), holder);
	}
	foreach(lc, names)
		n += sync_keyed_delete((char *) lfirst(lc), holder, SYNC_REASON_RELEASED);
	return n;
}

/* sync_force_release(lock_name, holder): announced as "lost". */
bool
sync_keyed_force_release(const char *name, const char *holder)
{
	return sync_keyed_delete(name, holder, "forced release") > 0;
}

static void
sync_report_lost(const char *name, const char *holder)
{
	ereport(ERROR,
			(errcode(ERRCODE_SYNC_HOLD_LOST),
			 errmsg("keyed hold \"%s\" of holder \"%s\" is lost", name, holder),
			 errdetail("It is not held: it was released, its lease expired, it was preempted, or it was never granted."),
			 errhint("Stop using what it protected, and request it again with sync_request().")));
}

/*
 * sync_refresh(lock_name, holder, lease): extend the lease of a hold (with
 * no lease given, by the row's, as this transaction left it).  Returns the
 * new expiry, 0 for a hold with no lease.
 */
TimestampTz
sync_keyed_refresh(const char *name, const char *holder, int64 lease_us)
{
	SyncKeyedInfo info;
	TimestampTz expires;
	bool		found;

	if (!sync_keyed_lookup(name, holder, &info) || info.state != SYNC_ENTRY_HELD)
		sync_report_lost(name, holder);
	sync_check_owner(info.owner, name, holder);
	expires = sync_state_refresh(name, holder, lease_us, &found);
	if (!found)
		sync_report_lost(name, holder);
	sync_keyed_xact_refresh(info.entry, info.request_id, lease_us, expires);
	return expires;
}

/* sync_is_held(lock_name, holder, token): is it (that grant) still held? */
bool
sync_keyed_is_held(const char *name, const char *holder, bool has_token,
				   int64 token)
{
	SyncKeyedInfo info;

	/* a grant not yet written to sync_state does not count yet */
	if (!sync_keyed_lookup(name, holder, &info) || info.state != SYNC_ENTRY_HELD ||
		!info.persisted)
		return false;
	return !has_token || token == info.token;
}

/*
 * sync_wait(lock_names, holder, timeout): block until the holder's entry
 * of every lock is held; tokens[i] is the token of names[i].  A token a
 * committed sync_wait returned is in sync_state, and survives a crash:
 *
 *	- under READ COMMITTED, a grant the worker has not written yet is
 *	  written now, in this transaction, as a repeated sync_request does (if
 *	  the worker is writing it at that moment, the update waits for it and
 *	  then finds it written).  Then one more look: each grant is still there
 *	  (this does not wait: a held entry becomes pending again only if the
 *	  claim that granted it rolls back), or SW002 says it was lost
 *	  meanwhile;
 *	- under REPEATABLE READ and SERIALIZABLE, whose snapshot would make
 *	  that update fail whenever the worker wrote the row first, the wait
 *	  lasts until the grant is written by someone else (the worker, within
 *	  milliseconds; sync_reconcile()).
 */
void
sync_keyed_wait(char **names, int nnames, const char *holder, int64 timeout_us,
				int64 *tokens)
{
	SyncKeyedWait w;
	bool		written = false;

	sync_keyed_wait_begin(&w, names, nnames, holder, timeout_us,
						  IsolationUsesXactSnapshot());
	sync_keyed_wait_held(&w);
	for (int i = 0; i < nnames; i++)
		if (w.unwritten[i])
		{
			(void) sync_keyed_persist_grant(&w.grants[i], NULL);
			written = true;
		}
	if (written)
		sync_keyed_wait_held(&w);
	for (int i = 0; i < nnames; i++)
		tokens[i] = (int64) w.grants[i].token;
}

/*-------------------------------------------------------------------------
 * Controllers
 *-------------------------------------------------------------------------
 */

/* sync_heartbeat(controller): returns the heartbeat's time. */
TimestampTz
sync_keyed_heartbeat(const char *controller)
{
	/* the slot now, so that a full registry is reported here */
	(void) sync_controller_slot(controller, true);
	/* the trigger on sync_controller applies it when we commit */
	return sync_controller_upsert(controller);
}

/*
 * sync_forget_controller(controller, release_holds): its row, its pending
 * entries, and its holds if asked.  Returns the sync_state rows deleted.
 */
int
sync_keyed_forget_controller(const char *controller, bool release_holds)
{
	return sync_controller_rows_delete(controller, release_holds);
}

/*-------------------------------------------------------------------------
 * For launch plans and the worker
 *-------------------------------------------------------------------------
 */

/*
 * A pending request waits against a new limit of its own; a raised one
 * may grant at once (grant).  Its row says so too.
 */
void
sync_keyed_readmit(const char *name, const char *holder, int32 limit, bool grant)
{
	sync_keyed_set_admit_limit(name, holder, limit, grant);
	sync_state_set_admit_limit(name, holder, limit);
}

/*
 * Write the grants the outbox holds (or, after an overflow or at the first
 * round of a process, every unwritten grant) to sync_state and announce
 * them.  Returns how many were written.  Sets *retry when a row was locked
 * by an open transaction (a sync_wait() writing the same grant, or a
 * release): that grant goes back into the outbox, and the next round
 * should not wait long.
 */
int
sync_keyed_persist_grants(bool *retry)
{
	static bool scanned = false;
	bool		overflow;
	List	   *items = sync_outbox_drain(&overflow);
	ListCell   *lc;
	int			n = 0;

	if (overflow || !scanned)
	{
		items = sync_keyed_unpersisted();
		scanned = true;
	}
	*retry = false;
	foreach(lc, items)
	{
		SyncOutboxItem *item = (SyncOutboxItem *) lfirst(lc);
		bool		skipped = false;

		if (sync_keyed_persist_grant(item, &skipped))
			n++;
		else if (skipped)
		{
			sync_outbox_requeue(item);
			*retry = true;
		}
	}
	return n;
}
