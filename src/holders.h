/*-------------------------------------------------------------------------
 *
 * holders.h
 *		Keyed holds in shared memory (holders.c): entries owned by a holder
 *		key instead of a backend, the holder table that finds them, and
 *		requests, lookups and releases on behalf of a holder.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SYNC_HOLDERS_H
#define SYNC_HOLDERS_H

#include "lock_table.h"
#include "nodes/pg_list.h"
#include "outbox.h"

#define SYNC_HOLDERS_TRANCHE	"syncwf holders"

/*
 * A holder key (Argo's workflow key) with at least one keyed entry.  Lives
 * in a shared hash protected by holders_lock.
 */
typedef struct SyncHolderTag
{
	Oid			dbid;
	char		key[SYNC_KEY_BUFLEN];
} SyncHolderTag;

typedef struct SyncHolder
{
	SyncHolderTag tag;			/* hash key; must be first */
	int32		nentries;
	dlist_head	entries;		/* SyncEntry.holder_link */
} SyncHolder;

typedef struct SyncKeyedInfo
{
	bool		found;
	uint8		state;			/* SyncEntryState */
	int64		token;
	Oid			owner;
	int64		lease_us;
	TimestampTz lease_expires;
	uint64		request_id;
	int			nlocks;
	int			controller;
	bool		persisted;
	SyncEntry  *entry;			/* to name it in a later operation */
} SyncKeyedInfo;

/* Is this keyed entry still the one an operation or a list was about? */
static inline bool
sync_keyed_entry_is(SyncEntry *e, uint64 request_id)
{
	return e->state != SYNC_ENTRY_FREE && e->scope == SYNC_SCOPE_KEYED &&
		e->request_id == request_id;
}

extern Size sync_holders_shmem_size(void);
extern void sync_holders_shmem_request(void);
extern void sync_holders_shmem_init(void);
extern void sync_holders_init(void);
extern LWLock *sync_holders_lock(void);

extern bool sync_keyed_loaded(Oid relid);
extern void sync_keyed_set_loaded(Oid relid);

extern SyncHolder *sync_holder_lookup(const char *key, bool create);
extern SyncEntry *sync_holder_entry(SyncHolder *holder, const char *name);

extern void sync_keyed_entry_info(SyncEntry *e, SyncKeyedInfo *info);
extern bool sync_keyed_lookup(const char *name, const char *holder,
							  SyncKeyedInfo *info);
extern List *sync_keyed_holder_locks(const char *holder);
extern List *sync_keyed_request_locks(SyncEntry *entry, uint64 request_id);
extern bool sync_keyed_mark_release(const char *name, const char *holder,
									uint64 request_id, TransactionId xid,
									SyncKeyedInfo *info);
extern void sync_keyed_release_held(SyncEntry *e, SyncEntry *next,
									uint64 token, TimestampTz since);

typedef bool (*SyncKeyedFilter) (SyncEntry *e, void *arg);
extern int	sync_keyed_purge(SyncKeyedFilter filter, void *arg);

#endif							/* SYNC_HOLDERS_H */
