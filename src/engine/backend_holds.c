/*-------------------------------------------------------------------------
 *
 * backend_holds.c
 *		This backend's holds: acquiring (with or without waiting; the wait
 *		itself is backend_wait.c's), releasing, and letting go of
 *		everything at transaction end, at savepoint rollback and at backend
 *		exit.
 *
 * Each backend keeps a local hash of the locks it holds, name -> shared
 * entry.  Only the owning backend frees its entries, so the pointers stay
 * valid while they are in the local hash.  A request remembers the local
 * hold of each of its locks (AcquireRequest.local_holds; dynahash never
 * moves an entry), so that it looks each up once.  A session holds a lock
 * at most once: acquiring a lock it already holds, with the same slots and
 * mode, returns the existing token; with others, it is an error.
 *
 * While a backend waits, its queue entries are remembered in waiting_entry
 * so that an error (cancel, statement_timeout, our own timeout) or exit
 * withdraws them at once and lets the queue behind them move.
 *
 * The transaction callbacks are syncwf.c's; it calls the sync_holds_at_*
 * functions here.  Locking: the local hash is backend-local; shared
 * entries are touched under their partition locks (lock_table.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "engine/engine_internal.h"

/*
 * A lock this backend holds, or is asking for.  The local hash hashes a
 * name as the lock table hashes its tag in this database
 * (sync_lock_name_hash()), so that a request looks its locks up here with
 * the hash codes it has already (AcquireRequest.hashes).
 */
typedef struct LocalHold
{
	char		name[SYNC_NAME_BUFLEN]; /* hash key */
	uint32		hash;			/* its hash code */
	SyncEntry  *entry;			/* NULL while the request is being made */
	SyncScope	scope;
	SubTransactionId subid;		/* transaction scope: who acquired it */
} LocalHold;

static HTAB *local_holds = NULL;
static int	n_xact_holds = 0;

/* The request this backend is waiting for, if any. */
static SyncEntry *waiting_entry = NULL;

static void sync_backend_exit(int code, Datum arg);

static uint32
local_hold_hash(const void *key, Size keysize)
{
	return sync_lock_name_hash(MyDatabaseId, key);
}

static int
local_hold_match(const void *key1, const void *key2, Size keysize)
{
	return strncmp(key1, key2, keysize);
}

static void *
local_hold_keycopy(void *dest, const void *src, Size keysize)
{
	strlcpy(dest, src, keysize);
	return dest;
}

/* Look a lock up in the local hash by the hash code a request has for it. */
static inline LocalHold *
local_hold_search(const char *name, uint32 hash, HASHACTION action, bool *found)
{
	return hash_search_with_hash_value(local_holds, name, hash, action, found);
}

/*
 * First use in this backend: the local hash and the exit hook.  Called by
 * every function here that can leave state behind.
 */
static void
sync_holds_setup(void)
{
	HASHCTL		ctl;

	if (local_holds != NULL)
		return;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = SYNC_NAME_BUFLEN;
	ctl.entrysize = sizeof(LocalHold);
	ctl.hash = local_hold_hash;
	ctl.match = local_hold_match;
	ctl.keycopy = local_hold_keycopy;
	ctl.hcxt = TopMemoryContext;
	local_holds = hash_create("syncwf local holds", 64, &ctl,
							  HASH_ELEM | HASH_FUNCTION | HASH_COMPARE |
							  HASH_KEYCOPY | HASH_CONTEXT);
	before_shmem_exit(sync_backend_exit, (Datum) 0);
}

/* Release one held entry and hand its slot on. */
static void
sync_release_entry(SyncEntry *entry)
{
	SyncLock   *lock = sync_entry_lock(entry);
	LWLock	   *partition = sync_partition_lock(lock->hashcode);

	LWLockAcquire(partition, LW_EXCLUSIVE);
	Assert(entry->state == SYNC_ENTRY_HELD);
	sync_holder_unlink(entry);
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
	local_hold_search(hold->name, hold->hash, HASH_REMOVE, NULL);
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

/*
 * PREPARE TRANSACTION: transaction-scope holds cannot be handed to a
 * prepared transaction.
 */
void
sync_holds_at_prepare(void)
{
	if (n_xact_holds > 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot PREPARE a transaction that holds syncwf transaction-scoped locks"),
				 errhint("Release them with sync_release() first, or take them with sync_acquire() (session scope).")));
}

/*
 * Transaction end (commit or abort), once the transaction has released its
 * heavyweight locks: transaction-scope holds end, so that whoever is
 * granted one next never finds this transaction's locks (such as a
 * pg_advisory_xact_lock taken with it) still held.
 */
void
sync_holds_at_xact_end(void)
{
	if (n_xact_holds > 0)
		sync_release_matching(filter_xact, InvalidSubTransactionId);
}

