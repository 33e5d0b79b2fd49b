/*-------------------------------------------------------------------------
 *
 * limit_groups.c
 *		Nested limits: the group of a parent row of sync_limit, which counts
 *		the slots its children's semaphores hold, and decides which child
 *		gets a slot of a full parent when one frees.
 *
 * A semaphore whose sync_limit row (its own or a pattern) names a parent
 * counts against its own limit and, with every other semaphore whose row
 * names that parent, against the parent's sizelimit.  The group is that
 * second counter: one per parent row and database, made the first time a
 * request reads a row that names it (sync_group_ensure()), kept until the
 * server stops (a few hundred bytes per parent row ever used).  A lock
 * links to its group when it gets its limit (sync_group_join()) and
 * leaves it when it leaves the lock table or its row changes parent.
 *
 * Counting: sync_holder_link() and sync_holder_unlink() (queue_order.c),
 * the one place a lock's slots_held changes, call sync_group_count(), so
 * a grant takes a slot at both levels in one step, under the lock's
 * partition and the group's stripe together.
 *
 * Order across children.  A child whose front waiter would be granted but
 * for the parent (the grant pass stopped at it with SYNC_PASS_PARENT) is
 * *ready*: it is in the group's ready tree (group_ready.c), ordered by
 * that waiter's class, priority, queue time and arrival
 * (sync_group_set_ready(), at the end of each grant pass of the child).
 * A request of any child is admitted by the parent (sync_group_admits())
 * only if the parent has room for it and no ready sibling's waiter goes
 * before it (the first of the tree but the child itself): by priority,
 * then queue time, then arrival, the order every queue uses, found in
 * O(log n) of the ready children.  So a slot that frees under a full
 * parent is owed to the first waiter across all children; the child that
 * freed it cannot take it back, and no child starves another.  Who frees
 * a slot (or raises a limit) while a sibling is ready records a *group
 * pass* (wait_queue.c), run once no partition is held: it takes the
 * partition of the first ready child and runs that child's grant pass.
 * A request of several locks at a child's front makes the child ready
 * too, but the parent's order never waits for it (SYNC_READY_MULTI): no
 * wait is created on a request that could itself wait for another queue.
 * The group pass only looks at it, to try it, when a slot frees or the
 * parent's limit rises.
 *
 * Only two levels: a parent row has no parent itself (sync_limit's
 * trigger refuses it).
 *
 * Locking.  Groups live in their own pool (core/shared_pool.c) and are
 * found in a hash of SYNC_GROUP_STRIPES chains; each chain has an LWLock
 * (tranche "syncwf groups", the group's *stripe*), which protects the
 * chain and every field of its groups.  A stripe is taken after the
 * partition locks, never before: nothing takes a partition while holding
 * a stripe, and several stripes are taken in ascending order
 * (sync_groups_enter_request()).  The fields a lock has for its group
 * (groupno, group_link, group_ready, ready_*) are written under the lock's
 * partition and its group's stripe, so either lock suffices to read them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/shmem.h"

#include "engine/engine_internal.h"

#define SYNC_GROUPS_TRANCHE		"syncwf groups"

typedef struct SyncGroupShmem
{
	LWLockPadded *stripes;		/* SYNC_GROUP_STRIPES */
	int32		heads[SYNC_GROUP_STRIPES];	/* each stripe's chain */
} SyncGroupShmem;

static SyncGroupShmem *Groups = NULL;

/* Module load, in every process. */
void
sync_groups_init(void)
{
	sync_pool_define(SYNC_POOL_GROUPS, "groups", sizeof(SyncGroup), NULL);
}

Size
sync_groups_shmem_size(void)
{
	return MAXALIGN(sizeof(SyncGroupShmem));
}

void
sync_groups_shmem_request(void)
{
	RequestNamedLWLockTranche(SYNC_GROUPS_TRANCHE, SYNC_GROUP_STRIPES);
}

