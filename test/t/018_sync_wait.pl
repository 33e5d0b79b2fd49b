# sync_wait where the worker does not help: syncwf.enable_worker = off, and
# releases leave the grants of pending keyed requests to the worker
# (syncwf.handoff_in_transaction = off), so that they are written only by
# whoever asks.
#
#  - a sync_wait blocked on a pending request returns the moment the
#    release that hands it the slot commits (well within 1 s), with a token
#    larger than the previous holder's; sync_wait itself wrote the grant to
#    sync_state (held, with that token) and sent the "granted" NOTIFY from
#    its own backend, in its own transaction;
#  - after a restart nothing has loaded the keyed holds yet (the worker is
#    off); a sync_wait that is the first call loads them (its backend logs
#    the load), returns the token of a held entry from sync_state at once,
#    and, for a pending entry, waits and is woken by a release like any
#    other;
#  - after a crash (SIGKILL of a backend) the same: the first call,
#    sync_wait, loads and waits;
#  - in a REPEATABLE READ transaction sync_wait does not write the grant
#    (its snapshot could not update a row the worker may have written): it
#    keeps waiting after the grant until sync_reconcile() has written it,
#    and returns at that commit with the token sync_state records.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/..";
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SyncwfTest;
use Test::More;
use Time::HiRes qw(time usleep);

my $node = PostgreSQL::Test::Cluster->new('sync_wait');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'syncwf'
syncwf.database = 'postgres'
syncwf.enable_worker = off
syncwf.handoff_in_transaction = off
restart_after_crash = on
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION syncwf');

sub sq { return $node->safe_psql('postgres', $_[0]); }

# Start sync_wait in a new session; returns the session and its pid.
sub start_wait
{
	my ($sql, $debug) = @_;
	my $s = $node->background_psql('postgres');
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	$s->query_safe('SET log_min_messages = debug1') if $debug;
	$s->query_until(qr/waiting/, "\\echo waiting\n$sql;\n");
	return ($s, $pid);
}

sub wait_sleeping
{
	my ($pid, $label) = @_;
	ok($node->poll_query_until('postgres', qq{
		SELECT wait_event_type = 'Extension' AND state = 'active'
		  FROM pg_stat_activity WHERE pid = $pid}),
		"$label sleeps in sync_wait");
	return;
}

# --- the grant, written by sync_wait ----------------------------------------------
my $t1 = sq(q{SELECT token FROM sync_request('mtx/sw/a', 'ns/wf-1')});
is(sq(q{SELECT status FROM sync_request('mtx/sw/a', 'ns/wf-2')}), 'pending', 'ns/wf-2 is pending');
my $l = listener($node, 'postgres');
my ($w, $w_pid) = start_wait(q{SELECT 'token:' || sync_wait('mtx/sw/a', 'ns/wf-2')});
wait_sleeping($w_pid, 'W');

my $t0 = time;
sq(q{SELECT sync_release('mtx/sw/a', 'ns/wf-1')});
my $out = $w->query_safe('SELECT 1');
my $elapsed = time - $t0;
my ($t2) = $out =~ /token:(\d+)/;
ok(defined $t2, 'sync_wait returned a token') or diag($out);
$t2 //= 0;
ok($elapsed < 1, 'sync_wait returned within 1 s of the release') or diag("$elapsed s");
note(sprintf('release to sync_wait returning (and psql round trips): %.1f ms', $elapsed * 1000));
is(sq("SELECT $t2 > $t1"), 't', "its token is larger than the previous holder's");
is(sq(q{SELECT held::text || ':' || token FROM sync_state WHERE name = 'mtx/sw/a'}),
	"true:$t2", 'sync_state says held, with that token (the worker is off: sync_wait wrote it)');
