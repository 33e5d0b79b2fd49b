# test/SyncwfExamples.pm: the scenarios that test/t/030_example_python.pl
# and 031_example_node.pl play with the client examples of examples/.
#
# Both examples of a language print the same lines (examples/README.md), so
# one set of scenarios serves both languages:
#
#   run_examples($language, session => [argv...], keyed => [argv...])
#
# starts a server with syncwf preloaded, runs the session-hold example
# against it with libpq's PG* variables and the keyed worker with a
# DATABASE_URL, and checks both their output and what the database shows
# while they run:
#
#  - session hold: a lock held by another session makes the example give
#    up with status 75 after its timeout (having waited in the queue, and
#    left it) and at once with --try; once the other session releases, a
#    waiting example is granted with a larger token, holds while it works
#    and releases; its connection dropped during the job ends the hold at
#    once, and the example says it lost it (status 1);
#  - keyed worker: pending behind another holder, it keeps its place in the
#    queue across a dropped connection (pg_terminate_backend), heartbeats
#    its controller while it waits, is granted when the other holder
#    releases, keeps its hold (same token, never absent from sync_state)
#    across a second dropped connection, refreshes its lease past its first
#    expiry, finishes and releases;
#  - keyed worker: a hold taken away by sync_force_release makes it stop
#    with status 1, without a release; so does a pending request withdrawn
#    by sync_force_release, at once, without requesting again.
package SyncwfExamples;

use strict;
use warnings FATAL => 'all';

use Cwd qw(abs_path);
use Exporter 'import';
use File::Basename qw(dirname);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

our @EXPORT = qw(run_examples example_root);

my $LOCK = 'mtx/examples/report';
my $SESSION_LOCK = 'mtx/examples/nightly-export';
my $CONTROLLER = 'examples/test-controller';

# The repository root: this file is in test/.
sub example_root { return abs_path(dirname(__FILE__) . '/..'); }

# A running example: its harness and what it printed so far.
sub start_example
{
	my ($node, $argv, $env, $label) = @_;
	my $run = { label => $label, out => '', err => '', argv => $argv };
	local %ENV = (%ENV, %$env);
	delete $ENV{PGAPPNAME};    # the examples name their connections
	$run->{timer} = IPC::Run::timer($PostgreSQL::Test::Utils::timeout_default);
	$run->{h} = IPC::Run::start($argv, '<', \undef, '>', \$run->{out},
		'2>', \$run->{err}, $run->{timer});
	note "started $label: @$argv";
	return $run;
}

# Wait until the example has printed a line matching $re (after
# $run->{seen}, the end of the previous match); return the match's
# captures (or 1), undef on timeout or exit.
sub expect_line
{
	my ($run, $re, $what) = @_;
	$run->{seen} //= 0;
	$run->{timer}->start($PostgreSQL::Test::Utils::timeout_default);
	for (;;)
	{
		pos($run->{out}) = $run->{seen};
		if ($run->{out} =~ /^$re$/mgc)
		{
			my @cap = map { substr($run->{out}, $-[$_], $+[$_] - $-[$_]) }
			  grep { defined $-[$_] } 1 .. $#-;
			$run->{seen} = pos($run->{out});
			pass("$run->{label} printed: $what");
			return @cap ? @cap : (1);
		}
		last if !$run->{h}->pumpable || $run->{timer}->is_expired;
		eval { $run->{h}->pump; 1 } or last;
	}
	fail("$run->{label} printed: $what");
	diag("$run->{label} stdout:\n$run->{out}\nstderr:\n$run->{err}");
	return;
}

# Wait for the example to exit; its exit status.
sub finish_example
{
	my ($run) = @_;
	$run->{timer}->start($PostgreSQL::Test::Utils::timeout_default);
	eval { $run->{h}->finish; 1 } or do { $run->{h}->kill_kill; diag("$run->{label}: $@"); };
	my $status = $run->{h}->result(0);
	note "$run->{label} stdout:\n$run->{out}";
	note "$run->{label} stderr:\n$run->{err}" if length $run->{err};
	return $status;
}

