/*-------------------------------------------------------------------------
 *
 * keyed.c
 *		Durable keyed holds in shared memory: entries owned by a holder key
 *		(Argo's workflow key) instead of a backend, the shared holder table
 *		that finds them, and what a transaction did to them, applied when it
 *		commits and forgotten when it aborts.
 *
 * The sync_state table (state_table.c) is the durable truth; shared memory
 * is the live copy the queues run on.  They are kept in step like this:
 *
 *	- A request creates its entries at once, marked with the requesting
 *	  transaction (created_xid), queued or granted like any other request,
 *	  and writes their rows.  The entries count at once (so two requests can
 *	  never both take the last slot); at commit the mark is cleared, at abort
 *	  the entries are withdrawn.  Someone else asking about a marked entry
 *	  waits for that transaction first.
 *	- A release deletes the row; the row trigger marks the entry
 *	  (release_xid) and remembers it.  At commit the entry is released and its
 *	  slot handed on; at abort the mark is cleared.  Manual DELETEs of
 *	  sync_state take exactly the same path.
 *	- A grant to a pending entry (when someone else's release commits) cannot
 *	  write the table from a commit callback: it is queued in the outbox, and
 *	  the worker (or sync_reconcile) writes held = true and sends the NOTIFY.
 *	- At start (and after the extension is created again) the entries are
 *	  rebuilt from the table before anything in this database is granted.
 *
 * Locking order: controllers_lock, then holders_lock, then partition locks
 * in ascending order.  holders_lock protects the holder hash, every keyed
 * entry's holder_link, created_xid and release_xid, and keeps keyed entries
 * from being freed (freeing needs it exclusively).  created_xid is written
 * with the entry's partition lock held too, so the grant pass may read it.
 *
 *-------------------------------------------------------------------------
 */
#include "compat.h"
#include "syncwf.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

static HTAB *SyncHolderHash = NULL;

/* What this transaction did to keyed entries, applied at commit. */
typedef enum KeyedOpKind
{
	KEYED_OP_RELEASE,			/* the entry's row was deleted */
	KEYED_OP_RESORT,			/* a new priority for a pending request */
	KEYED_OP_REFRESH,			/* a new lease expiry */
	KEYED_OP_PERSISTED,			/* the worker wrote a grant to the table */
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
	uint64		token;
	int32		priority;
	int64		lease_us;
	TimestampTz at;
	int			nprovisional;	/* TRUNCATE: requests made before it */
	char	   *controller;		/* FORGET, BEAT */
} KeyedOp;

/* A request this transaction made. */
typedef struct Provisional
{
	SubTransactionId subid;
	uint64		request_id;
	int			nentries;
	SyncEntry  *entries[FLEXIBLE_ARRAY_MEMBER];
} Provisional;

static inline bool sync_op_entry_valid(SyncEntry *e, uint64 request_id);

static List *keyed_ops = NIL;	/* KeyedOp *, in TopTransactionContext */
static bool wake_at_commit = false; /* launch plans changed: reconcile */
static List *provisionals = NIL;	/* Provisional *, likewise */
static TransactionId keyed_xid = InvalidTransactionId;	/* their transaction */

Size
sync_keyed_shmem_size(void)
{
	return hash_estimate_size(sync_max_holders, sizeof(SyncHolder));
}

void
sync_keyed_shmem_init(void)
{
	HASHCTL		info;

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(SyncHolderTag);
	info.entrysize = sizeof(SyncHolder);
	SyncHolderHash = ShmemInitHash("syncwf holders",
								   sync_max_holders, sync_max_holders,
								   &info,
								   HASH_ELEM | HASH_BLOBS | HASH_FIXED_SIZE);
}

/*-------------------------------------------------------------------------
 * The durable database
 *-------------------------------------------------------------------------
 */

/* Is this the database named by syncwf.database? */
bool
sync_keyed_database(void)
{
	static Oid	checked_db = InvalidOid;
	static bool is_keyed_db = false;

	if (checked_db != MyDatabaseId)
	{
		char	   *name = get_database_name(MyDatabaseId);

		is_keyed_db = (name != NULL && sync_database != NULL &&
					   strcmp(name, sync_database) == 0);
		checked_db = MyDatabaseId;
	}
	return is_keyed_db;
}

void
sync_keyed_require_database(void)
{
	if (!sync_keyed_database())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("keyed holds are only available in database \"%s\"",
						sync_database),
				 errdetail("syncwf keeps keyed holds, controllers and their tables in the one database named by syncwf.database."),
				 errhint("Connect to database \"%s\", or set syncwf.database in postgresql.conf and restart the server.",
						 sync_database)));
}

/* Keyed holds are written to tables: not on a standby, not read-only. */
void
sync_keyed_require_writable(void)
{
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot change keyed holds during recovery"),
				 errhint("Keyed holds are served by the primary; after promotion this server serves them.")));
	if (XactReadOnly)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot change keyed holds in a read-only transaction")));
}

/*-------------------------------------------------------------------------
 * Holders and entries
 *-------------------------------------------------------------------------
 */

/*
 * Find the holder record of 'key', or create it.  Caller holds holders_lock,
 * exclusively to create.
 */
static SyncHolder *
sync_holder_lookup(const char *key, bool create)
{
	SyncHolderTag tag;
	SyncHolder *holder;
	bool		found;

	Assert(create ? LWLockHeldByMeInMode(SyncState->holders_lock, LW_EXCLUSIVE) :
		   LWLockHeldByMe(SyncState->holders_lock));
	memset(&tag, 0, sizeof(tag));
	tag.dbid = MyDatabaseId;
	strlcpy(tag.key, key, sizeof(tag.key));
	holder = hash_search(SyncHolderHash, &tag,
						 create ? HASH_ENTER_NULL : HASH_FIND, &found);
	if (holder != NULL && !found)
	{
		holder->nentries = 0;
		dlist_init(&holder->entries);
	}
	return holder;
}

/*
 * The holder's entry for lock 'name', skipping one this transaction is
 * releasing (a request after a release in one transaction is a new one).
 * Caller holds holders_lock.
 */
static SyncEntry *
sync_holder_entry(SyncHolder *holder, const char *name)
{
	dlist_iter	iter;

	Assert(LWLockHeldByMe(SyncState->holders_lock));
	if (holder == NULL)
		return NULL;
	dlist_foreach(iter, &holder->entries)
	{
		SyncEntry  *e = dlist_container(SyncEntry, holder_link, iter.cur);

		if (TransactionIdIsValid(e->release_xid) &&
			TransactionIdIsCurrentTransactionId(e->release_xid))
			continue;
		if (strcmp(e->lock->tag.name, name) == 0)
			return e;
	}
	return NULL;
}