/* Abort: the request we were waiting for is withdrawn at once. */
void
sync_holds_at_abort(void)
{
	if (waiting_entry != NULL)
	{
		sync_withdraw_request(waiting_entry, SYNC_WAIT_CANCEL);
		waiting_entry = NULL;
	}
}

/* Savepoint rollback: the holds taken since it end. */
void
sync_holds_at_subabort(SubTransactionId subid)
{
	if (n_xact_holds > 0)
		sync_release_matching(filter_subxact, subid);
}

/* Savepoint release: its holds now belong to the parent. */
void
sync_holds_at_subcommit(SubTransactionId subid, SubTransactionId parent)
{
	HASH_SEQ_STATUS status;
	LocalHold  *hold;

	if (n_xact_holds == 0)
		return;
	hash_seq_init(&status, local_holds);
	while ((hold = hash_seq_search(&status)) != NULL)
		if (hold->scope == SYNC_SCOPE_XACT && hold->subid == subid)
			hold->subid = parent;
}

/* before_shmem_exit: a backend that ends lets go of everything at once. */
static void
sync_backend_exit(int code, Datum arg)
{
	/* we may be exiting on an error raised while an LWLock was held */
	LWLockReleaseAll();

	if (waiting_entry != NULL)
	{
		sync_withdraw_request(waiting_entry, SYNC_WAIT_CANCEL);
		waiting_entry = NULL;
	}
	sync_release_matching(filter_all, InvalidSubTransactionId);
}

/*
 * Give back what a request reserved, when it is not going to be granted:
 * its shared entries and its local placeholders.
 */
static void
sync_drop_request(AcquireRequest *req)
{
	sync_discard_request(req);
	if (req->placeholders)
		for (int i = 0; i < req->nnames; i++)
			if (req->needed[i])
				local_hold_search(req->names[i], req->hashes[i], HASH_REMOVE, NULL);
	req->placeholders = false;
}

/*
 * Reserve shared entries and local placeholders, so that running out of
 * either is reported before anything is queued, and a failed local insert
 * can never follow a grant.
 */
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
		hold = local_hold_search(req->names[i], req->hashes[i], HASH_ENTER, &found);
		Assert(!found);
		req->local_holds[i] = hold;
		hold->hash = req->hashes[i];
		hold->entry = NULL;
		hold->scope = scope;
		hold->subid = GetCurrentSubTransactionId();
	}
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
sync_prepare_request(AcquireRequest *req, SyncScope scope)
{
	PG_TRY();
	{
		sync_reserve_request(req, scope);
		for (int i = 0; i < req->nnames; i++)
			if (req->needed[i] && req->kinds[i] == SYNC_KIND_SEMAPHORE)
			{
				req->limit_relid = sync_limit_relid();
				break;
			}

		for (;;)
		{
			sync_lock_partitions(req->partmask, LW_EXCLUSIVE);
			if (req->have_limits
				? pg_atomic_read_u64(&sync_shmem->limit_generation) == req->generation
				: !sync_limits_missing(req))
				break;
			sync_unlock_partitions(req->partmask);
			sync_read_limits(req);
		}
	}
	PG_CATCH();
	{
		sync_drop_request(req);
		PG_RE_THROW();
	}
	PG_END_TRY();
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
		sync_wait_loop(first, req->names, req->nnames, timeout_us,
					   &waiting_entry);
	}
	PG_CATCH();
	{
		if (waiting_entry != NULL)
		{
			waiting_entry = NULL;
			sync_withdraw_request(first, SYNC_WAIT_CANCEL);
		}
		/* the withdrawal freed the shared entries */
		memset(req->entries, 0, sizeof(SyncEntry *) * req->nnames);
		sync_drop_request(req);
		PG_RE_THROW();
	}
	PG_END_TRY();
	waiting_entry = NULL;
}

/*
 * The request is granted and its holds recorded: hand out its tokens only
 * once the synchronous standbys have the reservation that covers them
 * (tokens.c), so that no later primary can hand out the same values.  If
 * that wait is canceled (or the backend terminated), release what the
 * request took and fail: the client never sees those tokens.
 */
