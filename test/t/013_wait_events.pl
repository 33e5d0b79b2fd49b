# Wait events: what pg_stat_activity shows while syncwf waits.
#
#  - PostgreSQL 17 and later: a sync_acquire blocked behind a holder waits on
#    the custom wait event "SyncwfAcquire" (wait_event_type "Extension"), a
#    sync_wait for a pending keyed request on "SyncwfWait", the idle
#    background worker on "SyncwfWorkerMain", the idle rate worker (no
#    database) on "SyncwfRateWorker", and all four are listed in
#    pg_wait_events with type Extension; a backend that never waited in
#    syncwf has not registered them under any other name;
#  - PostgreSQL 15 and 16: all show the generic wait_event "Extension";
#  - either way, the waiter is granted at once when the holder lets go, and
#    its wait event is gone.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('wait_events');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'syncwf'
syncwf.database = 'postgres'
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION syncwf');

my $major = int($node->safe_psql('postgres', 'SHOW server_version_num') / 10000);
my $named = $major >= 17;
my ($acquire_event, $worker_event, $keyed_event, $rate_event) =
  $named
  ? ('SyncwfAcquire', 'SyncwfWorkerMain', 'SyncwfWait', 'SyncwfRateWorker')
  : ('Extension', 'Extension', 'Extension', 'Extension');
note "PostgreSQL $major: expecting wait events $acquire_event, $worker_event and $keyed_event";

# The rate worker's wait: it sleeps until a waiter's tokens come.
ok( $node->poll_query_until(
		'postgres', qq{
    SELECT wait_event_type = 'Extension' AND wait_event = '$rate_event'
      FROM pg_stat_activity WHERE backend_type = 'syncwf rate worker'}),
	"the idle rate worker waits on $rate_event (type Extension)");

# The worker's wait, once it sleeps between rounds.
ok( $node->poll_query_until(
		'postgres', qq{
    SELECT wait_event_type = 'Extension' AND wait_event = '$worker_event'
      FROM pg_stat_activity WHERE backend_type = 'syncwf worker'}),
	"the idle worker waits on $worker_event (type Extension)");

# A session holds a mutex; another blocks on it.
my $holder = $node->background_psql('postgres');
$holder->query_safe(q{SELECT sync_acquire('mtx/we/a')});
my $waiter = $node->background_psql('postgres');
my $waiter_pid = $waiter->query_safe('SELECT pg_backend_pid()');
$waiter->query_until(qr/waiting/, q{
\echo waiting
SELECT sync_acquire('mtx/we/a') IS NOT NULL AS granted;
});

ok( $node->poll_query_until(
		'postgres', qq{
    SELECT wait_event_type = 'Extension' AND wait_event = '$acquire_event'
      FROM pg_stat_activity WHERE pid = $waiter_pid}),
	"a blocked sync_acquire waits on $acquire_event (type Extension)");
is( $node->safe_psql(
		'postgres', q{
    SELECT count(*) FROM sync_waiters WHERE lock_name = 'mtx/we/a'}),
	'1',
	'... and sync_waiters lists it');

# A sync_wait for a pending keyed request (keyed holds are in database
# postgres here).
$node->safe_psql('postgres', q{
	SELECT sync_request('mtx/we/k', 'we/wf-1');
	SELECT sync_request('mtx/we/k', 'we/wf-2');});
my $kwaiter = $node->background_psql('postgres');
my $kwaiter_pid = $kwaiter->query_safe('SELECT pg_backend_pid()');
$kwaiter->query_until(qr/waiting/, q{
\echo waiting
SELECT sync_wait('mtx/we/k', 'we/wf-2') IS NOT NULL AS granted;
});
ok( $node->poll_query_until(
		'postgres', qq{
    SELECT wait_event_type = 'Extension' AND wait_event = '$keyed_event'
      FROM pg_stat_activity WHERE pid = $kwaiter_pid}),
	"a blocked sync_wait waits on $keyed_event (type Extension)");

if ($named)
{
	is( $node->safe_psql(
			'postgres', q{
        SELECT string_agg(type || ':' || name, ',' ORDER BY name)
          FROM pg_wait_events WHERE name LIKE 'Syncwf%'}),
		'Extension:SyncwfAcquire,Extension:SyncwfRateWorker,Extension:SyncwfWait,Extension:SyncwfWorkerMain',
		'pg_wait_events lists the four events of syncwf, as type Extension');
	like(
		$node->safe_psql(
			'postgres', q{
        SELECT description FROM pg_wait_events WHERE name = 'SyncwfAcquire'}),
		qr/extension/i,
		'... described as extension-defined');
}
else
{
	is( $node->safe_psql(
			'postgres', q{
        SELECT count(*) FROM pg_proc WHERE proname = 'pg_get_wait_events'}),
		'0',
		"PostgreSQL $major has no pg_wait_events: the generic event is all there is");
}

# The holder lets go: the waiter is granted and no longer waits.
$holder->query_safe(q{SELECT sync_release('mtx/we/a')});
ok( $node->poll_query_until(
		'postgres', qq{
    SELECT wait_event IS DISTINCT FROM '$acquire_event'
      FROM pg_stat_activity WHERE pid = $waiter_pid}),
	'after the release the waiter no longer waits');
is( $node->safe_psql(
		'postgres', qq{
    SELECT pid FROM sync_holders WHERE lock_name = 'mtx/we/a'}),
	$waiter_pid,
	'... it holds the mutex');

# The keyed hold is released: sync_wait returns, and no longer waits.
$node->safe_psql('postgres', q{SELECT sync_release('mtx/we/k', 'we/wf-1')});
is($kwaiter->query_safe('SELECT 1'), "t\n1", 'after the release sync_wait returned the token');
$node->safe_psql('postgres', q{SELECT sync_release('mtx/we/k', 'we/wf-2')});

$holder->quit;
$waiter->quit;
$kwaiter->quit;
$node->stop;
done_testing();
