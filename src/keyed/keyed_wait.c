/*-------------------------------------------------------------------------
 *
 * keyed_wait.c
 *		Waiting until a holder's keyed entries are held, for sync_wait():
 *		one statement that blocks until a keyed request is granted, for
 *		clients that cannot LISTEN (a transaction pooler between them and
 *		the server) or would rather not.
 *
 * The entries are found once, by lock name and holder, and then followed
 * by their request id, which is never reused: an entry that is freed
 * (released, withdrawn, lost) is never mistaken for a later request of the
 * same holder.  The waiter joins its holder's wake-ups (holder_wakeups.c) before
 * its first look, and sleeps on its latch (client_wait.c, which also ends
 * the backend if its client goes away) until a grant or a freed entry of
 * that holder sets it: holder_table.c reports both from its hooks, and
 * keyed_xact.c a grant written to sync_state when that commits.  Nothing
 * polls.  The wait itself changes nothing in shared memory or the tables,
 * so an error (timeout, cancel, statement_timeout) leaves nothing behind
 * but the wake-up slot, which is given back on every way out.
 *
 * Locking: each look takes holders_lock (shared), which keeps keyed entries
 * from being freed, then the entry's partition lock (shared).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "common/int.h"
#include "miscadmin.h"
#include "utils/timestamp.h"

#include "keyed/keyed_internal.h"

typedef enum SyncWaitState
{
	SYNC_WAIT_PENDING,
	SYNC_WAIT_HELD,
	SYNC_WAIT_GONE
} SyncWaitState;

/*
 * Find the holder's entry of each lock; SW002 if one is missing.  An entry
 * another transaction has not committed yet, or one this transaction is
 * releasing, is missing too.  until_written: a grant counts only once it
 * is in sync_state (the wait then also ends at the commit that writes it).
 */
void
sync_keyed_wait_begin(SyncKeyedWait *w, char **names, int nnames,
					  const char *holder, int64 timeout_us, bool until_written)
{
	w->names = names;
	w->nnames = nnames;
	w->holder = holder;
	w->timeout_us = timeout_us;
	w->until_written = until_written;
	w->deadline = 0;
	if (timeout_us >= 0 &&
		pg_add_s64_overflow(GetCurrentTimestamp(), timeout_us, &w->deadline))
		w->deadline = PG_INT64_MAX; /* later than any clock reading */
	w->grants = palloc0(sizeof(SyncOutboxItem) * nnames);
	w->held = palloc0(sizeof(bool) * nnames);
	w->unwritten = palloc0(sizeof(bool) * nnames);

	for (int i = 0; i < nnames; i++)
	{
		SyncKeyedInfo info;

		if (!sync_keyed_lookup(names[i], holder, &info))
			ereport(ERROR,
					(errcode(ERRCODE_SYNC_NO_REQUEST),
					 errmsg("holder \"%s\" has no request for syncwf lock \"%s\"",
							holder, names[i]),
					 errdetail("sync_wait() waits for a request that sync_request() made and its transaction committed."),
					 errhint("Request the lock with sync_request() first.")));
		w->grants[i].entry = info.entry;
		w->grants[i].request_id = info.request_id;
	}
}

/* Where the entry of one name is now. */
static SyncWaitState
sync_keyed_wait_state(SyncOutboxItem *g, bool *unwritten)
{
	SyncEntry  *e = g->entry;
	SyncWaitState state = SYNC_WAIT_GONE;

	LWLockAcquire(sync_holders_lock(), LW_SHARED);
	if (sync_keyed_entry_is(e, g->request_id))
	{
		LWLock	   *partition = sync_partition_lock(sync_entry_lock(e)->hashcode);

		LWLockAcquire(partition, LW_SHARED);
		if (e->state == SYNC_ENTRY_HELD)
		{
			state = SYNC_WAIT_HELD;
			g->token = e->token;
			/* a grant in a transaction still open is written after it */
			*unwritten = !e->persisted && !TransactionIdIsValid(e->created_xid);
		}
		else
			state = SYNC_WAIT_PENDING;
		LWLockRelease(partition);
	}
	LWLockRelease(sync_holders_lock());
	return state;
}

