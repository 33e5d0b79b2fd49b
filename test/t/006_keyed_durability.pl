# Durability of keyed holds: sync_state is the durable truth and shared
# memory is rebuilt from it, so keyed holds and pending requests survive
#
#  (a) the disconnect of the client that made them: another session sees
#      and releases them, and the released slot goes to the next request;
#  (b) a clean restart: the same holders with the same tokens, the same
#      queues in the same order at the same positions, the same controller
#      heartbeats (an inactive controller stays inactive until it beats);
#  (b3) kill -9 with weighted and shared holds: the same slots, modes and
#      queues after the crash, and releases grant by them in queue order;
#  (b4) a restart starts the bucket of a rate-limited semaphore full;
#  (b') a restart while a hand-off to a pending request is granted in
#      memory but not yet written to sync_state (worker off): whatever a
#      committed sync_request reported as held survives, with its token;
#  (c) kill -9 of the postmaster during a burst of requests and releases
#      from many clients: no lock has more holds than its limit, every hold
#      whose request had returned (so committed) and was not released is
#      still held, nothing appears that no committed request made, the
#      tables and the views agree, and later grants get larger tokens;
#  (d) promotion of a streaming standby: the promoted server serves the
#      same holds and queues, hands out tokens above every keyed token of
#      the old primary (also one whose tokens ran far ahead of the clock),
#      and hands a released slot on to the front of the queue.
#
# Per-client bookkeeping in (c): each client owns its holder keys, runs a
# fixed script of statements one at a time in autocommit mode, and prints
# one numbered line per statement.  psql prints a result only after the
# whole response (ReadyForQuery, so after the commit), so the printed lines
# are exactly the statements known to have committed; the first statement
# without a line may or may not have committed (it was in flight when the
# server died), and no later one was sent.
use strict;
use warnings FATAL => 'all';

use IPC::Run;
use Time::HiRes qw(sleep time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SyncwfTest;

my $seed = $ENV{SYNCWF_DURABILITY_SEED} // 20240606;
die "SYNCWF_DURABILITY_SEED must be a non-negative integer\n" unless $seed =~ /^\d+$/;
note("006_keyed_durability: random seed $seed (set SYNCWF_DURABILITY_SEED to replay)");
srand($seed);

# Compare two non-negative decimal integers given as strings (tokens are
# near 2^63 / 10^4 today, but may be planted far higher).
sub cmp_big
{
	my ($a, $b) = @_;
	return length($a) <=> length($b) || $a cmp $b;
}
sub max_of { my $m = shift; for (@_) { $m = $_ if cmp_big($_, $m) > 0 } return $m; }

sub configure
{
	my ($node) = @_;
	$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'syncwf'
syncwf.database = 'postgres'
max_connections = 40
log_statement = none
log_min_messages = log
});
	return;
}

# Helper functions used by the checks (created with the extension).
my $helpers = q{
-- One round of the worker's work, then: discrepancies between sync_state
-- and the views (shared memory), as text; '' when they agree.
CREATE FUNCTION dur_diff() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    res text;
BEGIN
    PERFORM sync_reconcile();
    WITH t AS (SELECT name, workflowkey, held, token, priority FROM sync_state),
         m AS (SELECT lock_name AS name, holder AS workflowkey, true AS held, token, priority
                 FROM sync_holders WHERE scope = 'keyed'
               UNION ALL
               SELECT lock_name, holder, false, NULL::bigint, priority
                 FROM sync_waiters WHERE scope = 'keyed'),
         d AS ((SELECT 'table only' AS side, * FROM t EXCEPT ALL SELECT 'table only', * FROM m)
               UNION ALL
               (SELECT 'memory only', * FROM m EXCEPT ALL SELECT 'memory only', * FROM t))
    SELECT string_agg(format('%s: %s %s held=%s token=%s prio=%s',
                             side, name, workflowkey, held, token, priority), '; '
                      ORDER BY name, workflowkey, side)
      INTO res FROM d;
    RETURN coalesce(res, '');
END
$$;

-- Locks with more holds than their limit, in the table or in memory.
CREATE FUNCTION dur_over_limit() RETURNS text LANGUAGE sql AS $$
    WITH lim AS (SELECT n, CASE WHEN n LIKE 'mtx/%' THEN 1
                                ELSE (SELECT sizelimit FROM sync_limit WHERE name = substr(n, 5)) END AS l
                   FROM (SELECT name FROM sync_state UNION SELECT lock_name FROM sync_holders) s(n)),
         c AS (SELECT n, l,
                      (SELECT count(*) FROM sync_state WHERE name = n AND held) AS in_table,
                      (SELECT count(*) FROM sync_holders WHERE lock_name = n) AS in_memory
                 FROM lim)
    SELECT coalesce(string_agg(format('%s: limit %s, %s held rows, %s holders',
                                      n, l, in_table, in_memory), '; ' ORDER BY n), '')
      FROM c WHERE in_table > coalesce(l, 0) OR in_memory > coalesce(l, 0)
$$;
};

# A canonical text of the keyed state as the views and tables show it.
sub holders_text
{
	my ($node) = @_;
	return $node->safe_psql('postgres', q{
		SELECT string_agg(concat_ws('|', lock_name, holder, token, priority, since,
		                            controller, lease_expires, slots, mode), E'\n' ORDER BY lock_name, holder)
		  FROM sync_holders WHERE scope = 'keyed'});
}
# (waiting_since is compared with sync_state.time by a test of its own)
sub waiters_text
{
	my ($node) = @_;
	return $node->safe_psql('postgres', q{
		SELECT string_agg(concat_ws('|', lock_name, coalesce(position::text, 'passed over'), holder,
		                            priority, request_size, controller, active, slots, mode),
		                  E'\n' ORDER BY lock_name, position NULLS LAST, holder)
		  FROM sync_waiters WHERE scope = 'keyed'});
}
sub state_text
{
	my ($node) = @_;
	return $node->safe_psql('postgres', q{
		SELECT string_agg(concat_ws('|', name, workflowkey, controller, held, priority, time,
		                            token, granted_at, lease, lease_expires, owner, request_id,
		                            slots, mode),
		                  E'\n' ORDER BY name, workflowkey)
		  FROM sync_state});
}
sub controllers_text
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		q{SELECT string_agg(controller || '|' || time, E'\n' ORDER BY controller) FROM sync_controller});
}

