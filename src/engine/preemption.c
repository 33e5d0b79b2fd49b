/*-------------------------------------------------------------------------
 *
 * preemption.c
 *		Preemption of keyed holds that opted in: a waiter that cannot be
 *		granted otherwise has the holds it needs ended after a grace
 *		period, the lowest-priority first.
 *
 * Who may preempt whom.  A keyed request made with preemptible => true
 * (single lock) may lose its hold.  When the front waiter W of a semaphore
 * cannot be granted because its lock is full and the lock's sync_limit row
 * has a preempt_grace, the preemptible holders of that lock with a lower
 * base priority than W's are candidates.  When W's lock has room but its
 * parent does not, and the parent's row has a preempt_grace, the candidates
 * are the parent's *borrowed* holds: preemptible holds of any child that
 * would still hold at least its guarantee without them, of a lower
 * priority than W's, or of any priority when W's child is under its
 * guarantee (reclaim).  Candidates are taken in order (lowest base
 * priority, then the most recent grant, then the higher token) until the
 * slots they free cover what W lacks, counting the holds already in their
 * grace as freed; if all of them together do not, none is taken (a
 * preemption that grants nobody is not made).  So exactly one victim is
 * chosen per slot needed, deterministically, and no preemption loops: a
 * victim's own waiting request has a lower priority than the hold that
 * preempted it (and never preempts it back), and a reclaimed hold's child
 * keeps its guarantee (and so never reclaims).  Session and transaction
 * holds, and requests of several locks, are never preempted, and a
 * request of several locks never preempts.
 *
 * How.  The grant pass that stops at such a W notes its lock for the
 * worker (sync_preempt_note(): a ring of lock numbers, or a flag that
 * makes the worker look at every live lock when the ring is full); a
 * lock is noted again only when its front or its count changed, or a
 * preemptible hold came.  The worker (keyed/keyed_preempt.c) takes every
 * partition, calls sync_preempt_choose(), which marks each victim
 * (preempt_deadline = now + grace, its lease cut to end then), writes the
 * rows and sends the "preempt" notifications; a victim whose row it
 * cannot write, or whose transaction aborts, is unmarked
 * (sync_preempt_undo()).  When the grace ends the lease expiry ends the
 * hold (notification "lost", reason "preempted"), in a transaction that
 * hands its slot to W, as any release does; a victim that releases first
 * hands it over the same way.  A preemption once begun is not taken back
 * if W is granted or withdrawn meanwhile: the slot goes to the next waiter.
 *
 * Locking.  The preemption fields of a lock (preempt_*, npreemptible,
 * slots_preempting) and of an entry (preemptible, preempt_deadline) are
 * protected by the lock's partition; a group's by its stripe as well
 * (limit_groups.c).  The ring is under its spinlock, taken last.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "storage/shmem.h"
#include "storage/spin.h"

#include "engine/engine_internal.h"

#define SYNC_PREEMPT_NOTES		256

typedef struct SyncPreemptNote
{
	int32		lockno;
	uint64		request_id;		/* its front then */
} SyncPreemptNote;

typedef struct SyncPreemptShmem
{
	slock_t		mutex;
	bool		overflow;		/* a note was lost: look at every lock */
	int32		nnotes;
	SyncPreemptNote notes[SYNC_PREEMPT_NOTES];
} SyncPreemptShmem;

static SyncPreemptShmem *Preempt = NULL;

Size
sync_preempt_shmem_size(void)
{
	return MAXALIGN(sizeof(SyncPreemptShmem));
}

void
sync_preempt_shmem_init(void)
{
	bool		found;

	Preempt = ShmemInitStruct("syncwf preemption", sizeof(SyncPreemptShmem), &found);
	if (found)
		return;
	SpinLockInit(&Preempt->mutex);
	Preempt->overflow = false;
	Preempt->nnotes = 0;
}

/* Has the worker locks to look at?  (An unlocked look.) */
bool
sync_preempt_wanted(void)
{
	volatile SyncPreemptShmem *p = Preempt;

	return p->nnotes > 0 || p->overflow;
}