/*
 * Unlink a keyed entry from its holder before it goes back to the pool.
 * Caller holds holders_lock exclusively and the entry's partition.
 */
void
sync_keyed_free_entry(SyncEntry *entry)
{
	SyncHolder *holder = entry->holder;

	Assert(LWLockHeldByMeInMode(SyncState->holders_lock, LW_EXCLUSIVE));
	Assert(sync_partition_held(entry->lock->hashcode, true));
	dlist_delete_thoroughly(&entry->holder_link);
	if (--holder->nentries == 0)
		hash_search(SyncHolderHash, &holder->tag, HASH_REMOVE, NULL);
	if (entry->controller >= 0)
		sync_controller_unref(entry->controller);
	entry->holder = NULL;
	entry->created_xid = InvalidTransactionId;
	entry->release_xid = InvalidTransactionId;
}

/*
 * Called by sync_request_grant() for every keyed entry it grants, under the
 * entry's partition lock.  Starts the lease, and hands a grant of a
 * committed pending entry to the worker, which writes and announces it.
 * (A grant while the requesting transaction is open is handed over when it
 * commits.)
 */
void
sync_keyed_granted(SyncEntry *entry)
{
	Assert(sync_partition_held(entry->lock->hashcode, true));
	entry->persisted = false;
	if (entry->lease_us > 0)
	{
		entry->lease_expires = entry->since + entry->lease_us;
		sync_lease_scheduled(entry->lease_expires);
	}
	else
		entry->lease_expires = 0;
	if (!TransactionIdIsValid(entry->created_xid))
		sync_outbox_push(entry);
}

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
	sync_backend_setup();
	return op;
}

/*-------------------------------------------------------------------------
 * Requests
 *-------------------------------------------------------------------------
 */

static void
sync_keyed_fill_result(SyncEntry *e, SyncKeyedResult *r)
{
	r->held = (e->state == SYNC_ENTRY_HELD);
	r->active = (e->state != SYNC_ENTRY_DORMANT);
	r->token = r->held ? (int64) e->token : 0;
	r->position = (e->state == SYNC_ENTRY_PENDING) ? sync_queue_position(e) : 0;
	r->priority = e->priority;
	r->granted_at = e->since;
	r->lease_expires = e->lease_expires;
	r->unwritten = r->held && !e->persisted &&
		!TransactionIdIsValid(e->created_xid);
	r->grant.entry = e;
	r->grant.request_id = e->request_id;
	r->grant.token = e->token;
}

/*
 * Report the state of an existing request of this holder, and re-sort it
 * (at commit) if a new priority was asked for.  Caller holds holders_lock;
 * releases it (and controllers_lock, if held) before returning.
 */
static void
sync_keyed_report_existing(SyncEntry **existing, char **names, int nnames,
						   const char *holder, bool has_priority, int32 priority,
						   SyncKeyedResult *results)
{
	bool		resort = false;
	SyncEntry  *first = existing[0];
	uint64		request_id = first->request_id;
	Oid			owner = first->owner;
	bool		resorted = false;
	int32		resorted_to = 0;
	ListCell   *lc;

	Assert(LWLockHeldByMe(SyncState->holders_lock));
	/* a re-sort this transaction made applies at commit: it counts already */
	foreach(lc, keyed_ops)
	{
		KeyedOp    *op = (KeyedOp *) lfirst(lc);

		if (op->kind == KEYED_OP_RESORT && op->request_id == request_id)
		{
			resorted = true;
			resorted_to = op->priority;
		}
	}

	for (int i = 0; i < nnames; i++)
	{
		LWLock	   *partition = sync_partition_lock(existing[i]->lock->hashcode);

		LWLockAcquire(partition, LW_SHARED);
		sync_keyed_fill_result(existing[i], &results[i]);
		if (resorted)
			results[i].priority = resorted_to;
		if (has_priority && existing[i]->state != SYNC_ENTRY_HELD &&
			results[i].priority != priority)
			resort = true;
		LWLockRelease(partition);
	}
	LWLockRelease(SyncState->holders_lock);
	if (LWLockHeldByMe(SyncState->controllers_lock))
		LWLockRelease(SyncState->controllers_lock);

	/*
	 * A grant the worker has not written yet is written now, in this
	 * transaction, before we report it: a hold reported by a committed
	 * request must survive a crash.
	 */
	for (int i = 0; i < nnames; i++)
		if (results[i].unwritten)
			(void) sync_state_persist_grant(&results[i].grant, NULL);

	if (resort)
	{
		KeyedOp    *op;

		/* only its owner (or an admin) may move a request in its queue */
		sync_check_owner(owner, names[0], holder);

		for (int i = 0; i < nnames; i++)
			sync_state_set_priority(names[i], holder, priority);
		op = sync_keyed_new_op(KEYED_OP_RESORT);
		op->entry = first;
		op->request_id = request_id;
		op->priority = priority;
		for (int i = 0; i < nnames; i++)
			results[i].priority = priority;
	}
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

	Assert(LWLockHeldByMe(SyncState->holders_lock));
	for (int i = 1; i < nnames; i++)
		if (existing[i]->request_id != e->request_id)
			return false;
	do
	{
		ring++;
		e = e->next_in_request;
	} while (e != existing[0]);
	return ring == nnames;
}

static void
sync_keyed_unlock_all(AcquireRequest *req, bool partitions)
{
	if (partitions)
		sync_unlock_partitions(req->partmask);
	LWLockRelease(SyncState->holders_lock);
	if (LWLockHeldByMe(SyncState->controllers_lock))
		LWLockRelease(SyncState->controllers_lock);
}

/*
 * Request every lock in names[] for 'holder', all or nothing, without
 * waiting: each entry is granted at once or queued (mode QUEUE), granted at
 * once or refused leaving no trace (TRY), or granted at once whatever the
 * limit (FORCE).  admit_limit >= 0 makes the request wait until fewer than
 * that many hold the lock (a launch plan version's own limit).  A holder
 * that has requested these locks already gets the current state reported
 * (and a new priority applied); asking for a different set is an error.
 * results[i] describes names[i].
 */