void
sync_groups_shmem_init(void)
{
	bool		found;

	Groups = ShmemInitStruct("syncwf groups", sizeof(SyncGroupShmem), &found);
	if (found)
		return;
	Groups->stripes = GetNamedLWLockTranche(SYNC_GROUPS_TRANCHE);
	for (int i = 0; i < SYNC_GROUP_STRIPES; i++)
		Groups->heads[i] = SYNC_ENTRY_NONE;
}

static inline int
sync_group_stripe_of(uint32 hashcode)
{
	return hashcode % SYNC_GROUP_STRIPES;
}

static inline LWLock *
sync_stripe_lock(int stripe)
{
	return &Groups->stripes[stripe].lock;
}

/* Does this backend hold the stripe of group g (in any mode)? */
bool
sync_group_held(const SyncGroup *g, bool exclusive)
{
	LWLock	   *l = sync_stripe_lock(sync_group_stripe_of(g->hashcode));

	return exclusive ? LWLockHeldByMeInMode(l, LW_EXCLUSIVE) : LWLockHeldByMe(l);
}

#ifdef USE_ASSERT_CHECKING
static bool
sync_any_group_held(void)
{
	for (int i = 0; i < SYNC_GROUP_STRIPES; i++)
		if (LWLockHeldByMe(sync_stripe_lock(i)))
			return true;
	return false;
}
#endif

/*
 * Take the stripes in 'mask' exclusively, in ascending order, leaving out
 * those this backend holds already; returns the ones it took, for
 * sync_groups_leave().
 */
static uint32
sync_groups_enter_mask(uint32 mask)
{
	uint32		taken = 0;

	for (int i = 0; i < SYNC_GROUP_STRIPES; i++)
	{
		LWLock	   *l = sync_stripe_lock(i);

		if (!(mask & (1U << i)) || LWLockHeldByMe(l))
			continue;
		LWLockAcquire(l, LW_EXCLUSIVE);
		taken |= 1U << i;
	}
	return taken;
}

/* Take the stripe of 'lock's group, if it has one and we lack it. */
uint32
sync_groups_enter_lock(const SyncLock *lock)
{
	if (lock->groupno == SYNC_ENTRY_NONE)
		return 0;
	return sync_groups_enter_mask(1U << sync_group_stripe_of(sync_group_at(lock->groupno)->hashcode));
}

/*
 * For the views (wait_reasons.c): take the stripe of 'lock's group shared,
 * if it has one; returns it for sync_groups_leave().  Partitions held.
 */
uint32
sync_groups_share_lock(const SyncLock *lock)
{
	int			stripe;

	if (lock->groupno == SYNC_ENTRY_NONE)
		return 0;
	stripe = sync_group_stripe_of(sync_group_at(lock->groupno)->hashcode);
	Assert(!LWLockHeldByMe(sync_stripe_lock(stripe)));
	LWLockAcquire(sync_stripe_lock(stripe), LW_SHARED);
	return 1U << stripe;
}

/* ... of the groups of every lock of the request of 'first'. */
uint32
sync_groups_enter_request(const SyncEntry *first)
{
	const SyncEntry *e = first;
	uint32		mask = 0;

	if (first->nlocks == 1)
		return sync_groups_enter_lock(sync_entry_lock(first));
	do
	{
		SyncLock   *lock = sync_entry_lock(e);

		if (lock->groupno != SYNC_ENTRY_NONE)
			mask |= 1U << sync_group_stripe_of(sync_group_at(lock->groupno)->hashcode);
		e = sync_next_in_request(e);
	} while (e != first);
	return mask == 0 ? 0 : sync_groups_enter_mask(mask);
}

void
sync_groups_leave(uint32 taken)
{
	while (taken != 0)
	{
		int			i = pg_leftmost_one_pos32(taken);

		LWLockRelease(sync_stripe_lock(i));
		taken &= ~(1U << i);
	}
}

/* The group of parent row 'name' in database dbid, or NULL.  Stripe held. */
static SyncGroup *
sync_group_lookup(Oid dbid, const char *name, uint32 hashcode)
{
	for (int32 n = Groups->heads[sync_group_stripe_of(hashcode)];
		 n != SYNC_ENTRY_NONE; n = sync_group_at(n)->pooled.next)
	{
		SyncGroup  *g = sync_group_at(n);

		if (g->hashcode == hashcode && g->tag.dbid == dbid &&
			strcmp(g->tag.name, name) == 0)
			return g;
	}
	return NULL;
}

