/*-------------------------------------------------------------------------
 *
 * launch_heap.c
 *		The hot path of the launch-plan tables: what every
 *		sync_execution_create and sync_execution_update does -- reading an
 *		execution and its version's policy, inserting the execution, moving
 *		it to a phase -- and the events (a row of sync_launch_event and a
 *		NOTIFY on "syncwf_launch"), such as the promotion a releasing
 *		transaction records for the pending execution its slot goes to
 *		(keyed_ops.c's hand-off).
 *
 * These go through the table access method and the primary keys directly
 * rather than through SPI, whose executor start-up, constraint and trigger
 * set-up cost more than the change itself (as for sync_state's hot path,
 * state_heap.c).  They do what the statements would:
 *	- a read uses a new snapshot under READ COMMITTED, as a new statement
 *	  does, and sees what this transaction wrote before;
 *	- an insert is an INSERT ... ON CONFLICT (execution_id) DO NOTHING: a
 *	  speculative insertion that waits for a transaction inserting the same
 *	  id and, if it committed, inserts nothing;
 *	- a phase move is an UPDATE ... WHERE phase = 'from': a transaction
 *	  changing the row is waited for, and the version it committed looked
 *	  at again under READ COMMITTED (a serialization failure under
 *	  REPEATABLE READ or SERIALIZABLE).  The row is read, then updated,
 *	  without a row lock in between: the update fails if the row changed
 *	  meanwhile and the caller decides again on what it reads then (no
 *	  LOCK record, as SELECT ... FOR UPDATE would write);
 *	- the heap and index changes are WAL-logged as usual; timestamps are
 *	  clock_timestamp(); an event's id is the next value of its sequence.
 * No trigger fires (the one on sync_execution is for changes syncwf did not
 * make).  The table access method checks no constraint: the values are
 * syncwf's, checked by its functions (phases come from launch_policy.c's list),
 * and the one CHECK its functions do not imply, on an execution's id, is
 * evaluated here (exec_check_id).  The rarer statements are in launch_spi.c.
 *
 * Backend-local state only: the sequence of sync_launch_event's ids, kept
 * for the table it was found for.
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
#include "catalog/dependency.h"
#include "commands/async.h"
#include "commands/sequence.h"
#include "executor/executor.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/formatting.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "launch/launch_internal.h"

#define SYNC_LAUNCH_CHANNEL "syncwf_launch"
#define MAX_COLUMNS 13

/*
 * One of the tables open for one call: its columns by name (the first
 * 'nkeys' are its primary key, in order), and the row last found.
 */
typedef struct DirectTable
{
	Relation	rel;
	Relation	pkey;
	int			ncolumns;
	int			nkeys;
	AttrNumber	att[MAX_COLUMNS];
	Snapshot	snapshot;		/* the last direct_find's, registered */
	TupleTableSlot *slot;		/* the row direct_find found */
} DirectTable;

/* sync_execution */
enum
{
	EC_ID, EC_PROJECT, EC_DOMAIN, EC_NAME, EC_VERSION, EC_PHASE, EC_REASON,
	EC_PRIORITY, EC_CREATED_AT, EC_QUEUED_AT, EC_STARTED_AT, EC_FINISHED_AT,
	EC_OWNER, EXEC_NCOLS
};
static const char *const exec_columns[] = {
	"execution_id", "project", "domain", "name", "version", "phase", "reason",
	"priority", "created_at", "queued_at", "started_at", "finished_at", "owner"
};

/* sync_launch_plan */
enum
{
	PC_PROJECT, PC_DOMAIN, PC_NAME, PC_VERSION, PC_MAX, PC_BEHAVIOR,
	PC_SCHEDULING, PC_MAX_PENDING, PLAN_NCOLS
};
static const char *const plan_columns[] = {
	"project", "domain", "name", "version", "max_concurrency", "behavior",
	"scheduling", "max_pending"
};

/* sync_launch_event */
enum
{
	VC_ID, VC_AT, VC_EVENT, VC_PROJECT, VC_DOMAIN, VC_NAME, VC_VERSION,
	VC_EXECUTION, VC_REPLACED, VC_REASON, EVENT_NCOLS
};
static const char *const event_columns[] = {
	"event_id", "at", "event", "project", "domain", "name", "version",
	"execution_id", "replaced_execution_id", "reason"
};

