/*-------------------------------------------------------------------------
 *
 * keyed_request.c
 *		A request on behalf of a holder key, in shared memory: finding the
 *		holder's entries for the locks named (an existing request is
 *		reported, not made again), binding a new one to its locks, queueing
 *		or granting it, and undoing all of it when it is refused.  The rows
 *		are the engine's to write (keyed_ops.c), and the request its
 *		transaction's (keyed_xact.c).
 *
 * Locking: as holder_table.c says -- controllers_lock (shared, when the request
 * names a controller), then holders_lock exclusively, then the request's
 * partitions in ascending order, all held from finding the entries until
 * the request is placed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "storage/lmgr.h"

#include "keyed/keyed_internal.h"

static void
sync_keyed_fill_result(SyncEntry *e, SyncKeyedResult *r)
{
	r->held = (e->state == SYNC_ENTRY_HELD);
	r->active = (e->state != SYNC_ENTRY_DORMANT);
	r->token = r->held ? (int64) e->token : 0;
	r->position = (e->state == SYNC_ENTRY_PENDING) ? sync_queue_position(e) : 0;
	r->priority = e->base_priority;	/* as asked, not as aged */
	r->granted_at = e->since;
	r->lease_expires = e->lease_expires;
	r->controller = e->controller;
	r->unwritten = r->held && !e->persisted &&
		!TransactionIdIsValid(e->created_xid);
	r->grant.entry = e;
	r->grant.request_id = e->request_id;
	r->grant.token = e->token;
}

/*
 * Are these entries exactly one request (the one a repeated call names)?
 * Caller holds holders_lock, which keeps keyed rings from changing.
 */
static bool
sync_same_request(SyncEntry **existing, int nnames)
{
	SyncEntry  *e = existing[0];
	int			ring = 0;

	Assert(LWLockHeldByMe(sync_holders_lock()));
	for (int i = 1; i < nnames; i++)
		if (existing[i]->request_id != e->request_id)
			return false;
	do
	{
		ring++;
		e = sync_next_in_request(e);
	} while (e != existing[0]);
	return ring == nnames;
}

/*
 * Release what a request step holds: the partitions in 'partmask' (0:
 * none), holders_lock, and controllers_lock if held.
 */
static void
sync_keyed_unlock_all(uint32 partmask)
{
	if (partmask != 0)
		sync_unlock_partitions(partmask);
	LWLockRelease(sync_holders_lock());
	if (LWLockHeldByMe(sync_controllers_lock()))
		LWLockRelease(sync_controllers_lock());
}

/*
 * Step 1 of a request: find the holder's entries for the names asked,
 * waiting for any transaction that is still creating or releasing one.
 * Returns holding controllers_lock (shared, with a controller) and
 * holders_lock (exclusively), with existing[] filled in: SYNC_KEYED_NEW if
 * the holder has none of them (then also holding the request's partitions
 * exclusively, with the limits the lock table lacks read), or
 * SYNC_KEYED_EXISTING if it has exactly this request.  Any other overlap is
 * an error.
 */
static SyncKeyedOutcome
sync_keyed_find(SyncKeyedRequest *kr, AcquireRequest *req, SyncEntry **existing,
				TransactionId xid)
{
	for (;;)
	{
		TransactionId wait_for = InvalidTransactionId;
		SyncHolder *h;
		int			nfound = 0;

		if (kr->controller_slot >= 0)
			LWLockAcquire(sync_controllers_lock(), LW_SHARED);
		LWLockAcquire(sync_holders_lock(), LW_EXCLUSIVE);

		h = sync_holder_lookup(kr->holder, false);
		for (int i = 0; i < kr->nnames; i++)
		{
			SyncEntry  *e = sync_holder_entry(h, kr->names[i]);

			existing[i] = e;
			if (e == NULL)
				continue;
			nfound++;
			if (TransactionIdIsValid(e->created_xid) && e->created_xid != xid)
				wait_for = e->created_xid;
			else if (TransactionIdIsValid(e->release_xid) && e->release_xid != xid)
				wait_for = e->release_xid;
			else if (TransactionIdIsValid(e->reserved_xid) && e->reserved_xid != xid)
				wait_for = e->reserved_xid;
		}

		if (TransactionIdIsValid(wait_for))
		{
			/*
			 * another transaction is creating or releasing it, or is
			 * committing a hand-off to it: wait
			 */
			sync_keyed_unlock_all(0);
			XactLockTableWait(wait_for, NULL, NULL, XLTW_None);
			continue;
		}
		/*
		 * A claim-only request (one row its writer inserts) that finds an
		 * entry is refused by its caller, whatever request the entry is
		 * part of: report it as existing.
		 */
		if (nfound == kr->nnames &&
			(kr->claim || sync_same_request(existing, kr->nnames)))
			return SYNC_KEYED_EXISTING;
		if (nfound > 0)
		{
			sync_keyed_unlock_all(0);
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("holder \"%s\" already has a request that names a different set of locks",
							kr->holder),
					 errdetail_plural("%d of the %d locks named is already requested by this holder, but not as exactly this set.",
									  "%d of the %d locks named are already requested by this holder, but not as exactly this set.",
									  nfound, nfound, kr->nnames),
					 errhint("Request exactly the locks of the existing request to see its state, or release it with sync_release() first.")));
		}

		sync_lock_partitions(req->partmask, LW_EXCLUSIVE);
		if (req->have_limits
			? pg_atomic_read_u64(&sync_shmem->limit_generation) == req->generation
			: !sync_limits_missing(req))
			return SYNC_KEYED_NEW;
		sync_keyed_unlock_all(req->partmask);
		sync_read_limits(req);
	}
}

