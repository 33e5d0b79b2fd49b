# Shared memory that grows with use (src/core/shared_pool.c):
#
#  (a) at default settings syncwf adds at most 8 MB to shared_memory_size
#      (postgres -C, with and without syncwf preloaded), and a server that
#      holds nothing has taken nothing more (sync_memory);
#  (b) it grows past the old fixed sizes (110,000 locks, 140,000 entries,
#      110,000 holder keys) without a restart, and sync_memory counts what is
#      in it; released locks and entries are reused, not made again;
#  (c) the cap syncwf.max_memory: a request that needs more fails with 53200
#      and a hint naming it, loses nothing and leaves nothing half-made; the
#      next request after a release succeeds; a reload with a higher cap lets
#      memory grow again, without a restart;
#  (d) many backends growing it at once (pgbench, new locks and new holder
#      keys in every transaction) lose no hold and leave it consistent;
#  (e) a crash (kill -9 of a backend) and restart with a grown table: the
#      keyed holds come back from sync_state, every one, in grown memory;
#  (f) a streaming standby replays nothing into it; promoted, it loads the
#      many keyed holds of the primary and serves them.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $nlocks = 150_000;	   # past the old syncwf.max_locks (110,000)
my $nkeyed = 120_000;	   # past the old syncwf.max_holders (110,000)

# --- (a) what is reserved at start ------------------------------------------
my $node = PostgreSQL::Test::Cluster->new('memory');
$node->init(allows_streaming => 1);

sub shared_memory_mb
{
	my ($stdout, $stderr) = run_command(
		[ 'postgres', '-D', $node->data_dir, '-C', 'shared_memory_size' ]);
	chomp $stdout;
	return $stdout;
}
my $without = shared_memory_mb();
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'syncwf'
syncwf.database = 'postgres'
restart_after_crash = on
});
my $with = shared_memory_mb();
note("shared_memory_size: $without MB without syncwf, $with MB with it");
cmp_ok($with - $without, '<=', 8,
	'(a) at default settings syncwf adds at most 8 MB of shared memory');

$node->start;
sub sq { return $node->safe_psql('postgres', $_[0]); }
sq('CREATE EXTENSION syncwf');
my ($alloc0, $max0) = split /\|/,
  sq('SELECT allocated_bytes, max_bytes FROM sync_memory');
cmp_ok($alloc0, '<=', 256 * 1024,
	'(a) holding nothing, syncwf has taken only its first hash buckets');
is($max0, 2048 * 1024 * 1024, '(a) the default cap is 2 GB');

# --- (b) growth past the old fixed sizes --------------------------------------
sq(q{
CREATE PROCEDURE fill_keyed(first int, last int, per int) LANGUAGE plpgsql AS $$
BEGIN
    FOR b IN 0 .. (last - first) / per LOOP
        PERFORM count(*)
           FROM generate_series(first + b * per, least(first + (b + 1) * per - 1, last)) g,
                LATERAL sync_request('mtx/mem/k/' || g, 'mem/h/' || g) r;
        COMMIT;
    END LOOP;
END $$;
});
my $session = $node->background_psql('postgres');

# the session takes $nlocks mutexes named <prefix><n>, 50 to a call
sub take_locks
{
	my ($prefix) = @_;
	$session->query_safe(qq{
DO \$\$
BEGIN
    FOR b IN 0 .. $nlocks / 50 - 1 LOOP
        PERFORM sync_acquire(array(SELECT '$prefix' || (b * 50 + i)
                                     FROM generate_series(1, 50) i));
    END LOOP;
END \$\$});
}
take_locks('mtx/mem/s/');
is($session->query_safe("SELECT count(*) FROM sync_holders WHERE pid = pg_backend_pid()"),
	$nlocks, "(b) one session holds $nlocks locks, more than 110,000");
sq("CALL fill_keyed(1, $nkeyed, 10000)");
is(sq(q{SELECT count(*) FROM sync_holders WHERE scope = 'keyed'}),
	$nkeyed, "(b) $nkeyed keyed holds of as many holder keys, more than 110,000");
