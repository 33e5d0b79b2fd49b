/*-------------------------------------------------------------------------
 *
 * state_heap.c
 *		The hot path of sync_state: the writes every keyed request, release
 *		and hand-off make -- a request's INSERT, a release's DELETE, and the
 *		grant a releasing transaction writes for the waiter its slot goes to
 *		-- and reading a row for the delete trigger.
 *
 * These go through the table access method and the primary key directly
 * rather than through SPI, whose executor start-up, shutdown and trigger
 * queue cost more than the change itself.  They do what the statements
 * would: the heap and index changes are WAL-logged as usual (standbys,
 * logical decoding and crash recovery see ordinary rows), the primary key
 * checks uniqueness, and a row updated by a concurrent transaction is
 * followed to its latest version as READ COMMITTED does (serialization
 * failure under REPEATABLE READ or SERIALIZABLE); the grant waits for no
 * row lock at all.  Triggers do not fire: syncwf's own writes need neither
 * the guard nor the delete trigger; the rows a delete removed go back to
 * the engine, which does what the delete trigger would (keyed_ops.c).
 * The rarer writes are SQL statements (state_spi.c).
 *
 * Backend-local state only: where the columns and the primary key of
 * sync_state are, kept until one of syncwf's tables is invalidated.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "executor/executor.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "keyed/keyed_internal.h"

/* The columns of sync_state that syncwf writes (names in state_columns[]). */
typedef enum StateColumn
{
	COL_NAME,
	COL_WORKFLOWKEY,
	COL_CONTROLLER,
	COL_HELD,
	COL_PRIORITY,
	COL_TIME,
	COL_TOKEN,
	COL_GRANTED_AT,
	COL_LEASE,
	COL_LEASE_EXPIRES,
	COL_OWNER,
	COL_REQUEST_ID,
	COL_SEQ,
	COL_ADMIT_LIMIT,
	COL_CLAIM,					/* from version 1.2 on */
	COL_SLOTS,					/* from version 1.5 on */
	COL_MODE,					/* from version 1.5 on */
	COL_FAIR_KEY,				/* from version 1.6 on */
	COL_PREEMPTIBLE,			/* from version 1.8 on */
	COL_PREEMPT_DEADLINE,		/* from version 1.8 on */
	SYNC_STATE_NCOLS
} StateColumn;

/*
 * Where those columns are in the current sync_state, and its primary key;
 * current while the table and the count of invalidations are the same.
 */
static Oid	layout_relid = InvalidOid;
static uint64 layout_invalidations = 0;
static AttrNumber state_attnums[SYNC_STATE_NCOLS];
static Oid	state_pkey = InvalidOid;
/* The names of the columns syncwf writes, by StateColumn. */
static const char *const state_columns[SYNC_STATE_NCOLS] = {
	"name", "workflowkey", "controller", "held", "priority", "time", "token",
	"granted_at", "lease", "lease_expires", "owner", "request_id", "seq",
	"admit_limit", "claim", "slots", "mode", "fair_key", "preemptible",
	"preempt_deadline"
};

/* Columns from COL_CLAIM on are missing in older versions of the table. */
#define COL_FIRST_OPTIONAL	COL_CLAIM

/*
 * Find the columns and the primary key of sync_state 'rel' (once per
 * table, and again after an invalidation of one of syncwf's tables: see
 * sync_tables_invalidations()).
 */
static void
sync_state_layout(Relation rel)
{
	Oid			pkey;
	Relation	idx;

	if (layout_relid == RelationGetRelid(rel) &&
		layout_invalidations == sync_tables_invalidations())
		return;
	for (int c = 0; c < SYNC_STATE_NCOLS; c++)
	{
		state_attnums[c] = get_attnum(RelationGetRelid(rel), state_columns[c]);
		if (state_attnums[c] == InvalidAttrNumber && c < COL_FIRST_OPTIONAL)
			elog(ERROR, "column \"%s\" of sync_state is missing", state_columns[c]);
	}
	pkey = sync_primary_key_index(rel);
	if (!OidIsValid(pkey))
		elog(ERROR, "sync_state has no primary key");
	idx = index_open(pkey, AccessShareLock);
	if (IndexRelationGetNumberOfKeyAttributes(idx) != 2 ||
		idx->rd_index->indkey.values[0] != state_attnums[COL_NAME] ||
		idx->rd_index->indkey.values[1] != state_attnums[COL_WORKFLOWKEY])
		elog(ERROR, "the primary key of sync_state is not (name, workflowkey)");
	index_close(idx, AccessShareLock);
	state_pkey = pkey;
	layout_relid = RelationGetRelid(rel);
	layout_invalidations = sync_tables_invalidations();
}

