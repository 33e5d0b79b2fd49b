# Capacity limits of the shared lock table and entry pool.
#
# With syncwf.max_locks = 20 and syncwf.max_entries = 30 (the minimum of
# either is 16):
#  - the 21st distinct live lock is refused with SQLSTATE 53200, "syncwf lock
#    table is full" and a hint naming syncwf.max_locks;
#  - the 31st entry (hold or queue entry) is refused with 53200, "syncwf
#    entry pool is full" and a hint naming syncwf.max_entries;
#  - neither error corrupts anything: what is held stays held and listed,
#    freed capacity can be used again, and a refused multi-lock request
#    leaves no lock and no entry behind (the exact remaining capacity can
#    still be taken afterwards);
#  - idle (cached) semaphores make room for new locks even while readers
#    of the whole table hold every partition.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('capacity');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'syncwf'");
$node->append_conf('postgresql.conf', "syncwf.max_locks = 20");
$node->append_conf('postgresql.conf', "syncwf.max_entries = 30");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION syncwf');

is($node->safe_psql('postgres', 'SHOW syncwf.max_locks'), '20', 'syncwf.max_locks is 20');
is($node->safe_psql('postgres', 'SHOW syncwf.max_entries'), '30', 'syncwf.max_entries is 30');

# Run SQL in a new session, SQLSTATEs in the error output.
sub try_sql
{
	my ($sql) = @_;
	my ($ret, $out, $err) =
	  $node->psql('postgres', "\\set VERBOSITY verbose\n$sql", on_error_stop => 1);
	return ($ret, $out, $err);
}

sub sq { return $node->safe_psql('postgres', $_[0]); }

sub expect_table_full
{
	my ($sql, $label) = @_;
	my ($ret, $out, $err) = try_sql($sql);
	isnt($ret, 0, "$label: refused");
	like($err, qr/ERROR:  53200: syncwf lock table is full/,
		"$label: \"syncwf lock table is full\" (53200)");
	like($err, qr/HINT:  .*syncwf\.max_locks/, "$label: hint names syncwf.max_locks");
	return $out;
}

sub expect_pool_full
{
	my ($sql, $label) = @_;
	my ($ret, $out, $err) = try_sql($sql);
	isnt($ret, 0, "$label: refused");
	like($err, qr/ERROR:  53200: syncwf entry pool is full/,
		"$label: \"syncwf entry pool is full\" (53200)");
	like($err, qr/HINT:  .*syncwf\.max_entries/, "$label: hint names syncwf.max_entries");
	return $out;
}

# =============================================================================
# 1. Lock table: 20 distinct live locks
# =============================================================================
my $sa = $node->background_psql('postgres');
my $sa_pid = $sa->query_safe('SELECT pg_backend_pid()');

is($sa->query_safe(
		"SELECT count(sync_acquire('mtx/c/' || g)) FROM generate_series(1, 20) g"),
	'20', 'session A holds 20 distinct locks');

expect_table_full("SELECT sync_acquire('mtx/c/21')", 'sync_acquire of a 21st lock');
expect_table_full("SELECT sync_try_acquire('mtx/c/21')", 'sync_try_acquire of a 21st lock');
expect_table_full("SELECT sync_try_acquire_xact('mtx/c/21')", 'sync_try_acquire_xact of a 21st lock');

