# Argo's controllers on syncwf (docs/argo.md), concurrently.
#
# test/argo/replay.js runs two controllers with Argo 4.x's algorithm and
# statements, then with Argo 3.7's retry rule (which fails a workflow for an
# error of its claim statement, and after five failed attempts) (SERIALIZABLE transactions with its retry rule, sync_lock, the
# release and queue-removal deletes, heartbeats), as a role in syncwf_admin
# that does not own the extension, on a semaphore and a mutex, with a caller
# of syncwf's functions on the same semaphore; meanwhile Argo's CLI raises
# the limit, one controller stops for longer than the inactive timeout and
# comes back, and the other restarts. Every workflow must run exactly once,
# never more at a time than the limit, without an error Argo would not
# retry, and nothing may be left behind. Under 4.x's rules both controllers
# also run workflows of the same key on the mutex (twins): the second one's
# INSERT is refused with 40001 until the first one's row is gone, and the
# twins run one at a time.
#
# Then the durability of what Argo wrote: its pending rows are claim-only
# requests still after a server restart (not granted by syncwf although the
# lock is free), and a claim after the restart is granted.
use strict;
use warnings FATAL => 'all';

use File::Basename qw(dirname);
use File::Spec;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $root = File::Spec->catdir(dirname(File::Spec->rel2abs(__FILE__)), '..', '..');
my $modules = $ENV{SYNCWF_NODE_MODULES}
  // File::Spec->catdir($root, 'examples', 'node', 'node_modules');
ok(system('node', '-e', "require('$modules/pg')") == 0,
	'node finds node-postgres (the test command installs it)')
  or BAIL_OUT("node or $modules/pg is missing");

my $node = PostgreSQL::Test::Cluster->new('argo_replay');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'syncwf'
syncwf.database = 'postgres'
syncwf.inactive_controller_timeout = '2s'
max_connections = 40
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION syncwf;
	CREATE ROLE argo LOGIN IN ROLE syncwf_admin;
});

local $ENV{PGHOST} = $node->host;
local $ENV{PGPORT} = $node->port;
local $ENV{PGUSER} = 'argo';
local $ENV{PGDATABASE} = 'postgres';
local $ENV{SYNCWF_NODE_MODULES} = $modules;
local $ENV{ARGO_INACTIVE_SECONDS} = '2';

sub replay
{
	my ($version, $seed) = @_;
	local $ENV{ARGO_VERSION} = $version;
	local $ENV{ARGO_SEED} = $ENV{ARGO_SEED} // $seed;
	my ($stdout, $stderr);
	my $ok = IPC::Run::run([ 'node', File::Spec->catfile($root, 'test', 'argo', 'replay.js') ],
		'>', \$stdout, '2>', \$stderr, IPC::Run::timeout(180));
	note "replay of Argo $version, seed $ENV{ARGO_SEED}: $stdout";
	note "stderr: $stderr" if $stderr;
	ok($ok, "Argo $version: the replay ran to its end");
	my $r = eval { decode_json((split /\n/, $stdout)[-1]) } // {};
	is($r->{error}, undef, "Argo $version: no statement failed outside Argo's own handling");
	is_deeply($r->{violations}, [],
		"Argo $version: no lock over its limit, no workflow failed, every workflow ran");
	is($r->{ran}, $r->{workflows}, "Argo $version: all $r->{workflows} workflows ran, once each");
	is($r->{api_ran}, 12, "Argo $version: the caller of syncwf's functions got the semaphore 12 times");
	cmp_ok($r->{ran_while_b_stopped}, '>', 0,
		"Argo $version: while ctl-b was away, ctl-a's workflows went past its pending ones");
	is($r->{restarts}, 1, "Argo $version: ctl-a restarted and carried on");
	if ($version eq '4.x')
	{
		is($r->{twins_ran}, 4,
			"Argo $version: both controllers' workflows of one key ran, one at a time");
		cmp_ok($r->{queue_retries}, '>', 0,
			"Argo $version: a controller's INSERT of a key the other had queued failed with 40001 and was retried");
	}
	is_deeply($r->{left}, { rows => '0', holds => '0', lock_rows => '0' },
		"Argo $version: nothing is left in sync_state, shared memory or sync_lock");
	note "claims: $r->{claims}, claim statements that failed: $r->{claim_errors}, "
	  . "retries: $r->{retries}, requeued: $r->{requeued}, busy sync_lock: $r->{lock_busy}, "
	  . "queueing retried: $r->{queue_retries}";
	$node->safe_psql('postgres', "DELETE FROM sync_limit; DELETE FROM sync_controller");
}

replay('4.x', 12);
replay('3.7', 13);

# --- durability of Argo's rows -----------------------------------------------
$node->safe_psql('postgres', q{
	SET ROLE argo;
	INSERT INTO sync_controller (controller, time) VALUES ('ctl-r', now());
	INSERT INTO sync_state (controller, held, name, priority, time, workflowkey)
	VALUES ('ctl-r', false, 'mtx/argo/r', 0, '2024-01-01', 'ns/r1'),
	       ('ctl-r', false, 'mtx/argo/r', 0, '2024-01-02', 'ns/r2');
});
$node->restart;
is($node->safe_psql('postgres', q{
	SELECT string_agg(holder || ':' || position, ',' ORDER BY position)
	  FROM sync_waiters WHERE lock_name = 'mtx/argo/r'}),
	'ns/r1:1,ns/r2:2', 'after a restart, Argo\'s pending rows are queued in order, not granted');
is($node->safe_psql('postgres', q{SELECT count(*) FROM sync_holders WHERE lock_name = 'mtx/argo/r'}),
	'0', 'after a restart, the free mutex is still not granted by syncwf (claim-only)');
$node->safe_psql('postgres', q{
	SET ROLE argo;
	UPDATE "sync_state" SET "held" = true
	 WHERE ("name" = 'mtx/argo/r' AND "workflowkey" = 'ns/r1' AND "controller" = 'ctl-r' AND "held" = false);
});
is($node->safe_psql('postgres', q{
	SELECT holder FROM sync_holders WHERE lock_name = 'mtx/argo/r'}),
	'ns/r1', 'the claim after the restart is granted');
is($node->safe_psql('postgres', q{
	SELECT s.token = h.token FROM sync_state s JOIN sync_holders h
	    ON h.lock_name = s.name AND h.holder = s.workflowkey
	 WHERE s.name = 'mtx/argo/r' AND s.held}),
	't', 'the claimed row carries the grant\'s token');

$node->stop;
done_testing();
