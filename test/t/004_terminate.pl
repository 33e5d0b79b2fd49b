# pg_terminate_backend / pg_cancel_backend of syncwf sessions.
#
# A terminated backend exits normally (no crash restart):
#  - a terminated waiter's queue entries disappear, the queue behind it
#    moves up, other sessions are unaffected;
#  - a terminated holder's holds (session and transaction scope) are
#    released and the next waiter is granted, with a larger token;
#  - a cancelled waiter's entries disappear and its session stays usable.
# The server log must show no crash.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('terminate');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'syncwf'");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION syncwf');

my $log_offset = -s $node->logfile;

sub sq { return $node->safe_psql('postgres', $_[0]); }

sub session
{
	my $s = $node->background_psql('postgres', on_error_stop => 0);
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	return ($s, $pid);
}

# Start a blocking acquire in session $s and wait until it is queued.
sub start_waiting
{
	my ($s, $pid, $sql, $nentries, $label) = @_;
	$s->query_until(qr/waiting/, "\\echo waiting\n$sql;\n");
	ok($node->poll_query_until('postgres',
			"SELECT count(*) = $nentries FROM sync_waiters WHERE pid = $pid"),
		"$label is queued");
	return;
}

sub terminate
{
	my ($pid, $label) = @_;
	is(sq("SELECT pg_terminate_backend($pid)"), 't', "terminated $label");
	ok($node->poll_query_until('postgres',
			"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid"),
		"$label has exited");
	return;
}

sub forget_session
{
	my ($s) = @_;
	eval { $s->{run}->kill_kill; 1; } or note "closing dead session: $@";
	return;
}

# --- terminate a waiter ------------------------------------------------------------
my ($h, $h_pid) = session();
my $t_h = $h->query_safe("SELECT sync_acquire('mtx/k/a')");
my ($w1, $w1_pid) = session();
my ($w2, $w2_pid) = session();
start_waiting($w1, $w1_pid, "SELECT sync_acquire('mtx/k/a')", 1, 'W1 (on mtx/k/a)');
start_waiting($w2, $w2_pid, "SELECT 'granted:' || sync_acquire('mtx/k/a')", 1, 'W2 (on mtx/k/a, behind W1)');
is(sq("SELECT string_agg(pid::text, ',' ORDER BY position) FROM sync_waiters WHERE lock_name = 'mtx/k/a'"),
	"$w1_pid,$w2_pid", 'queue order is W1, W2');

terminate($w1_pid, 'waiting W1');
forget_session($w1);
is(sq("SELECT count(*) FROM sync_waiters WHERE pid = $w1_pid"), '0',
	"the terminated waiter's queue entry is gone");
is(sq("SELECT pid || ':' || position FROM sync_waiters WHERE lock_name = 'mtx/k/a'"),
	"$w2_pid:1", 'W2 moved up to position 1');
is($h->query_safe('SELECT 1'), '1', 'the holder session survived (no crash restart)');
is(sq("SELECT pid || ':' || token FROM sync_holders WHERE lock_name = 'mtx/k/a'"),
	"$h_pid:$t_h", 'the holder still holds mtx/k/a with its token');
is(sq("SELECT holders || ':' || waiters FROM sync_locks WHERE lock_name = 'mtx/k/a'"),
	'1:1', 'sync_locks counts 1 holder, 1 waiter');

# --- terminate the holder: the next waiter is granted ------------------------
terminate($h_pid, 'holder H');
forget_session($h);
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM sync_holders WHERE lock_name = 'mtx/k/a' AND pid = $w2_pid"),
	'W2 is granted mtx/k/a when the holder is terminated');
my $out = $w2->query_safe('SELECT 1');
my ($t_w2) = $out =~ /granted:(\d+)/;
ok(defined $t_w2, "W2's sync_acquire returned a token") or diag($out);
is(sq("SELECT " . ($t_w2 // 0) . "::bigint > ${t_h}::bigint"), 't',
	"W2's token is larger than the terminated holder's");
is(sq("SELECT count(*) FROM sync_waiters"), '0', 'no queue entry is left');

# --- terminate a waiter of a multi-lock request -------------------------------
my ($w3, $w3_pid) = session();
start_waiting($w3, $w3_pid, "SELECT sync_acquire(ARRAY['mtx/k/b', 'mtx/k/a'])", 2,
	'W3 (on mtx/k/b and mtx/k/a, all or nothing)');
is(sq("SELECT string_agg(lock_name || ':' || holders || ':' || waiters, ' ' ORDER BY lock_name) FROM sync_locks"),
	'mtx/k/a:1:1 mtx/k/b:0:1', 'W3 queues on both locks; mtx/k/b is free but not granted alone');
terminate($w3_pid, 'multi-lock waiter W3');
forget_session($w3);
is(sq("SELECT string_agg(lock_name || ':' || holders || ':' || waiters, ' ' ORDER BY lock_name) FROM sync_locks"),
	'mtx/k/a:1:0', "both of W3's queue entries are gone, and the idle mtx/k/b with them");

# --- terminate a holder of a transaction-scope lock, mid-transaction ---------
my ($h2, $h2_pid) = session();
$h2->query_safe("BEGIN");
$h2->query_safe("SELECT sync_acquire_xact('mtx/k/x')");
my ($w4, $w4_pid) = session();
start_waiting($w4, $w4_pid, "SELECT sync_acquire('mtx/k/x')", 1, 'W4 (on mtx/k/x)');
terminate($h2_pid, 'holder H2 inside its transaction');
forget_session($h2);
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM sync_holders WHERE lock_name = 'mtx/k/x' AND pid = $w4_pid"),
	'W4 is granted the transaction-scope lock of the terminated H2');

# --- cancel a waiter ---------------------------------------------------------------
my ($w5, $w5_pid) = session();
start_waiting($w5, $w5_pid, "SELECT sync_acquire('mtx/k/x')", 1, 'W5 (on mtx/k/x)');
is(sq("SELECT pg_cancel_backend($w5_pid)"), 't', 'cancelled W5');
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM sync_waiters WHERE pid = $w5_pid"),
	"the cancelled waiter's queue entry is gone");
my ($res, $failed) = $w5->query('SELECT 42');
like($w5->{stderr}, qr/ERROR:  canceling statement due to user request/,
	'the waiting sync_acquire failed with the cancel error');
like($res, qr/(^|\n)42$/, 'the cancelled session is still usable');
$w5->{stderr} = '';    # BackgroundPsql keeps stderr across queries
is($w5->query_safe("SELECT count(*) FROM sync_holders WHERE pid = pg_backend_pid()"), '0',
	'the cancelled session holds nothing');

# --- clean up, check the log -------------------------------------------------
is($w2->query_safe('SELECT sync_release_all()'), '1', 'W2 releases mtx/k/a');
# (W4's output still starts with the token of its blocked sync_acquire)
like($w4->query_safe('SELECT sync_release_all()'), qr/^\d+\n1$/, 'W4 got its token, then releases mtx/k/x');
is(sq('SELECT count(*) FROM sync_locks'), '0', 'lock table is empty');
$w2->quit;
$w4->quit;
$w5->quit;

my $log = slurp_file($node->logfile, $log_offset);
unlike($log, qr/terminated by signal|all server processes terminated|PANIC|TRAP/,
	'the server log shows no crash and no crash restart');
like($log, qr/FATAL:  terminating connection due to administrator command/,
	'the log shows the terminations as ordinary FATAL exits');

$node->stop;
done_testing();