static void
sync_confirm_tokens(AcquireRequest *req, const int64 *tokens)
{
	uint64		highest = 0;

	for (int i = 0; i < req->nnames; i++)
		if (req->needed[i])
			highest = Max(highest, (uint64) tokens[i]);
	if (sync_tokens_confirm(highest))
		return;
	for (int i = 0; i < req->nnames; i++)
	{
		LocalHold  *hold;

		if (!req->needed[i])
			continue;
		hold = req->local_holds[i];
		sync_release_entry(hold->entry);
		sync_forget_local(hold);
	}
	ereport(ERROR,
			(errcode(ERRCODE_QUERY_CANCELED),
			 errmsg("canceling the acquire: its fencing token is not yet known to the synchronous standby"),
			 errdetail("The wait for synchronous replication of the token reservation was canceled; the locks were released."),
			 errhint("Acquire again once the synchronous standby is reachable.")));
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
		hold = req->local_holds[i];
		if (hold->scope != SYNC_SCOPE_XACT)
			continue;
		partition = sync_partition_lock(sync_entry_lock(hold->entry)->hashcode);
		LWLockAcquire(partition, LW_EXCLUSIVE);
		hold->entry->scope = SYNC_SCOPE_SESSION;
		LWLockRelease(partition);
		hold->scope = SYNC_SCOPE_SESSION;
		n_xact_holds--;
	}
}

/*
 * A lock this session holds as 'held' is asked for again, with 'slots' and
 * 'shared': the same is a no-op, anything else an error (a session holds a
 * lock once; it does not change its weight or mode in place).
 */
static void
sync_check_same_hold(SyncEntry *held, const char *name, SyncLockKind kind,
					 int32 slots, bool shared)
{
	int32		held_slots = held->slots;
	bool		held_shared = held->shared;

	if (kind == SYNC_KIND_SEMAPHORE && held_slots != slots)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("this session holds %d slots of semaphore \"%s\", not %d",
						held_slots, name, slots),
				 errhint("Release it with sync_release() first to take another number of slots.")));
	if (kind == SYNC_KIND_MUTEX && held_shared != shared)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("this session holds mutex \"%s\" in %s mode, not %s",
						name, held_shared ? "shared" : "exclusive",
						shared ? "shared" : "exclusive"),
				 errhint("Release it with sync_release() first to take it in the other mode.")));
}

/*
 * Locks this session holds already count once and keep their token, if
 * asked for as they are held (else it is an error): clear them from the
 * request, and set partmask to the partitions of those it still needs.
 */
static void
sync_skip_held_locks(AcquireRequest *req, int64 *tokens)
{
	req->partmask = 0;
	for (int i = 0; i < req->nnames; i++)
	{
		LocalHold  *hold = local_hold_search(req->names[i], req->hashes[i], HASH_FIND, NULL);

		if (hold != NULL && hold->entry != NULL)
		{
			sync_check_same_hold(hold->entry, req->names[i], req->kinds[i],
								 req->slots, req->shared);
			req->local_holds[i] = hold;
			tokens[i] = (int64) hold->entry->token;
			req->needed[i] = false;
			req->nneeded--;
			continue;
		}
		req->partmask |= 1U << sync_partition_of(req->hashes[i]);
	}
}

/*
 * Reserve and bind the request to its locks, making room in a full lock
 * table (idle cached locks) and trying again a few times; any other
 * failure is reported.  Returns the first entry of the bound request, with
 * every partition of the request held exclusively.
 */
static SyncEntry *
sync_bind_acquire(AcquireRequest *req, const SyncAcquireOptions *opts)
{
	SyncEntry  *first;
	int			failed = -1;
	int			error;

	for (int attempt = 1;; attempt++)
	{
		sync_prepare_request(req, opts->scope);
		error = sync_bind_request(req, opts->priority, opts->scope, &first,
								  &failed);
		if (error == SYNC_BIND_OK)
			return first;
		sync_unlock_partitions(req->partmask);
		sync_drop_request(req);
		if (error != SYNC_BIND_TABLE_FULL || attempt == SYNC_MAKE_ROOM_ATTEMPTS ||
			!sync_make_room(req->hashes[0], req->nnames))
			sync_report_bind_error(req, error, failed);
	}
}

/*
 * A waiting acquire: queue the bound request on each of its locks, and
 * grant it if it is first in line everywhere.  A request that would make a
 * capped queue longer is refused (the partitions released, the request
 * dropped, 53400 reported).  Caller holds the request's partitions
 * exclusively.
 */
static bool
sync_queue_request(AcquireRequest *req, SyncEntry *first)
{
	SyncEntry  *e = first;
	SyncQueueFull full;
	bool		granted;
	uint32		stripes = sync_groups_enter_request(first);

	/*
	 * Every queue empty: were it queued, the request would be alone at the
	 * front of each, and granted if it fits.  Grant it so without the
	 * queue's work (the try-acquire's check).
	 */
	do
	{
		SyncLock   *lock = sync_entry_lock(e);

		if (lock->nwaiting != 0 || lock->ndormant != 0)
			break;
		e = sync_next_in_request(e);
	} while (e != first);
	if (e == first && sync_request_grantable(first, true))
	{
		sync_request_grant(first, SYNC_GRANT_AT_ONCE);
		sync_groups_leave(stripes);
		return true;
	}

	e = first;
	do
	{
		sync_queue_insert(sync_entry_lock(e), e);
		e = sync_next_in_request(e);
	} while (e != first);
	granted = sync_request_grantable(first, true);
	if (granted)
		sync_request_grant(first, SYNC_GRANT_AT_ONCE);
	else if (sync_refuse_over_cap(req, first, &full))
	{
		/* it would have made a capped queue longer */
		sync_groups_leave(stripes);
		sync_unlock_partitions(req->partmask);
		sync_drop_request(req);
		sync_report_queue_full(&full);
	}
	else
		sync_queue_waiting(first);	/* tokens, best-effort passing */
	sync_groups_leave(stripes);
	return granted;
}

