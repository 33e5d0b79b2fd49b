# A crash in the middle of a hand-off.  A transaction that releases a keyed
# hold writes, at its pre-commit, the grant of the waiter its slot goes to
# (held, token, NOTIFY) and reserves that waiter in shared memory; at its
# commit the slot passes.  A crash (kill -9 of the releasing backend: the
# postmaster resets shared memory and recovers from WAL) can come
#
#  (a) between the pre-commit and the commit record: the release and the
#      grant are rolled back together.  After the restart the old holder
#      holds with its token, the waiter waits in its place, a launch plan's
#      running execution keeps its slot and the next stays PENDING; the
#      next release hands the slot on as usual, with a larger token, and
#      its own backend sends "granted" and "promoted".  (The
#      releasing transaction is stopped there by a row lock its launch-plan
#      promotion waits for.)
#  (b) after the commit record, before the commit callbacks (the releasing
#      backend waits for a synchronous standby that does not exist): the
#      release and the grant are committed together.  After the restart the
#      waiter holds, with exactly the token its row was given, and
#      sync_is_held() accepts it.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/..";
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SyncwfTest;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('handoff_crash');
$node->init(allows_streaming => 1);
# only a session that asks for synchronous_commit = on waits for the
# (missing) standby
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'syncwf'
syncwf.database = 'postgres'
restart_after_crash = on
synchronous_standby_names = 'nobody'
synchronous_commit = local
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION syncwf');

sub sq { return $node->safe_psql('postgres', $_[0]); }

# holders/queue of a lock, from shared memory
sub mem
{
	my ($lock) = @_;
	return sq(qq{
		SELECT coalesce((SELECT string_agg(holder, ',' ORDER BY holder) FROM sync_holders
		                  WHERE lock_name = '$lock'), '') || '/' ||
		       coalesce((SELECT string_agg(holder, ',' ORDER BY position) FROM sync_waiters
		                  WHERE lock_name = '$lock'), '')});
}

# the rows of sync_state of a lock: holder:held
sub rows
{
	my ($lock) = @_;
	return sq(qq{
		SELECT string_agg(workflowkey || ':' || held, ' ' ORDER BY workflowkey)
		  FROM sync_state WHERE name = '$lock'});
}

# Poll until the backend waits on $type (a wait_event_type).
sub wait_for
{
	my ($pid, $type, $label) = @_;
	ok( $node->poll_query_until('postgres', qq{
			SELECT wait_event_type = '$type' AND state = 'active'
			  FROM pg_stat_activity WHERE pid = $pid}),
		$label);
	return;
}

# Crash: SIGKILL of the backend $pid, so the postmaster resets shared
# memory and recovers from WAL; then close the sessions (their backends
# were ended) and wait until the keyed holds are loaded again.
sub crash
{
	my ($pid, @sessions) = @_;
	kill 'KILL', $pid or die "kill $pid: $!";
	for my $s (@sessions)
	{
		eval { $s->{run}->kill_kill; 1; } or note "closing dead session: $@";
	}
	# the worker loads the keyed holds once the server is back
	ok( $node->poll_query_until('postgres', 'SELECT count(*) > 0 FROM sync_holders'),
		'the server is back after the crash, with the keyed holds loaded');
	return;
}

sq(q{
	SELECT sync_launch_plan_register('kc', 'd', 'p', 'v1', 1, 'WAIT', 'FIFO');
	SELECT phase FROM sync_execution_create('kc', 'd', 'p', 'v1', 'kc-r');
	SELECT sync_execution_update('kc-r', 'RUNNING');
	SELECT phase FROM sync_execution_create('kc', 'd', 'p', 'v1', 'kc-a');
	SELECT status FROM sync_request('mtx/kc/m', 'a');
	SELECT status FROM sync_request('mtx/kc/m', 'b');
	SELECT status FROM sync_request('mtx/kc/m', 'c');
});
my $plan = 'sem/launchplan/kc/d/p';
my $tok_a = sq("SELECT token FROM sync_state WHERE name = 'mtx/kc/m' AND workflowkey = 'a'");

