# Bounded randomized stress test of the syncwf engine.
#
# One node with a deliberately small lock table (syncwf.max_locks = 200) and
# entry pool (syncwf.max_entries = 260), so that cached semaphores are
# evicted and the "table full" / "pool full" paths (53200) are hit too.
#
# Phase 1: pgbench, 8 clients, a fixed number of transactions each, with a
#   custom script that randomly mixes single and multi-lock acquires (with
#   short random timeouts and random priorities), try-acquires, session- and
#   transaction-scope holds inside BEGIN ... COMMIT / ROLLBACK with
#   savepoints, sync_release / sync_release_all, churn over 300 semaphores
#   (eviction), bulk requests of 10-64 mutexes (capacity errors), and limit
#   changes by client 0 (UPDATEs raising and lowering limits, a row deleted
#   and inserted again, the table rewritten through TRUNCATE; some rolled
#   back).  Every expected error (55P03 timeout, 53200 capacity, 57014
#   cancel, 42704 for the deleted row) is caught in plpgsql, so no client
#   may abort.  Every granted token is recorded.
# Phase 2: the same workload, with a statement_timeout shorter than some
#   waits, while a killer cancels (pg_cancel_backend) and terminates
#   (pg_terminate_backend) random pgbench backends, a fixed number of times;
#   pgbench is restarted whenever all its clients are gone.
#
# During both phases a checker polls one consistent snapshot of the lock
# table for invariants: holders never exceed the largest limit a lock ever
# had (1 for a mutex), the limit-0 semaphore is never held, no session holds
# and waits for the same lock, a waiting request is queued on exactly its
# request_size locks and holds none of them, queues are ordered by priority,
# a single-lock request at the front of a queue never waits while its lock
# has a free slot (no lost wakeup), no two holds share a token, and no
# entry belongs to a backend that has exited.
#
# Afterwards: nothing is left in sync_locks / sync_holders / sync_waiters,
# every lock can be try-acquired at once, every semaphore admits exactly its
# committed sync_limit (no stale cached limit), recorded tokens are unique,
# increase per mutex in grant order and per session and lock, and the log
# shows no crash, no assertion failure and only the expected errors.
#
# The seed (SYNCWF_STRESS_SEED, default fixed) drives pgbench's random
# choices and the killer's; it is printed.  Iteration counts are fixed; no
# assertion depends on timing.
use strict;
use warnings FATAL => 'all';

