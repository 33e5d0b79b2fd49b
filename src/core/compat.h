/*-------------------------------------------------------------------------
 *
 * compat.h
 *		Every difference between the PostgreSQL majors syncwf supports
 *		(15, 16, 17, 18), in one place.
 *
 * The engine calls the names below and never tests PG_VERSION_NUM itself.
 * Each guard is keyed on the release that made the change, so a major this
 * project cannot test here (16) takes the branch its headers need:
 *
 *		16  ExecInsertIndexTuples() gained "onlySummarizing";
 *		    lib/ilist.h gained dlist_node_init(), dlist_delete_thoroughly()
 *		    and dlist_node_is_detached()
 *		17  PGPROC.pgprocno gave way to MyProcNumber / GetNumberFromPGProc();
 *		    CreateWaitEventSet() takes a resource owner, not a memory context;
 *		    extensions can name their wait events (WaitEventExtensionNew);
 *		    LockHeldByMe() gained "orstronger"
 *		18  RelationGetPrimaryKeyIndex() gained "deferrable_ok";
 *		    index_beginscan() gained an instrumentation argument;
 *		    extensions can keep cumulative statistics of their own
 *		    (pgstat_register_kind)
 *
 * Owns no state but the per-process cache of the wait event ids (one copy
 * per translation unit that asks; WaitEventExtensionNew() returns the same
 * id for the same name in every process, so the copies agree).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNCWF_COMPAT_H
#define SYNCWF_COMPAT_H

#include "postgres.h"

#include "access/genam.h"
#include "access/tableam.h"
#include "executor/executor.h"
#include "lib/ilist.h"
#include "storage/latch.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/wait_event.h"

#if PG_VERSION_NUM < 150000
#error "syncwf needs PostgreSQL 15 or later"
#endif

/*
 * 18 and later: the per-lock statistics are saved across a clean restart as
 * custom cumulative statistics (stats_persist.c); before, they only live in
 * shared memory.
 */
#if PG_VERSION_NUM >= 180000
#define SYNC_HAVE_CUSTOM_STATS 1
#endif

/* The PGPROC number of this backend (an index into ProcGlobal->allProcs). */
static inline int
sync_my_procno(void)
{
#if PG_VERSION_NUM >= 170000
	return MyProcNumber;
#else
	return MyProc->pgprocno;
#endif
}

/*
 * Does this backend hold the heavyweight lock 'tag' in exactly 'mode'?  For
 * assertions.
 */
static inline bool
sync_lock_held_by_me(const LOCKTAG *tag, LOCKMODE mode)
{
#if PG_VERSION_NUM >= 170000
	return LockHeldByMe(tag, mode, false);
#else
	return LockHeldByMe(tag, mode);
#endif
}

/*
 * A dlist node that is in no list, as 16's lib/ilist.h defines it: both
 * links NULL.  dlist_delete_thoroughly() leaves a node so, which lets
 * dlist_node_is_detached() tell whether it is in a list.
 */
#if PG_VERSION_NUM < 160000
static inline void
dlist_node_init(dlist_node *node)
{
	node->next = node->prev = NULL;
}

static inline void
dlist_delete_thoroughly(dlist_node *node)
{
	node->prev->next = node->next;
	node->next->prev = node->prev;
	node->next = NULL;
	node->prev = NULL;
}

static inline bool
dlist_node_is_detached(const dlist_node *node)
{
	Assert((node->next == NULL && node->prev == NULL) ||
		   (node->next != NULL && node->prev != NULL));

	return node->next == NULL;
}
#endif

/* The primary key index of rel; a deferrable one does not count. */
static inline Oid
sync_primary_key_index(Relation rel)
{
#if PG_VERSION_NUM >= 180000
	return RelationGetPrimaryKeyIndex(rel, false);
#else
	return RelationGetPrimaryKeyIndex(rel);
#endif
}

/*
 * Insert the index entries of a heap tuple just written: a new row, or the
 * new version of an updated one (only in summarizing indexes if
 * 'only_summarizing', 16 and later).  No speculative insertion.  Not
 * flagged as an update: that hint (for bottom-up index deletion) asks the
 * executor which columns the statement updated, from a range table that
 * only an executed statement has.  Returns the indexes that need a
 * deferred uniqueness recheck.
 */
static inline List *
sync_insert_index_tuples(ResultRelInfo *rri, TupleTableSlot *slot,
						 EState *estate, bool only_summarizing)
{
#if PG_VERSION_NUM >= 160000
	return ExecInsertIndexTuples(rri, slot, estate, false, false, NULL, NIL,
								 only_summarizing);
#else
	Assert(!only_summarizing);
	return ExecInsertIndexTuples(rri, slot, estate, false, false, NULL, NIL);
#endif
}

/*
 * The speculative insertion of INSERT ... ON CONFLICT DO NOTHING: is there
 * no committed row conflicting with 'slot' in the 'arbiters' (waiting for a
 * transaction inserting one)?  Then the index entries of the row inserted
 * speculatively, *conflict set if one of them met a conflict meanwhile.
 */