sub run_examples
{
	my ($lang, %cmd) = @_;

	my $node = PostgreSQL::Test::Cluster->new("example_$lang");
	$node->init;
	$node->append_conf('postgresql.conf', "shared_preload_libraries = 'syncwf'");
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION syncwf');
	my $sq = sub { return $node->safe_psql('postgres', $_[0]); };
	my $user = (getpwuid($<))[0];
	my $host = $node->host;
	my $port = $node->port;

	# libpq's variables, which psycopg and node-postgres both read
	my %pg_env = (PGHOST => $host, PGPORT => $port, PGUSER => $user, PGDATABASE => 'postgres');
	# one URL that libpq and node-postgres both accept, for a unix socket
	my %url_env = (DATABASE_URL => "postgresql:///postgres?host=$host&port=$port&user=$user");
	my $app_pids = sub {
		return $sq->("SELECT string_agg(pid::text, ',') FROM pg_stat_activity"
			  . " WHERE application_name = '$_[0]'");
	};

	# --- session hold ------------------------------------------------------------
	my $other = $node->background_psql('postgres');
	my $t_other = $other->query_safe("SELECT sync_acquire('$SESSION_LOCK')");

	my $busy = start_example($node, [ @{ $cmd{session} }, '--lock', $SESSION_LOCK, '--timeout', '3' ],
		\%pg_env, "$lang session-hold (busy, timeout 3 s)");
	ok( $node->poll_query_until('postgres',
			"SELECT count(*) = 1 FROM sync_waiters w JOIN pg_stat_activity a USING (pid)"
			  . " WHERE w.lock_name = '$SESSION_LOCK' AND a.application_name = 'syncwf-example-session'"),
		"$lang session-hold waits in the queue of $SESSION_LOCK");
	expect_line($busy, qr/busy: \Q$SESSION_LOCK\E not granted within 3 s; try again later/,
		'busy after its timeout');
	is(finish_example($busy), 75, "$lang session-hold exits with 75 when the lock stays busy");
	is($sq->("SELECT count(*) FROM sync_waiters WHERE lock_name = '$SESSION_LOCK'"), '0',
		'its request left the queue at the timeout');

	my $try = start_example($node, [ @{ $cmd{session} }, '--lock', $SESSION_LOCK, '--try' ],
		\%pg_env, "$lang session-hold --try");
	expect_line($try, qr/busy: \Q$SESSION_LOCK\E is taken; try again later/, 'busy at once');
	is(finish_example($try), 75, "$lang session-hold --try exits with 75");

	my $sess = start_example($node,
		[ @{ $cmd{session} }, '--lock', $SESSION_LOCK, '--timeout', '60', '--work', '2' ],
		\%pg_env, "$lang session-hold (waits, then works 2 s)");
	ok( $node->poll_query_until('postgres',
			"SELECT count(*) = 1 FROM sync_waiters w JOIN pg_stat_activity a USING (pid)"
			  . " WHERE w.lock_name = '$SESSION_LOCK' AND a.application_name = 'syncwf-example-session'"),
		"$lang session-hold is queued behind the other session");
	$other->query_safe("SELECT sync_release('$SESSION_LOCK')");
	my ($t_sess) = expect_line($sess, qr/acquired: \Q$SESSION_LOCK\E with token (\d+)/,
		'acquired with a token');
	$t_sess //= 0;
	cmp_ok($t_sess, '>', $t_other, 'its token is larger than the previous holder\'s');
	is( $sq->("SELECT h.token FROM sync_holders h JOIN pg_stat_activity a USING (pid)"
			  . " WHERE h.lock_name = '$SESSION_LOCK' AND a.application_name = 'syncwf-example-session'"),
		$t_sess, 'sync_holders shows its hold with that token while it works');
	expect_line($sess, qr/job done with token \Q$t_sess\E/, 'the job ran with that token');
	expect_line($sess, qr/released: \Q$SESSION_LOCK\E/, 'released');
	is(finish_example($sess), 0, "$lang session-hold exits with 0");
	is($sq->("SELECT count(*) FROM sync_holders WHERE lock_name = '$SESSION_LOCK'"), '0',
		"$SESSION_LOCK is free again");
	$other->quit;

	# a session hold ends with its connection
	my $drop = start_example($node, [ @{ $cmd{session} }, '--lock', $SESSION_LOCK, '--work', '3' ],
		\%pg_env, "$lang session-hold (connection dropped during the job)");
	my ($t_drop) = expect_line($drop, qr/acquired: \Q$SESSION_LOCK\E with token (\d+)/, 'acquired');
	$sq->("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
		  . " WHERE application_name = 'syncwf-example-session'");
	ok( $node->poll_query_until('postgres',
			"SELECT count(*) = 0 FROM sync_holders WHERE lock_name = '$SESSION_LOCK'"),
		'its hold ended with its connection');
	expect_line($drop, qr/lost: the connection dropped \(.*\), and the hold with it/,
		'it says the hold is lost, after the job');
	is(finish_example($drop), 1, "$lang session-hold exits with 1 when its connection dropped");
	unlike($drop->{out}, qr/^released:/m, 'it did not report a release');

	# --- keyed worker: queue, two dropped connections, refresh, release -------------
	my ($blocker_status, $t0) = split /\|/,
	  $sq->("SELECT status, token FROM sync_request('$LOCK', 'examples/blocker')");
	is($blocker_status, 'held', 'another holder holds the lock');

	my $holder = 'examples/job-1';
	my $w = start_example($node,
		[ @{ $cmd{keyed} }, '--lock', $LOCK, '--holder', $holder, '--controller', $CONTROLLER,
		  '--lease', '3', '--steps', '8', '--step-seconds', '0.5', '--wait-slice', '1' ],
		\%url_env, "$lang keyed-worker");
	expect_line($w, qr/pending: \Q$LOCK\E for \Q$holder\E \(queue position 1\)/,
		'pending behind the other holder, first in the queue');
	my $row = "SELECT held, controller, lease, seq FROM sync_state"
	  . " WHERE name = '$LOCK' AND workflowkey = '$holder'";
	my $pending = $sq->($row);
	like($pending, qr/^f\|\Q$CONTROLLER\E\|00:00:03\|\d+$/,
		'sync_state has its pending request, with its controller and lease');

	# a dropped connection while pending
	my $pids = $app_pids->('syncwf-example-keyed');
	ok(defined $pids && $pids =~ /^\d+$/, 'the worker has one connection');
	$sq->("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
		  . " WHERE application_name = 'syncwf-example-keyed'");
	expect_line($w, qr/connection lost \(.*\); reconnecting/, 'its connection was lost, while pending');
	expect_line($w, qr/pending: \Q$LOCK\E for \Q$holder\E \(queue position 1\)/,
		'after reconnecting, still pending and first in the queue');
	is($sq->($row), $pending, 'the pending request is the same one (same seq): it kept its place');
	ok( $node->poll_query_until('postgres',
			"SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'syncwf-example-keyed'"
			  . " AND pid NOT IN (" . ($pids // 0) . ")"),
		'the worker is connected again, on a new backend');

	# heartbeats while it waits (slices of 1 s)
	my $hb = $sq->("SELECT time FROM sync_controller WHERE controller = '$CONTROLLER'");
	ok( $node->poll_query_until('postgres',
			"SELECT time > '$hb' FROM sync_controller WHERE controller = '$CONTROLLER'"),
		'its controller heartbeats while the request waits');

	# the other holder releases: the worker is granted
	$sq->("SELECT sync_release('$LOCK', 'examples/blocker')");
	my ($t1) = expect_line($w, qr/granted: \Q$LOCK\E to \Q$holder\E with token (\d+)/,
		'granted with a token');
	$t1 //= 0;
	cmp_ok($t1, '>', $t0, 'its token is larger than the other holder\'s');
	ok( $node->poll_query_until('postgres',
			"SELECT held AND token = $t1 FROM sync_state WHERE name = '$LOCK' AND workflowkey = '$holder'"),
		'sync_state shows the hold with that token');
	expect_line($w, qr/step 1\/8 done with token \Q$t1\E/, 'step 1 done with the token');

	# a dropped connection while holding
	my $expires = $sq->("SELECT lease_expires FROM sync_state WHERE name = '$LOCK' AND workflowkey = '$holder'");
	$sq->("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
		  . " WHERE application_name = 'syncwf-example-keyed'");
	is( $sq->("SELECT held, token FROM sync_state WHERE name = '$LOCK' AND workflowkey = '$holder'"),
		"t|$t1", 'the hold outlived the dropped connection');
	expect_line($w, qr/connection lost \(.*\); reconnecting/, 'its connection was lost, while holding');
	expect_line($w, qr/reconnected: \Q$LOCK\E is still held by \Q$holder\E with token \Q$t1\E/,
		'after reconnecting, it still holds the lock with the same token');
	ok( $node->poll_query_until('postgres',
			"SELECT lease_expires > '$expires' FROM sync_state WHERE name = '$LOCK' AND workflowkey = '$holder'"),
		'it refreshed its lease');
	expect_line($w, qr/step 8\/8 done with token \Q$t1\E/, 'all 8 steps done with the same token');
	expect_line($w, qr/released: \Q$LOCK\E by \Q$holder\E/, 'released');
	is(finish_example($w), 0, "$lang keyed-worker exits with 0");
	unlike($w->{out}, qr/^lost:/m, 'it never lost the hold');
	is($sq->("SELECT count(*) FROM sync_state WHERE name = '$LOCK'"), '0', 'its row is gone');
	is($sq->("SELECT count(*) FROM sync_holders WHERE lock_name = '$LOCK'"), '0', 'the lock is free');

	# --- keyed worker: the hold is taken away ----------------------------------------
	$holder = 'examples/job-2';
	my $l = start_example($node,
		[ @{ $cmd{keyed} }, '--lock', $LOCK, '--holder', $holder, '--controller', $CONTROLLER,
		  '--lease', '3', '--steps', '100', '--step-seconds', '0.3' ],
		\%url_env, "$lang keyed-worker (force-released)");
	my ($t2) = expect_line($l, qr/granted: \Q$LOCK\E to \Q$holder\E with token (\d+)/,
		'granted at once on the free lock');
	expect_line($l, qr/step 1\/100 done with token \d+/, 'step 1 done');
	is($sq->("SELECT sync_force_release('$LOCK', '$holder')"), 't', 'an administrator force-releases it');
	expect_line($l, qr/lost: .*; stopping/, 'it notices the loss and stops');
	is(finish_example($l), 1, "$lang keyed-worker exits with 1 when the hold is lost");
	unlike($l->{out}, qr/^released:/m, 'it did not release a hold it no longer had');
	is($sq->("SELECT count(*) FROM sync_state WHERE workflowkey = '$holder'"), '0', 'no row is left');

	# --- keyed worker: the pending request is withdrawn ---------------------------------
	$sq->("SELECT sync_request('$LOCK', 'examples/blocker')");
	$holder = 'examples/job-3';
	my $wd = start_example($node,
		[ @{ $cmd{keyed} }, '--lock', $LOCK, '--holder', $holder, '--controller', $CONTROLLER,
		  '--lease', '3', '--wait-slice', '30' ],
		\%url_env, "$lang keyed-worker (withdrawn while pending)");
	expect_line($wd, qr/pending: \Q$LOCK\E for \Q$holder\E \(queue position 1\)/, 'pending');
	is($sq->("SELECT sync_force_release('$LOCK', '$holder')"), 't',
		'an administrator withdraws its request');
	expect_line($wd, qr/lost: .*; stopping/, 'it notices at once (its wait slice is 30 s) and stops');
	is(finish_example($wd), 1, "$lang keyed-worker exits with 1 when its request is withdrawn");
	unlike($wd->{out}, qr/^granted:/m, 'it was never granted');
	is($sq->("SELECT count(*) FROM sync_state WHERE workflowkey = '$holder'"), '0',
		'it did not request again');
	$sq->("SELECT sync_release('$LOCK', 'examples/blocker')");

	$node->stop;
	return;
}

1;