StaticAssertDecl(EXEC_NCOLS <= MAX_COLUMNS && PLAN_NCOLS <= MAX_COLUMNS &&
				 EVENT_NCOLS <= MAX_COLUMNS, "too many columns");

/* The sequence of sync_launch_event's ids, for the table event_relid. */
static Oid	event_relid = InvalidOid;
static Oid	event_seq = InvalidOid;

static void
direct_open(DirectTable *t, const char *relname, const char *const *columns,
			int ncolumns, int nkeys, LOCKMODE lockmode)
{
	TupleDesc	desc;
	Oid			pkey;

	t->rel = table_open(sync_launch_table_relid(relname), lockmode);
	desc = RelationGetDescr(t->rel);
	for (int c = 0; c < ncolumns; c++)
	{
		t->att[c] = InvalidAttrNumber;
		for (int i = 0; i < desc->natts; i++)
		{
			Form_pg_attribute a = TupleDescAttr(desc, i);

			if (!a->attisdropped && strcmp(NameStr(a->attname), columns[c]) == 0)
			{
				t->att[c] = a->attnum;
				break;
			}
		}
		if (t->att[c] == InvalidAttrNumber)
			elog(ERROR, "column \"%s\" of %s is missing", columns[c], relname);
	}
	pkey = sync_primary_key_index(t->rel);
	if (!OidIsValid(pkey))
		elog(ERROR, "%s has no primary key", relname);
	t->pkey = index_open(pkey, lockmode);
	t->ncolumns = ncolumns;
	t->nkeys = nkeys;
	if (IndexRelationGetNumberOfKeyAttributes(t->pkey) != nkeys)
		elog(ERROR, "the primary key of %s is not the one syncwf made", relname);
	for (int k = 0; k < nkeys; k++)
		if (t->pkey->rd_index->indkey.values[k] != t->att[k])
			elog(ERROR, "the primary key of %s is not the one syncwf made", relname);
	t->snapshot = InvalidSnapshot;
	t->slot = table_slot_create(t->rel, NULL);
}

static void
direct_close(DirectTable *t)
{
	if (t->snapshot != InvalidSnapshot)
		UnregisterSnapshot(t->snapshot);
	ExecDropSingleTupleTableSlot(t->slot);
	index_close(t->pkey, NoLock);
	table_close(t->rel, NoLock);
}

/*
 * Find the row of primary key 'key' (text columns) as this transaction sees
 * it now; false if there is none.  The row is in t->slot.
 */
static bool
direct_find(DirectTable *t, const char *const *key)
{
	ScanKeyData keys[4];
	IndexScanDesc scan;
	bool		found;

	Assert(t->nkeys <= lengthof(keys));
	/* see what this transaction's earlier statements wrote */
	CommandCounterIncrement();
	if (t->snapshot != InvalidSnapshot)
		UnregisterSnapshot(t->snapshot);
	t->snapshot = RegisterSnapshot(GetTransactionSnapshot());
	for (int k = 0; k < t->nkeys; k++)
		ScanKeyEntryInitialize(&keys[k], 0, k + 1, BTEqualStrategyNumber, InvalidOid,
							   t->pkey->rd_indcollation[k], F_TEXTEQ,
							   CStringGetTextDatum(key[k]));
	scan = sync_index_beginscan(t->rel, t->pkey, t->snapshot, t->nkeys, 0);
	index_rescan(scan, keys, t->nkeys, NULL, 0);
	found = index_getnext_slot(scan, ForwardScanDirection, t->slot);
	index_endscan(scan);
	return found;
}

static char *
direct_text(DirectTable *t, int c)
{
	bool		isnull;
	Datum		d = slot_getattr(t->slot, t->att[c], &isnull);

	return isnull ? NULL : TextDatumGetCString(d);
}

/*
 * A new row for t: every column NULL, for the caller to set its columns.
 * A NOT NULL column syncwf does not know (one a later version of the
 * extension added) is an error rather than a NULL the table refuses.
 */