/* Put 'lock' (its front 'request_id') in the worker's ring. */
static void
sync_preempt_push(SyncLock *lock, uint64 request_id, bool wake)
{
	SpinLockAcquire(&Preempt->mutex);
	if (Preempt->nnotes < SYNC_PREEMPT_NOTES)
	{
		Preempt->notes[Preempt->nnotes].lockno = lock->pooled.self;
		Preempt->notes[Preempt->nnotes].request_id = request_id;
		Preempt->nnotes++;
	}
	else
		Preempt->overflow = true;
	SpinLockRelease(&Preempt->mutex);
	if (wake)
		sync_worker_wake();
}

/*
 * A preemptible keyed holder of 'lock' came (dir 1) or went (-1): count it
 * as a candidate, or as slots in their grace.  Partition held exclusively.
 */
void
sync_preempt_count(SyncLock *lock, const SyncEntry *e, int dir)
{
	Assert(e->preemptible);
	if (e->preempt_deadline != 0)
	{
		lock->slots_preempting += dir * sync_entry_weight(e);
		if (lock->groupno != SYNC_ENTRY_NONE)
			sync_group_count_preempting(lock, dir * sync_entry_weight(e), 0);
	}
	else
	{
		lock->npreemptible += dir;
		if (lock->groupno != SYNC_ENTRY_NONE)
			sync_group_count_preempting(lock, 0, dir);
		/* a new candidate for the front: tell the worker again */
		if (dir > 0)
			lock->preempt_seen = 0;
	}
	Assert(lock->npreemptible >= 0 && lock->slots_preempting >= 0);
}

/*
 * The grant pass of 'lock' stopped at 'front', which waits for its lock's
 * or its parent's room: if a preemption could help it, note the lock for
 * the worker (once per front, priority and count).  Caller holds the
 * partition exclusively and, for a grouped lock, its stripe.
 */
void
sync_preempt_note(SyncLock *lock, const SyncEntry *front)
{
	SyncGroup  *g = lock->groupno == SYNC_ENTRY_NONE ? NULL :
		sync_group_at(lock->groupno);
	int32		key;

	if (front->nlocks != 1 || lock->kind != SYNC_KIND_SEMAPHORE)
		return;
	if (!(lock->preempt_grace_us >= 0 && lock->npreemptible > 0) &&
		!(g != NULL && g->preempt_grace_us >= 0 && g->npreemptible > 0))
		return;
	key = (int32) hash_combine((uint32) front->base_priority,
							   (uint32) lock->slots_held);
	if (lock->preempt_seen == front->seq && lock->preempt_seen_key == key)
		return;
	lock->preempt_seen = front->seq;
	lock->preempt_seen_key = key;
	sync_preempt_push(lock, front->request_id, true);
}

/* May held entry e be preempted for waiter w (any priority: a reclaim)? */
static bool
sync_preempt_candidate(const SyncEntry *e, const SyncEntry *w, bool any_priority)
{
	return e->scope == SYNC_SCOPE_KEYED && e->preemptible &&
		e->preempt_deadline == 0 && e->persisted && e->nlocks == 1 &&
		!TransactionIdIsValid(e->created_xid) &&
		!TransactionIdIsValid(e->release_xid) &&
		(any_priority || e->base_priority < w->base_priority);
}

/* Candidates in order: lowest priority, then most recent grant, then token. */
static int
sync_preempt_cmp(const void *a, const void *b)
{
	const SyncEntry *x = *(SyncEntry *const *) a;
	const SyncEntry *y = *(SyncEntry *const *) b;

	if (x->base_priority != y->base_priority)
		return x->base_priority < y->base_priority ? -1 : 1;
	if (x->since != y->since)
		return x->since > y->since ? -1 : 1;
	if (x->token != y->token)
		return x->token > y->token ? -1 : 1;
	return 0;
}

