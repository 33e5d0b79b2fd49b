/*-------------------------------------------------------------------------
 *
 * client_wait.c
 *		Sleeping on this process's latch while also noticing that its client
 *		went away, for every wait of syncwf that can last (a blocked
 *		sync_acquire, a sync_wait).
 *
 * A backend that sleeps in WaitLatch() does not look at its client socket:
 * PostgreSQL notices a vanished client only when it next reads or writes,
 * or every client_connection_check_interval (off by default).  A waiter
 * whose client was killed, or closed its connection, would keep its place
 * in a queue until its turn came, and hold up everyone behind it.  So
 * sync_sleep() also waits for the client socket to be closed
 * (WL_SOCKET_CLOSED, as pq_check_connection() does), on the backend's own
 * wait set for its client (FeBeWaitSet: socket, latch, postmaster death),
 * and ends the backend the way PostgreSQL ends one whose client is lost:
 * ClientConnectionLost makes the next CHECK_FOR_INTERRUPTS() raise FATAL
 * "connection to client lost", and the exit callbacks of each module
 * withdraw what the backend was waiting for.  Wake-up is immediate: the
 * kernel reports the closed socket, nothing polls.
 *
 * Where there is no client socket (a background worker, a single-user
 * backend) or the platform cannot report a closed socket
 * (WaitEventSetCanReportClosed(); Windows), it sleeps on the latch alone.
 *
 * No state of its own.
 *
 * Layer 0: calls no other file of syncwf.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/latch.h"

#include "client_wait.h"

/*
 * From libpq/libpq.h, which cannot be included here: it includes
 * libpq/libpq-be.h, which needs the GSSAPI headers when the server was
 * built with GSSAPI (as Debian's is), and the server's development package
 * does not bring them.  The declaration and the positions are the same in
 * every major syncwf supports.
 */
extern PGDLLIMPORT WaitEventSet *FeBeWaitSet;

#define FeBeWaitSetSocketPos 0
#define FeBeWaitSetNEvents 3

/*
 * Can this backend watch its client's socket while it sleeps?  A backend
 * serving a client has a Port (miscadmin.h) and the wait set for it, and
 * both last until the process exits; a background worker has neither.
 */
static bool
sync_can_watch_client(void)
{
	return MyProcPort != NULL && FeBeWaitSet != NULL &&
		WaitEventSetCanReportClosed();
}

/*
 * Sleep until this process's latch is set, timeout_ms passes (-1: no
 * timeout) or the client closes its connection; then reset the latch and
 * process interrupts.  A closed client connection ends the backend there,
 * with FATAL, as a lost client does in PostgreSQL; every other interrupt
 * (cancel, statement_timeout, termination) is processed as usual.  Callers
 * check what they wait for before each call (the latch protocol).
 */
void
sync_sleep(long timeout_ms, uint32 wait_event_info)
{
	if (sync_can_watch_client())
	{
		WaitEvent	events[FeBeWaitSetNEvents];
		int			n;

		/*
		 * Every wait on FeBeWaitSet sets the socket's events it needs first
		 * (pq_check_connection() changes them the same way, without
		 * restoring them).
		 */
		ModifyWaitEvent(FeBeWaitSet, FeBeWaitSetSocketPos, WL_SOCKET_CLOSED, NULL);
		n = WaitEventSetWait(FeBeWaitSet, timeout_ms, events, lengthof(events),
							 wait_event_info);
		for (int i = 0; i < n; i++)
		{
			if (events[i].events & WL_POSTMASTER_DEATH)
				ereport(FATAL,
						(errcode(ERRCODE_ADMIN_SHUTDOWN),
						 errmsg("terminating connection due to unexpected postmaster exit")));
			if (events[i].events & WL_SOCKET_CLOSED)
			{
				/* what ProcessInterrupts() does for a lost client */
				ClientConnectionLost = true;
				InterruptPending = true;
			}
		}
	}
	else
		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_EXIT_ON_PM_DEATH |
						 (timeout_ms >= 0 ? WL_TIMEOUT : 0),
						 timeout_ms, wait_event_info);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}
