# Dead clients leave the queue at once, whatever
# client_connection_check_interval says (0 here: PostgreSQL itself never
# checks).
#
# A backend blocked in sync_acquire or sync_acquire_xact whose client goes
# away ends with FATAL "connection to client lost" and its queue entries are
# withdrawn, within 1.5 s of the client going away (in practice
# milliseconds: the kernel reports the closed socket, nothing polls):
#  - a psql client killed with SIGKILL while it waits, at the front of a
#    queue on a free lock with an all-or-nothing request (Argo's rule makes
#    it block that queue): the waiter behind it is granted at once, with no
#    release;
#  - a client that closes its socket without a word (Unix socket), while
#    its process lives on;
#  - a client that sends Terminate and closes, as node-postgres'
#    client.end() does (TCP on the loopback);
#  - a client that shuts its socket down for writing only (TCP half-close),
#    waiting in sync_acquire_xact inside a transaction block;
#  - a client that closes its socket while its backend waits in a keyed
#    sync_wait (no queue entry of its own: the backend is gone, and the
#    keyed entries are as they were).
# The next waiter is granted each time, the server log shows the lost
# clients as ordinary FATAL exits and no crash, and nothing is left in the
# lock table.
use strict;
use warnings FATAL => 'all';

use IO::Socket::INET;
use IO::Socket::UNIX;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Socket qw(SHUT_WR);
use Test::More;
use Time::HiRes qw(time usleep);

my $node = PostgreSQL::Test::Cluster->new('dead_clients');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'syncwf'
syncwf.database = 'postgres'
client_connection_check_interval = 0
listen_addresses = '127.0.0.1'
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION syncwf');
my $log_offset = -s $node->logfile;
my $user = $node->safe_psql('postgres', 'SELECT current_user');

# One monitoring session, polled every 10 ms.
my $mon = $node->background_psql('postgres');
sub mq { return $mon->query_safe($_[0]); }

# Seconds until $sql (on the monitoring session) returns 't'; undef after 10 s.
sub seconds_until
{
	my ($sql, $since) = @_;
	while (time - $since < 10)
	{
		return time - $since if mq($sql) eq 't';
		usleep(10_000);
	}
	return undef;
}

sub wait_queued
{
	my ($pid, $n, $label) = @_;
	ok($node->poll_query_until('postgres',
			"SELECT count(*) = $n FROM sync_waiters WHERE pid = $pid"),
		"$label is queued");
	return;
}

