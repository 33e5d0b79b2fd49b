/*-------------------------------------------------------------------------
 *
 * tables.h
 *		Where syncwf's tables are (tables.c): the one lookup of the
 *		extension's tables in this database and its one invalidation
 *		callback; statements run as the tables' owner, and the search_path
 *		every statement of syncwf runs with; and who may act on whose keyed
 *		holds.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_TABLES_H
#define SYNC_TABLES_H

#include "access/tableam.h"
#include "executor/spi.h"
#include "nodes/pg_list.h"

/* The extension's tables in this database (InvalidOid: not there). */
typedef struct SyncTables
{
	Oid			schema;			/* the extension's schema */
	Oid			state;			/* sync_state */
	Oid			controller;		/* sync_controller */
	Oid			limit;			/* sync_limit */
	Oid			owner;			/* owner of sync_state: the extension's */
} SyncTables;

extern const SyncTables *sync_tables(bool missing_ok);
extern Oid	sync_state_relid(bool missing_ok);
extern Oid	sync_limit_relid(void);
extern uint64 sync_tables_invalidations(void);
extern Oid	sync_launch_table_relid(const char *relname);
extern TupleTableSlot *sync_row_slot(Relation rel, TupleTableSlot *old);
extern void sync_row_insert(Relation rel, TupleTableSlot *slot);
extern TM_Result sync_row_update(Relation rel, TupleTableSlot *old,
								 TupleTableSlot *slot, Snapshot snapshot,
								 bool wait);
extern void sync_check_serializable(TM_Result result);
extern char *sync_qualified(Oid relid);
extern Datum sync_interval_datum(int64 us);

/* A statement run by sync_exec_owned(). */
typedef struct SyncOwnedPlan
{
	const char *sql;			/* "%1$s" stands for the extension's schema */
	int			nargs;
	Oid			types[12];
	SPIPlanPtr	plan;			/* prepared, for relid */
	Oid			relid;
} SyncOwnedPlan;

extern SPIPlanPtr sync_prepare_kept(const char *sql, int nargs, Oid *types,
								    SPIPlanPtr old);
extern int	sync_search_path_restrict(void);
extern void sync_search_path_restore(int nestlevel);

extern uint64 sync_exec_owned(SyncOwnedPlan *plan, Datum *values,
							  const char *nulls, List **rows_out);

extern bool sync_is_admin(Oid roleid);
extern void sync_check_owner(Oid owner, const char *lock_name,
							 const char *holder);

#endif							/* SYNC_TABLES_H */
