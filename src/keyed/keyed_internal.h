/*-------------------------------------------------------------------------
 *
 * keyed/keyed_internal.h
 *		What only the files of keyed/ share.  Includes keyed.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_KEYED_KEYED_INTERNAL_H
#define SYNC_KEYED_KEYED_INTERNAL_H

#include "access/htup.h"
#include "datatype/timestamp.h"
#include "nodes/pg_list.h"
#include "storage/lwlock.h"
#include "utils/relcache.h"
#include "keyed/keyed.h"

/*
 * controllers.c: The controller registry: one slot per controller, its last
 * heartbeat, and whether its pending entries are queued.
 */

extern LWLock *sync_controllers_lock(void);
extern int	sync_controller_slot(const char *name, bool create);
extern int	sync_controller_slot_noerror(const char *name);
extern void sync_controller_ref(int slot);
extern void sync_controller_unref(int slot);
extern bool sync_controller_active(int slot);
extern void sync_controller_beat(int slot, TimestampTz at);
extern void sync_controller_restore(const char *name, TimestampTz heartbeat,
									TimestampTz now);
extern void sync_controller_deactivate(const char *name);

/*
 * holder_table.c: Keyed holds in shared memory: entries owned by a holder
 * key instead of a backend, the holder table that finds them, and requests,
 * lookups and releases on behalf of a holder.
 */

extern LWLock *sync_holders_lock(void);
extern bool sync_keyed_loaded(Oid relid);
extern void sync_keyed_set_loaded(Oid relid);
extern SyncHolder *sync_holder_lookup(const char *key, bool create);
extern void sync_holder_remove(SyncHolder *holder);
extern bool sync_holders_make_room(void);
extern void sync_holder_buckets_grow(int64 nholders);
extern const char *sync_holders_full_setting(void);
extern void sync_report_holders_full(void);
extern SyncEntry *sync_holder_entry(SyncHolder *holder, const char *name);
extern void sync_keyed_entry_info(SyncEntry *e, SyncKeyedInfo *info);
extern List *sync_keyed_holder_locks(const char *holder);
extern List *sync_keyed_request_locks(SyncEntry *entry, uint64 request_id);
extern bool sync_keyed_mark_release(const char *name, const char *holder,
									uint64 request_id, TransactionId xid,
									SyncKeyedInfo *info);
extern void sync_keyed_release_held(SyncEntry *e, SyncEntry *next,
									uint64 token, TimestampTz since);
extern int	sync_keyed_purge(SyncKeyedFilter filter, void *arg);

/*
 * keyed_load.c: Keyed holds and shared memory in bulk: the rebuild from rows
 * of sync_state, and the worker's scans.
 */

extern void sync_keyed_install(List *rows, List *controllers, Oid limit_relid);
extern List *sync_keyed_unpersisted(void);
extern bool sync_keyed_grant_info(SyncOutboxItem *item, SyncStateRow *row);
extern void sync_keyed_set_admit_limit(const char *name, const char *holder,
									   int32 limit, bool grant);

/*
 * keyed_request.c: A request on behalf of a holder key, in shared memory:
 * what is asked, and what was found and done.
 */

extern SyncKeyedOutcome sync_holders_request(SyncKeyedRequest *kr,
											 SyncKeyedResult *results);

/*
 * keyed_xact.c: What a transaction did to keyed holds and controllers,
 * applied at its commit and undone at its abort; the hand-offs of its
 * releases at pre-commit.  It owns the record below, which
 * keyed_xact_record.c fills.
 */

/* What this transaction did to keyed entries, applied at commit. */
typedef enum KeyedOpKind
{
	KEYED_OP_RELEASE,			/* the entry's row was deleted */
	KEYED_OP_RESORT,			/* a new priority for a pending request */
	KEYED_OP_REFRESH,			/* a new lease expiry */
	KEYED_OP_PERSISTED,			/* the worker wrote a grant to the table */
	KEYED_OP_CLAIM,				/* a claim-only request was granted */
	KEYED_OP_TRUNCATE,			/* sync_state was truncated */
	KEYED_OP_FORGET,			/* a sync_controller row was deleted */
	KEYED_OP_BEAT,				/* a sync_controller row was written */
	KEYED_OP_PREEMPT			/* the worker preempted a hold */
} KeyedOpKind;

typedef struct KeyedOp
{
	KeyedOpKind kind;
	SubTransactionId subid;
	SyncEntry  *entry;
	uint64		request_id;
	uint64		token;			/* PERSISTED, CLAIM; RELEASE: the hand-off's */
	int32		priority;
	int64		lease_us;
	TimestampTz at;				/* REFRESH, BEAT; RELEASE: the hand-off's;
								 * PREEMPT: the lease before */
	int			nprovisional;	/* TRUNCATE: requests made before it */
	char	   *controller;		/* FORGET, BEAT */
	/* RELEASE of a held entry: the waiter it hands its slot to, if any */
	bool		handoff_tried;
	SyncEntry  *next;
	uint64		next_request_id;
} KeyedOp;

