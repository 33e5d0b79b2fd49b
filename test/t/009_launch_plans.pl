# Launch-plan concurrency policies driven by the background worker: nobody
# calls sync_reconcile() on the launch-plan node (checked with
# track_functions = all).  Both nodes set syncwf.handoff_in_transaction =
# off, so that a terminal update leaves the promotion to the worker (the
# promotion by the terminal update's own transaction is tested by
# 022_handoff_crash.pl and isolation spec keyed-reservation).
#
# Node "lp" (syncwf.database = 'postgres'):
#  - WAIT promotion: a terminal sync_execution_update() of the execution
#    holding the slot promotes the next pending one (FIFO) to QUEUED; a
#    LISTEN syncwf_launch connection receives the "promoted" JSON event,
#    sent by the worker; a pending execution moved to ABORTED leaves the
#    queue (it is never promoted).  The latency from the update's commit to
#    the event (server clock of the event row, and the moment the LISTEN
#    connection had received it) is measured over a chain of promotions and
#    reported (milliseconds);
#  - reconciliation by the worker:
#    * a version that loses its policy (sync_launch_plan_register with a
#      NULL max_concurrency): its pending executions become QUEUED, each
#      with a "promoted" event naming the reason; with the policy back, the
#      executions queued without a slot take one and count again;
#    * a raised limit (registering again with a larger max_concurrency, or
#      a plain UPDATE of sync_launch_plan.max_concurrency) promotes pending
#      executions at once, in FIFO order, up to the new limit;
#    * max_pending: an execution pending longer than max_pending = 1 s
#      becomes TIMED_OUT within about 1 s of its deadline (and not before),
#      with a "timed_out" event, leaving the queue; one promoted in time is
#      not timed out;
#    * a direct UPDATE sync_execution SET phase = 'SUCCEEDED' by another
#      system frees the slot and the next pending execution is promoted; a
#      direct UPDATE of a pending execution to RUNNING gives it a slot;
#    * a version that loses its policy while another version of the plan
#      keeps one: its promoted executions hold slots and count for the
#      other version (as executions created under it do);
#    * an execution replaced by REPLACE (ABORTING, slot given away) does not
#      take a slot back when the worker reconciles;
#    * max_pending when the creating transaction outlasts it: the time-out
#      is not lost (within 1 s of the commit);
#  - durability: executions, their slots and pending queues (FIFO, LIFO and
#    PRIORITY plans) survive a clean restart and a kill -9 of the
#    postmaster: PENDING stays PENDING in the same order, QUEUED / RUNNING
#    keep their slots (a new execution has to wait), and a terminal update
#    after the restart promotes the next execution in order, announced by
#    the new worker; a max_pending deadline that falls across the kill -9
#    still times its execution out.
#
# Node "cron" (shared_preload_libraries = 'syncwf,pg_cron',
# cron.database_name = syncwf.database = 'postgres'): a SKIP plan with
# max_concurrency 1 whose first execution is RUNNING; cron.schedule('* * *
# * *', sync_execution_create(..., 'run-' || epoch)) skips at every tick:
# after two ticks sync_launch_event has the SKIPPED rows (and LISTEN
# syncwf_launch the "skipped" events from the cron job's backend), no new
# execution exists, and sync_launch_plan_stats counts the skips.  pg_cron
# 1.4 has minute granularity, so the cron node is set up first and checked
# last, while the "lp" node's tests run in between.
#
# All times compared are the server's clock, as seconds since the epoch.
use strict;
use warnings FATAL => 'all';

use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use SyncwfTest;

my $t_start = time;
my $CH = 'syncwf_launch';

# --- helpers -----------------------------------------------------------------

# Listeners: SyncwfTest's listener() on channel $CH.
sub wait_event_poll
{
	my ($l, $timeout, $poll_us, %want) = @_;
	return next_event($l, $timeout, $poll_us, undef, %want);
}

sub wait_event { my ($l, $timeout, %want) = @_; return wait_event_poll($l, $timeout, 20_000, %want); }

# Fields of an event joined by '|' (missing ones: '-').
sub fields
{
	my ($ev, @keys) = @_;
	return join('|', map { $ev->{$_} // '-' } @keys);
}

# The pid of the syncwf worker ('' if none runs).
sub worker_pid
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'syncwf worker'");
}

sub wait_for_worker
{
	my ($node, $old_pid, $timeout) = @_;
	my $t0 = time;
	while (time - $t0 < $timeout)
	{
		my $pid = eval { worker_pid($node) };
		return $pid if defined $pid && $pid ne '' && (!defined $old_pid || $pid ne $old_pid);
		usleep(50_000);
	}
	return undef;
}

sub median
{
	my @s = sort { $a <=> $b } @_;
	return undef unless @s;
	return @s % 2 ? $s[$#s / 2] : ($s[@s / 2 - 1] + $s[@s / 2]) / 2;
}

# --- node "cron", part 1: a SKIP plan launched every minute by pg_cron ---------
my $cron = PostgreSQL::Test::Cluster->new('cron');
$cron->init;
$cron->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'syncwf,pg_cron'
syncwf.database = 'postgres'
syncwf.handoff_in_transaction = off
cron.database_name = 'postgres'
cron.use_background_workers = on
max_worker_processes = 16
});
$cron->start;
sub cq { return $cron->safe_psql('postgres', $_[0]); }

