/*-------------------------------------------------------------------------
 *
 * group_ready.c
 *		The order of a parent's ready children (limit_groups.c): a treap of
 *		the group's ready locks by the place of their front waiters, so
 *		that the first of them, and the first but one, are found in
 *		O(log n) of the ready children, not by a walk of them all.
 *
 * A ready lock's key is its front waiter's place in the parent's order:
 * first the requests of one lock, a child that stays within its guarantee
 * with that waiter (class 0) before one that would borrow (class 1), then
 * the requests of several locks (class 2, which the order never waits
 * for); within a class, higher priority, then earlier queue time, then
 * earlier arrival (the order every queue uses), and the lock's number for
 * a key no other has.  The tree is a binary search tree by that key whose
 * nodes also carry a heap priority (a hash of the lock's number), which
 * keeps it balanced with high probability.
 *
 * The key reads the lock's slots_held (for the class) and the ready_*
 * snapshot of its front waiter: whoever changes them for a ready lock
 * takes it out first and puts it in again after (sync_ready_remove(),
 * sync_ready_insert()): sync_group_set_ready(), sync_group_count() and a
 * change of guarantee, all in limit_groups.c.
 *
 * Links are lock numbers: left and right in SyncLock.group_link (prev and
 * next), the parent in ready_up.  Locking: the group's stripe, held
 * exclusively to change the tree, and the lock's partition, held by
 * whoever changes the lock's key (limit_groups.c says how).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"

#include "engine/engine_internal.h"

#define NONE	SYNC_ENTRY_NONE

static inline SyncLock *
node(int32 i)
{
	return sync_lock_at(i);
}

/* The key of ready lock m (see the opening comment). */
SyncReadyKey
sync_ready_key(const SyncLock *m)
{
	SyncReadyKey k = {m->group_ready == SYNC_READY_MULTI ? 2 :
		sync_guarantee_class(m, m->ready_slots),
		m->ready_priority, m->ready_queued_at, m->ready_seq};

	return k;
}

/* Does ready lock a go before ready lock b? */
static bool
sync_ready_before(const SyncLock *a, const SyncLock *b)
{
	SyncReadyKey ka = sync_ready_key(a);
	SyncReadyKey kb = sync_ready_key(b);

	if (sync_key_before(ka, kb))
		return true;
	if (sync_key_before(kb, ka))
		return false;
	return a->pooled.self < b->pooled.self;
}

/* Make 'child' take the place of 'old' under old's parent (or as root). */
static void
replace_child(SyncGroup *g, int32 parent, int32 old, int32 child)
{
	if (child != NONE)
		node(child)->ready_up = parent;
	if (parent == NONE)
		g->ready_root = child;
	else if (node(parent)->group_link.prev == old)
		node(parent)->group_link.prev = child;
	else
	{
		Assert(node(parent)->group_link.next == old);
		node(parent)->group_link.next = child;
	}
}

/* Rotate lock x above its parent, keeping the order. */
static void
rotate_up(SyncGroup *g, int32 x)
{
	SyncLock   *lx = node(x);
	int32		p = lx->ready_up;
	SyncLock   *lp = node(p);

	replace_child(g, lp->ready_up, p, x);
	if (lp->group_link.prev == x)
	{
		lp->group_link.prev = lx->group_link.next;
		if (lx->group_link.next != NONE)
			node(lx->group_link.next)->ready_up = p;
		lx->group_link.next = p;
	}
	else
	{
		lp->group_link.next = lx->group_link.prev;
		if (lx->group_link.prev != NONE)
			node(lx->group_link.prev)->ready_up = p;
		lx->group_link.prev = p;
	}
	lp->ready_up = x;
}

/*
 * Put ready lock m into its group's tree, by its key (its group_ready and
 * ready_* are set).  O(log n) expected.  Stripe held exclusively.
 */
void
sync_ready_insert(SyncGroup *g, SyncLock *m)
{
	int32		self = m->pooled.self;
	int32		parent = NONE;
	bool		left = false;

	Assert(sync_group_held(g, true) && m->group_ready != SYNC_READY_NOT);
	m->group_link.prev = m->group_link.next = NONE;
	m->ready_heap = murmurhash32((uint32) self);
	for (int32 i = g->ready_root; i != NONE;)
	{
		parent = i;
		left = sync_ready_before(m, node(i));
		i = left ? node(i)->group_link.prev : node(i)->group_link.next;
	}
	m->ready_up = parent;
	if (parent == NONE)
		g->ready_root = self;
	else if (left)
		node(parent)->group_link.prev = self;
	else
		node(parent)->group_link.next = self;
	while (m->ready_up != NONE && node(m->ready_up)->ready_heap < m->ready_heap)
		rotate_up(g, self);
}

/* Take ready lock m out of its group's tree.  Stripe held exclusively. */
void
sync_ready_remove(SyncGroup *g, SyncLock *m)
{
	int32		self = m->pooled.self;
	int32		child;

	Assert(sync_group_held(g, true) && m->group_ready != SYNC_READY_NOT);
	while (m->group_link.prev != NONE && m->group_link.next != NONE)
	{
		int32		l = m->group_link.prev,
					r = m->group_link.next;

		rotate_up(g, node(l)->ready_heap > node(r)->ready_heap ? l : r);
	}
	child = (m->group_link.prev != NONE) ? m->group_link.prev : m->group_link.next;
	replace_child(g, m->ready_up, self, child);
	m->group_link.prev = m->group_link.next = SYNC_ENTRY_DETACHED;
	m->ready_up = NONE;
}

/* The first ready lock of group g, or NULL.  Stripe held. */
SyncLock *
sync_ready_first(const SyncGroup *g)
{
	SyncLock   *m = node(g->ready_root);

	while (m != NULL && m->group_link.prev != NONE)
		m = node(m->group_link.prev);
	return m;
}

/* The ready lock after m in its group's order, or NULL.  Stripe held. */
SyncLock *
sync_ready_next(const SyncLock *m)
{
	int32		self = m->pooled.self;

	if (m->group_link.next != NONE)
	{
		SyncLock   *x = node(m->group_link.next);

		while (x->group_link.prev != NONE)
			x = node(x->group_link.prev);
		return x;
	}
	for (int32 p = m->ready_up; p != NONE; self = p, p = node(p)->ready_up)
		if (node(p)->group_link.prev == self)
			return node(p);
	return NULL;
}

#ifdef USE_ASSERT_CHECKING
/* For assertions: is the tree of g in order, a heap, with nready nodes? */
bool
sync_ready_check(const SyncGroup *g)
{
	int			n = 0;
	const SyncLock *prev = NULL;

	for (const SyncLock *m = sync_ready_first(g); m != NULL; m = sync_ready_next(m))
	{
		if (prev != NULL && !sync_ready_before(prev, m))
			return false;
		if (m->ready_up != NONE && node(m->ready_up)->ready_heap < m->ready_heap)
			return false;
		prev = m;
		n++;
	}
	return n == g->nready;
}
#endif