/*
 * Open sync_state and its primary key for writing, with scan keys for the
 * row of (name, holder).
 */
static Relation
sync_state_open_key(const char *name, const char *holder, Relation *idx,
					ScanKeyData *keys)
{
	Relation	rel = table_open(sync_state_relid(false), RowExclusiveLock);

	sync_state_layout(rel);
	*idx = index_open(state_pkey, RowExclusiveLock);
	ScanKeyEntryInitialize(&keys[0], 0, 1, BTEqualStrategyNumber, InvalidOid,
						   (*idx)->rd_indcollation[0], F_TEXTEQ,
						   CStringGetTextDatum(name));
	ScanKeyEntryInitialize(&keys[1], 0, 2, BTEqualStrategyNumber, InvalidOid,
						   (*idx)->rd_indcollation[1], F_TEXTEQ,
						   CStringGetTextDatum(holder));
	return rel;
}

/* Insert one row: values and isnull in state_columns order. */
static void
sync_state_insert_row(Datum *values, bool *isnull)
{
	Relation	rel;
	TupleTableSlot *slot;

	rel = table_open(sync_state_relid(false), RowExclusiveLock);
	sync_state_layout(rel);

	slot = sync_row_slot(rel, NULL);
	for (int c = 0; c < SYNC_STATE_NCOLS; c++)
	{
		if (state_attnums[c] == InvalidAttrNumber)
			continue;			/* a column of a later version */
		slot->tts_values[state_attnums[c] - 1] = values[c];
		slot->tts_isnull[state_attnums[c] - 1] = isnull[c];
	}
	ExecStoreVirtualTuple(slot);

	sync_row_insert(rel, slot);
	ExecDropSingleTupleTableSlot(slot);
	table_close(rel, NoLock);
	/* later statements of this transaction see the row */
	CommandCounterIncrement();
}

/*
 * Delete the row of (name, holder), if there is one.  Returns the rows
 * deleted (one, unless an earlier version of it was deleted by this
 * command already), each as a SyncStateRow with its request_id and
 * controller: what they mean is the engine's (sync_keyed_delete).
 */
List *
sync_state_delete(const char *name, const char *holder)
{
	Relation	rel;
	Relation	idx;
	ScanKeyData keys[2];
	TupleTableSlot *slot;
	List	   *removed = NIL;
	bool		retry;

	rel = sync_state_open_key(name, holder, &idx, keys);
	slot = table_slot_create(rel, NULL);

	do
	{
		Snapshot	snapshot = RegisterSnapshot(GetTransactionSnapshot());
		IndexScanDesc scan = sync_index_beginscan(rel, idx, snapshot, 2, 0);

		retry = false;
		index_rescan(scan, keys, 2, NULL, 0);
		while (!retry && index_getnext_slot(scan, ForwardScanDirection, slot))
		{
			TM_FailureData tmfd;
			TM_Result	result;
			bool		isnull;
			SyncStateRow *row;
			Datum		d;

			result = table_tuple_delete(rel, &slot->tts_tid,
										GetCurrentCommandId(true), snapshot,
										InvalidSnapshot, true, &tmfd, false);
			switch (result)
			{
				case TM_Ok:
					break;
				case TM_SelfModified:
					continue;	/* this command deleted it already */
				case TM_Updated:
				case TM_Deleted:
					sync_check_serializable(result);
					/*
					 * READ COMMITTED: a deleted row is gone; an updated one
					 * (the key never changes) is found again by a new scan
					 * with a new snapshot, which sees its latest version.
					 */
					retry = (result == TM_Updated);
					continue;
				default:
					elog(ERROR, "unexpected table_tuple_delete status: %u", result);
			}
			row = palloc0(sizeof(SyncStateRow));
			row->name = (char *) name;
			row->holder = (char *) holder;
			d = slot_getattr(slot, state_attnums[COL_REQUEST_ID], &isnull);
			row->request_id = isnull ? 0 : DatumGetInt64(d);
			d = slot_getattr(slot, state_attnums[COL_CONTROLLER], &isnull);
			if (!isnull)
				row->controller = TextDatumGetCString(d);
			removed = lappend(removed, row);
		}
		index_endscan(scan);
		UnregisterSnapshot(snapshot);
	} while (retry);

	ExecDropSingleTupleTableSlot(slot);
	index_close(idx, NoLock);
	table_close(rel, NoLock);
	if (removed != NIL)
		CommandCounterIncrement();
	return removed;
}