/*
 * Step 2, for an existing request asked for again through the functions:
 * it must ask for the same slots and mode (a request does not change its
 * weight or mode in place).  Caller holds what step 1 took; on error,
 * releases it.
 */
static void
sync_keyed_check_same(SyncKeyedRequest *kr, SyncEntry **existing)
{
	SyncEntry  *e = existing[0];
	int32		slots = e->slots;
	bool		shared = e->shared;
	char	   *name = NULL;

	Assert(LWLockHeldByMe(sync_holders_lock()));
	for (int i = 0; i < kr->nnames && name == NULL; i++)
	{
		e = existing[i];
		if (sync_entry_lock(e)->kind == SYNC_KIND_SEMAPHORE ? e->slots != kr->slots :
			e->shared != kr->shared)
		{
			name = pstrdup(sync_entry_lock(e)->tag.name);
			slots = e->slots;
			shared = e->shared;
		}
	}
	if (name == NULL)
		return;
	sync_keyed_unlock_all(0);
	if (strncmp(name, "sem/", 4) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("holder \"%s\" already requested %d slots of semaphore \"%s\", not %d",
						kr->holder, slots, name, kr->slots),
				 errhint("Release the request with sync_release() first to ask for another number of slots.")));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("holder \"%s\" already requested mutex \"%s\" in %s mode, not %s",
					kr->holder, name, shared ? "shared" : "exclusive",
					kr->shared ? "shared" : "exclusive"),
			 errhint("Release the request with sync_release() first to ask for the other mode.")));
}

/*
 * Step 2, for an existing request: report its state, then release every
 * lock.  The engine re-sorts it and writes an unwritten grant.
 */
static void
sync_keyed_report_existing(SyncKeyedRequest *kr, SyncEntry **existing,
						   SyncKeyedResult *results)
{
	Assert(LWLockHeldByMe(sync_holders_lock()));
	kr->entries = existing;
	kr->request_id = existing[0]->request_id;
	kr->owner = existing[0]->owner;
	for (int i = 0; i < kr->nnames; i++)
	{
		LWLock	   *partition = sync_partition_lock(sync_entry_lock(existing[i])->hashcode);

		LWLockAcquire(partition, LW_SHARED);
		sync_keyed_fill_result(existing[i], &results[i]);
		LWLockRelease(partition);
	}
	sync_keyed_unlock_all(0);
}

/*
 * Step 2, for a new request: bind it to its locks and give the holder a
 * record.  Returns SYNC_BIND_OK holding everything step 1 took, or what
 * went wrong, having undone its work and released every lock.
 */
static int
sync_keyed_bind(SyncKeyedRequest *kr, AcquireRequest *req, SyncEntry **first,
				SyncHolder **h, int *failed)
{
	int			error = sync_bind_request(req, kr->priority, SYNC_SCOPE_KEYED,
										  first, failed);

	if (error == SYNC_BIND_OK)
	{
		*h = sync_holder_lookup(kr->holder, true);
		if (*h == NULL)
		{
			sync_unbind_request(req);
			error = SYNC_BIND_HOLDERS_FULL;
		}
	}
	if (error != SYNC_BIND_OK)
		sync_keyed_unlock_all(req->partmask);
	return error;
}