void
sync_keyed_request(char **names, int nnames, const char *holder,
				   SyncKeyedMode mode, int32 admit_limit,
				   bool has_priority, int32 priority,
				   const char *controller, int64 lease_us,
				   bool has_queued_at, TimestampTz queued_at,
				   SyncKeyedResult *results)
{
	AcquireRequest req;
	SyncEntry  *first = NULL;
	SyncEntry **existing = palloc0(sizeof(SyncEntry *) * nnames);
	TransactionId xid;
	int			ctl = -1;
	int			failed = -1;
	int			error;
	bool		active;
	SyncHolder *h;
	TimestampTz now;
	Provisional *prov;
	MemoryContext oldcxt;
	volatile bool already = false;
	bool		beating = false;
	TimestampTz order_at;
	int			room_attempts = 0;

	sync_require_shmem();
	sync_backend_setup();
	sync_keyed_require_database();
	sync_keyed_require_writable();
	sync_keyed_ensure_loaded();

	sync_request_init(&req, names, nnames);
	xid = GetTopTransactionId();
	if (controller != NULL)
	{
		bool		ctl_active;

		ctl = sync_controller_slot(controller, true);

		/*
		 * A controller that requests is alive: an inactive one gets its
		 * heartbeat written, which makes it active when this transaction
		 * commits (like every heartbeat), and this request is queued as an
		 * active controller's.
		 */
		LWLockAcquire(SyncState->controllers_lock, LW_SHARED);
		ctl_active = sync_controller_active(ctl);
		LWLockRelease(SyncState->controllers_lock);
		if (!ctl_active)
		{
			(void) sync_controller_upsert(controller);
			beating = true;
		}
	}

	req.limit_relid = sync_limit_relid_cached();
	sync_reserve_entries(&req);
retry:
	PG_TRY();
	{
		for (;;)
		{
			TransactionId wait_for = InvalidTransactionId;
			int			nfound = 0;

			if (ctl >= 0)
				LWLockAcquire(SyncState->controllers_lock, LW_SHARED);
			LWLockAcquire(SyncState->holders_lock, LW_EXCLUSIVE);

			h = sync_holder_lookup(holder, false);
			for (int i = 0; i < nnames; i++)
			{
				SyncEntry  *e = sync_holder_entry(h, names[i]);

				existing[i] = e;
				if (e == NULL)
					continue;
				nfound++;
				if (TransactionIdIsValid(e->created_xid) && e->created_xid != xid)
					wait_for = e->created_xid;
				else if (TransactionIdIsValid(e->release_xid) && e->release_xid != xid)
					wait_for = e->release_xid;
			}

			if (TransactionIdIsValid(wait_for))
			{
				/* another transaction is creating or releasing it: wait */
				sync_keyed_unlock_all(&req, false);
				XactLockTableWait(wait_for, NULL, NULL, XLTW_None);
				continue;
			}
			if (nfound == nnames && sync_same_request(existing, nnames))
			{
				/* reported below, outside PG_TRY (no return from inside it) */
				already = true;
				break;
			}
			if (nfound > 0)
			{
				sync_keyed_unlock_all(&req, false);
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("holder \"%s\" already has a request that names a different set of locks",
								holder),
						 errdetail_plural("%d of the %d locks named is already requested by this holder, but not as exactly this set.",
										  "%d of the %d locks named are already requested by this holder, but not as exactly this set.",
										  nfound, nfound, nnames),
						 errhint("Request exactly the locks of the existing request to see its state, or release it with sync_release() first.")));
			}

			sync_lock_partitions(req.partmask, LW_EXCLUSIVE);
			if (req.have_limits
				? pg_atomic_read_u64(&SyncState->limit_generation) == req.generation
				: !sync_limits_missing(&req))
				break;
			sync_keyed_unlock_all(&req, true);
			sync_read_limits(&req);
		}
	}
	PG_CATCH();
	{
		sync_discard_request(&req);
		PG_RE_THROW();
	}
	PG_END_TRY();

	if (already)
	{
		sync_discard_request(&req);
		sync_keyed_report_existing(existing, names, nnames, holder, has_priority,
								   priority, results);
		return;
	}

	error = sync_bind_request(&req, priority, SYNC_SCOPE_KEYED, &first, &failed);
	if (error == SYNC_BIND_OK)
	{
		h = sync_holder_lookup(holder, true);
		if (h == NULL)
		{
			sync_unbind_request(&req);
			error = SYNC_BIND_HOLDERS_FULL;
		}
	}
	if (error != SYNC_BIND_OK)
	{
		sync_keyed_unlock_all(&req, true);
		/* the entries stay reserved for another attempt (see holds.c) */
		if (error == SYNC_BIND_TABLE_FULL && ++room_attempts < SYNC_MAKE_ROOM_ATTEMPTS &&
			sync_make_room(req.hashes[0]))
			goto retry;
		sync_discard_request(&req);
		if (error == SYNC_BIND_HOLDERS_FULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("syncwf holder table is full"),
					 errdetail("All %d holder keys are in use.", sync_max_holders),
					 errhint("Raise syncwf.max_holders in postgresql.conf and restart the server.")));
		sync_report_bind_error(&req, error, failed);
	}

	now = req.entries[0]->since;	/* when the request was bound */
	order_at = has_queued_at ? queued_at : now;
	active = (ctl < 0 || beating || sync_controller_active(ctl));
	for (int i = 0; i < nnames; i++)
		req.entries[i]->admit_limit = admit_limit;
	if (mode == SYNC_KEYED_TRY &&
		!(active && sync_request_grantable(first, true)))
	{
		/* refused: nothing was linked anywhere yet */
		sync_unbind_request(&req);
		sync_keyed_unlock_all(&req, true);
		sync_discard_request(&req);
		for (int i = 0; i < nnames; i++)
			results[i].refused = true;
		return;
	}
	for (int i = 0; i < nnames; i++)
	{
		SyncEntry  *e = req.entries[i];

		e->pid = 0;
		e->procno = -1;
		e->holder = h;
		Assert(dlist_node_is_detached(&e->holder_link));
		dlist_push_tail(&h->entries, &e->holder_link);
		h->nentries++;
		e->queued_at = order_at;
		e->since = order_at;	/* waiting since: as the table will say */
		e->lease_us = lease_us;
		e->lease_expires = 0;
		e->created_xid = xid;
		e->release_xid = InvalidTransactionId;
		e->owner = GetUserId();
		e->controller = ctl;
		if (ctl >= 0)
			sync_controller_ref(ctl);
		e->persisted = false;
		if (mode != SYNC_KEYED_QUEUE)
			continue;			/* granted below, never queued */
		if (active)
			sync_queue_insert(e->lock, e);
		else
			sync_dormant_insert(e->lock, e);
	}
	if (mode != SYNC_KEYED_QUEUE || (active && sync_request_grantable(first, true)))
	{
		SyncEntry  *e = first;

		sync_request_grant(first, mode == SYNC_KEYED_FORCE);
		/* our own row will say so */
		do
		{
			e->persisted = true;
			e = e->next_in_request;
		} while (e != first);
	}
	for (int i = 0; i < nnames; i++)
		sync_keyed_fill_result(req.entries[i], &results[i]);
	sync_keyed_unlock_all(&req, true);
	sync_grant_deferred();

	/* Remember the request, then write its rows. */
	oldcxt = MemoryContextSwitchTo(TopTransactionContext);
	prov = palloc(offsetof(Provisional, entries) + sizeof(SyncEntry *) * nnames);
	prov->subid = GetCurrentSubTransactionId();
	prov->request_id = first->request_id;
	prov->nentries = nnames;
	memcpy(prov->entries, req.entries, sizeof(SyncEntry *) * nnames);
	provisionals = lappend(provisionals, prov);
	MemoryContextSwitchTo(oldcxt);
	keyed_xid = xid;

	for (int i = 0; i < nnames; i++)
	{
		SyncStateRow row;

		memset(&row, 0, sizeof(row));
		row.name = names[i];
		row.holder = (char *) holder;
		row.controller = (char *) controller;
		row.held = results[i].held;
		row.priority = priority;
		row.queued_at = order_at;
		row.token = results[i].token;
		row.granted_at = results[i].granted_at;
		row.lease_us = lease_us;
		row.lease_expires = results[i].held ? results[i].lease_expires : 0;
		row.owner = GetUserId();
		row.request_id = (int64) first->request_id;
		row.seq = (int64) first->seq;
		row.admit_limit = admit_limit;
		sync_state_insert(&row);
	}
}

