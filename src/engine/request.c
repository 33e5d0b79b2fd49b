/*-------------------------------------------------------------------------
 *
 * request.c
 *		Binding a request to locks, all or nothing: reserving its entries,
 *		reading the limits of semaphores the lock table does not know,
 *		finding or creating each lock and linking the entries into one ring;
 *		and withdrawing a request from its queues.  A session's acquire
 *		(backend_holds.c) and a holder key's request (holder_table.c) are built from
 *		these steps; what they do with a bound request is theirs.
 *
 * Locking: binding runs with every partition of the request held
 * exclusively (the caller takes them, in ascending order); reading limits
 * runs with none held.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/timestamp.h"

#include "engine/engine_internal.h"

/*
 * Set up a request for names[], taking 'slots' of each semaphore and, if
 * 'shared', shared holds of each mutex: every lock counts as needed; the
 * caller clears needed[i] (and recomputes partmask) for locks it has
 * already.  Validates the names, and the slots and mode against each
 * lock's kind (a semaphore's limit is checked when the request is bound).
 */
void
sync_request_init(AcquireRequest *req, char **names, int nnames,
				  int32 slots, bool shared)
{
	/* everything but the inline arrays, which are set below as needed */
	memset(req, 0, offsetof(AcquireRequest, inline_arrays));
	req->names = names;
	req->nnames = nnames;
	if (nnames <= SYNC_REQUEST_INLINE)
	{
		req->needed = req->inline_arrays.needed;
		req->kinds = req->inline_arrays.kinds;
		req->limits = req->inline_arrays.limits;
		req->tags = req->inline_arrays.tags;
		req->hashes = req->inline_arrays.hashes;
		req->entries = req->inline_arrays.entries;
		req->local_holds = req->inline_arrays.local_holds;
		/* (limits are read, all fields, before any use: sync_read_limits()) */
		memset(req->entries, 0, sizeof(SyncEntry *) * nnames);
	}
	else
	{
		req->needed = palloc(sizeof(bool) * nnames);
		req->kinds = palloc(sizeof(SyncLockKind) * nnames);
		req->limits = palloc0(sizeof(SyncLimitValue) * nnames);
		req->tags = palloc(sizeof(SyncLockTag) * nnames);
		req->hashes = palloc(sizeof(uint32) * nnames);
		req->entries = palloc0(sizeof(SyncEntry *) * nnames);
		req->local_holds = palloc(sizeof(void *) * nnames);
	}
	for (int i = 0; i < nnames; i++)
	{
		req->kinds[i] = sync_lock_kind(names[i]);
		Assert(req->kinds[i] == sync_parse_lock_name(names[i]));
		req->needed[i] = true;
		req->nneeded++;
		sync_make_tag(&req->tags[i], MyDatabaseId, names[i]);
		req->hashes[i] = sync_tag_hash(&req->tags[i]);
		req->partmask |= 1U << sync_partition_of(req->hashes[i]);
	}
	if (slots < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("slots must be at least 1, not %d", slots),
				 errhint("Ask for the number of a semaphore's slots the work takes; a mutex takes 1.")));
	for (int i = 0; i < nnames; i++)
	{
		if (req->kinds[i] == SYNC_KIND_MUTEX && slots != 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a mutex has one slot: slots must be 1 for \"%s\", not %d",
							names[i], slots),
					 errhint("Use a semaphore (\"sem/...\") for weighted slots, or mode => 'shared' to let holders share a mutex.")));
		if (req->kinds[i] == SYNC_KIND_SEMAPHORE && shared)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("mode 'shared' is for mutexes, and \"%s\" is a semaphore",
							names[i]),
					 errhint("Leave mode out (it is 'exclusive') for a semaphore, or use slots to take several of its slots.")));
	}
	req->slots = slots;
	req->shared = shared;
	req->fair_weight = 1;
}

/*
 * Give back the entries a request reserved, when it is not going to be
 * granted.
 */
void
sync_discard_request(AcquireRequest *req)
{
	for (int i = 0; i < req->nnames; i++)
		if (req->entries[i] != NULL)
		{
			sync_entry_free(req->entries[i]);
			req->entries[i] = NULL;
		}
}

