/*-------------------------------------------------------------------------
 *
 * deadlock.c
 *		Deadlock detection: waits-for cycles among backends waiting for
 *		syncwf locks, also through PostgreSQL's own heavyweight locks, found
 *		by the waiter itself and broken by failing its request with 40P01.
 *
 * The graph's nodes are backends (pids): all entries of one backend are one
 * node.  A backend waiting for a syncwf request has an edge, for each lock
 * of the request it cannot be granted yet, to the backend of every holder
 * of that lock its request conflicts with (a semaphore: every holder, when
 * the request does not fit; an exclusive mutex request: every holder; a
 * shared one: the exclusive holders; a semaphore whose parent row has no
 * room for it: the holders of every semaphore under that parent too),
 * and, under strict queueing (a semaphore with queueing 'best_effort' has
 * none), to the backend of the nearest entry queued ahead of it, which has
 * the same edges in turn.  A
 * keyed entry queued ahead stands for the holders it waits for.  Keyed
 * holds belong to no backend: they are never a node, and a cycle never
 * passes through them.  A backend waiting for a heavyweight lock has an
 * edge to each backend pg_blocking_pids() names.
 *
 * Who checks: a waiter, every deadlock_timeout while it waits (backend_holds.c),
 * and only when a backend holding a lock it waits for is waiting itself,
 * for a syncwf lock or a heavyweight lock (sync_deadlock_suspect()).  Every
 * cycle has such an edge, so some waiter of every cycle checks; an ordinary
 * queue behind a busy holder costs a look at the holders' PGPROCs each
 * deadlock_timeout, nothing more.  A waiter that finds a cycle through
 * itself is the victim: PostgreSQL's own detector, running in a backend
 * waiting for a heavyweight lock, does not see syncwf's waits, so the
 * victim is always a syncwf waiter.
 *
 * Locking: one LWLock (tranche "syncwf deadlock") serializes the checks.  A
 * check holds it from its snapshot until the victim has withdrawn its
 * request (the caller does that, between sync_deadlock_check() and
 * sync_deadlock_report()), so the next check no longer sees the cycle and
 * each cycle has exactly one victim.  Under it, the snapshot takes every
 * lock-table partition shared; the edges of heavyweight locks are read
 * with no partition held, and the cycle found is verified again with every
 * partition held, its heavyweight edges read once more meanwhile (the lock
 * manager's partitions and ProcArrayLock, inside pg_blocking_pids(), come
 * after ours).  The lock is taken with no partition held, never the
 * reverse.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type_d.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/array.h"
#include "utils/backend_status.h"
#include "utils/fmgrprotos.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "engine/engine_internal.h"

#define SYNC_DEADLOCK_TRANCHE	"syncwf deadlock"

static LWLock *deadlock_lock = NULL;

/* 'waiter' waits for 'what'; 'blocker' holds it or is queued ahead. */
typedef struct DlEdge
{
	int32		waiter;
	int32		blocker;
	bool		heavyweight;	/* from pg_blocking_pids() */
	char	   *what;
} DlEdge;

/* A node of the search: a backend, and where its edges are. */
typedef struct DlNode
{
	int32		pid;			/* hash key */
	int			first;			/* its edges: edges[first .. first+n-1] */
	int			n;
} DlNode;

typedef struct DlGraph
{
	DlEdge	   *edges;
	int			nedges;
	int			nsync;			/* edges[0 .. nsync-1] are syncwf's, by
								 * waiter */
	int			maxedges;
	HTAB	   *nodes;
	HTAB	   *groups;			/* DlGroup by group number, or NULL */
} DlGraph;

/* The backends holding slots under one parent row (limit_groups.c). */
typedef struct DlGroup
{
	int32		groupno;		/* hash key */
	int			n;
	int			max;
	int32	   *pids;
} DlGroup;

