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
 * (WL_SOCKET_CLOSED, as pq_check_connection() does) and ends the backend
 * the way PostgreSQL ends one whose client is lost: ClientConnectionLost
 * makes the next CHECK_FOR_INTERRUPTS() raise FATAL "connection to client
 * lost", and the exit callbacks of each module withdraw what the backend
 * was waiting for.  Wake-up is immediate: the kernel reports the closed
 * socket, nothing polls.
 *
 * It sleeps on a wait set of its own (latch, postmaster death, and the
 * client socket for WL_SOCKET_CLOSED only), made at the first sleep and
 * kept until the process exits, rather than on the backend's wait set for
 * its client (FeBeWaitSet), whose socket event waits for WL_SOCKET_READABLE
 * between statements: changing that event for each sleep and back for the
 * next read would cost two epoll_ctl() calls per wait, which a blocked
 * pg_advisory_lock() does not make.  The kernel lets one socket be in two
 * epoll sets.
 *
 * Where there is no client socket (a background worker, a single-user
 * backend) or the platform cannot report a closed socket
 * (WaitEventSetCanReportClosed(); Windows), it sleeps on the latch alone.
 *
 * State: the wait set, per process.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/latch.h"

#include "core/core.h"

/*
 * The client socket.  Port (libpq/libpq-be.h) cannot be included here: it
 * includes the GSSAPI headers when the server was built with GSSAPI (as
 * Debian's is), and the server's development package does not bring them.
 * Its first member is the socket in every major syncwf supports, and a
 * pointer to a structure points to its first member.
 */
static pgsocket
sync_client_socket(void)
{
	return *(const pgsocket *) MyProcPort;
}

/* Latch, postmaster death and the client's socket; NULL until needed. */
static WaitEventSet *client_wait_set = NULL;

/*
 * Can this backend watch its client's socket while it sleeps?  A backend
 * serving a client has a Port (miscadmin.h), which lasts until the process
 * exits; a background worker has none.
 */
static bool
sync_can_watch_client(void)
{
	return MyProcPort != NULL && sync_client_socket() != PGINVALID_SOCKET &&
		WaitEventSetCanReportClosed();
}

static WaitEventSet *
sync_client_wait_set(void)
{
	if (client_wait_set == NULL)
	{
		WaitEventSet *set = sync_create_session_wait_set(3);

		(void) AddWaitEventToSet(set, WL_SOCKET_CLOSED, sync_client_socket(), NULL, NULL);
		(void) AddWaitEventToSet(set, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
		(void) AddWaitEventToSet(set, WL_POSTMASTER_DEATH, PGINVALID_SOCKET, NULL, NULL);
		client_wait_set = set;
	}
	return client_wait_set;
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
		WaitEvent	events[3];
		int			n;

		n = WaitEventSetWait(sync_client_wait_set(), timeout_ms, events,
							 lengthof(events), wait_event_info);
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