is(sq("SELECT count(*), count(*) FILTER (WHERE holders = 1 AND waiters = 0),
             count(*) FILTER (WHERE lock_name = 'mtx/c/21')
        FROM sync_locks"),
	'20|20|0', 'the 20 held locks are still listed, each with its one holder; no 21st');
is(sq("SELECT count(*) FROM sync_holders WHERE pid = $sa_pid"),
	'20', 'sync_holders still shows A holding all 20');

# Existing locks stay usable: queueing on one needs no new lock slot.
my ($ret, $out, $err) = try_sql("SELECT sync_acquire('mtx/c/5', 0, '50 ms')");
like($err, qr/ERROR:  55P03:/,
	'a full lock table does not stop queueing on an existing lock (times out normally, 55P03)');

# Release one: a new lock fits again.
is($sa->query_safe("SELECT sync_release('mtx/c/1')"), 't', 'A releases one lock');
is(sq("SELECT sync_acquire('mtx/c/21') IS NOT NULL"), 't',
	'after a release, a new lock can be acquired');
is(sq('SELECT count(*) FROM sync_locks'), '19',
	'the new lock was freed when its session ended (19 live)');

# release_all, then all 20 can be taken again.
is($sa->query_safe('SELECT sync_release_all()'), '19', 'A releases the other 19 with sync_release_all');
is(sq('SELECT count(*) FROM sync_locks'), '0', 'the lock table is empty');
is($sa->query_safe(
		"SELECT count(sync_acquire('mtx/c/' || g)) FROM generate_series(101, 120) g"),
	'20', 'after sync_release_all, 20 locks can be taken again');
expect_table_full("SELECT sync_acquire('mtx/c/121')", 'the 21st lock, second round');

# A refused multi-lock request leaves nothing behind.
is($sa->query_safe("SELECT sync_release('mtx/c/101') AND sync_release('mtx/c/102')"),
	't', 'A releases two locks (18 live, 2 free slots)');
expect_table_full("SELECT sync_try_acquire(ARRAY['mtx/c/x1', 'mtx/c/x2', 'mtx/c/x3'])",
	'sync_try_acquire of 3 new locks with 2 free slots');
expect_table_full("SELECT sync_acquire(ARRAY['mtx/c/x1', 'mtx/c/x2', 'mtx/c/x3'], 0, '1 s')",
	'sync_acquire of 3 new locks with 2 free slots');
expect_table_full("SELECT sync_acquire(ARRAY['mtx/c/103', 'mtx/c/x1', 'mtx/c/x2', 'mtx/c/x3'], 0, '1 s')",
	'sync_acquire of a held lock and 3 new ones with 2 free slots');
is(sq("SELECT count(*), count(*) FILTER (WHERE lock_name LIKE 'mtx/c/x%'),
             count(*) FILTER (WHERE waiters > 0), sum(holders)
        FROM sync_locks"),
	'18|0|0|18', 'the refused requests created no lock and queued nowhere');
is(sq("SELECT cardinality(sync_acquire(ARRAY['mtx/c/x1', 'mtx/c/x2']))"), '2',
	'exactly the 2 free slots can still be taken by one request');
like(
	expect_table_full(
		"SELECT 'got:' || cardinality(sync_acquire(ARRAY['mtx/c/x1', 'mtx/c/x2']));\n"
		  . "SELECT sync_try_acquire('mtx/c/x3')",
		'after taking the 2 free slots again, one more lock'),
	qr/^got:2$/m, '... while the 2 free slots were taken again first');

is($sa->query_safe('SELECT sync_release_all()'), '18', 'A releases its 18 locks');
is(sq('SELECT count(*) FROM sync_locks'), '0', 'lock table empty again');

# =============================================================================
# 2. Entry pool: 30 holds and queue entries
# =============================================================================
is($sa->query_safe(
		"SELECT count(sync_acquire('mtx/e/' || g)) FROM generate_series(1, 15) g"),
	'15', 'A holds 15 locks (15 entries)');

my $sw = $node->background_psql('postgres');
my $sw_pid = $sw->query_safe('SELECT pg_backend_pid()');
$sw->query_until(qr/waiting/,
	"\\echo waiting\nSELECT sync_acquire(ARRAY(SELECT 'mtx/e/' || g FROM generate_series(1, 15) g));\n");
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 15 FROM sync_waiters WHERE pid = $sw_pid AND request_size = 15"),
	'W queues one request for the same 15 locks (15 more entries: the pool is full)');

expect_pool_full("SELECT sync_try_acquire('mtx/e/new')", 'sync_try_acquire of a new lock, pool full');
expect_pool_full("SELECT sync_acquire('mtx/e/new', 0, '1 s')", 'sync_acquire of a new lock, pool full');
expect_pool_full("SELECT sync_acquire('mtx/e/3', 0, '1 s')", 'queueing on a held lock, pool full');
expect_pool_full("SELECT sync_try_acquire(ARRAY['mtx/e/new', 'mtx/e/new2'])",
	'a two-lock request, pool full');

is(sq("SELECT count(*), count(*) FILTER (WHERE holders = 1 AND waiters = 1)
        FROM sync_locks"),
	'15|15', 'after the refusals: the same 15 locks, each with 1 holder and 1 waiter');
is(sq("SELECT count(*) FROM sync_holders WHERE pid = $sa_pid"), '15', 'A still holds 15');
is(sq("SELECT count(*) FROM sync_waiters WHERE pid = $sw_pid"), '15', 'W still waits on 15');

# One entry becomes free: W keeps waiting (it needs all 15), one new hold fits.
is($sa->query_safe("SELECT sync_release('mtx/e/1')"), 't', 'A releases mtx/e/1 (29 entries)');
is(sq("SELECT count(*) FROM sync_waiters WHERE pid = $sw_pid"), '15',
	'W still waits: its request needs all 15 locks');
is(sq("SELECT sync_try_acquire('mtx/e/1') IS NULL"), 't',
	'a try on mtx/e/1 does not jump W in the queue');
expect_pool_full("SELECT sync_try_acquire(ARRAY['mtx/e/new', 'mtx/e/new2'])",
	'a two-lock request with one free entry');
is(sq("SELECT count(*) FROM sync_locks WHERE lock_name LIKE 'mtx/e/new%'"), '0',
	'the refused two-lock request created no lock');
is(sq("SELECT sync_try_acquire('mtx/e/new') IS NOT NULL"), 't',
	'the one free entry can be used: the refused request gave back what it reserved');
like(
	expect_pool_full(
		"SELECT 'got:' || sync_try_acquire('mtx/e/new2');\n"
		  . "SELECT sync_try_acquire('mtx/e/new3')",
		'after using the one free entry again, one more'),
	qr/^got:\d+$/m, '... while the one free entry was used again first');

# A lets go: W gets all 15 at once.
is($sa->query_safe('SELECT sync_release_all()'), '14', 'A releases its other 14 holds');
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 15 FROM sync_holders WHERE pid = $sw_pid"),
	'W is granted all 15 locks');
is(sq('SELECT count(*) FROM sync_waiters'), '0', 'no queue entry is left');
like($sw->query_safe('SELECT sync_release_all()'), qr/(^|\n)15$/, 'W releases its 15 holds');

# The whole pool is usable again: 30 entries, e.g. 15 locks held by two
# sessions each (a semaphore of limit 2 lets both hold it).
sq("INSERT INTO sync_limit SELECT 'e/s' || g, 2 FROM generate_series(1, 15) g");
is($sa->query_safe(
		"SELECT count(sync_acquire('sem/e/s' || g)) FROM generate_series(1, 15) g"),
	'15', 'A holds 15 semaphores');
is($sw->query_safe(
		"SELECT count(sync_acquire('sem/e/s' || g)) FROM generate_series(1, 15) g"),
	'15', 'W holds the same 15 semaphores: 30 entries in use');
expect_pool_full("SELECT sync_try_acquire('mtx/e/more')", 'the 31st entry');
is($sa->query_safe('SELECT sync_release_all()'), '15', 'A releases 15');
is($sw->query_safe('SELECT sync_release_all()'), '15', 'W releases 15');
is(sq('SELECT count(*) FROM sync_locks'), '0', 'nothing left in the lock table');

# Idle semaphores may stay cached in the lock table, but max_locks counts
# live locks (with a holder or a waiter): all 20 slots are usable again, and
# the semaphores still work (with their limit) afterwards.
is($sa->query_safe(
		"SELECT count(sync_acquire('mtx/c/' || g)) FROM generate_series(201, 220) g"),
	'20', '20 new locks fit after the 15 semaphores went idle');
expect_table_full("SELECT sync_try_acquire('mtx/c/221')", 'a 21st live lock, with idle semaphores around');
is($sa->query_safe('SELECT sync_release_all()'), '20', 'A releases the 20');
is($sa->query_safe(
		"SELECT count(sync_acquire('sem/e/s' || g)) FROM generate_series(1, 15) g"),
	'15', 'A takes the 15 semaphores again');
is(sq("SELECT string_agg(DISTINCT sizelimit || ':' || holders, ',') FROM sync_locks"),
	'2:1', 'each semaphore again shows its limit of 2 and one holder');
is($sa->query_safe('SELECT sync_release_all()'), '15', 'A releases the 15');

# =============================================================================
# 3. A nearly full table of idle semaphores never refuses a new lock
# =============================================================================
# Every new lock in a full table evicts an idle semaphore (in second-chance
# order, checked after this part), while other sessions create and drop locks in other partitions
# and readers of the whole table (sync_locks, sync_holders) hold every
# partition for a moment.  Neither may make a request fail: a lock slot the
# request reserved is always found in the hash, and a request that cannot
# evict without waiting waits for a partition and tries again.  A second
# cluster with room for 2,000 locks: 8 pgbench clients take and release
# random semaphores among 50,000 (at most 8 live at a time, every other slot
# an idle semaphore), as session and as keyed holds, while a quarter of the
# transactions read the whole table.
my $ev = PostgreSQL::Test::Cluster->new('evict');
$ev->init;
$ev->append_conf('postgresql.conf', "shared_preload_libraries = 'syncwf'");
$ev->append_conf('postgresql.conf', "syncwf.max_locks = 2000");
# every statement in the log would slow the clients down ten times
$ev->append_conf('postgresql.conf', "log_statement = none");
$ev->start;
$ev->safe_psql('postgres', 'CREATE EXTENSION syncwf');
$ev->safe_psql('postgres',
	"INSERT INTO sync_limit SELECT 'ev/' || g, 1 FROM generate_series(1, 50000) g");
is($ev->safe_psql('postgres',
		"SELECT count(sync_acquire('sem/ev/' || g)) FROM generate_series(1, 2000) g;
		 SELECT sync_release_all()"),
	"2000\n2000", 'the 2,000 lock slots are filled with idle semaphores');
$ev->pgbench(
	'--no-vacuum --protocol=prepared --client=8 --jobs=2 --time=10',
	0,
	[qr{number of failed transactions: 0 }],
	[qr{^$}],
	'8 clients, 10 s: no request refused for a full table while idle semaphores can make room',
	{
		'003_session@6' => q{\set n random(1, 50000)
SELECT sync_acquire('sem/ev/' || :n);
SELECT sync_release('sem/ev/' || :n);
},
		'003_keyed@1' => q{\set n random(1, 50000)
SELECT status FROM sync_request('sem/ev/' || :n, 'ev/c' || :client_id);
SELECT sync_release('sem/ev/' || :n, 'ev/c' || :client_id);
},
		'003_reader@1' => q{SELECT count(*) FROM sync_locks;
SELECT count(*) FROM sync_holders;
}
	});
is($ev->safe_psql('postgres',
		"SELECT (SELECT count(*) FROM sync_holders) || ' ' || (SELECT count(*) FROM sync_state)"),
	'0 0', 'afterwards nothing is held and no keyed row is left');

# Which cached semaphore makes room: one used again since it was cached is
# kept, and each new lock evicts exactly one that was not.  What is cached
# shows through limits removed behind syncwf's back (no trigger under
# session_replication_role = replica): a cached semaphore still knows its
# limit, an evicted one must read it and finds none.
$ev->restart;
$ev->safe_psql('postgres', q{
	DO $$
	BEGIN
	    FOR g IN 1..2000 LOOP          -- cached in this order
	        PERFORM sync_acquire('sem/ev/' || g);
	        PERFORM sync_release('sem/ev/' || g);
	    END LOOP;
	    FOR g IN 1..10 LOOP            -- the oldest 10 used again
	        PERFORM sync_acquire('sem/ev/' || g);
	        PERFORM sync_release('sem/ev/' || g);
	    END LOOP;
	END
	$$;
	SET session_replication_role = replica;
	DELETE FROM sync_limit WHERE name ~ '^ev/[0-9]+$' AND substr(name, 4)::int <= 2000});
is($ev->safe_psql('postgres',
		"SELECT count(sync_acquire('mtx/ev/new' || g)) FROM generate_series(1, 10) g;
		 SELECT sync_release_all()"),
	"10\n10", 'a table full of 2,000 cached semaphores: 10 new locks take the room of 10 of them');
$ev->safe_psql('postgres', q{
	CREATE FUNCTION evicted(lo int, hi int) RETURNS int LANGUAGE plpgsql AS $$
	DECLARE n int := 0;
	BEGIN
	    FOR g IN lo..hi LOOP
	        BEGIN
	            PERFORM sync_try_acquire('sem/ev/' || g);
	            PERFORM sync_release('sem/ev/' || g);
	        EXCEPTION WHEN OTHERS THEN
	            IF SQLERRM NOT LIKE '%has no limit%' THEN RAISE; END IF;
	            n := n + 1;
	        END;
	    END LOOP;
	    RETURN n;
	END
	$$});
is($ev->safe_psql('postgres', 'SELECT evicted(1, 10) || \' \' || evicted(11, 2000)'),
	'0 10',
	'the 10 used again are still cached; exactly 10 of the others were evicted');
$ev->stop;

$sa->quit;
$sw->quit;

my $log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal|all server processes terminated|PANIC/,
	'no crash in the server log');

$node->stop;
done_testing();
