# Crash and restart safety of syncwf.
#
# A SIGKILLed backend makes the postmaster kill every backend and
# reinitialize shared memory.  Afterwards no hold and no queue entry may
# survive (the lock table is rebuilt empty), the server must accept
# connections again, every lock must be immediately available, and fencing
# tokens must be greater than every token handed out before the crash --
# also when the clock alone would not guarantee it, which only the
# reservation file $PGDATA/syncwf.token can.  A clean restart must keep
# tokens increasing too.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
# Cluster.pm sets restart_after_crash = off; we test the crash restart.
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'syncwf'");
$node->append_conf('postgresql.conf', "restart_after_crash = on");
$node->start;

# How the postmaster names a backend killed by a signal: 18 says "client
# backend (PID n)", earlier versions "server process (PID n)".
my $killed_backend =
  $node->safe_psql('postgres', 'SHOW server_version_num') >= 180000
  ? 'client backend'
  : 'server process';

$node->safe_psql('postgres', q{
    CREATE EXTENSION syncwf;
    INSERT INTO sync_limit VALUES ('t/s', 1);
});

my $token_file = $node->data_dir . '/syncwf.token';

# The largest of several tokens (decimal strings).
sub max_of { my $m = shift; for (@_) { $m = $_ if cmp_big($_, $m) > 0 } return $m; }

# Compare two non-negative decimal integers given as strings (tokens may
# approach 2^63, beyond what a Perl number holds exactly).
sub cmp_big
{
	my ($a, $b) = @_;
	return length($a) <=> length($b) || $a cmp $b;
}

# A background psql whose death we expect: tolerate its exit status.
sub forget_session
{
	my ($s) = @_;
	eval { $s->{run}->kill_kill; 1; } or note "closing dead session: $@";
	return;
}

# Hold mtx/t/a and sem/t/s in one session and queue a second session on
# mtx/t/a.  Returns (holder, holder pid, waiter, waiter pid, max token).
sub holder_and_waiter
{
	my ($label) = @_;
	my $holder = $node->background_psql('postgres');
	my $holder_pid = $holder->query_safe('SELECT pg_backend_pid()');
	my $toks = $holder->query_safe(
		"SELECT sync_acquire('mtx/t/a') || ',' || sync_acquire('sem/t/s')");
	my @toks = split /,/, $toks;
	is(scalar(@toks), 2, "$label: holder got two tokens");

	my $waiter = $node->background_psql('postgres');
	my $waiter_pid = $waiter->query_safe('SELECT pg_backend_pid()');
	$waiter->query_until(qr/waiting/,
		"\\echo waiting\nSELECT sync_acquire('mtx/t/a');\n");
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(*) = 1 FROM sync_waiters
			  WHERE lock_name = 'mtx/t/a' AND pid = $waiter_pid"),
		"$label: second session is queued on mtx/t/a");

	is( $node->safe_psql(
			'postgres',
			"SELECT string_agg(lock_name || ':' || holders || ':' || waiters, ' ' ORDER BY lock_name)
			   FROM sync_locks"),
		'mtx/t/a:1:1 sem/t/s:1:0',
		"$label: sync_locks shows both locks held, one waiter on the mutex");

	# Tokens handed out so far, also by other sessions: take a few more.
	my $more = $node->safe_psql('postgres',
		"SELECT max(sync_acquire('mtx/t/other' || g)) FROM generate_series(1, 5) g");
	my $max = max_of(@toks, $more,
		$node->safe_psql('postgres', 'SELECT max(token) FROM sync_holders'));
	return ($holder, $holder_pid, $waiter, $waiter_pid, $max);
}

# SIGKILL a backend and wait for the crash restart to finish.
sub crash_backend
{
	my ($label, $pid) = @_;
	my $offset = -s $node->logfile;

	ok(kill('KILL', $pid), "$label: sent SIGKILL to backend $pid");
	$node->wait_for_log(qr/all server processes terminated; reinitializing/, $offset);
	ok($node->poll_query_until('postgres', 'SELECT true'),
		"$label: server accepts connections again after crash recovery");
	like(slurp_file($node->logfile, $offset),
		qr/$killed_backend \(PID $pid\) was terminated by signal 9/,
		"$label: the postmaster saw the SIGKILLed backend");
	return;
}

