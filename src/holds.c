/*-------------------------------------------------------------------------
 *
 * holds.c
 *		This backend's holds: acquiring (with or without waiting), releasing,
 *		and letting go of everything at transaction end, at savepoint
 *		rollback and at backend exit.
 *
 * Each backend keeps a local hash of the locks it holds, name -> shared
 * entry.  Only the owning backend frees its entries, so the pointers stay
 * valid while they are in the local hash.  A session holds a lock at most
 * once: acquiring a lock it already holds returns the existing token.
 *
 * While a backend waits, its queue entries are remembered in waiting_entry
 * so that an error (cancel, statement_timeout, our own timeout) or exit
 * withdraws them at once and lets the queue behind them move.
 *
 *-------------------------------------------------------------------------
 */
#include "compat.h"
#include "syncwf.h"

#include "access/xact.h"
#include "common/int.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

typedef struct LocalHold
{
	char		name[SYNC_NAME_BUFLEN]; /* hash key */
	SyncEntry  *entry;			/* NULL while the request is being made */
	SyncScope	scope;
	SubTransactionId subid;		/* transaction scope: who acquired it */
} LocalHold;

static HTAB *local_holds = NULL;
static int	n_xact_holds = 0;
static bool backend_ready = false;

/* The request this backend is waiting for, if any. */
static SyncEntry *waiting_entry = NULL;

static void sync_xact_callback(XactEvent event, void *arg);
static void sync_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
								  SubTransactionId parentSubid, void *arg);
static void sync_backend_exit(int code, Datum arg);

/*
 * First use in this backend: the local hash, the transaction callbacks and
 * the exit hook.  Called by every entry point that can leave state behind
 * (acquire, release, and the sync_limit trigger).
 */
void
sync_backend_setup(void)
{
	HASHCTL		ctl;

	if (backend_ready)
		return;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = SYNC_NAME_BUFLEN;
	ctl.entrysize = sizeof(LocalHold);
	ctl.hcxt = TopMemoryContext;
	local_holds = hash_create("syncwf local holds", 64, &ctl,
							  HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);

	RegisterXactCallback(sync_xact_callback, NULL);
	RegisterSubXactCallback(sync_subxact_callback, NULL);
	before_shmem_exit(sync_backend_exit, (Datum) 0);
	backend_ready = true;
}

/*
 * Withdraw a whole request: pending entries leave their queues, entries that
 * were granted in a race with the error are released.  The queues it leaves
 * get a grant pass.
 */
void
sync_withdraw_request(SyncEntry *first)
{
	SyncLock   *locks[SYNC_MAX_REQUEST_LOCKS];
	int			nlocks = 0;
	uint32		partmask = first->partmask;
	SyncEntry  *e;

	sync_lock_partitions(partmask, LW_EXCLUSIVE);
	e = first;
	do
	{
		SyncEntry  *next = e->next_in_request;
		SyncLock   *lock = e->lock;

		dlist_delete_thoroughly(&e->lock_link);
		if (e->state == SYNC_ENTRY_PENDING)
			lock->nwaiting--;
		else if (e->state == SYNC_ENTRY_DORMANT)
			lock->ndormant--;
		else
		{
			Assert(e->state == SYNC_ENTRY_HELD);
			lock->nheld--;
		}
		locks[nlocks++] = lock;
		if (e->scope == SYNC_SCOPE_KEYED)
			sync_keyed_free_entry(e);
		sync_entry_free(e);
		e = next;
	} while (e != first);

	for (int i = 0; i < nlocks; i++)
	{
		sync_grant_waiters(locks[i]);
		sync_lock_idle(locks[i]);
	}
	sync_unlock_partitions(partmask);
	sync_grant_deferred();
}