# The queue entries of backend $pid are gone within 1.5 s of $since, and
# so is the backend.
sub gone_within
{
	my ($pid, $since, $label) = @_;
	my $s = seconds_until(
		"SELECT count(*) = 0 FROM sync_waiters WHERE pid = $pid", $since);
	ok(defined $s && $s < 1.5,
		"$label: its queue entries are gone within 1.5 s")
	  or diag('after ' . ($s // 'more than 10') . ' s');
	note(sprintf('%s: gone from sync_waiters after %.1f ms', $label, ($s // 10) * 1000));
	ok($node->poll_query_until('postgres',
			"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid"),
		"$label: its backend has exited");
	return;
}

# --- a minimal protocol-3.0 client, so that the test decides how it leaves ----
sub read_message
{
	my ($sock) = @_;
	my $head = '';
	while (length($head) < 5)
	{
		my $got = sysread($sock, $head, 5 - length($head), length($head));
		die "connection closed: $!" unless $got;
	}
	my ($type, $len) = unpack('a N', $head);
	my $body = '';
	while (length($body) < $len - 4)
	{
		my $got = sysread($sock, $body, $len - 4 - length($body), length($body));
		die "connection closed: $!" unless $got;
	}
	return ($type, $body);
}

# Connect (over TCP if $tcp), log in, and return the socket and backend pid.
sub raw_connect
{
	my ($tcp) = @_;
	my $sock =
	  $tcp
	  ? IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $node->port)
	  : IO::Socket::UNIX->new(Peer => $node->host . '/.s.PGSQL.' . $node->port);
	die "cannot connect: $!" unless $sock;
	my $params = "user\0$user\0database\0postgres\0\0";
	syswrite($sock, pack('N N', 8 + length($params), 196608) . $params);
	my $pid;
	for (;;)
	{
		my ($type, $body) = read_message($sock);
		die "login failed: $body" if $type eq 'E';
		$pid = unpack('N', $body) if $type eq 'K';
		last if $type eq 'Z';
	}
	return ($sock, $pid);
}

sub raw_query
{
	my ($sock, $sql) = @_;
	syswrite($sock, 'Q' . pack('N', 4 + length($sql) + 1) . $sql . "\0");
	return;
}

# Run a query to completion; returns the first column of the first row.
sub raw_run
{
	my ($sock, $sql) = @_;
	raw_query($sock, $sql);
	my $value;
	for (;;)
	{
		my ($type, $body) = read_message($sock);
		die "query failed: $body" if $type eq 'E';
		if ($type eq 'D' && !defined $value)
		{
			my $len = unpack('x2 N', $body);
			$value = substr($body, 6, $len);
		}
		return $value if $type eq 'Z';
	}
}

# --- the holder ------------------------------------------------------------------
my $holder = $node->background_psql('postgres');
$holder->query_safe(q{SELECT sync_acquire('mtx/dc/a')});

# --- 1. SIGKILL of a psql client at the front of a queue -------------------------
# W1 asks for a (held) and b (free), all or nothing: at the front of b's
# queue it blocks W2, which asks for b alone.
my ($w1_out, $w1_err) = ('', '');
my $w1 = IPC::Run::start(
	[ 'psql', '-X', '-d', $node->connstr('postgres') . ' application_name=dc_w1',
		'-c', q{SELECT sync_acquire(ARRAY['mtx/dc/a', 'mtx/dc/b'])} ],
	'<', '/dev/null', '>', \$w1_out, '2>', \$w1_err);
ok($node->poll_query_until('postgres',
		q{SELECT count(*) = 2 FROM sync_waiters w JOIN pg_stat_activity a USING (pid)
		   WHERE a.application_name = 'dc_w1'}),
	'W1 (psql) is queued on mtx/dc/a and mtx/dc/b');
my $w1_pid = $node->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_activity WHERE application_name = 'dc_w1'});

my ($w2, $w2_pid) = raw_connect(0);
raw_query($w2, q{SELECT sync_acquire('mtx/dc/b')});
wait_queued($w2_pid, 1, 'W2 (on mtx/dc/b, behind W1)');
is(mq(q{SELECT holders || ':' || waiters FROM sync_locks WHERE lock_name = 'mtx/dc/b'}),
	'0:2', 'mtx/dc/b is free, and W1 at its front blocks W2');

my $psql_pid = $w1->{KIDS}[0]{PID};
my $t0 = time;
kill 'KILL', $psql_pid;
gone_within($w1_pid, $t0, 'W1 killed with SIGKILL');
eval { $w1->finish; 1 };
my $s = seconds_until(
	"SELECT count(*) = 1 FROM sync_holders WHERE lock_name = 'mtx/dc/b' AND pid = $w2_pid", $t0);
ok(defined $s && $s < 1.5, 'W2, behind W1, is granted mtx/dc/b at once, with no release');
is(mq(q{SELECT holders || ':' || waiters FROM sync_locks WHERE lock_name = 'mtx/dc/a'}),
	'1:0', "mtx/dc/a: its holder, and no trace of W1's entry");

# W2 gets its result and goes on as usual
my ($type) = read_message($w2);
while ($type ne 'Z') { ($type) = read_message($w2); }
is(raw_run($w2, q{SELECT sync_release('mtx/dc/b')}), 't', 'W2 got its token and releases mtx/dc/b');

# --- 2. a client that closes its Unix socket, its process alive --------------------
my ($w3, $w3_pid) = raw_connect(0);
raw_query($w3, q{SELECT sync_acquire('mtx/dc/a')});
wait_queued($w3_pid, 1, 'W3 (on mtx/dc/a)');
my ($w4, $w4_pid) = raw_connect(0);
raw_query($w4, q{SELECT sync_acquire('mtx/dc/a', timeout => '1 min')});
wait_queued($w4_pid, 1, 'W4 (on mtx/dc/a, behind W3)');
$t0 = time;
close($w3);
gone_within($w3_pid, $t0, 'W3 closed its socket');
is(mq(qq{SELECT pid || ':' || position FROM sync_waiters WHERE lock_name = 'mtx/dc/a'}),
	"$w4_pid:1", 'W4 moved up to the front');

# --- 3. Terminate, then close (node-postgres' client.end()), over TCP -----------
my ($w5, $w5_pid) = raw_connect(1);
raw_query($w5, q{SELECT sync_acquire('mtx/dc/a', priority => 5)});
wait_queued($w5_pid, 1, 'W5 (TCP, on mtx/dc/a, ahead of W4 by priority)');
$t0 = time;
syswrite($w5, 'X' . pack('N', 4));
close($w5);
gone_within($w5_pid, $t0, 'W5 sent Terminate and closed its TCP connection');

# --- 4. TCP half-close while waiting in sync_acquire_xact in a transaction -------
my ($w6, $w6_pid) = raw_connect(1);
raw_query($w6, q{BEGIN; SELECT sync_acquire_xact('mtx/dc/a', priority => 5); COMMIT});
wait_queued($w6_pid, 1, 'W6 (TCP, sync_acquire_xact in a transaction block)');
$t0 = time;
shutdown($w6, SHUT_WR);
gone_within($w6_pid, $t0, 'W6 shut its TCP connection down for writing');

# W4 is still first and is granted when the holder lets go
$holder->query_safe(q{SELECT sync_release('mtx/dc/a')});
$s = seconds_until(
	"SELECT count(*) = 1 FROM sync_holders WHERE lock_name = 'mtx/dc/a' AND pid = $w4_pid", time);
ok(defined $s, 'W4, the one live waiter, is granted mtx/dc/a on release');
($type) = read_message($w4);
while ($type ne 'Z') { ($type) = read_message($w4); }
is(raw_run($w4, q{SELECT sync_release_all()}), '1', 'W4 releases it');
close($w4);

# --- 5. a client that closes its socket while its backend waits in sync_wait ----
$node->safe_psql('postgres', q{
	SELECT sync_request('mtx/dc/k', 'ns/wf-1');
	SELECT sync_request('mtx/dc/k', 'ns/wf-2');});
my ($w7, $w7_pid) = raw_connect(0);
raw_query($w7, q{SELECT sync_wait('mtx/dc/k', 'ns/wf-2')});
ok($node->poll_query_until('postgres',
		"SELECT wait_event_type = 'Extension' AND state = 'active' FROM pg_stat_activity WHERE pid = $w7_pid"),
	'W7 waits in sync_wait');
$t0 = time;
close($w7);
$s = seconds_until("SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $w7_pid", $t0);
ok(defined $s && $s < 1.5, 'the backend of W7, which closed its socket in sync_wait, exits within 1.5 s');
is($node->safe_psql('postgres', q{
	SELECT string_agg(workflowkey || ':' || held, ',' ORDER BY workflowkey)
	  FROM sync_state WHERE name = 'mtx/dc/k'}),
	'ns/wf-1:true,ns/wf-2:false', 'the keyed entries are as they were');
$node->safe_psql('postgres', q{SELECT sync_release_holder('ns/wf-1'), sync_release_holder('ns/wf-2')});

# --- clean up, check the log -------------------------------------------------
is(mq('SELECT count(*) FROM sync_locks'), '0', 'the lock table is empty');
is(mq('SELECT count(*) FROM sync_waiters'), '0', 'no queue entry is left');
$holder->quit;
$mon->quit;

my $log = slurp_file($node->logfile, $log_offset);
unlike($log, qr/terminated by signal|all server processes terminated|PANIC|TRAP/,
	'the server log shows no crash and no crash restart');
my $lost = () = $log =~ /FATAL:  connection to client lost/g;
is($lost, 5, 'the log shows each lost client as FATAL "connection to client lost"');

$node->stop;
done_testing();