/*
 * The request is granted: its local placeholders become holds, and
 * tokens[] gets the fencing token of each lock it took.
 */
static void
sync_record_holds(AcquireRequest *req, SyncScope scope, int64 *tokens)
{
	for (int i = 0; i < req->nnames; i++)
	{
		LocalHold  *hold;

		if (!req->needed[i])
			continue;
		hold = req->local_holds[i];
		Assert(hold->entry == NULL);
		hold->entry = req->entries[i];
		if (scope == SYNC_SCOPE_XACT)
			n_xact_holds++;
		tokens[i] = (int64) req->entries[i]->token;
	}
}

/*
 * Acquire every lock in names[], all or nothing, as 'opts' says.
 *
 * opts->wait = false: never queue; return false when not every lock can be
 * granted now without jumping a queue.  opts->wait = true: queue and sleep
 * until granted, or until opts->timeout_us (negative: no timeout) passes,
 * which raises 55P03; in the queues the request shares with others,
 * opts->fair_key (NULL: none) gets its share (queue_order.c).
 * On success tokens[i] is the fencing token of names[i].
 *
 * names[] must be distinct (sql_common.c checks); they are validated here.
 * Caller holds no LWLock: the request's partitions are taken here.
 */
bool
sync_acquire_locks(char **names, int nnames, const SyncAcquireOptions *opts,
				   int64 *tokens)
{
	AcquireRequest req;
	SyncEntry  *first;
	bool		granted;
	int32		fair_weight;

	sync_holds_setup();
	/* read before any partition is taken (fair_weights.c) */
	fair_weight = sync_fair_request_weight(names, nnames, opts->fair_key);
	sync_request_init(&req, names, nnames, opts->slots, opts->shared);
	req.fair_key = opts->fair_key;
	req.fair_weight = fair_weight;

	sync_skip_held_locks(&req, tokens);
	if (req.nneeded == 0)
	{
		sync_promote_holds(&req, opts->scope);
		return true;
	}

	first = sync_bind_acquire(&req, opts);
	if (opts->wait)
		granted = sync_queue_request(&req, first);
	else
	{
		/* a try never queues and never jumps a queue */
		uint32		stripes = sync_groups_enter_request(first);

		granted = sync_request_grantable(first, true);
		if (granted)
			sync_request_grant(first, SYNC_GRANT_AT_ONCE);
		sync_groups_leave(stripes);
		if (!granted)
			sync_unbind_request(&req);
	}
	sync_unlock_partitions(req.partmask);
	/* it may pass a request of several locks; a parent may owe a slot */
	sync_grant_deferred();

	if (!opts->wait && !granted)
	{
		sync_drop_request(&req);
		return false;
	}

	if (!granted)
		sync_wait_for_grant(&req, first, opts->timeout_us);

	sync_record_holds(&req, opts->scope, tokens);
	sync_confirm_tokens(&req, tokens);
	sync_promote_holds(&req, opts->scope);
	return true;
}

/*
 * Release one lock this session holds; false (with a WARNING) if it doesn't.
 * The caller has checked the name (sync_name_arg()).
 */
bool
sync_release_lock(const char *name)
{
	LocalHold  *hold;

	sync_holds_setup();

	/*
	 * Out of the local hash first, in one probe (the removed hold stays
	 * readable until the next insert); releasing the shared entry raises no
	 * error.  A placeholder (entry NULL) is there only while this backend's
	 * own acquire runs, never when it can call this.
	 */
	hold = hash_search(local_holds, name, HASH_REMOVE, NULL);
	if (hold == NULL)
	{
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg("syncwf lock \"%s\" is not held by this session", name)));
		return false;
	}
	Assert(hold->entry != NULL);
	if (hold->scope == SYNC_SCOPE_XACT)
		n_xact_holds--;
	sync_release_entry(hold->entry);
	return true;
}

/* Release every lock this session holds, of either scope. */
int
sync_release_all_holds(void)
{
	/* (nothing is held before the first acquire sets up the local hash) */
	return sync_release_matching(filter_all, InvalidSubTransactionId);
}