/*
 * Give group g the limit read at limit generation 'gen', unless a newer
 * one is there already (a change committed after the reader read).  A
 * raised limit grants waiters: the caller runs the group pass it records.
 * Returns whether it lowered the limit of a group with members (to above
 * 0: a paused parent leaves nobody unfit).  Stripe held exclusively.
 */
static bool
sync_group_limit(SyncGroup *g, int32 limit, int64 grace_us, uint64 gen)
{
	bool		lowered;

	Assert(sync_group_held(g, true));
	if (gen < g->limit_gen)
		return false;
	g->limit_gen = gen;
	g->preempt_grace_us = grace_us;
	if (limit > g->limit && g->nready > 0)
		sync_defer_group(g->pooled.self);
	lowered = limit > 0 && limit < g->limit && g->nmembers > 0;
	g->limit = limit;
	return lowered;
}

/*
 * Make sure the group of parent row 'name' of this database exists, and
 * give it 'limit' if that was read at a newer limit generation than the
 * one it has (gen 0: only make it, with no slot until a reader or a
 * commit gives it its limit).  A raised limit records a group pass, for
 * the caller's next sync_grant_deferred().  Caller holds no partition or
 * stripe: this may grow the pool, and raises 53200 if syncwf's memory is
 * full.
 */
void
sync_group_ensure(const char *name, int32 limit, int64 grace_us, uint64 gen)
{
	SyncLockTag tag;
	uint32		hashcode;
	LWLock	   *stripe;
	SyncGroup  *g;
	int32		spare = SYNC_ENTRY_NONE;

	Assert(!sync_any_partition_held() && !sync_any_group_held());
	sync_make_tag(&tag, MyDatabaseId, name);
	hashcode = sync_tag_hash(&tag);
	stripe = sync_stripe_lock(sync_group_stripe_of(hashcode));
	for (;;)
	{
		LWLockAcquire(stripe, LW_EXCLUSIVE);
		g = sync_group_lookup(MyDatabaseId, name, hashcode);
		if (g != NULL || spare != SYNC_ENTRY_NONE)
			break;
		LWLockRelease(stripe);
		spare = sync_pool_alloc(SYNC_POOL_GROUPS, true);
		if (spare < 0)
			sync_memory_report_full(SYNC_POOL_GROUPS);
	}
	if (g == NULL)
	{
		g = sync_group_at(spare);
		spare = SYNC_ENTRY_NONE;
		memcpy(&g->tag, &tag, sizeof(tag));
		g->hashcode = hashcode;
		g->limit = 0;
		g->limit_gen = 0;
		g->slots_held = 0;
		g->nheld = 0;
		g->nmembers = 0;
		g->nready = 0;
		g->preempt_grace_us = -1;
		g->npreemptible = 0;
		g->slots_preempting = 0;
		g->ready_root = SYNC_ENTRY_NONE;
		g->pooled.next = Groups->heads[sync_group_stripe_of(hashcode)];
		Groups->heads[sync_group_stripe_of(hashcode)] = g->pooled.self;
	}
	if (gen > 0)
		(void) sync_group_limit(g, limit, grace_us, gen);
	LWLockRelease(stripe);
	if (spare != SYNC_ENTRY_NONE)
		sync_pool_free(SYNC_POOL_GROUPS, (SyncPooled *) sync_group_at(spare));
}

/*
 * A committed change of parent row 'name': its group, if there is one,
 * gets the new limit (generation 'gen', the one the commit made).  Returns
 * whether that lowered it: then requests of its children may take more
 * slots under it than it has (sync_group_unfit_limit()), and the caller
 * tells their owners.  Caller holds no partition; never fails.
 */