static TupleTableSlot *
direct_new_row(DirectTable *t)
{
	TupleDesc	desc = RelationGetDescr(t->rel);

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);
		bool		known = false;

		for (int c = 0; c < t->ncolumns && !known; c++)
			known = (t->att[c] == a->attnum);
		if (a->attnotnull && !a->attisdropped && !known)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("column \"%s\" of %s is not one syncwf writes, and it is NOT NULL",
							NameStr(a->attname), RelationGetRelationName(t->rel)),
					 errhint("Tables of syncwf change only with the extension's version; drop the column, or allow NULL in it.")));
	}
	return sync_row_slot(t->rel, NULL);
}

#define SET_COLUMN(t, slot, c, d, null) \
	((slot)->tts_values[(t)->att[c] - 1] = (d), \
	 (slot)->tts_isnull[(t)->att[c] - 1] = (null))
#define SET_TEXT(t, slot, c, s) \
	SET_COLUMN(t, slot, c, (s) ? CStringGetTextDatum(s) : (Datum) 0, (s) == NULL)

/*-------------------------------------------------------------------------
 * Executions
 *-------------------------------------------------------------------------
 */

static void
exec_open(DirectTable *t)
{
	direct_open(t, "sync_execution", exec_columns, EXEC_NCOLS, 1, RowExclusiveLock);
}

static bool
exec_find(DirectTable *t, const char *id)
{
	const char *key[1] = {id};

	return direct_find(t, key);
}

static void
exec_row(DirectTable *t, SyncExecutionRow *row)
{
	bool		isnull;
	Datum		owner;

	row->project = direct_text(t, EC_PROJECT);
	row->domain = direct_text(t, EC_DOMAIN);
	row->name = direct_text(t, EC_NAME);
	row->version = direct_text(t, EC_VERSION);
	row->phase = direct_text(t, EC_PHASE);
	row->reason = direct_text(t, EC_REASON);
	owner = slot_getattr(t->slot, t->att[EC_OWNER], &isnull);
	row->owner = isnull ? InvalidOid : DatumGetObjectId(owner);
}

/*
 * Write a new version, in 'phase', of the row exec_find found:
 * set_reason replaces its reason with 'reason' (NULL clears it); QUEUED
 * sets queued_at, the first RUNNING started_at, a terminal phase
 * finished_at (any other phase clears it).  TM_Updated or TM_Deleted (READ
 * COMMITTED only): a transaction we waited for changed the row first, and
 * nothing is written.
 */
