/*-------------------------------------------------------------------------
 *
 * controllers.c
 *		The controller registry: one slot per controller (Argo's
 *		controllerName), its last heartbeat, and whether it is active.
 *
 * A controller is active while its last heartbeat is younger than
 * syncwf.inactive_controller_timeout.  Its pending entries are in their
 * locks' queues while it is active; when it goes inactive they move to
 * the locks' dormant lists, keeping their order, and the grant pass passes
 * over them; when it heartbeats again they go back into the queues where
 * they were.  Held entries are never touched here.  Entries with no
 * controller are never stale.
 *
 * Going inactive is a moment in time, so someone has to notice it: the
 * worker (or sync_reconcile) calls sync_controllers_check() at each
 * controller's deadline.  Becoming active again happens in the heartbeat.
 * Both transitions take controllers_lock and then every partition: they
 * are rare, and moving entries between lists needs the partitions.
 *
 * Slot names and flags change under controllers_lock (this file's LWLock,
 * tranche "syncwf controllers", taken before holders_lock and partition
 * locks); 'active' also only changes while every partition is held, so the
 * grant pass may read it under any one partition lock.  The heartbeat and
 * the count of entries naming a slot are atomics.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "keyed/keyed_internal.h"

/*
 * A controller (Argo's controllerName).  Slots live in a fixed array; the
 * name and the active flag change under controllers_lock, the heartbeat is
 * an atomic so that readers need no lock.
 */
typedef struct SyncController
{
	Oid			dbid;
	bool		in_use;
	bool		active;			/* its pending entries are in the queues */
	char		name[SYNC_KEY_BUFLEN];
	pg_atomic_uint64 heartbeat; /* last heartbeat (TimestampTz), 0 = none */
	pg_atomic_uint32 nentries;	/* keyed entries naming it */
} SyncController;

static LWLock *controllers_lock = NULL;
static SyncController *SyncControllers = NULL;

Size
sync_controllers_shmem_size(void)
{
	return mul_size(sync_max_controllers, sizeof(SyncController));
}

void
sync_controllers_shmem_request(void)
{
	RequestNamedLWLockTranche(SYNC_CONTROLLERS_TRANCHE, 1);
}

/* Create or attach to the registry.  Caller holds AddinShmemInitLock. */
void
sync_controllers_shmem_init(void)
{
	bool		found;

	controllers_lock = &GetNamedLWLockTranche(SYNC_CONTROLLERS_TRANCHE)->lock;
	SyncControllers = ShmemInitStruct("syncwf controllers",
									  sync_controllers_shmem_size(), &found);
	if (!found)
	{
		for (int i = 0; i < sync_max_controllers; i++)
		{
			memset(&SyncControllers[i], 0, sizeof(SyncController));
			pg_atomic_init_u64(&SyncControllers[i].heartbeat, 0);
			pg_atomic_init_u32(&SyncControllers[i].nentries, 0);
		}
	}
}

/* controllers_lock: taken before holders_lock and the partition locks */
LWLock *
sync_controllers_lock(void)
{
	return controllers_lock;
}

static int64
sync_inactive_timeout_us(void)
{
	return (int64) sync_inactive_controller_timeout * USECS_PER_SEC;
}

static bool
sync_heartbeat_fresh(TimestampTz heartbeat, TimestampTz now)
{
	return heartbeat != 0 && now - heartbeat < sync_inactive_timeout_us();
}

/* Find a slot by name.  Caller holds controllers_lock. */
static int
sync_controller_find(const char *name)
{
	Assert(LWLockHeldByMe(controllers_lock));
	for (int i = 0; i < sync_max_controllers; i++)
	{
		SyncController *c = &SyncControllers[i];

		if (c->in_use && c->dbid == MyDatabaseId && strcmp(c->name, name) == 0)
			return i;
	}
	return -1;
}

/*
 * The slot of controller 'name', created if asked.  A slot no entry names
 * and whose controller is inactive may be reused.  Returns -1 when the
 * registry is full (or the name is unknown and create is false).
 */