/*
 * Copy what callers need of entry 'e'.  Caller holds holders_lock (so it
 * cannot be freed); its partition is taken here for the fields it guards.
 */
static void
sync_keyed_copy_info(SyncEntry *e, SyncKeyedInfo *info)
{
	LWLock	   *partition = sync_partition_lock(e->lock->hashcode);

	Assert(LWLockHeldByMe(SyncState->holders_lock));
	LWLockAcquire(partition, LW_SHARED);
	info->found = true;
	info->state = e->state;
	info->token = (int64) e->token;
	info->owner = e->owner;
	info->lease_us = e->lease_us;
	info->lease_expires = e->lease_expires;
	info->request_id = e->request_id;
	info->nlocks = e->nlocks;
	info->controller = e->controller;
	info->persisted = e->persisted;
	info->entry = e;
	LWLockRelease(partition);
}

/*
 * Look up the entry of 'holder' for lock 'name' and copy what callers need.
 * Entries another transaction is still creating are not there yet.
 */
bool
sync_keyed_lookup(const char *name, const char *holder, SyncKeyedInfo *info)
{
	SyncHolder *h;
	SyncEntry  *e;

	sync_require_shmem();
	sync_keyed_require_database();
	sync_keyed_ensure_loaded();

	memset(info, 0, sizeof(SyncKeyedInfo));
	LWLockAcquire(SyncState->holders_lock, LW_SHARED);
	h = sync_holder_lookup(holder, false);
	e = sync_holder_entry(h, name);
	if (e != NULL && TransactionIdIsValid(e->created_xid) &&
		!TransactionIdIsCurrentTransactionId(e->created_xid))
		e = NULL;
	if (e != NULL)
		sync_keyed_copy_info(e, info);
	LWLockRelease(SyncState->holders_lock);
	return info->found;
}

/*
 * The names of every lock 'holder' has an entry for (committed, or created
 * by this transaction).
 */
List *
sync_keyed_holder_locks(const char *holder)
{
	SyncHolder *h;
	List	   *names = NIL;
	dlist_iter	iter;

	sync_require_shmem();
	sync_keyed_require_database();
	sync_keyed_ensure_loaded();

	LWLockAcquire(SyncState->holders_lock, LW_SHARED);
	h = sync_holder_lookup(holder, false);
	if (h != NULL)
		dlist_foreach(iter, &h->entries)
		{
			SyncEntry  *e = dlist_container(SyncEntry, holder_link, iter.cur);

			if (TransactionIdIsValid(e->created_xid) &&
				!TransactionIdIsCurrentTransactionId(e->created_xid))
				continue;
			names = lappend(names, pstrdup(e->lock->tag.name));
		}
	LWLockRelease(SyncState->holders_lock);
	return names;
}

/*
 * The other locks of the request 'entry' belongs to (none if it has moved
 * on).  holders_lock keeps keyed rings from changing while we walk one.
 */
List *
sync_keyed_request_locks(SyncEntry *entry, uint64 request_id)
{
	List	   *names = NIL;

	LWLockAcquire(SyncState->holders_lock, LW_SHARED);
	if (sync_op_entry_valid(entry, request_id))
		for (SyncEntry *e = entry->next_in_request; e != entry; e = e->next_in_request)
			names = lappend(names, pstrdup(e->lock->tag.name));
	LWLockRelease(SyncState->holders_lock);
	return names;
}

/*-------------------------------------------------------------------------
 * Changes recorded by the table triggers and the API, applied at commit
 *-------------------------------------------------------------------------
 */

/*
 * The row of (name, holder, request_id) was deleted by this transaction:
 * mark the entry, and release it at commit.  Fills *info with what the
 * trigger needs (whether it was held, its token, controller, request size).
 */
void
sync_keyed_row_deleted(const char *name, const char *holder, uint64 request_id,
					   SyncKeyedInfo *info)
{
	SyncHolder *h;
	dlist_iter	iter;
	SyncEntry  *e = NULL;
	KeyedOp    *op;

	memset(info, 0, sizeof(SyncKeyedInfo));
	LWLockAcquire(SyncState->holders_lock, LW_EXCLUSIVE);
	h = sync_holder_lookup(holder, false);
	if (h != NULL)
		dlist_foreach(iter, &h->entries)
		{
			SyncEntry  *c = dlist_container(SyncEntry, holder_link, iter.cur);

			if (c->request_id == request_id && strcmp(c->lock->tag.name, name) == 0)
			{
				e = c;
				break;
			}
		}
	if (e == NULL)
	{
		LWLockRelease(SyncState->holders_lock);
		return;
	}
	e->release_xid = GetTopTransactionId();
	keyed_xid = e->release_xid;
	sync_keyed_copy_info(e, info);
	LWLockRelease(SyncState->holders_lock);

	op = sync_keyed_new_op(KEYED_OP_RELEASE);
	op->entry = e;
	op->request_id = request_id;
}

