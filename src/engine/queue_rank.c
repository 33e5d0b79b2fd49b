/*-------------------------------------------------------------------------
 *
 * queue_rank.c
 *		The order-statistic tree of a lock's queue: what makes a waiter's
 *		position, the place a newcomer of a priority joins, and taking an
 *		entry out of the middle cost O(log n) in the queue's length.
 *
 * A lock's queue is a list (lock->waiters, in queue order, queue_order.c)
 * that the grant pass walks from its front.  Beside the list, the same
 * entries form a treap: a binary tree in the list's order, each node also
 * carrying a heap priority (a hash of its arrival number) that keeps the
 * tree balanced with high probability, and the size of its subtree.  The
 * tree is built from the list, never from a comparison: an entry is put in
 * after its list predecessor, so it always holds the list's order, whatever
 * the rule that placed it there (priority, fair tag, queue time, arrival).
 * A position is the sizes of the left subtrees on the way up from the
 * entry to the root; a search by priority goes down from the root.
 *
 * Links are entry numbers in the pool (sync_entry_index()), not pointers,
 * so that they mean the same in every backend.  Only pending entries are in
 * a tree; the dormant list has none (a dormant entry has no position).
 *
 * Locking: every function here runs under the lock's partition lock,
 * exclusively for those that change the tree.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"

#include "engine/engine_internal.h"

#define NONE	SYNC_ENTRY_NONE

static inline SyncEntry *
node(int32 i)
{
	return sync_entry_at(i);
}

static inline int32
size_of(int32 i)
{
	return i == NONE ? 0 : node(i)->rank_size;
}

static inline void
resize(SyncEntry *e)
{
	e->rank_size = 1 + size_of(e->rank_left) + size_of(e->rank_right);
}

/* Make 'child' take the place of 'old' under old's parent (or as root). */
static void
replace_child(SyncLock *lock, int32 parent, int32 old, int32 child)
{
	if (child != NONE)
		node(child)->rank_parent = parent;
	if (parent == NONE)
		lock->rank_root = child;
	else if (node(parent)->rank_left == old)
		node(parent)->rank_left = child;
	else
	{
		Assert(node(parent)->rank_right == old);
		node(parent)->rank_right = child;
	}
}

/* Rotate entry x above its parent, keeping the order and the sizes. */
static void
rotate_up(SyncLock *lock, int32 x)
{
	SyncEntry  *ex = node(x);
	int32		p = ex->rank_parent;
	SyncEntry  *ep = node(p);

	replace_child(lock, ep->rank_parent, p, x);
	if (ep->rank_left == x)
	{
		ep->rank_left = ex->rank_right;
		if (ex->rank_right != NONE)
			node(ex->rank_right)->rank_parent = p;
		ex->rank_right = p;
	}
	else
	{
		ep->rank_right = ex->rank_left;
		if (ex->rank_left != NONE)
			node(ex->rank_left)->rank_parent = p;
		ex->rank_left = p;
	}
	ep->rank_parent = x;
	resize(ep);
	resize(ex);
}

/*
 * Put pending entry e into the tree of its lock right after 'prev' in the
 * queue's order (NULL: at the front), as the list already has it.  O(log n)
 * expected.  Caller holds the partition exclusively.
 */