static int
sync_controller_get(const char *name, bool create)
{
	int			slot;
	int			reusable = -1;
	TimestampTz now;

	LWLockAcquire(controllers_lock, LW_SHARED);
	slot = sync_controller_find(name);
	LWLockRelease(controllers_lock);
	if (slot >= 0 || !create)
		return slot;

	now = GetCurrentTimestamp();
	LWLockAcquire(controllers_lock, LW_EXCLUSIVE);
	slot = sync_controller_find(name);
	if (slot < 0)
	{
		for (int i = 0; i < sync_max_controllers; i++)
		{
			SyncController *c = &SyncControllers[i];

			if (!c->in_use)
			{
				slot = i;
				break;
			}
			if (reusable < 0 && pg_atomic_read_u32(&c->nentries) == 0 &&
				!sync_heartbeat_fresh(pg_atomic_read_u64(&c->heartbeat), now))
				reusable = i;
		}
		if (slot < 0)
			slot = reusable;
		if (slot >= 0)
		{
			SyncController *c = &SyncControllers[slot];

			c->in_use = true;
			c->dbid = MyDatabaseId;
			c->active = false;
			strlcpy(c->name, name, sizeof(c->name));
			pg_atomic_write_u64(&c->heartbeat, 0);
		}
	}
	LWLockRelease(controllers_lock);
	return slot;
}

int
sync_controller_slot(const char *name, bool create)
{
	int			slot = sync_controller_get(name, create);

	if (slot < 0 && create)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("syncwf controller registry is full"),
				 errdetail("All %d controller slots are in use.", sync_max_controllers),
				 errhint("Remove controllers that are gone with sync_forget_controller(), or raise syncwf.max_controllers and restart the server.")));
	return slot;
}

int
sync_controller_slot_noerror(const char *name)
{
	return sync_controller_get(name, true);
}

const char *
sync_controller_name(int slot)
{
	return SyncControllers[slot].name;
}

void
sync_controller_ref(int slot)
{
	pg_atomic_fetch_add_u32(&SyncControllers[slot].nentries, 1);
}

void
sync_controller_unref(int slot)
{
	pg_atomic_fetch_sub_u32(&SyncControllers[slot].nentries, 1);
}

/* Caller holds controllers_lock or any partition lock. */
bool
sync_controller_active(int slot)
{
	Assert(LWLockHeldByMe(controllers_lock) ||
		   sync_any_partition_held());
	return slot < 0 || SyncControllers[slot].active;
}

/*
 * Move the pending entries of controller 'slot' in 'lock' into its queue
 * (activate) or its dormant list.  Caller holds the lock's partition
 * exclusively.  Returns how many moved.
 */
static int
sync_move_entries(SyncLock *lock, int slot, bool activate)
{
	SyncEntryList *from = activate ? &lock->dormant : &lock->waiters;
	int			moved = 0;

	Assert(sync_partition_held(lock->hashcode, true));
	sync_elist_foreach_modify(e, from, lock_link)
	{
		if (e->controller != slot)
			continue;
		Assert(e->state == (activate ? SYNC_ENTRY_DORMANT : SYNC_ENTRY_PENDING));
		sync_queue_remove(e);
		if (activate)
			sync_queue_insert(lock, e);
		else
			sync_dormant_insert(lock, e);
		moved++;
	}
	return moved;
}

/*
 * Move the pending entries of controller 'slot' between the queues and the
 * dormant lists, and set its flag.  Then every lock it touched gets a grant
 * pass: going inactive lets the entries behind move up; coming back may
 * find a free slot.
 */
