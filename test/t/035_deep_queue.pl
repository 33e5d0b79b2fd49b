# A queue 200,000 deep costs about what a short one does: keyed requests
# joining the back of one mutex's queue, each returning its position
# (src/engine/queue_rank.c), take about the same time per request at the
# end of the fill as at its start.
#
#  - 200,000 requests queue on a held mutex, 10,000 to a transaction, in
#    one procedure that times each batch; every request is pending, the
#    last one reports position 200,000, and sync_waiters agrees;
#  - the last batch (199,999th to 200,000th waiter joining) costs at most
#    4 times the first (joining a queue up to 10,000 deep; 1.6 times on
#    the machine that wrote this).  When a position walked the queue from
#    its front, the fill alone did not finish in 10 minutes; the bound
#    leaves room for a noisy machine;
#  - a waiter withdrawn from the middle moves everyone behind it up one,
#    and a request at a higher priority goes to the front at once;
#  - TRUNCATE sync_state withdraws them all, and the lock is empty.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $depth = 200_000;
my $batch = 10_000;

my $node = PostgreSQL::Test::Cluster->new('deep_queue');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'syncwf'
syncwf.database = 'postgres'
syncwf.max_entries = @{[ $depth + 1000 ]}
syncwf.max_holders = @{[ $depth + 1000 ]}
});
$node->start;

sub sq { return $node->safe_psql('postgres', $_[0]); }

sq('CREATE EXTENSION syncwf');
sq(q{
CREATE TABLE batches (batch int, n int, secs float8, last_position int);
CREATE PROCEDURE fill(total int, per int) LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    got int;
    pos int;
BEGIN
    FOR b IN 0 .. (total - 1) / per LOOP
        t0 := clock_timestamp();
        SELECT count(*), max(r.queue_position) INTO got, pos
          FROM generate_series(b * per + 1, least((b + 1) * per, total)) g,
               LATERAL sync_request('mtx/deep/q', 'deep/w' || g) r
         WHERE r.status = 'pending';
        COMMIT;
        INSERT INTO batches
             VALUES (b, got, extract(epoch FROM clock_timestamp() - t0), pos);
        COMMIT;
    END LOOP;
END $$;
});
is(sq(q{SELECT status FROM sync_request('mtx/deep/q', 'deep/holder')}),
	'held', 'the holder takes the mutex');

sq("CALL fill($depth, $batch)");
is(sq('SELECT sum(n), max(last_position) FROM batches'), "$depth|$depth",
	"all $depth requests are pending, the last at position $depth");
is( sq(
		q{SELECT count(*), max(position) FROM sync_waiters WHERE lock_name = 'mtx/deep/q'}
	),
	"$depth|$depth",
	'sync_waiters lists them all');
my ($first, $last) = split /\|/,
  sq('SELECT (SELECT secs FROM batches ORDER BY batch LIMIT 1),
             (SELECT secs FROM batches ORDER BY batch DESC LIMIT 1)');
note(sprintf('first batch %.3f s, last batch %.3f s (%.2f x)',
		$first, $last, $last / $first));
cmp_ok($last / $first, '<=', 4,
	'joining the back of a queue 200,000 deep costs about what joining a short one does');

# a withdrawal from the middle, and a newcomer at a higher priority
sq(q{SELECT sync_release('mtx/deep/q', 'deep/w100000')});
is(sq(q{SELECT queue_position FROM sync_request('mtx/deep/q', 'deep/w100001')}),
	'100000', 'the waiter behind a withdrawn one moves up');
is(sq(q{SELECT queue_position FROM sync_request('mtx/deep/q', 'deep/w200000')}),
	$depth - 1, 'and so does the last one');
is( sq(
		q{SELECT queue_position FROM sync_request('mtx/deep/q', 'deep/urgent', priority => 1)}
	),
	'1',
	'a request of a higher priority goes to the front');

sq('TRUNCATE sync_state');
is( sq(
		q{SELECT count(*) FROM sync_entry_status() WHERE lock_name = 'mtx/deep/q'}),
	'0',
	'TRUNCATE sync_state withdraws every request');

$node->stop;
done_testing();