/* A cycle through the caller, in order, from the caller round to it. */
struct SyncDeadlock
{
	char	   *detail;			/* for the client */
	char	   *detail_log;		/* ... and with each query, for the log */
};

void
sync_deadlock_shmem_request(void)
{
	RequestNamedLWLockTranche(SYNC_DEADLOCK_TRANCHE, 1);
}

/* shmem_startup_hook, under AddinShmemInitLock. */
void
sync_deadlock_shmem_init(void)
{
	deadlock_lock = &GetNamedLWLockTranche(SYNC_DEADLOCK_TRANCHE)->lock;
}

/*
 * Does the request of entry 'w' conflict with holder 'h' of the same lock?
 * Every holder of a semaphore counts; of a mutex, shared requests conflict
 * only with exclusive holds.
 */
static bool
dl_conflicts(const SyncLock *lock, const SyncEntry *w, const SyncEntry *h)
{
	if (lock->kind == SYNC_KIND_SEMAPHORE)
		return true;
	return !(w->shared && h->shared);
}

/*
 * Would entry 'w' fit beside the lock's holders?  A semaphore paused at
 * limit 0 waits for its limit, not for its holders.
 */
static bool
dl_fits(const SyncLock *lock, const SyncEntry *w)
{
	if (lock->kind == SYNC_KIND_SEMAPHORE)
		return lock->limit <= 0 || lock->slots_held + w->slots <= lock->limit;
	if (w->shared)
		return lock->slots_held == 0;
	return lock->nheld == 0;
}

/* Is a queued entry passed over by the grant pass, blocking nobody? */
static bool
dl_passed_over(const SyncEntry *e)
{
	return TransactionIdIsValid(e->reserved_xid) || sync_entry_unfit(e);
}

/* What entry 'e' waits for, as the report says it. */
static char *
dl_describe(const SyncLock *lock, const SyncEntry *e)
{
	if (lock->kind == SYNC_KIND_SEMAPHORE)
		return psprintf(e->slots == 1 ? "%d slot of syncwf semaphore \"%s\""
						: "%d slots of syncwf semaphore \"%s\"",
						e->slots, lock->tag.name);
	return psprintf("syncwf mutex \"%s\" (%s)", lock->tag.name,
					e->shared ? "shared" : "exclusive");
}

static void
dl_add_edge(DlGraph *g, int32 waiter, int32 blocker, bool heavyweight,
			char *what)
{
	if (g->nedges == g->maxedges)
	{
		g->maxedges *= 2;
		g->edges = repalloc(g->edges, sizeof(DlEdge) * g->maxedges);
	}
	g->edges[g->nedges].waiter = waiter;
	g->edges[g->nedges].blocker = blocker;
	g->edges[g->nedges].heavyweight = heavyweight;
	g->edges[g->nedges].what = what;
	g->nedges++;
}

/*
 * The edges of 'w' to the holders of 'lock' that 'judged' (w itself, or a
 * keyed entry queued ahead of it) conflicts with, when 'judged' does not
 * fit beside them; or, when 'g' is NULL, whether one of those holders'
 * backends waits itself.  *all is set once every holder was taken.
 */
static bool
dl_holder_edges(DlGraph *g, SyncLock *lock, SyncEntry *w, SyncEntry *judged,
				char **what, bool *all)
{
	if (*all || dl_fits(lock, judged))
		return false;
	*all = (lock->kind == SYNC_KIND_SEMAPHORE || !judged->shared);
	sync_elist_foreach(h, &lock->holders, lock_link)
	{
		if (h->pid == 0 || h->pid == w->pid || !dl_conflicts(lock, judged, h))
			continue;
		if (g == NULL)
		{
			volatile PGPROC *proc = GetPGProcByNumber(h->procno);

			/* unlocked reads: a wait that just began is seen next time */
			if (proc->waitLock != NULL ||
				proc->wait_event_info == sync_wait_event(SYNC_WAIT_ACQUIRE))
				return true;
			continue;
		}
		if (*what == NULL)
			*what = dl_describe(lock, w);
		dl_add_edge(g, w->pid, h->pid, false, *what);
	}
	return false;
}