use IPC::Run;
use Time::HiRes qw(sleep time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $seed = $ENV{SYNCWF_STRESS_SEED} // 424242;
die "SYNCWF_STRESS_SEED must be a non-negative integer\n" unless $seed =~ /^\d+$/;
diag("005_stress: random seed $seed (set SYNCWF_STRESS_SEED to replay)");
srand($seed);

my $CLIENTS = 8;
my $XACTS_PHASE1 = 1500;    # per client
my $KILL_ACTIONS = 100;     # phase 2: cancels + terminates
my $PHASE2_CLIENTS = 6;
# statement_timeout (57014) also ends some waits before their own timeout
my $PHASE2_OPTIONS = '-c statement_timeout=40ms';
my $T0 = time();

my $node = PostgreSQL::Test::Cluster->new('stress');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'syncwf'");
$node->append_conf('postgresql.conf', "max_connections = 40");
$node->append_conf('postgresql.conf', "syncwf.max_locks = 200");
$node->append_conf('postgresql.conf', "syncwf.max_entries = 260");
$node->append_conf('postgresql.conf', "log_error_verbosity = verbose");
# Cluster.pm logs every statement; the workload runs tens of thousands.
$node->append_conf('postgresql.conf', "log_statement = none");
$node->start;

my $log_offset = -s $node->logfile;

sub sq { return $node->safe_psql('postgres', $_[0]); }

# --- schema: limits, helpers, the checker ------------------------------------
sq(q{
CREATE EXTENSION syncwf;

-- 5 mutexes and 6 semaphores: limits 1, 2, 3, 0, one that changes (tog)
-- and one whose row is deleted and inserted again (del, limit 2)
INSERT INTO sync_limit VALUES ('st/s1', 1), ('st/s2', 2), ('st/s3', 3),
                              ('st/zero', 0), ('st/tog', 2), ('st/del', 2);
-- 300 semaphores for cache churn (more than syncwf.max_locks); the limits
-- of ev/1 .. ev/20 change during the run, the others stay (k % 3) + 1
INSERT INTO sync_limit SELECT 'ev/' || k, k % 3 + 1 FROM generate_series(1, 300) k;

CREATE UNLOGGED TABLE stress_tokens (
    id        bigserial PRIMARY KEY,
    lock_name text   NOT NULL,
    token     bigint NOT NULL,
    pid       int    NOT NULL,
    UNIQUE (lock_name, token, pid)
);
CREATE UNLOGGED TABLE stress_outcomes (kind text, outcome text);

CREATE FUNCTION stress_name(i int) RETURNS text IMMUTABLE LANGUAGE sql AS $$
    SELECT (ARRAY['mtx/st/m0', 'mtx/st/m1', 'mtx/st/m2', 'mtx/st/m3', 'mtx/st/m4',
                  'sem/st/s1', 'sem/st/s2', 'sem/st/s3', 'sem/st/zero', 'sem/st/tog',
                  'sem/st/del'])[i % 11 + 1]
$$;

-- distinct names for the given indexes, in first-appearance order
CREATE FUNCTION stress_names(VARIADIC idx int[]) RETURNS text[] LANGUAGE sql AS $$
    SELECT array_agg(n ORDER BY o)
      FROM (SELECT stress_name(i) AS n, min(o) AS o
              FROM unnest(idx) WITH ORDINALITY AS u(i, o) GROUP BY 1) s
$$;

-- the most holders a lock may ever have: its largest limit of the run
CREATE FUNCTION stress_cap(name text) RETURNS int IMMUTABLE LANGUAGE sql AS $$
    SELECT CASE
        WHEN name LIKE 'mtx/%' THEN 1
        WHEN name = 'sem/st/s1' THEN 1
        WHEN name = 'sem/st/s2' THEN 2
        WHEN name = 'sem/st/s3' THEN 3
        WHEN name = 'sem/st/zero' THEN 0
        WHEN name = 'sem/st/tog' THEN 3
        WHEN name = 'sem/st/del' THEN 2
        WHEN name ~ '^sem/ev/[0-9]+$' THEN
             CASE WHEN substr(name, 8)::int <= 20 THEN 3 ELSE substr(name, 8)::int % 3 + 1 END
    END
$$;
-- does the lock's limit stay the same all run long?
CREATE FUNCTION stress_fixed(name text) RETURNS bool IMMUTABLE LANGUAGE sql AS $$
    SELECT NOT (name = 'sem/st/tog' OR (name ~ '^sem/ev/[0-9]+$' AND substr(name, 8)::int <= 20))
$$;

-- One acquire of any kind.  Records granted tokens (while they are held),
-- optionally releases right away, and catches the expected errors.
CREATE FUNCTION stress_acquire(names text[], prio int, tmo_ms int, xact bool,
                               wait bool, release_after bool DEFAULT false)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    toks bigint[];
    tok bigint;
    tmo interval := make_interval(secs => tmo_ms / 1000.0);
    outcome text;
    kind text := CASE WHEN xact THEN 'xact ' ELSE '' END
                 || CASE WHEN wait THEN 'acquire' ELSE 'try' END
                 || CASE WHEN cardinality(names) > 1 THEN ' multi' ELSE ' single' END;
BEGIN
    BEGIN
        IF cardinality(names) = 1 THEN
            IF wait AND xact THEN tok := sync_acquire_xact(names[1], prio, tmo);
            ELSIF wait THEN tok := sync_acquire(names[1], prio, tmo);
            ELSIF xact THEN tok := sync_try_acquire_xact(names[1], prio);
            ELSE tok := sync_try_acquire(names[1], prio);
            END IF;
            toks := CASE WHEN tok IS NULL THEN NULL ELSE ARRAY[tok] END;
        ELSE
            IF wait AND xact THEN toks := sync_acquire_xact(names, prio, tmo);
            ELSIF wait THEN toks := sync_acquire(names, prio, tmo);
            ELSIF xact THEN toks := sync_try_acquire_xact(names, prio);
            ELSE toks := sync_try_acquire(names, prio);
            END IF;
        END IF;
        IF toks IS NULL THEN
            outcome := 'not granted (try)';
        ELSE
            IF cardinality(toks) <> cardinality(names) OR array_position(toks, NULL) IS NOT NULL THEN
                RAISE EXCEPTION 'stress: % tokens for % names', cardinality(toks), cardinality(names);
            END IF;
            INSERT INTO stress_tokens (lock_name, token, pid)
                SELECT n, t, pg_backend_pid() FROM unnest(names, toks) AS u(n, t)
                ON CONFLICT DO NOTHING;
            outcome := 'granted';
            IF release_after THEN
                PERFORM sync_release(n) FROM unnest(names) AS n;
            END IF;
        END IF;
    EXCEPTION
        WHEN lock_not_available THEN outcome := 'timeout (55P03)';
        WHEN out_of_memory THEN outcome := 'capacity (53200): ' || SQLERRM;
        WHEN query_canceled THEN outcome := 'cancelled (57014)';
        WHEN undefined_object THEN outcome := 'no limit row (42704)';
    END;
    INSERT INTO stress_outcomes VALUES (kind, outcome);
    RETURN outcome;
END
$$;

-- Invariants on one consistent snapshot of the lock table (sync_entry_status
-- takes every partition for one scan), plus the lock rows (a second scan).
CREATE FUNCTION stress_check() RETURNS text LANGUAGE sql AS $$
WITH e AS MATERIALIZED (SELECT * FROM sync_entry_status()),
     l AS MATERIALIZED (SELECT * FROM sync_lock_status()),
     held AS MATERIALIZED (SELECT lock_name, count(*) AS n FROM e WHERE state = 'held' GROUP BY 1),
     v(msg) AS (
    SELECT format('%s has %s holders, at most %s allowed', lock_name, n, stress_cap(lock_name))
      FROM held WHERE n > stress_cap(lock_name)
    UNION ALL
    SELECT format('pid %s holds %s %s times', pid, lock_name, count(*))
      FROM e WHERE state = 'held' GROUP BY lock_name, pid HAVING count(*) > 1
    UNION ALL
    SELECT format('pid %s is queued %s times on %s', pid, count(*), lock_name)
      FROM e WHERE state = 'pending' GROUP BY lock_name, pid HAVING count(*) > 1
    UNION ALL
    SELECT format('pid %s holds and waits for %s', h.pid, h.lock_name)
      FROM e h JOIN e w USING (lock_name, pid)
     WHERE h.state = 'held' AND w.state = 'pending'
    UNION ALL
    SELECT format('pid %s waits on %s locks (%s) with request sizes %s',
                  pid, count(*), string_agg(lock_name, ','), string_agg(request_size::text, ','))
      FROM e WHERE state = 'pending' GROUP BY pid
    HAVING count(*) <> max(request_size) OR min(request_size) <> max(request_size)
    UNION ALL
    SELECT format('queue of %s: priority %s at position %s before priority %s',
                  a.lock_name, a.priority, a.queue_position, b.priority)
      FROM e a JOIN e b ON a.lock_name = b.lock_name AND b.queue_position = a.queue_position + 1
     WHERE a.state = 'pending' AND b.state = 'pending' AND a.priority < b.priority
    UNION ALL
    SELECT format('queue of %s: positions %s for %s waiters', lock_name,
                  string_agg(queue_position::text, ',' ORDER BY queue_position), count(*))
      FROM e WHERE state = 'pending' GROUP BY lock_name
    HAVING min(queue_position) <> 1 OR max(queue_position) <> count(*)
           OR count(DISTINCT queue_position) <> count(*)
    UNION ALL
    SELECT format('stranded waiter: pid %s (single lock) at the front of %s with %s of %s slots held',
                  f.pid, f.lock_name, coalesce(h.n, 0), stress_cap(f.lock_name))
      FROM e f LEFT JOIN held h USING (lock_name)
     WHERE f.state = 'pending' AND f.queue_position = 1 AND f.request_size = 1
       AND stress_fixed(f.lock_name) AND coalesce(h.n, 0) < stress_cap(f.lock_name)
    UNION ALL
    SELECT format('token %s held by %s entries', token, count(*))
      FROM e WHERE state = 'held' GROUP BY token HAVING count(*) > 1
    UNION ALL
    SELECT format('entry state %s for %s: token %s, position %s', state, lock_name, token, queue_position)
      FROM e WHERE (state = 'held' AND (token IS NULL OR queue_position IS NOT NULL))
                OR (state = 'pending' AND (token IS NOT NULL OR queue_position IS NULL))
                OR state NOT IN ('held', 'pending')
    UNION ALL
    SELECT format('sync_locks row %s: kind %s, sizelimit %s, holders %s, waiters %s',
                  lock_name, kind, sizelimit, holders, waiters)
      FROM l
     WHERE stress_cap(lock_name) IS NULL
        OR kind <> CASE WHEN lock_name LIKE 'mtx/%' THEN 'mutex' ELSE 'semaphore' END
        OR (sizelimit IS NULL AND lock_name <> 'sem/st/del')
        OR (sizelimit IS NOT NULL AND stress_fixed(lock_name) AND sizelimit <> stress_cap(lock_name))
        OR (sizelimit IS NOT NULL AND sizelimit NOT BETWEEN 0 AND stress_cap(lock_name))
        OR holders > stress_cap(lock_name)
        OR holders < 0 OR waiters < 0 OR (holders = 0 AND waiters = 0)
    UNION ALL
    SELECT format('sync_locks lists %s twice', lock_name) FROM l GROUP BY lock_name HAVING count(*) > 1
)
SELECT coalesce(string_agg(msg, '; '), '') FROM v
$$;

-- Holds or queue entries of backends that have exited.  A backend withdraws
-- its entries in a before_shmem_exit callback, before it leaves
-- pg_stat_activity; so an entry seen after its pid has left
-- pg_stat_activity is a leak.
CREATE FUNCTION stress_dead_entries() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    pids int[];
    res text;
BEGIN
    SELECT array_agg(DISTINCT pid) INTO pids FROM sync_entry_status();
    IF pids IS NULL THEN RETURN ''; END IF;
    PERFORM pg_stat_clear_snapshot();
    SELECT array_agg(p) INTO pids FROM unnest(pids) AS p
     WHERE p NOT IN (SELECT pid FROM pg_stat_activity WHERE pid IS NOT NULL);
    IF pids IS NULL THEN RETURN ''; END IF;
    -- those pids had exited; do they still have entries now?
    SELECT string_agg(format('%s %s of exited pid %s', state, lock_name, pid), '; ')
      INTO res FROM sync_entry_status() WHERE pid = ANY (pids);
    RETURN coalesce(res, '');
END
$$;

-- Client 0's limit changes besides UPDATEs: delete st/del if present, else
-- insert it again; and rewrite the whole table through TRUNCATE.
CREATE FUNCTION stress_toggle_del() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM sync_limit WHERE name = 'st/del';
    IF FOUND THEN
        INSERT INTO stress_outcomes VALUES ('limit change', 'row deleted');
    ELSE
        INSERT INTO sync_limit VALUES ('st/del', 2);
        INSERT INTO stress_outcomes VALUES ('limit change', 'row inserted');
    END IF;
END
$$;
CREATE FUNCTION stress_truncate_limits(tog int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    saved sync_limit[] := ARRAY(SELECT l FROM sync_limit l);
BEGIN
    TRUNCATE sync_limit;
    INSERT INTO sync_limit SELECT * FROM unnest(saved);
    UPDATE sync_limit SET sizelimit = tog WHERE name = 'st/tog';
    INSERT INTO stress_outcomes VALUES ('limit change', 'truncated and rewritten');
END
$$;

-- Try-acquire and release at once; true if granted.
CREATE FUNCTION stress_try_release(name text) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
    IF sync_try_acquire(name) IS NULL THEN RETURN false; END IF;
    RETURN sync_release(name);
END
$$;
});

# --- the pgbench script --------------------------------------------------------
my $script = "$PostgreSQL::Test::Utils::tmp_check/005_stress_pgbench.sql";
PostgreSQL::Test::Utils::append_to_file($script, <<'EOS');
\set op random(1, 100)
\set a random(0, 10)
\set b random(1, 10)
\set c random(1, 10)
\set prio random(-2, 2)
\set tmo random(0, 60)
\set r random(1, 100)
\if :client_id = 0 and :op > 94
\set v random(0, 3)
\set k random(1, 20)
\set w random(1, 3)
BEGIN;
\if :r <= 70
UPDATE sync_limit SET sizelimit = :v WHERE name = 'st/tog';
UPDATE sync_limit SET sizelimit = :w WHERE name = 'ev/' || :k;
INSERT INTO stress_outcomes VALUES ('limit change', 'updated');
\elif :r <= 90
SELECT stress_toggle_del();
\else
SELECT stress_truncate_limits(:v);
\endif
\if :r % 5 <> 0
COMMIT;
\else
ROLLBACK;
\endif
\elif :op <= 20
SELECT stress_acquire(stress_names(:a), :prio, :tmo, false, true);
\elif :op <= 28
SELECT stress_acquire(stress_names(:a), :prio, 0, false, false);
\elif :op <= 42
SELECT stress_acquire(stress_names(:a, :a + :b, :a + :c), :prio, :tmo, false, true);
\elif :op <= 46
SELECT stress_acquire(stress_names(:a, :a + :b), :prio, 0, false, false);
\elif :op <= 58
BEGIN;
SELECT stress_acquire(stress_names(:a), :prio, :tmo, true, true);
SAVEPOINT sp;
SELECT stress_acquire(stress_names(:a + :b, :a + :c), :prio, :tmo, true, :r <= 70);
\if :r % 2 = 0
ROLLBACK TO SAVEPOINT sp;
\endif
\if :r % 5 = 0
SELECT stress_acquire(stress_names(:a + :b), :prio, :tmo, false, true);
\endif
\if :r % 3 = 0
SELECT sync_release(stress_name(:a));
\endif
\if :r <= 75
COMMIT;
\else
ROLLBACK;
\endif
\elif :op <= 68
SELECT sync_release(stress_name(:a));
\elif :op <= 74
SELECT sync_release_all();
\elif :op <= 84
\set k random(1, 300)
SELECT stress_acquire(ARRAY['sem/ev/' || :k], :prio, :tmo / 4, false, :r <= 50, :r % 3 <> 0);
\else
\set start random(0, 249)
\set n random(10, 64)
SELECT stress_acquire(ARRAY(SELECT 'mtx/bulk/' || ((:start + 7 * g) % 250) FROM generate_series(1, :n) g), :prio, :tmo / 4, false, :r <= 50, :r % 4 <> 0);
\endif
EOS

# pgbench in the background, output to files under the log directory.

sub start_pgbench
{
	my ($label, $clients, $xacts, $run_seed, $options) = @_;
	my $base = "$PostgreSQL::Test::Utils::log_path/005_stress_pgbench_${label}";
	local $ENV{PGOPTIONS} = '-c client_min_messages=error ' . ($options // '');
	local $ENV{PGAPPNAME} = 'stress_pgbench';
	my @cmd = (
		'pgbench', '-n', '-h', $node->host, '-p', $node->port,
		'-c', $clients, '-j', 2, '-t', $xacts,
		"--random-seed=$run_seed", '-f', $script, 'postgres');
	note "starting: @cmd";
	my $h = IPC::Run::start(\@cmd, '<', '/dev/null', '>', "$base.out", '2>', "$base.err");
	return { h => $h, out => "$base.out", err => "$base.err", label => $label };
}

# Has this pgbench exited?  If so returns its exit code (else undef).
sub pgbench_done
{
	my ($pb) = @_;
	return $pb->{rc} if defined $pb->{rc};
	return undef if $pb->{h}->pumpable;
	$pb->{h}->finish;
	$pb->{rc} = $pb->{h}->result(0);
	return $pb->{rc};
}

sub pgbench_xacts
{
	my ($pb) = @_;
	my $out = -e $pb->{out} ? slurp_file($pb->{out}) : '';
	return $out =~ /number of transactions actually processed: (\d+)/ ? $1 : 0;
}

# --- the checker ----------------------------------------------------------------
my $checker = $node->background_psql('postgres');
my $nchecks = 0;
my @violations;

sub check_once
{
	my ($phase) = @_;
	my $res = $checker->query_safe(
		"SELECT concat_ws('; ', nullif(c, ''), nullif(d, ''))
		   FROM (SELECT stress_check() AS c) x, LATERAL (SELECT stress_dead_entries() AS d) y");
	$nchecks++;
	if ($res ne '')
	{
		push @violations, "[$phase, check $nchecks] $res";
		diag("invariant violated in $phase (check $nchecks): $res");
		# keep the evidence (a later snapshot) of the first few
		if (@violations <= 3)
		{
			diag("sync_locks:\n" . sq("SELECT * FROM sync_locks ORDER BY 1"));
			diag("entries:\n"
				  . sq("SELECT * FROM sync_entry_status() ORDER BY 1, 2, queue_position"));
		}
	}
	return;
}

# Wait until every pgbench backend has exited.
sub wait_pgbench_backends_gone
{
	my ($label) = @_;
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(*) = 0 FROM pg_stat_activity WHERE application_name = 'stress_pgbench'"),
		"$label: every pgbench backend has exited");
	return;
}

# --- phase 1: pgbench, no interference ---------------------------------------
my $t1 = time();
my $pb = start_pgbench('phase1', $CLIENTS, $XACTS_PHASE1, $seed);
my $checks_before = $nchecks;
# far beyond the normal run time: only a hang gets there
my $phase1_deadline = $t1 + $PostgreSQL::Test::Utils::timeout_default / 2;
while (!defined pgbench_done($pb))
{
	check_once('phase 1');
	if (time() > $phase1_deadline)
	{
		diag("phase 1: pgbench still running after "
			  . int(time() - $t1)
			  . " s; sessions and lock table:\n"
			  . sq("SELECT pid, state, wait_event_type, wait_event, query FROM pg_stat_activity")
			  . "\n"
			  . sq("SELECT * FROM sync_entry_status() ORDER BY 1, 2, queue_position"));
		$pb->{h}->kill_kill;
		$pb->{h}->finish;
		$pb->{rc} = 'killed after a hang';
		last;
	}
	sleep(0.05);
}
check_once('phase 1');
my $phase1_checks = $nchecks - $checks_before;
is($pb->{rc}, 0, 'phase 1: pgbench exits with status 0 (no client aborted)')
  or diag(slurp_file($pb->{err}));
my $phase1_xacts = pgbench_xacts($pb);
is($phase1_xacts, $CLIENTS * $XACTS_PHASE1,
	"phase 1: pgbench ran all $CLIENTS x $XACTS_PHASE1 transactions");
unlike(slurp_file($pb->{err}), qr/aborted|ERROR/, 'phase 1: pgbench reported no error');
wait_pgbench_backends_gone('phase 1');
my $phase1_secs = time() - $t1;
note sprintf("phase 1: %d transactions in %.1f s, %d invariant checks",
	$phase1_xacts, $phase1_secs, $phase1_checks);

is(sq('SELECT count(*) FROM sync_locks'), '0', 'phase 1: sync_locks is empty after the clients left');
is(sq('SELECT count(*) FROM sync_holders'), '0', 'phase 1: sync_holders is empty');
is(sq('SELECT count(*) FROM sync_waiters'), '0', 'phase 1: sync_waiters is empty');

# --- phase 2: the same, while backends are cancelled and terminated ----------
my $t2 = time();
my %killed = (cancel => 0, terminate => 0, 'cancel (waiting)' => 0);
my $phase2_xacts = 0;
my $run = 0;
my @phase2_rcs;
$checks_before = $nchecks;
my $killer = $node->background_psql('postgres');
# A backend that exits between the listing and the signal makes the
# signalling function warn ("PID ... is not a PostgreSQL backend process"),
# which query_safe would take for a failure; it is expected here.
$killer->query_safe('SET client_min_messages = error');
$pb = start_pgbench('phase2_' . $run, $PHASE2_CLIENTS, 100000, $seed + 1 + $run, $PHASE2_OPTIONS);
for my $action (1 .. $KILL_ACTIONS)
{
	if (defined pgbench_done($pb))
	{
		push @phase2_rcs, $pb->{rc};
		$phase2_xacts += pgbench_xacts($pb);
		$run++;
		$pb = start_pgbench('phase2_' . $run, $PHASE2_CLIENTS, 100000, $seed + 1 + $run,
			$PHASE2_OPTIONS);
	}
	check_once('phase 2');
	sleep(0.05 + rand(0.1));

	# the targets: pgbench backends, and which of them wait for a syncwf lock
	my @rows = split /\n/, $killer->query_safe(
		"SELECT pid || CASE WHEN wait_event_type = 'Extension' THEN ' t' ELSE ' f' END
		   FROM pg_stat_activity WHERE application_name = 'stress_pgbench'
		  ORDER BY pid");
	next unless @rows;
	my @waiting = map { (split / /)[0] } grep { / t$/ } @rows;
	my @all = map { (split / /)[0] } @rows;
	my $dice = rand();
	my ($fn, $pid, $what);
	if ($dice < 0.45 && @waiting)
	{
		($fn, $what) = ('pg_cancel_backend', 'cancel (waiting)');
		$pid = $waiting[ int(rand(@waiting)) ];
	}
	elsif ($dice < 0.7)
	{
		($fn, $what) = ('pg_cancel_backend', 'cancel');
		$pid = $all[ int(rand(@all)) ];
	}
	else
	{
		($fn, $what) = ('pg_terminate_backend', 'terminate');
		$pid = $all[ int(rand(@all)) ];
	}
	# false if it exited meanwhile; either is fine
	$killer->query_safe("SELECT $fn($pid)");
	$killed{$what}++;
	check_once('phase 2');
}
# stop the last pgbench run: its backends see their client go away
if (!defined pgbench_done($pb))
{
	$pb->{h}->kill_kill;
	$pb->{h}->finish;
	$pb->{rc} = 'killed';
}
$phase2_xacts += pgbench_xacts($pb);
wait_pgbench_backends_gone('phase 2');
# 0: all clients finished; 2: some aborted (cancelled or terminated)
is(join(',', grep { $_ ne '0' && $_ ne '2' } @phase2_rcs), '',
	'phase 2: every pgbench run that ended by itself exited with status 0 or 2 ('
	  . join(',', @phase2_rcs) . ')');
check_once('phase 2 end');
my $phase2_checks = $nchecks - $checks_before;
my $phase2_secs = time() - $t2;
note sprintf("phase 2: %d pgbench runs, %d cancels of waiters, %d other cancels, %d terminates, "
	  . "%d transactions reported by completed runs, %.1f s, %d invariant checks",
	$run + 1, $killed{'cancel (waiting)'}, $killed{cancel}, $killed{terminate},
	$phase2_xacts, $phase2_secs, $phase2_checks);

$checker->quit;
$killer->quit;

is(scalar(@violations), 0, "no invariant violated in $nchecks checks during the run")
  or diag(join("\n", @violations));

# --- final state ----------------------------------------------------------------
is(sq('SELECT count(*) FROM sync_locks'), '0', 'end: sync_locks is empty (no leaked lock)');
is(sq('SELECT count(*) FROM sync_holders'), '0', 'end: sync_holders is empty (no leaked hold)');
is(sq('SELECT count(*) FROM sync_waiters'), '0', 'end: sync_waiters is empty (no leaked queue entry)');

# Every lock is free: try-acquire each (and release it) in one new session.
sq("UPDATE sync_limit SET sizelimit = 2 WHERE name = 'st/tog';
    INSERT INTO sync_limit VALUES ('st/del', 2) ON CONFLICT (name) DO NOTHING");
my $not_free = sq(q{
	SELECT coalesce(string_agg(n, ', '), '') FROM (
	    SELECT stress_name(i) AS n FROM generate_series(0, 10) i
	    UNION ALL SELECT 'mtx/bulk/' || g FROM generate_series(0, 249) g
	    UNION ALL SELECT 'sem/ev/' || k FROM generate_series(1, 300) k
	) s
	WHERE n <> 'sem/st/zero' AND NOT stress_try_release(n)});
is($not_free, '', 'end: every mutex and semaphore can be try-acquired at once');
is(sq("SELECT sync_try_acquire('sem/st/zero') IS NULL"), 't',
	'end: the limit-0 semaphore still grants nothing');
is(sq('SELECT count(*) FROM sync_locks'), '0', 'end: the try-acquires left nothing behind');

# Every semaphore admits exactly its committed limit (no stale cached limit):
# 4 sessions (more than any limit) try-acquire each semaphore, a chunk at a
# time (the chunks fit in syncwf.max_locks and syncwf.max_entries).
my @sessions = map { $node->background_psql('postgres') } 1 .. 4;
my @chunks = ("name LIKE 'st/%'");
push @chunks, "name LIKE 'ev/%' AND substr(name, 4)::int BETWEEN " . ($_ * 50 + 1) . " AND " . ($_ * 50 + 50)
  for 0 .. 5;
my $limit_mismatches = '';
for my $where (@chunks)
{
	for my $s (@sessions)
	{
		$s->query_safe(
			"SELECT count(sync_try_acquire('sem/' || name)) FROM sync_limit WHERE $where");
	}
	$limit_mismatches .= sq(qq{
		SELECT string_agg(format('%s: sync_limit %s, sync_locks %s, holders %s',
		                         t.name, t.sizelimit, l.sizelimit, l.holders), '; ')
		  FROM sync_limit t LEFT JOIN sync_locks l ON l.lock_name = 'sem/' || t.name
		 WHERE $where
		   AND (CASE WHEN t.sizelimit = 0 THEN l.lock_name IS NOT NULL
		             ELSE l.sizelimit IS DISTINCT FROM t.sizelimit
		                  OR l.holders IS DISTINCT FROM least(t.sizelimit, 4)
		                  OR l.waiters <> 0 END)});
	$_->query_safe('SELECT sync_release_all()') for @sessions;
}
is($limit_mismatches, '', 'end: every semaphore admits exactly the holders its sync_limit row allows');
$_->quit for @sessions;
is(sq('SELECT count(*) FROM sync_locks'), '0', 'end: nothing held after the limit check');

# --- recorded tokens ------------------------------------------------------------
my $ntokens = sq('SELECT count(*) FROM stress_tokens');
cmp_ok($ntokens, '>', 1000, "recorded $ntokens granted tokens");
is(sq('SELECT count(*) FROM (SELECT token FROM stress_tokens GROUP BY token HAVING count(*) > 1) d'),
	'0', 'no two grants share a token (over all locks and sessions)');
# A mutex's holds do not overlap and each record was written while its hold
# was held, so in record order a mutex's tokens strictly increase.
my $mutex_order = sq(q{
	SELECT coalesce(string_agg(format('%s: token %s (pid %s) after %s (pid %s)',
	                                  lock_name, token, pid, prev_token, prev_pid), '; '), '')
	  FROM (SELECT lock_name, token, pid,
	               lag(token) OVER w AS prev_token, lag(pid) OVER w AS prev_pid
	          FROM stress_tokens WHERE lock_name LIKE 'mtx/%'
	        WINDOW w AS (PARTITION BY lock_name ORDER BY id)) s
	 WHERE token <= prev_token});
is($mutex_order, '', 'per mutex, tokens strictly increase in grant order (mutual exclusion, fencing)');
my $session_order = sq(q{
	SELECT count(*) FROM (
	    SELECT token, lag(token) OVER (PARTITION BY lock_name, pid ORDER BY id) AS prev
	      FROM stress_tokens) s
	 WHERE token <= prev});
is($session_order, '0', 'per session and lock, tokens strictly increase');

my $outcomes = sq(q{
	SELECT string_agg(format('%s: %s', kind, o), E'\n' ORDER BY kind)
	  FROM (SELECT kind, string_agg(format('%s %s', n, outcome), ', ' ORDER BY outcome) AS o
	          FROM (SELECT kind, outcome, count(*) AS n FROM stress_outcomes GROUP BY 1, 2) c
	         GROUP BY kind) k});
note "outcomes of the committed operations:\n$outcomes";
my $locks_used = sq('SELECT count(DISTINCT lock_name) FROM stress_tokens');
note "distinct locks granted: $locks_used";
cmp_ok(sq("SELECT count(*) FROM stress_outcomes WHERE outcome = 'granted'"), '>', 0,
	'some acquires were granted');
cmp_ok(sq("SELECT count(*) FROM stress_outcomes WHERE outcome LIKE 'timeout%'"), '>', 0,
	'some acquires timed out (there was contention)');

# --- the server log -------------------------------------------------------------
my $log = slurp_file($node->logfile, $log_offset);
unlike($log, qr/PANIC|TRAP:|terminated by signal|all server processes terminated|Assert/,
	'the server log shows no crash, no PANIC and no assertion failure');
# Errors are only the expected ones: the cancels of phase 2 reaching a
# statement outside the plpgsql handlers (57014), terminations (57P01) and
# clients going away (08006, 08P01).
my %unexpected;
while ($log =~ /^.*\b(ERROR|FATAL):  ([0-9A-Z]{5}): (.*)$/mg)
{
	my ($level, $code, $msg) = ($1, $2, $3);
	next if $level eq 'ERROR' && $code =~ /^(57014|55P03|53200)$/;
	next if $level eq 'FATAL' && $code =~ /^(57P01|08006|08P01)$/;
	$unexpected{"$level $code: $msg"}++;
}
is(join("\n", sort keys %unexpected), '', 'the server log shows only the expected errors');
like($log, qr/FATAL:  57P01: terminating connection due to administrator command/,
	'the terminations show in the log as ordinary FATAL exits');

$node->stop;
my $total = time() - $T0;
note sprintf("005_stress: total %.1f s (phase 1 %.1f s, phase 2 %.1f s)", $total, $phase1_secs, $phase2_secs);
done_testing();