/*
 * Reserve a shared entry for every lock the request needs, so that running
 * out is reported before anything is queued (and none stays reserved).
 * Growing the pool (or the lock hash's buckets, which it does when they
 * are due) may also raise an error from the operating system: a caller
 * runs this where an error gives the request's entries back
 * (sync_discard_request()), holding no LWLock.
 */
void
sync_reserve_entries(AcquireRequest *req)
{
	if (unlikely(sync_shmem->buckets_wanted))
		sync_lock_buckets_grow(0);
	for (int i = 0; i < req->nnames; i++)
	{
		if (!req->needed[i])
			continue;
		req->entries[i] = sync_entry_alloc(true);
		if (req->entries[i] == NULL)
		{
			sync_discard_request(req);
			sync_report_entries_full();
		}
	}
}

/* Read the limits of every semaphore the request needs from sync_limit. */
void
sync_read_limits(AcquireRequest *req)
{
	req->generation = pg_atomic_read_u64(&sync_shmem->limit_generation);
	for (int i = 0; i < req->nnames; i++)
		if (req->needed[i] && req->kinds[i] == SYNC_KIND_SEMAPHORE)
		{
			if (!sync_lock_is_launch_plan(req->names[i]))
				sync_limit_lookup(req->names[i], req->limit_relid, &req->limits[i]);
			else
			{
				/* a launch plan's overall limit, if someone set one */
				sync_limit_lookup_optional(req->names[i], req->limit_relid,
										   &req->limits[i]);
				(void) sync_limit_plan_default(req->names[i], &req->limits[i]);
			}
			/* its parent's group, with the parent's limit as read */
			if (req->limits[i].parent[0] != '\0')
				sync_group_ensure(req->limits[i].parent, req->limits[i].parent_limit,
								  req->limits[i].parent_preempt ?
								  req->limits[i].parent_grace_us : -1, req->generation);
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

/* Fill in an entry of the request, bound to 'lock'. */
static void
sync_bind_entry(AcquireRequest *req, int i, SyncLock *lock, uint64 request_id,
				uint64 seq, int32 priority, SyncScope scope, TimestampTz now)
{
	SyncEntry  *e = req->entries[i];

	e->lockno = lock->pooled.self;
	e->request_id = request_id;
	e->seq = seq;
	e->priority = priority;
	e->base_priority = priority;
	e->pid = MyProcPid;
	e->procno = sync_my_procno();
	e->scope = scope;
	e->partmask = req->partmask;
	e->nlocks = req->nneeded;
	e->since = now;
	e->queued_at = now;
	e->slots = req->kinds[i] == SYNC_KIND_SEMAPHORE ? req->slots : 1;
	e->shared = req->kinds[i] == SYNC_KIND_MUTEX && req->shared;
	sync_entry_set_fair(e, req->fair_key, req->fair_weight);
	e->state = SYNC_ENTRY_FREE; /* in no list yet */
}

/* Let the locks a failed request touched go idle again. */
void
sync_unbind_request(AcquireRequest *req)
{
	for (int i = 0; i < req->nnames; i++)
		if (req->entries[i] != NULL && sync_entry_lock(req->entries[i]) != NULL)
		{
			sync_lock_idle(sync_entry_lock(req->entries[i]));
			req->entries[i]->lockno = SYNC_ENTRY_NONE;
		}
}

/* Link a bound request's entries into its ring, in argument order. */
static SyncEntry *
sync_bind_link_ring(AcquireRequest *req)
{
	SyncEntry  *first = NULL;
	SyncEntry  *prev = NULL;

	for (int i = 0; i < req->nnames; i++)
	{
		if (!req->needed[i])
			continue;
		if (first == NULL)
			first = req->entries[i];
		else
			prev->next_in_request = sync_entry_index(req->entries[i]);
		prev = req->entries[i];
	}
	prev->next_in_request = sync_entry_index(first);
	return first;
}

/* The parent row of SYNC_UNFIT_PARENT, for sync_report_bind_error() */
static char failed_parent[SYNC_NAME_BUFLEN];

/*
 * The end of sync_bind_request(), once the ring is linked: a request that
 * could never be granted (sync_entry_unfit_limit()) is refused: more slots
 * than a semaphore's limit or rate, or, its entries of one parent's
 * children together, than the parent's sizelimit.  If so, undoes the bind.
 */
static int
sync_bind_check_fit(AcquireRequest *req, int *failed)
{
	for (int i = 0; i < req->nnames; i++)
	{
		SyncEntry  *e = req->entries[i];
		SyncUnfitKind why;
		int32		limit,
					held;

		if (!req->needed[i] ||
			(req->failed_limit = sync_entry_unfit_limit(e, &why)) == 0)
			continue;
		req->failed_why = why;
		if (why == SYNC_UNFIT_PARENT)
			(void) sync_lock_group_info(sync_entry_lock(e), failed_parent, &limit, &held);
		sync_unbind_request(req);
		*failed = i;
		return SYNC_BIND_TOO_MANY_SLOTS;
	}
	return SYNC_BIND_OK;
}

/*
 * Find or create each lock and bind the request's entries to it, as one
 * ring.  Caller holds every partition of the request exclusively (from
 * backend_holds.c or holder_table.c).  Existing locks are bound first, so that creating
 * the others (which may evict cached locks) cannot evict them.
 *
 * On failure, undoes its own work and returns what went wrong:
 * SYNC_BIND_TABLE_FULL (the caller may make room and try again) or
 * SYNC_BIND_NO_LIMIT or SYNC_BIND_TOO_MANY_SLOTS (*failed is the
 * semaphore's index).  Returns
 * SYNC_BIND_OK and the request's first entry on success.
 */
int
sync_bind_request(AcquireRequest *req, int32 priority, SyncScope scope,
				  SyncEntry **first, int *failed)
{
	uint64		request_id = pg_atomic_fetch_add_u64(&sync_shmem->next_request_id, 1);
	uint64		seq = pg_atomic_fetch_add_u64(&sync_shmem->next_seq, 1);
	TimestampTz now = GetCurrentTimestamp();

	Assert(sync_partitions_held(req->partmask, true));
	for (int pass = 0; pass < 2; pass++)
	{
		for (int i = 0; i < req->nnames; i++)
		{
			SyncLock   *lock;
			bool		found;

			if (!req->needed[i] || sync_entry_lock(req->entries[i]) != NULL)
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
				if (req->kinds[i] == SYNC_KIND_SEMAPHORE)
					sync_limit_set(lock, &req->limits[i]);
				lock->limit_relid = req->limit_relid;
				lock->limit_defined = true;
			}
			else if (lock->kind == SYNC_KIND_SEMAPHORE &&
					 lock->limit_relid != req->limit_relid &&
					 lock->nheld == 0 && lock->nwaiting == 0)
			{
				/* a cached limit from a dropped sync_limit: use the new one */
				Assert(req->have_limits);
				sync_limit_set(lock, &req->limits[i]);
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
			if (lock->is_parent)
			{
				/* a parent row caps its children; it is not a semaphore */
				sync_unbind_request(req);
				*failed = i;
				return SYNC_BIND_IS_PARENT;
			}
		}
	}

	*first = sync_bind_link_ring(req);
	return sync_bind_check_fit(req, failed);
}

/* Report what sync_bind_request() returned; the caller has cleaned up. */
void
sync_report_bind_error(AcquireRequest *req, int error, int failed)
{
	if (error == SYNC_BIND_TABLE_FULL)
		sync_report_locks_full();
	if (error == SYNC_BIND_TOO_MANY_SLOTS && req->failed_why == SYNC_UNFIT_RATE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg_plural("semaphore \"%s\" grants %d slot per rate period, fewer than the %d asked for",
							   "semaphore \"%s\" grants %d slots per rate period, fewer than the %d asked for",
							   req->failed_limit,
							   req->names[failed], req->failed_limit, req->slots),
				 errdetail("Its rate_limit is %d: a request that takes more slots could never get tokens enough.",
						   req->failed_limit),
				 errhint("Ask for at most %d slots, or raise the rate_limit of the semaphore's sync_limit row.",
						 req->failed_limit)));
	if (error == SYNC_BIND_IS_PARENT)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("semaphore \"%s\" is a parent limit", req->names[failed]),
				 errdetail("Its sync_limit row \"%s\" is the parent of other rows: it caps the slots their semaphores hold together, and is not a semaphore of its own.",
						   req->names[failed] + 4),
				 errhint("Acquire one of its children, a semaphore whose sync_limit row names \"%s\" as its parent.",
						 req->names[failed] + 4)));
	if (error == SYNC_BIND_TOO_MANY_SLOTS && req->failed_why == SYNC_UNFIT_PARENT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg_plural("parent limit \"%s\" has %d slot, fewer than the request takes under it",
							   "parent limit \"%s\" has %d slots, fewer than the request takes under it",
							   req->failed_limit, failed_parent, req->failed_limit),
				 errdetail("Semaphore \"%s\" and the request's other semaphores whose sync_limit rows name \"%s\" as their parent take more slots together than its sizelimit: the request could never be granted.",
						   req->names[failed], failed_parent),
				 errhint("Ask for fewer slots or fewer of its children at once, or raise the sizelimit of the parent's sync_limit row.")));
	if (error == SYNC_BIND_TOO_MANY_SLOTS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg_plural("semaphore \"%s\" has %d slot, fewer than the %d asked for",
							   "semaphore \"%s\" has %d slots, fewer than the %d asked for",
							   req->failed_limit,
							   req->names[failed], req->failed_limit, req->slots),
				 errdetail("A request that takes more slots than the limit could never be granted."),
				 errhint("Ask for at most %d slots, or raise the limit of the semaphore's sync_limit row.",
						 req->failed_limit)));
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("semaphore \"%s\" has no limit", req->names[failed]),
			 errdetail("Its row was deleted from sync_limit while the semaphore was in use."),
			 errhint("Insert it again, for example: INSERT INTO sync_limit (name, sizelimit) VALUES ('%s', 1);",
					 req->names[failed] + 4)));
}