bool
sync_group_committed(const char *name, int32 limit, int64 grace_us, uint64 gen)
{
	SyncLockTag tag;
	uint32		hashcode;
	LWLock	   *stripe;
	SyncGroup  *g;
	bool		lowered = false;

	sync_make_tag(&tag, MyDatabaseId, name);
	hashcode = sync_tag_hash(&tag);
	stripe = sync_stripe_lock(sync_group_stripe_of(hashcode));
	LWLockAcquire(stripe, LW_EXCLUSIVE);
	g = sync_group_lookup(MyDatabaseId, name, hashcode);
	if (g != NULL)
		lowered = sync_group_limit(g, Max(limit, 0), grace_us, gen);
	LWLockRelease(stripe);
	return lowered;
}

/* Take 'lock' out of its group's ready tree, if it is there. */
static void
sync_group_unready(SyncGroup *g, SyncLock *lock)
{
	if (!lock->group_ready)
		return;
	sync_ready_remove(g, lock);
	lock->group_ready = SYNC_READY_NOT;
	g->nready--;
}

/*
 * Link semaphore 'lock' to the group of the parent its row names (value),
 * or to none; its holds move with it.  Caller holds the lock's partition
 * exclusively and no stripe.  False if the group was never made
 * (sync_group_ensure() was not called for it): the lock stays without one.
 */
bool
sync_group_join(SyncLock *lock, const SyncLimitValue *value)
{
	SyncGroup  *g = NULL;
	SyncGroup  *old = lock->groupno == SYNC_ENTRY_NONE ? NULL :
		sync_group_at(lock->groupno);
	uint32		mask = 0;
	uint32		taken;
	bool		ok = true;

	Assert(sync_partition_held(lock->hashcode, true));
	lock->is_parent = value->is_parent;
	if (old == NULL && value->parent[0] == '\0')
	{
		lock->guarantee = 0;
		return true;
	}
	if (old != NULL)
		mask |= 1U << sync_group_stripe_of(old->hashcode);
	if (value->parent[0] != '\0')
	{
		SyncLockTag tag;
		uint32		hashcode;

		sync_make_tag(&tag, lock->tag.dbid, value->parent);
		hashcode = sync_tag_hash(&tag);
		mask |= 1U << sync_group_stripe_of(hashcode);
		taken = sync_groups_enter_mask(mask);
		g = sync_group_lookup(lock->tag.dbid, value->parent, hashcode);
		ok = (g != NULL);
	}
	else
		taken = sync_groups_enter_mask(mask);
	if (g != old)
	{
		if (old != NULL)
		{
			sync_group_unready(old, lock);
			old->slots_held -= lock->slots_held;
			old->nheld -= lock->nheld;
			old->npreemptible -= lock->npreemptible;
			old->slots_preempting -= lock->slots_preempting;
			old->nmembers--;
			if (lock->slots_held > 0 && old->nready > 0)
				sync_defer_group(old->pooled.self);
		}
		lock->groupno = SYNC_ENTRY_NONE;
		if (g != NULL)
		{
			g->slots_held += lock->slots_held;
			g->nheld += lock->nheld;
			g->npreemptible += lock->npreemptible;
			g->slots_preempting += lock->slots_preempting;
			g->nmembers++;
			lock->groupno = g->pooled.self;
			lock->group_link.prev = lock->group_link.next = SYNC_ENTRY_DETACHED;
			lock->group_ready = SYNC_READY_NOT;
		}
	}
	/* (under the stripe: the order among children reads it) */
	if (lock->group_ready && lock->guarantee != value->guarantee)
	{
		/* a new guarantee may change its class: its place in the tree */
		sync_ready_remove(g, lock);
		lock->guarantee = value->guarantee;
		sync_ready_insert(g, lock);
	}
	lock->guarantee = (g != NULL) ? value->guarantee : 0;
	sync_groups_leave(taken);
	return ok;
}

/* 'lock' leaves the lock table: it leaves its group.  Partition held. */
void
sync_group_leave(SyncLock *lock)
{
	SyncLimitValue none;

	if (lock->groupno == SYNC_ENTRY_NONE)
		return;
	none.parent[0] = '\0';
	none.is_parent = false;
	(void) sync_group_join(lock, &none);
}

