# The background worker "syncwf worker", leases, controller staleness,
# NOTIFY hand-offs, sync_reconcile() from pg_cron, and other databases.
# Both nodes set syncwf.handoff_in_transaction = off, so that releases
# leave their grants to the worker, as every slot freed where nothing can
# be written does (the hand-off in the releasing transaction is tested by
# 022_handoff_crash.pl and isolation spec keyed-reservation).
#
# Node "worker" (syncwf.database = 'syncdb', created after the start;
# syncwf.inactive_controller_timeout = 2 in postgresql.conf):
#  - the worker retries until syncwf.database exists, then runs connected
#    to it (pg_stat_activity backend_type 'syncwf worker');
#  - a sync_release hands the lock to a pending keyed holder and the worker
#    announces it with NOTIFY "granted" (JSON payload: event, lock, holder,
#    token, controller), sent from the worker's pid, with nobody calling
#    sync_reconcile();
#  - a row that an open transaction has locked does not hold the worker up:
#    other grants are written and announced meanwhile, the locked one soon
#    after the lock goes away;
#  - a hold with a 1 s lease is released by the server within 1 s of its
#    expiry: a LISTEN connection gets "lost" and then "granted" for the next
#    holder (new, larger token) no later than expiry + 1 s; sync_state agrees;
#  - a controller that stops heartbeating has its pending entries passed
#    over within timeout + 1 s (the entry of another controller behind them
#    is granted), its held entries stay held, and its pending entries regain
#    their place when it heartbeats again;
#  - a lease still runs out on a hold of an inactive controller: the server
#    releases it within 1 s of its expiry ("lost", reason "lease expired",
#    then "granted" for the next holder), while the controller's hold
#    without a lease stays held and its pending entry stays passed over;
#  - SIGHUP: a new syncwf.inactive_controller_timeout set by ALTER SYSTEM +
#    pg_reload_conf() takes effect in the worker (larger, then smaller);
#  - a raised limit: UPDATE sync_limit SET sizelimit = 2 grants the request
#    pending on the full semaphore when it commits (not before), and the
#    worker writes the grant and announces it with NOTIFY "granted";
#  - with nothing to do (no keyed entry, no controller, so no lease or
#    controller deadline) the worker sleeps: over 3 s it runs no round and
#    uses at most 2 clock ticks of CPU (/proc/<pid>/stat utime + stime);
#  - in another database the keyed functions fail with SQLSTATE 55000 and a
#    hint naming syncwf.database, while session locks work there;
#  - pg_terminate_backend of the worker: the postmaster starts a new one
#    within about 5 s, and it writes and announces the hand-off that
#    happened while no worker ran; kill -9 of the worker: crash restart, the
#    worker is back at once, keyed holds are reloaded from sync_state and
#    hand-offs announced again.
#
# Node "cron" (syncwf.enable_worker = off, shared_preload_libraries =
# 'syncwf,pg_cron'): the idle worker writes and announces nothing (a
# hand-off leaves sync_state.held false), SELECT sync_reconcile() does it,
# and so does a pg_cron job calling it.  sync_reconcile() also does the
# rest of a round (with syncwf.inactive_controller_timeout lowered to 1 s
# for the test, then reset): an expired lease is left alone until it runs,
# then its hold is released ("lost" from the calling backend) and the next
# holder's grant is written and announced (by the next call, as for any
# hand-off); a controller silent for longer than the timeout stays active
# until it runs, then its pending entry is passed over and the entry of
# another controller behind it is granted when the lock is released.
# These run before the pg_cron job is scheduled.  pg_cron 1.5+ accepts
# '1 seconds'; with an older pg_cron (Debian's postgresql-15-cron is 1.4)
# the schedule is '* * * * *', so the cron node is set up first and checked
# last, and the next full minute passes while the worker node's tests run.
# Turning the worker on with ALTER SYSTEM + pg_reload_conf() makes it catch
# up.
#
# All times compared are the server's clock (clock_timestamp(), sync_state
# timestamps, sync_heartbeat()), as seconds since the epoch.
use strict;
use warnings FATAL => 'all';

use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use SyncwfTest;

my $t_start = time;

# --- helpers -----------------------------------------------------------------

# Listeners (SyncwfTest's listener(), channel syncwf): wait_event polls
# every 20 ms, running $tick->() between polls.
sub wait_event
{
	my ($l, $timeout, $tick, %want) = @_;
	return next_event($l, $timeout, 20_000, $tick, %want);
}

