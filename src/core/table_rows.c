/*-------------------------------------------------------------------------
 *
 * table_rows.c
 *		Writing rows of syncwf's tables through the table access method
 *		(the hot paths of sync_state and the launch-plan tables): a slot for
 *		a table, inserting and updating a row version with its index
 *		entries, the error a changed row means under REPEATABLE READ, and
 *		the interval datum of a lease.
 *
 * No state.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/executor.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "core/core.h"

/*
 * The index entries of a row version just written to 'rel' through the
 * table access method: in every index, or only in the summarizing ones
 * (see sync_tuple_update()).  Partial indexes get the row if it matches
 * their predicate, unique ones check it.
 */
static void
sync_index_tuples(Relation rel, TupleTableSlot *slot, bool only_summarizing)
{
	EState	   *estate = CreateExecutorState();
	ResultRelInfo *rri = makeNode(ResultRelInfo);
	List	   *recheck;

	InitResultRelInfo(rri, rel, 1, NULL, 0);
	ExecOpenIndices(rri, false);
	recheck = sync_insert_index_tuples(rri, slot, estate, only_summarizing);
	Assert(recheck == NIL);		/* no deferrable constraint */
	(void) recheck;
	ExecCloseIndices(rri);
	FreeExecutorState(estate);
}

/*
 * Rows of syncwf's tables written through the table access method (the hot
 * paths, state_heap.c and launch_heap.c): a virtual slot for a new row
 * of 'rel', with every column of 'old' (a row found by a scan), or every
 * column NULL if 'old' is NULL.  The caller sets its columns, stores it
 * (ExecStoreVirtualTuple), writes it, and drops it.
 */
TupleTableSlot *
sync_row_slot(Relation rel, TupleTableSlot *old)
{
	int			natts = RelationGetDescr(rel)->natts;
	TupleTableSlot *slot = table_slot_create(rel, NULL);

	ExecClearTuple(slot);
	if (old != NULL)
	{
		slot_getallattrs(old);
		memcpy(slot->tts_values, old->tts_values, natts * sizeof(Datum));
		memcpy(slot->tts_isnull, old->tts_isnull, natts * sizeof(bool));
	}
	else
	{
		for (int i = 0; i < natts; i++)
		{
			slot->tts_values[i] = (Datum) 0;
			slot->tts_isnull[i] = true;
		}
	}
	return slot;
}

/* Insert the row in 'slot' (stored) into 'rel', with its index entries. */
void
sync_row_insert(Relation rel, TupleTableSlot *slot)
{
	table_tuple_insert(rel, slot, GetCurrentCommandId(true), 0, NULL);
	sync_index_tuples(rel, slot, false);
}

/*
 * Write the row in 'slot' (stored) as the new version of the row 'old'
 * found, with its index entries if that worked; 'wait' as for
 * sync_tuple_update().
 */
TM_Result
sync_row_update(Relation rel, TupleTableSlot *old, TupleTableSlot *slot,
				Snapshot snapshot, bool wait)
{
	TM_FailureData tmfd;
	TM_Result	result;
	bool		update_indexes;
	bool		only_summarizing;

	result = sync_tuple_update(rel, &old->tts_tid, slot, GetCurrentCommandId(true),
							   snapshot, wait, &tmfd, &update_indexes,
							   &only_summarizing);
	if (result == TM_Ok && update_indexes)
		sync_index_tuples(rel, slot, only_summarizing);
	return result;
}

/*
 * A row this transaction found changed (TM_Updated) or deleted (TM_Deleted)
 * by a transaction that committed meanwhile: under REPEATABLE READ or
 * SERIALIZABLE that is a serialization failure, as for an UPDATE or DELETE.
 * (Under READ COMMITTED the caller looks at the row's latest version.)
 */
void
sync_check_serializable(TM_Result result)
{
	if ((result == TM_Updated || result == TM_Deleted) && IsolationUsesXactSnapshot())
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 result == TM_Updated ?
				 errmsg("could not serialize access due to concurrent update") :
				 errmsg("could not serialize access due to concurrent delete")));
}

/* A length in microseconds as an interval datum (the lease column). */
Datum
sync_interval_datum(int64 us)
{
	Interval   *iv = palloc0(sizeof(Interval));

	iv->time = us;
	return IntervalPGetDatum(iv);
}