void
sync_keyed_truncated(void)
{
	KeyedOp    *op = sync_keyed_new_op(KEYED_OP_TRUNCATE);

	op->nprovisional = list_length(provisionals);
}

void
sync_keyed_note_refresh(SyncEntry *entry, uint64 request_id, int64 lease_us,
						TimestampTz expires)
{
	KeyedOp    *op = sync_keyed_new_op(KEYED_OP_REFRESH);

	op->entry = entry;
	op->request_id = request_id;
	op->lease_us = lease_us;
	op->at = expires;
}

void
sync_keyed_note_persisted(SyncEntry *entry, uint64 request_id, uint64 token)
{
	KeyedOp    *op = sync_keyed_new_op(KEYED_OP_PERSISTED);

	op->entry = entry;
	op->request_id = request_id;
	op->token = token;
}

void
sync_keyed_note_controller(const char *controller, bool forget, TimestampTz at)
{
	KeyedOp    *op = sync_keyed_new_op(forget ? KEYED_OP_FORGET : KEYED_OP_BEAT);

	op->controller = controller ?
		MemoryContextStrdup(TopTransactionContext, controller) : NULL;
	op->at = at;
}

bool
sync_keyed_pending_work(void)
{
	return keyed_ops != NIL || provisionals != NIL;
}

/* Is this keyed entry still the one the operation was about? */
static inline bool
sync_op_entry_valid(SyncEntry *e, uint64 request_id)
{
	return e->state != SYNC_ENTRY_FREE && e->scope == SYNC_SCOPE_KEYED &&
		e->request_id == request_id;
}

/*
 * Release one held keyed entry and hand its slot on.  Caller holds
 * holders_lock exclusively.  If it was granted with others (one request
 * naming several locks), it leaves their ring first.
 */
static void
sync_keyed_release_held(SyncEntry *e)
{
	SyncLock   *lock = e->lock;
	uint32		partmask = (e->next_in_request != e) ? e->partmask :
		(1U << sync_partition_of(lock->hashcode));

	Assert(LWLockHeldByMeInMode(SyncState->holders_lock, LW_EXCLUSIVE));
	sync_lock_partitions(partmask, LW_EXCLUSIVE);
	Assert(e->state == SYNC_ENTRY_HELD);
	if (e->next_in_request != e)
	{
		SyncEntry  *p = e;
		SyncEntry  *rest = e->next_in_request;

		while (p->next_in_request != e)
			p = p->next_in_request;
		p->next_in_request = rest;
		e->next_in_request = e;
		/* the others were granted together; they now count one lock less */
		p = rest;
		do
		{
			p->nlocks--;
			p = p->next_in_request;
		} while (p != rest);
	}
	dlist_delete_thoroughly(&e->lock_link);
	lock->nheld--;
	sync_keyed_free_entry(e);
	sync_entry_free(e);
	sync_grant_waiters(lock);
	sync_lock_idle(lock);
	sync_unlock_partitions(partmask);
}

/* Commit: the entry's row is gone for good. */
static void
sync_apply_release(KeyedOp *op)
{
	SyncEntry  *e = op->entry;

	LWLockAcquire(SyncState->holders_lock, LW_EXCLUSIVE);
	if (sync_op_entry_valid(e, op->request_id) && e->release_xid == keyed_xid)
	{
		LWLock	   *partition = sync_partition_lock(e->lock->hashcode);
		bool		held;

		LWLockAcquire(partition, LW_SHARED);
		held = (e->state == SYNC_ENTRY_HELD);
		LWLockRelease(partition);
		if (held)
			sync_keyed_release_held(e);
		else
			sync_withdraw_request(e);	/* the whole pending request */
	}
	LWLockRelease(SyncState->holders_lock);
}

/* Commit: a pending request takes its new priority. */
static void
sync_apply_resort(KeyedOp *op)
{
	SyncEntry  *first = op->entry;

	LWLockAcquire(SyncState->holders_lock, LW_SHARED);
	if (sync_op_entry_valid(first, op->request_id))
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
	LWLockRelease(SyncState->holders_lock);
}

/* Commit: a refreshed lease, or a grant the table now records. */
static void
sync_apply_entry_update(KeyedOp *op)
{
	SyncEntry  *e = op->entry;

	LWLockAcquire(SyncState->holders_lock, LW_SHARED);
	if (sync_op_entry_valid(e, op->request_id))
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
				e->persisted = true;
		}
		LWLockRelease(partition);
	}
	LWLockRelease(SyncState->holders_lock);
}

/*
 * Free every keyed entry of this database that 'filter' accepts, then run
 * the grant pass of every lock.  Caller holds holders_lock and every
 * partition exclusively.
 */
typedef bool (*KeyedFilter) (SyncEntry *e, void *arg);

static int
sync_keyed_purge(KeyedFilter filter, void *arg)
{
	HASH_SEQ_STATUS status;
	SyncLock   *lock;
	int			n = 0;

	Assert(LWLockHeldByMeInMode(SyncState->holders_lock, LW_EXCLUSIVE));
	Assert(sync_partitions_held(SYNC_ALL_PARTITIONS, true));
	hash_seq_init(&status, sync_lock_hash());
	while ((lock = hash_seq_search(&status)) != NULL)
	{
		dlist_head *lists[3] = {&lock->holders, &lock->waiters, &lock->dormant};

		if (lock->tag.dbid != MyDatabaseId)
			continue;
		for (int l = 0; l < 3; l++)
		{
			dlist_mutable_iter iter;

			dlist_foreach_modify(iter, lists[l])
			{
				SyncEntry  *e = dlist_container(SyncEntry, lock_link, iter.cur);

				if (e->scope != SYNC_SCOPE_KEYED || (filter && !filter(e, arg)))
					continue;
				dlist_delete_thoroughly(&e->lock_link);
				if (e->state == SYNC_ENTRY_HELD)
					lock->nheld--;
				else if (e->state == SYNC_ENTRY_PENDING)
					lock->nwaiting--;
				else
					lock->ndormant--;
				sync_keyed_free_entry(e);
				sync_entry_free(e);
				n++;
			}
		}
	}

	/* second pass: hand freed slots on; drop what is now idle */
	hash_seq_init(&status, sync_lock_hash());
	while ((lock = hash_seq_search(&status)) != NULL)
	{
		if (lock->tag.dbid != MyDatabaseId)
			continue;
		sync_grant_waiters(lock);
		sync_lock_idle(lock);
	}
	return n;
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

	LWLockAcquire(SyncState->holders_lock, LW_EXCLUSIVE);
	sync_lock_partitions(all, LW_EXCLUSIVE);
	(void) sync_keyed_purge(sync_truncate_filter, before);
	sync_unlock_partitions(all);
	LWLockRelease(SyncState->holders_lock);
}

