/*-------------------------------------------------------------------------
 *
 * launch_direct.c
 *		The hot path of sync_execution: reading an execution's row and
 *		moving it to a phase -- what every sync_execution_update does, and
 *		the promotion of a pending execution to QUEUED when its slot is
 *		granted, which a releasing transaction does for the execution its
 *		slot goes to (keyed_ops.c's hand-off).
 *
 * These go through the table access method and the primary key directly
 * rather than through SPI, whose executor start-up, constraint and trigger
 * set-up cost more than the change itself (as for sync_state's hot path,
 * state_direct.c).  They do what an UPDATE ... WHERE phase = ... does: a
 * transaction changing the row is waited for; under READ COMMITTED the
 * version it committed is looked at again (under REPEATABLE READ or
 * SERIALIZABLE that is a serialization failure); the heap and index
 * changes are WAL-logged as usual; the timestamps are clock_timestamp().
 * A row is read and then updated, without a row lock in between: the
 * update fails if the row changed meanwhile, and the caller decides again
 * on what it reads then (saving the LOCK record a SELECT ... FOR UPDATE
 * would write).  No trigger fires: the one on
 * sync_execution is for changes syncwf did not make.  No constraint is
 * checked: the values are syncwf's (a phase of its list).  The rarer
 * statements are in launch_rows.c.
 *
 * Backend-local state only; nothing is kept between calls.
 *
 * Layer 7: calls layer 0 only (tables.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "executor/tuptable.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "launch_direct.h"
#include "tables.h"

/* The columns of sync_execution that syncwf reads or writes here. */
typedef enum ExecColumn
{
	EC_ID,
	EC_PROJECT,
	EC_DOMAIN,
	EC_NAME,
	EC_VERSION,
	EC_PHASE,
	EC_REASON,
	EC_QUEUED_AT,
	EC_STARTED_AT,
	EC_FINISHED_AT,
	EC_OWNER,
	EXEC_NCOLS
} ExecColumn;

static const char *const exec_columns[EXEC_NCOLS] = {
	"execution_id", "project", "domain", "name", "version", "phase", "reason",
	"queued_at", "started_at", "finished_at", "owner"
};

/* sync_execution open for one call, and the row it locked. */
typedef struct ExecTable
{
	Relation	rel;
	Relation	pkey;
	AttrNumber	att[EXEC_NCOLS];
	Snapshot	snapshot;		/* the last exec_find's, registered */
	TupleTableSlot *slot;		/* the row exec_find found */
} ExecTable;

static void
exec_open(ExecTable *t)
{
	TupleDesc	desc;
	Oid			pkey;

	t->rel = table_open(sync_launch_table_relid("sync_execution"), RowExclusiveLock);
	desc = RelationGetDescr(t->rel);
	for (int c = 0; c < EXEC_NCOLS; c++)
	{
		t->att[c] = InvalidAttrNumber;
		for (int i = 0; i < desc->natts; i++)
		{
			Form_pg_attribute a = TupleDescAttr(desc, i);

			if (!a->attisdropped && strcmp(NameStr(a->attname), exec_columns[c]) == 0)
			{
				t->att[c] = a->attnum;
				break;
			}
		}
		if (t->att[c] == InvalidAttrNumber)
			elog(ERROR, "column \"%s\" of sync_execution is missing", exec_columns[c]);
	}
	pkey = sync_primary_key_index(t->rel);
	if (!OidIsValid(pkey))
		elog(ERROR, "sync_execution has no primary key");
	t->pkey = index_open(pkey, RowExclusiveLock);
	if (IndexRelationGetNumberOfKeyAttributes(t->pkey) != 1 ||
		t->pkey->rd_index->indkey.values[0] != t->att[EC_ID])
		elog(ERROR, "the primary key of sync_execution is not (execution_id)");
	t->snapshot = InvalidSnapshot;
	t->slot = table_slot_create(t->rel, NULL);
}

static void
exec_close(ExecTable *t)
{
	if (t->snapshot != InvalidSnapshot)
		UnregisterSnapshot(t->snapshot);
	ExecDropSingleTupleTableSlot(t->slot);
	index_close(t->pkey, NoLock);
	table_close(t->rel, NoLock);
}

static char *
exec_text(ExecTable *t, ExecColumn c)
{
	bool		isnull;
	Datum		d = slot_getattr(t->slot, t->att[c], &isnull);

	return isnull ? NULL : TextDatumGetCString(d);
}

/*
 * Find the version of execution 'id' this transaction sees now (a new
 * snapshot under READ COMMITTED, as a new statement takes); false if there
 * is none.  The row is in t->slot.
 */
static bool
exec_find(ExecTable *t, const char *id)
{
	ScanKeyData key;
	IndexScanDesc scan;
	bool		found;

	/* see what this transaction's earlier statements wrote */
	CommandCounterIncrement();
	if (t->snapshot != InvalidSnapshot)
		UnregisterSnapshot(t->snapshot);
	t->snapshot = RegisterSnapshot(GetTransactionSnapshot());
	ScanKeyEntryInitialize(&key, 0, 1, BTEqualStrategyNumber, InvalidOid,
						   t->pkey->rd_indcollation[0], F_TEXTEQ,
						   CStringGetTextDatum(id));
	scan = sync_index_beginscan(t->rel, t->pkey, t->snapshot, 1, 0);
	index_rescan(scan, &key, 1, NULL, 0);
	found = index_getnext_slot(scan, ForwardScanDirection, t->slot);
	index_endscan(scan);
	return found;
}