my $mem = sq(q{SELECT locks >= 270000 AND entries >= 270000
                      AND holders = 120000 AND lock_slots >= locks
                      AND entry_slots >= entries AND holder_slots >= holders
                      AND used_bytes <= allocated_bytes
                      AND allocated_bytes > 270000 * 600
                 FROM sync_memory});
is($mem, 't', '(b) sync_memory counts the locks, entries and holder keys, and the memory they take');
my $grown = sq('SELECT allocated_bytes FROM sync_memory');

# released, then taken again: reused, not made again
$session->query_safe('SELECT sync_release_all()');
is(sq('SELECT entries, locks - cached_locks FROM sync_memory'), "$nkeyed|$nkeyed",
	'(b) released: only the keyed holds are left (their locks live, the others cached)');
# cached locks give up their room before memory grows while they outnumber
# the live ones: from 150,000 cached and 120,000 live, 150,000 new names
# evict about 15,000 (until about 135,000 cached remain) and grow for the
# rest, less than 150,000 locks of 472 bytes (docs/reference.md, Memory and
# sizing)
take_locks('mtx/mem/t/');
is(sq(qq{SELECT cached_locks BETWEEN 100000 AND 135000 + 4096,
                allocated_bytes - $grown < 150000 * 472
           FROM sync_memory}), 't|t',
	'(b) as many new names again: cached locks beyond the live ones were evicted for them');
$session->query_safe('SELECT sync_release_all()');

# without cached locks, freed lock objects are reused: no growth at all
$session->query_safe('SELECT sync_stats_reset()');
is(sq('SELECT cached_locks, locks FROM sync_memory'), "0|$nkeyed",
	'(b) sync_stats_reset() drops the cached locks; their objects are free');
my $before = sq('SELECT allocated_bytes FROM sync_memory');
take_locks('mtx/mem/u/');
is(sq('SELECT allocated_bytes FROM sync_memory'), $before,
	'(b) as many new locks again take the memory the dropped ones freed');
$session->query_safe('SELECT sync_release_all()');
$session->quit;

# --- (e) kill -9 and restart with a grown table -------------------------------
my $bg = $node->background_psql('postgres');
my $pid = $bg->query_safe('SELECT pg_backend_pid()');
kill 'KILL', $pid;
eval { $bg->quit };
ok($node->poll_query_until('postgres', 'SELECT true'),
	'(e) the server restarts after a backend is killed');
is(sq(q{SELECT count(*) FROM sync_holders WHERE scope = 'keyed'}), $nkeyed,
	"(e) after the crash all $nkeyed keyed holds are back in shared memory");
is(sq(q{SELECT count(*) FROM sync_holders h JOIN sync_state s
          ON s.name = h.lock_name AND s.workflowkey = h.holder AND s.token = h.token}),
	$nkeyed, '(e) each with the token sync_state has');
is(sq(q{SELECT holders FROM sync_memory}), $nkeyed,
	'(e) sync_memory counts their holder keys');

# --- (f) a standby replays nothing into it; promoted, it serves them -----------
$node->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('memory_standby');
$standby->init_from_backup($node, 'bk', has_streaming => 1);
$standby->start;
$node->wait_for_catchup($standby, 'replay', $node->lsn('insert'));
is($standby->safe_psql('postgres', 'SELECT entries, holders FROM sync_memory'), '0|0',
	'(f) the standby has no keyed holds in shared memory');
$node->stop('fast');
$standby->promote;
ok($standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()'),
	'(f) the standby is promoted');
is($standby->safe_psql('postgres',
		q{SELECT count(*) FROM sync_holders WHERE scope = 'keyed'}),
	$nkeyed, "(f) the promoted server loads all $nkeyed keyed holds");
is($standby->safe_psql('postgres',
		q{SELECT r.status FROM sync_request('mtx/mem/k/1', 'mem/other') r}),
	'pending', '(f) and queues a new request behind the one held');
$standby->stop('fast');