# --- (a) between pre-commit and the commit record ----------------------------
{
	my $lock = $node->background_psql('postgres');
	$lock->query_safe(q{BEGIN; SELECT 1 FROM sync_execution WHERE execution_id = 'kc-a' FOR UPDATE});

	my $rel = $node->background_psql('postgres');
	my $pid = $rel->query_safe('SELECT pg_backend_pid()');
	$rel->query_safe(q{BEGIN; SELECT sync_release('mtx/kc/m', 'a'); SELECT sync_execution_update('kc-r', 'SUCCEEDED')});
	$rel->query_until(qr/sent/, "\\echo sent\nCOMMIT;\n");
	wait_for($pid, 'Lock', '(a) the COMMIT waits, in its pre-commit, for the promotion of kc-a');
	is(mem('mtx/kc/m'), 'a/b,c', '(a) meanwhile a holds and b waits, reserved');
	is(rows('mtx/kc/m'), 'a:true b:false c:false', '(a) others see b\'s grant uncommitted');

	crash($pid, $lock, $rel);
	is(mem('mtx/kc/m'), 'a/b,c', '(a) after the crash a holds, b and c wait in order');
	is(rows('mtx/kc/m'), 'a:true b:false c:false', '(a) the rows say so');
	is(sq("SELECT token FROM sync_holders WHERE lock_name = 'mtx/kc/m'"), $tok_a,
		'(a) a keeps its token');
	is(mem($plan), 'kc-r/kc-a', '(a) kc-r keeps the plan\'s slot, kc-a waits');
	is(sq("SELECT string_agg(execution_id || ':' || phase, ' ' ORDER BY execution_id)
	         FROM sync_execution WHERE project = 'kc'"),
		'kc-a:PENDING kc-r:RUNNING', '(a) the executions are as before');

	# the next release hands the slot on, in its own transaction, which
	# also sends "granted" and "promoted"
	my $lk = listener($node, 'postgres');
	my $ll = listener($node, 'postgres', 'syncwf_launch');
	my $s = $node->background_psql('postgres');
	my $spid = $s->query_safe('SELECT pg_backend_pid()');
	my $xid = $s->query_safe(q{
		BEGIN;
		SELECT sync_release('mtx/kc/m', 'a');
		SELECT sync_execution_update('kc-r', 'SUCCEEDED');
		SELECT pg_current_xact_id();
		COMMIT;});
	$s->quit;
	($xid) = grep { /^\d+$/ } split /\n/, $xid;
	my $ev = next_event($lk, 5, 20_000, undef, event => 'granted', holder => 'b');
	is(($ev // {})->{sender}, $spid, '(a) "granted" for b is sent by the releasing backend');
	$ev = next_event($ll, 5, 20_000, undef, event => 'promoted', execution_id => 'kc-a');
	is(($ev // {})->{sender}, $spid, '(a) "promoted" for kc-a too');
	$_->{psql}->quit for ($lk, $ll);
	is(mem('mtx/kc/m'), 'b/c', '(a) a release after the restart gives b the mutex');
	is( sq("SELECT held AND token > $tok_a AND xmin::text = '$xid'
	          FROM sync_state WHERE name = 'mtx/kc/m' AND workflowkey = 'b'"),
		't', '(a) b\'s grant, with a larger token, written by that release');
	is(sq("SELECT phase FROM sync_execution WHERE execution_id = 'kc-a'"), 'QUEUED',
		'(a) and kc-a is promoted by it');
}

# --- (b) after the commit record, before the commit callbacks --------------
{
	my $tok_b = sq("SELECT token FROM sync_state WHERE name = 'mtx/kc/m' AND workflowkey = 'b'");
	my $rel = $node->background_psql('postgres');
	my $pid = $rel->query_safe('SELECT pg_backend_pid()');
	$rel->query_safe(q{SET synchronous_commit = on});
	$rel->query_safe(q{BEGIN; SELECT sync_release('mtx/kc/m', 'b')});
	$rel->query_until(qr/sent/, "\\echo sent\nCOMMIT;\n");
	wait_for($pid, 'IPC', '(b) the COMMIT is written and waits for the standby');
	is(sq("SELECT wait_event FROM pg_stat_activity WHERE pid = $pid"), 'SyncRep',
		'(b) (waiting in SyncRep)');
	is(mem('mtx/kc/m'), 'b/c', '(b) meanwhile b still holds in shared memory, c waits');

	crash($pid, $rel);
	is(mem('mtx/kc/m'), 'c/', '(b) after the crash c holds');
	my $tok_c = sq("SELECT token FROM sync_state WHERE name = 'mtx/kc/m' AND workflowkey = 'c' AND held");
	ok($tok_c ne '' && $tok_c > $tok_b, '(b) c\'s row is held, with a token above b\'s');
	is(sq("SELECT token FROM sync_holders WHERE lock_name = 'mtx/kc/m'"), $tok_c,
		'(b) shared memory has the token of the row');
	is(sq("SELECT sync_is_held('mtx/kc/m', 'c', $tok_c)"), 't', '(b) sync_is_held accepts it');
	is(sq("SELECT sync_release('mtx/kc/m', 'c')"), 't', '(b) and c can release it');
	is(mem('mtx/kc/m'), '/', '(b) leaving the mutex free');
}

$node->stop;
done_testing();
