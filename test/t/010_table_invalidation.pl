# Keyed holds survive invalidations of the extension's tables.
#
# Every backend caches the OIDs of sync_state, sync_controller and
# sync_limit, and looks them up again after a relcache invalidation of one
# of them (VACUUM and ANALYZE send one).  An invalidation processed by the
# catalog reads of that very lookup must not make the tables look missing:
# a backend that believed sync_state gone would reload the keyed holds of
# the database from an empty table, dropping every hold and queue entry in
# shared memory while the rows stay, and then load them again from the rows
# (releases in flight found nothing, holds leaked, grants went past a
# holder).  Before the fix this test failed within seconds.
#
# Ten pgbench clients, each transaction either (one in five) an ANALYZE of
# the three tables or a keyed request and release of sem/i/q (limit 10, a
# slot for every client: every request must be granted, every release must
# find its hold), while 1,000 two-lock requests wait behind a keyed holder
# of mtx/i/block.
# Afterwards: no client failed, the holder still holds mtx/i/block with the
# token it was granted, the 1,000 requests are still pending in their
# order, and nothing else is held or left in sync_state.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('inval');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'syncwf'");
# every statement in the log would slow the clients down ten times
$node->append_conf('postgresql.conf', "log_statement = none");
$node->start;

sub sq { return $node->safe_psql('postgres', $_[0]); }

sq('CREATE EXTENSION syncwf');
sq("INSERT INTO sync_limit VALUES ('i/q', 10)");

my $token = sq("SELECT token FROM sync_request('mtx/i/block', 'i/blocker') WHERE status = 'held'");
like($token, qr/^\d+$/, 'i/blocker holds mtx/i/block');
is(sq("SELECT count(*) FILTER (WHERE status = 'pending')
         FROM generate_series(1, 1000) g,
              LATERAL sync_request(ARRAY['sem/i/q', 'mtx/i/block'], 'i/w' || g,
                                   priority => g - 1001)"),
	'2000', '1,000 two-lock requests are pending behind it (2,000 entries)');

$node->pgbench(
	'--no-vacuum --protocol=prepared --client=10 --jobs=2 --time=15',
	0,
	[qr{number of failed transactions: 0 }],
	[qr{^$}],
	'15 s of keyed requests and releases while the tables are analyzed: no request pending, no release in vain',
	{
		'010_keyed@8' => q{\set h random(1, 1000000000)
SELECT 1 / (status = 'held')::integer FROM sync_request('sem/i/q', 'i/c' || :client_id || '/' || :h);
SELECT 1 / sync_release('sem/i/q', 'i/c' || :client_id || '/' || :h)::integer;
},
		'010_analyze@2' => q{ANALYZE sync_state;
ANALYZE sync_controller;
ANALYZE sync_limit;
}
	});

is(sq("SELECT holder || ' ' || token FROM sync_holders WHERE lock_name = 'mtx/i/block'"),
	"i/blocker $token", 'i/blocker still holds mtx/i/block, with the same token');
is(sq("SELECT count(*) FROM sync_holders WHERE lock_name = 'sem/i/q'"),
	'0', 'no hold of sem/i/q is left behind');
is(sq("SELECT count(*), min(position), max(position),
              bool_and(position = 1001 - substr(holder, 4)::integer)
         FROM sync_waiters WHERE lock_name = 'sem/i/q'"),
	'1000|1|1000|t', 'the 1,000 requests still wait on sem/i/q, highest priority first');
is(sq("SELECT count(*) FILTER (WHERE held), count(*) FILTER (WHERE NOT held) FROM sync_state"),
	'1|2000', 'sync_state: the one hold and the 2,000 pending rows, nothing else');

my $log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal|PANIC/, 'no crash in the server log');

$node->stop;
done_testing();