/*
 * Commit: the requests of this transaction become durable; grants they got
 * while it was open are handed to the worker.
 */
static void
sync_apply_provisionals(void)
{
	ListCell   *lc;

	LWLockAcquire(SyncState->holders_lock, LW_EXCLUSIVE);
	foreach(lc, provisionals)
	{
		Provisional *prov = (Provisional *) lfirst(lc);

		for (int i = 0; i < prov->nentries; i++)
		{
			SyncEntry  *e = prov->entries[i];
			LWLock	   *partition;

			if (!sync_op_entry_valid(e, prov->request_id))
				continue;
			partition = sync_partition_lock(e->lock->hashcode);
			LWLockAcquire(partition, LW_EXCLUSIVE);
			e->created_xid = InvalidTransactionId;
			if (e->state == SYNC_ENTRY_HELD && !e->persisted)
				sync_outbox_push(e);
			LWLockRelease(partition);
		}
	}
	LWLockRelease(SyncState->holders_lock);
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
sync_keyed_at_commit(void)
{
	ListCell   *lc;

	if (wake_at_commit)
	{
		wake_at_commit = false;
		pg_atomic_write_u32(&SyncState->launch_dirty, 1);
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
			case KEYED_OP_TRUNCATE:
				sync_apply_truncate(op);
				break;
			case KEYED_OP_FORGET:
				sync_controller_forgotten(op->controller);
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

/* Undo one operation: a release that will not happen. */
static void
sync_undo_op(KeyedOp *op)
{
	if (op->kind == KEYED_OP_RELEASE)
	{
		SyncEntry  *e = op->entry;

		LWLockAcquire(SyncState->holders_lock, LW_EXCLUSIVE);
		if (sync_op_entry_valid(e, op->request_id) && e->release_xid == keyed_xid)
			e->release_xid = InvalidTransactionId;
		LWLockRelease(SyncState->holders_lock);
	}
	else if (op->kind == KEYED_OP_PERSISTED)
	{
		/* the grant is still unwritten: have the next round look again */
		sync_outbox_rescan();
	}
}

/* Withdraw a request this transaction made: it leaves no trace. */
static void
sync_undo_provisional(Provisional *prov)
{
	LWLockAcquire(SyncState->holders_lock, LW_EXCLUSIVE);
	for (int i = 0; i < prov->nentries; i++)
	{
		SyncEntry  *e = prov->entries[i];

		if (sync_op_entry_valid(e, prov->request_id))
		{
			sync_withdraw_request(e);	/* the whole request */
			break;
		}
	}
	LWLockRelease(SyncState->holders_lock);
}

void
sync_keyed_at_abort(void)
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
sync_keyed_at_subabort(SubTransactionId subid)
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
sync_keyed_at_subcommit(SubTransactionId subid, SubTransactionId parent)
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

/*-------------------------------------------------------------------------
 * Loading from the tables
 *-------------------------------------------------------------------------
 */

typedef struct RequestRing
{
	char		key[SYNC_KEY_BUFLEN + 24];	/* holder and request id */
	SyncEntry  *first;
	SyncEntry  *last;
	int			n;
	uint32		partmask;
} RequestRing;

/*
 * Loading: entries of one request (same holder and request id, granted or
 * pending together) are linked into one ring, closed after all rows.
 */
static void
sync_ring_add(HTAB *rings, SyncStateRow *row, SyncEntry *e)
{
	char		key[SYNC_KEY_BUFLEN + 24];
	RequestRing *ring;
	bool		found;

	snprintf(key, sizeof(key), "%s|" INT64_FORMAT "|%d", row->holder,
			 row->request_id, (int) row->held);
	ring = hash_search(rings, key, HASH_ENTER, &found);
	if (!found)
	{
		ring->first = ring->last = e;
		ring->n = 1;
		ring->partmask = e->partmask;
	}
	else
	{
		ring->last->next_in_request = e;
		ring->last = e;
		ring->n++;
		ring->partmask |= e->partmask;
	}
}

/*
 * Put the rows read from sync_state into shared memory, replacing whatever
 * keyed entries of this database were there.  Rows come held first, then in
 * queue order.  Fails as a whole (53200) when memory is too small.
 */
static void
sync_keyed_install(List *rows, List *controllers, Oid limit_relid)
{
	uint32		all = SYNC_ALL_PARTITIONS;
	ListCell   *lc;
	HTAB	   *rings;
	HASHCTL		ctl;
	uint64		max_token = 0,
				max_seq = 0,
				max_request = 0;
	int			nfree;
	const char *failure = NULL;
	TimestampTz now = GetCurrentTimestamp();

	int		   *slots = palloc(sizeof(int) * Max(list_length(rows), 1));
	int			rowno = 0;

	foreach(lc, controllers)
	{
		SyncControllerRow *c = (SyncControllerRow *) lfirst(lc);

		sync_controller_restore(c->name, c->heartbeat, now);
	}
	/* slots for every controller named, before controllers_lock is held */
	foreach(lc, rows)
	{
		SyncStateRow *row = (SyncStateRow *) lfirst(lc);

		slots[rowno++] = row->controller ?
			sync_controller_slot_noerror(row->controller) : -1;
	}
	rowno = 0;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(((RequestRing *) 0)->key);
	ctl.entrysize = sizeof(RequestRing);
	ctl.hcxt = CurrentMemoryContext;
	rings = hash_create("syncwf load rings", 64, &ctl,
						HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);

	LWLockAcquire(SyncState->controllers_lock, LW_SHARED);
	LWLockAcquire(SyncState->holders_lock, LW_EXCLUSIVE);
	sync_lock_partitions(all, LW_EXCLUSIVE);

	(void) sync_keyed_purge(NULL, NULL);

	SpinLockAcquire(&SyncState->pool_mutex);
	nfree = SyncState->pool_nfree;
	SpinLockRelease(&SyncState->pool_mutex);
	if (list_length(rows) > nfree)
		failure = "syncwf.max_entries";

	foreach(lc, rows)
	{
		SyncStateRow *row = (SyncStateRow *) lfirst(lc);
		SyncLockTag tag;
		uint32		hashcode;
		SyncLock   *lock;
		SyncEntry  *e;
		SyncHolder *h;
		bool		found;
		int			slot;

		if (failure)
			break;
		sync_make_tag(&tag, MyDatabaseId, row->name);
		hashcode = sync_tag_hash(&tag);
		lock = sync_lock_create(&tag, hashcode, &found);
		if (lock == NULL)
		{
			failure = "syncwf.max_locks";
			break;
		}
		if (!found)
		{
			lock->kind = (strncmp(row->name, "sem/", 4) == 0) ?
				SYNC_KIND_SEMAPHORE : SYNC_KIND_MUTEX;
			lock->limit = (lock->kind == SYNC_KIND_MUTEX) ? 1 : Max(row->limit, 0);
			lock->limit_defined = (lock->kind == SYNC_KIND_MUTEX || row->limit >= 0);
			if (!lock->limit_defined && sync_lock_is_launch_plan(row->name))
			{
				lock->limit = PG_INT32_MAX;
				lock->limit_defined = true;
			}
			lock->limit_relid = limit_relid;
		}
		h = sync_holder_lookup(row->holder, true);
		if (h == NULL)
		{
			sync_lock_idle(lock);
			failure = "syncwf.max_holders";
			break;
		}
		e = sync_entry_alloc();
		Assert(e != NULL);
		e->lock = lock;
		e->request_id = (uint64) row->request_id;
		e->seq = (uint64) row->seq;
		e->priority = row->priority;
		e->pid = 0;
		e->procno = -1;
		e->scope = SYNC_SCOPE_KEYED;
		e->partmask = 1U << sync_partition_of(hashcode);
		e->nlocks = 1;
		e->holder = h;
		Assert(dlist_node_is_detached(&e->holder_link));
		dlist_push_tail(&h->entries, &e->holder_link);
		h->nentries++;
		e->queued_at = row->queued_at;
		e->lease_us = row->lease_us;
		e->owner = row->owner;
		e->admit_limit = row->admit_limit;
		slot = slots[rowno++];
		e->controller = slot;
		if (slot >= 0)
			sync_controller_ref(slot);
		if (row->held)
		{
			sync_ring_add(rings, row, e);
			e->state = SYNC_ENTRY_HELD;
			e->token = (uint64) row->token;
			e->since = row->granted_at;
			e->lease_expires = row->lease_expires;
			e->persisted = true;
			Assert(dlist_node_is_detached(&e->lock_link));
			dlist_push_tail(&lock->holders, &e->lock_link);
			lock->nheld++;
			if (e->lease_expires != 0)
				sync_lease_scheduled(e->lease_expires);
		}
		else
		{
			sync_ring_add(rings, row, e);
			e->since = row->queued_at;
			if (slot < 0 || sync_controller_active(slot))
				sync_queue_insert(lock, e);
			else
				sync_dormant_insert(lock, e);
		}
		max_token = Max(max_token, (uint64) row->token);
		max_seq = Max(max_seq, (uint64) row->seq);
		max_request = Max(max_request, (uint64) row->request_id);
	}

	if (failure)
		(void) sync_keyed_purge(NULL, NULL);
	else
	{
		HASH_SEQ_STATUS status;
		RequestRing *ring;

		/* close the rings of requests that name several locks */
		hash_seq_init(&status, rings);
		while ((ring = hash_seq_search(&status)) != NULL)
		{
			SyncEntry  *e = ring->first;

			ring->last->next_in_request = ring->first;
			do
			{
				e->nlocks = ring->n;
				e->partmask = ring->partmask;
				e = e->next_in_request;
			} while (e != ring->first);
		}

		sync_tokens_advance(max_token + 1);
		sync_atomic_advance(&SyncState->next_seq, max_seq + 1);
		sync_atomic_advance(&SyncState->next_request_id, max_request + 1);

		/* slots freed while we were down (raised limits) go to the queues */
		{
			SyncLock   *lock;

			hash_seq_init(&status, sync_lock_hash());
			while ((lock = hash_seq_search(&status)) != NULL)
				if (lock->tag.dbid == MyDatabaseId)
					sync_grant_waiters(lock);
		}
	}
	sync_unlock_partitions(all);
	LWLockRelease(SyncState->holders_lock);
	LWLockRelease(SyncState->controllers_lock);
	sync_grant_deferred();
	hash_destroy(rings);

	if (failure)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("cannot load %d keyed entries from sync_state into shared memory",
						list_length(rows)),
				 errhint("Raise %s in postgresql.conf and restart the server.", failure)));
}

/* The heavyweight lock that serializes loading (see below). */
static void
sync_load_locktag(LOCKTAG *tag)
{
	/* an advisory lock with a key no SQL call can take: field4 = 3 */
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, 0x73796e63, 0x6c6f6164, 3);
}