/* Release one held entry and hand its slot on. */
static void
sync_release_entry(SyncEntry *entry)
{
	SyncLock   *lock = entry->lock;
	LWLock	   *partition = sync_partition_lock(lock->hashcode);

	LWLockAcquire(partition, LW_EXCLUSIVE);
	Assert(entry->state == SYNC_ENTRY_HELD);
	dlist_delete_thoroughly(&entry->lock_link);
	lock->nheld--;
	sync_entry_free(entry);
	sync_grant_waiters(lock);
	sync_lock_idle(lock);
	LWLockRelease(partition);
	sync_grant_deferred();
}

static void
sync_forget_local(LocalHold *hold)
{
	if (hold->scope == SYNC_SCOPE_XACT && hold->entry != NULL)
		n_xact_holds--;
	hash_search(local_holds, hold->name, HASH_REMOVE, NULL);
}

/* Release every hold matching the filter; returns how many. */
typedef bool (*HoldFilter) (LocalHold *hold, SubTransactionId subid);

static bool
filter_all(LocalHold *hold, SubTransactionId subid)
{
	return true;
}

static bool
filter_xact(LocalHold *hold, SubTransactionId subid)
{
	return hold->scope == SYNC_SCOPE_XACT;
}

static bool
filter_subxact(LocalHold *hold, SubTransactionId subid)
{
	return hold->scope == SYNC_SCOPE_XACT && hold->subid == subid;
}

static int
sync_release_matching(HoldFilter filter, SubTransactionId subid)
{
	HASH_SEQ_STATUS status;
	LocalHold  *hold;
	int			released = 0;

	if (local_holds == NULL)
		return 0;

	/* removing the current element during hash_seq_search is allowed */
	hash_seq_init(&status, local_holds);
	while ((hold = hash_seq_search(&status)) != NULL)
	{
		if (hold->entry == NULL || !filter(hold, subid))
			continue;
		sync_release_entry(hold->entry);
		sync_forget_local(hold);
		released++;
	}
	return released;
}

static void
sync_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			sync_limits_precommit();
			break;
		case XACT_EVENT_PRE_PREPARE:
			if (n_xact_holds > 0)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that holds syncwf transaction-scoped locks"),
						 errhint("Release them with sync_release() first, or take them with sync_acquire() (session scope).")));
			if (sync_limits_pending())
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that changed sync_limit"),
						 errhint("Change sync_limit in a transaction that commits directly.")));
			if (sync_keyed_pending_work())
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that changed keyed holds or controllers"),
						 errhint("Request, release and heartbeat in a transaction that commits directly.")));
			break;
		case XACT_EVENT_COMMIT:
			if (n_xact_holds > 0)
				sync_release_matching(filter_xact, InvalidSubTransactionId);
			sync_limits_at_commit();
			sync_keyed_at_commit();
			break;
		case XACT_EVENT_ABORT:
			if (waiting_entry != NULL)
			{
				sync_withdraw_request(waiting_entry);
				waiting_entry = NULL;
			}
			if (n_xact_holds > 0)
				sync_release_matching(filter_xact, InvalidSubTransactionId);
			sync_limits_forget();
			sync_keyed_at_abort();
			break;
		default:
			break;
	}
}

static void
sync_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					  SubTransactionId parentSubid, void *arg)
{
	HASH_SEQ_STATUS status;
	LocalHold  *hold;

	if (event == SUBXACT_EVENT_ABORT_SUB)
		sync_keyed_at_subabort(mySubid);
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
		sync_keyed_at_subcommit(mySubid, parentSubid);

	if (n_xact_holds == 0)
		return;

	switch (event)
	{
		case SUBXACT_EVENT_ABORT_SUB:
			sync_release_matching(filter_subxact, mySubid);
			break;
		case SUBXACT_EVENT_COMMIT_SUB:
			hash_seq_init(&status, local_holds);
			while ((hold = hash_seq_search(&status)) != NULL)
				if (hold->scope == SYNC_SCOPE_XACT && hold->subid == mySubid)
					hold->subid = parentSubid;
			break;
		default:
			break;
	}
}