static TM_Result
exec_write_phase(DirectTable *t, const char *phase, bool terminal,
				 bool set_reason, const char *reason)
{
	TupleTableSlot *slot = sync_row_slot(t->rel, t->slot);
	TimestampTz now = GetCurrentTimestamp();
	TM_Result	result;

	SET_TEXT(t, slot, EC_PHASE, phase);
	if (set_reason)
		SET_TEXT(t, slot, EC_REASON, reason);
	if (strcmp(phase, "QUEUED") == 0)
		SET_COLUMN(t, slot, EC_QUEUED_AT, TimestampTzGetDatum(now), false);
	if (strcmp(phase, "RUNNING") == 0 && slot->tts_isnull[t->att[EC_STARTED_AT] - 1])
		SET_COLUMN(t, slot, EC_STARTED_AT, TimestampTzGetDatum(now), false);
	/* set exactly when the phase is final: sync_execution_live is on it */
	SET_COLUMN(t, slot, EC_FINISHED_AT, TimestampTzGetDatum(now), !terminal);
	ExecStoreVirtualTuple(slot);

	/* waits for a transaction that is changing the row or has it locked */
	result = sync_row_update(t->rel, t->slot, slot, t->snapshot, true);
	ExecDropSingleTupleTableSlot(slot);
	/* later statements of this transaction see it */
	if (result == TM_Ok)
		CommandCounterIncrement();
	switch (result)
	{
		case TM_Ok:
			break;
		case TM_Updated:
		case TM_Deleted:
			/* committed meanwhile by a transaction we waited for */
			sync_check_serializable(result);
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
	DirectTable t;
	bool		found;

	exec_open(&t);
	found = exec_find(&t, id);
	if (found)
		exec_row(&t, row);
	direct_close(&t);
	return found;
}

/*
 * Read execution 'id', let 'decide' look at it, and move it as decided, in
 * one look-up: an UPDATE whose new phase depends on the row it finds.  A
 * transaction changing the row is waited for; under READ COMMITTED the
 * version it committed is decided on again, under REPEATABLE READ that is
 * 40001.  *row is the row last decided on.
 */
SyncExecutionChange
sync_execution_change(const char *id, SyncExecutionDecide decide, void *arg,
					  SyncExecutionRow *row)
{
	DirectTable t;
	SyncExecutionChange result = SYNC_EXECUTION_MISSING;

	exec_open(&t);
	while (exec_find(&t, id))
	{
		SyncExecutionMove move;

		exec_row(&t, row);
		result = SYNC_EXECUTION_KEPT;
		if (!decide(row, arg, &move))
			break;
		if (exec_write_phase(&t, move.phase, move.terminal, move.set_reason,
							 move.reason) == TM_Ok)
		{
			result = SYNC_EXECUTION_MOVED;
			break;
		}
		/* READ COMMITTED: changed or deleted meanwhile; look again */
		result = SYNC_EXECUTION_MISSING;
	}
	direct_close(&t);
	return result;
}

/* sync_execution_move()'s decision: move only from phase 'from' (or any). */
typedef struct MoveFrom
{
	const char *from;
	SyncExecutionMove move;
} MoveFrom;

static bool
decide_move_from(const SyncExecutionRow *row, void *arg, SyncExecutionMove *move)
{
	MoveFrom   *m = arg;

	if (m->from != NULL && strcmp(row->phase, m->from) != 0)
		return false;
	*move = m->move;
	return true;
}

/*
 * Move execution 'id' to 'phase' if its latest version is in phase 'from'
 * (NULL: any), as an UPDATE ... WHERE phase = 'from' does under READ
 * COMMITTED (sync_execution_change()).  terminal: 'phase' is a final one,
 * which sets the finish time.  set_reason: replace its reason with 'reason'
 * (NULL clears it); otherwise keep the reason it has.  Returns whether it
 * moved; *row (if not NULL) is the row it found, which moved or not.
 */
bool
sync_execution_move(const char *id, const char *from, const char *phase,
					bool terminal, bool set_reason, const char *reason,
					SyncExecutionRow *row)
{
	MoveFrom	m;
	SyncExecutionRow found;

	m.from = from;
	m.move.phase = phase;
	m.move.terminal = terminal;
	m.move.set_reason = set_reason;
	m.move.reason = reason;
	return sync_execution_change(id, decide_move_from, &m,
								 row ? row : &found) == SYNC_EXECUTION_MOVED;
}

/*
 * Under REPEATABLE READ or SERIALIZABLE, an insert that found the id taken
 * by a row its snapshot cannot see fails, as INSERT ... ON CONFLICT DO
 * NOTHING does (unless this transaction wrote that row).
 */
static void
exec_check_conflict_visible(DirectTable *t, ItemPointer tid)
{
	TupleTableSlot *slot;

	if (!IsolationUsesXactSnapshot())
		return;
	slot = table_slot_create(t->rel, NULL);
	if (!table_tuple_fetch_row_version(t->rel, tid, SnapshotAny, slot))
		elog(ERROR, "failed to fetch the conflicting execution");
	if (!table_tuple_satisfies_snapshot(t->rel, slot, GetTransactionSnapshot()))
	{
		bool		should_free;
		HeapTuple	tuple = ExecFetchSlotHeapTuple(slot, false, &should_free);

		if (!TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetXmin(tuple->t_data)))
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("could not serialize access due to concurrent update")));
		if (should_free)
			heap_freetuple(tuple);
	}
	ExecDropSingleTupleTableSlot(slot);
}

/*
 * The CHECK constraint sync_execution_id_check, which the table access
 * method does not run: the id has no control character (as the regular
 * expression class [[:cntrl:]] says in the column's collation, which is
 * stricter than sync_execution_create's own check: U+0080 to U+009F in
 * UTF-8) and at most 255 bytes.
 */