/* A request this transaction made. */
typedef struct Provisional
{
	SubTransactionId subid;
	uint64		request_id;
	int			nentries;
	SyncEntry  *entries[FLEXIBLE_ARRAY_MEMBER];
} Provisional;

/*
 * The record of this backend's transaction: backend-local, the lists in
 * TopTransactionContext, forgotten at commit and abort (keyed_xact.c).
 */
typedef struct SyncKeyedXact
{
	List	   *ops;			/* KeyedOp *, in the order they happened */
	List	   *provisionals;	/* Provisional *, likewise */
	TransactionId xid;			/* their transaction */
	bool		wake_at_commit; /* launch plans changed: reconcile */
} SyncKeyedXact;

extern SyncKeyedXact sync_keyed_xact;

extern bool sync_keyed_xact_has_releases(void);
extern List *sync_keyed_xact_handoffs(void);
extern void sync_keyed_xact_handoff_failed(SyncHandoff *h);

/*
 * keyed_xact_record.c: What a transaction does to keyed holds and
 * controllers, recorded as it happens for keyed_xact.c.
 */

extern void sync_keyed_xact_created(SyncEntry **entries, int nentries,
									uint64 request_id);
extern void sync_keyed_xact_row_deleted(const char *name, const char *holder,
										uint64 request_id, SyncKeyedInfo *info);
extern void sync_keyed_xact_resort(SyncEntry *first, uint64 request_id,
								   int32 priority);
extern bool sync_keyed_xact_priority(uint64 request_id, int32 *priority);
extern void sync_keyed_xact_refresh(SyncEntry *entry, uint64 request_id,
									int64 lease_us, TimestampTz expires);
extern SyncClaimOutcome sync_keyed_xact_claim(const char *name,
											  const char *holder,
											  SyncKeyedInfo *info,
											  TimestampTz *granted_at);
extern bool sync_keyed_unwritten_grants(const char *name);
extern void sync_keyed_xact_persisted(SyncEntry *entry, uint64 request_id,
									  uint64 token);
extern KeyedOp *sync_keyed_xact_preempted(SyncEntry *entry, uint64 request_id,
										  TimestampTz old_lease);
extern void sync_keyed_preempt_end(SyncEntry *e, uint64 request_id,
								   TimestampTz old_lease, bool committed);

/*
 * keyed_wait.c: Waiting until a holder's keyed entries are held, for
 * sync_wait().
 */

/*
 * SQLSTATE of sync_wait() when the entry it waits for does not exist or
 * ends while it waits ("syncwf", class SW).
 */
#define ERRCODE_SYNC_NO_REQUEST	MAKE_SQLSTATE('S','W','0','0','2')

/* A wait for the entries of one holder for names[]. */
typedef struct SyncKeyedWait
{
	char	  **names;
	int			nnames;
	const char *holder;
	int64		timeout_us;		/* -1: none */
	TimestampTz deadline;
	bool		until_written;	/* a grant counts once sync_state has it */

	/* per name */
	SyncOutboxItem *grants;		/* its entry and request; the token once held */
	bool	   *held;			/* seen held: its end is a loss */
	bool	   *unwritten;		/* held, not yet written to sync_state */
} SyncKeyedWait;

extern void sync_keyed_wait_begin(SyncKeyedWait *w, char **names, int nnames,
								  const char *holder, int64 timeout_us,
								  bool until_written);
extern void sync_keyed_wait_held(SyncKeyedWait *w);

/*
 * state_heap.c: The hot path of sync_state: a request's row, a release's
 * delete, a hand-off's grant, written through the table access method; a row
 * read for the delete trigger.
 */

extern void sync_state_insert(SyncStateRow *row);
extern List *sync_state_delete(const char *name, const char *holder);
extern bool sync_state_grant(SyncStateRow *row);

/*
 * state_spi.c: The rows of sync_state and sync_controller: table I/O with no
 * knowledge of shared memory.
 */

extern void sync_state_set_priority(const char *name, const char *holder,
									int32 priority);
extern void sync_state_set_admit_limit(const char *name, const char *holder,
									   int32 limit);
extern TimestampTz sync_state_refresh(const char *name, const char *holder,
									  int64 lease_us, bool *found);
extern List *sync_state_read_all(List **controllers);
extern TimestampTz sync_controller_upsert(const char *controller);
extern int	sync_controller_rows_delete(const char *controller,
										bool release_holds);

#endif							/* SYNC_KEYED_KEYED_INTERNAL_H */