# After a crash restart: nothing leaked, locks free, tokens larger than $max.
sub check_after_crash
{
	my ($label, $max, @dead_pids) = @_;

	for my $pid (@dead_pids)
	{
		ok(!kill(0, $pid), "$label: backend $pid did not survive the crash restart");
	}
	is($node->safe_psql('postgres', 'SELECT count(*) FROM sync_locks'),
		'0', "$label: sync_locks is empty");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM sync_holders'),
		'0', "$label: sync_holders is empty");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM sync_waiters'),
		'0', "$label: sync_waiters is empty (no leaked queue entry)");

	my $res = $node->safe_psql(
		'postgres', "
		SELECT sync_try_acquire('mtx/t/a') AS a, sync_try_acquire('sem/t/s') AS s \\gset
		SELECT :a IS NOT NULL, :s IS NOT NULL, :a > $max, :s > $max;
		SELECT string_agg(lock_name || ':' || sizelimit || ':' || holders || ':' || waiters, ' '
		                  ORDER BY lock_name)
		  FROM sync_locks;
		SELECT greatest(:a, :s);");
	my @lines = split /\n/, $res;
	is($lines[0], 't|t|t|t',
		"$label: a new session try-acquires mtx/t/a and sem/t/s at once, with tokens above $max");
	is($lines[1], 'mtx/t/a:1:1:0 sem/t/s:1:1:0',
		"$label: the semaphore keeps its sync_limit of 1 after the crash");
	return $lines[2];
}

# --- 1. the holder is SIGKILLed ----------------------------------------------
my ($h1, $h1_pid, $w1, $w1_pid, $max1) = holder_and_waiter('holder killed');
crash_backend('holder killed', $h1_pid);
forget_session($h1);
forget_session($w1);
my $last = check_after_crash('holder killed', $max1, $h1_pid, $w1_pid);

# --- 2. the waiter is SIGKILLed ----------------------------------------------
# The reservation file, not the clock, must carry tokens across the crash:
# reserve far ahead of the clock, as a server that handed out many tokens
# quickly would have, and expect every later token above that.
my ($h2, $h2_pid, $w2, $w2_pid, $max2) = holder_and_waiter('waiter killed');
my $reserved = $node->safe_psql('postgres',
	"SELECT (extract(epoch FROM now() - '2000-01-01 UTC'::timestamptz) * 1e6)::bigint + 10000000000000");
ok(cmp_big($reserved, $max2) > 0, 'reservation to plant is above every token so far');
append_to_file("$token_file.new", "$reserved\n");
rename("$token_file.new", $token_file) or die "rename: $!";
crash_backend('waiter killed', $w2_pid);
forget_session($h2);
forget_session($w2);
$last = check_after_crash('waiter killed', $reserved, $h2_pid, $w2_pid);
ok(cmp_big($last, $reserved) > 0,
	'tokens after a crash restart exceed the reservation read from syncwf.token');

# --- 3. clean restart --------------------------------------------------------
my $before = $node->safe_psql('postgres',
	"SELECT max(sync_acquire('mtx/t/r' || g)) FROM generate_series(1, 3) g");
ok(cmp_big($before, $last) > 0, 'tokens keep increasing within one server life');
ok(-f $token_file, 'syncwf.token exists in the data directory');
my $file_value = slurp_file($token_file);
chomp $file_value;
like($file_value, qr/^\d+$/, 'syncwf.token holds one number');
ok(cmp_big($file_value, $before) > 0,
	'syncwf.token reserves beyond every token handed out');

# Restart while a session holds a lock and another waits for it: a clean
# (fast) shutdown ends both sessions, and nothing survives the restart.
my ($h3, $h3_pid, $w3, $w3_pid, $max3) = holder_and_waiter('clean restart');
ok(cmp_big($max3, $before) > 0, 'clean restart: tokens kept increasing');
$before = $max3;
$file_value = slurp_file($token_file);
chomp $file_value;
ok(cmp_big($file_value, $before) > 0,
	'syncwf.token still reserves beyond every token handed out, before the restart');
$node->restart;
forget_session($h3);
forget_session($w3);
is($node->safe_psql('postgres',
		'SELECT (SELECT count(*) FROM sync_locks) + (SELECT count(*) FROM sync_waiters)'),
	'0', 'clean restart: no lock, hold or queue entry survives');
my $after = $node->safe_psql('postgres',
	"SELECT sync_acquire('mtx/t/r1')");
ok(cmp_big($after, $before) > 0, "token after a clean restart ($after) > before it ($before)");
ok(cmp_big($after, $file_value) > 0, 'token after a clean restart > the reservation in syncwf.token');

# A second restart in a row (nothing granted in between but one token).
my $before2 = $node->safe_psql('postgres', "SELECT sync_acquire('mtx/t/r2')");
$node->restart;
my $after2 = $node->safe_psql('postgres', "SELECT sync_acquire('mtx/t/r2')");
ok(cmp_big($after2, $before2) > 0, 'tokens increase across a second clean restart');

$node->stop;
done_testing();