static bool
sync_keyed_loaded(Oid relid)
{
	bool		loaded;

	SpinLockAcquire(&SyncState->keyed_mutex);
	loaded = (SyncState->keyed_load_state == SYNC_KEYED_LOADED &&
			  SyncState->keyed_state_relid == relid);
	SpinLockRelease(&SyncState->keyed_mutex);
	return loaded;
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
		Oid			tables[3] = {relid, sync_controller_relid_cached(),
		sync_limit_relid_cached()};

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
		rows = sync_state_read_all(&controllers);
	}
	sync_keyed_install(rows, controllers,
					   OidIsValid(relid) ? sync_limit_relid_cached() : InvalidOid);
	if (OidIsValid(relid))
		ereport(DEBUG1,
				(errmsg("syncwf loaded %d keyed entries and %d controllers",
						list_length(rows), list_length(controllers))));

	SpinLockAcquire(&SyncState->keyed_mutex);
	SyncState->keyed_load_state = SYNC_KEYED_LOADED;
	SyncState->keyed_dbid = MyDatabaseId;
	SyncState->keyed_state_relid = relid;
	SpinLockRelease(&SyncState->keyed_mutex);
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
	if (SyncState->keyed_load_state == SYNC_KEYED_LOADED &&
		SyncState->keyed_state_relid == relid)
		return true;			/* the usual case: no lock, no spinlock */

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

/*
 * Call visit() for every held keyed entry of this database, under
 * holders_lock and every partition lock, all shared.
 */
typedef void (*HeldVisitor) (SyncEntry *e, void *arg);