void
sync_state_insert(SyncStateRow *row)
{
	Datum		values[SYNC_STATE_NCOLS];
	bool		isnull[SYNC_STATE_NCOLS];

	memset(isnull, 0, sizeof(isnull));
	values[COL_NAME] = CStringGetTextDatum(row->name);
	values[COL_WORKFLOWKEY] = CStringGetTextDatum(row->holder);
	if (row->controller)
		values[COL_CONTROLLER] = CStringGetTextDatum(row->controller);
	else
		isnull[COL_CONTROLLER] = true;
	values[COL_HELD] = BoolGetDatum(row->held);
	values[COL_PRIORITY] = Int32GetDatum(row->priority);
	values[COL_TIME] = TimestampTzGetDatum(row->queued_at);
	values[COL_TOKEN] = Int64GetDatum(row->token);
	values[COL_GRANTED_AT] = TimestampTzGetDatum(row->granted_at);
	isnull[COL_TOKEN] = isnull[COL_GRANTED_AT] = !row->held;
	values[COL_LEASE] = row->lease_us > 0 ? sync_interval_datum(row->lease_us) : (Datum) 0;
	isnull[COL_LEASE] = row->lease_us <= 0;
	values[COL_LEASE_EXPIRES] = TimestampTzGetDatum(row->lease_expires);
	isnull[COL_LEASE_EXPIRES] = row->lease_expires == 0;
	values[COL_OWNER] = ObjectIdGetDatum(row->owner);
	values[COL_REQUEST_ID] = Int64GetDatum(row->request_id);
	values[COL_SEQ] = Int64GetDatum(row->seq);
	values[COL_ADMIT_LIMIT] = Int32GetDatum(row->admit_limit);
	isnull[COL_ADMIT_LIMIT] = row->admit_limit < 0;
	values[COL_CLAIM] = BoolGetDatum(row->claim);
	values[COL_SLOTS] = Int32GetDatum(Max(row->slots, 1));
	values[COL_MODE] = sync_state_mode_datum(row->name, row->shared);
	isnull[COL_MODE] = (values[COL_MODE] == (Datum) 0);
	values[COL_FAIR_KEY] = row->fair_key ? CStringGetTextDatum(row->fair_key) : (Datum) 0;
	isnull[COL_FAIR_KEY] = (row->fair_key == NULL);
	values[COL_PREEMPTIBLE] = BoolGetDatum(row->preemptible);
	isnull[COL_PREEMPT_DEADLINE] = true;	/* a new row: not preempted */
	sync_state_insert_row(values, isnull);
}

/*
 * The mode column of lock 'name': 'shared' or 'exclusive' for a mutex,
 * (Datum) 0 (NULL) for a semaphore.
 */
Datum
sync_state_mode_datum(const char *name, bool shared)
{
	if (strncmp(name, "mtx/", 4) != 0)
		return (Datum) 0;
	return CStringGetTextDatum(shared ? "shared" : "exclusive");
}

/*
 * The new version of the row in 'old' with row's grant in it, written
 * without waiting; false if the row is locked or changed meanwhile.
 */