/* before_shmem_exit: a backend that ends lets go of everything at once. */
static void
sync_backend_exit(int code, Datum arg)
{
	/* we may be exiting on an error raised while an LWLock was held */
	LWLockReleaseAll();

	if (waiting_entry != NULL)
	{
		sync_withdraw_request(waiting_entry);
		waiting_entry = NULL;
	}
	sync_release_matching(filter_all, InvalidSubTransactionId);
}

/*
 * Raise the timeout error for a request.  The caller has withdrawn it.
 */
static void
sync_report_timeout(char **names, int nnames, int64 timeout_us)
{
	if (nnames == 1)
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("could not obtain syncwf lock \"%s\" within %s",
						names[0],
						psprintf(INT64_FORMAT " ms", timeout_us / 1000)),
				 errhint("Raise the timeout argument, or pass NULL to wait until the lock is granted.")));
	else
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("could not obtain syncwf locks \"%s\" and %d more within %s",
						names[0], nnames - 1,
						psprintf(INT64_FORMAT " ms", timeout_us / 1000)),
				 errhint("Raise the timeout argument, or pass NULL to wait until the locks are granted.")));
}

/*
 * Sleep on our latch until the request 'first' is granted.  Whoever grants
 * it sets our latch; nothing here polls.  Raises 55P03 at the deadline.
 */