static inline bool
sync_check_index_constraints(ResultRelInfo *rri, TupleTableSlot *slot,
							 EState *estate, ItemPointer conflict, List *arbiters)
{
#if PG_VERSION_NUM >= 180000
	return ExecCheckIndexConstraints(rri, slot, estate, conflict, NULL, arbiters);
#else
	return ExecCheckIndexConstraints(rri, slot, estate, conflict, arbiters);
#endif
}

static inline List *
sync_insert_index_tuples_speculative(ResultRelInfo *rri, TupleTableSlot *slot,
									 EState *estate, bool *conflict,
									 List *arbiters)
{
#if PG_VERSION_NUM >= 160000
	return ExecInsertIndexTuples(rri, slot, estate, false, true, conflict,
								 arbiters, false);
#else
	return ExecInsertIndexTuples(rri, slot, estate, false, true, conflict,
								 arbiters);
#endif
}

/*
 * Update a row.  Without 'wait', a transaction that is changing it or has
 * it locked (this one too) is not waited for: TM_BeingModified then.
 * *update_indexes: the new version needs index entries (not a HOT update);
 * *only_summarizing: only in summarizing indexes (16 and later).
 */
static inline TM_Result
sync_tuple_update(Relation rel, ItemPointer otid, TupleTableSlot *slot,
				  CommandId cid, Snapshot snapshot, bool wait,
				  TM_FailureData *tmfd, bool *update_indexes,
				  bool *only_summarizing)
{
	LockTupleMode lockmode;
	TM_Result	result;
#if PG_VERSION_NUM >= 160000
	TU_UpdateIndexes which;

	result = table_tuple_update(rel, otid, slot, cid, snapshot, InvalidSnapshot,
								wait, tmfd, &lockmode, &which);
	*update_indexes = (which != TU_None);
	*only_summarizing = (which == TU_Summarizing);
#else
	result = table_tuple_update(rel, otid, slot, cid, snapshot, InvalidSnapshot,
								wait, tmfd, &lockmode, update_indexes);
	*only_summarizing = false;
#endif
	return result;
}

/* index_beginscan without instrumentation. */
static inline IndexScanDesc
sync_index_beginscan(Relation heap, Relation index, Snapshot snapshot,
					 int nkeys, int norderbys)
{
#if PG_VERSION_NUM >= 180000
	return index_beginscan(heap, index, snapshot, NULL, nkeys, norderbys);
#else
	return index_beginscan(heap, index, snapshot, nkeys, norderbys);
#endif
}

/*
 * Wait events.  On 17 and later each wait of syncwf has its own name in
 * pg_stat_activity.wait_event and pg_wait_events (type "Extension"); on 15
 * and 16 every one of them shows as the generic "Extension".
 */
typedef enum SyncWaitEvent
{
	SYNC_WAIT_ACQUIRE,			/* a blocking sync_acquire* waits for a grant */
	SYNC_WAIT_KEYED,			/* sync_wait waits for a keyed grant */
	SYNC_WAIT_WORKER_MAIN,		/* the background worker sleeps between rounds */
	SYNC_WAIT_RATE_WORKER,		/* the rate worker sleeps until tokens come */
	SYNC_WAIT_NUM_EVENTS
} SyncWaitEvent;

static inline uint32
sync_wait_event(SyncWaitEvent which)
{
#if PG_VERSION_NUM >= 170000
	static const char *const names[SYNC_WAIT_NUM_EVENTS] = {
		[SYNC_WAIT_ACQUIRE] = "SyncwfAcquire",
		[SYNC_WAIT_KEYED] = "SyncwfWait",
		[SYNC_WAIT_WORKER_MAIN] = "SyncwfWorkerMain",
		[SYNC_WAIT_RATE_WORKER] = "SyncwfRateWorker",
	};
	static uint32 ids[SYNC_WAIT_NUM_EVENTS];

	Assert(which >= 0 && which < SYNC_WAIT_NUM_EVENTS);
	if (ids[which] == 0)
		ids[which] = WaitEventExtensionNew(names[which]);
	return ids[which];
#else
	(void) which;
	return PG_WAIT_EXTENSION;
#endif
}

/*
 * A wait event set that lasts as long as the process (freed by no resource
 * owner, in no memory context that is reset).
 */
static inline WaitEventSet *
sync_create_session_wait_set(int nevents)
{
#if PG_VERSION_NUM >= 170000
	return CreateWaitEventSet(NULL, nevents);
#else
	return CreateWaitEventSet(TopMemoryContext, nevents);
#endif
}

/*
 * Whether synchronous standbys are named, as the checkpointer has told
 * WalSndCtl -- the test PostgreSQL's commits make before they wait for one.
 * Minor releases of 2025 replaced the bool sync_standbys_defined by the
 * flags sync_standbys_status (every major at once, so the guard is the
 * flag's own macro).  Call with WalSndCtl attached
 * (replication/walsender_private.h).
 */
#ifdef SYNC_STANDBY_DEFINED
#define sync_standbys_named() \
	((WalSndCtl->sync_standbys_status & SYNC_STANDBY_DEFINED) != 0)
#else
#define sync_standbys_named() (WalSndCtl->sync_standbys_defined)
#endif

#endif							/* SYNCWF_COMPAT_H */