/* What sync_keyed_place() did. */
typedef enum SyncPlaceResult
{
	SYNC_PLACED = 0,
	SYNC_PLACE_REFUSED,			/* TRY: cannot be granted now */
	SYNC_PLACE_CAPPED			/* QUEUE: would wait in a queue at its cap */
} SyncPlaceResult;

/*
 * Step 3: make the bound entries the holder's and queue them (QUEUE), then
 * grant the request if it can be (QUEUE, TRY) or whatever the limit
 * (FORCE).  A TRY that cannot be granted, or a QUEUE that would wait in a
 * queue that is at its cap (max_waiters; *full says which), is undone
 * and leaves no trace.  Caller holds every lock step 1 took.
 */
static SyncPlaceResult
sync_keyed_place_in(SyncKeyedRequest *kr, AcquireRequest *req, SyncEntry *first,
					SyncHolder *h, TransactionId xid, SyncQueueFull *full)
{
	int			ctl = kr->controller_slot;
	bool		active;
	bool		grant;

	kr->order_at = kr->has_queued_at ? kr->queued_at : req->entries[0]->since;
	active = (ctl < 0 || kr->controller_beating || sync_controller_active(ctl));
	Assert(!kr->claim || kr->mode == SYNC_KEYED_QUEUE);
	for (int i = 0; i < kr->nnames; i++)
	{
		SyncEntry  *e = req->entries[i];

		e->admit_limit = kr->admit_limit;
		e->claim = kr->claim;
		e->preemptible = kr->preemptible;
		e->queued_at = kr->order_at;
		e->since = kr->order_at;	/* waiting since: as the table will say */
	}
	if (kr->mode == SYNC_KEYED_TRY)
		grant = active && sync_request_grantable(first, true);
	else if (kr->mode == SYNC_KEYED_FORCE)
		grant = true;
	else
	{
		/* queued in order first: where it goes decides whether it waits */
		for (int i = 0; i < kr->nnames; i++)
		{
			if (active)
				sync_queue_insert(sync_entry_lock(req->entries[i]), req->entries[i]);
			else
				sync_dormant_insert(sync_entry_lock(req->entries[i]), req->entries[i]);
		}
		/* a claim-only request waits for its claim, whatever the slots */
		grant = !kr->claim && active && sync_request_grantable(first, true);
		if (!grant && sync_refuse_over_cap(req, first, full))
			return SYNC_PLACE_CAPPED;
		if (!grant && active)
			sync_queue_waiting(first);	/* tokens, best-effort passing */
	}
	if (kr->mode == SYNC_KEYED_TRY && !grant)
	{
		/* refused: nothing was linked anywhere yet */
		sync_unbind_request(req);
		return SYNC_PLACE_REFUSED;
	}
	for (int i = 0; i < kr->nnames; i++)
	{
		SyncEntry  *e = req->entries[i];

		e->pid = 0;
		e->procno = -1;
		e->holderno = h->pooled.self;
		Assert(sync_elist_detached(e, SYNC_HOLDER_LINK));
		sync_elist_push_tail(&h->entries, e, SYNC_HOLDER_LINK);
		h->nentries++;
		e->lease_us = kr->lease_us;
		e->lease_expires = 0;
		e->created_xid = xid;
		e->release_xid = InvalidTransactionId;
		e->owner = GetUserId();
		e->controller = ctl;
		if (ctl >= 0)
			sync_controller_ref(ctl);
		e->persisted = false;
	}
	if (grant)
	{
		SyncEntry  *e = first;

		sync_request_grant(first, kr->mode == SYNC_KEYED_FORCE ?
						   SYNC_GRANT_FORCED : SYNC_GRANT_AT_ONCE);
		/* its own row will say so */
		do
		{
			e->persisted = true;
			e = sync_next_in_request(e);
		} while (e != first);
	}
	return SYNC_PLACED;
}

/* ... under the stripes of the parents of its locks, if they have any */
static SyncPlaceResult
sync_keyed_place(SyncKeyedRequest *kr, AcquireRequest *req, SyncEntry *first,
				 SyncHolder *h, TransactionId xid, SyncQueueFull *full)
{
	uint32		stripes = sync_groups_enter_request(first);
	SyncPlaceResult result = sync_keyed_place_in(kr, req, first, h, xid, full);

	sync_groups_leave(stripes);
	return result;
}

