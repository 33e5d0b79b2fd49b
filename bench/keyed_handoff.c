/*
 * bench/keyed_handoff.c: comparison 7 of scripts/bench.sh, the hand-off
 * latency of keyed holds: from a sync_release() by one connection until a
 * pending keyed holder's LISTEN connection has received the "granted"
 * NOTIFY, or until its sync_wait() has returned.  Built by scripts/bench.sh
 * with libpq (libpq-dev):
 *
 *   cc -O2 -I$(pg_config --includedir) keyed_handoff.c \
 *      -L$(pg_config --libdir) -lpq -o keyed_handoff
 *
 * Usage: keyed_handoff CONNINFO MODE HANDOFFS WARMUP   (MODE: syncwf, wait, sql)
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
 *   MODE wait: the same hand-offs, but the pending holder learns of its
 *       grant from a blocking call instead of LISTEN: before each hand-off,
 *       connection L sends SELECT sync_wait(lock, <pending holder>), and the
 *       release is sent only once L's backend sleeps in it (pg_stat_activity
 *       shows wait_event_type Extension); the hand-off ends when L has
 *       sync_wait's result, the token.  sync_wait is woken by the grant at
 *       the release's commit and writes the grant itself (unless the worker
 *       was first), in its own commit.
 *   MODE sql: the reference contender, the same protocol on a plain table
 *       (bench/keyed_setup.sql): bench_ho_request() / bench_ho_release(),
 *       where the releasing transaction itself grants the next row and
 *       sends the NOTIFY (channel bench_ho): one commit instead of two.
 *
 * Timing (CLOCK_MONOTONIC, this process): t0 just before R sends the release,
 * t1 when L has read the matching notification (MODE wait: when L has the
 * result of its sync_wait); the release call's own duration (until R has
 * its result, i.e. the release committed) is recorded too.  R's release and
 * L's notification (or result) are awaited together with poll(), so neither
 * delays the other.  The pending request is made, and has
 * committed, before t0, and L has no notification queued at t0.  The
 * connections and the timed call are bench/handoff_client.h's (shared with
 * bench/launch_handoff.c).
 *
 * Output: WARMUP unrecorded hand-offs, then one line per hand-off on stdout:
 * "<hand-off microseconds> <release call microseconds>".  Exit status 0 on
 * success; 1 (message on stderr) on any error, an unexpected notification,
 * or a hand-off not announced within 10 s.
 */
#include "handoff_client.h"

#define LOCK_NAME "mtx/bench/handoff"

static int	sql_mode;
static int	wait_mode;
static char listener_pid[32];	/* MODE wait: L's backend */

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

/* The grant to 'holder': {"event": "granted", ..., "holder": "<holder>", ...} */
static int
notification_matches(const char *payload, const char *holder)
{
	char		quoted[64];

	snprintf(quoted, sizeof(quoted), "\"%s\"", holder);
	return strstr(payload, "\"granted\"") != NULL && strstr(payload, quoted) != NULL;
}

/*
 * MODE wait: L sends sync_wait() for 'to'; return once L's backend sleeps
 * in it (R polls pg_stat_activity), so that the release finds it waiting.
 */
static void
start_wait(const char *to)
{
	char		sql[256];
	double		t0 = now_us();

	snprintf(sql, sizeof(sql), "SELECT sync_wait('%s', '%s')", LOCK_NAME, to);
	if (!PQsendQuery(L, sql))
		fail("%s: %s", sql, PQerrorMessage(L));
	snprintf(sql, sizeof(sql),
			 "SELECT count(*) FROM pg_stat_activity WHERE pid = %s"
			 " AND state = 'active' AND wait_event_type = 'Extension'",
			 listener_pid);
	while (strcmp(run(R, sql), "1") != 0)
	{
		if (now_us() - t0 > TIMEOUT_MS * 1000.0)
			fail("sync_wait of %s did not start waiting within %d ms", to, TIMEOUT_MS);
		if (!PQconsumeInput(L))
			fail("sync_wait: %s", PQerrorMessage(L));
		if (!PQisBusy(L))
			fail("sync_wait of %s returned before the release", to);
	}
}