/*
 * A request that was just queued and is not granted: if that made one of
 * its queues longer than the lock's max_waiters (sem_limits.c), take it
 * out of its queues again and unbind it, as if it had never come, and say
 * which queue refused it.  Caller holds the request's partitions
 * exclusively, as it has since it queued the request.
 */
bool
sync_refuse_over_cap(AcquireRequest *req, SyncEntry *first, SyncQueueFull *full)
{
	SyncEntry  *e = sync_queue_over_cap(first);

	if (e == NULL)
		return false;
	full->lock_name = pstrdup(sync_entry_lock(e)->tag.name);
	full->max_waiters = sync_entry_lock(e)->max_waiters;
	full->row = sync_limit_row_name(sync_entry_lock(e));
	sync_queue_unlink(first);
	full->nwaiting = sync_entry_lock(e)->nwaiting + sync_entry_lock(e)->ndormant;
	sync_unbind_request(req);
	return true;
}

/* Report what sync_refuse_over_cap() found; the caller has cleaned up. */
void
sync_report_queue_full(const SyncQueueFull *full)
{
	ereport(ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("the queue of syncwf lock \"%s\" is full", full->lock_name),
			 errdetail_plural("It has %d waiter; max_waiters of its sync_limit row \"%s\" is %d.",
							  "It has %d waiters; max_waiters of its sync_limit row \"%s\" is %d.",
							  full->nwaiting, full->nwaiting, full->row, full->max_waiters),
			 errhint("Try again when a waiter has left, or raise the cap, for example: UPDATE sync_limit SET max_waiters = %d WHERE name = '%s';",
					 full->nwaiting + 1, full->row)));
}

/*
 * Withdraw a whole request: pending entries leave their queues (their wait
 * ended as 'how' says), entries that were granted in a race with the error
 * are released.  The queues it leaves
 * get a grant pass.  A keyed request's caller holds holders_lock
 * exclusively (holder_table.c), which freeing a keyed entry needs.
 */
void
sync_withdraw_request(SyncEntry *first, SyncWaitEnd how)
{
	SyncLock   *locks[SYNC_MAX_REQUEST_LOCKS];
	int			nlocks = 0;
	uint32		partmask = first->partmask;
	SyncEntry  *e;

	sync_lock_partitions(partmask, LW_EXCLUSIVE);
	e = first;
	do
	{
		SyncEntry  *next = sync_next_in_request(e);
		SyncLock   *lock = sync_entry_lock(e);

		if (e->state == SYNC_ENTRY_HELD)
			sync_holder_unlink(e);
		else
			sync_waiter_unlink(e, how);
		locks[nlocks++] = lock;
		sync_entry_free(e);		/* a keyed entry leaves its holder too */
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
