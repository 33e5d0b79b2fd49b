/*
 * bench/keyed_handoff.c: comparison 7 of scripts/bench.sh, the hand-off
 * latency of keyed holds: from a sync_release() by one connection until a
 * pending keyed holder's LISTEN connection has received the "granted"
 * NOTIFY.  Built by scripts/bench.sh with libpq (libpq-dev):
 *
 *   cc -O2 -I$(pg_config --includedir) keyed_handoff.c \
 *      -L$(pg_config --libdir) -lpq -o keyed_handoff
 *
 * Usage: keyed_handoff CONNINFO MODE HANDOFFS WARMUP
 *
 *   MODE syncwf: the mutex 'mtx/bench/handoff' is held by keyed holder
 *       'bench/ho/a' and requested by 'bench/ho/b' (pending, at the front of
 *       its queue); connection L (LISTEN syncwf) waits for the event.  One
 *       hand-off: connection R calls sync_release(lock, current holder) and
 *       L receives {"event": "granted", ..., "holder": <the other>}.  Then
 *       R requests the lock again for the holder just released (pending) and
 *       the roles swap.  The grant is made when the release commits; the
 *       syncwf worker writes it to sync_state and sends the NOTIFY in its own
 *       transaction.
 *   MODE sql: the reference contender, the same protocol on a plain table
 *       (bench/keyed_setup.sql): bench_ho_request() / bench_ho_release(),
 *       where the releasing transaction itself grants the next row and
 *       sends the NOTIFY (channel bench_ho): one commit instead of two.
 *
 * Timing (CLOCK_MONOTONIC, this process): t0 just before R sends the release,
 * t1 when L has read the matching notification; the release call's own
 * duration (until R has its result, i.e. the release committed) is recorded
 * too.  R's release and L's notification are awaited together with poll(),
 * so neither delays the other.  The pending request is made, and has
 * committed, before t0, and L has no notification queued at t0.
 *
 * Output: WARMUP unrecorded hand-offs, then one line per hand-off on stdout:
 * "<hand-off microseconds> <release call microseconds>".  Exit status 0 on
 * success; 1 (message on stderr) on any error, an unexpected notification,
 * or a hand-off not announced within 10 s.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libpq-fe.h"

#define LOCK_NAME "mtx/bench/handoff"
#define TIMEOUT_MS 10000

static PGconn *R;				/* requests and releases */
static PGconn *L;				/* LISTENs: the pending holder's connection */
static int	sql_mode;

static void
fail(const char *fmt,...)
{
	va_list		ap;

	fprintf(stderr, "keyed_handoff: ");
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

static const char *
request(const char *holder)
{
	char		sql[256];

	if (sql_mode)
		snprintf(sql, sizeof(sql), "SELECT bench_ho_request('%s', '%s')", LOCK_NAME, holder);
	else
		snprintf(sql, sizeof(sql), "SELECT status FROM sync_request('%s', '%s')", LOCK_NAME, holder);
	return run(R, sql);
}

static void
release_sql(const char *holder, char *sql, size_t len)
{
	snprintf(sql, len, "SELECT %s('%s', '%s')",
			 sql_mode ? "bench_ho_release" : "sync_release", LOCK_NAME, holder);
}

/* Read what L has received; fail on any notification but the expected one. */
static int
drain(const char *expect_holder)
{
	PGnotify   *n;
	int			got = 0;
	char		quoted[64];

	if (!PQconsumeInput(L))
		fail("listener: %s", PQerrorMessage(L));
	snprintf(quoted, sizeof(quoted), "\"%s\"", expect_holder ? expect_holder : "");
	while ((n = PQnotifies(L)) != NULL)
	{
		if (expect_holder == NULL || got ||
			strstr(n->extra, "\"granted\"") == NULL || strstr(n->extra, quoted) == NULL)
			fail("unexpected notification on channel %s: %s", n->relname, n->extra);
		got = 1;
		PQfreemem(n);
	}
	return got;
}

/* One hand-off from 'from' to 'to' (pending); latencies in microseconds. */
static void
handoff(const char *from, const char *to, double *latency, double *call)
{
	char		sql[256];
	const char *status;
	double		t0,
				t_notify = 0,
				t_result = 0;
	int			notified = 0,
				returned = 0;

	status = request(to);
	if (strcmp(status, "pending") != 0)
		fail("request of %s by %s: status '%s', expected 'pending'", LOCK_NAME, to, status);
	drain(NULL);

	release_sql(from, sql, sizeof(sql));
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
			fail("hand-off %s -> %s: %s within %d ms", from, to,
				 notified ? "the release did not return" : "no \"granted\" notification",
				 TIMEOUT_MS);
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
		if (!notified && drain(to))
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
					if (strcmp(PQgetvalue(res, 0, 0), "t") != 0)
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

static PGconn *
connect_db(const char *conninfo, const char *appname)
{
	PGconn	   *conn = PQconnectdb(conninfo);

	if (PQstatus(conn) != CONNECTION_OK)
		fail("connection failed: %s", PQerrorMessage(conn));
	{
		char		sql[128];

		snprintf(sql, sizeof(sql), "SET application_name = '%s'", appname);
		run(conn, sql);
	}
	return conn;
}

int
main(int argc, char **argv)
{
	const char *holders[2] = {"bench/ho/a", "bench/ho/b"};
	int			handoffs,
				warmup,
				cur = 0;
	const char *status;

	if (argc != 5)
	{
		fprintf(stderr, "usage: %s CONNINFO syncwf|sql HANDOFFS WARMUP\n", argv[0]);
		return 2;
	}
	if (strcmp(argv[2], "sql") == 0)
		sql_mode = 1;
	else if (strcmp(argv[2], "syncwf") != 0)
		fail("unknown mode %s", argv[2]);
	handoffs = atoi(argv[3]);
	warmup = atoi(argv[4]);
	if (handoffs < 1 || warmup < 0)
		fail("HANDOFFS must be > 0 and WARMUP >= 0");

	R = connect_db(argv[1], "bench_ho_releaser");
	L = connect_db(argv[1], "bench_ho_listener");
	run(L, sql_mode ? "LISTEN bench_ho" : "LISTEN syncwf");

	status = request(holders[cur]);
	if (strcmp(status, "held") != 0)
		fail("first request of %s by %s: status '%s', expected 'held'", LOCK_NAME, holders[cur], status);

	for (int i = 0; i < warmup + handoffs; i++)
	{
		double		latency,
					call;

		handoff(holders[cur], holders[1 - cur], &latency, &call);
		cur = 1 - cur;
		if (i >= warmup)
			printf("%.0f %.0f\n", latency, call);
	}

	{
		char		sql[256];

		release_sql(holders[cur], sql, sizeof(sql));
		if (strcmp(run(R, sql), "t") != 0)
			fail("final release of %s by %s failed", LOCK_NAME, holders[cur]);
	}
	PQfinish(R);
	PQfinish(L);
	return fflush(stdout) == 0 ? 0 : 1;
}