/*
 * A holder of grouped 'lock' came (dslots, dheld > 0) or went: count it in
 * the lock and in the group, under both the partition and the stripe (so
 * that the order among children may read the lock's count under the
 * stripe).  A slot that went while a child is ready records a group pass.
 * Caller holds the lock's partition exclusively; the stripe is taken if it
 * does not hold it.
 */
void
sync_group_count(SyncLock *lock, int32 dslots, int32 dheld)
{
	SyncGroup  *g = sync_group_at(lock->groupno);
	uint32		taken = sync_groups_enter_lock(lock);
	bool		rekey = lock->group_ready && lock->guarantee > 0;

	/* its slots decide its class in the ready tree: its place there */
	if (rekey)
		sync_ready_remove(g, lock);
	lock->slots_held += dslots;
	lock->nheld += dheld;
	if (rekey)
		sync_ready_insert(g, lock);
	g->slots_held += dslots;
	g->nheld += dheld;
	Assert(g->slots_held >= 0 && g->nheld >= 0);
	if (dslots < 0 && g->nready > 0)
		sync_defer_group(g->pooled.self);
	sync_groups_leave(taken);
}

/*
 * Preemptible holders of grouped 'lock' came or went (dn), or slots went
 * into or out of a grace (dslots): count them in the group too.  Caller
 * holds the lock's partition exclusively; the stripe is taken if needed.
 */
void
sync_group_count_preempting(SyncLock *lock, int32 dslots, int32 dn)
{
	SyncGroup  *g = sync_group_at(lock->groupno);
	uint32		taken = sync_groups_enter_lock(lock);

	g->slots_preempting += dslots;
	g->npreemptible += dn;
	Assert(g->slots_preempting >= 0 && g->npreemptible >= 0);
	sync_groups_leave(taken);
}

/*
 * The slots entry e's request takes in e's group: e's own, and those of
 * the other entries of its request in the same group.
 */
static int32
sync_group_weight(const SyncEntry *e)
{
	int32		groupno = sync_entry_lock(e)->groupno;
	int32		weight = 0;
	const SyncEntry *x = e;

	do
	{
		if (sync_entry_lock(x)->groupno == groupno)
			weight += sync_entry_weight(x);
		x = sync_next_in_request(x);
	} while (x != e);
	return weight;
}

/*
 * Does the parent admit entry e (of a grouped lock) now, if 'released'
 * slots of the group were given up first (a hand-off's look ahead)?  It
 * must have room for e's request, and no ready sibling's waiter may go
 * before it.  Caller holds the group's stripe.
 */
bool
sync_group_admits(const SyncEntry *e, int32 released)
{
	SyncLock   *lock = sync_entry_lock(e);
	SyncGroup  *g = sync_group_at(lock->groupno);

	Assert(sync_group_held(g, false));
	if (g->slots_held - released + sync_group_weight(e) > g->limit)
		return false;
	/* the first sibling in order: if it does not go before e, none does */
	for (SyncLock *m = sync_ready_first(g); m != NULL; m = sync_ready_next(m))
		if (m != lock)
			return !(m->group_ready == SYNC_READY_ONE &&
					 sync_key_before(sync_ready_key(m), sync_entry_key(e)));
	return true;
}

/*
 * For deadlock detection: has the parent of waiter w's lock no room for
 * it (whatever the order)?  Takes the stripe shared; caller holds the
 * lock's partition.
 */
bool
sync_group_full_for(const SyncEntry *w)
{
	SyncGroup  *g = sync_group_at(sync_entry_lock(w)->groupno);
	LWLock	   *stripe = sync_stripe_lock(sync_group_stripe_of(g->hashcode));
	bool		full;

	LWLockAcquire(stripe, LW_SHARED);
	full = g->slots_held + sync_group_weight(w) > g->limit;
	LWLockRelease(stripe);
	return full;
}

/*
 * Can entry e (of a grouped lock) never be granted, because its request
 * takes more slots under e's parent than the parent's sizelimit (a request
 * of several children, or a parent lowered under it)?  If so, returns that
 * sizelimit, else 0 (a parent of 0 pauses its children: nobody is unfit).
 * Caller holds e's partition; reads the limit without the stripe, like
 * the lock's own limit is read without the row: a limit that changes
 * meanwhile wakes the waiters it leaves unfit (sem_limits.c).
 */