# --- (c) the cap --------------------------------------------------------------
my $capped = PostgreSQL::Test::Cluster->new('memory_cap');
$capped->init;
$capped->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'syncwf'
syncwf.database = 'postgres'
syncwf.max_memory = 16MB
});
$capped->start;
sub cq { return $capped->safe_psql('postgres', $_[0]); }
cq('CREATE EXTENSION syncwf');
my $holder = $capped->background_psql('postgres', on_error_stop => 0);
$holder->query_safe(q{
CREATE TEMP TABLE taken AS SELECT 0 AS n;
DO $$
DECLARE n int := 0;
BEGIN
    LOOP
        BEGIN
            PERFORM sync_acquire('mtx/cap/' || (n + 1));
            n := n + 1;
        EXCEPTION WHEN out_of_memory THEN
            EXIT;
        END;
    END LOOP;
    UPDATE taken SET n = (SELECT count(*) FROM sync_holders WHERE pid = pg_backend_pid());
END $$});
my $full = $holder->query_safe('SELECT n FROM taken');
cmp_ok($full, '>', 10_000, "(c) with a 16 MB cap, $full locks fit");
my ($ret, $stdout, $stderr) = $capped->psql('postgres',
	q{SELECT sync_acquire('mtx/cap/one-more')});
like($stderr, qr/syncwf shared memory is full/, '(c) one more fails: memory is full');
like($stderr, qr/HINT:  Raise syncwf\.max_memory/, '(c) the hint names syncwf.max_memory');
($ret, $stdout, $stderr) = $capped->psql('postgres',
	q{SELECT sync_request('mtx/cap/keyed', 'cap/h')}, on_error_stop => 0);
like($stderr, qr/53200|shared memory is full/, '(c) a keyed request fails alike');
is(cq(q{SELECT count(*) FROM sync_state}), '0', '(c) and leaves no row');
is(cq('SELECT locks, entries, holders FROM sync_memory'), "$full|$full|0",
	'(c) nothing was lost and nothing half-made');
is($holder->query_safe(q{SELECT sync_release('mtx/cap/1')}), 't', '(c) one lock is released');
ok(cq(q{SELECT sync_acquire('mtx/cap/after-release') > 0}) eq 't',
	'(c) the next request after a release succeeds');
cq(q{ALTER SYSTEM SET syncwf.max_memory = '32MB'});
cq('SELECT pg_reload_conf()');
ok($capped->poll_query_until('postgres',
		q{SELECT current_setting('syncwf.max_memory') = '32MB'}),
	'(c) a reload raises the cap');
is(cq(q{SELECT status FROM sync_request('mtx/cap/keyed', 'cap/h')}), 'held',
	'(c) then the memory grows again, without a restart');
is(cq(q{SELECT grows_refused > 0 FROM sync_memory}), 't',
	'(c) sync_memory counts the refused growths');
$holder->quit;
$capped->stop('fast');

# --- (d) many backends growing it at once -------------------------------------
my $conc = PostgreSQL::Test::Cluster->new('memory_concurrent');
$conc->init;
$conc->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'syncwf'
syncwf.database = 'postgres'
max_connections = 30
});
$conc->start;
$conc->safe_psql('postgres', 'CREATE EXTENSION syncwf');
$conc->pgbench(
	'--no-vacuum --client=8 --jobs=2 --transactions=60',
	0, [qr/processed: 480\/480/], [qr/^$/],
	'(d) 8 clients make new locks and holder keys at once',
	{
		'036_grow' => q{
SELECT count(*) FROM generate_series(1, 500) g,
       LATERAL sync_acquire('mtx/c/' || :client_id || '/' || random() || '/' || g) a;
SELECT count(*) FROM generate_series(1, 100) g,
       LATERAL sync_request('mtx/ck/' || :client_id || '/' || g, 'ck/' || random()) r;
SELECT sync_release_all();
}
	});
is( $conc->safe_psql('postgres', q{
SELECT (SELECT count(*) FROM sync_state) = 48000
   AND (SELECT count(*) FROM sync_holders WHERE scope = 'keyed') = 800
   AND (SELECT count(*) FROM sync_waiters WHERE scope = 'keyed') = 47200
   AND m.entries = 48000 AND m.holders = 48000
   AND m.used_bytes <= m.allocated_bytes
  FROM sync_memory m}),
	't', '(d) every keyed request is there once (a hold or a wait), and no session hold is left');
$conc->stop('fast');

done_testing();