/*
 * Nested limits: when the parent of 'lock' has no room for w, w waits for
 * the backends holding slots of any of its children too.  Adds those
 * edges to 'g'; or, when 'g' is NULL (the cheap look, which sees one
 * partition only), says yes: the full check will see.  Caller holds the
 * lock's partition (every partition, with 'g').
 */
static bool
dl_parent_edges(DlGraph *g, SyncLock *lock, SyncEntry *w, char **what)
{
	DlGroup    *grp;

	if (lock->groupno == SYNC_ENTRY_NONE || !sync_group_full_for(w))
		return false;
	if (g == NULL)
		return true;
	grp = g->groups ? hash_search(g->groups, &lock->groupno, HASH_FIND, NULL) : NULL;
	for (int i = 0; grp != NULL && i < grp->n; i++)
	{
		if (grp->pids[i] == w->pid)
			continue;
		if (*what == NULL)
			*what = dl_describe(lock, w);
		dl_add_edge(g, w->pid, grp->pids[i], false, *what);
	}
	return false;
}

/*
 * The backends holding each group's slots, for dl_parent_edges().
 * Caller holds every partition.
 */
static void
dl_group_holders(DlGraph *g)
{
	SyncLiveIter it;

	sync_foreach_live_lock(it)
	{
		SyncLock   *lock = sync_live_lock(it);
		DlGroup    *grp;
		bool		found;

		if (lock->groupno == SYNC_ENTRY_NONE || lock->nheld == 0)
			continue;
		if (g->groups == NULL)
		{
			HASHCTL		ctl;

			memset(&ctl, 0, sizeof(ctl));
			ctl.keysize = sizeof(int32);
			ctl.entrysize = sizeof(DlGroup);
			ctl.hcxt = CurrentMemoryContext;
			g->groups = hash_create("syncwf deadlock groups", 16, &ctl,
									HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		}
		grp = hash_search(g->groups, &lock->groupno, HASH_ENTER, &found);
		if (!found)
		{
			grp->n = 0;
			grp->max = 8;
			grp->pids = palloc(sizeof(int32) * grp->max);
		}
		sync_elist_foreach(h, &lock->holders, lock_link)
		{
			if (h->pid == 0)
				continue;		/* a keyed hold: no backend */
			if (grp->n >= grp->max)
			{
				grp->max *= 2;
				grp->pids = repalloc(grp->pids, sizeof(int32) * grp->max);
			}
			grp->pids[grp->n++] = h->pid;
		}
	}
}

/*
 * The edges of queue entry 'w' of 'lock' (see the opening comment), added
 * to 'g'; or, when 'g' is NULL, whether one of them goes to a holder whose
 * backend waits itself (the cheap look of sync_deadlock_suspect(), which
 * does not follow the edge to the backend queued ahead).  Caller holds the
 * lock's partition.
 */
static bool
dl_entry_edges(DlGraph *g, SyncLock *lock, SyncEntry *w)
{
	char	   *what = NULL;
	bool		all = false;

	if (dl_holder_edges(g, lock, w, w, &what, &all))
		return true;
	if (dl_parent_edges(g, lock, w, &what))
		return true;
	if (lock->best_effort)
		return false;
	for (SyncEntry *ahead = sync_elist_prev(w, SYNC_LOCK_LINK); ahead != NULL;
		 ahead = sync_elist_prev(ahead, SYNC_LOCK_LINK))
	{
		if (dl_passed_over(ahead) || ahead->pid == w->pid)
			continue;
		if (ahead->pid == 0)
		{
			/* a keyed entry ahead: what it waits for, w waits for too */
			if (dl_holder_edges(g, lock, w, ahead, &what, &all))
				return true;
			continue;
		}
		/* the nearest backend ahead: it has the edges of those before it */
		if (g != NULL)
		{
			if (what == NULL)
				what = dl_describe(lock, w);
			dl_add_edge(g, w->pid, ahead->pid, false, what);
		}
		break;
	}
	return false;
}

/*
 * The cheap look before a check: is a backend holding a lock the request
 * 'first' waits for waiting itself, for a syncwf lock or a heavyweight
 * lock?  If none is, no cycle passes through this request's holders.
 * Takes each entry's partition in turn, shared.
 */
static bool
sync_deadlock_suspect(SyncEntry *first)
{
	SyncEntry  *e = first;

	do
	{
		SyncLock   *lock = sync_entry_lock(e);
		LWLock	   *partition = sync_partition_lock(lock->hashcode);
		bool		found = false;

		LWLockAcquire(partition, LW_SHARED);
		if (e->state == SYNC_ENTRY_PENDING && !dl_passed_over(e))
			found = dl_entry_edges(NULL, lock, e);
		LWLockRelease(partition);
		if (found)
			return true;
		e = sync_next_in_request(e);
	} while (e != first);
	return false;
}

static int
dl_edge_cmp(const void *a, const void *b)
{
	const DlEdge *ea = a;
	const DlEdge *eb = b;

	if (ea->waiter != eb->waiter)
		return ea->waiter < eb->waiter ? -1 : 1;
	if (ea->blocker != eb->blocker)
		return ea->blocker < eb->blocker ? -1 : 1;
	return strcmp(ea->what, eb->what);
}

/*
 * A new graph holding the edges of every backend's queue entries, sorted
 * by waiter.  Caller holds every partition.
 */
static DlGraph *
dl_snapshot(void)
{
	DlGraph    *g = palloc0(sizeof(DlGraph));
	SyncLiveIter it;
	HASHCTL		ctl;

	g->maxedges = 64;
	g->edges = palloc(sizeof(DlEdge) * g->maxedges);
	dl_group_holders(g);
	sync_foreach_live_lock(it)
	{
		SyncLock   *lock = sync_live_lock(it);

		if (lock->nwaiting == 0)
			continue;
		sync_elist_foreach(w, &lock->waiters, lock_link)
		{
			if (w->pid != 0 && !dl_passed_over(w))
				(void) dl_entry_edges(g, lock, w);
		}
	}
	if (g->nedges > 1)
		qsort(g->edges, g->nedges, sizeof(DlEdge), dl_edge_cmp);
	g->nsync = g->nedges;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(int32);
	ctl.entrysize = sizeof(DlNode);
	ctl.hcxt = CurrentMemoryContext;
	g->nodes = hash_create("syncwf deadlock nodes", 64, &ctl,
						   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	return g;
}

/* The first of the syncwf edges of 'pid' in g, or g->nsync if none. */
static int
dl_sync_edges_of(DlGraph *g, int32 pid)
{
	int			lo = 0;
	int			hi = g->nsync;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (g->edges[mid].waiter < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Does g hold the syncwf edge 'e'? */
static bool
dl_has_sync_edge(DlGraph *g, const DlEdge *e)
{
	for (int i = dl_sync_edges_of(g, e->waiter);
		 i < g->nsync && g->edges[i].waiter == e->waiter; i++)
		if (dl_edge_cmp(&g->edges[i], e) == 0)
			return true;
	return false;
}

/*
 * The backends blocking 'pid' in a heavyweight lock wait, by
 * pg_blocking_pids(), into blockers[] (palloc'd); 0 if it waits for none.
 * *what says what it waits for.
 */
static int
dl_heavyweight_blockers(int32 pid, int32 **blockers, char **what)
{
	PGPROC	   *proc = BackendPidGetProc(pid);
	volatile PGPROC *vproc = proc;
	LOCK	   *waitlock;
	LOCKTAG		tag;
	LOCKMODE	mode;
	ArrayType  *arr;
	StringInfoData buf;
	int			n;

	if (proc == NULL || (waitlock = vproc->waitLock) == NULL)
		return 0;
	/* a read without the lock manager's lock: at worst a stale description */
	tag = waitlock->tag;
	mode = vproc->waitLockMode;
	arr = DatumGetArrayTypeP(DirectFunctionCall1(pg_blocking_pids,
												 Int32GetDatum(pid)));
	Assert(ARR_ELEMTYPE(arr) == INT4OID && !ARR_HASNULL(arr));
	n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	if (n == 0)
		return 0;
	*blockers = palloc(sizeof(int32) * n);
	memcpy(*blockers, ARR_DATA_PTR(arr), sizeof(int32) * n);
	initStringInfo(&buf);
	appendStringInfo(&buf, "%s on ",
					 GetLockmodeName(tag.locktag_lockmethodid, mode));
	DescribeLockTag(&buf, &tag);
	*what = buf.data;
	return n;
}

/* The node of 'pid', with its edges found (a heavyweight wait's, read now). */
static DlNode *
dl_node(DlGraph *g, int32 pid, bool *found)
{
	DlNode	   *node = hash_search(g->nodes, &pid, HASH_ENTER, found);
	int32	   *blockers;
	char	   *what;
	int			n;

	if (*found)
		return node;
	node->first = dl_sync_edges_of(g, pid);
	node->n = 0;
	while (node->first + node->n < g->nsync &&
		   g->edges[node->first + node->n].waiter == pid)
		node->n++;
	if (node->n > 0)
		return node;

	/* not waiting for syncwf: perhaps for a heavyweight lock */
	n = dl_heavyweight_blockers(pid, &blockers, &what);
	node->first = g->nedges;
	for (int i = 0; i < n; i++)
		if (blockers[i] != pid)
			dl_add_edge(g, pid, blockers[i], true, what);
	node->n = g->nedges - node->first;
	return node;
}

/*
 * Depth-first search for a path from 'me' back to 'me'.  Returns the
 * cycle's length and its edges' indexes in path[] (palloc'd), or 0.
 */
static int
dl_find_cycle(DlGraph *g, int32 me, int **path)
{
	typedef struct
	{
		int			next;		/* its next edge to follow */
		int			end;
	} DlFrame;
	DlFrame    *stack;
	int			depth = 0;
	int			maxdepth = 16;
	bool		found;
	DlNode	   *node;

	stack = palloc(sizeof(DlFrame) * maxdepth);
	node = dl_node(g, me, &found);
	stack[0].next = node->first;
	stack[0].end = node->first + node->n;
	depth = 1;
	while (depth > 0)
	{
		DlFrame    *top = &stack[depth - 1];
		int32		blocker;

		if (top->next == top->end)
		{
			depth--;
			continue;
		}
		blocker = g->edges[top->next++].blocker;
		if (blocker == me)
		{
			*path = palloc(sizeof(int) * depth);
			for (int i = 0; i < depth; i++)
				(*path)[i] = stack[i].next - 1;
			return depth;
		}
		node = dl_node(g, blocker, &found);
		if (found)
			continue;			/* visited: no path back from it */
		if (depth == maxdepth)
		{
			maxdepth *= 2;
			stack = repalloc(stack, sizeof(DlFrame) * maxdepth);
		}
		stack[depth].next = node->first;
		stack[depth].end = node->first + node->n;
		depth++;
	}
	return 0;
}

/*
 * Is the cycle still there?  The snapshot and the heavyweight edges were
 * read at different times: read every edge again, the syncwf ones from a
 * new snapshot, the heavyweight ones while that snapshot holds.
 */
static bool
dl_verify(DlGraph *g, const int *path, int len)
{
	DlGraph    *now;
	bool		ok = true;

	sync_lock_partitions(SYNC_ALL_PARTITIONS, LW_SHARED);
	now = dl_snapshot();
	for (int i = 0; i < len && ok; i++)
	{
		const DlEdge *e = &g->edges[path[i]];

		if (!e->heavyweight)
			ok = dl_has_sync_edge(now, e);
		else
		{
			int32	   *blockers;
			char	   *what;
			int			n = dl_heavyweight_blockers(e->waiter, &blockers, &what);

			ok = false;
			for (int j = 0; j < n && !ok; j++)
				ok = (blockers[j] == e->blocker);
		}
	}
	sync_unlock_partitions(SYNC_ALL_PARTITIONS);
	return ok;
}

/* The report of the cycle path[] of g, in the caller's memory context. */
static SyncDeadlock *
dl_describe_cycle(DlGraph *g, const int *path, int len, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	SyncDeadlock *d = palloc(sizeof(SyncDeadlock));
	StringInfoData client;
	StringInfoData log;

	initStringInfo(&client);
	for (int i = 0; i < len; i++)
	{
		const DlEdge *e = &g->edges[path[i]];

		if (i > 0)
			appendStringInfoChar(&client, '\n');
		appendStringInfo(&client, "Process %d waits for %s; blocked by process %d.",
						 e->waiter, e->what, e->blocker);
	}
	initStringInfo(&log);
	appendStringInfoString(&log, client.data);
	appendStringInfoChar(&log, '\n');
	for (int i = 0; i < len; i++)
	{
		int32		pid = g->edges[path[i]].waiter;

		appendStringInfo(&log, "\nProcess %d: %s", pid,
						 pgstat_get_backend_current_activity(pid, false));
	}
	d->detail = client.data;
	d->detail_log = log.data;
	MemoryContextSwitchTo(old);
	return d;
}

/*
 * Is this backend, waiting for the request 'first', in a waits-for cycle?
 * If so, returns the cycle with the check's LWLock still held: the caller
 * withdraws its request and then calls sync_deadlock_report().  NULL if
 * not (nothing held then).  Called with no LWLock held.
 */
SyncDeadlock *
sync_deadlock_check(SyncEntry *first)
{
	MemoryContext cxt;
	MemoryContext old;
	SyncDeadlock *volatile d = NULL;
	DlGraph    *g;
	int		   *path;
	int			len;

	Assert(!sync_any_partition_held());
	if (!sync_deadlock_suspect(first))
		return NULL;

	cxt = AllocSetContextCreate(CurrentMemoryContext, "syncwf deadlock check",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		LWLockAcquire(deadlock_lock, LW_EXCLUSIVE);
		sync_lock_partitions(SYNC_ALL_PARTITIONS, LW_SHARED);
		g = dl_snapshot();
		sync_unlock_partitions(SYNC_ALL_PARTITIONS);

		len = dl_find_cycle(g, MyProcPid, &path);
		if (len > 0 && dl_verify(g, path, len))
			d = dl_describe_cycle(g, path, len, old);
	}
	PG_CATCH();
	{
		/*
		 * Out of memory, say.  We were called with no LWLock held, so those
		 * held now are ours; the caller's withdrawal needs the partitions.
		 */
		LWLockReleaseAll();
		MemoryContextSwitchTo(old);
		PG_RE_THROW();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	if (d == NULL)
		LWLockRelease(deadlock_lock);
	return d;
}

/*
 * Raise 40P01 for the cycle 'deadlock', once the caller has withdrawn its
 * request; lets the next check go on first.
 */
void
sync_deadlock_report(SyncDeadlock *deadlock)
{
	LWLockRelease(deadlock_lock);
	ereport(ERROR,
			(errcode(ERRCODE_T_R_DEADLOCK_DETECTED),
			 errmsg("deadlock detected"),
			 errdetail_internal("%s", deadlock->detail),
			 errdetail_log("%s", deadlock->detail_log),
			 errhint("The syncwf request was withdrawn to break the cycle: retry the transaction, or take locks in the same order in every session. See server log for query details.")));
}