static void
exec_row(ExecTable *t, SyncExecutionRow *row)
{
	bool		isnull;
	Datum		owner;

	row->project = exec_text(t, EC_PROJECT);
	row->domain = exec_text(t, EC_DOMAIN);
	row->name = exec_text(t, EC_NAME);
	row->version = exec_text(t, EC_VERSION);
	row->phase = exec_text(t, EC_PHASE);
	owner = slot_getattr(t->slot, t->att[EC_OWNER], &isnull);
	row->owner = isnull ? InvalidOid : DatumGetObjectId(owner);
}

/*
 * Write a new version, in 'phase', of the row exec_find found:
 * set_reason replaces its reason with 'reason' (NULL clears it); QUEUED
 * sets queued_at, the first RUNNING started_at, a terminal phase
 * finished_at.  TM_Updated or TM_Deleted (READ COMMITTED only): a
 * transaction we waited for changed the row first, and nothing is written.
 */
static TM_Result
exec_write_phase(ExecTable *t, const char *phase, bool terminal,
				 bool set_reason, const char *reason)
{
	int			natts = RelationGetDescr(t->rel)->natts;
	TupleTableSlot *slot = table_slot_create(t->rel, NULL);
	TimestampTz now = GetCurrentTimestamp();
	TM_FailureData tmfd;
	TM_Result	result;
	bool		update_indexes;
	bool		only_summarizing;
	Datum	   *values;
	bool	   *isnull;

	slot_getallattrs(t->slot);
	ExecClearTuple(slot);
	values = slot->tts_values;
	isnull = slot->tts_isnull;
	memcpy(values, t->slot->tts_values, natts * sizeof(Datum));
	memcpy(isnull, t->slot->tts_isnull, natts * sizeof(bool));
#define SET_COLUMN(c, d, null) \
	(values[t->att[c] - 1] = (d), isnull[t->att[c] - 1] = (null))
	SET_COLUMN(EC_PHASE, CStringGetTextDatum(phase), false);
	if (set_reason)
		SET_COLUMN(EC_REASON, reason ? CStringGetTextDatum(reason) : (Datum) 0,
				   reason == NULL);
	if (strcmp(phase, "QUEUED") == 0)
		SET_COLUMN(EC_QUEUED_AT, TimestampTzGetDatum(now), false);
	if (strcmp(phase, "RUNNING") == 0 && isnull[t->att[EC_STARTED_AT] - 1])
		SET_COLUMN(EC_STARTED_AT, TimestampTzGetDatum(now), false);
	if (terminal)
		SET_COLUMN(EC_FINISHED_AT, TimestampTzGetDatum(now), false);
#undef SET_COLUMN
	ExecStoreVirtualTuple(slot);

	/* waits for a transaction that is changing the row or has it locked */
	result = sync_tuple_update(t->rel, &t->slot->tts_tid, slot,
							   GetCurrentCommandId(true), t->snapshot, true,
							   &tmfd, &update_indexes, &only_summarizing);
	if (result == TM_Ok)
	{
		if (update_indexes)
			sync_index_tuples(t->rel, slot, only_summarizing);
		/* later statements of this transaction see it */
		CommandCounterIncrement();
	}
	ExecDropSingleTupleTableSlot(slot);
	switch (result)
	{
		case TM_Ok:
			break;
		case TM_Updated:
		case TM_Deleted:
			/* committed meanwhile by a transaction we waited for */
			if (IsolationUsesXactSnapshot())
				ereport(ERROR,
						(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
						 result == TM_Updated ?
						 errmsg("could not serialize access due to concurrent update") :
						 errmsg("could not serialize access due to concurrent delete")));
			break;
		default:
			elog(ERROR, "unexpected table_tuple_update status for an execution: %u", result);
	}
	return result;
}

/*
 * Execution 'id' as this transaction sees it now (no lock): false if there
 * is none.
 */
bool
sync_execution_read(const char *id, SyncExecutionRow *row)
{
	ExecTable	t;
	bool		found;

	exec_open(&t);
	found = exec_find(&t, id);
	if (found)
		exec_row(&t, row);
	exec_close(&t);
	return found;
}

/*
 * Move execution 'id' to 'phase' if its latest version is in phase 'from'
 * (NULL: any), as an UPDATE ... WHERE phase = 'from' does under READ
 * COMMITTED: a transaction changing the row is waited for, and the version
 * it committed looked at again.  terminal: 'phase' is a final one, which
 * sets the finish time.  set_reason: replace its reason with 'reason' (NULL
 * clears it); otherwise keep the reason it has.  Returns whether it moved;
 * *row (if not NULL) is the row it found, which moved or not.
 */
bool
sync_execution_move(const char *id, const char *from, const char *phase,
					bool terminal, bool set_reason, const char *reason,
					SyncExecutionRow *row)
{
	ExecTable	t;
	SyncExecutionRow found;
	bool		moved = false;

	exec_open(&t);
	while (exec_find(&t, id))
	{
		exec_row(&t, &found);
		if (row)
			*row = found;
		if (from != NULL && strcmp(found.phase, from) != 0)
			break;
		if (exec_write_phase(&t, phase, terminal, set_reason, reason) == TM_Ok)
		{
			moved = true;
			break;
		}
		/* READ COMMITTED: changed or deleted meanwhile; look again */
	}
	exec_close(&t);
	return moved;
}