cq('CREATE EXTENSION syncwf; CREATE EXTENSION pg_cron;');
note 'pg_cron ' . cq("SELECT extversion FROM pg_extension WHERE extname = 'pg_cron'");
ok(defined wait_for_worker($cron, undef, 12), 'cron node: the syncwf worker runs');
my $cl = listener($cron, 'postgres', $CH);
cq(q{SELECT sync_launch_plan_register('p', 'd', 'sched', 'v1', 1, 'SKIP')});
is(cq(q{SELECT phase FROM sync_execution_create('p', 'd', 'sched', 'v1', 'sched-first')}),
	'QUEUED', 'cron: the first execution of SKIP plan p/d/sched (max 1) is QUEUED');
is(cq(q{SELECT sync_execution_update('sched-first', 'RUNNING')}), 'RUNNING',
	'cron: ... and RUNNING');
my $cron_job = cq(q{SELECT cron.schedule('launch-sched', '* * * * *',
	$$SELECT * FROM sync_execution_create('p','d','sched','v1', 'run-' || extract(epoch from now())::bigint::text)$$)});
ok($cron_job =~ /^\d+$/, "cron: scheduled a launch of p/d/sched every minute (job $cron_job)");
my $t_scheduled = time;

# --- node "lp" -----------------------------------------------------------------
my $node = PostgreSQL::Test::Cluster->new('lp');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'syncwf'
syncwf.database = 'postgres'
syncwf.handoff_in_transaction = off
restart_after_crash = on
track_functions = all
});
$node->start;
sub sq { return $node->safe_psql('postgres', $_[0]); }
sq('CREATE EXTENSION syncwf');
my $wpid = wait_for_worker($node, undef, 12);
ok(defined $wpid, 'lp: the syncwf worker runs');

# phases of executions, in the order given: 'id:PHASE ...'
sub phases
{
	my @ids = @_;
	my $list = join(', ', map { "'$_'" } @ids);
	return sq(qq{SELECT string_agg(execution_id || ':' || phase, ' ' ORDER BY array_position(ARRAY[$list], execution_id))
	               FROM sync_execution WHERE execution_id IN ($list)});
}
# holders and waiters (in queue order) of a plan's semaphore
sub slots
{
	my ($plan) = @_;
	my $lock = "sem/launchplan/p/d/$plan";
	return sq(qq{SELECT coalesce((SELECT string_agg(holder, ',' ORDER BY holder) FROM sync_holders
	                               WHERE lock_name = '$lock'), '') || ' | '
	                  || coalesce((SELECT string_agg(holder, ',' ORDER BY position) FROM sync_waiters
	                               WHERE lock_name = '$lock'), '')});
}
sub create
{
	my ($plan, $id, $prio) = @_;
	$prio //= 0;
	return sq(qq{SELECT phase FROM sync_execution_create('p', 'd', '$plan', 'v1', '$id', $prio)});
}