static void
sync_wait_loop(SyncEntry *first, char **names, int nnames, int64 timeout_us)
{
	LWLock	   *partition = sync_partition_lock(first->lock->hashcode);
	TimestampTz deadline = 0;

	if (timeout_us >= 0 &&
		pg_add_s64_overflow(GetCurrentTimestamp(), timeout_us, &deadline))
		deadline = PG_INT64_MAX;	/* later than any clock reading */

	for (;;)
	{
		bool		granted;
		long		sleep_ms = -1;
		int			events = WL_LATCH_SET | WL_EXIT_ON_PM_DEATH;

		LWLockAcquire(partition, LW_SHARED);
		granted = (first->state == SYNC_ENTRY_HELD);
		LWLockRelease(partition);
		if (granted)
			break;

		if (timeout_us >= 0)
		{
			TimestampTz now = GetCurrentTimestamp();

			if (now >= deadline)
			{
				waiting_entry = NULL;
				sync_withdraw_request(first);
				sync_report_timeout(names, nnames, timeout_us);
			}
			/* round up, so that we never wake before the deadline */
			sleep_ms = (long) Min((deadline - now + 999) / 1000, (int64) INT_MAX);
			events |= WL_TIMEOUT;
		}

		(void) WaitLatch(MyLatch, events, sleep_ms,
						 sync_wait_event(SYNC_WAIT_ACQUIRE));
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Wait until the request 'first' is granted.  Any error (cancel,
 * termination, statement_timeout, our own timeout) withdraws the request
 * before it propagates, so the queue behind it moves at once.
 */



/* Give back what a request reserved, when it is not going to be granted. */
void
sync_discard_request(AcquireRequest *req)
{
	for (int i = 0; i < req->nnames; i++)
	{
		if (req->entries[i] != NULL)
		{
			sync_entry_free(req->entries[i]);
			req->entries[i] = NULL;
		}
		if (req->placeholders && req->needed[i])
			hash_search(local_holds, req->names[i], HASH_REMOVE, NULL);
	}
	req->placeholders = false;
}

/*
 * Reserve shared entries and local placeholders, so that running out of
 * either is reported before anything is queued, and a failed local insert
 * can never follow a grant.
 */
void
sync_reserve_entries(AcquireRequest *req)
{
	for (int i = 0; i < req->nnames; i++)
	{
		if (!req->needed[i])
			continue;
		req->entries[i] = sync_entry_alloc();
		if (req->entries[i] == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("syncwf entry pool is full"),
					 errdetail("All %d holds and queue entries are in use.",
							   sync_max_entries),
					 errhint("Raise syncwf.max_entries in postgresql.conf and restart the server.")));
	}
}

static void
sync_reserve_request(AcquireRequest *req, SyncScope scope)
{
	sync_reserve_entries(req);
	req->placeholders = true;
	for (int i = 0; i < req->nnames; i++)
	{
		LocalHold  *hold;
		bool		found;

		if (!req->needed[i])
			continue;
		hold = hash_search(local_holds, req->names[i], HASH_ENTER, &found);
		Assert(!found);
		hold->entry = NULL;
		hold->scope = scope;
		hold->subid = GetCurrentSubTransactionId();
	}
}

/* Read the limits of every semaphore the request needs from sync_limit. */
void
sync_read_limits(AcquireRequest *req)
{
	req->generation = pg_atomic_read_u64(&SyncState->limit_generation);
	for (int i = 0; i < req->nnames; i++)
		if (req->needed[i] && req->kinds[i] == SYNC_KIND_SEMAPHORE)
		{
			if (!sync_lock_is_launch_plan(req->names[i]))
				req->limits[i] = sync_limit_lookup(req->names[i], req->limit_relid);
			else
			{
				/* a launch plan's overall limit, if someone set one */
				int32		limit = sync_limit_lookup_optional(req->names[i],
															   req->limit_relid);

				req->limits[i] = (limit >= 0) ? limit : PG_INT32_MAX;
			}
		}
	req->have_limits = true;
}

/*
 * Does the request need to read limits before it can be bound?  Yes if one
 * of its semaphores is not in the lock table, or only as a cached entry from
 * another sync_limit table (the extension was dropped and created again).
 * Caller holds the request's partitions.
 */
bool
sync_limits_missing(AcquireRequest *req)
{
	Assert(sync_partitions_held(req->partmask, false));
	for (int i = 0; i < req->nnames; i++)
	{
		SyncLock   *lock;

		if (!req->needed[i] || req->kinds[i] != SYNC_KIND_SEMAPHORE)
			continue;
		lock = sync_lock_lookup(&req->tags[i], req->hashes[i]);
		if (lock == NULL || (lock->cached && lock->limit_relid != req->limit_relid))
			return true;
	}
	return false;
}

/*
 * Reserve entries and placeholders, and return holding every partition of
 * the request exclusively, with limits read for every semaphore the lock
 * table does not know.  Most of the time every lock is there (live, or a
 * cached semaphore), and no table is read.  Otherwise the limits are read
 * (no LWLock may be held meanwhile) and the partitions taken again; a limit
 * change that committed in between makes us read again, so a lock never
 * starts with a stale limit.  On error, nothing stays reserved.
 */
static void
sync_prepare_request(AcquireRequest *req, SyncScope scope, Oid fn_oid)
{
	PG_TRY();
	{
		sync_reserve_request(req, scope);
		for (int i = 0; i < req->nnames; i++)
			if (req->needed[i] && req->kinds[i] == SYNC_KIND_SEMAPHORE)
			{
				req->limit_relid = sync_limit_relid(fn_oid);
				break;
			}

		for (;;)
		{
			sync_lock_partitions(req->partmask, LW_EXCLUSIVE);
			if (req->have_limits
				? pg_atomic_read_u64(&SyncState->limit_generation) == req->generation
				: !sync_limits_missing(req))
				break;
			sync_unlock_partitions(req->partmask);
			sync_read_limits(req);
		}
	}
	PG_CATCH();
	{
		sync_discard_request(req);
		PG_RE_THROW();
	}
	PG_END_TRY();
}

/* Fill in an entry of the request, bound to 'lock'. */
static void
sync_bind_entry(AcquireRequest *req, int i, SyncLock *lock, uint64 request_id,
				uint64 seq, int32 priority, SyncScope scope, TimestampTz now)
{
	SyncEntry  *e = req->entries[i];

	e->lock = lock;
	e->request_id = request_id;
	e->seq = seq;
	e->priority = priority;
	e->pid = MyProcPid;
	e->procno = sync_my_procno();
	e->scope = scope;
	e->partmask = req->partmask;
	e->nlocks = req->nneeded;
	e->since = now;
	e->queued_at = now;
	e->state = SYNC_ENTRY_FREE; /* in no list yet */
}

/* Let the locks a failed request touched go idle again. */
void
sync_unbind_request(AcquireRequest *req)
{
	for (int i = 0; i < req->nnames; i++)
		if (req->entries[i] != NULL && req->entries[i]->lock != NULL)
		{
			sync_lock_idle(req->entries[i]->lock);
			req->entries[i]->lock = NULL;
		}
}

/*
 * Find or create each lock and bind the request's entries to it, as one
 * ring.  Caller holds every partition of the request exclusively (from
 * sync_prepare_request).  Existing locks are bound first, so that creating
 * the others (which may evict cached semaphores) cannot evict them.
 *
 * On failure, undoes its own work and returns what went wrong:
 * SYNC_BIND_TABLE_FULL (the caller may make room and try again) or
 * SYNC_BIND_NO_LIMIT (*failed is the semaphore's index).  Returns
 * SYNC_BIND_OK and the request's first entry on success.
 */
int
sync_bind_request(AcquireRequest *req, int32 priority, SyncScope scope,
				  SyncEntry **first, int *failed)
{
	uint64		request_id = pg_atomic_fetch_add_u64(&SyncState->next_request_id, 1);
	uint64		seq = pg_atomic_fetch_add_u64(&SyncState->next_seq, 1);
	TimestampTz now = GetCurrentTimestamp();
	SyncEntry  *prev = NULL;

	Assert(sync_partitions_held(req->partmask, true));
	for (int pass = 0; pass < 2; pass++)
	{
		for (int i = 0; i < req->nnames; i++)
		{
			SyncLock   *lock;
			bool		found;

			if (!req->needed[i] || req->entries[i]->lock != NULL)
				continue;
			if (pass == 0)
			{
				lock = sync_lock_lookup(&req->tags[i], req->hashes[i]);
				if (lock == NULL)
					continue;
				sync_lock_uncache(lock);
				found = true;
			}
			else
			{
				lock = sync_lock_create(&req->tags[i], req->hashes[i], &found);
				if (lock == NULL)
				{
					sync_unbind_request(req);
					return SYNC_BIND_TABLE_FULL;
				}
			}

			if (!found)
			{
				Assert(req->kinds[i] == SYNC_KIND_MUTEX || req->have_limits);
				lock->kind = req->kinds[i];
				lock->limit = (req->kinds[i] == SYNC_KIND_MUTEX) ? 1 : req->limits[i];
				lock->limit_relid = req->limit_relid;
				lock->limit_defined = true;
			}
			else if (lock->kind == SYNC_KIND_SEMAPHORE &&
					 lock->limit_relid != req->limit_relid &&
					 lock->nheld == 0 && lock->nwaiting == 0)
			{
				/* a cached limit from a dropped sync_limit: use the new one */
				Assert(req->have_limits);
				lock->limit = req->limits[i];
				lock->limit_relid = req->limit_relid;
				lock->limit_defined = true;
			}
			else if (!lock->limit_defined)
			{
				/* its sync_limit row was deleted while it was in use */
				sync_bind_entry(req, i, lock, request_id, seq, priority, scope, now);
				sync_unbind_request(req);
				*failed = i;
				return SYNC_BIND_NO_LIMIT;
			}
			sync_bind_entry(req, i, lock, request_id, seq, priority, scope, now);
		}
	}

	/* link the ring in argument order */
	*first = NULL;
	for (int i = 0; i < req->nnames; i++)
	{
		if (!req->needed[i])
			continue;
		if (*first == NULL)
			*first = req->entries[i];
		else
			prev->next_in_request = req->entries[i];
		prev = req->entries[i];
	}
	prev->next_in_request = *first;
	return 0;
}

/*
 * Wait until the queued request 'first' is granted.  Any error (cancel,
 * termination, statement_timeout, our own timeout) withdraws the request
 * and drops its placeholders before it propagates, so the queue behind it
 * moves at once.
 */
static void
sync_wait_for_grant(AcquireRequest *req, SyncEntry *first, int64 timeout_us)
{
	waiting_entry = first;
	PG_TRY();
	{
		sync_wait_loop(first, req->names, req->nnames, timeout_us);
	}
	PG_CATCH();
	{
		if (waiting_entry != NULL)
		{
			waiting_entry = NULL;
			sync_withdraw_request(first);
		}
		/* the withdrawal freed the shared entries */
		memset(req->entries, 0, sizeof(SyncEntry *) * req->nnames);
		sync_discard_request(req);
		PG_RE_THROW();
	}
	PG_END_TRY();
	waiting_entry = NULL;
}

/*
 * After a successful session-scope request: the transaction-scope holds it
 * named, which the session already had, now last for the session (the
 * longer scope wins).  Only after success, so that a failed request changes
 * nothing.
 */
static void
sync_promote_holds(AcquireRequest *req, SyncScope scope)
{
	if (scope != SYNC_SCOPE_SESSION)
		return;
	for (int i = 0; i < req->nnames; i++)
	{
		LocalHold  *hold;
		LWLock	   *partition;

		if (req->needed[i])
			continue;
		hold = hash_search(local_holds, req->names[i], HASH_FIND, NULL);
		if (hold->scope != SYNC_SCOPE_XACT)
			continue;
		partition = sync_partition_lock(hold->entry->lock->hashcode);
		LWLockAcquire(partition, LW_EXCLUSIVE);
		hold->entry->scope = SYNC_SCOPE_SESSION;
		LWLockRelease(partition);
		hold->scope = SYNC_SCOPE_SESSION;
		n_xact_holds--;
	}
}

/* Report what sync_bind_request() returned; the caller has cleaned up. */
void
sync_report_bind_error(AcquireRequest *req, int error, int failed)
{
	if (error == SYNC_BIND_TABLE_FULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("syncwf lock table is full"),
				 errdetail("All %d lock slots are in use.", sync_max_locks),
				 errhint("Raise syncwf.max_locks in postgresql.conf and restart the server.")));
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("semaphore \"%s\" has no limit", req->names[failed]),
			 errdetail("Its row was deleted from sync_limit while the semaphore was in use."),
			 errhint("Insert it again, for example: INSERT INTO sync_limit (name, sizelimit) VALUES ('%s', 1);",
					 req->names[failed] + 4)));
}