static void
sync_controller_transition(int slot, bool activate)
{
	uint32		all = SYNC_ALL_PARTITIONS;
	SyncController *c = &SyncControllers[slot];

	LWLockAcquire(controllers_lock, LW_EXCLUSIVE);
	if (!c->in_use || c->active == activate)
	{
		LWLockRelease(controllers_lock);
		return;
	}
	sync_lock_partitions(all, LW_EXCLUSIVE);
	c->active = activate;
	if (pg_atomic_read_u32(&c->nentries) > 0)
	{
		SyncLiveIter it;

		sync_foreach_live_lock(it)
		{
			SyncLock   *lock = sync_live_lock(it);

			if (lock->tag.dbid == c->dbid &&
				sync_move_entries(lock, slot, activate) > 0)
				sync_grant_waiters(lock);
		}
	}
	sync_unlock_partitions(all);
	LWLockRelease(controllers_lock);
	sync_grant_deferred();
}

/* A heartbeat at 'at' (the database server's clock). */
void
sync_controller_beat(int slot, TimestampTz at)
{
	SyncController *c;
	uint64		cur;

	if (slot < 0)
		return;
	c = &SyncControllers[slot];
	cur = pg_atomic_read_u64(&c->heartbeat);
	/* (compared as timestamps: a time before 2000 is negative) */
	while (cur == 0 || at > (TimestampTz) cur)
	{
		if (pg_atomic_compare_exchange_u64(&c->heartbeat, &cur, (uint64) at))
			break;
	}
	if (!c->active &&
		sync_heartbeat_fresh((TimestampTz) pg_atomic_read_u64(&c->heartbeat),
							 GetCurrentTimestamp()))
	{
		sync_controller_transition(slot, true);
		sync_worker_wake();		/* a new deadline to watch */
	}
}

/* Loading: a controller from sync_controller.  No entries exist yet. */
void
sync_controller_restore(const char *name, TimestampTz heartbeat, TimestampTz now)
{
	int			slot = sync_controller_get(name, true);

	if (slot < 0)
	{
		ereport(WARNING,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("syncwf controller registry is full; controller \"%s\" is treated as inactive", name),
				 errhint("Raise syncwf.max_controllers and restart the server.")));
		return;
	}
	LWLockAcquire(controllers_lock, LW_EXCLUSIVE);
	pg_atomic_write_u64(&SyncControllers[slot].heartbeat, (uint64) heartbeat);
	SyncControllers[slot].active = sync_heartbeat_fresh(heartbeat, now);
	LWLockRelease(controllers_lock);
}

/*
 * A controller's row was deleted (NULL: every controller of this database):
 * it is inactive from now on, whatever its last heartbeat.
 */
void
sync_controller_deactivate(const char *name)
{
	for (int i = 0; i < sync_max_controllers; i++)
	{
		SyncController *c = &SyncControllers[i];
		bool		match;

		LWLockAcquire(controllers_lock, LW_SHARED);
		match = c->in_use && c->dbid == MyDatabaseId &&
			(name == NULL || strcmp(c->name, name) == 0);
		LWLockRelease(controllers_lock);
		if (!match)
			continue;
		pg_atomic_write_u64(&c->heartbeat, 0);
		sync_controller_transition(i, false);
	}
}

/*
 * Turn controllers whose heartbeat is too old inactive.  Returns the next
 * moment one may go inactive (DT_NOEND if none is active).
 */
TimestampTz
sync_controllers_check(TimestampTz now)
{
	TimestampTz next = DT_NOEND;
	int64		timeout = sync_inactive_timeout_us();

	for (int i = 0; i < sync_max_controllers; i++)
	{
		SyncController *c = &SyncControllers[i];
		bool		active;
		TimestampTz heartbeat;

		LWLockAcquire(controllers_lock, LW_SHARED);
		active = c->in_use && c->active && c->dbid == MyDatabaseId;
		LWLockRelease(controllers_lock);
		if (!active)
			continue;
		heartbeat = (TimestampTz) pg_atomic_read_u64(&c->heartbeat);
		if (!sync_heartbeat_fresh(heartbeat, now))
			sync_controller_transition(i, false);
		else if (heartbeat + timeout < next)
			next = heartbeat + timeout;
	}
	return next;
}