/*
 * MODE wait, the timed part: R sends the release 'sql' (result "t"); L's
 * sync_wait must return a token.  *latency: until L has it; *call: until R
 * has its result; microseconds from just before the release is sent.
 */
static void
timed_wait_call(const char *sql, const char *to, double *latency, double *call)
{
	PGconn	   *conns[2] = {R, L};
	double		t0 = now_us(),
				done_at[2] = {0, 0};
	int			done[2] = {0, 0};

	if (!PQsendQuery(R, sql))
		fail("%s: %s", sql, PQerrorMessage(R));
	while (!done[0] || !done[1])
	{
		struct pollfd fds[2];
		int			nfds = 0,
					rc,
					left = TIMEOUT_MS - (int) ((now_us() - t0) / 1000);

		if (left <= 0)
			fail("%s: %s within %d ms", sql,
				 done[1] ? "the call did not return" : "sync_wait did not return", TIMEOUT_MS);
		for (int c = 0; c < 2; c++)
			if (!done[c])
			{
				fds[nfds].fd = PQsocket(conns[c]);
				fds[nfds].events = POLLIN;
				nfds++;
			}
		rc = poll(fds, nfds, left);
		if (rc < 0 && errno != EINTR)
			fail("poll: %s", strerror(errno));
		for (int c = 0; c < 2; c++)
		{
			PGresult   *res;

			if (done[c])
				continue;
			if (!PQconsumeInput(conns[c]))
				fail("%s: %s", c == 0 ? sql : "sync_wait", PQerrorMessage(conns[c]));
			if (PQisBusy(conns[c]))
				continue;
			done_at[c] = now_us();
			done[c] = 1;
			while ((res = PQgetResult(conns[c])) != NULL)
			{
				if (PQresultStatus(res) != PGRES_TUPLES_OK)
					fail("%s: %s", c == 0 ? sql : "sync_wait", PQerrorMessage(conns[c]));
				if (c == 0 && strcmp(PQgetvalue(res, 0, 0), "t") != 0)
					fail("%s returned %s", sql, PQgetvalue(res, 0, 0));
				if (c == 1 && PQgetisnull(res, 0, 0))
					fail("sync_wait of %s returned NULL", to);
				PQclear(res);
			}
		}
	}
	*latency = done_at[1] - t0;
	*call = done_at[0] - t0;
}

/* One hand-off from 'from' to 'to' (pending); latencies in microseconds. */
static void
handoff(const char *from, const char *to, double *latency, double *call)
{
	char		sql[256];
	char		event[128];
	const char *status;

	status = request(to);
	if (strcmp(status, "pending") != 0)
		fail("request of %s by %s: status '%s', expected 'pending'", LOCK_NAME, to, status);

	release_sql(from, sql, sizeof(sql));
	if (wait_mode)
	{
		start_wait(to);
		timed_wait_call(sql, to, latency, call);
		return;
	}
	drain(NULL);
	snprintf(event, sizeof(event), "no \"granted\" notification for %s", to);
	timed_call(sql, "t", to, event, latency, call);
}

int
main(int argc, char **argv)
{
	const char *holders[2] = {"bench/ho/a", "bench/ho/b"};
	int			handoffs,
				warmup,
				cur = 0;
	const char *status;

	handoff_prog = "keyed_handoff";
	if (argc != 5)
	{
		fprintf(stderr, "usage: %s CONNINFO syncwf|wait|sql HANDOFFS WARMUP\n", argv[0]);
		return 2;
	}
	if (strcmp(argv[2], "sql") == 0)
		sql_mode = 1;
	else if (strcmp(argv[2], "wait") == 0)
		wait_mode = 1;
	else if (strcmp(argv[2], "syncwf") != 0)
		fail("unknown mode %s", argv[2]);
	handoffs = atoi(argv[3]);
	warmup = atoi(argv[4]);
	if (handoffs < 1 || warmup < 0)
		fail("HANDOFFS must be > 0 and WARMUP >= 0");

	R = connect_db(argv[1], "bench_ho_releaser");
	L = connect_db(argv[1], "bench_ho_listener");
	if (wait_mode)
		snprintf(listener_pid, sizeof(listener_pid), "%s", run(L, "SELECT pg_backend_pid()"));
	else
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