/*
 * Set up a request for names[]: every lock counts as needed; the caller
 * clears needed[i] (and recomputes partmask) for locks it has already.
 * Validates the names.
 */
void
sync_request_init(AcquireRequest *req, char **names, int nnames)
{
	memset(req, 0, sizeof(AcquireRequest));
	req->names = names;
	req->nnames = nnames;
	req->needed = palloc0(sizeof(bool) * nnames);
	req->kinds = palloc(sizeof(SyncLockKind) * nnames);
	req->limits = palloc0(sizeof(int32) * nnames);
	req->tags = palloc(sizeof(SyncLockTag) * nnames);
	req->hashes = palloc(sizeof(uint32) * nnames);
	req->entries = palloc0(sizeof(SyncEntry *) * nnames);
	for (int i = 0; i < nnames; i++)
	{
		req->kinds[i] = sync_parse_lock_name(names[i]);
		req->needed[i] = true;
		req->nneeded++;
		sync_make_tag(&req->tags[i], MyDatabaseId, names[i]);
		req->hashes[i] = sync_tag_hash(&req->tags[i]);
		req->partmask |= 1U << sync_partition_of(req->hashes[i]);
	}
}

/*
 * Acquire every lock in names[], all or nothing.
 *
 * wait = false: never queue; return false when not every lock can be granted
 * now without jumping a queue.  wait = true: queue and sleep until granted,
 * or until timeout_us (negative: no timeout) passes, which raises 55P03.
 * On success tokens[i] is the fencing token of names[i].
 *
 * names[] must be distinct (sql_api.c checks); they are validated here.
 */