int32
sync_group_unfit_limit(const SyncEntry *e)
{
	int32		limit = sync_group_at(sync_entry_lock(e)->groupno)->limit;

	return limit > 0 && sync_group_weight(e) > limit ? limit : 0;
}

/* For assertions: has e's group room for e's request? Stripe held. */
bool
sync_group_has_room(const SyncEntry *e)
{
	SyncGroup  *g = sync_group_at(sync_entry_lock(e)->groupno);

	return sync_group_held(g, false) &&
		g->slots_held + sync_group_weight(e) <= g->limit;
}

/*
 * The end of a grant pass of grouped 'lock': 'front' is the waiter it
 * stopped at because the parent did not admit it (NULL: none), which
 * makes the lock ready with that waiter's place, or no longer ready.  If
 * the parent has room that a sibling is owed, record a group pass.
 * Caller holds the partition and the stripe exclusively.
 */
void
sync_group_set_ready(SyncLock *lock, const SyncEntry *front)
{
	SyncGroup  *g = sync_group_at(lock->groupno);

	Assert(sync_group_held(g, true));
	if (front == NULL)
	{
		sync_group_unready(g, lock);
		return;
	}
	if (lock->group_ready != SYNC_READY_NOT)
		sync_ready_remove(g, lock);
	else
		g->nready++;
	lock->group_ready = front->nlocks > 1 ? SYNC_READY_MULTI : SYNC_READY_ONE;
	lock->ready_priority = front->priority;
	lock->ready_slots = sync_entry_weight(front);
	lock->ready_queued_at = front->queued_at;
	lock->ready_seq = front->seq;
	sync_ready_insert(g, lock);
	Assert(sync_ready_check(g));
	/*
	 * Room, owed to a sibling's waiter: the group pass grants it.  (A
	 * request of several locks is tried when a slot frees or the limit
	 * rises, not now.)
	 */
	if (lock->group_ready == SYNC_READY_ONE && g->slots_held < g->limit)
		sync_defer_group(g->pooled.self);
}

/*
 * The group pass's choice: the ready child of group 'groupno' whose waiter
 * goes first, if the group has room for it.  Returns its lock number (and
 * its hash code and waiter's arrival, to tell whether a pass changed
 * anything), or SYNC_ENTRY_NONE.  Caller holds no stripe.
 */
int32
sync_group_first_ready(int32 groupno, uint32 *hashcode, uint64 *seq)
{
	SyncGroup  *g = sync_group_at(groupno);
	LWLock	   *stripe = sync_stripe_lock(sync_group_stripe_of(g->hashcode));
	SyncLock   *best = NULL;
	int32		result = SYNC_ENTRY_NONE;

	LWLockAcquire(stripe, LW_SHARED);
	/* requests of one lock first, in order; then one of several (class 2) */
	best = sync_ready_first(g);
	if (best != NULL && g->slots_held + best->ready_slots <= g->limit)
	{
		result = best->pooled.self;
		*hashcode = best->hashcode;
		*seq = best->ready_seq;
	}
	LWLockRelease(stripe);
	return result;
}

/*
 * For the view sync_locks: the parent row of grouped 'lock', its limit
 * and the slots its children hold.  False for a lock without a group.
 * Caller holds the lock's partition (which keeps groupno).
 */
bool
sync_lock_group_info(const SyncLock *lock, char *name, int32 *limit,
					 int32 *slots_held)
{
	SyncGroup  *g;
	LWLock	   *stripe;

	if (lock->groupno == SYNC_ENTRY_NONE)
		return false;
	g = sync_group_at(lock->groupno);
	stripe = sync_stripe_lock(sync_group_stripe_of(g->hashcode));
	LWLockAcquire(stripe, LW_SHARED);
	strlcpy(name, g->tag.name, SYNC_NAME_BUFLEN);
	*limit = g->limit;
	*slots_held = g->slots_held;
	LWLockRelease(stripe);
	return true;
}