# Wait until the keyed holds are in shared memory (the worker loads them
# after a start; sync_is_held would load them too) and the worker has
# written every pending grant: then the tables and the views agree.
sub wait_synced
{
	my ($node, $label) = @_;
	my $ok = $node->poll_query_until('postgres', 'SELECT dur_diff()', '');
	ok($ok, "$label: sync_state and the views agree after sync_reconcile()");
	diag('disagreement: ' . $node->safe_psql('postgres', 'SELECT dur_diff()')) unless $ok;
	return;
}

# ============================================================================
my $node = PostgreSQL::Test::Cluster->new('dur');
$node->init;
configure($node);
$node->start;
$node->safe_psql('postgres', "CREATE EXTENSION syncwf;\n" . $helpers . q{
	INSERT INTO sync_limit VALUES ('d/s', 1), ('d/r', 2), ('b/s1', 1), ('b/s2', 3), ('b/s3', 6);
});

# --- (a) the client that made the requests disconnects ------------------------
{
	my $client = $node->background_psql('postgres');
	my $cpid = $client->query_safe('SELECT pg_backend_pid()');
	my ($st1, $tok1) = split /\|/, $client->query_safe(
		"SELECT status || '|' || token FROM sync_request('sem/d/s', 'a/wf1', controller => 'a/ctl')");
	is($st1, 'held', 'disconnect: the first request holds sem/d/s');
	my ($stm, $tokm) = split /\|/, $client->query_safe(
		"SELECT status || '|' || token FROM sync_request('mtx/d/m', 'a/wf1', controller => 'a/ctl')");
	is($stm, 'held', 'disconnect: and mtx/d/m');
	is( $client->query_safe(
			"SELECT status || '|' || coalesce(token::text, '-') || '|' || queue_position
			   FROM sync_request('sem/d/s', 'a/wf2', 3)"),
		'pending|-|1',
		'disconnect: a second holder queues on sem/d/s at position 1');
	$client->quit;
	ok( $node->poll_query_until('postgres',
			"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $cpid"),
		'disconnect: the requesting session has exited');

	is( $node->safe_psql('postgres', q{
			SELECT string_agg(lock_name || ':' || holder || ':' || scope || ':' || (pid IS NULL),
			                  ' ' ORDER BY lock_name)
			  FROM sync_holders}),
		'mtx/d/m:a/wf1:keyed:true sem/d/s:a/wf1:keyed:true',
		'disconnect: both keyed holds are still held, by no backend');
	is( $node->safe_psql('postgres', q{
			SELECT string_agg(lock_name || ':' || holder || ':' || position, ' ') FROM sync_waiters}),
		'sem/d/s:a/wf2:1', 'disconnect: the pending request keeps its place');
	is( $node->safe_psql('postgres',
			"SELECT sync_is_held('sem/d/s', 'a/wf1', $tok1), sync_is_held('mtx/d/m', 'a/wf1', $tokm)"),
		't|t', 'disconnect: both grants are current, with their tokens');
	is( $node->safe_psql('postgres',
			"SELECT string_agg(name || ':' || workflowkey || ':' || held, ' ' ORDER BY name, workflowkey)
			   FROM sync_state"),
		'mtx/d/m:a/wf1:true sem/d/s:a/wf1:true sem/d/s:a/wf2:false',
		'disconnect: sync_state has the three rows');

	# another session releases; the slot goes to the pending request
	is($node->safe_psql('postgres', "SELECT sync_release('sem/d/s', 'a/wf1')"),
		't', 'disconnect: another session releases the hold on sem/d/s');
	ok( $node->poll_query_until('postgres',
			"SELECT held FROM sync_state WHERE name = 'sem/d/s' AND workflowkey = 'a/wf2'"),
		'disconnect: the pending request is granted (written by the worker)');
	my $tok2 = $node->safe_psql('postgres',
		"SELECT token FROM sync_state WHERE name = 'sem/d/s' AND workflowkey = 'a/wf2'");
	ok(cmp_big($tok2, max_of($tok1, $tokm)) > 0, 'disconnect: the new grant has a larger token');
	is( $node->safe_psql('postgres',
			"SELECT sync_is_held('sem/d/s', 'a/wf2', $tok2), sync_is_held('sem/d/s', 'a/wf1')"),
		't|f', 'disconnect: sync_is_held agrees');
	is( $node->safe_psql('postgres',
			"SELECT sync_release_holder('a/wf1') || ',' || sync_release_holder('a/wf2')"),
		'1,1', 'disconnect: a third session releases the rest');
	is($node->safe_psql('postgres', 'SELECT count(*) FROM sync_state'),
		'0', 'disconnect: sync_state is empty again');
}

# --- (b) clean restart ----------------------------------------------------------
{
	# A short controller timeout, so that b/ctl-old goes inactive in the test.
	$node->append_conf('postgresql.conf', 'syncwf.inactive_controller_timeout = 3');
	$node->reload;
	$node->safe_psql('postgres', q{
		SELECT sync_heartbeat('b/ctl-live');
		SELECT sync_heartbeat('b/ctl-old');
		SELECT sync_request('sem/d/r', 'r/h1', 0, 'b/ctl-live', interval '1 hour');
		SELECT sync_request('sem/d/r', 'r/h2');
		SELECT sync_request('mtx/d/rm', 'r/h1', 0, 'b/ctl-live');
		SELECT sync_request('sem/d/r', 'r/p1', 0, NULL, NULL, '2020-01-01 00:00:00+00');
		SELECT sync_request('sem/d/r', 'r/p2', 0, 'b/ctl-live', NULL, '2019-06-01 00:00:00+00');
		SELECT sync_request('sem/d/r', 'r/p3', 5, 'b/ctl-live');
		SELECT sync_request('sem/d/r', 'r/p4', 10, 'b/ctl-old');
		SELECT sync_request('sem/d/r', 'r/p5', -1);
		SELECT sync_request('mtx/d/rm', 'r/p1', 2);
		SELECT sync_request(ARRAY['mtx/d/rm', 'mtx/d/rm2'], 'r/multi', 1);
	});
	# b/ctl-live keeps beating, b/ctl-old falls silent and goes inactive
	ok( $node->poll_query_until('postgres', q{
			SELECT sync_heartbeat('b/ctl-live') IS NOT NULL
			   AND (SELECT NOT active FROM sync_waiters WHERE holder = 'r/p4')}),
		'restart: the silent controller goes inactive');
	$node->safe_psql('postgres', "SELECT sync_heartbeat('b/ctl-live')");
	is( $node->safe_psql('postgres', q{
			SELECT string_agg(holder || ':' || coalesce(position::text, '-') || ':' || active, ' '
			                  ORDER BY position NULLS LAST)
			  FROM sync_waiters WHERE lock_name = 'sem/d/r'}),
		'r/p3:1:true r/p2:2:true r/p1:3:true r/p5:4:true r/p4:-:false',
		'restart: queue of sem/d/r before (priority, then queued_at; the inactive controller passed over)');
	is( $node->safe_psql('postgres', q{
			SELECT coalesce(string_agg(w.holder || ' on ' || w.lock_name || ': ' || w.waiting_since
			                           || ' in the view, ' || s.time || ' in sync_state', '; '), '')
			  FROM sync_waiters w JOIN sync_state s ON s.name = w.lock_name AND s.workflowkey = w.holder
			 WHERE w.waiting_since IS DISTINCT FROM s.time}),
		'', 'restart: sync_waiters.waiting_since of keyed entries is their sync_state.time (queued_at)');
	wait_synced($node, 'restart, before');

	my %before = (
		holders => holders_text($node),
		waiters => waiters_text($node),
		state => state_text($node),
		controllers => controllers_text($node));
	my @tokens = split /\n/, $node->safe_psql('postgres',
		"SELECT name || '|' || workflowkey || '|' || token FROM sync_state WHERE held ORDER BY 1");
	is(scalar(@tokens), 3, 'restart: three keyed holds before');
	my $max_before = max_of(map { (split /\|/)[2] } @tokens);
	# also a session hold, whose token is gone with the restart
	$max_before = max_of($max_before, $node->safe_psql('postgres', "SELECT sync_acquire('mtx/d/x')"));

	$node->restart;

	is(controllers_text($node), $before{controllers},
		'restart: sync_controller keeps the heartbeats');
	# the first call loads the holds (or waits for the worker to)
	is( $node->safe_psql('postgres',
			join(' UNION ALL ', map {
				my ($l, $h, $t) = split /\|/;
				"SELECT sync_is_held('$l', '$h', $t)::text"
			} @tokens) . ';'),
		join("\n", ('true') x 3),
		'restart: each hold is held with its token (sync_is_held with the token)');
	# b/ctl-live's heartbeat is a moment old: beat, in case the restart took
	# longer than the (short) timeout
	$node->safe_psql('postgres', "SELECT sync_heartbeat('b/ctl-live')");
	wait_synced($node, 'restart, after');
	is(holders_text($node), $before{holders},
		'restart: sync_holders: same holders, tokens, priorities, times, controllers, leases');
	is(waiters_text($node), $before{waiters},
		'restart: sync_waiters: same queues, same order and positions, same passed-over entry');
	is(state_text($node), $before{state}, 'restart: sync_state is unchanged');
	is( $node->safe_psql('postgres',
			"SELECT active FROM sync_waiters WHERE holder = 'r/p4'"),
		'f', 'restart: the controller without a recent heartbeat is still inactive');

	# ctl-old beats again: r/p4 (priority 10) takes the front of the queue
	$node->safe_psql('postgres', "SELECT sync_heartbeat('b/ctl-old')");
	is( $node->safe_psql('postgres', q{
			SELECT string_agg(holder || ':' || position, ' ' ORDER BY position)
			  FROM sync_waiters WHERE lock_name = 'sem/d/r'}),
		'r/p4:1 r/p3:2 r/p2:3 r/p1:4 r/p5:5',
		'restart: after a heartbeat the inactive controller\'s request regains its place');

	# tokens keep increasing: a fresh hold, and a hand-off to the queue
	my ($st, $tok) = split /\|/, $node->safe_psql('postgres',
		"SELECT status || '|' || token FROM sync_request('mtx/d/fresh', 'r/fresh')");
	is($st, 'held', 'restart: a new request is granted');
	ok(cmp_big($tok, $max_before) > 0, 'restart: its token is above every token before the restart');
	is($node->safe_psql('postgres', "SELECT sync_release('sem/d/r', 'r/h2')"),
		't', 'restart: release one hold of sem/d/r');
	ok( $node->poll_query_until('postgres',
			"SELECT held FROM sync_state WHERE name = 'sem/d/r' AND workflowkey = 'r/p4'"),
		'restart: the front of the queue is granted the slot');
	my $tok4 = $node->safe_psql('postgres',
		"SELECT token FROM sync_state WHERE name = 'sem/d/r' AND workflowkey = 'r/p4'");
	ok(cmp_big($tok4, $tok) > 0, 'restart: the hand-off token is larger still');
	is($node->safe_psql('postgres', 'SELECT dur_over_limit()'), '', 'restart: no lock over its limit');

	$node->safe_psql('postgres', q{
		SELECT sync_release_holder(h)
		  FROM unnest(ARRAY['r/h1', 'r/h2', 'r/p1', 'r/p2', 'r/p3', 'r/p4', 'r/p5', 'r/multi', 'r/fresh']) h;
	});
	is($node->safe_psql('postgres', 'SELECT count(*) FROM sync_state'),
		'0', 'restart: everything released');
	$node->append_conf('postgresql.conf', 'syncwf.inactive_controller_timeout = 300');
	$node->reload;
}

# --- (b2) a restart with limits from a pattern row and a queue cap -------------------
# Loading keyed holds after a restart gives each semaphore the limit of its
# own row, or else of the longest pattern row, and the row's max_waiters:
# the same as before the restart, and a full queue still refuses.
{
	$node->safe_psql('postgres', q{
		INSERT INTO sync_limit VALUES ('dp/*', 9, NULL), ('dp/x/*', 2, 1), ('dp/x/own', 1, NULL);
		SELECT sync_request('sem/dp/x/a', 'dp/h1');
		SELECT sync_request('sem/dp/x/a', 'dp/h2');
		SELECT sync_request('sem/dp/x/a', 'dp/h3');
		SELECT sync_request('sem/dp/x/own', 'dp/h1');
		SELECT sync_request('sem/dp/y', 'dp/h1');
	});
	my $locks = q{
		SELECT string_agg(lock_name || ' ' || sizelimit || ' ' || holders || ' ' || waiters || ' '
		                  || limit_row || ' ' || coalesce(max_waiters::text, '-'), ', ' ORDER BY lock_name)
		  FROM sync_locks WHERE lock_name LIKE 'sem/dp/%'};
	my $before = $node->safe_psql('postgres', $locks);
	is($before, 'sem/dp/x/a 2 2 1 dp/x/* 1, sem/dp/x/own 1 1 0 dp/x/own -, sem/dp/y 9 1 0 dp/* -',
		'pattern restart: limits, rows and caps before');
	$node->restart;
	is($node->safe_psql('postgres', "SELECT sync_is_held('sem/dp/x/a', 'dp/h1')"), 't',
		'pattern restart: the holds are loaded');
	is($node->safe_psql('postgres', $locks), $before,
		'pattern restart: the same limits, rows and caps after');
	my ($rc, $out, $err) = $node->psql('postgres',
		"SELECT sync_request('sem/dp/x/a', 'dp/h4')");
	like($err, qr/ERROR:  the queue of syncwf lock "sem\/dp\/x\/a" is full/,
		'pattern restart: the full queue still refuses a newcomer (53400)');
	$node->safe_psql('postgres', q{
		SELECT sync_release_holder(h) FROM unnest(ARRAY['dp/h3', 'dp/h2', 'dp/h1']) h;
		DELETE FROM sync_limit WHERE name LIKE 'dp/%';
	});
	is($node->safe_psql('postgres', "SELECT count(*) FROM sync_state WHERE workflowkey LIKE 'dp/%'"),
		'0', 'pattern restart: cleaned up');
}

# --- (b3) a crash with weighted and shared keyed holds ------------------------------
# kill -9 of the postmaster: the holds and requests come back with their
# slots and modes, the semaphore's slots_held and the mutex's shared holders
# as before, and the queue rules still hold on them: a release grants the
# big request at the front and then the small one behind it, and the
# readers' release lets the waiting writer in alone, before a later reader.
{
	$node->safe_psql('postgres', q{
		INSERT INTO sync_limit VALUES ('dw/pool', 5);
		SELECT sync_request('sem/dw/pool', 'dw/h1', slots => 3);
		SELECT sync_request('sem/dw/pool', 'dw/h2', slots => 3);
		SELECT sync_request('sem/dw/pool', 'dw/h3', slots => 1);
		SELECT sync_request('mtx/dw/m', 'dw/r1', mode => 'shared');
		SELECT sync_request('mtx/dw/m', 'dw/r2', mode => 'shared');
		SELECT sync_request('mtx/dw/m', 'dw/w');
		SELECT sync_request('mtx/dw/m', 'dw/r3', mode => 'shared');
	});
	my $view = q{
		SELECT string_agg(lock_name || ' ' || slots_held || ' ' || holders || ' ' || waiters, ', '
		                  ORDER BY lock_name) FROM sync_locks WHERE lock_name LIKE '%/dw/%'};
	my $entries = q{
		SELECT string_agg(concat_ws(':', lock_name, holder, held, slots, mode), ', '
		                  ORDER BY lock_name, held DESC, position, holder)
		  FROM (SELECT lock_name, holder, true AS held, slots, mode, NULL::int AS position
		          FROM sync_holders WHERE holder LIKE 'dw/%'
		        UNION ALL
		        SELECT lock_name, holder, false, slots, mode, position
		          FROM sync_waiters WHERE holder LIKE 'dw/%') e};
	my $locks_before = $node->safe_psql('postgres', $view);
	is($locks_before, 'mtx/dw/m 0 2 2, sem/dw/pool 3 1 2',
		'weighted crash: slots held and queues before');
	my $entries_before = $node->safe_psql('postgres', $entries);
	my $holders_before = holders_text($node);
	my $waiters_before = waiters_text($node);
	$node->stop('immediate');
	$node->start;
	is($node->safe_psql('postgres', "SELECT sync_is_held('sem/dw/pool', 'dw/h1')"), 't',
		'weighted crash: the holds are loaded');
	is($node->safe_psql('postgres', $view), $locks_before,
		'weighted crash: the same slots held and queues after');
	is($node->safe_psql('postgres', $entries), $entries_before,
		'weighted crash: the same slots and modes, in the same order');
	is(holders_text($node), $holders_before, 'weighted crash: the same holders, tokens and times');
	is(waiters_text($node), $waiters_before, 'weighted crash: the same queues');
	# the queue rules on the loaded entries
	$node->safe_psql('postgres', q{
		SELECT sync_release('sem/dw/pool', 'dw/h1');
		SELECT sync_release('mtx/dw/m', 'dw/r1');
		SELECT sync_release('mtx/dw/m', 'dw/r2');
		SELECT sync_reconcile();
	});
	is($node->safe_psql('postgres', q{
		SELECT string_agg(name || ' ' || workflowkey || ' ' || held, ', ' ORDER BY name, workflowkey)
		  FROM sync_state WHERE workflowkey LIKE 'dw/%'}),
		'mtx/dw/m dw/r3 false, mtx/dw/m dw/w true, sem/dw/pool dw/h2 true, sem/dw/pool dw/h3 true',
		'weighted crash: releases grant by weight and mode, in queue order');
	is($node->safe_psql('postgres', $view), 'mtx/dw/m 1 1 1, sem/dw/pool 4 2 0',
		'weighted crash: slots held after the releases');
	$node->safe_psql('postgres', q{
		SELECT sync_release_holder(h) FROM unnest(ARRAY['dw/r3', 'dw/w', 'dw/h3', 'dw/h2']) h;
		DELETE FROM sync_limit WHERE name LIKE 'dw/%';
	});
	is($node->safe_psql('postgres', "SELECT count(*) FROM sync_state WHERE workflowkey LIKE 'dw/%'"),
		'0', 'weighted crash: cleaned up');
}

# --- (b4) a restart refills the bucket of a rate-limited semaphore ----------------------
# The bucket lives in shared memory: a restart starts it full, so a request
# that waited for tokens is granted as soon as the holds are loaded.
{
	$node->safe_psql('postgres', q{
		INSERT INTO sync_limit (name, sizelimit, rate_limit, rate_period) VALUES ('dr/rate', 5, 2, '1 hour');
		SELECT sync_request('sem/dr/rate', 'dr/q1');
		SELECT sync_request('sem/dr/rate', 'dr/q2');
		SELECT sync_request('sem/dr/rate', 'dr/q3');
	});
	my $rate = q{
		SELECT holders || ' held, ' || waiters || ' waiting, ' || rate_tokens || ' tokens'
		  FROM sync_locks WHERE lock_name = 'sem/dr/rate'};
	is($node->safe_psql('postgres', $rate), '2 held, 1 waiting, 0 tokens',
		'rate restart: the bucket is spent, a request waits for tokens');
	$node->restart;
	is($node->safe_psql('postgres', "SELECT sync_is_held('sem/dr/rate', 'dr/q1')"), 't',
		'rate restart: the holds are loaded');
	is($node->safe_psql('postgres', $rate), '3 held, 0 waiting, 1 tokens',
		'rate restart: the bucket starts full, and the waiting request is granted');
	$node->safe_psql('postgres', q{
		SELECT sync_release_holder(h) FROM unnest(ARRAY['dr/q1', 'dr/q2', 'dr/q3']) h;
		DELETE FROM sync_limit WHERE name LIKE 'dr/%';
	});
}

# --- (b') a restart before a hand-off is written -----------------------------------
# A grant to a pending entry lives in memory until the worker (or
# sync_reconcile) writes it.  With the worker off (pg_cron mode) that can
# be a minute.  Whatever a committed sync_request reports as held must
# survive the restart with its token; here a later, higher-priority request
# would take the slot if the grant were lost.
{
	$node->append_conf('postgresql.conf', 'syncwf.enable_worker = off');
	$node->reload;
	sleep(0.5);    # the worker reads the change on SIGHUP
	# the release leaves the grant to the worker (which is off), as a slot
	# freed where nothing can be written does
	$node->safe_psql('postgres', q{
		INSERT INTO sync_limit VALUES ('d/u', 1);
		SELECT sync_request('sem/d/u', 'u/a');
		SELECT sync_request('sem/d/u', 'u/b');
		SET syncwf.handoff_in_transaction = off;
		SELECT sync_release('sem/d/u', 'u/a');
		SELECT sync_request('sem/d/u', 'u/c', 5);
	});
	is( $node->safe_psql('postgres', q{
			SELECT (SELECT string_agg(holder, ',') FROM sync_holders WHERE lock_name = 'sem/d/u')
			       || ' ' || (SELECT string_agg(workflowkey || ':' || held, ',' ORDER BY workflowkey)
			                    FROM sync_state WHERE name = 'sem/d/u')}),
		'u/b u/b:false,u/c:false',
		'unwritten hand-off: u/b is granted in memory, not yet in sync_state');
	my ($st, $tok) = split /\|/, $node->safe_psql('postgres',
		"SELECT status || '|' || coalesce(token::text, '') FROM sync_request('sem/d/u', 'u/b')");
	note("unwritten hand-off: a repeated request of u/b reports '$st'");
	$node->restart;
	my $after = $node->safe_psql('postgres', q{
			SELECT sync_reconcile() >= 0,
			       (SELECT string_agg(holder, ',') FROM sync_holders WHERE lock_name = 'sem/d/u')});
	if ($st eq 'held')
	{
		is($node->safe_psql('postgres', "SELECT sync_is_held('sem/d/u', 'u/b', $tok)"),
			't', 'unwritten hand-off: the hold a committed request reported survives the restart, same token');
		is($after, 't|u/b', 'unwritten hand-off: after the restart the slot is u/b\'s, not the later u/c\'s');
	}
	else
	{
		is($st, 'pending', 'unwritten hand-off: the request reports pending until the grant is written');
		like($after, qr{^t\|u/[bc]$}, 'unwritten hand-off: after the restart one of them holds the slot');
	}
	$node->safe_psql('postgres', "SELECT sync_release_holder('u/b'), sync_release_holder('u/c')");
	$node->append_conf('postgresql.conf', 'syncwf.enable_worker = on');
	$node->reload;
}

# --- (c) kill -9 of the postmaster during a burst ------------------------------
{
	my $NCLIENTS = 6;
	my $NOPS = 20000;    # per client; far more than run before the kill
	my %limit = ('sem/b/s1' => 1, 'sem/b/s2' => 3, 'sem/b/s3' => 6, 'mtx/b/m' => 1);
	my @locks = sort keys %limit;
	my @array_locks = ('sem/b/s2', 'mtx/b/m');

	# The scripts: each op is [kind, lock or undef, holder] and one line of output.
	my (@ops, @files);
	for my $c (1 .. $NCLIENTS)
	{
		my @mine;
		my $sql = '';
		for my $n (1 .. $NOPS)
		{
			my $r = rand();
			my $h = "b/c$c/h" . (1 + int(rand(3)));
			my $l = $locks[ int(rand(@locks)) ];
			my $prio = int(rand(4));
			if ($r < 0.45)
			{
				push @mine, [ 'req', $l, $h ];
				$sql .= "SELECT $n, 'req', status, token FROM sync_request('$l', '$h', $prio, 'b/ctl$c');\n";
			}
			elsif ($r < 0.80)
			{
				push @mine, [ 'rel', $l, $h ];
				$sql .= "SELECT $n, 'rel', sync_release('$l', '$h');\n";
			}
			elsif ($r < 0.88)
			{
				push @mine, [ 'arr', undef, "b/c$c/a" ];
				$sql .= "SELECT $n, 'arr', string_agg(DISTINCT status, ','), max(token) "
				  . "FROM sync_request(ARRAY['" . join("', '", @array_locks) . "'], 'b/c$c/a', $prio, 'b/ctl$c');\n";
			}
			elsif ($r < 0.95)
			{
				push @mine, [ 'relh', undef, "b/c$c/a" ];
				$sql .= "SELECT $n, 'relh', sync_release_holder('b/c$c/a');\n";
			}
			else
			{
				push @mine, [ 'relh', undef, $h ];
				$sql .= "SELECT $n, 'relh', sync_release_holder('$h');\n";
			}
		}
		my $file = "$PostgreSQL::Test::Utils::tmp_check/006_burst_$c.sql";
		unlink $file;
		append_to_file($file, $sql);
		push @ops, \@mine;
		push @files, $file;
	}

	# Tokens seen by a monitor during the burst (committed grants).
	my $monitor_max = '0';
	my @clients;
	{
		local $ENV{PGAPPNAME} = 'burst';
		for my $c (1 .. $NCLIENTS)
		{
			my $base = "$PostgreSQL::Test::Utils::log_path/006_burst_$c";
			my @cmd = ('psql', '-X', '-A', '-t', '-F', '|', '-h', $node->host, '-p', $node->port,
				'-d', 'postgres', '-f', $files[ $c - 1 ]);
			push @clients, {
				h => IPC::Run::start(\@cmd, '<', '/dev/null', '>', "$base.out", '2>', "$base.err"),
				out => "$base.out", err => "$base.err" };
		}
	}
	my $t0 = time();
	ok( $node->poll_query_until('postgres',
			"SELECT count(*) >= 20 FROM sync_state WHERE workflowkey LIKE 'b/%'"),
		'burst: the clients are making requests');
	my $kill_at = time() + 1.0 + rand(1.0);
	while (time() < $kill_at)
	{
		my $m = $node->safe_psql('postgres', "SELECT coalesce(max(token), 0) FROM sync_state");
		$monitor_max = max_of($monitor_max, $m);
		sleep(0.05);
	}
	my $pm_pid = $node->{_pid};
	$node->kill9;
	note(sprintf('burst: postmaster killed %.1f s after the clients started', time() - $t0));

	# the clients end once their backends notice the postmaster's death
	for my $cl (@clients)
	{
		eval { $cl->{h}->finish; 1 } or eval { $cl->{h}->kill_kill; 1 };
	}
	ok(wait_children_gone($node, $pm_pid), 'burst: every process of the killed server has exited');
	$node->start;

	# What each client knows: the ops whose line was printed committed; the
	# next one may have; the rest were never sent.
	my (%expect, $max_seen);    # "$lock|$holder" => absent | held | exists | unknown
	$max_seen = $monitor_max;
	my ($completed_total, $mid_burst, $bad_output) = (0, 0, 0);
	for my $c (1 .. $NCLIENTS)
	{
		my $mine = $ops[ $c - 1 ];
		my @lines = split /\n/, slurp_file($clients[ $c - 1 ]{out});
		my $k = 0;
		my %st;
		for my $line (@lines)
		{
			my ($n, $kind, $res, $tok) = split /\|/, $line, -1;
			if (!defined $kind || $n != $k + 1 || $kind ne $mine->[$k][0])
			{
				diag("client $c: unexpected output line after op $k: $line");
				$bad_output++;
				last;
			}
			my (undef, $l, $h) = @{ $mine->[$k] };
			if ($kind eq 'req')
			{
				$st{"$l|$h"} = $res eq 'held' ? 'held' : 'exists';
			}
			elsif ($kind eq 'arr')
			{
				$st{"$_|$h"} = $res eq 'held' ? 'held' : 'exists' for @array_locks;
			}
			elsif ($kind eq 'rel')
			{
				$st{"$l|$h"} = 'absent';
			}
			else
			{
				for my $key (keys %st) { $st{$key} = 'absent' if $key =~ /\|\Q$h\E$/; }
			}
			$max_seen = max_of($max_seen, $tok) if defined $tok && $tok ne '';
			$k++;
		}
		$completed_total += $k;
		$mid_burst++ if $k < $NOPS;
		note("client $c: $k of $NOPS statements completed before the kill");
		# the one in flight: its (lock, holder) pairs may go either way
		if ($k < $NOPS)
		{
			my ($kind, $l, $h) = @{ $mine->[$k] };
			my @keys =
			    $kind eq 'req' || $kind eq 'rel' ? ("$l|$h")
			  : $kind eq 'arr' ? (map { "$_|$h" } @array_locks)
			  : (map { "$_|$h" } @locks);
			$st{$_} = 'unknown' for @keys;
		}
		%expect = (%expect, %st);
		my $err = slurp_file($clients[ $c - 1 ]{err});
		my @errlines = grep { !/server closed the connection|terminated abnormally|before or while processing|connection to server was lost|no connection to the server|terminating connection|unexpected postmaster exit|^\s*$/ } split /\n/, $err;
		is(join("\n", @errlines), '', "burst: client $c reported no other error");
	}
	is($bad_output, 0, 'burst: every client printed one line per statement, in order');
	ok($completed_total > 50, "burst: $completed_total statements completed before the kill");
	ok($mid_burst > 0, "burst: $mid_burst clients were still running at the kill");

	# Right after the start, before any reconcile: the table itself.
	is($node->safe_psql('postgres', 'SELECT dur_over_limit()'), '',
		'burst: after the crash no lock has more held rows (or holders) than its limit');
	my %rows;
	for (split /\n/, $node->safe_psql('postgres',
		"SELECT name || '|' || workflowkey || '|' || held FROM sync_state WHERE workflowkey LIKE 'b/%'"))
	{
		my ($l, $h, $held) = split /\|/;
		$rows{"$l|$h"} = $held;
	}
	my @lost = grep { $expect{$_} eq 'held' && ($rows{$_} // '') ne 'true' } sort keys %expect;
	my @lost_pending = grep { $expect{$_} eq 'exists' && !defined $rows{$_} } sort keys %expect;
	my @phantom = grep { ($expect{$_} // 'absent') eq 'absent' } sort keys %rows;
	my $nheld = grep { $expect{$_} eq 'held' } keys %expect;
	note(sprintf('burst: the clients know of %d holds, %d requests (held or pending), %d released pairs',
		$nheld, scalar(grep { $_ eq 'exists' } values %expect),
		scalar(grep { $_ eq 'absent' } values %expect)));
	is("@lost", '', "burst: all $nheld holds whose request had returned are still held");
	is("@lost_pending", '', 'burst: every committed pending request is still there (or granted)');
	is("@phantom", '', 'burst: no row whose request did not commit (or that was released)');
	note(sprintf('burst: %d rows after the crash (%d held); %d pairs in flight',
		scalar(keys %rows), scalar(grep { $_ eq 'true' } values %rows),
		scalar(grep { $_ eq 'unknown' } values %expect)));
	is( $node->safe_psql('postgres', q{
			SELECT coalesce(string_agg(workflowkey || ':' || n, ' '), '')
			  FROM (SELECT workflowkey, count(*) AS n, count(DISTINCT held) AS h
			          FROM sync_state WHERE workflowkey LIKE 'b/c%/a' GROUP BY 1) s
			 WHERE n <> 2}),
		'', 'burst: multi-lock requests survive whole or not at all');

	wait_synced($node, 'burst');
	is($node->safe_psql('postgres', 'SELECT dur_over_limit()'), '',
		'burst: after reconcile no lock is over its limit');
	is( $node->safe_psql('postgres', q{
			SELECT count(*) FROM (SELECT token FROM sync_state WHERE held GROUP BY 1 HAVING count(*) > 1) d}),
		'0', 'burst: no two holds share a token');

	# Tokens keep increasing: a fresh grant, then drain every queue by
	# releasing all holds round after round; every new grant's token is
	# above every token seen before it.
	my $bound = max_of($max_seen,
		$node->safe_psql('postgres', 'SELECT coalesce(max(token), 0) FROM sync_state'));
	my ($fst, $ftok) = split /\|/, $node->safe_psql('postgres',
		"SELECT status || '|' || token FROM sync_request('mtx/b/fresh', 'b/fresh')");
	is($fst, 'held', 'burst: a new request after the crash is granted');
	ok(cmp_big($ftok, $bound) > 0, 'burst: its token is above every token seen before the kill');
	$bound = $ftok;
	my ($rounds, $new_grants, @low, @over) = (0, 0);
	while ($rounds < 60)
	{
		my @held = split /\n/, $node->safe_psql('postgres',
			"SELECT name || '|' || workflowkey FROM sync_state WHERE held AND workflowkey LIKE 'b/c%'");
		my $pending = $node->safe_psql('postgres',
			"SELECT count(*) FROM sync_state WHERE NOT held AND workflowkey LIKE 'b/c%'");
		last if !@held && $pending == 0;
		$rounds++;
		$node->safe_psql('postgres', join('',
			map { my ($l, $h) = split /\|/; "SELECT sync_release('$l', '$h');\n" } @held));
		my $ok = $node->poll_query_until('postgres', 'SELECT dur_diff()', '');
		last unless $ok;
		my $over = $node->safe_psql('postgres', 'SELECT dur_over_limit()');
		push @over, $over if $over ne '';
		my %was = map { $_ => 1 } @held;
		for (split /\n/, $node->safe_psql('postgres',
			"SELECT name || '|' || workflowkey || '|' || token FROM sync_state WHERE held AND workflowkey LIKE 'b/c%'"))
		{
			my ($l, $h, $t) = split /\|/;
			next if $was{"$l|$h"};
			$new_grants++;
			push @low, "$l $h $t" if cmp_big($t, $bound) <= 0;
		}
		$bound = max_of($bound,
			$node->safe_psql('postgres', 'SELECT coalesce(max(token), 0) FROM sync_state'));
	}
	is($node->safe_psql('postgres', "SELECT count(*) FROM sync_state WHERE workflowkey LIKE 'b/c%'"),
		'0', "burst: the queues drain ($rounds rounds of releases, $new_grants hand-offs)");
	is("@over", '', 'burst: no lock over its limit while draining');
	is("@low", '', 'burst: every hand-off token is above every earlier token');
}

# --- (d) promotion of a streaming standby ----------------------------------------
{
	$node->stop;
	my $primary = PostgreSQL::Test::Cluster->new('primary');
	$primary->init(allows_streaming => 1);
	configure($primary);
	$primary->start;
	$primary->safe_psql('postgres', "CREATE EXTENSION syncwf;\n" . $helpers . q{
		INSERT INTO sync_limit VALUES ('f/s', 2);
		SELECT sync_heartbeat('f/ctl');
		SELECT sync_request('sem/f/s', 'f/h1', 0, 'f/ctl');
		SELECT sync_request('sem/f/s', 'f/h2');
		SELECT sync_request('mtx/f/m', 'f/h1', 0, 'f/ctl');
		SELECT sync_request('sem/f/s', 'f/p1', 1, 'f/ctl');
		SELECT sync_request('sem/f/s', 'f/p2', 0, NULL, NULL, '2021-01-01 00:00:00+00');
		SELECT sync_request('sem/f/s', 'f/p3', 0, NULL, NULL, '2020-01-01 00:00:00+00');
		SELECT sync_request('mtx/f/m', 'f/p2');
	});
	$primary->backup('bk');
	my $standby = PostgreSQL::Test::Cluster->new('standby');
	$standby->init_from_backup($primary, 'bk', has_streaming => 1);
	$standby->start;

	# The primary's tokens run far ahead of the clock (as after very many
	# grants): plant a reservation in its token file.  The standby's copy of
	# the file (from the backup) knows nothing of it; only sync_state does.
	$primary->stop;
	# microseconds since 2000-01-01, plus about 115 days
	my $planted = (int(time()) - 946684800) * 1000000 + 10000000000000;
	my $token_file = $primary->data_dir . '/syncwf.token';
	unlink $token_file;
	append_to_file($token_file, "$planted\n");
	$primary->start;

	# More changes after the backup, streamed to the standby.
	is($primary->safe_psql('postgres', "SELECT sync_release('sem/f/s', 'f/h2')"),
		't', 'promotion: release one hold of sem/f/s on the primary');
	$primary->safe_psql('postgres', q{
		SELECT sync_request('sem/f/s', 'f/p4', 1, 'f/ctl');
		SELECT sync_request('mtx/f/m2', 'f/h3', 0, 'f/ctl', interval '1 day');
		SELECT sync_request(ARRAY['mtx/f/m', 'mtx/f/m2'], 'f/multi', 2);
		SELECT sync_heartbeat('f/ctl');
	});
	ok( $primary->poll_query_until('postgres',
			"SELECT held FROM sync_state WHERE name = 'sem/f/s' AND workflowkey = 'f/p1'"),
		'promotion: the front of the queue (f/p1) is granted on the primary');
	wait_synced($primary, 'promotion, primary');
	my $ptok = $primary->safe_psql('postgres',
		"SELECT token FROM sync_state WHERE name = 'mtx/f/m2' AND workflowkey = 'f/h3'");
	ok(cmp_big($ptok, $planted) >= 0, 'promotion: the primary hands out tokens from the planted reservation');

	my %p = (
		holders => holders_text($primary),
		waiters => waiters_text($primary),
		state => state_text($primary),
		controllers => controllers_text($primary));
	my $pmax = $primary->safe_psql('postgres', 'SELECT max(token) FROM sync_state');
	is( $primary->safe_psql('postgres', q{
			SELECT string_agg(lock_name || ':' || holder || ':' || position, ' ' ORDER BY lock_name, position)
			  FROM sync_waiters}),
		'mtx/f/m:f/multi:1 mtx/f/m:f/p2:2 mtx/f/m2:f/multi:1 sem/f/s:f/p4:1 sem/f/s:f/p3:2 sem/f/s:f/p2:3',
		'promotion: the queues on the primary');

	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
	is(state_text($standby), $p{state}, 'promotion: the standby has replayed sync_state');
	my ($ret, $out, $err) = $standby->psql('postgres',
		"SELECT * FROM sync_request('sem/f/s', 'f/x')", on_error_stop => 1, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like($err, qr/25006/, 'promotion: a request on the standby fails with 25006');

	$primary->stop;
	$standby->promote;
	ok( $standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()'),
		'promotion: the standby is promoted');
	ok( $standby->poll_query_until('postgres',
			"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'syncwf worker'"),
		'promotion: a syncwf worker runs on the promoted server');
	is($standby->safe_psql('postgres', "SELECT sync_is_held('mtx/f/m2', 'f/h3', $ptok)"),
		't', 'promotion: the hold made after the backup is held with its token');
	wait_synced($standby, 'promotion, promoted');
	is(holders_text($standby), $p{holders}, 'promotion: same holds (sync_holders)');
	is(waiters_text($standby), $p{waiters}, 'promotion: same queues, order and positions (sync_waiters)');
	is(state_text($standby), $p{state}, 'promotion: sync_state unchanged');
	is(controllers_text($standby), $p{controllers}, 'promotion: sync_controller unchanged');

	my ($st, $ntok) = split /\|/, $standby->safe_psql('postgres',
		"SELECT status || '|' || token FROM sync_request('mtx/f/new', 'f/new')");
	is($st, 'held', 'promotion: a new request is granted on the promoted server');
	ok(cmp_big($ntok, $pmax) > 0,
		'promotion: its token is above every keyed token of the primary (beyond the clock)');

	# hand-off on the promoted server: release f/h1's hold of sem/f/s; the
	# front of its queue (f/p4) is granted
	is($standby->safe_psql('postgres', "SELECT sync_release('sem/f/s', 'f/h1')"),
		't', 'promotion: release a hold on the promoted server');
	ok( $standby->poll_query_until('postgres',
			"SELECT held FROM sync_state WHERE name = 'sem/f/s' AND workflowkey = 'f/p4'"),
		'promotion: the next pending entry is granted (written by the worker)');
	wait_synced($standby, 'promotion, hand-off');
	my $htok = $standby->safe_psql('postgres',
		"SELECT token FROM sync_holders WHERE lock_name = 'sem/f/s' AND holder = 'f/p4'");
	ok(cmp_big($htok, $ntok) > 0, 'promotion: the hand-off token is larger still');
	is( $standby->safe_psql('postgres', q{
			SELECT string_agg(holder || ':' || position, ' ' ORDER BY position)
			  FROM sync_waiters WHERE lock_name = 'sem/f/s'}),
		'f/p3:1 f/p2:2', 'promotion: the rest of the queue moved up');
	is($standby->safe_psql('postgres', 'SELECT dur_over_limit()'), '', 'promotion: no lock over its limit');
	$standby->stop;
}

done_testing();