# The pid of the syncwf worker and its database ('' if none runs).
sub worker
{
	my ($node) = @_;
	my $r = $node->safe_psql('postgres',
		"SELECT pid || '|' || coalesce(datname, '') FROM pg_stat_activity
		  WHERE backend_type = 'syncwf worker'");
	return split /\|/, $r;
}

# Poll (up to $timeout s) until a syncwf worker other than $old_pid runs
# and has connected to its database (a worker shows in pg_stat_activity a
# moment before its datname does); returns (pid, database, seconds waited).
sub wait_for_worker
{
	my ($node, $old_pid, $timeout) = @_;
	my $t0 = time;
	while (time - $t0 < $timeout)
	{
		my ($pid, $db) = eval { worker($node) };
		return ($pid, $db, time - $t0)
		  if defined $pid && $pid ne '' && (!defined $old_pid || $pid ne $old_pid)
		  && defined $db && $db ne '';
		usleep(50_000);
	}
	return (undef, undef, time - $t0);
}

# Fields of an event joined by '|' (missing ones empty).
sub fields
{
	my ($ev, @keys) = @_;
	return join('|', map { $ev->{$_} // '' } @keys);
}

sub forget_session
{
	my ($s) = @_;
	eval { $s->{run}->kill_kill; 1; } or note "closing dead session: $@";
	return;
}

# --- node "cron", part 1: worker off, sync_reconcile(), a pg_cron job ----------
my $cron = PostgreSQL::Test::Cluster->new('cron');
$cron->init;
$cron->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'syncwf,pg_cron'
syncwf.database = 'postgres'
syncwf.enable_worker = off
syncwf.handoff_in_transaction = off
cron.database_name = 'postgres'
cron.use_background_workers = on
max_worker_processes = 16
});
$cron->start;
sub cq { return $cron->safe_psql('postgres', $_[0]); }

cq('CREATE EXTENSION syncwf; CREATE EXTENSION pg_cron;');
my $cron_version = cq("SELECT extversion FROM pg_extension WHERE extname = 'pg_cron'");
my ($cmaj, $cmin) = $cron_version =~ /^(\d+)\.(\d+)/;
my $cron_seconds = $cmaj > 1 || ($cmaj == 1 && $cmin >= 5);
my $schedule = $cron_seconds ? '1 seconds' : '* * * * *';
note "pg_cron $cron_version: schedule '$schedule'";

is(cq('SHOW syncwf.enable_worker'), 'off', 'cron node: syncwf.enable_worker is off');
my ($cw_pid, $cw_db, $cw_wait) = wait_for_worker($cron, undef, 12);
ok(defined $cw_pid, 'cron node: the (idle) syncwf worker runs all the same');
is($cw_db, 'postgres', 'cron node: ... connected to syncwf.database');

my $cl = listener($cron, 'postgres');
is(cq(q{
	SELECT string_agg(status, ',' ORDER BY o) FROM (
	  SELECT 1 AS o, status FROM sync_request('mtx/c/a', 'c/one')
	  UNION ALL SELECT 2, status FROM sync_request('mtx/c/a', 'c/two', 0, 'cron-ctl')) s}),
	'held,pending', 'cron node: c/one holds mtx/c/a, c/two is pending');
is(cq("SELECT sync_release('mtx/c/a', 'c/one')"), 't', 'cron node: c/one releases mtx/c/a');
usleep(1_500_000);
is(cq("SELECT held FROM sync_state WHERE name = 'mtx/c/a' AND workflowkey = 'c/two'"),
	'f', 'worker off: 1.5 s after the hand-off, sync_state still says c/two is pending');
is(scalar(events_like($cl)), 0, 'worker off: no notification was sent')
  or diag(describe_events($cl));

my $reconciler = $cron->background_psql('postgres');
my $reconciler_pid = $reconciler->query_safe('SELECT pg_backend_pid()');
cmp_ok($reconciler->query_safe('SELECT sync_reconcile()'), '>=', 1,
	'SELECT sync_reconcile() reports work done');
$reconciler->quit;
is(cq("SELECT held FROM sync_state WHERE name = 'mtx/c/a' AND workflowkey = 'c/two'"),
	't', 'sync_reconcile() wrote the grant of c/two to sync_state');
my $ev = wait_event($cl, 5, undef, event => 'granted', holder => 'c/two');
ok($ev, 'sync_reconcile() announced the grant of c/two') or diag(describe_events($cl));
is($ev && $ev->{sender}, $reconciler_pid, '... from the backend that called it');
is($ev && $ev->{token},
	cq("SELECT token FROM sync_state WHERE name = 'mtx/c/a' AND workflowkey = 'c/two'"),
	'... with the token in sync_state');

# sync_reconcile() does the rest of a round as well: lease expiry and
# controller staleness.  This runs before the pg_cron job is scheduled, so
# every sync_reconcile() here is one of ours.  The node has the default
# syncwf.inactive_controller_timeout (300 s): 1 s for this part.
cq(q{ALTER SYSTEM SET syncwf.inactive_controller_timeout = 1; SELECT pg_reload_conf();});
ok($cron->poll_query_until('postgres',
		q{SELECT setting = '1' FROM pg_settings WHERE name = 'syncwf.inactive_controller_timeout'}),
	'cron node: syncwf.inactive_controller_timeout lowered to 1 s (reload)');
# c/leased holds mtx/c/l with a 1 s lease, c/after waits behind it; on
# mtx/c/s, c/s-stale (controller c-stale) is first in line behind c/s-hold,
# c/s-next (controller c-live) second.
is(cq(q{
	SELECT string_agg(status, ',' ORDER BY o) FROM (
	  SELECT 1 AS o, status FROM sync_request('mtx/c/l', 'c/leased', lease => '1 s')
	  UNION ALL SELECT 2, status FROM sync_request('mtx/c/l', 'c/after')
	  UNION ALL SELECT 3, status FROM sync_request('mtx/c/s', 'c/s-hold')
	  UNION ALL SELECT 4, status FROM sync_request('mtx/c/s', 'c/s-stale', 0, 'c-stale')
	  UNION ALL SELECT 5, status FROM sync_request('mtx/c/s', 'c/s-next', 0, 'c-live')) s}),
	'held,pending,held,pending,pending',
	'cron reconcile: c/leased holds mtx/c/l (1 s lease), c/after waits; c/s-stale (c-stale) and c/s-next (c-live) wait for mtx/c/s');
my ($c_expires, $c_hb, $c_tok) = split /\|/, cq(q{
	SELECT extract(epoch FROM lease_expires) || '|'
	       || (SELECT extract(epoch FROM time) FROM sync_controller WHERE controller = 'c-stale') || '|'
	       || token
	  FROM sync_state WHERE name = 'mtx/c/l' AND workflowkey = 'c/leased'});
my $c_due = ($c_expires > $c_hb + 1 ? $c_expires : $c_hb + 1) + 0.3;
my $c_now = cq('SELECT extract(epoch FROM clock_timestamp())');
usleep(int(1e6 * ($c_due - $c_now))) if $c_due > $c_now;
is(cq(q{
	SELECT (SELECT held || ':' || (clock_timestamp() > lease_expires) FROM sync_state
	         WHERE name = 'mtx/c/l' AND workflowkey = 'c/leased') || ' '
	       || (SELECT string_agg(holder || ':' || coalesce(position::text, '-') || ':' || active, ' '
	                             ORDER BY holder) FROM sync_waiters WHERE lock_name = 'mtx/c/s')}),
	'true:true c/s-next:2:true c/s-stale:1:true',
	'worker off: an expired lease and a controller silent for longer than the timeout are left as they are');
my $rec = $cron->background_psql('postgres');
my $rec_pid = $rec->query_safe('SELECT pg_backend_pid()');
$rec->query_safe(q{SELECT sync_heartbeat('c-live')});
cmp_ok($rec->query_safe('SELECT sync_reconcile()'), '>=', 1,
	'cron reconcile: SELECT sync_reconcile() reports the expired lease as work done');
$ev = wait_event($cl, 5, undef, event => 'lost', lock => 'mtx/c/l');
ok($ev, 'cron reconcile: sync_reconcile() announced "lost" for the expired lease')
  or diag(describe_events($cl));
is(fields($ev // {}, qw(holder reason token sender)), "c/leased|lease expired|$c_tok|$rec_pid",
	'cron reconcile: ... naming c/leased, reason "lease expired", its token, from the backend that called it');
is(cq(q{
	SELECT (SELECT count(*) FROM sync_state WHERE workflowkey = 'c/leased') || ' '
	       || (SELECT string_agg(holder, ',') FROM sync_holders WHERE lock_name = 'mtx/c/l') || ' '
	       || (SELECT string_agg(holder || ':' || coalesce(position::text, '-') || ':' || active, ' '
	                             ORDER BY holder) FROM sync_waiters WHERE lock_name = 'mtx/c/s')}),
	'0 c/after c/s-next:1:true c/s-stale:-:false',
	'cron reconcile: the row of c/leased is gone and c/after holds mtx/c/l; c/s-stale is passed over (active false, no position)');
is(cq(q{SELECT sync_release('mtx/c/s', 'c/s-hold')}), 't', 'cron reconcile: c/s-hold releases mtx/c/s');
is(cq(q{SELECT string_agg(holder || '/' || controller, ',') FROM sync_holders WHERE lock_name = 'mtx/c/s'}),
	'c/s-next/c-live', 'cron reconcile: mtx/c/s goes to c/s-next (c-live), not to c/s-stale of the inactive c-stale');
# c/after was granted in shared memory when the first call committed (the
# hand-off of the expired hold); like c/s-next's, its grant is written and
# announced by the next call.
cmp_ok($rec->query_safe('SELECT sync_reconcile()'), '>=', 2,
	'cron reconcile: the next sync_reconcile() reports the two grants as work done');
my %c_granted;
for my $h ('c/after', 'c/s-next')
{
	$ev = wait_event($cl, 5, undef, event => 'granted', holder => $h);
	ok($ev, "cron reconcile: sync_reconcile() announced the grant of $h") or diag(describe_events($cl));
	$c_granted{$h} = fields($ev // {}, qw(lock sender token));
}
is(join(' ', map { "$_:$c_granted{$_}" } sort keys %c_granted),
	cq(qq{SELECT string_agg(workflowkey || ':' || name || '|$rec_pid|' || token, ' ' ORDER BY workflowkey)
	        FROM sync_state WHERE workflowkey IN ('c/after', 'c/s-next') AND held}),
	'cron reconcile: both grants are written to sync_state (held), with the announced tokens, sent by the calling backend');
is(cq(q{SELECT held || ':' || controller FROM sync_state WHERE workflowkey = 'c/s-stale'}), 'false:c-stale',
	"cron reconcile: c/s-stale's row stays, pending");
is(scalar(events_like($cl, holder => 'c/s-stale')), 0, 'cron reconcile: nothing is announced for c/s-stale');
$rec->quit;
cq(q{SELECT sync_release_holder(h) FROM unnest(ARRAY['c/after', 'c/s-next', 'c/s-stale']) h;
     SELECT sync_forget_controller(c) FROM unnest(ARRAY['c-stale', 'c-live']) c;
     ALTER SYSTEM RESET syncwf.inactive_controller_timeout; SELECT pg_reload_conf();});
ok($cron->poll_query_until('postgres',
		q{SELECT setting = '300' FROM pg_settings WHERE name = 'syncwf.inactive_controller_timeout'}),
	'cron reconcile: the timeout is back to the default (300 s)');

# The hand-off that the pg_cron job must write.
is(cq(q{
	SELECT string_agg(status, ',' ORDER BY o) FROM (
	  SELECT 1 AS o, status FROM sync_request('mtx/c/b', 'c/three')
	  UNION ALL SELECT 2, status FROM sync_request('mtx/c/b', 'c/four')) s}),
	'held,pending', 'cron node: c/three holds mtx/c/b, c/four is pending');
is(cq("SELECT sync_release('mtx/c/b', 'c/three')"), 't', 'cron node: c/three releases mtx/c/b');
is(cq(q{SELECT held FROM sync_state WHERE name = 'mtx/c/b' AND workflowkey = 'c/four'}),
	'f', 'before the pg_cron job is scheduled, c/four is still pending in sync_state');
my $cron_job = cq("SELECT cron.schedule('syncwf-reconcile', '$schedule', 'SELECT sync_reconcile()')");
ok($cron_job =~ /^\d+$/, "scheduled sync_reconcile() with pg_cron ('$schedule')");
my $t_scheduled = time;

# --- node "worker" ---------------------------------------------------------------
my $node = PostgreSQL::Test::Cluster->new('worker');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'syncwf'
syncwf.database = 'syncdb'
syncwf.inactive_controller_timeout = 2
syncwf.handoff_in_transaction = off
restart_after_crash = on
track_functions = all
});
$node->start;
sub sq { return $node->safe_psql('syncdb', $_[0]); }

# --- the worker waits for its database, then runs in it -----------------------
ok($node->poll_query_until('postgres',
		q{SELECT count(*) = 0 FROM pg_database WHERE datname = 'syncdb'}),
	'syncwf.database does not exist yet');
$node->wait_for_log(qr/FATAL:  database "syncdb" does not exist/);
pass('without its database the worker exits (FATAL: database "syncdb" does not exist)');
$node->safe_psql('postgres', 'CREATE DATABASE syncdb');
my ($wpid, $wdb, $wwait) = wait_for_worker($node, undef, 8);
ok(defined $wpid, "the worker started once syncdb existed (after ${\ sprintf('%.1f', $wwait)} s)");
is($wdb, 'syncdb', 'the worker is connected to syncwf.database');
sq('CREATE EXTENSION syncwf');
ok($node->poll_query_until('postgres',
		"SELECT application_name = 'syncwf worker' AND state = 'idle' FROM pg_stat_activity WHERE pid = $wpid"),
	'the worker sleeps (state idle) between rounds');

my $l = listener($node, 'syncdb');

# --- a hand-off announced by the worker -----------------------------------------
my $r = sq(q{
	SELECT string_agg(status || ':' || token, ',' ORDER BY o) FROM (
	  SELECT 1 AS o, status, coalesce(token, 0) AS token FROM sync_request('mtx/w/h', 'wf/one')
	  UNION ALL
	  SELECT 2, status, coalesce(token, 0) FROM sync_request('mtx/w/h', 'wf/two', 0, 'ctl-x')) s});
like($r, qr/^held:\d+,pending:0$/, 'hand-off: wf/one holds mtx/w/h, wf/two (controller ctl-x) is pending');
my ($tok_one) = $r =~ /^held:(\d+)/;
my $t_release = sq("SELECT sync_release('mtx/w/h', 'wf/one'), extract(epoch FROM clock_timestamp())");
$t_release =~ s/^t\|// or fail("sync_release('mtx/w/h', 'wf/one') returned true");
$ev = wait_event($l, 5, undef, event => 'granted', lock => 'mtx/w/h');
ok($ev, 'hand-off: a LISTEN connection receives NOTIFY "granted", nobody called sync_reconcile()')
  or diag(describe_events($l));
$ev //= {};
is($ev->{holder}, 'wf/two', 'hand-off: payload holder');
is($ev->{controller}, 'ctl-x', 'hand-off: payload controller');
like($ev->{token} // '', qr/^\d+$/, 'hand-off: payload token is a number');
is($ev->{sender}, $wpid, 'hand-off: the worker sent it');
note sprintf('hand-off: release commit to notification received <= %.1f ms',
	1000 * (($ev->{seen_by} // 0) - $t_release));
is(sq("SELECT held || '|' || token FROM sync_state WHERE name = 'mtx/w/h' AND workflowkey = 'wf/two'"),
	'true|' . ($ev->{token} // ''), 'hand-off: sync_state says wf/two holds it, with the announced token');
my $tok_two = $ev->{token} // 0;
is(sq("SELECT ${tok_two}::bigint > ${tok_one}::bigint AND sync_is_held('mtx/w/h', 'wf/two', $tok_two)"),
	't', "hand-off: the new token is larger than wf/one's, and current");
is(scalar(events_like($l, holder => 'wf/one')), 0, 'hand-off: nothing is announced for an immediate grant or a release');
sq("SELECT sync_release('mtx/w/h', 'wf/two')");

# --- a row locked by an open transaction does not hold the worker up ---------
# wf/lk requests mtx/w/l1 and mtx/w/l2 together, pending behind wf/b1 (on
# l2); wf/c is pending on mtx/w/c behind wf/b2.  Another session locks
# wf/lk's row of mtx/w/l1 and keeps its transaction open.  Both blockers
# release: the worker writes and announces wf/c's grant and wf/lk's row of
# mtx/w/l2 at once, skips the locked row instead of waiting for it, and
# writes it soon after the lock goes away.
is(sq(q{
	SELECT string_agg(holder || ':' || status, ',' ORDER BY o) FROM (
	  SELECT 1 AS o, 'wf/b1' AS holder, status FROM sync_request('mtx/w/l2', 'wf/b1')
	  UNION ALL SELECT 2, 'wf/b2', status FROM sync_request('mtx/w/c', 'wf/b2')
	  UNION ALL SELECT 3, 'wf/c', status FROM sync_request('mtx/w/c', 'wf/c')
	  UNION ALL SELECT 4, 'wf/lk', string_agg(DISTINCT status, '+')
	              FROM sync_request(ARRAY['mtx/w/l1', 'mtx/w/l2'], 'wf/lk')) s}),
	'wf/b1:held,wf/b2:held,wf/c:pending,wf/lk:pending',
	'locked row: wf/c and wf/lk (two locks) are pending behind wf/b2 and wf/b1');
my $locker = $node->background_psql('syncdb');
$locker->query_safe('BEGIN');
is($locker->query_safe(
		"SELECT name FROM sync_state WHERE name = 'mtx/w/l1' AND workflowkey = 'wf/lk' FOR UPDATE"),
	'mtx/w/l1', "locked row: another transaction locks wf/lk's row of mtx/w/l1 and stays open");
sq("SELECT sync_release('mtx/w/l2', 'wf/b1'), sync_release('mtx/w/c', 'wf/b2')");
$ev = wait_event($l, 5, undef, event => 'granted', holder => 'wf/c');
ok($ev, 'locked row: the grant of wf/c is written and announced meanwhile')
  or diag(describe_events($l));
ok(wait_event($l, 5, undef, event => 'granted', holder => 'wf/lk', lock => 'mtx/w/l2'),
	"locked row: so is wf/lk's grant of mtx/w/l2, whose row is not locked");
is(sq("SELECT held FROM sync_state WHERE name = 'mtx/w/l1' AND workflowkey = 'wf/lk'"),
	'f', 'locked row: the locked row is left as it was');
is($node->safe_psql('postgres',
		"SELECT coalesce(wait_event_type, '') <> 'Lock' FROM pg_stat_activity WHERE pid = $wpid"),
	't', 'locked row: the worker does not wait for the row lock');
$locker->query_safe('COMMIT');
$locker->quit;
ok(wait_event($l, 5, undef, event => 'granted', holder => 'wf/lk', lock => 'mtx/w/l1'),
	'locked row: once the lock is gone, the skipped grant is written and announced');
is(sq("SELECT string_agg(name || ':' || held, ',' ORDER BY name) FROM sync_state WHERE workflowkey = 'wf/lk'"),
	'mtx/w/l1:true,mtx/w/l2:true', 'locked row: sync_state says wf/lk holds both');
is(sq("SELECT sync_release_holder('wf/lk') + sync_release_holder('wf/c')"), '3',
	'locked row: wf/lk and wf/c release their 3 holds');

# --- lease expiry ------------------------------------------------------------------
$r = sq(q{
	SELECT string_agg(status || ':' || token, ',' ORDER BY o) FROM (
	  SELECT 1 AS o, status, coalesce(token, 0) AS token
	    FROM sync_request('mtx/w/l', 'wf/leased', lease => '1 s')
	  UNION ALL
	  SELECT 2, status, coalesce(token, 0) FROM sync_request('mtx/w/l', 'wf/next')) s});
like($r, qr/^held:\d+,pending:0$/, 'lease: wf/leased holds mtx/w/l with a 1 s lease, wf/next is pending');
my ($tok_leased) = $r =~ /^held:(\d+)/;
my ($expires, $lease) = split /\|/, sq(q{
	SELECT extract(epoch FROM lease_expires) || '|' || lease FROM sync_state
	 WHERE name = 'mtx/w/l' AND workflowkey = 'wf/leased'});
is($lease, '00:00:01', 'lease: sync_state records the lease');
my $lost = wait_event($l, 5, undef, event => 'lost', lock => 'mtx/w/l');
my $granted = wait_event($l, 5, undef, event => 'granted', lock => 'mtx/w/l');
ok($lost && $granted, 'lease: the LISTEN connection receives "lost" and "granted"')
  or diag(describe_events($l));
$lost //= {};
$granted //= {};
is(fields($lost, qw(holder reason token)), "wf/leased|lease expired|$tok_leased",
	'lease: "lost" names wf/leased, reason "lease expired", its token');
is($granted->{holder}, 'wf/next', 'lease: "granted" names wf/next');
is($granted->{sender}, $wpid, 'lease: the worker sent it');
note sprintf('lease: expiry to "lost" received <= %.3f s, to "granted" received <= %.3f s',
	($lost->{seen_by} // 0) - $expires, ($granted->{seen_by} // 0) - $expires);
cmp_ok($lost->{seq} // 1e9, '<', $granted->{seq} // 0, 'lease: "lost" arrives before "granted"');
cmp_ok($lost->{seen_by} // 1e12, '<=', $expires + 1.0,
	'lease: "lost" reaches the LISTEN connection within 1 s of the lease expiry');
cmp_ok($granted->{seen_by} // 1e12, '<=', $expires + 1.0,
	'lease: "granted" reaches the LISTEN connection within 1 s of the lease expiry');
my ($granted_at, $held, $state_tok, $leased_rows, $ok) = split /\|/, sq(qq{
	SELECT extract(epoch FROM granted_at) || '|' || held || '|' || token || '|'
	       || (SELECT count(*) FROM sync_state WHERE workflowkey = 'wf/leased') || '|'
	       || (token > $tok_leased AND sync_is_held('mtx/w/l', 'wf/next', token)
	           AND NOT sync_is_held('mtx/w/l', 'wf/leased'))
	  FROM sync_state WHERE name = 'mtx/w/l' AND workflowkey = 'wf/next'});
cmp_ok($granted_at, '>=', $expires, 'lease: wf/next was not granted before the lease expired');
is("$held|$state_tok|$leased_rows|$ok", 'true|' . fields($granted, 'token') . '|0|true',
	'lease: sync_state: wf/leased gone, wf/next holds with the announced, larger token');
my ($ret, $stdout, $stderr) = $node->psql('syncdb',
	"\\set VERBOSITY verbose\nSELECT sync_refresh('mtx/w/l', 'wf/leased')");
like($stderr, qr/ERROR:  SW001/, 'lease: sync_refresh by the old holder fails with SW001');
sq("SELECT sync_release('mtx/w/l', 'wf/next')");

# --- controller staleness (timeout 2 s) ------------------------------------------
# wf/a (controller c1) is at the front of mtx/s/l's queue but also waits for
# mtx/s/x, so mtx/s/l stays free and wf/b (c2) waits behind wf/a.  c1 also
# holds mtx/s/m.  When c1 stops heartbeating, wf/a is passed over and wf/b
# is granted.
my $mon = $node->background_psql('syncdb');
$mon->set_query_timer_restart;
my $beat_c2 = sub { $mon->query_safe("SELECT sync_heartbeat('c2')"); };
is(sq(q{
	SELECT sync_heartbeat('c1') IS NOT NULL AND sync_heartbeat('c2') IS NOT NULL;
	SELECT string_agg(r, ',') FROM (
	  SELECT status AS r FROM sync_request('mtx/s/x', 'wf/h0')
	  UNION ALL SELECT string_agg(status, '+' ORDER BY lock_name)
	    FROM sync_request(ARRAY['mtx/s/l', 'mtx/s/x'], 'wf/a', 0, 'c1')
	  UNION ALL SELECT status FROM sync_request('mtx/s/l', 'wf/b', 0, 'c2')
	  UNION ALL SELECT status FROM sync_request('mtx/s/m', 'wf/m', 0, 'c1')
	  UNION ALL SELECT status FROM sync_request('mtx/s/m', 'wf/n', 0, 'c2')) s}),
	"t\nheld,pending+pending,pending,held,pending",
	'staleness: wf/h0 holds mtx/s/x; wf/a (c1) waits for mtx/s/l + mtx/s/x, wf/b (c2) behind it; wf/m (c1) holds mtx/s/m');
is(sq(q{SELECT string_agg(lock_name || ':' || holder || ':' || position || ':' || active, ' '
                          ORDER BY lock_name, position) FROM sync_waiters}),
	'mtx/s/l:wf/a:1:true mtx/s/l:wf/b:2:true mtx/s/m:wf/n:1:true mtx/s/x:wf/a:1:true',
	'staleness: the queues before c1 goes quiet');
my $hb1 = sq(q{SELECT extract(epoch FROM sync_heartbeat('c1'))});
$granted = wait_event($l, 8, $beat_c2, event => 'granted', lock => 'mtx/s/l');
ok($granted, 'staleness: a grant on mtx/s/l is announced after c1 stopped heartbeating')
  or diag(describe_events($l));
$granted //= {};
is(fields($granted, qw(holder controller sender)), "wf/b|c2|$wpid",
	'staleness: wf/b of the active controller c2 is granted, announced by the worker');
note sprintf('staleness: last heartbeat of c1 to grant of wf/b received <= %.3f s',
	($granted->{seen_by} // 0) - $hb1);
cmp_ok($granted->{seen_by} // 1e12, '<=', $hb1 + 2 + 1,
	'staleness: wf/a was passed over within timeout + 1 s of the last heartbeat of c1');
cmp_ok(sq(q{SELECT extract(epoch FROM granted_at) FROM sync_state WHERE workflowkey = 'wf/b'}),
	'>=', $hb1 + 2, 'staleness: ... and not before the timeout');
$beat_c2->();
is(sq(q{SELECT string_agg(lock_name || ':' || holder || ':' || coalesce(position::text, '-') || ':' || active, ' '
                          ORDER BY lock_name, holder) FROM sync_waiters}),
	'mtx/s/l:wf/a:-:false mtx/s/m:wf/n:1:true mtx/s/x:wf/a:-:false',
	"staleness: wf/a's entries are passed over (active false, no position), not deleted");
is(sq(q{SELECT string_agg(name || ':' || workflowkey || ':' || held, ' ' ORDER BY name, workflowkey)
          FROM sync_state WHERE controller = 'c1'}),
	'mtx/s/l:wf/a:false mtx/s/m:wf/m:true mtx/s/x:wf/a:false',
	"staleness: c1's rows stay in sync_state");
is(sq(q{SELECT sync_is_held('mtx/s/m', 'wf/m') || ':'
               || (SELECT string_agg(holder || '/' || controller, ',') FROM sync_holders
                    WHERE lock_name = 'mtx/s/m')}),
	'true:wf/m/c1', 'staleness: the held entry of the inactive controller c1 stays held');
# wf/c (c2) arrives after wf/a: it is first in line while c1 is inactive ...
$beat_c2->();
is(sq(q{SELECT status || ':' || queue_position FROM sync_request('mtx/s/l', 'wf/c', 0, 'c2')}),
	'pending:1', 'staleness: a later request of c2 (wf/c) is first in line while c1 is inactive');
# ... until c1 heartbeats again: wf/a regains its place ahead of wf/c.
sq(q{SELECT sync_heartbeat('c1')});
is(sq(q{SELECT string_agg(lock_name || ':' || holder || ':' || position || ':' || active, ' '
                          ORDER BY lock_name, position) FROM sync_waiters}),
	'mtx/s/l:wf/a:1:true mtx/s/l:wf/c:2:true mtx/s/m:wf/n:1:true mtx/s/x:wf/a:1:true',
	'staleness: after a heartbeat of c1, wf/a is back at the front, ahead of wf/c');
sq(q{BEGIN; SELECT sync_release('mtx/s/l', 'wf/b'); SELECT sync_release('mtx/s/x', 'wf/h0'); COMMIT;});
my $ga1 = wait_event($l, 5, $beat_c2, event => 'granted', holder => 'wf/a', lock => 'mtx/s/l');
my $ga2 = wait_event($l, 5, $beat_c2, event => 'granted', holder => 'wf/a', lock => 'mtx/s/x');
ok($ga1 && $ga2 && $ga1->{controller} eq 'c1',
	'staleness: when mtx/s/l and mtx/s/x are freed, wf/a (c1) is granted both, not wf/c')
  or diag(describe_events($l));
is(sq(q{SELECT string_agg(workflowkey || ':' || held, ' ' ORDER BY workflowkey) FROM sync_state
         WHERE name = 'mtx/s/l'}),
	'wf/a:true wf/c:false', 'staleness: sync_state agrees');
sq(q{SELECT sync_release_holder(h) FROM unnest(ARRAY['wf/a', 'wf/c', 'wf/m', 'wf/n']) h;
     SELECT sync_forget_controller(c) FROM unnest(ARRAY['c1', 'c2', 'ctl-x']) c});
is(sq('SELECT count(*) FROM sync_state'), '0', 'staleness: cleaned up');

# --- a lease runs out on a hold of an inactive controller (timeout 2 s) ----------
# c-lease holds mtx/s/q with a 3 s lease (wf/q-next waits behind it) and
# mtx/s/k without a lease (its own wf/q-wait waits behind that, to show when
# c-lease is inactive).  c-lease stops heartbeating and is inactive 2 s
# later, before the lease runs out: its held entries are kept, except the
# one whose lease expires.
my $hb_lease = sq(q{SELECT extract(epoch FROM sync_heartbeat('c-lease'))});
$r = sq(q{
	SELECT string_agg(status || ':' || coalesce(token, 0), ',' ORDER BY o) FROM (
	  SELECT 1 AS o, * FROM sync_request('mtx/s/q', 'wf/q-leased', controller => 'c-lease', lease => '3 s')
	  UNION ALL SELECT 2, * FROM sync_request('mtx/s/q', 'wf/q-next')
	  UNION ALL SELECT 3, * FROM sync_request('mtx/s/k', 'wf/q-kept', controller => 'c-lease')
	  UNION ALL SELECT 4, * FROM sync_request('mtx/s/k', 'wf/q-wait', controller => 'c-lease')) s});
like($r, qr/^held:\d+,pending:0,held:\d+,pending:0$/,
	'inactive lease: c-lease holds mtx/s/q (3 s lease, wf/q-next waits) and mtx/s/k (no lease, its wf/q-wait waits)');
my ($tok_q) = $r =~ /^held:(\d+)/;
my $expires_q = sq(q{SELECT extract(epoch FROM lease_expires) FROM sync_state WHERE workflowkey = 'wf/q-leased'});
ok($node->poll_query_until('syncdb', q{SELECT NOT active FROM sync_waiters WHERE holder = 'wf/q-wait'}),
	'inactive lease: c-lease goes inactive (wf/q-wait is passed over)');
my ($t_q_inactive, $q_held) = split /\|/, sq(q{
	SELECT extract(epoch FROM clock_timestamp()) || '|'
	       || sync_is_held('mtx/s/q', 'wf/q-leased') || ':' || sync_is_held('mtx/s/k', 'wf/q-kept')});
note sprintf('inactive lease: c-lease seen inactive %.3f s after its heartbeat, %.3f s before the lease expiry',
	$t_q_inactive - $hb_lease, $expires_q - $t_q_inactive);
cmp_ok($t_q_inactive, '<', $expires_q, 'inactive lease: ... before the lease of wf/q-leased runs out');
is($q_held, 'true:true', 'inactive lease: both holds of c-lease are still held once it is inactive');
$lost = wait_event($l, 5, undef, event => 'lost', lock => 'mtx/s/q');
$granted = wait_event($l, 5, undef, event => 'granted', lock => 'mtx/s/q');
ok($lost && $granted, 'inactive lease: the LISTEN connection receives "lost" and "granted" for mtx/s/q')
  or diag(describe_events($l));
$lost //= {};
$granted //= {};
is(fields($lost, qw(holder reason token controller)), "wf/q-leased|lease expired|$tok_q|c-lease",
	'inactive lease: "lost" names wf/q-leased, reason "lease expired", its token, controller c-lease');
is(fields($granted, qw(holder sender)), "wf/q-next|$wpid", 'inactive lease: "granted" names wf/q-next, sent by the worker');
note sprintf('inactive lease: expiry to "lost" received <= %.3f s, to "granted" received <= %.3f s',
	($lost->{seen_by} // 0) - $expires_q, ($granted->{seen_by} // 0) - $expires_q);
cmp_ok($lost->{seen_by} // 1e12, '<=', $expires_q + 1.0,
	'inactive lease: "lost" reaches the LISTEN connection within 1 s of the lease expiry');
cmp_ok($granted->{seen_by} // 1e12, '<=', $expires_q + 1.0,
	'inactive lease: "granted" reaches the LISTEN connection within 1 s of the lease expiry');
is(sq(qq{
	SELECT (SELECT count(*) FROM sync_state WHERE workflowkey = 'wf/q-leased') || ' '
	       || (SELECT held || ':' || token || ':' || (granted_at >= to_timestamp($expires_q))
	             FROM sync_state WHERE workflowkey = 'wf/q-next')}),
	'0 true:' . ($granted->{token} // '') . ':true',
	'inactive lease: sync_state: wf/q-leased gone, wf/q-next holds with the announced token, granted after the expiry');
is(sq(q{
	SELECT (SELECT held || ':' || token FROM sync_state WHERE workflowkey = 'wf/q-kept') || ' '
	       || sync_is_held('mtx/s/k', 'wf/q-kept') || ' '
	       || (SELECT string_agg(holder || '/' || controller, ',') FROM sync_holders WHERE lock_name = 'mtx/s/k') || ' '
	       || (SELECT coalesce(position::text, '-') || ':' || active FROM sync_waiters WHERE holder = 'wf/q-wait')}),
	"true:" . ($r =~ /,held:(\d+),/)[0] . " true wf/q-kept/c-lease -:false",
	"inactive lease: c-lease's hold without a lease stays held (same token), its wf/q-wait stays passed over");
is(scalar(events_like($l, holder => 'wf/q-kept')) + scalar(events_like($l, holder => 'wf/q-wait')), 0,
	'inactive lease: nothing is announced for wf/q-kept or wf/q-wait');
sq(q{SELECT sync_release_holder(h) FROM unnest(ARRAY['wf/q-next', 'wf/q-kept', 'wf/q-wait']) h;
     SELECT sync_forget_controller('c-lease')});
is(sq('SELECT count(*) FROM sync_state'), '0', 'inactive lease: cleaned up');

# --- SIGHUP: syncwf.inactive_controller_timeout changes take effect ---------------
is(sq(q{
	SELECT string_agg(status, ',' ORDER BY o) FROM (
	  SELECT 1 AS o, status FROM sync_request('mtx/s/r', 'wf/r-hold')
	  UNION ALL SELECT 2, status FROM sync_request('mtx/s/r', 'wf/r-wait', 0, 'c3')) s}),
	'held,pending', 'reload: wf/r-wait (controller c3) waits for mtx/s/r');
my $hb3 = sq(q{SELECT extract(epoch FROM sync_heartbeat('c3'))});
sq(q{ALTER SYSTEM SET syncwf.inactive_controller_timeout = 30; SELECT pg_reload_conf();});
my $t_wait_until = $hb3 + 3.2;
my $now = sq('SELECT extract(epoch FROM clock_timestamp())');
usleep(int(1e6 * ($t_wait_until - $now))) if $t_wait_until > $now;
is(sq(q{SELECT (SELECT setting FROM pg_settings WHERE name = 'syncwf.inactive_controller_timeout') || ':'
               || (clock_timestamp() - (SELECT time FROM sync_controller WHERE controller = 'c3') > '3 s') || ':'
               || active FROM sync_waiters WHERE holder = 'wf/r-wait'}),
	'30:true:true', 'reload: raised to 30 s, c3 is still active 3 s after its heartbeat');
my $t_reload = sq(q{ALTER SYSTEM SET syncwf.inactive_controller_timeout = 1;
	SELECT extract(epoch FROM clock_timestamp()) FROM pg_reload_conf()});
ok($node->poll_query_until('syncdb',
		q{SELECT NOT active FROM sync_waiters WHERE holder = 'wf/r-wait'}),
	'reload: lowered to 1 s, c3 goes inactive');
my $t_inactive = sq(q{SELECT extract(epoch FROM clock_timestamp())});
cmp_ok($t_inactive - $t_reload, '<=', 1.0, 'reload: ... within 1 s of pg_reload_conf()');
sq(q{ALTER SYSTEM RESET syncwf.inactive_controller_timeout; SELECT pg_reload_conf();});
ok($node->poll_query_until('syncdb',
		q{SELECT setting = '2' FROM pg_settings WHERE name = 'syncwf.inactive_controller_timeout'}),
	'reload: RESET brings back the postgresql.conf value (2)');
sq(q{SELECT sync_release_holder('wf/r-hold'), sync_release_holder('wf/r-wait'), sync_forget_controller('c3')});

# --- a raised sync_limit grants, and the grant is announced ----------------------
sq(q{INSERT INTO sync_limit (name, sizelimit) VALUES ('w/r', 1)});
$r = sq(q{
	SELECT string_agg(status || ':' || coalesce(token, 0), ',' ORDER BY o) FROM (
	  SELECT 1 AS o, * FROM sync_request('sem/w/r', 'wf/s1')
	  UNION ALL SELECT 2, * FROM sync_request('sem/w/r', 'wf/s2')) s});
like($r, qr/^held:\d+,pending:0$/, 'raised limit: wf/s1 holds sem/w/r (limit 1), wf/s2 is pending');
my ($tok_s1) = $r =~ /^held:(\d+)/;
my $limiter = $node->background_psql('syncdb');
$limiter->query_safe(q{BEGIN; UPDATE sync_limit SET sizelimit = 2 WHERE name = 'w/r'});
usleep(300_000);
is(sq(q{SELECT (SELECT sizelimit || ':' || holders FROM sync_locks WHERE lock_name = 'sem/w/r') || ' '
               || (SELECT held FROM sync_state WHERE workflowkey = 'wf/s2')})
	  . ' ' . scalar(events_like($l, holder => 'wf/s2')),
	'1:1 false 0', 'raised limit: before the UPDATE commits, the limit is 1 and wf/s2 is neither granted nor announced');
$limiter->query_safe('COMMIT');
$limiter->quit;
$granted = wait_event($l, 5, undef, event => 'granted', holder => 'wf/s2');
ok($granted, 'raised limit: once the UPDATE commits, the grant of wf/s2 is announced (NOTIFY "granted")')
  or diag(describe_events($l));
$granted //= {};
is(fields($granted, qw(lock sender)), "sem/w/r|$wpid", 'raised limit: payload lock; sent by the worker');
is(sq(q{SELECT string_agg(workflowkey || ':' || held || ':' || token, ' ' ORDER BY workflowkey)
          FROM sync_state WHERE name = 'sem/w/r'})
	  . ' ' . sq(q{SELECT sizelimit || ':' || holders FROM sync_locks WHERE lock_name = 'sem/w/r'}),
	"wf/s1:true:$tok_s1 wf/s2:true:" . ($granted->{token} // '') . ' 2:2',
	'raised limit: sync_state says both hold sem/w/r, wf/s2 with the announced token; 2 of 2 slots taken');
sq(q{SELECT sync_release_holder('wf/s1'), sync_release_holder('wf/s2');
     DELETE FROM sync_limit WHERE name = 'w/r'});

# --- an idle worker sleeps ----------------------------------------------------------
# With no keyed entry and no controller left there is no lease expiry and no
# controller deadline, so the worker's round computes no next wake-up and it
# waits on its latch without a timeout; only a grant, a new lease or
# heartbeat, or a reload would wake it, and nothing here does.  A deadline
# computed before the cleanup still wakes it once (a forgotten controller's
# heartbeat + timeout is not taken back): a controller deadline is at most
# the timeout (2 s) after the round that computed it, so once the worker has
# been idle for longer than that, none is left.  A round reports
# STATE_RUNNING then STATE_IDLE, which moves state_change in
# pg_stat_activity: if it has not moved in 3 s, no round ran.  CPU: a clock
# tick is 10 ms (USER_HZ 100); a process asleep in epoll_wait is charged
# nothing (our reads of /proc and pg_stat_activity are charged to us), so
# the bound of 2 ticks only leaves room for the tick-sampled accounting.  A
# worker that polled instead would pay a transaction, a snapshot and a stats
# flush per round: spinning, or polling every millisecond, it would burn
# tens to hundreds of ticks in 3 s (the state_change check catches any
# round at all).
sub cpu_ticks
{
	my ($pid) = @_;
	my $stat = slurp_file("/proc/$pid/stat");
	$stat =~ s/^.*\)\s+//s;    # after "pid (comm) " comes field 3
	my @f = split /\s+/, $stat;
	return $f[11] + $f[12];    # fields 14 (utime) and 15 (stime)
}
is(sq(q{SELECT (SELECT count(*) FROM sync_state) || ':' || (SELECT count(*) FROM sync_controller)
               || ':' || (SELECT count(*) FROM sync_holders) || ':' || (SELECT count(*) FROM sync_waiters)}),
	'0:0:0:0', 'idle: no keyed entry, no controller, no hold and no waiter is left');
ok($node->poll_query_until('postgres',
		"SELECT state = 'idle' AND clock_timestamp() - state_change > '2.2 s' FROM pg_stat_activity WHERE pid = $wpid"),
	'idle: the worker has been idle for longer than the controller timeout (2 s)');
my $idle_q = "SELECT state || ' ' || state_change FROM pg_stat_activity WHERE pid = $wpid";
my $idle0 = $node->safe_psql('postgres', $idle_q);
my $cpu0 = cpu_ticks($wpid);
usleep(3_000_000);
my $cpu1 = cpu_ticks($wpid);
my $idle1 = $node->safe_psql('postgres', $idle_q);
note sprintf('idle: the worker used %d clock ticks in 3 s', $cpu1 - $cpu0);
is($idle1, $idle0, 'idle: over 3 s the worker ran no round (state idle, state_change unchanged)');
cmp_ok($cpu1 - $cpu0, '<=', 2, 'idle: ... and used at most 2 clock ticks of CPU (it sleeps, it does not poll)');

# --- other databases -------------------------------------------------------------
my $pq = sub { return $node->safe_psql('postgres', $_[0]); };
$pq->(q{
	CREATE EXTENSION syncwf;
	CREATE FUNCTION error_of(stmt text) RETURNS text LANGUAGE plpgsql AS $$
	DECLARE s text; h text;
	BEGIN
	  EXECUTE stmt;
	  RETURN 'no error';
	EXCEPTION WHEN OTHERS THEN
	  GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, h = PG_EXCEPTION_HINT;
	  RETURN s || ' ' || h;
	END $$;});
for my $call (
	q{SELECT * FROM sync_request('mtx/o/k', 'o/h')},
	q{SELECT * FROM sync_request(ARRAY['mtx/o/k', 'mtx/o/j'], 'o/h')},
	q{SELECT sync_release('mtx/o/k', 'o/h')},
	q{SELECT sync_release_holder('o/h')},
	q{SELECT sync_heartbeat('o/ctl')},
	q{SELECT sync_refresh('mtx/o/k', 'o/h', '1 min')},
	q{SELECT sync_is_held('mtx/o/k', 'o/h')},
	q{SELECT sync_wait('mtx/o/k', 'o/h')},
	q{SELECT sync_wait(ARRAY['mtx/o/k'], 'o/h', '1 s')},
	q{SELECT sync_force_release('mtx/o/k', 'o/h')},
	q{SELECT sync_forget_controller('o/ctl')},
	q{SELECT sync_reconcile()})
{
	my $res = $pq->("SELECT error_of(\$q\$$call\$q\$)");
	like($res, qr/^55000 .*syncwf\.database/,
		"other database: $call fails with 55000, hint naming syncwf.database");
	like($res, qr/"syncdb"/, "other database: ... and the database \"syncdb\"") if $call =~ /sync_request\('/;
}
is(sq(q{SELECT status FROM sync_request('mtx/o/k', 'o/h')}), 'held',
	'other database: o/h holds keyed mtx/o/k in syncdb');
my $os = $node->background_psql('postgres');
like($os->query_safe(q{SELECT sync_acquire('mtx/o/k')}), qr/^\d+$/,
	'other database: a session lock on the same name is granted there (another database, another lock)');
is($pq->(q{SELECT sync_try_acquire('mtx/o/k') IS NULL}), 't',
	'other database: another session cannot take it');
is($pq->(q{SELECT sync_try_acquire_xact('mtx/o/x') IS NOT NULL}), 't',
	'other database: transaction locks work');
is($pq->(q{SELECT string_agg(lock_name || ':' || scope, ',') FROM sync_holders}),
	'mtx/o/k:session', 'other database: sync_holders there shows the session hold only');
is($os->query_safe(q{SELECT sync_release('mtx/o/k')}), 't', 'other database: session release');
$os->quit;
is($pq->('SELECT count(*) FROM sync_state'), '0', "other database: its sync_state stays empty");
sq(q{SELECT sync_release('mtx/o/k', 'o/h')});

# --- pg_terminate_backend of the worker: restarted, catches up --------------------
$r = sq(q{
	SELECT string_agg(status || ':' || coalesce(token, 0), ',' ORDER BY o) FROM (
	  SELECT 1 AS o, * FROM sync_request('mtx/w/r', 'wf/r1')
	  UNION ALL SELECT 2, * FROM sync_request('mtx/w/r', 'wf/r2')
	  UNION ALL SELECT 3, * FROM sync_request('mtx/w/r', 'wf/r3')) s});
like($r, qr/^held:\d+,pending:0,pending:0$/, 'terminate: wf/r1 holds mtx/w/r, wf/r2 and wf/r3 wait');
my $log_offset = -s $node->logfile;
is($node->safe_psql('postgres', "SELECT pg_terminate_backend($wpid)"), 't',
	'terminate: pg_terminate_backend(worker)');
my $t_term = time;
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'syncwf worker'"),
	'terminate: the worker exited');
is(sq(q{SELECT sync_release('mtx/w/r', 'wf/r1');
        SELECT held FROM sync_state WHERE workflowkey = 'wf/r2'}),
	"t\nf", 'terminate: while no worker runs, the hand-off to wf/r2 is not written');
my ($wpid2, $wdb2) = wait_for_worker($node, $wpid, 10);
my $restart_after = time - $t_term;
ok(defined $wpid2 && $wdb2 eq 'syncdb', 'terminate: a new worker runs in syncdb');
note sprintf('terminate: new worker after %.2f s', $restart_after);
cmp_ok($restart_after, '<=', 6.5, 'terminate: ... within about 5 s (bgw_restart_time) of the exit');
$granted = wait_event($l, 5, undef, event => 'granted', holder => 'wf/r2');
ok($granted, 'terminate: the new worker announces the hand-off made while none ran')
  or diag(describe_events($l));
is($granted && $granted->{sender}, $wpid2, 'terminate: ... from its pid');
is(sq(q{SELECT held FROM sync_state WHERE workflowkey = 'wf/r2'}), 't',
	'terminate: ... and writes it to sync_state');
my $log = slurp_file($node->logfile, $log_offset);
like($log, qr/terminating background worker "syncwf worker" due to administrator command/,
	'terminate: the log shows an ordinary exit');
unlike($log, qr/terminated by signal|all server processes terminated/,
	'terminate: no crash restart');
my $tok_r2 = $granted ? $granted->{token} : 0;

# Every grant above was written and announced by the worker: no backend
# called sync_reconcile() in syncdb (checked before the crash resets the
# statistics).
# (track_functions = all; sync_request's calls show that tracking works.)
is(sq(q{SELECT coalesce(sum(calls) FILTER (WHERE funcname = 'sync_request'), 0) > 0,
               coalesce(sum(calls) FILTER (WHERE funcname = 'sync_reconcile'), 0)
          FROM pg_stat_user_functions}),
	't|0', 'nobody called sync_reconcile() in syncdb');

# --- kill -9 of the worker: crash restart ----------------------------------------
$mon->quit;
$log_offset = -s $node->logfile;
ok(kill('KILL', $wpid2), 'crash: SIGKILL to the worker');
my $t_kill = time;
$node->wait_for_log(qr/all server processes terminated; reinitializing/, $log_offset);
forget_session($l->{psql});
ok($node->poll_query_until('postgres', 'SELECT true'), 'crash: the server accepts connections again');
my ($wpid3, $wdb3) = wait_for_worker($node, $wpid2, 10);
ok(defined $wpid3 && $wdb3 eq 'syncdb', 'crash: a worker runs in syncdb again');
note sprintf('crash: new worker %.2f s after the SIGKILL', time - $t_kill);
cmp_ok(time - $t_kill, '<=', 6.5, 'crash: ... within about 6 s');
like(slurp_file($node->logfile, $log_offset),
	qr/background worker "syncwf worker" \(PID $wpid2\) was terminated by signal 9/,
	'crash: the postmaster saw the SIGKILLed worker');
is(sq(q{SELECT string_agg(name || ':' || workflowkey || ':' || held, ' ' ORDER BY workflowkey) FROM sync_state}),
	'mtx/w/r:wf/r2:true mtx/w/r:wf/r3:false', 'crash: sync_state kept the hold and the pending entry');
ok($node->poll_query_until('syncdb',
		q{SELECT string_agg(holder || ':' || scope, ',') = 'wf/r2:keyed' FROM sync_holders}),
	'crash: the keyed hold is back in shared memory');
$l = listener($node, 'syncdb');
sq(q{SELECT sync_release('mtx/w/r', 'wf/r2')});
$granted = wait_event($l, 5, undef, event => 'granted', holder => 'wf/r3');
ok($granted, 'crash: the worker announces the next hand-off') or diag(describe_events($l));
is($granted && $granted->{sender}, $wpid3, 'crash: ... from the new worker');
is(sq("SELECT token > $tok_r2 FROM sync_state WHERE workflowkey = 'wf/r3'"), 't',
	'crash: the token granted after the crash is larger than before it');
sq(q{SELECT sync_release('mtx/w/r', 'wf/r3')});
$l->{psql}->quit;
unlike(slurp_file($node->logfile), qr/PANIC|TRAP:/, 'the worker node log shows no PANIC or assertion failure');
$node->stop;

# --- node "cron", part 2: the pg_cron job wrote the hand-off -----------------------
note sprintf('waiting for the pg_cron job (scheduled %.0f s ago)', time - $t_scheduled);
ok($cron->poll_query_until('postgres',
		q{SELECT held FROM sync_state WHERE name = 'mtx/c/b' AND workflowkey = 'c/four'}),
	'pg_cron: the hand-off to c/four is written to sync_state');
note sprintf('pg_cron: written %.1f s after scheduling', time - $t_scheduled);
my ($job_pid, $job_status) = split /\|/, cq(qq{
	SELECT job_pid || '|' || status FROM cron.job_run_details
	 WHERE jobid = $cron_job ORDER BY runid LIMIT 1});
is($job_status, 'succeeded', 'pg_cron: the job run succeeded');
$ev = wait_event($cl, 5, undef, event => 'granted', holder => 'c/four');
ok($ev, 'pg_cron: the grant of c/four is announced') or diag(describe_events($cl));
is($ev && $ev->{sender}, $job_pid, 'pg_cron: ... by the cron job (its job_pid)');
is($ev && $ev->{token},
	cq("SELECT token FROM sync_state WHERE name = 'mtx/c/b' AND workflowkey = 'c/four'"),
	'pg_cron: ... with the token in sync_state');
cq("SELECT cron.unschedule($cron_job)");

# --- node "cron": turn the worker on (SIGHUP) ---------------------------------------
is(cq(q{SELECT sync_release('mtx/c/b', 'c/four')}), 't', 'cron node: c/four releases mtx/c/b');
is(cq(q{
	SELECT string_agg(status, ',' ORDER BY o) FROM (
	  SELECT 1 AS o, status FROM sync_request('mtx/c/b', 'c/five')
	  UNION ALL SELECT 2, status FROM sync_request('mtx/c/b', 'c/six')) s}),
	'held,pending', 'cron node: c/five holds mtx/c/b, c/six waits');
cq(q{SELECT sync_release('mtx/c/b', 'c/five')});
is(cq(q{SELECT held FROM sync_state WHERE workflowkey = 'c/six'}), 'f',
	'cron node: the hand-off to c/six is not written while the worker is off');
cq(q{ALTER SYSTEM SET syncwf.enable_worker = on; SELECT pg_reload_conf();});
$ev = wait_event($cl, 5, undef, event => 'granted', holder => 'c/six');
ok($ev, 'enable_worker = on (SIGHUP): the worker announces the pending hand-off')
  or diag(describe_events($cl));
is($ev && $ev->{sender}, (worker($cron))[0], 'enable_worker = on: ... from the worker');
is(cq(q{SELECT held FROM sync_state WHERE workflowkey = 'c/six'}), 't',
	'enable_worker = on: ... and writes it');
$cl->{psql}->quit;
unlike(slurp_file($cron->logfile), qr/PANIC|TRAP:/, 'the cron node log shows no PANIC or assertion failure');
$cron->stop;

note sprintf('total %.1f s', time - $t_start);
done_testing();