static void
sync_report_gone(SyncKeyedWait *w, int i)
{
	if (w->held[i])
		ereport(ERROR,
				(errcode(ERRCODE_SYNC_NO_REQUEST),
				 errmsg("keyed hold \"%s\" of holder \"%s\" was lost while waiting",
						w->names[i], w->holder),
				 errdetail("It was granted, then released or taken away (a lease that ran out, a forced release, a forgotten controller, a deleted row) before the other locks of the wait were granted."),
				 errhint("Request it again with sync_request() if it is still needed.")));
	ereport(ERROR,
			(errcode(ERRCODE_SYNC_NO_REQUEST),
			 errmsg("keyed request \"%s\" of holder \"%s\" was withdrawn while waiting",
					w->names[i], w->holder),
			 errdetail("Its row of sync_state was deleted (sync_release(), sync_release_holder(), sync_force_release(), sync_forget_controller() or a DELETE) before it was granted."),
			 errhint("Request it again with sync_request() if it is still needed.")));
}

/* 55P03, naming the first lock not held and how many others are not. */
static void
sync_report_wait_timeout(SyncKeyedWait *w, int first, int npending)
{
	char	   *within = psprintf(INT64_FORMAT " ms", w->timeout_us / 1000);

	if (npending == 1)
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("could not obtain syncwf lock \"%s\" for holder \"%s\" within %s",
						w->names[first], w->holder, within),
				 errdetail("The request stays queued."),
				 errhint("Call sync_wait() again to go on waiting, or sync_release() to withdraw the request.")));
	ereport(ERROR,
			(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
			 errmsg("could not obtain syncwf locks \"%s\" and %d more for holder \"%s\" within %s",
					w->names[first], npending - 1, w->holder, within),
			 errdetail("The requests stay queued."),
			 errhint("Call sync_wait() again to go on waiting, or sync_release() to withdraw the requests.")));
}

/*
 * Look at every entry: SW002 if one is gone.  Returns how many are not
 * held yet, and in *first the first of them.
 */
static int
sync_keyed_wait_look(SyncKeyedWait *w, int *first)
{
	int			npending = 0;

	*first = -1;
	for (int i = 0; i < w->nnames; i++)
		switch (sync_keyed_wait_state(&w->grants[i], &w->unwritten[i]))
		{
			case SYNC_WAIT_GONE:
				sync_report_gone(w, i);
				break;
			case SYNC_WAIT_HELD:
				w->held[i] = true;
				if (!(w->until_written && w->unwritten[i]))
					break;
				/* held, but not written yet: wait for that */
				/* FALLTHROUGH */
			case SYNC_WAIT_PENDING:
				if (npending++ == 0)
					*first = i;
				break;
		}
	return npending;
}

/*
 * Sleep until every entry is held at one look, then return with the
 * tokens in w->grants[] and w->unwritten[] saying which grants sync_state
 * does not have yet.  SW002 if an entry ends first; 55P03 at the deadline
 * (the requests stay queued).
 */
void
sync_keyed_wait_held(SyncKeyedWait *w)
{
	sync_wakeup_join(MyDatabaseId, w->holder);
	PG_TRY();
	{
		for (;;)
		{
			int			first;
			int			npending = sync_keyed_wait_look(w, &first);
			long		sleep_ms = -1;

			if (npending == 0)
				break;
			if (w->timeout_us >= 0)
			{
				TimestampTz now = GetCurrentTimestamp();

				if (now >= w->deadline)
					sync_report_wait_timeout(w, first, npending);
				/* round up, so that we never wake before the deadline */
				sleep_ms = (long) Min((w->deadline - now + 999) / 1000, (int64) INT_MAX);
			}
			sync_sleep(sleep_ms, sync_wait_event(SYNC_WAIT_KEYED));
		}
	}
	PG_FINALLY();
	{
		sync_wakeup_leave();
	}
	PG_END_TRY();
}