void
sync_rank_insert(SyncLock *lock, SyncEntry *e, SyncEntry *prev)
{
	int32		self = sync_entry_index(e);
	int32		parent = NONE;
	bool		left = true;

	Assert(sync_partition_held(lock->hashcode, true));
	e->rank_left = e->rank_right = NONE;
	e->rank_size = 1;
	/*
	 * (seq and entry numbers often rise together: hash one before mixing
	 * in the other, or their XOR repeats and the heap order degenerates.)
	 */
	e->rank_heap = murmurhash32(murmurhash32((uint32) e->seq ^
											 (uint32) (e->seq >> 32)) ^
								(uint32) self);

	/* the leaf where the successor of prev (or the front) would hang */
	if (prev == NULL)
	{
		for (int32 i = lock->rank_root; i != NONE; i = node(i)->rank_left)
			parent = i;
	}
	else if (prev->rank_right == NONE)
	{
		parent = sync_entry_index(prev);
		left = false;
	}
	else
	{
		for (int32 i = prev->rank_right; i != NONE; i = node(i)->rank_left)
			parent = i;
	}
	e->rank_parent = parent;
	if (parent == NONE)
		lock->rank_root = self;
	else if (left)
		node(parent)->rank_left = self;
	else
		node(parent)->rank_right = self;
	for (int32 i = parent; i != NONE; i = node(i)->rank_parent)
		node(i)->rank_size++;

	/* restore the heap order */
	while (e->rank_parent != NONE &&
		   node(e->rank_parent)->rank_heap < e->rank_heap)
		rotate_up(lock, self);
}

/*
 * Take entry e out of its lock's tree.  O(log n) expected.  Caller holds
 * the partition exclusively.
 */
void
sync_rank_remove(SyncLock *lock, SyncEntry *e)
{
	int32		self = sync_entry_index(e);
	int32		child;

	Assert(sync_partition_held(lock->hashcode, true));

	/* rotate it down until it has one child at most */
	while (e->rank_left != NONE && e->rank_right != NONE)
	{
		int32		l = e->rank_left,
					r = e->rank_right;

		rotate_up(lock, node(l)->rank_heap > node(r)->rank_heap ? l : r);
	}
	child = (e->rank_left != NONE) ? e->rank_left : e->rank_right;
	replace_child(lock, e->rank_parent, self, child);
	for (int32 i = e->rank_parent; i != NONE; i = node(i)->rank_parent)
		node(i)->rank_size--;
	e->rank_parent = e->rank_left = e->rank_right = NONE;
	e->rank_size = 0;
}

/*
 * 1-based position of pending entry e in its lock's queue.  O(log n)
 * expected.  Caller holds the partition.
 */
int
sync_rank_position(const SyncEntry *e)
{
	int			pos = size_of(e->rank_left) + 1;
	int32		i = sync_entry_index(e);

	while (node(i)->rank_parent != NONE)
	{
		int32		p = node(i)->rank_parent;

		if (node(p)->rank_right == i)
			pos += size_of(node(p)->rank_left) + 1;
		i = p;
	}
	return pos;
}

/*
 * The last entry of the queue whose priority is at least 'priority', or
 * NULL if the front's is lower: where an entry of that priority starts its
 * search.  O(log n) expected, as the queue is in descending priority.
 * Caller holds the partition.
 */
SyncEntry *
sync_rank_last_at_least(SyncLock *lock, int32 priority)
{
	SyncEntry  *found = NULL;

	for (int32 i = lock->rank_root; i != NONE;)
	{
		SyncEntry  *n = node(i);

		if (n->priority >= priority)
		{
			found = n;
			i = n->rank_right;
		}
		else
			i = n->rank_left;
	}
	return found;
}

#ifdef USE_ASSERT_CHECKING
/*
 * Does the tree of 'lock' hold exactly its queue, in the queue's order,
 * with correct sizes and heap order?  For assertions after each change
 * while the queue is short (a check costs O(n)).
 */
bool
sync_rank_check(SyncLock *lock)
{
	int			pos = 0;

	if (lock->nwaiting > 64)
		return true;
	if (size_of(lock->rank_root) != lock->nwaiting)
		return false;
	sync_elist_foreach(e, &lock->waiters, lock_link)
	{
		if (sync_rank_position(e) != ++pos)
			return false;
		if (e->rank_size != 1 + size_of(e->rank_left) + size_of(e->rank_right))
			return false;
		if (e->rank_parent != NONE &&
			node(e->rank_parent)->rank_heap < e->rank_heap)
			return false;
	}
	return true;
}
#endif