static void
exec_check_id(DirectTable *t, const char *id)
{
	Oid			collation = TupleDescAttr(RelationGetDescr(t->rel), t->att[EC_ID] - 1)->attcollation;

	if (strlen(id) > 255 ||
		!DatumGetBool(DirectFunctionCall2Coll(textregexeq, collation,
											  CStringGetTextDatum(id),
											  CStringGetTextDatum("^[^[:cntrl:]]+$"))))
		ereport(ERROR,
				(errcode(ERRCODE_CHECK_VIOLATION),
				 errmsg("new row for relation \"%s\" violates check constraint \"%s\"",
						RelationGetRelationName(t->rel), "sync_execution_id_check"),
				 errtableconstraint(t->rel, "sync_execution_id_check")));
}

/*
 * Insert an execution in phase e->phase; false if another transaction
 * created this id first (and committed), or this one did: then nothing is
 * written.  QUEUED sets queued_at, a terminal phase finished_at; the owner
 * is the current user.
 */
bool
sync_execution_insert(const SyncExecutionNew *e)
{
	DirectTable t;
	TupleTableSlot *slot;
	EState	   *estate;
	ResultRelInfo *rri;
	List	   *arbiters;
	bool		inserted = false;

	exec_open(&t);
	exec_check_id(&t, e->id);
	slot = direct_new_row(&t);
	SET_TEXT(&t, slot, EC_ID, e->id);
	SET_TEXT(&t, slot, EC_PROJECT, e->project);
	SET_TEXT(&t, slot, EC_DOMAIN, e->domain);
	SET_TEXT(&t, slot, EC_NAME, e->name);
	SET_TEXT(&t, slot, EC_VERSION, e->version);
	SET_TEXT(&t, slot, EC_PHASE, e->phase);
	SET_TEXT(&t, slot, EC_REASON, e->reason);
	SET_COLUMN(&t, slot, EC_PRIORITY, Int32GetDatum(e->priority), false);
	SET_COLUMN(&t, slot, EC_CREATED_AT, TimestampTzGetDatum(e->created), false);
	SET_COLUMN(&t, slot, EC_QUEUED_AT, TimestampTzGetDatum(e->created), !e->queued);
	SET_COLUMN(&t, slot, EC_FINISHED_AT, TimestampTzGetDatum(e->created), !e->terminal);
	SET_COLUMN(&t, slot, EC_OWNER, ObjectIdGetDatum(GetUserId()), false);
	ExecStoreVirtualTuple(slot);

	/* see what this transaction's earlier statements wrote */
	CommandCounterIncrement();
	estate = CreateExecutorState();
	rri = makeNode(ResultRelInfo);
	InitResultRelInfo(rri, t.rel, 1, NULL, 0);
	ExecOpenIndices(rri, true);
	arbiters = list_make1_oid(RelationGetRelid(t.pkey));
	for (;;)
	{
		ItemPointerData conflict;
		uint32		token;
		bool		spec_conflict = false;
		List	   *recheck;

		/* a committed row of this id, or wait for its inserter to end */
		if (!sync_check_index_constraints(rri, slot, estate, &conflict, arbiters))
		{
			exec_check_conflict_visible(&t, &conflict);
			break;
		}
		token = SpeculativeInsertionLockAcquire(GetCurrentTransactionId());
		table_tuple_insert_speculative(t.rel, slot, GetCurrentCommandId(true), 0,
									   NULL, token);
		recheck = sync_insert_index_tuples_speculative(rri, slot, estate,
													   &spec_conflict, arbiters);
		table_tuple_complete_speculative(t.rel, slot, token, !spec_conflict);
		SpeculativeInsertionLockRelease(GetCurrentTransactionId());
		Assert(recheck == NIL);
		(void) recheck;
		if (!spec_conflict)
		{
			inserted = true;
			break;
		}
		/* another transaction inserted the id meanwhile: check again */
	}
	ExecCloseIndices(rri);
	FreeExecutorState(estate);
	ExecDropSingleTupleTableSlot(slot);
	direct_close(&t);
	if (inserted)
		CommandCounterIncrement();
	return inserted;
}

/*-------------------------------------------------------------------------
 * Launch plans and events
 *-------------------------------------------------------------------------
 */

/*
 * The policy of a plan version, as this transaction sees it now (its own
 * uncommitted registrations included); false if the version is not
 * registered.
 */
