/*
 * bench/launch_handoff.c: comparison 9 of scripts/bench.sh, the hand-off
 * latency of a launch plan's slot: from the terminal sync_execution_update()
 * of the execution holding the only slot until the LISTEN connection has
 * received the "promoted" NOTIFY of the next pending execution, which is
 * QUEUED by then.  Built by scripts/bench.sh with libpq (libpq-dev):
 *
 *   cc -O2 -I$(pg_config --includedir) launch_handoff.c \
 *      -L$(pg_config --libdir) -lpq -o launch_handoff
 *
 * Usage: launch_handoff CONNINFO PREFIX HANDOFFS WARMUP
 *
 * The launch plan bench/dev/lp9 version v1 must be registered with
 * max_concurrency 1 and behavior WAIT, with no live execution.  Connection R
 * creates execution PREFIX/0 (QUEUED: it takes the slot) and moves it to
 * RUNNING; connection L runs LISTEN syncwf_launch.  One hand-off i:
 *   - R creates PREFIX/i: PENDING (the slot is taken), committed;
 *   - t0; R sends sync_execution_update(PREFIX/<i-1>, 'SUCCEEDED')
 *     (autocommit); L waits for {"event": "promoted", "execution_id":
 *     "PREFIX/i", ...} on channel syncwf_launch; R's call must return
 *     SUCCEEDED;
 *   - then (untimed) R checks that sync_execution says PREFIX/i is QUEUED and
 *     moves it to RUNNING: it is the running execution of the next hand-off.
 * The update's own transaction hands the slot over: at its pre-commit it
 * writes the pending execution's grant to sync_state, sets the phase QUEUED,
 * records the PROMOTED event and queues the NOTIFY; its commit releases the
 * slot to that execution and sends the NOTIFY, so the notification arrives
 * only once the phase is QUEUED.
 *
 * Timing (CLOCK_MONOTONIC, this process): t0 just before R sends the update,
 * t1 when L has read the matching notification; the update call's own
 * duration (until R has its result, i.e. its commit done) is recorded too.
 * R's update and L's notification are awaited together with poll(), so
 * neither delays the other.  The pending execution is created, and has
 * committed, before t0, and L has no notification queued at t0.
 *
 * The connections and the timed call are bench/handoff_client.h's (shared
 * with bench/keyed_handoff.c).
 *
 * Output: WARMUP unrecorded hand-offs, then one line per hand-off on stdout:
 * "<hand-off microseconds> <update call microseconds>".  At the end the
 * last execution is moved to SUCCEEDED.  Exit status 0 on success; 1
 * (message on stderr) on any error, an unexpected notification or phase, or
 * a hand-off not announced within 10 s.
 */
#include "handoff_client.h"

#define PLAN_ARGS "'bench', 'dev', 'lp9', 'v1'"

static void
create(const char *id, const char *expect)
{
	char		sql[512];
	const char *phase;

	snprintf(sql, sizeof(sql),
			 "SELECT phase FROM sync_execution_create(" PLAN_ARGS ", '%s')", id);
	phase = run(R, sql);
	if (strcmp(phase, expect) != 0)
		fail("creating %s: phase '%s', expected '%s'", id, phase, expect);
}

static void
update(const char *id, const char *phase)
{
	char		sql[512];
	const char *got;

	snprintf(sql, sizeof(sql), "SELECT sync_execution_update('%s', '%s')", id, phase);
	got = run(R, sql);
	if (strcmp(got, phase) != 0)
		fail("%s returned '%s'", sql, got);
}

/* The promotion of 'id': {"event": "promoted", "execution_id": "<id>", ...} */
static int
notification_matches(const char *payload, const char *id)
{
	char		quoted[300];

	snprintf(quoted, sizeof(quoted), "\"execution_id\": \"%s\"", id);
	return strstr(payload, "\"event\": \"promoted\"") != NULL && strstr(payload, quoted) != NULL;
}

/* One hand-off from 'from' (running) to 'to' (pending); microseconds. */
static void
handoff(const char *from, const char *to, double *latency, double *call)
{
	char		sql[512];
	char		event[300];

	create(to, "PENDING");
	drain(NULL);

	snprintf(sql, sizeof(sql), "SELECT sync_execution_update('%s', 'SUCCEEDED')", from);
	snprintf(event, sizeof(event), "no \"promoted\" notification for %s", to);
	timed_call(sql, "SUCCEEDED", to, event, latency, call);

	/* untimed: the promoted execution is QUEUED; it runs next */
	snprintf(sql, sizeof(sql),
			 "SELECT phase FROM sync_execution WHERE execution_id = '%s'", to);
	{
		const char *phase = run(R, sql);

		if (strcmp(phase, "QUEUED") != 0)
			fail("after its \"promoted\" notification, %s is '%s', expected 'QUEUED'", to, phase);
	}
	update(to, "RUNNING");
}

int
main(int argc, char **argv)
{
	const char *prefix;
	char		prev[256],
				next[256];
	int			handoffs,
				warmup;

	handoff_prog = "launch_handoff";
	if (argc != 5)
	{
		fprintf(stderr, "usage: %s CONNINFO PREFIX HANDOFFS WARMUP\n", argv[0]);
		return 2;
	}
	prefix = argv[2];
	if (strlen(prefix) > 200 || strchr(prefix, '\'') != NULL)
		fail("PREFIX must be at most 200 bytes, without quotes");
	handoffs = atoi(argv[3]);
	warmup = atoi(argv[4]);
	if (handoffs < 1 || warmup < 0)
		fail("HANDOFFS must be > 0 and WARMUP >= 0");

	R = connect_db(argv[1], "bench_lo_updater");
	L = connect_db(argv[1], "bench_lo_listener");
	run(L, "LISTEN syncwf_launch");

	snprintf(prev, sizeof(prev), "%s/0", prefix);
	create(prev, "QUEUED");
	update(prev, "RUNNING");

	for (int i = 1; i <= warmup + handoffs; i++)
	{
		double		latency,
					call;

		snprintf(next, sizeof(next), "%s/%d", prefix, i);
		handoff(prev, next, &latency, &call);
		memcpy(prev, next, sizeof(prev));
		if (i > warmup)
			printf("%.0f %.0f\n", latency, call);
	}

	update(prev, "SUCCEEDED");
	drain(NULL);
	PQfinish(R);
	PQfinish(L);
	return fflush(stdout) == 0 ? 0 : 1;
}