static void
sync_keyed_visit_held(HeldVisitor visit, void *arg)
{
	uint32		all = SYNC_ALL_PARTITIONS;
	HASH_SEQ_STATUS status;
	SyncLock   *lock;

	LWLockAcquire(SyncState->holders_lock, LW_SHARED);
	sync_lock_partitions(all, LW_SHARED);
	hash_seq_init(&status, sync_lock_hash());
	while ((lock = hash_seq_search(&status)) != NULL)
	{
		dlist_iter	iter;

		if (lock->tag.dbid != MyDatabaseId || lock->nheld == 0)
			continue;
		dlist_foreach(iter, &lock->holders)
		{
			SyncEntry  *e = dlist_container(SyncEntry, lock_link, iter.cur);

			if (e->scope == SYNC_SCOPE_KEYED)
				visit(e, arg);
		}
	}
	sync_unlock_partitions(all);
	LWLockRelease(SyncState->holders_lock);
}

static void
sync_collect_unpersisted(SyncEntry *e, void *arg)
{
	List	  **items = (List **) arg;
	SyncOutboxItem *item;

	if (e->persisted || TransactionIdIsValid(e->created_xid))
		return;
	item = palloc(sizeof(SyncOutboxItem));
	item->entry = e;
	item->request_id = e->request_id;
	item->token = e->token;
	*items = lappend(*items, item);
}

/*
 * Every held keyed entry of this database whose grant the table does not
 * record yet (after the outbox overflowed, or at the worker's start).
 */
List *
sync_keyed_unpersisted(void)
{
	List	   *items = NIL;

	sync_keyed_visit_held(sync_collect_unpersisted, &items);
	return items;
}

typedef struct ExpiryScan
{
	TimestampTz now;
	TimestampTz next;
	List	   *expired;
} ExpiryScan;

static void
sync_collect_expired(SyncEntry *e, void *arg)
{
	ExpiryScan *scan = (ExpiryScan *) arg;

	if (e->lease_expires == 0)
		return;
	if (e->lease_expires > scan->now)
		scan->next = Min(scan->next, e->lease_expires);
	else if (!e->persisted || TransactionIdIsValid(e->created_xid) ||
			 TransactionIdIsValid(e->release_xid))
	{
		/* its row is not final yet: look again shortly */
		scan->next = Min(scan->next, scan->now + USECS_PER_SEC / 4);
	}
	else
	{
		SyncStateRow *row = palloc0(sizeof(SyncStateRow));

		row->name = pstrdup(e->lock->tag.name);
		row->holder = pstrdup(e->holder->tag.key);
		row->token = (int64) e->token;
		row->request_id = (int64) e->request_id;
		scan->expired = lappend(scan->expired, row);
	}
}

/*
 * Held keyed entries of this database whose lease has expired by 'now',
 * copied out; *next is set to the next moment to look again (DT_NOEND if
 * no lease is running).
 */
List *
sync_keyed_expired(TimestampTz now, TimestampTz *next)
{
	ExpiryScan	scan;

	scan.now = now;
	scan.next = DT_NOEND;
	scan.expired = NIL;
	sync_keyed_visit_held(sync_collect_expired, &scan);
	*next = scan.next;
	return scan.expired;
}

/*
 * Copy what the worker needs to write and announce a grant; false if the
 * entry has moved on since it was queued in the outbox.
 */
bool
sync_keyed_grant_info(SyncOutboxItem *item, SyncStateRow *row)
{
	SyncEntry  *e = item->entry;
	bool		ok = false;

	LWLockAcquire(SyncState->holders_lock, LW_SHARED);
	if (sync_op_entry_valid(e, item->request_id) &&
		e->lock->tag.dbid == MyDatabaseId)
	{
		LWLock	   *partition = sync_partition_lock(e->lock->hashcode);

		LWLockAcquire(partition, LW_SHARED);
		if (e->state == SYNC_ENTRY_HELD && e->token == item->token &&
			!e->persisted && !TransactionIdIsValid(e->created_xid))
		{
			memset(row, 0, sizeof(SyncStateRow));
			row->name = pstrdup(e->lock->tag.name);
			row->holder = pstrdup(e->holder->tag.key);
			row->controller = (e->controller >= 0) ?
				pstrdup(sync_controller_name(e->controller)) : NULL;
			row->held = true;
			row->token = (int64) e->token;
			row->granted_at = e->since;
			row->lease_expires = e->lease_expires;
			row->request_id = (int64) e->request_id;
			ok = true;
		}
		LWLockRelease(partition);
	}
	LWLockRelease(SyncState->holders_lock);
	return ok;
}

/* Have the worker reconcile launch plans when this transaction commits. */
void
sync_keyed_wake_at_commit(void)
{
	wake_at_commit = true;
}

/*
 * A pending request waits against a new limit of its own (a launch plan
 * version's max_concurrency changed); a raised one may grant at once.
 */
void
sync_keyed_set_admit_limit(const char *name, const char *holder, int32 limit,
						   bool grant)
{
	SyncHolder *h;
	SyncEntry  *e;

	LWLockAcquire(SyncState->holders_lock, LW_SHARED);
	h = sync_holder_lookup(holder, false);
	e = sync_holder_entry(h, name);
	if (e != NULL)
	{
		uint32		partmask = e->partmask;

		sync_lock_partitions(partmask, LW_EXCLUSIVE);
		if (e->state == SYNC_ENTRY_PENDING || e->state == SYNC_ENTRY_DORMANT)
		{
			SyncEntry  *x = e;

			do
			{
				x->admit_limit = limit;
				x = x->next_in_request;
			} while (x != e);
			if (grant)
				sync_grant_waiters(e->lock);
		}
		sync_unlock_partitions(partmask);
	}
	LWLockRelease(SyncState->holders_lock);
	sync_grant_deferred();
	sync_state_set_admit_limit(name, holder, limit);
}

/*
 * Run the grant pass of lock 'name' (after several of its requests got new
 * limits of their own, so that they are granted in queue order).
 */
void
sync_keyed_regrant(const char *name)
{
	SyncLockTag tag;
	uint32		hashcode;
	LWLock	   *partition;
	SyncLock   *lock;

	sync_make_tag(&tag, MyDatabaseId, name);
	hashcode = sync_tag_hash(&tag);
	partition = sync_partition_lock(hashcode);
	LWLockAcquire(partition, LW_EXCLUSIVE);
	lock = sync_lock_lookup(&tag, hashcode);
	if (lock != NULL)
		sync_grant_waiters(lock);
	LWLockRelease(partition);
	sync_grant_deferred();
}
