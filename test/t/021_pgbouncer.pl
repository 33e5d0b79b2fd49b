# syncwf behind a real PgBouncer (Debian's package, which the test command
# installs: 1.18 on Debian 12, trixie's and sid's in the chroots), started
# here on 127.0.0.1 in front of one node. The pooled clients log in as role
# "app", so pg_stat_activity's usename tells PgBouncer's server connections
# apart from the direct connections the test observes them with.
#
#  - transaction pooling (2 server connections for more clients): a keyed
#    hold requested from one client, awaited with sync_wait from a second and
#    released from a third; a sync_wait that times out; sync_acquire_xact
#    inside explicit transactions of four clients keeps mutual exclusion;
#    a session hold (sync_acquire) stays with the server connection, shared
#    by every client of it, as an advisory lock is;
#  - session pooling: PgBouncer's server_reset_query (DISCARD ALL) ends the
#    holds of a client that disconnected, the next waiter is granted, and
#    the next client of that server connection inherits nothing; a client
#    that disconnects inside a transaction, or while it waits in
#    sync_acquire, leaves no hold and no queue entry behind;
#  - statement pooling: keyed holds work, a transaction block is refused by
#    PgBouncer.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

# The test command installs pgbouncer (scripts/suite.sh, scripts/chroot.sh):
# a missing one is a failure, not a skip.
my ($pgbouncer) =
  grep { -x } ((map { "$_/pgbouncer" } split(/:/, $ENV{PATH} // '')),
	'/usr/sbin/pgbouncer');
if (!$pgbouncer)
{
	fail('pgbouncer is installed (the test command installs Debian\'s package pgbouncer)');
	done_testing();
	exit 1;
}
my ($bouncer_version) = (run_command([ $pgbouncer, '-V' ]))[0] =~ /^(PgBouncer \S+)/m;
note "using $pgbouncer: " . ($bouncer_version // 'unknown version');

my $node = PostgreSQL::Test::Cluster->new('pgbouncer');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'syncwf'
syncwf.database = 'postgres'
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION syncwf;
CREATE ROLE app LOGIN;
CREATE TABLE xact_log (client text, iter int, pid_in int, pid_out int,
                       token bigint, holders int,
                       t_in timestamptz, t_out timestamptz);
GRANT INSERT, SELECT ON xact_log TO app;
});
my $admin = $node->safe_psql('postgres', 'SELECT current_user');

# --- PgBouncer ----------------------------------------------------------------
# One PgBouncer, four pools onto database postgres, each with its own mode
# and size; clients pick a pool by the database name they connect to.
my $bdir = PostgreSQL::Test::Utils::tempdir('pgbouncer');
my $bport = PostgreSQL::Test::Cluster::get_free_port();
my $blog = "$PostgreSQL::Test::Utils::log_path/021_pgbouncer_bouncer.log";
my $server = 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';
PostgreSQL::Test::Utils::append_to_file("$bdir/userlist.txt",
	qq{"app" ""\n"$admin" ""\n});
PostgreSQL::Test::Utils::append_to_file("$bdir/pgbouncer.ini", qq{
[databases]
tx = $server pool_mode=transaction pool_size=2
tx1 = $server pool_mode=transaction pool_size=1
sess = $server pool_mode=session pool_size=1
stmt = $server pool_mode=statement pool_size=2

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $bport
unix_socket_dir =
auth_type = trust
auth_file = $bdir/userlist.txt
admin_users = $admin
pidfile = $bdir/pgbouncer.pid
max_client_conn = 50
server_login_retry = 1
log_connections = 1
log_disconnections = 1
});
my $bouncer = IPC::Run::start([ $pgbouncer, "$bdir/pgbouncer.ini" ],
	'<', \undef, '>>', $blog, '2>>', $blog);
END { $bouncer->kill_kill if $bouncer && $bouncer->pumpable; }

sub bconn
{
	my ($db, $user) = @_;
	$user //= 'app';
	return "host=127.0.0.1 port=$bport dbname=$db user=$user";
}

# A one-shot psql through PgBouncer; (exit code, stdout, stderr).
sub bpsql
{
	my ($db, $sql, $user) = @_;
	my ($out, $err);
	my $rc = $node->psql('postgres', $sql, stdout => \$out, stderr => \$err,
		extra_params => [ '-d', bconn($db, $user) ]);
	return ($rc, $out, $err);
}

# A psql session through PgBouncer (the last -d of psql's command line wins).
sub pooled
{
	my ($db) = @_;
	my $s = $node->background_psql('postgres', on_error_stop => 0,
		extra_params => [ '-d', bconn($db) ]);
	$s->set_query_timer_restart;
	return $s;
}

# A query in a session that may fail; returns (stdout, stderr) and clears
# stderr, which BackgroundPsql keeps across queries.
sub try_query
{
	my ($s, $sql) = @_;
	my $out = $s->query($sql);
	my $err = $s->{stderr};
	$s->{stderr} = '';
	return ($out, $err);
}

# Direct connections to the node, to watch and to hold from outside.
sub sq { return $node->safe_psql('postgres', $_[0]); }
sub poll { return $node->poll_query_until('postgres', $_[0]); }

sub direct
{
	my $s = $node->background_psql('postgres', on_error_stop => 0);
	$s->set_query_timer_restart;
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	return ($s, $pid);
}

# Start a blocking statement in session $s; wait until it is on its way.
sub start_blocking
{
	my ($s, $sql) = @_;
	$s->query_until(qr/started/, "\\echo started\n$sql;\n");
	return;
}

# Wait until PgBouncer has $n clients of pool $db (SHOW CLIENTS).
sub poll_bouncer_clients
{
	my ($db, $n) = @_;
	for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		my (undef, $clients) = bpsql('pgbouncer', 'SHOW CLIENTS', $admin);
		return 1 if scalar(grep { /^C\|app\|\Q$db\E\|/ } split /\n/, $clients // '') == $n;
		select(undef, undef, undef, 0.1);
	}
	return 0;
}

my $up = 0;
for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
{
	my ($rc) = bpsql('pgbouncer', 'SHOW VERSION', $admin);
	if ($rc == 0) { $up = 1; last; }
	die "pgbouncer exited: " . slurp_file($blog) unless $bouncer->pumpable;
	select(undef, undef, undef, 0.1);
}
if (!ok($up, "PgBouncer listens on 127.0.0.1:$bport"))
{
	diag(slurp_file($blog));
	done_testing();
	exit 1;
}

my (undef, $config) = bpsql('pgbouncer', 'SHOW CONFIG', $admin);
like($config, qr/^server_reset_query\|DISCARD ALL\|/m,
	"PgBouncer's server_reset_query is DISCARD ALL (its default)");
like($config, qr/^server_reset_query_always\|0\|/m,
	'... run in session pooling only (server_reset_query_always = 0, its default)');

# --- transaction pooling: keyed holds across clients ---------------------------
# Three clients, two server connections. c1 requests for two holders (the
# second queues), c2 waits for the second one's grant with sync_wait, c3
# releases the first one.
my $c1 = pooled('tx');
my $c2 = pooled('tx');
my $c3 = pooled('tx');
is($c1->query_safe(q{SELECT sync_heartbeat('ctl-pool') IS NOT NULL}), 't',
	'c1: the controller heartbeats through transaction pooling');
my ($status_a, $token_a) = split /\|/, $c1->query_safe(q{
SELECT status, token FROM sync_request('mtx/pool/keyed', 'ns/wf-a', controller => 'ctl-pool')});
is($status_a, 'held', 'c1: ns/wf-a is granted mtx/pool/keyed at once');
is($c1->query_safe(q{
SELECT status || ':' || queue_position FROM sync_request('mtx/pool/keyed', 'ns/wf-b', controller => 'ctl-pool')}),
	'pending:1', 'c1: ns/wf-b queues behind it');

# A sync_wait that times out ends with 55P03 and leaves the entry pending.
$c2->query_safe('\set VERBOSITY verbose');
my ($out, $err) = try_query($c2,
	q{SELECT sync_wait('mtx/pool/keyed', 'ns/wf-b', interval '200 ms')});
like($err, qr/ERROR:  55P03:/, 'c2: a sync_wait that times out fails with 55P03');
is(sq(q{SELECT status FROM sync_request('mtx/pool/keyed', 'ns/wf-b')}), 'pending',
	'... and the request is still pending');

# c2 waits; its sync_wait occupies one server connection while it waits.
start_blocking($c2, q{SELECT 'token:' || sync_wait('mtx/pool/keyed', 'ns/wf-b', interval '60 s')});
ok(poll(q{SELECT count(*) = 1 FROM pg_stat_activity
           WHERE usename = 'app' AND state = 'active' AND query LIKE '%sync_wait%'}),
	'c2 waits in sync_wait on a server connection');
my ($waiting_pid) = sq(q{SELECT pid FROM pg_stat_activity
                          WHERE usename = 'app' AND state = 'active' AND query LIKE '%sync_wait%'});
# c3 gets the other one.
my ($released, $c3_pid) = split /\|/,
  $c3->query_safe(q{SELECT sync_release('mtx/pool/keyed', 'ns/wf-a'), pg_backend_pid()});
is($released, 't', 'c3 releases the hold ns/wf-a requested by c1');
isnt($c3_pid, $waiting_pid, '... on the other server connection');
$out = $c2->query_safe('SELECT 1');
my ($token_b) = $out =~ /^token:(\d+)$/m;
ok(defined $token_b, "c2's sync_wait returned the token of ns/wf-b's grant") or diag($out);
is(sq(q{SELECT token FROM sync_holders WHERE lock_name = 'mtx/pool/keyed' AND holder = 'ns/wf-b'}),
	$token_b // '', '... the token sync_holders shows for ns/wf-b');
ok(($token_b // 0) > $token_a, '... larger than the token of ns/wf-a');
my $held_b = $c3->query_safe(
	"SELECT sync_is_held('mtx/pool/keyed', 'ns/wf-b', " . ($token_b // 0) . ')');
is($held_b, 't', 'c3 finds the grant with that token in sync_state (sync_is_held)');
is($c1->query_safe(q{SELECT sync_release('mtx/pool/keyed', 'ns/wf-b')}), 't',
	'c1 releases ns/wf-b');
is(sq(q{SELECT count(*) FROM sync_locks WHERE lock_name = 'mtx/pool/keyed'}), '0',
	'mtx/pool/keyed is free');
my %pids = map { $_ => 1 } grep { defined && length }
  map { $_->query_safe('SELECT pg_backend_pid()') } ($c1, $c2, $c3);
ok(keys(%pids) <= 2, 'the three clients were served by at most two server connections');
$_->quit for ($c1, $c2, $c3);

# --- transaction pooling: sync_acquire_xact from four clients -------------------
# Each client runs 8 transactions that take mtx/pool/xact, note the server
# connection and the time they got it, sleep, and note both again before
# COMMIT. Two server connections serve the four: while one client holds,
# a second waits in sync_acquire_xact on the other server connection and
# the other two wait in PgBouncer for a server connection.
my $iters = 8;
my @runs;
for my $c (1 .. 4)
{
	my $script = '';
	for my $i (1 .. $iters)
	{
		$script .= qq{BEGIN;
SELECT sync_acquire_xact('mtx/pool/xact') AS tok, clock_timestamp() AS t_in, pg_backend_pid() AS pid_in \\gset
SELECT pg_sleep(0.01);
INSERT INTO xact_log
SELECT 'c$c', $i, :pid_in, pg_backend_pid(), :tok,
       (SELECT count(*) FROM sync_holders WHERE lock_name = 'mtx/pool/xact'),
       :'t_in', clock_timestamp();
COMMIT;
};
	}
	my %r = (script => $script, out => '', err => '');
	$r{h} = IPC::Run::start(
		[
			$node->installed_command('psql'), '-X', '-q', '-v', 'ON_ERROR_STOP=1',
			'-d', bconn('tx'), '-f', '-'
		],
		'<', \$r{script}, '>', \$r{out}, '2>', \$r{err},
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	push @runs, \%r;
}
for my $c (1 .. 4)
{
	my $r = $runs[ $c - 1 ];
	$r->{h}->finish;
	is($r->{h}->result(0), 0, "client c$c ran its $iters transactions") or diag($r->{err});
}
is(sq('SELECT count(*) FROM xact_log'), 4 * $iters, 'every transaction is logged');
is(sq('SELECT count(*) FROM xact_log WHERE pid_in <> pid_out'), '0',
	'each transaction stayed on one server connection');
is(sq('SELECT count(*) FROM xact_log WHERE holders <> 1'), '0',
	'inside each transaction mtx/pool/xact had exactly one holder');
is( sq(q{SELECT count(*) FROM (
           SELECT t_in, lag(t_out) OVER (ORDER BY t_in) AS prev_out,
                  token, lag(token) OVER (ORDER BY t_in) AS prev_token
             FROM xact_log) s
          WHERE t_in < prev_out OR token <= prev_token}),
	'0',
	'no two transactions held it at once, and tokens rise in grant order');
is(sq('SELECT count(DISTINCT pid_in) <= 2 FROM xact_log'), 't',
	'two server connections at most served them');
is(sq('SELECT bool_or(n > 1) FROM (SELECT count(DISTINCT client) AS n FROM xact_log GROUP BY pid_in) s'),
	't', 'clients shared server connections');
is(sq(q{SELECT count(*) FROM sync_locks WHERE lock_name = 'mtx/pool/xact'}), '0',
	'nothing is left of mtx/pool/xact');

# --- transaction pooling: a session hold belongs to the server connection ---------
# With one server connection (pool tx1), what a client takes with
# sync_acquire outlives its transaction and is held by that server
# connection for every client it serves next, exactly like
# pg_advisory_lock; PgBouncer runs no reset query in transaction pooling,
# not even when the client disconnects.
my $p1 = pooled('tx1');
my $p2 = pooled('tx1');
my $t_s = $p1->query_safe(q{SELECT sync_acquire('mtx/pool/session')});
my $p1_pid = $p1->query_safe('SELECT pg_backend_pid()');
$p1->query_safe('SELECT pg_advisory_lock(4711)');
is(sq(q{SELECT pid || ':' || scope FROM sync_holders WHERE lock_name = 'mtx/pool/session'}),
	"$p1_pid:session", 'p1 holds mtx/pool/session: its server connection is the holder');
is($p2->query_safe('SELECT pg_backend_pid()'), $p1_pid, 'p2 is served by the same server connection');
is($p2->query_safe(q{SELECT sync_try_acquire('mtx/pool/session')}), $t_s,
	"p2 already holds it: sync_try_acquire returns p1's token");
is($p2->query_safe('SELECT pg_try_advisory_lock(4711)'), 't',
	'... as p2 already holds the advisory lock p1 took');
$p1->quit;
ok(poll_bouncer_clients('tx1', 1), 'p1 disconnected from PgBouncer');
is($p2->query_safe(q{SELECT pid FROM sync_holders WHERE lock_name = 'mtx/pool/session'}), $p1_pid,
	"p1's disconnect did not release the hold: the server connection still holds it");
is($p2->query_safe(q{SELECT sync_release('mtx/pool/session')}), 't',
	'p2 releases the hold p1 took');
$p2->query_safe('SELECT pg_advisory_unlock_all()');
is(sq(q{SELECT count(*) FROM sync_locks WHERE lock_name = 'mtx/pool/session'}), '0',
	'mtx/pool/session is free');
$p2->quit;

# --- session pooling: the next client inherits nothing -----------------------------
# Pool sess has one server connection. s1 holds a mutex and an advisory
# lock, a direct session waits for the mutex; s1 disconnects. PgBouncer
# runs DISCARD ALL on the server connection before handing it on.
my $s1 = pooled('sess');
my $s1_pid = $s1->query_safe('SELECT pg_backend_pid()');
my $t_s1 = $s1->query_safe(q{SELECT sync_acquire('mtx/pool/sess')});
$s1->query_safe('SELECT pg_advisory_lock(4712)');
my ($w, $w_pid) = direct();
start_blocking($w, q{SELECT 'granted:' || sync_acquire('mtx/pool/sess')});
ok(poll(qq{SELECT count(*) = 1 FROM sync_waiters WHERE lock_name = 'mtx/pool/sess' AND pid = $w_pid}),
	'a direct session waits for the mutex s1 holds');
$s1->quit;
ok(poll(qq{SELECT count(*) = 1 FROM sync_holders WHERE lock_name = 'mtx/pool/sess' AND pid = $w_pid}),
	's1 disconnected: the waiter is granted');
ok(poll(qq{SELECT query = 'DISCARD ALL' AND state = 'idle' FROM pg_stat_activity WHERE pid = $s1_pid}),
	"... because PgBouncer ran DISCARD ALL on s1's server connection, which stays");
my $s2 = pooled('sess');
is($s2->query_safe('SELECT pg_backend_pid()'), $s1_pid, 's2 gets the same server connection');
is($s2->query_safe('SELECT count(*) FROM sync_holders WHERE pid = pg_backend_pid()'), '0',
	's2 holds nothing of what s1 held');
is($s2->query_safe(q{SELECT sync_try_acquire('mtx/pool/sess') IS NULL}), 't',
	'... and cannot take the mutex the waiter holds now');
is($s2->query_safe('SELECT pg_try_advisory_lock(4712)'), 't',
	"... while s1's advisory lock was released too");
$s2->query_safe('SELECT pg_advisory_unlock_all()');
$out = $w->query_safe(q{SELECT sync_release('mtx/pool/sess')});
my ($t_w) = $out =~ /^granted:(\d+)$/m;
ok(defined $t_w && $t_w > $t_s1, "the waiter's token is larger than s1's") or diag($out);
$w->quit;

# --- session pooling: a client that disconnects inside a transaction ------------
# PgBouncer cannot reset a server connection in a transaction: it closes it,
# the backend ends, and the transaction's hold with it.
$s2->query_safe('BEGIN');
$s2->query_safe(q{SELECT sync_acquire_xact('mtx/pool/sessx')});
is(sq(q{SELECT pid FROM sync_holders WHERE lock_name = 'mtx/pool/sessx'}), $s1_pid,
	's2 holds mtx/pool/sessx in its transaction');
$s2->quit;
ok(poll(qq{SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $s1_pid}),
	's2 disconnected in its transaction: PgBouncer closed the server connection');
is(sq(q{SELECT count(*) FROM sync_locks WHERE lock_name = 'mtx/pool/sessx'}), '0',
	'... and the transaction hold is gone');

# --- session pooling: a client that disconnects while it waits ------------------
# The client's psql is killed while its sync_acquire waits. PgBouncer
# closes that server connection (its client left with a statement under
# way); the backend, which watches its client's socket while it waits
# (see docs/operations.md, Clients that go away), ends at once, with
# client_connection_check_interval off: its queue entry goes, the waiter
# behind it moves to the front and gets the holder's release.
my ($h, $h_pid) = direct();
my $t_h = $h->query_safe(q{SELECT sync_acquire('mtx/pool/wait')});
my $s3 = pooled('sess');
my $s3_pid = $s3->query_safe('SELECT pg_backend_pid()');
is($s3->query_safe('SHOW client_connection_check_interval'), '0',
	"the pooled client's server connection does not check for a lost client periodically");
start_blocking($s3, q{SELECT sync_acquire('mtx/pool/wait')});
ok(poll(qq{SELECT count(*) = 1 FROM sync_waiters WHERE lock_name = 'mtx/pool/wait' AND pid = $s3_pid}),
	's3, a pooled client, waits in sync_acquire');
my ($w2, $w2_pid) = direct();
start_blocking($w2, q{SELECT 'granted:' || sync_acquire('mtx/pool/wait')});
ok(poll(qq{SELECT count(*) = 1 FROM sync_waiters WHERE lock_name = 'mtx/pool/wait' AND pid = $w2_pid}),
	'a direct session waits behind it');
$s3->{run}->kill_kill;
ok(poll_bouncer_clients('sess', 0), "s3's psql is killed: PgBouncer has lost its client");
ok(poll(qq{SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $s3_pid}),
	"... and closed its server connection, whose backend ended");
is(sq(q{SELECT pid || ':' || position FROM sync_waiters WHERE lock_name = 'mtx/pool/wait'}),
	"$w2_pid:1", "s3's queue entry is gone: the direct waiter is at the front");
is(sq(q{SELECT pid FROM sync_holders WHERE lock_name = 'mtx/pool/wait'}), $h_pid,
	'... while the holder still holds');
is($h->query_safe(q{SELECT sync_release('mtx/pool/wait')}), 't', 'the holder releases');
ok(poll(qq{SELECT count(*) = 1 FROM sync_holders WHERE lock_name = 'mtx/pool/wait' AND pid = $w2_pid}),
	'the direct waiter is granted');
$out = $w2->query_safe(q{SELECT sync_release('mtx/pool/wait')});
my ($t_w2) = $out =~ /^granted:(\d+)$/m;
ok(defined $t_w2 && $t_w2 > $t_h, "... with a larger token than the holder's") or diag($out);
$h->quit;
$w2->quit;

# --- statement pooling -------------------------------------------------------------
my ($rc, $st_out, $st_err) = bpsql('stmt', q{
SELECT status FROM sync_request('mtx/pool/stmt', 'ns/wf-s');
SELECT status FROM sync_request('mtx/pool/stmt', 'ns/wf-t');
});
is($st_out // '', "held\npending", 'statement pooling: keyed requests, one statement each') or diag($st_err);
($rc, $st_out, $st_err) = bpsql('stmt', q{
SELECT sync_release('mtx/pool/stmt', 'ns/wf-s');
SELECT sync_wait('mtx/pool/stmt', 'ns/wf-t', interval '30 s') > 0;
SELECT sync_release('mtx/pool/stmt', 'ns/wf-t');
});
is($st_out // "", "t\nt\nt", "... a release, a sync_wait and a release") or diag($st_err);
($rc, $st_out, $st_err) = bpsql('stmt', q{
BEGIN;
SELECT sync_acquire_xact('mtx/pool/stmtx');
COMMIT;
});
isnt($rc, 0, 'statement pooling: a transaction block fails');
like($st_err, qr/transaction blocks not allowed in statement pooling mode/,
	'... PgBouncer refuses it') or diag($st_err);
ok(poll(q{SELECT count(*) = 0 FROM sync_locks}), 'nothing is held or queued at the end');

# --- stop PgBouncer --------------------------------------------------------------------
$bouncer->signal('INT');
$bouncer->finish;
my $log = slurp_file($blog);
unlike($log, qr/\b(FATAL|PANIC)\b/, "PgBouncer's log shows no fatal error");

$node->stop;
done_testing();