/*
 * Request every lock in kr->names for kr->holder, all or nothing, in shared
 * memory, without waiting: each entry is granted at once or queued (mode
 * QUEUE), granted at once or refused leaving no trace (TRY), or granted at
 * once whatever the limit (FORCE).  admit_limit >= 0 makes the request wait
 * until fewer than that many hold the lock (a launch plan version's own
 * limit).  A holder that has requested these locks already gets the
 * current state reported; asking for a different set is an error.
 * results[i] describes names[i].  The rows are the caller's to write
 * (keyed_ops.c), and the request its transaction's (keyed_xact.c).
 */
/*
 * Room for another attempt at a request that found the lock table or the
 * holder table full, holding no LWLock: evict a cached lock or grow the
 * memory (which may raise an error).  False if nothing can be had.
 */
static bool
sync_keyed_make_room(AcquireRequest *req, int error)
{
	if (error == SYNC_BIND_TABLE_FULL)
		return sync_make_room(req->hashes[0], req->nnames);
	return sync_holders_make_room();
}

SyncKeyedOutcome
sync_holders_request(SyncKeyedRequest *kr, SyncKeyedResult *results)
{
	AcquireRequest req;
	SyncEntry  *first = NULL;
	SyncEntry **existing = palloc0(sizeof(SyncEntry *) * kr->nnames);
	TransactionId xid = GetTopTransactionId();
	SyncHolder *h = NULL;
	volatile SyncKeyedOutcome found = SYNC_KEYED_NEW;
	int			failed = -1;
	volatile int error = SYNC_BIND_OK;
	SyncPlaceResult placed;
	SyncQueueFull full;

	sync_request_init(&req, kr->names, kr->nnames, kr->slots, kr->shared);
	req.limit_relid = kr->limit_relid;
	req.fair_key = kr->fair_key;
	req.fair_weight = kr->fair_weight;
	for (int attempt = 1;; attempt++)
	{
		volatile bool room = true;

		/* (an error gives the reserved entries back) */
		PG_TRY();
		{
			if (attempt == 1)
			{
				sync_holder_buckets_grow(0);
				sync_reserve_entries(&req);
			}
			else
				room = sync_keyed_make_room(&req, error);
			if (room)
				found = sync_keyed_find(kr, &req, existing, xid);
		}
		PG_CATCH();
		{
			sync_discard_request(&req);
			PG_RE_THROW();
		}
		PG_END_TRY();
		if (!room)
			break;				/* reported below */
		if (found == SYNC_KEYED_EXISTING)
		{
			sync_discard_request(&req);
			if (!kr->claim)
				sync_keyed_check_same(kr, existing);
			sync_keyed_report_existing(kr, existing, results);
			return SYNC_KEYED_EXISTING;
		}
		error = sync_keyed_bind(kr, &req, &first, &h, &failed);
		if (error == SYNC_BIND_OK)
			break;
		/* the entries stay reserved for another attempt, once room is made */
		if ((error != SYNC_BIND_TABLE_FULL && error != SYNC_BIND_HOLDERS_FULL) ||
			attempt >= SYNC_MAKE_ROOM_ATTEMPTS)
			break;
	}
	if (error != SYNC_BIND_OK)
	{
		sync_discard_request(&req);
		if (error == SYNC_BIND_HOLDERS_FULL)
			sync_report_holders_full();
		sync_report_bind_error(&req, error, failed);
	}

	placed = sync_keyed_place(kr, &req, first, h, xid, &full);
	if (placed == SYNC_PLACE_CAPPED)
	{
		sync_keyed_unlock_all(req.partmask);
		sync_discard_request(&req);
		sync_report_queue_full(&full);
	}
	if (placed == SYNC_PLACE_REFUSED)
	{
		sync_keyed_unlock_all(req.partmask);
		sync_discard_request(&req);
		for (int i = 0; i < kr->nnames; i++)
			results[i].refused = true;
		sync_grant_deferred();
		return SYNC_KEYED_REFUSED;
	}
	for (int i = 0; i < kr->nnames; i++)
		sync_keyed_fill_result(req.entries[i], &results[i]);
	sync_keyed_unlock_all(req.partmask);
	sync_grant_deferred();

	/* (req's arrays may live in req itself: copy) */
	kr->entries = palloc(sizeof(SyncEntry *) * kr->nnames);
	memcpy(kr->entries, req.entries, sizeof(SyncEntry *) * kr->nnames);
	kr->request_id = first->request_id;
	kr->seq = first->seq;
	return SYNC_KEYED_NEW;
}