bool
sync_acquire_locks(char **names, int nnames, int32 priority,
				   SyncScope scope, bool wait, int64 timeout_us,
				   Oid fn_oid, int64 *tokens)
{
	AcquireRequest req;
	SyncEntry  *first;
	int			failed = -1;
	int			error;
	bool		granted;

	sync_require_shmem();
	sync_backend_setup();
	/* in the keyed holds' database, nothing is granted before they are loaded */
	sync_keyed_ensure_loaded();

	sync_request_init(&req, names, nnames);

	/* Locks this session holds already count once and keep their token. */
	req.partmask = 0;
	for (int i = 0; i < nnames; i++)
	{
		LocalHold  *hold = hash_search(local_holds, names[i], HASH_FIND, NULL);

		if (hold != NULL && hold->entry != NULL)
		{
			tokens[i] = (int64) hold->entry->token;
			req.needed[i] = false;
			req.nneeded--;
			continue;
		}
		req.partmask |= 1U << sync_partition_of(req.hashes[i]);
	}
	if (req.nneeded == 0)
	{
		sync_promote_holds(&req, scope);
		return true;
	}

	for (int attempt = 1;; attempt++)
	{
		sync_prepare_request(&req, scope, fn_oid);
		error = sync_bind_request(&req, priority, scope, &first, &failed);
		if (error == SYNC_BIND_OK)
			break;
		sync_unlock_partitions(req.partmask);
		sync_discard_request(&req);
		if (error != SYNC_BIND_TABLE_FULL || attempt == SYNC_MAKE_ROOM_ATTEMPTS ||
			!sync_make_room(req.hashes[0]))
			sync_report_bind_error(&req, error, failed);
	}

	if (!wait)
	{
		/* a try never queues and never jumps a queue */
		granted = sync_request_grantable(first, true);
		if (granted)
			sync_request_grant(first, false);
		else
			sync_unbind_request(&req);
	}
	else
	{
		SyncEntry  *e = first;

		do
		{
			sync_queue_insert(e->lock, e);
			e = e->next_in_request;
		} while (e != first);
		granted = sync_request_grantable(first, true);
		if (granted)
			sync_request_grant(first, false);
	}
	sync_unlock_partitions(req.partmask);

	if (!wait && !granted)
	{
		sync_discard_request(&req);
		return false;
	}

	if (!granted)
		sync_wait_for_grant(&req, first, timeout_us);

	/* Granted: fill in the local holds. */
	for (int i = 0; i < nnames; i++)
	{
		LocalHold  *hold;

		if (!req.needed[i])
			continue;
		hold = hash_search(local_holds, names[i], HASH_FIND, NULL);
		Assert(hold != NULL);
		hold->entry = req.entries[i];
		if (scope == SYNC_SCOPE_XACT)
			n_xact_holds++;
		tokens[i] = (int64) req.entries[i]->token;
	}
	sync_promote_holds(&req, scope);
	return true;
}

/* Release one lock this session holds; false (with a WARNING) if it doesn't. */
bool
sync_release_lock(const char *name)
{
	LocalHold  *hold;

	sync_require_shmem();
	sync_backend_setup();
	(void) sync_parse_lock_name(name);

	hold = hash_search(local_holds, name, HASH_FIND, NULL);
	if (hold == NULL || hold->entry == NULL)
	{
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg("syncwf lock \"%s\" is not held by this session", name)));
		return false;
	}
	sync_release_entry(hold->entry);
	sync_forget_local(hold);
	return true;
}

/* Release every lock this session holds, of either scope. */
int
sync_release_all_holds(void)
{
	sync_require_shmem();
	sync_backend_setup();
	return sync_release_matching(filter_all, InvalidSubTransactionId);
}