is(sq("SELECT sync_is_held('mtx/sw/a', 'ns/wf-2', $t2)"), 't', 'sync_is_held agrees');
my $ev = next_event($l, 10, 20_000, undef, event => 'granted', holder => 'ns/wf-2');
ok(defined $ev, 'a "granted" notification was sent') or diag(describe_events($l));
is($ev->{token} // '', $t2, '... with the token sync_wait returned');
is($ev->{sender} // '', $w_pid, '... from the backend of sync_wait');
$w->quit;

# --- after a restart: sync_wait is the first call, and loads ----------------------
is(sq(q{SELECT status FROM sync_request('mtx/sw/a', 'ns/wf-3')}), 'pending', 'ns/wf-3 is pending');
$l->{psql}->quit;
$node->restart;
my $log_offset = -s $node->logfile;
my ($w3, $w3_pid) = start_wait(q{SELECT 'token:' || sync_wait('mtx/sw/a', 'ns/wf-3')}, 1);
wait_sleeping($w3_pid, 'W3, the first call after the restart,');
my $log = slurp_file($node->logfile, $log_offset);
like($log, qr/\[$w3_pid\] .*DEBUG:  syncwf loaded 2 keyed entries/,
	'the backend of sync_wait loaded the keyed holds');
is(sq(q{SELECT sync_wait('mtx/sw/a', 'ns/wf-2', '0')}), $t2,
	'a held entry: sync_wait returns the token sync_state has, at once');
sq(q{SELECT sync_release('mtx/sw/a', 'ns/wf-2')});
$out = $w3->query_safe('SELECT 1');
my ($t3) = $out =~ /token:(\d+)/;
ok(defined $t3 && $t3 > $t2, 'W3 is woken by the release, with a larger token') or diag($out);
$w3->quit;

# --- after a crash: the same ---------------------------------------------------
is(sq(q{SELECT status FROM sync_request('mtx/sw/a', 'ns/wf-4')}), 'pending', 'ns/wf-4 is pending');
my $victim = $node->background_psql('postgres');
my $victim_pid = $victim->query_safe('SELECT pg_backend_pid()');
$log_offset = -s $node->logfile;
ok(kill('KILL', $victim_pid), 'SIGKILL of a backend');
$node->wait_for_log(qr/all server processes terminated; reinitializing/, $log_offset);
ok($node->poll_query_until('postgres', 'SELECT true'), 'the server is back after the crash');
eval { $victim->quit; 1 };
$log_offset = -s $node->logfile;
my ($w4, $w4_pid) = start_wait(q{SELECT 'token:' || sync_wait('mtx/sw/a', 'ns/wf-4')}, 1);
wait_sleeping($w4_pid, 'W4, the first call after the crash,');
$log = slurp_file($node->logfile, $log_offset);
like($log, qr/\[$w4_pid\] .*DEBUG:  syncwf loaded 2 keyed entries/,
	'the backend of sync_wait loaded the keyed holds');
sq(q{SELECT sync_release('mtx/sw/a', 'ns/wf-3')});
$out = $w4->query_safe('SELECT 1');
my ($t4) = $out =~ /token:(\d+)/;
ok(defined $t4 && $t4 > $t3, 'W4 is woken by the release, with a larger token') or diag($out);
$w4->quit;

# --- REPEATABLE READ: the grant counts once someone else has written it ----------
is(sq(q{SELECT status FROM sync_request('mtx/sw/a', 'ns/wf-5')}), 'pending', 'ns/wf-5 is pending');
my ($w5, $w5_pid) = start_wait(q{BEGIN ISOLATION LEVEL REPEATABLE READ;
	SELECT 'token:' || sync_wait('mtx/sw/a', 'ns/wf-5')});
wait_sleeping($w5_pid, 'W5, in a REPEATABLE READ transaction,');
sq(q{SELECT sync_release('mtx/sw/a', 'ns/wf-4')});
ok($node->poll_query_until('postgres',
		q{SELECT count(*) = 1 FROM sync_holders WHERE lock_name = 'mtx/sw/a' AND holder = 'ns/wf-5'}),
	'ns/wf-5 is granted in shared memory');
usleep(300_000);
is(sq(qq{SELECT wait_event_type FROM pg_stat_activity WHERE pid = $w5_pid}), 'Extension',
	'W5 still waits: nobody has written the grant (the worker is off)');
is(sq(q{SELECT held FROM sync_state WHERE workflowkey = 'ns/wf-5'}), 'f', '... sync_state says pending');
is(sq(q{SELECT sync_reconcile()}), '1', 'sync_reconcile() writes the grant');
$out = $w5->query_safe('COMMIT');
my ($t5) = $out =~ /token:(\d+)/;
is($t5 // '', sq(q{SELECT token FROM sync_state WHERE workflowkey = 'ns/wf-5'}),
	'W5 returns at that commit, with the token sync_state records') or diag($out);
$w5->quit;
sq(q{SELECT sync_release('mtx/sw/a', 'ns/wf-5')});
is(sq('SELECT count(*) FROM sync_state'), '0', 'nothing is left');

$node->stop;
done_testing();
