/*
 * bench/handoff_client.h: what the two hand-off latency clients of
 * scripts/bench.sh (keyed_handoff.c, comparison 7; launch_handoff.c,
 * comparison 9) share: two libpq connections, R (makes the call that frees
 * the slot) and L (LISTENs), and the timed call: R sends one statement, and
 * the result of that call and the notification L expects are awaited
 * together with poll(), so neither delays the other.
 *
 * Each client includes this once, sets handoff_prog, and defines
 * notification_matches(): whether a payload is the one it waits for.
 */
#ifndef HANDOFF_CLIENT_H
#define HANDOFF_CLIENT_H

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libpq-fe.h"

#define TIMEOUT_MS 10000

static const char *handoff_prog;	/* prefixes error messages */
static PGconn *R;				/* makes the calls */
static PGconn *L;				/* LISTENs */

/* Is this payload the notification 'expect' names?  Defined by each client. */
static int	notification_matches(const char *payload, const char *expect);

static void
fail(const char *fmt,...)
{
	va_list		ap;

	fprintf(stderr, "%s: ", handoff_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Run a command; return the first column of the first row (static copy). */
static const char *
run(PGconn *conn, const char *sql)
{
	static char value[256];
	PGresult   *res = PQexec(conn, sql);

	if (PQresultStatus(res) != PGRES_TUPLES_OK && PQresultStatus(res) != PGRES_COMMAND_OK)
		fail("%s: %s", sql, PQerrorMessage(conn));
	value[0] = '\0';
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) > 0)
		snprintf(value, sizeof(value), "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	return value;
}

static PGconn *
connect_db(const char *conninfo, const char *appname)
{
	PGconn	   *conn = PQconnectdb(conninfo);
	char		sql[128];

	if (PQstatus(conn) != CONNECTION_OK)
		fail("connection failed: %s", PQerrorMessage(conn));
	snprintf(sql, sizeof(sql), "SET application_name = '%s'", appname);
	run(conn, sql);
	return conn;
}

/*
 * Read what L has received: with expect NULL, nothing may have come; else
 * at most the one notification expected.  Anything else fails.  Returns
 * whether the expected one came.
 */
static int
drain(const char *expect)
{
	PGnotify   *n;
	int			got = 0;

	if (!PQconsumeInput(L))
		fail("listener: %s", PQerrorMessage(L));
	while ((n = PQnotifies(L)) != NULL)
	{
		if (expect == NULL || got || !notification_matches(n->extra, expect))
			fail("unexpected notification on channel %s: %s", n->relname, n->extra);
		got = 1;
		PQfreemem(n);
	}
	return got;
}

/*
 * The timed part of one hand-off: R sends 'sql', whose one-row result must
 * be 'expect_result'; L must receive the notification 'expect' ('event',
 * for messages).  *latency: from just before sending until L has read the
 * notification; *call: until R has its result (its commit done); both in
 * microseconds.  Fails after TIMEOUT_MS.
 */
static void
timed_call(const char *sql, const char *expect_result, const char *expect,
		   const char *event, double *latency, double *call)
{
	double		t0,
				t_notify = 0,
				t_result = 0;
	int			notified = 0,
				returned = 0;

	t0 = now_us();
	if (!PQsendQuery(R, sql))
		fail("%s: %s", sql, PQerrorMessage(R));
	while (!notified || !returned)
	{
		struct pollfd fds[2];
		int			nfds = 0,
					rc,
					left = TIMEOUT_MS - (int) ((now_us() - t0) / 1000);

		if (left <= 0)
			fail("%s: %s within %d ms", sql,
				 notified ? "the call did not return" : event, TIMEOUT_MS);
		if (!notified)
		{
			fds[nfds].fd = PQsocket(L);
			fds[nfds].events = POLLIN;
			nfds++;
		}
		if (!returned)
		{
			fds[nfds].fd = PQsocket(R);
			fds[nfds].events = POLLIN;
			nfds++;
		}
		rc = poll(fds, nfds, left);
		if (rc < 0 && errno != EINTR)
			fail("poll: %s", strerror(errno));
		if (!notified && drain(expect))
		{
			t_notify = now_us();
			notified = 1;
		}
		if (!returned)
		{
			if (!PQconsumeInput(R))
				fail("%s: %s", sql, PQerrorMessage(R));
			if (!PQisBusy(R))
			{
				PGresult   *res;

				t_result = now_us();
				while ((res = PQgetResult(R)) != NULL)
				{
					if (PQresultStatus(res) != PGRES_TUPLES_OK)
						fail("%s: %s", sql, PQerrorMessage(R));
					if (strcmp(PQgetvalue(res, 0, 0), expect_result) != 0)
						fail("%s returned %s", sql, PQgetvalue(res, 0, 0));
					PQclear(res);
				}
				returned = 1;
			}
		}
	}
	*latency = t_notify - t0;
	*call = t_result - t0;
}

#endif							/* HANDOFF_CLIENT_H */