/* Mark e preempted until 'deadline' (its lease cut to end then). */
static SyncPreemption *
sync_preempt_mark(SyncEntry *e, TimestampTz deadline)
{
	SyncLock   *lock = sync_entry_lock(e);
	SyncPreemption *p = palloc(sizeof(SyncPreemption));

	p->victim = e;
	p->request_id = e->request_id;
	p->deadline = deadline;
	p->old_lease = e->lease_expires;
	sync_preempt_count(lock, e, -1);
	e->preempt_deadline = deadline;
	sync_preempt_count(lock, e, 1);
	if (e->lease_expires == 0 || e->lease_expires > deadline)
		e->lease_expires = deadline;
	sync_lease_scheduled(deadline); /* the worker ends it then */
	return p;
}

/*
 * Take candidates cands[0..n) in order until they free 'need' slots (of
 * the parent, when 'borrowed': then each must leave its child at least
 * its guarantee), marking them with 'deadline'; if they cannot, unmark
 * them again.  Adds the victims to *victims.
 */
static void
sync_preempt_take(SyncEntry **cands, int n, int32 need, bool borrowed,
				  TimestampTz deadline, List **victims)
{
	List	   *taken = NIL;
	int32		freed = 0;
	ListCell   *lc;

	qsort(cands, n, sizeof(SyncEntry *), sync_preempt_cmp);
	for (int i = 0; i < n && freed < need; i++)
	{
		SyncLock   *m = sync_entry_lock(cands[i]);
		int32		w = sync_entry_weight(cands[i]);

		if (w == 0)
			continue;
		if (borrowed && m->slots_held - m->slots_preempting - w < m->guarantee)
			continue;
		taken = lappend(taken, sync_preempt_mark(cands[i], deadline));
		freed += w;
	}
	if (freed >= need)
	{
		*victims = list_concat(*victims, taken);
		return;
	}
	foreach(lc, taken)
	{
		SyncPreemption *p = (SyncPreemption *) lfirst(lc);

		sync_preempt_undo(p->victim, p->old_lease, false);
	}
	list_free_deep(taken);
}

/*
 * Front waiter w of 'lock' lacks room in its lock or its parent: choose
 * the victims, if its rows allow preemption and enough of them exist.
 * Every partition held exclusively; the stripe of the lock's group too.
 */
static void
sync_preempt_for(SyncLock *lock, SyncEntry *w, TimestampTz now, List **victims)
{
	int32		weight = sync_entry_weight(w);
	SyncGroup  *g;
	SyncEntry **cands;
	int			n = 0;
	int32		need;
	bool		reclaim;
	SyncLiveIter it;

	if (lock->slots_held + weight > lock->limit)
	{
		/* its own lock is full: its lower-priority preemptible holders */
		need = lock->slots_held - lock->slots_preempting + weight - lock->limit;
		if (lock->preempt_grace_us < 0 || need <= 0 || lock->npreemptible == 0)
			return;
		cands = palloc(sizeof(SyncEntry *) * lock->npreemptible);
		sync_elist_foreach(e, &lock->holders, lock_link)
			if (sync_preempt_candidate(e, w, false) && n < lock->npreemptible)
				cands[n++] = e;
		sync_preempt_take(cands, n, need, false, now + lock->preempt_grace_us, victims);
		pfree(cands);
		return;
	}
	if (lock->groupno == SYNC_ENTRY_NONE)
		return;
	g = sync_group_at(lock->groupno);
	need = g->slots_held - g->slots_preempting + weight - g->limit;
	if (g->slots_held + weight <= g->limit || g->preempt_grace_us < 0 ||
		need <= 0 || g->npreemptible == 0)
		return;
	/* the parent is full: borrowed holds of its children (and of this one) */
	reclaim = lock->slots_held + weight <= lock->guarantee;
	cands = palloc(sizeof(SyncEntry *) * g->npreemptible);
	sync_foreach_live_lock(it)
	{
		SyncLock   *m = sync_live_lock(it);

		if (m->groupno != lock->groupno || m->npreemptible == 0)
			continue;
		sync_elist_foreach(e, &m->holders, lock_link)
			if (sync_preempt_candidate(e, w, reclaim) && n < g->npreemptible)
				cands[n++] = e;
	}
	sync_preempt_take(cands, n, need, true, now + g->preempt_grace_us, victims);
	pfree(cands);
}