bool
sync_launch_policy_read(const char *project, const char *domain,
						const char *name, const char *version,
						SyncLaunchPolicy *policy)
{
	DirectTable t;
	const char *key[4] = {project, domain, name, version};
	bool		found;

	direct_open(&t, "sync_launch_plan", plan_columns, PLAN_NCOLS, 4, AccessShareLock);
	found = direct_find(&t, key);
	if (found)
	{
		bool		isnull;
		Datum		max = slot_getattr(t.slot, t.att[PC_MAX], &isnull);

		policy->has_policy = !isnull;
		policy->max_concurrency = isnull ? 0 : DatumGetInt32(max);
		policy->behavior = direct_text(&t, PC_BEHAVIOR);
		policy->scheduling = direct_text(&t, PC_SCHEDULING);
		(void) slot_getattr(t.slot, t.att[PC_MAX_PENDING], &isnull);
		policy->has_max_pending = !isnull;
	}
	direct_close(&t);
	return found;
}

/* The sequence that gives sync_launch_event 't' its ids. */
static Oid
event_sequence(DirectTable *t)
{
	List	   *seqs;

	if (event_relid == RelationGetRelid(t->rel))
		return event_seq;
	seqs = getOwnedSequences(RelationGetRelid(t->rel));
	if (list_length(seqs) != 1)
		elog(ERROR, "sync_launch_event does not own one sequence");
	event_seq = linitial_oid(seqs);
	event_relid = RelationGetRelid(t->rel);
	return event_seq;
}

static void
sync_launch_notify(const char *event, const char *execution_id,
				   const char *project, const char *domain, const char *name,
				   const char *version, const char *reason,
				   const char *replaced)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"event\": ");
	escape_json(&buf, event);
	appendStringInfoString(&buf, ", \"execution_id\": ");
	escape_json(&buf, execution_id);
	appendStringInfoString(&buf, ", \"project\": ");
	escape_json(&buf, project);
	appendStringInfoString(&buf, ", \"domain\": ");
	escape_json(&buf, domain);
	appendStringInfoString(&buf, ", \"name\": ");
	escape_json(&buf, name);
	appendStringInfoString(&buf, ", \"version\": ");
	escape_json(&buf, version);
	if (reason)
	{
		appendStringInfoString(&buf, ", \"reason\": ");
		escape_json(&buf, reason);
	}
	if (replaced)
	{
		appendStringInfoString(&buf, ", \"replaced_execution_id\": ");
		escape_json(&buf, replaced);
	}
	appendStringInfoChar(&buf, '}');
	Async_Notify(SYNC_LAUNCH_CHANNEL, buf.data);
	pfree(buf.data);
}

/* Record an event (a row and a NOTIFY, both at commit). */
void
sync_launch_event(const char *event, const char *execution_id,
				  const char *project, const char *domain, const char *name,
				  const char *version, const char *reason, const char *replaced)
{
	DirectTable t;
	TupleTableSlot *slot;

	direct_open(&t, "sync_launch_event", event_columns, EVENT_NCOLS, 1, RowExclusiveLock);
	slot = direct_new_row(&t);
	SET_COLUMN(&t, slot, VC_ID, Int64GetDatum(nextval_internal(event_sequence(&t), false)),
			   false);
	SET_COLUMN(&t, slot, VC_AT, TimestampTzGetDatum(GetCurrentTimestamp()), false);
	SET_TEXT(&t, slot, VC_EVENT, event);
	SET_TEXT(&t, slot, VC_PROJECT, project);
	SET_TEXT(&t, slot, VC_DOMAIN, domain);
	SET_TEXT(&t, slot, VC_NAME, name);
	SET_TEXT(&t, slot, VC_VERSION, version);
	SET_TEXT(&t, slot, VC_EXECUTION, execution_id);
	SET_TEXT(&t, slot, VC_REPLACED, replaced);
	SET_TEXT(&t, slot, VC_REASON, reason);
	ExecStoreVirtualTuple(slot);
	sync_row_insert(t.rel, slot);
	ExecDropSingleTupleTableSlot(slot);
	direct_close(&t);
	CommandCounterIncrement();

	sync_launch_notify(asc_tolower(event, strlen(event)), execution_id, project,
					   domain, name, version, reason, replaced);
}