# Poll (up to $timeout s, default 5) until $sql returns 't'.
sub poll_sq
{
	my ($sql, $timeout) = @_;
	my $deadline = time + ($timeout // 5);
	while (time < $deadline)
	{
		return 1 if sq($sql) eq 't';
		usleep(50_000);
	}
	return 0;
}

my $l = listener($node, 'postgres', $CH);

# --- WAIT promotion ------------------------------------------------------------
sq(q{SELECT sync_launch_plan_register('p', 'd', 'wait', 'v1', 1, 'WAIT')});
is(join(',', map { create('wait', $_) } qw(w-1 w-2 w-3 w-4)), 'QUEUED,PENDING,PENDING,PENDING',
	'WAIT: w-1 takes the only slot of p/d/wait, w-2, w-3, w-4 are PENDING');
is(sq(q{SELECT reason FROM sync_execution WHERE execution_id = 'w-2'}),
	'Waiting for a slot: concurrency limit (1) reached for launch plan p/d/wait',
	'WAIT: the pending reason');
is(slots('wait'), 'w-1 | w-2,w-3,w-4', 'WAIT: sync_holders / sync_waiters show the slot and the queue');
is(sq(q{SELECT sync_execution_update('w-1', 'RUNNING')}), 'RUNNING', 'WAIT: w-1 RUNNING');
my $t_commit = sq(q{SELECT sync_execution_update('w-1', 'SUCCEEDED'), extract(epoch FROM clock_timestamp())});
$t_commit =~ s/^SUCCEEDED\|// or fail('sync_execution_update(w-1, SUCCEEDED) returned SUCCEEDED');
my $ev = wait_event($l, 5, event => 'promoted', execution_id => 'w-2');
ok($ev, 'WAIT: after w-1 SUCCEEDED, a LISTEN syncwf_launch connection receives "promoted" for w-2')
  or diag(describe_events($l));
$ev //= {};
is(fields($ev, qw(event execution_id project domain name version reason replaced_execution_id)),
	'promoted|w-2|p|d|wait|v1|-|-', 'WAIT: the JSON payload names the execution and its plan version');
is($ev->{sender}, $wpid, 'WAIT: the worker sent it');
note sprintf('WAIT: update commit to "promoted" received <= %.1f ms', 1000 * (($ev->{seen_by} // 0) - $t_commit));
is(phases(qw(w-1 w-2 w-3 w-4)), 'w-1:SUCCEEDED w-2:QUEUED w-3:PENDING w-4:PENDING',
	'WAIT: w-2 is QUEUED, w-3 and w-4 still PENDING');
is(sq(q{SELECT (reason IS NULL) || ':' || (queued_at >= created_at) FROM sync_execution WHERE execution_id = 'w-2'}),
	'true:true', 'WAIT: w-2 has no reason any more, and a queued_at');
is(sq(q{SELECT string_agg(event || ':' || execution_id, ',' ORDER BY event_id) FROM sync_launch_event
         WHERE name = 'wait'}), 'PROMOTED:w-2', 'WAIT: the promotion is a row of sync_launch_event');
is(slots('wait'), 'w-2 | w-3,w-4', 'WAIT: w-2 holds the slot now');
# a pending execution that gives up leaves the queue and is never promoted
is(sq(q{SELECT sync_execution_update('w-3', 'ABORTED')}), 'ABORTED', 'WAIT: pending w-3 moves to ABORTED');
is(slots('wait'), 'w-2 | w-4', 'WAIT: ... and leaves the queue');
sq(q{SELECT sync_execution_update('w-2', 'FAILED')});
$ev = wait_event($l, 5, event => 'promoted', execution_id => 'w-4');
ok($ev, 'WAIT: after w-2 FAILED, w-4 (not the aborted w-3) is promoted') or diag(describe_events($l));
is(phases(qw(w-2 w-3 w-4)), 'w-2:FAILED w-3:ABORTED w-4:QUEUED', 'WAIT: the phases agree');
is(scalar(events_like($l, execution_id => 'w-3')), 0, 'WAIT: nothing was announced for w-3');
sq(q{SELECT sync_execution_update('w-4', 'SUCCEEDED')});
is(slots('wait'), ' | ', 'WAIT: no slot or queue entry is left');

# latency: a chain of promotions on a plan with one slot
my $NCHAIN = 15;
sq(q{SELECT sync_launch_plan_register('p', 'd', 'chain', 'v1', 1, 'WAIT')});
is(sq(qq{SELECT string_agg(phase, ',' ORDER BY i) FROM generate_series(0, $NCHAIN) i,
          LATERAL sync_execution_create('p', 'd', 'chain', 'v1', 'c-' || i)}),
	join(',', 'QUEUED', ('PENDING') x $NCHAIN), "latency: c-0 QUEUED, c-1 .. c-$NCHAIN PENDING");
my (@client_ms, @server_ms, $chain_ok);
$chain_ok = 1;
for my $i (1 .. $NCHAIN)
{
	my $prev = $i - 1;
	my ($t, $at_done) = split /\|/, sq(qq{SELECT sync_execution_update('c-$prev', 'SUCCEEDED') IS NOT NULL,
	                                            extract(epoch FROM clock_timestamp())});
	my $e = wait_event_poll($l, 5, 2_000, event => 'promoted', execution_id => "c-$i");
	if (!$e || $e->{sender} ne $wpid)
	{
		$chain_ok = 0;
		diag("chain: no promotion of c-$i from the worker");
		last;
	}
	push @client_ms, 1000 * ($e->{seen_by} - $at_done);
	push @server_ms, 1000 * (sq(qq{SELECT extract(epoch FROM at) FROM sync_launch_event
	                                WHERE event = 'PROMOTED' AND execution_id = 'c-$i'}) - $at_done);
}
ok($chain_ok, "latency: each of $NCHAIN terminal updates promoted the next execution (FIFO), announced by the worker");
note sprintf('latency over %d promotions: update commit -> event row written (server clock): '
	  . 'median %.2f ms, max %.2f ms; -> NOTIFY received by the LISTEN connection (upper bound): '
	  . 'median %.2f ms, max %.2f ms',
	scalar(@server_ms), median(@server_ms) // -1, (sort { $b <=> $a } @server_ms)[0] // -1,
	median(@client_ms) // -1, (sort { $b <=> $a } @client_ms)[0] // -1);
cmp_ok(median(@client_ms) // 1e9, '<', 100,
	'latency: median update commit -> "promoted" received is milliseconds (< 100 ms)');
cmp_ok((sort { $b <=> $a } @client_ms)[0] // 1e9, '<', 1000, 'latency: every one < 1 s');
is(sq(q{SELECT string_agg(execution_id, ',' ORDER BY event_id) FROM sync_launch_event WHERE name = 'chain'}),
	join(',', map { "c-$_" } 1 .. $NCHAIN), 'latency: promotions in creation order');
sq(qq{SELECT sync_execution_update('c-$NCHAIN', 'SUCCEEDED')});

# --- reconciliation: a version loses its policy --------------------------------
sq(q{SELECT sync_launch_plan_register('p', 'd', 'lost', 'v1', 1, 'WAIT')});
is(join(',', map { create('lost', $_) } qw(lo-1 lo-2 lo-3)), 'QUEUED,PENDING,PENDING',
	'lost policy: lo-1 QUEUED, lo-2 and lo-3 PENDING');
my $t_reg = sq(q{SELECT sync_launch_plan_register('p', 'd', 'lost', 'v1', NULL);
                 SELECT extract(epoch FROM clock_timestamp())});
my $e2 = wait_event($l, 5, event => 'promoted', execution_id => 'lo-2');
my $e3 = wait_event($l, 5, event => 'promoted', execution_id => 'lo-3');
ok($e2 && $e3, 'lost policy: "promoted" events for lo-2 and lo-3 once v1 has no policy')
  or diag(describe_events($l));
is(fields($e2 // {}, qw(name version reason)),
	'lost|v1|the launch plan version has no concurrency policy any more', 'lost policy: the event gives the reason');
is(($e2 // {})->{sender}, $wpid, 'lost policy: sent by the worker');
cmp_ok(($e3 // {})->{seen_by} // 1e12, '<=', $t_reg + 1.0, 'lost policy: within 1 s of the commit');
is(phases(qw(lo-1 lo-2 lo-3)), 'lo-1:QUEUED lo-2:QUEUED lo-3:QUEUED', 'lost policy: all three QUEUED');
is(sq(q{SELECT string_agg(event || ':' || execution_id || ':' || reason, ',' ORDER BY execution_id)
          FROM sync_launch_event WHERE name = 'lost'}),
	'PROMOTED:lo-2:the launch plan version has no concurrency policy any more,'
	  . 'PROMOTED:lo-3:the launch plan version has no concurrency policy any more',
	'lost policy: sync_launch_event has both promotions, with the reason');
is(sq(q{SELECT count(*) FROM sync_waiters WHERE lock_name = 'sem/launchplan/p/d/lost'}), '0',
	'lost policy: nothing waits on the plan any more');
is(create('lost', 'lo-4'), 'QUEUED', 'lost policy: a new execution is QUEUED at once');
# the policy comes back: every active execution counts again
sq(q{SELECT sync_launch_plan_register('p', 'd', 'lost', 'v1', 2, 'WAIT')});
ok(poll_sq(q{SELECT count(*) = 4 FROM sync_holders WHERE lock_name = 'sem/launchplan/p/d/lost'}, 10),
	'policy back (max 2): the four active executions hold slots again')
  or diag(slots('lost'));
is(create('lost', 'lo-5'), 'PENDING', 'policy back: a new execution waits (4 active >= 2)');
sq(q{SELECT sync_execution_update(id, 'SUCCEEDED') FROM unnest(ARRAY['lo-1', 'lo-2', 'lo-3']) id});
$ev = wait_event($l, 5, event => 'promoted', execution_id => 'lo-5');
ok($ev, 'policy back: lo-5 is promoted once fewer than 2 are active') or diag(describe_events($l));
is(slots('lost'), 'lo-4,lo-5 | ', 'policy back: lo-4 and lo-5 hold the slots');
sq(q{SELECT sync_execution_update(id, 'SUCCEEDED') FROM unnest(ARRAY['lo-4', 'lo-5']) id});

# --- reconciliation: a raised limit ----------------------------------------------
sq(q{SELECT sync_launch_plan_register('p', 'd', 'raise', 'v1', 1, 'WAIT')});
is(join(',', map { create('raise', $_) } qw(r-1 r-2 r-3 r-4 r-5)), 'QUEUED,PENDING,PENDING,PENDING,PENDING',
	'raised limit: r-1 QUEUED, r-2 .. r-5 PENDING');
$t_reg = sq(q{SELECT sync_launch_plan_register('p', 'd', 'raise', 'v1', 3, 'WAIT');
              SELECT extract(epoch FROM clock_timestamp())});
$e2 = wait_event($l, 5, event => 'promoted', execution_id => 'r-2');
$e3 = wait_event($l, 5, event => 'promoted', execution_id => 'r-3');
ok($e2 && $e3, 'raised limit (register with max 3): r-2 and r-3 are promoted') or diag(describe_events($l));
note sprintf('raised limit: register commit to both "promoted" received <= %.1f ms',
	1000 * (max(($e2 // {})->{seen_by} // 0, ($e3 // {})->{seen_by} // 0) - $t_reg));
cmp_ok(max(($e2 // {})->{seen_by} // 1e12, ($e3 // {})->{seen_by} // 1e12), '<=', $t_reg + 1.0,
	'raised limit: ... at once (within 1 s)');
is(($e2 // {})->{sender}, $wpid, 'raised limit: announced by the worker');
is(phases(qw(r-1 r-2 r-3 r-4 r-5)), 'r-1:QUEUED r-2:QUEUED r-3:QUEUED r-4:PENDING r-5:PENDING',
	'raised limit: three active, r-4 and r-5 still wait');
is(slots('raise'), 'r-1,r-2,r-3 | r-4,r-5', 'raised limit: slots and queue');
$t_reg = sq(q{UPDATE sync_launch_plan SET max_concurrency = 4
               WHERE (project, domain, name, version) = ('p', 'd', 'raise', 'v1');
              SELECT extract(epoch FROM clock_timestamp())});
$ev = wait_event($l, 5, event => 'promoted', execution_id => 'r-4');
ok($ev, 'raised limit (plain UPDATE sync_launch_plan SET max_concurrency = 4): r-4 is promoted')
  or diag(describe_events($l));
cmp_ok(($ev // {})->{seen_by} // 1e12, '<=', $t_reg + 1.0, 'raised limit: ... at once (within 1 s)');
is(phases(qw(r-4 r-5)), 'r-4:QUEUED r-5:PENDING', 'raised limit: r-5 still waits (4 of 4)');
is(scalar(events_like($l, execution_id => 'r-5')), 0, 'raised limit: nothing announced for r-5');
sq(q{SELECT sync_execution_update(id, 'SUCCEEDED') FROM unnest(ARRAY['r-1', 'r-2', 'r-3', 'r-4']) id});
ok(wait_event($l, 5, event => 'promoted', execution_id => 'r-5'), 'raised limit: r-5 promoted at the end');
sq(q{SELECT sync_execution_update('r-5', 'SUCCEEDED')});

# --- reconciliation: max_pending -------------------------------------------------
sq(q{SELECT sync_launch_plan_register('p', 'd', 'tmo', 'v1', 1, 'WAIT', max_pending => '1 s')});
is(create('tmo', 't-1'), 'QUEUED', 'max_pending: t-1 QUEUED on p/d/tmo (max 1, max_pending 1 s)');
is(create('tmo', 't-2'), 'PENDING', 'max_pending: t-2 PENDING');
my $t2_deadline = sq(q{SELECT extract(epoch FROM created_at + interval '1 s') FROM sync_execution
                       WHERE execution_id = 't-2'});
$ev = wait_event($l, 5, event => 'timed_out', execution_id => 't-2');
ok($ev, 'max_pending: a "timed_out" event for t-2') or diag(describe_events($l));
$ev //= {};
is(fields($ev, qw(name version reason)), 'tmo|v1|Pending longer than max_pending (1 s) for launch plan p/d/tmo',
	'max_pending: the event names the reason');
is($ev->{sender}, $wpid, 'max_pending: sent by the worker');
note sprintf('max_pending: deadline to "timed_out" received <= %.1f ms', 1000 * (($ev->{seen_by} // 0) - $t2_deadline));
cmp_ok($ev->{seen_by} // 1e12, '<=', $t2_deadline + 1.0, 'max_pending: within 1 s of the deadline');
my ($t2_fin, $t2_at, $t2_row) = split /\|/, sq(q{
	SELECT extract(epoch FROM e.finished_at) || '|' || extract(epoch FROM v.at) || '|' || e.phase || ':' || e.reason
	  FROM sync_execution e JOIN sync_launch_event v USING (execution_id)
	 WHERE e.execution_id = 't-2' AND v.event = 'TIMED_OUT'});
is($t2_row, 'TIMED_OUT:Pending longer than max_pending (1 s) for launch plan p/d/tmo',
	'max_pending: t-2 is TIMED_OUT with the reason, and a TIMED_OUT row in sync_launch_event');
cmp_ok($t2_at // 0, '>=', $t2_deadline, 'max_pending: ... not before the deadline');
ok(defined $t2_fin && $t2_fin ne '', 'max_pending: finished_at is set');
is(slots('tmo'), 't-1 | ', 'max_pending: t-2 left the queue; t-1 keeps its slot');
# one promoted before its deadline is not timed out
is(create('tmo', 't-3'), 'PENDING', 'max_pending: t-3 PENDING');
sq(q{SELECT sync_execution_update('t-1', 'SUCCEEDED')});
ok(wait_event($l, 2, event => 'promoted', execution_id => 't-3'), 'max_pending: t-3 promoted in time');
usleep(1_500_000);
is(phases('t-3'), 't-3:QUEUED', 'max_pending: 1.5 s later t-3 is still QUEUED (a promoted execution never times out)');
is(scalar(events_like($l, event => 'timed_out')), 1, 'max_pending: one time-out in all');
sq(q{SELECT sync_execution_update('t-3', 'SUCCEEDED')});

# --- reconciliation: direct UPDATEs by another system ------------------------------
sq(q{SELECT sync_launch_plan_register('p', 'd', 'ext', 'v1', 1, 'WAIT')});
is(join(',', map { create('ext', $_) } qw(x-1 x-2 x-3)), 'QUEUED,PENDING,PENDING',
	'direct update: x-1 QUEUED, x-2 and x-3 PENDING on p/d/ext');
$t_commit = sq(q{UPDATE sync_execution SET phase = 'SUCCEEDED', finished_at = now() WHERE execution_id = 'x-1';
                 SELECT extract(epoch FROM clock_timestamp())});
$ev = wait_event($l, 5, event => 'promoted', execution_id => 'x-2');
ok($ev, "direct update: UPDATE sync_execution SET phase = 'SUCCEEDED' of x-1 has x-2 promoted")
  or diag(describe_events($l));
is(($ev // {})->{sender}, $wpid, 'direct update: announced by the worker');
cmp_ok(($ev // {})->{seen_by} // 1e12, '<=', $t_commit + 1.0, 'direct update: within 1 s');
is(phases(qw(x-1 x-2 x-3)), 'x-1:SUCCEEDED x-2:QUEUED x-3:PENDING', 'direct update: phases');
is(slots('ext'), 'x-2 | x-3', "direct update: x-1's slot went to x-2");
is(sq(q{SELECT count(*) FROM sync_state WHERE workflowkey = 'x-1'}), '0', 'direct update: x-1 has no sync_state row');
# another system starts a pending execution by hand: it takes a slot
sq(q{UPDATE sync_execution SET phase = 'RUNNING', started_at = now() WHERE execution_id = 'x-3'});
ok(poll_sq(q{SELECT string_agg(holder, ',' ORDER BY holder) = 'x-2,x-3' FROM sync_holders
		   WHERE lock_name = 'sem/launchplan/p/d/ext'}, 10),
	'direct update: x-3 moved to RUNNING by hand holds a slot') or diag(slots('ext'));
is(slots('ext'), 'x-2,x-3 | ', 'direct update: ... and no longer waits');
# several executions finished by one statement
is(create('ext', 'x-4'), 'PENDING', 'direct update: x-4 PENDING');
sq(q{UPDATE sync_execution SET phase = 'FAILED' WHERE execution_id IN ('x-2', 'x-3')});
ok(wait_event($l, 5, event => 'promoted', execution_id => 'x-4'),
	'direct update: x-2 and x-3 FAILED in one statement, x-4 promoted') or diag(describe_events($l));
is(slots('ext'), 'x-4 | ', 'direct update: only x-4 holds a slot');
sq(q{SELECT sync_execution_update('x-4', 'SUCCEEDED')});

# --- reconciliation: a version loses its policy while another version keeps one ---
# Counting is version-agnostic: an execution of a version without a policy
# still counts for the versions that have one (sync_execution_create gives it
# a slot).  One promoted because its version lost its policy must count too.
sq(q{SELECT sync_launch_plan_register('p', 'd', 'mix', 'v1', 2, 'WAIT');
     SELECT sync_launch_plan_register('p', 'd', 'mix', 'v2', 1, 'WAIT')});
is(sq(q{SELECT string_agg(phase, ',' ORDER BY o) FROM (
          SELECT 1 AS o, phase FROM sync_execution_create('p', 'd', 'mix', 'v1', 'm-1')
          UNION ALL SELECT 2, phase FROM sync_execution_create('p', 'd', 'mix', 'v2', 'm-2')) s}),
	'QUEUED,PENDING', 'mixed versions: m-1 (v1, max 2) QUEUED, m-2 (v2, max 1) PENDING');
sq(q{SELECT sync_launch_plan_register('p', 'd', 'mix', 'v2', NULL)});
ok(wait_event($l, 5, event => 'promoted', execution_id => 'm-2'),
	'mixed versions: v2 loses its policy, m-2 is promoted') or diag(describe_events($l));
ok(poll_sq(q{SELECT string_agg(holder, ',' ORDER BY holder) = 'm-1,m-2' FROM sync_holders
		   WHERE lock_name = 'sem/launchplan/p/d/mix'}),
	'mixed versions: m-2 holds a slot, counted for v1 (as an execution created under v2 would)')
  or diag(slots('mix'));
is(sq(q{SELECT phase FROM sync_execution_create('p', 'd', 'mix', 'v1', 'm-3')}), 'PENDING',
	'mixed versions: with m-1 and m-2 active, a v1 execution (max 2) waits');
sq(q{SELECT sync_execution_update(id, 'ABORTED') FROM unnest(ARRAY['m-1', 'm-2', 'm-3']) id});

# --- reconciliation leaves a replaced execution without its slot -------------------
sq(q{SELECT sync_launch_plan_register('p', 'd', 'rep', 'v1', 1, 'REPLACE')});
is(sq(q{SELECT string_agg(phase || ':' || coalesce(replaced_execution_id, '-'), ',' ORDER BY o) FROM (
          SELECT 1 AS o, * FROM sync_execution_create('p', 'd', 'rep', 'v1', 'rp-1')
          UNION ALL SELECT 2, * FROM sync_execution_create('p', 'd', 'rep', 'v1', 'rp-2')) s}),
	'QUEUED:-,QUEUED:rp-1', 'REPLACE: rp-2 replaces rp-1');
is(phases(qw(rp-1 rp-2)) . ' / ' . slots('rep'), 'rp-1:ABORTING rp-2:QUEUED / rp-2 | ',
	'REPLACE: rp-1 ABORTING without a slot, rp-2 holds it');
# anything that has the worker reconcile launch plans (here: another plan edited)
sq(q{SELECT sync_launch_plan_register('p', 'd', 'unrelated', 'v1', 3, 'WAIT')});
usleep(500_000);
is(slots('rep'), 'rp-2 | ',
	'REPLACE: after the worker reconciled, the replaced rp-1 (ABORTING) has not taken a slot back');
is(sq(q{SELECT count(*) FROM sync_state WHERE name = 'sem/launchplan/p/d/rep'}), '1',
	'REPLACE: ... sync_state agrees (the plan never exceeds max_concurrency 1)');
sq(q{SELECT sync_execution_update(id, 'ABORTED') FROM unnest(ARRAY['rp-1', 'rp-2']) id});

# --- max_pending: the creating transaction outlasts max_pending --------------------
# The deadline is announced to the worker before the creating transaction
# commits; if the worker looks at it while the row is still invisible, the
# time-out must not be lost.
is(create('tmo', 't-4'), 'QUEUED', 'max_pending (long transaction): t-4 holds the slot of p/d/tmo');
$t_commit = sq(q{BEGIN;
	SELECT phase FROM sync_execution_create('p', 'd', 'tmo', 'v1', 't-5');
	SELECT pg_sleep(1.5);
	COMMIT;
	SELECT extract(epoch FROM clock_timestamp());});
$t_commit =~ s/^PENDING\n\n//s or fail('max_pending (long transaction): t-5 was PENDING');
$ev = wait_event($l, 4, event => 'timed_out', execution_id => 't-5');
ok($ev, 'max_pending (long transaction): t-5, committed 1.5 s after its creation, is timed out')
  or diag(describe_events($l) . "\n" . phases('t-5'));
cmp_ok(($ev // {})->{seen_by} // 1e12, '<=', $t_commit + 1.0, 'max_pending (long transaction): ... within 1 s of the commit');
sq(q{SELECT sync_execution_update('t-4', 'SUCCEEDED')});
sq(q{SELECT sync_execution_update('t-5', 'ABORTED')}) if phases('t-5') !~ /TIMED_OUT/;

# Everything above was done by the worker.
is(sq(q{SELECT coalesce(sum(calls) FILTER (WHERE funcname = 'sync_execution_create'), 0) > 0,
               coalesce(sum(calls) FILTER (WHERE funcname = 'sync_reconcile'), 0)
          FROM pg_stat_user_functions}),
	't|0', 'nobody called sync_reconcile() on the lp node');

# --- durability: restart and kill -9 -----------------------------------------------
sq(q{SELECT sync_launch_plan_register('p', 'd', 'dur', 'v1', 2, 'WAIT');
     SELECT sync_launch_plan_register('p', 'd', 'dlifo', 'v1', 1, 'WAIT', 'LIFO');
     SELECT sync_launch_plan_register('p', 'd', 'dprio', 'v1', 1, 'WAIT', 'PRIORITY')});
is(join(',', map { create('dur', $_) } qw(d-1 d-2 d-3 d-4 d-5)), 'QUEUED,QUEUED,PENDING,PENDING,PENDING',
	'durability: d-1, d-2 QUEUED (max 2), d-3, d-4, d-5 PENDING');
sq(q{SELECT sync_execution_update('d-1', 'RUNNING')});
is(join(',', map { create('dlifo', $_) } qw(f-1 f-2 f-3 f-4)), 'QUEUED,PENDING,PENDING,PENDING',
	'durability: LIFO plan: f-1 QUEUED, f-2 .. f-4 PENDING');
is(join(',', create('dprio', 'h-1'), create('dprio', 'h-2', 1), create('dprio', 'h-3', 5), create('dprio', 'h-4', 1)),
	'QUEUED,PENDING,PENDING,PENDING', 'durability: PRIORITY plan: h-1 QUEUED, h-2 (1), h-3 (5), h-4 (1) PENDING');
my %before = (
	dur => 'd-1,d-2 | d-3,d-4,d-5',
	dlifo => 'f-1 | f-4,f-3,f-2',
	dprio => 'h-1 | h-3,h-2,h-4');
is(slots($_), $before{$_}, "durability: $_ slots and queue before the restart") for sort keys %before;
my $rows_sql = q{SELECT string_agg(execution_id || ':' || phase || ':' || coalesce(reason, '') || ':'
                                   || created_at || ':' || coalesce(queued_at::text, ''), E'\n' ORDER BY execution_id)
                   FROM sync_execution WHERE name <> 'dtmo'};
my $exec_rows = sq($rows_sql);
my $state_sql = q{SELECT string_agg(name || ':' || workflowkey || ':' || held || ':' || token || ':' || priority,
                                    E'\n' ORDER BY name, workflowkey) FROM sync_state
                  WHERE name <> 'sem/launchplan/p/d/dtmo'};
my $state_rows = sq($state_sql);

$l->{psql}->quit;
$node->restart;
$wpid = wait_for_worker($node, undef, 12);
ok(defined $wpid, 'restart: the worker runs again');
is(sq($rows_sql), $exec_rows, 'restart: sync_execution is unchanged');
is(sq($state_sql), $state_rows, 'restart: sync_state is unchanged (same holders, tokens, queue entries)');
ok(poll_sq(q{SELECT count(*) = 4 FROM sync_holders WHERE lock_name IN ('sem/launchplan/p/d/dur', 'sem/launchplan/p/d/dlifo', 'sem/launchplan/p/d/dprio')}, 10),
	'restart: the slots are back in shared memory');
is(slots($_), $before{$_}, "restart: $_ slots and queue in the same order") for sort keys %before;
is(phases(qw(d-1 d-2 d-3 d-4 d-5)), 'd-1:RUNNING d-2:QUEUED d-3:PENDING d-4:PENDING d-5:PENDING',
	'restart: phases kept');
is(create('dur', 'd-6'), 'PENDING', 'restart: a new execution waits (d-1 and d-2 kept their slots)');
$l = listener($node, 'postgres', $CH);
sq(q{SELECT sync_execution_update('d-2', 'SUCCEEDED')});
$ev = wait_event($l, 5, event => 'promoted', name => 'dur');
is(($ev // {})->{execution_id}, 'd-3', 'restart: a terminal update promotes the first pending execution (d-3)')
  or diag(describe_events($l));
is(($ev // {})->{sender}, $wpid, 'restart: ... announced by the new worker');
sq(q{SELECT sync_execution_update('f-1', 'SUCCEEDED'); SELECT sync_execution_update('h-1', 'SUCCEEDED');});
$ev = wait_event($l, 5, event => 'promoted', name => 'dlifo');
is(($ev // {})->{execution_id}, 'f-4', 'restart: LIFO plan promotes the newest pending execution (f-4)');
$ev = wait_event($l, 5, event => 'promoted', name => 'dprio');
is(($ev // {})->{execution_id}, 'h-3', 'restart: PRIORITY plan promotes the highest priority (h-3)');
%before = (
	dur => 'd-1,d-3 | d-4,d-5,d-6',
	dlifo => 'f-4 | f-3,f-2',
	dprio => 'h-3 | h-2,h-4');
is(slots($_), $before{$_}, "restart: $_ slots and queue after the promotion") for sort keys %before;
$exec_rows = sq($rows_sql);
$state_rows = sq($state_sql);

# a pending execution with max_pending 3 s crosses the kill -9
sq(q{SELECT sync_launch_plan_register('p', 'd', 'dtmo', 'v1', 1, 'WAIT', max_pending => '3 s')});
is(create('dtmo', 'k-1') . ',' . create('dtmo', 'k-2'), 'QUEUED,PENDING',
	'kill -9: k-1 QUEUED, k-2 PENDING on p/d/dtmo (max_pending 3 s)');
my $k2_deadline = sq(q{SELECT extract(epoch FROM created_at + interval '3 s') FROM sync_execution
                       WHERE execution_id = 'k-2'});

# kill -9 of the postmaster
$l->{psql}->quit;
my $pm_pid = $node->{_pid};
$node->kill9;
ok(wait_children_gone($node, $pm_pid), 'kill -9: every process of the killed server has exited');
$node->start;
my $t_up = sq('SELECT extract(epoch FROM pg_postmaster_start_time())');
$wpid = wait_for_worker($node, undef, 12);
ok(defined $wpid, 'kill -9: the worker runs again');
is(sq($rows_sql), $exec_rows, 'kill -9: sync_execution is unchanged');
is(sq($state_sql), $state_rows, 'kill -9: sync_state is unchanged');
ok(poll_sq(q{SELECT count(*) = 4 FROM sync_holders WHERE lock_name IN ('sem/launchplan/p/d/dur', 'sem/launchplan/p/d/dlifo', 'sem/launchplan/p/d/dprio')}, 10),
	'kill -9: the slots are back in shared memory');
is(slots($_), $before{$_}, "kill -9: $_ slots and queue in the same order") for sort keys %before;
is(phases(qw(d-1 d-3 d-4 d-5 d-6)), 'd-1:RUNNING d-3:QUEUED d-4:PENDING d-5:PENDING d-6:PENDING',
	'kill -9: phases kept');
is(create('dur', 'd-7'), 'PENDING', 'kill -9: a new execution waits (d-1 and d-3 kept their slots)');
$l = listener($node, 'postgres', $CH);
sq(q{SELECT sync_execution_update('d-1', 'SUCCEEDED')});
$ev = wait_event($l, 5, event => 'promoted', name => 'dur');
is(($ev // {})->{execution_id}, 'd-4', 'kill -9: a terminal update promotes the next pending execution (d-4)')
  or diag(describe_events($l));
is(($ev // {})->{sender}, $wpid, 'kill -9: ... announced by the new worker');
sq(q{SELECT sync_execution_update('f-4', 'ABORTED'); SELECT sync_execution_update('h-3', 'FAILED');});
$ev = wait_event($l, 5, event => 'promoted', name => 'dlifo');
is(($ev // {})->{execution_id}, 'f-3', 'kill -9: LIFO plan promotes f-3 next');
$ev = wait_event($l, 5, event => 'promoted', name => 'dprio');
is(($ev // {})->{execution_id}, 'h-2', 'kill -9: PRIORITY plan promotes h-2 (priority 1, older than h-4)');
is(slots('dur'), 'd-3,d-4 | d-5,d-6,d-7', 'kill -9: dur slots and queue after the promotion');
ok(poll_sq(q{SELECT phase = 'TIMED_OUT' FROM sync_execution WHERE execution_id = 'k-2'}, 8),
	'kill -9: k-2 is timed out after the restart') or diag(phases('k-2'));
my $k2_at = sq(q{SELECT extract(epoch FROM at) FROM sync_launch_event WHERE event = 'TIMED_OUT' AND execution_id = 'k-2'});
note sprintf('kill -9: k-2 timed out %.3f s after its deadline', ($k2_at || 0) - $k2_deadline);
cmp_ok($k2_at || 1e12, '<=', max($k2_deadline, $t_up) + 1.0,
	'kill -9: ... within 1 s of its deadline (or of the start, had it passed while the server was down)');
is(slots('dtmo'), 'k-1 | ', 'kill -9: k-1 keeps the slot of p/d/dtmo');
$l->{psql}->quit;
unlike(slurp_file($node->logfile), qr/PANIC|TRAP:/, 'the lp node log shows no PANIC or assertion failure');
$node->stop;

# --- node "cron", part 2: the skips ------------------------------------------------------
note sprintf('waiting for two pg_cron ticks (scheduled %.0f s ago)', time - $t_scheduled);
my $skips_sql = q{SELECT count(*) FROM sync_launch_event WHERE name = 'sched' AND event = 'SKIPPED'};
my $deadline = $t_scheduled + 185;
while (time < $deadline && cq($skips_sql) < 2)
{
	collect($cl);
	sleep 1;
}
cmp_ok(cq($skips_sql), '>=', 2, 'pg_cron: two or more ticks were recorded as SKIPPED in sync_launch_event');
note sprintf('pg_cron: two skips %.0f s after scheduling', time - $t_scheduled);
my @skips = split /\n/, cq(q{
	SELECT execution_id || '|' || version || '|' || reason || '|' || extract(epoch FROM at)
	  FROM sync_launch_event WHERE name = 'sched' AND event = 'SKIPPED' ORDER BY event_id});
my %ids;
for my $s (@skips)
{
	my ($id, $ver, $reason, $at) = split /\|/, $s;
	like($id, qr/^run-\d+$/, "pg_cron: skipped execution id $id");
	is("$ver|$reason", 'v1|Concurrency limit (1) reached for launch plan p/d/sched',
		"pg_cron: $id: version and reason");
	$ids{$id}++;
}
is(scalar(keys %ids), scalar(@skips), 'pg_cron: each tick a distinct execution id');
is(cq(q{SELECT string_agg(execution_id || ':' || phase, ',') FROM sync_execution WHERE name = 'sched'}),
	'sched-first:RUNNING', 'pg_cron: no new execution exists; sched-first still RUNNING');
is(cq(q{SELECT string_agg(holder, ',') FROM sync_holders WHERE lock_name = 'sem/launchplan/p/d/sched'}),
	'sched-first', 'pg_cron: sched-first holds the only slot');
my @runs = split /\n/, cq(qq{SELECT job_pid || '|' || status FROM cron.job_run_details
                              WHERE jobid = $cron_job ORDER BY runid});
cmp_ok(scalar(grep { /\|succeeded$/ } @runs), '>=', 2, 'pg_cron: the job runs succeeded')
  or diag(join("\n", @runs));
my %job_pids = map { (split /\|/)[0] => 1 } @runs;
my @skipped_ev = events_like($cl, event => 'skipped', name => 'sched');
cmp_ok(scalar(@skipped_ev), '>=', 2, 'pg_cron: LISTEN syncwf_launch received the "skipped" events')
  or diag(describe_events($cl));
is(scalar(grep { $job_pids{ $_->{sender} } } @skipped_ev), scalar(@skipped_ev),
	"pg_cron: ... sent by the cron jobs' backends");
is(scalar(grep { $ids{ $_->{execution_id} // '' } && ($_->{reason} // '') =~ /^Concurrency limit \(1\)/ } @skipped_ev),
	scalar(@skipped_ev), 'pg_cron: ... naming the skipped execution ids and the reason');
cmp_ok(cq(q{SELECT skipped FROM sync_launch_plan_stats WHERE name = 'sched'}), '>=', 2,
	'pg_cron: sync_launch_plan_stats counts the skips');
cq("SELECT cron.unschedule($cron_job)");
$cl->{psql}->quit;
unlike(slurp_file($cron->logfile), qr/PANIC|TRAP:/, 'the cron node log shows no PANIC or assertion failure');
$cron->stop;

note sprintf('total %.1f s', time - $t_start);
done_testing();

sub max { my $m = shift; for (@_) { $m = $_ if $_ > $m } return $m; }