/* Look at the front of one noted lock (request_id 0: whatever it is). */
static void
sync_preempt_look(SyncLock *lock, uint64 request_id, TimestampTz now, List **victims)
{
	SyncEntry  *w;
	uint32		stripes;

	if (lock->nwaiting == 0 || lock->kind != SYNC_KIND_SEMAPHORE)
		return;
	w = sync_queue_front(lock);
	if (w == NULL || w->nlocks != 1 || (request_id != 0 && w->request_id != request_id))
		return;
	stripes = sync_groups_enter_lock(lock);
	sync_preempt_for(lock, w, now, victims);
	sync_groups_leave(stripes);
}

/*
 * The worker's choice: for every lock noted since its last look, the
 * victims its front waiter needs, marked (SyncPreemption *, with what
 * undoing them takes).  Caller holds every partition exclusively.
 */
List *
sync_preempt_choose(TimestampTz now)
{
	SyncPreemptNote *notes = palloc(sizeof(SyncPreemptNote) * SYNC_PREEMPT_NOTES);
	int			n;
	bool		overflow;
	List	   *victims = NIL;

	Assert(sync_partitions_held(SYNC_ALL_PARTITIONS, true));
	SpinLockAcquire(&Preempt->mutex);
	n = Preempt->nnotes;
	memcpy(notes, Preempt->notes, sizeof(SyncPreemptNote) * n);
	overflow = Preempt->overflow;
	Preempt->nnotes = 0;
	Preempt->overflow = false;
	SpinLockRelease(&Preempt->mutex);

	if (overflow)
	{
		SyncLiveIter it;

		sync_foreach_live_lock(it)
			sync_preempt_look(sync_live_lock(it), 0, now, &victims);
	}
	else
		for (int i = 0; i < n; i++)
			sync_preempt_look(sync_lock_at(notes[i].lockno), notes[i].request_id,
							  now, &victims);
	pfree(notes);
	return victims;
}

/*
 * Victim e's preemption does not happen after all (its row could not be
 * written, or the worker's transaction aborted): its hold goes on with its
 * lease as it was.  With 'retry', the worker looks at its lock again in a
 * later round.  Caller holds e's partition exclusively and has checked
 * that e is still the victim's entry.
 */
void
sync_preempt_undo(SyncEntry *e, TimestampTz old_lease, bool retry)
{
	SyncLock   *lock = sync_entry_lock(e);

	Assert(sync_partition_held(lock->hashcode, true));
	if (e->state != SYNC_ENTRY_HELD || e->preempt_deadline == 0)
		return;
	sync_preempt_count(lock, e, -1);
	if (e->lease_expires == e->preempt_deadline)
		e->lease_expires = old_lease;
	e->preempt_deadline = 0;
	sync_preempt_count(lock, e, 1);
	if (retry && lock->nwaiting > 0)
		sync_preempt_push(lock, 0, false);
}

/*
 * A preemptible hold of 'lock' became a candidate (its grant written, its
 * request committed, a release of it rolled back): the front waiter of the
 * lock, or of the first ready child of its parent, may preempt it now, so
 * the worker looks again.  Caller holds the partition exclusively.
 */
void
sync_preempt_settled(SyncLock *lock)
{
	uint32		stripes = sync_groups_enter_lock(lock);
	SyncEntry  *front = lock->nwaiting > 0 ? sync_queue_front(lock) : NULL;

	lock->preempt_seen = 0;
	if (front != NULL)
		sync_preempt_note(lock, front);
	if (lock->groupno != SYNC_ENTRY_NONE)
	{
		SyncGroup  *g = sync_group_at(lock->groupno);
		SyncLock   *m = sync_ready_first(g);

		/* (a sibling's front: the worker checks it under every partition) */
		if (g->preempt_grace_us >= 0 && m != NULL && m != lock)
			sync_preempt_push(m, 0, true);
	}
	sync_groups_leave(stripes);
}

/* The preemption of e was written and announced: count it.  Partition held. */
void
sync_preempt_committed(SyncEntry *e)
{
	sync_stats_preempted(sync_lock_stats(sync_entry_lock(e)));
}
