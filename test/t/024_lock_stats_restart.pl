# Per-lock statistics (sync_lock_stats) across restarts.
#
# On PostgreSQL 18 and later the rows are saved as custom cumulative
# statistics at a clean shutdown and come back at the next start, with
# their names, counters, histogram and reset time (src/engine/stats_persist.c):
#  - a fast restart brings back every row, of every database, identical;
#  - a second restart before anything used the rows keeps them too;
#  - a lock used again counts on in its restored row;
#  - sync_stats_reset() works on restored rows, and what it removed stays
#    removed across the next restart;
#  - a lower syncwf.stats_max_locks restores as many lock rows as fit,
#    and PostgreSQL's own statistics are read back all the same.
# Before 18 the rows live in shared memory only: after any restart the view
# is empty.  On 18, taking syncwf out of shared_preload_libraries after
# rows were saved makes PostgreSQL discard its whole statistics file.  On every version an immediate shutdown or a crash (SIGKILL of
# a backend) starts them from zero: PostgreSQL discards its statistics file
# then, its own statistics too.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/..";
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SyncwfTest;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('lock_stats_restart');
$node->init;
# Four locks get a row of their own; more go into their namespace's row.
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'syncwf'
syncwf.database = 'postgres'
syncwf.stats_max_locks = 4
restart_after_crash = on
});
$node->start;

my $saved = $node->safe_psql('postgres', 'SHOW server_version_num') >= 180000;
my $killed_backend = $saved ? 'client backend' : 'server process';
note($saved ? 'rows are saved across a clean restart'
	: 'rows are in shared memory only');

$node->safe_psql('postgres', q{
    CREATE EXTENSION syncwf;
    INSERT INTO sync_limit (name, sizelimit) VALUES ('ps/pool', 1);
    CREATE TABLE counted (i int);
});
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', 'CREATE EXTENSION syncwf');

sub sq { my ($db, $sql) = @_; return $node->safe_psql($db, $sql); }

# Every row of both databases, every column.
sub view
{
	my $sql = q{SELECT string_agg(s::text, E'\n' ORDER BY lock_name)
	              FROM sync_lock_stats s};
	return sq('postgres', $sql) . "\n--\n" . sq('other', $sql);
}

sub empty_view { return "\n--\n"; }

# PostgreSQL's own counters of the table "counted" (saved at a clean
# shutdown on every version).
sub table_inserts
{
	return sq('postgres', q{
		SELECT coalesce((SELECT n_tup_ins FROM pg_stat_user_tables
		                  WHERE relname = 'counted'), 0)});
}

# A known workload: immediate grants and holds, a waited grant, a timeout,
# a cancel, a queue of two on a semaphore, then locks beyond
# syncwf.stats_max_locks (namespace rows), in two databases.
sub workload
{
	sq('postgres', q{
		SELECT sync_acquire('mtx/ps/a') > 0;
		SELECT sync_release('mtx/ps/a');
		SELECT sync_acquire('mtx/ps/a') > 0;
		SELECT pg_sleep(0.01);
		SELECT sync_release('mtx/ps/a');
		SELECT status FROM sync_request('mtx/ps/k', 'ps/h1');
		SELECT status FROM sync_request('mtx/ps/k', 'ps/h2');
		SELECT pg_sleep(0.02);
		SELECT sync_release('mtx/ps/k', 'ps/h1');
		DO $$ BEGIN
		    PERFORM sync_acquire('mtx/ps/k', timeout => '30 ms');
		EXCEPTION WHEN OTHERS THEN NULL;
		END $$;
		SELECT status FROM sync_request('mtx/ps/k', 'ps/h3');
		SELECT sync_release('mtx/ps/k', 'ps/h3');
		SELECT sync_release('mtx/ps/k', 'ps/h2');
		SELECT status FROM sync_request('sem/ps/pool', 'ps/p1');
		SELECT status FROM sync_request('sem/ps/pool', 'ps/p2');
		SELECT status FROM sync_request('sem/ps/pool', 'ps/p3');
		SELECT sync_release_holder(h)
		  FROM unnest(ARRAY['ps/p1', 'ps/p2', 'ps/p3']) AS h;
		SELECT sync_try_acquire('mtx/ps/d') > 0;
		SELECT sync_release('mtx/ps/d');
		SELECT sync_try_acquire('mtx/ns1/x') > 0;
		SELECT sync_release('mtx/ns1/x');
		SELECT sync_try_acquire('mtx/ns1/y') > 0;
		SELECT sync_release('mtx/ns1/y');
	});
	sq('other', q{
		SELECT sync_try_acquire('mtx/od/a') > 0;
		SELECT sync_release('mtx/od/a');
	});
	return;
}

sub grants_of
{
	my ($lock) = @_;
	return sq('postgres', qq{
		SELECT grants_immediate || '/' || hold_count || '/' || stats_reset
		  FROM sync_lock_stats WHERE lock_name = '$lock'});
}