static bool
sync_state_write_grant(Relation rel, TupleTableSlot *old, Snapshot snapshot,
					   SyncStateRow *row)
{
	TupleTableSlot *slot = sync_row_slot(rel, old);
	bool		written;

	slot->tts_values[state_attnums[COL_HELD] - 1] = BoolGetDatum(true);
	slot->tts_isnull[state_attnums[COL_HELD] - 1] = false;
	slot->tts_values[state_attnums[COL_TOKEN] - 1] = Int64GetDatum(row->token);
	slot->tts_isnull[state_attnums[COL_TOKEN] - 1] = false;
	slot->tts_values[state_attnums[COL_GRANTED_AT] - 1] =
		TimestampTzGetDatum(row->granted_at);
	slot->tts_isnull[state_attnums[COL_GRANTED_AT] - 1] = false;
	slot->tts_values[state_attnums[COL_LEASE_EXPIRES] - 1] =
		TimestampTzGetDatum(row->lease_expires);
	slot->tts_isnull[state_attnums[COL_LEASE_EXPIRES] - 1] =
		(row->lease_expires == 0);
	ExecStoreVirtualTuple(slot);

	written = (sync_row_update(rel, old, slot, snapshot, false) == TM_Ok);
	ExecDropSingleTupleTableSlot(slot);
	return written;
}

/*
 * Write a grant to the row of (name, holder) of request row->request_id,
 * unless it records this grant already: held = true, the token, granted_at
 * and lease_expires, as the worker's UPDATE does (sync_state_persist()),
 * without waiting for anyone: a row that an open transaction is changing
 * or has locked, or that changed since this statement's snapshot, is left
 * alone.  Returns whether the row was written; the caller announces the
 * grant.  For READ COMMITTED transactions (the hand-off, keyed_ops.c).
 */
bool
sync_state_grant(SyncStateRow *row)
{
	Relation	rel;
	Relation	idx;
	ScanKeyData keys[2];
	TupleTableSlot *slot;
	Snapshot	snapshot;
	IndexScanDesc scan;
	bool		written = false;

	Assert(!IsolationUsesXactSnapshot());
	rel = sync_state_open_key(row->name, row->holder, &idx, keys);
	slot = table_slot_create(rel, NULL);
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	scan = sync_index_beginscan(rel, idx, snapshot, 2, 0);
	index_rescan(scan, keys, 2, NULL, 0);
	if (index_getnext_slot(scan, ForwardScanDirection, slot))
	{
		bool		isnull;
		Datum		d;
		bool		pending;

		d = slot_getattr(slot, state_attnums[COL_REQUEST_ID], &isnull);
		pending = !isnull && DatumGetInt64(d) == row->request_id;
		d = slot_getattr(slot, state_attnums[COL_HELD], &isnull);
		if (pending && !isnull && DatumGetBool(d))
		{
			d = slot_getattr(slot, state_attnums[COL_TOKEN], &isnull);
			pending = isnull || DatumGetInt64(d) != row->token;
		}
		if (pending)
			written = sync_state_write_grant(rel, slot, snapshot, row);
	}
	index_endscan(scan);
	UnregisterSnapshot(snapshot);
	ExecDropSingleTupleTableSlot(slot);
	index_close(idx, NoLock);
	table_close(rel, NoLock);
	if (written)
		CommandCounterIncrement();
	return written;
}

/*
 * The name, holder, request_id and controller of a row of sync_state 'rel'
 * (for its delete trigger); false if name, holder or request_id is null.
 */
bool
sync_state_row_of(Relation rel, HeapTuple tuple, SyncStateRow *row)
{
	TupleDesc	desc = RelationGetDescr(rel);
	bool		name_null,
				holder_null,
				request_null,
				controller_null;
	Datum		name,
				holder,
				request_id,
				controller;

	sync_state_layout(rel);
	name = heap_getattr(tuple, state_attnums[COL_NAME], desc, &name_null);
	holder = heap_getattr(tuple, state_attnums[COL_WORKFLOWKEY], desc, &holder_null);
	request_id = heap_getattr(tuple, state_attnums[COL_REQUEST_ID], desc, &request_null);
	controller = heap_getattr(tuple, state_attnums[COL_CONTROLLER], desc, &controller_null);
	if (name_null || holder_null || request_null)
		return false;
	memset(row, 0, sizeof(SyncStateRow));
	row->name = TextDatumGetCString(name);
	row->holder = TextDatumGetCString(holder);
	row->request_id = DatumGetInt64(request_id);
	row->controller = controller_null ? NULL : TextDatumGetCString(controller);
	return true;
}