# --- a clean restart ----------------------------------------------------------
workload();
sq('postgres', 'INSERT INTO counted SELECT generate_series(1, 5)');
sq('postgres', 'SELECT pg_stat_force_next_flush()');
my $before = view();
like($before, qr{^\(mtx/ns1/\*,2,0,0,0,0,}m, 'workload: a namespace row of two locks');
like($before, qr{^\(mtx/ps/k,1,1,1,1,0,0,3,}m,
	'workload: mtx/ps/k has a grant at once, one after a wait, a timeout, a cancel, three waits');
like($before, qr{^\(sem/ps/pool,1,2,0,0,0,0,2,.*,2,[^,]*\)$}m,
	'workload: sem/ps/pool had a queue of two');
like($before, qr{--\n\(mtx/od/\*,1,}, 'workload: the other database has its row');

my $offset = -s $node->logfile;
$node->restart;
is(table_inserts(), 5, "PostgreSQL's own statistics survive a clean restart");
# a second restart, before anything used the rows
$node->restart;
if ($saved)
{
	is(view(), $before,
		'after two clean restarts every row of both databases is back, identical');
	like(slurp_file($node->logfile, $offset),
		qr/syncwf restored 6 per-lock statistics rows saved at the last shutdown/,
		'the log says how many rows came back');
}
else
{
	is(view(), empty_view(), 'before 18 the rows reset at a clean restart');
}

# --- a lock used again counts on in its restored row ----------------------------
my ($imm, $holds, $reset_at) = split m{/}, grants_of('mtx/ps/a') || '0/0/';
sq('postgres', q{SELECT sync_acquire('mtx/ps/a'); SELECT sync_release('mtx/ps/a')});
my ($imm2, $holds2, $reset_at2) = split m{/}, grants_of('mtx/ps/a');
if ($saved)
{
	is("$imm/$holds", '2/2', 'mtx/ps/a came back with two grants and two holds');
	is("$imm2/$holds2", '3/3', 'a lock used after the restart counts in its restored row');
	is($reset_at2, $reset_at, 'the restored row keeps its reset time');
	$node->restart;
	is(grants_of('mtx/ps/a'), "3/3/$reset_at", 'and the new count survives the next restart');
}
else
{
	is("$imm2/$holds2", '1/1', 'before 18 a lock used after the restart counts from zero');
}

# --- sync_stats_reset() on restored rows -------------------------------------------
sq('postgres', q{SELECT sync_stats_reset('mtx/ps/a')});
is(grants_of('mtx/ps/a'), '', 'sync_stats_reset(name) removes a restored row');
$node->restart;
is(grants_of('mtx/ps/a'), '', 'the removed row stays removed after a restart');
sq('postgres', 'SELECT sync_stats_reset()');
sq('other', 'SELECT sync_stats_reset()');
is(view(), empty_view(), 'sync_stats_reset() empties the view');
$node->restart;
is(view(), empty_view(), 'and it stays empty after a restart');

# --- a lower syncwf.stats_max_locks ------------------------------------------------
workload();
$offset = -s $node->logfile;
$node->append_conf('postgresql.conf', 'syncwf.stats_max_locks = 2');
$node->restart;
my $rows = sq('postgres', q{
	SELECT count(*) FILTER (WHERE lock_name NOT LIKE '%*') || '/' ||
	       count(*) FILTER (WHERE lock_name LIKE '%*')
	  FROM sync_lock_stats});
if ($saved)
{
	is($rows, '2/1', 'with syncwf.stats_max_locks = 2, two lock rows and the namespace row come back');
	like(slurp_file($node->logfile, $offset), qr/2 saved rows were dropped/,
		'the log says how many rows did not fit');
}
else
{
	is($rows, '0/0', 'before 18 no row comes back');
}
is(table_inserts(), 5,
	"PostgreSQL's own statistics are read back whatever syncwf.stats_max_locks is");
$node->append_conf('postgresql.conf', 'syncwf.stats_max_locks = 4');
$node->restart;

# --- an immediate shutdown --------------------------------------------------------
sq('postgres', 'SELECT sync_stats_reset()');
workload();
$node->stop('immediate');
$node->start;
is(view(), empty_view(), 'after an immediate shutdown the rows start from zero');
is(table_inserts(), 0, "as PostgreSQL's own statistics do");

# --- a crash ----------------------------------------------------------------------
workload();
$node->restart;    # saved (on 18): the crash must discard them
isnt(view(), empty_view(), 'rows to lose') if $saved;
workload();
my $s = $node->background_psql('postgres');
my $pid = $s->query_safe('SELECT pg_backend_pid()');
$offset = -s $node->logfile;
ok(kill('KILL', $pid), "sent SIGKILL to backend $pid");
$node->wait_for_log(qr/all server processes terminated; reinitializing/, $offset);
ok($node->poll_query_until('postgres', 'SELECT true'),
	'the server accepts connections again after the crash');
like(slurp_file($node->logfile, $offset),
	qr/$killed_backend \(PID $pid\) was terminated by signal 9/,
	'the postmaster saw the SIGKILLed backend');
eval { $s->{run}->kill_kill; 1; } or note "closing dead session: $@";
is(view(), empty_view(), 'after a crash the rows start from zero');
$node->restart;
is(view(), empty_view(), 'and a clean restart after it brings nothing back');

# --- syncwf taken out of shared_preload_libraries (18) ---------------------------
# PostgreSQL finds kinds it does not know in its statistics file and
# discards the whole file, its own statistics too (docs/reference.md).
if ($saved)
{
	sq('postgres', 'INSERT INTO counted SELECT generate_series(1, 5)');
	sq('postgres', 'SELECT pg_stat_force_next_flush()');
	workload();
	$node->stop;
	$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "''");
	$offset = -s $node->logfile;
	$node->start;
	like(slurp_file($node->logfile, $offset), qr/corrupted statistics file/,
		'without syncwf preloaded, PostgreSQL discards a file with saved rows');
	is(table_inserts(), 0, "its own statistics with it");
}

$node->stop;
done_testing();
