# Nested limits and preemption across a crash: keyed holds are rebuilt
# from sync_state with their parent's count, and preempted holds with their
# grace.
#
# Pattern row nc/* (2 slots each) under parent nc/all (3 slots).  Keyed
# holds in three children fill the parent (a: 1, b: 1, c: 1); a keyed
# request for d and one for b wait for the parent.  A backend is killed
# with SIGKILL, so the postmaster reinitializes shared memory and the
# holds are loaded again from sync_state.  Afterwards:
#  - sync_locks shows the same count under the parent (3) for every child,
#    and the two requests still wait, in their order;
#  - the parent still refuses more: a session's try of a fourth child
#    fails, and an acquire with a timeout times out;
#  - releasing the hold of a grants the first waiter across the children
#    (d, which came first), in the release's transaction, and its row
#    says so; releasing c grants b's waiter;
#  - a raised parent limit grants a newcomer at once.
#
# Preemption (second crash): v (priority 1, preemptible) holds pc/x (one
# slot, preempt_grace 8 s) and hi (priority 5) waits: v is preempted.  a1
# and a2 (preemptible) fill parent pc/all (2 slots, preempt_grace 8 s)
# from child pc/a (guarantee 1) and kb waits in pc/b (guarantee 1): a2,
# the borrowed hold granted last, is preempted.  After the crash the rows
# keep their deadlines, both waiters still wait for 'preemption' of the
# same holds (the counts of holds in their grace were rebuilt: nothing
# more is preempted), and when the graces end hi and kb get the slots;
# v and a2 are gone, a1 keeps its hold.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('nested_crash');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'syncwf'");
$node->append_conf('postgresql.conf', "syncwf.database = 'postgres'");
$node->append_conf('postgresql.conf', "restart_after_crash = on");
$node->start;

$node->safe_psql('postgres', q{
    CREATE EXTENSION syncwf;
    INSERT INTO sync_limit (name, sizelimit) VALUES ('nc/all', 3);
    INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nc/*', 2, 'nc/all');
});
$node->safe_psql('postgres', q{
    SELECT sync_request('sem/nc/a', 'h1');
    SELECT sync_request('sem/nc/b', 'h2');
    SELECT sync_request('sem/nc/c', 'h3');
});
$node->safe_psql('postgres', q{SELECT sync_request('sem/nc/d', 'h4')});
$node->safe_psql('postgres', q{SELECT sync_request('sem/nc/b', 'h5')});

my $view = q{
    SELECT string_agg(lock_name || ':' || slots_held || '/' || parent_row || ':'
                      || parent_slots_held || '/' || parent_sizelimit, ' ' ORDER BY lock_name)
      FROM sync_locks WHERE lock_name LIKE 'sem/nc/%'};
my $queue = q{
    SELECT string_agg(lock_name || '=' || holder, ' ' ORDER BY waiting_since, lock_name)
      FROM sync_waiters WHERE lock_name LIKE 'sem/nc/%'};
my $before = $node->safe_psql('postgres', $view);
is($before,
	'sem/nc/a:1/nc/all:3/3 sem/nc/b:1/nc/all:3/3 sem/nc/c:1/nc/all:3/3 sem/nc/d:0/nc/all:3/3',
	'before the crash: three children hold the parent full');
is($node->safe_psql('postgres', $queue), 'sem/nc/d=h4 sem/nc/b=h5',
	'before the crash: d and b wait, in that order');

# Kill a backend: every backend dies, shared memory is made again.  Then
# wait until the server takes connections ('what' names the crash) and
# 'nlocks' locks of namespace 'ns' are loaded again.
sub crash_and_reload
{
	my ($what, $ns, $nlocks) = @_;
	my $victim = $node->background_psql('postgres');
	my $pid = $victim->query_safe('SELECT pg_backend_pid()');

	kill 'KILL', $pid;
	eval { $victim->{run}->kill_kill; 1; } or note "closing dead session: $@";
	ok( $node->poll_query_until('postgres', 'SELECT true', 't'),
		"the server accepts connections after the $what");
	$node->poll_query_until('postgres',
		"SELECT count(*) = $nlocks FROM sync_locks WHERE lock_name LIKE 'sem/$ns/%'")
	  or die 'keyed holds were not loaded again';
	return;
}
crash_and_reload('crash', 'nc', 4);

is($node->safe_psql('postgres', $view), $before,
	'after the crash: the same counts at both levels');
is($node->safe_psql('postgres', $queue), 'sem/nc/d=h4 sem/nc/b=h5',
	'after the crash: d and b still wait, in that order');
is($node->safe_psql('postgres', q{SELECT sync_try_acquire('sem/nc/e') IS NULL}), 't',
	'after the crash: the full parent refuses a try of a fourth child');
my ($ret, $out, $err) = $node->psql('postgres',
	q{SELECT sync_acquire('sem/nc/e', timeout => interval '200 ms')});
like($err, qr/could not obtain syncwf lock "sem\/nc\/e" within 200 ms/,
	'after the crash: an acquire of a fourth child times out');

# A release hands the parent's slot to the first waiter across children.
$node->safe_psql('postgres', q{SELECT sync_release('sem/nc/a', 'h1')});
is( $node->safe_psql('postgres',
		q{SELECT held FROM sync_state WHERE name = 'sem/nc/d' AND workflowkey = 'h4'}),
	't', 'releasing a grants d, the first waiter, at its commit');
is($node->safe_psql('postgres', $queue), 'sem/nc/b=h5', 'b still waits');
$node->safe_psql('postgres', q{SELECT sync_release('sem/nc/c', 'h3')});
ok( $node->poll_query_until('postgres',
		q{SELECT held FROM sync_state WHERE name = 'sem/nc/b' AND workflowkey = 'h5'}),
	'releasing c grants the waiter of b');
is( $node->safe_psql('postgres', $view),
	'sem/nc/b:2/nc/all:3/3 sem/nc/d:1/nc/all:3/3',
	'the counts after both hand-overs');

# A raised parent grants at once.
$node->safe_psql('postgres', q{UPDATE sync_limit SET sizelimit = 4 WHERE name = 'nc/all'});
isnt($node->safe_psql('postgres', q{SELECT sync_try_acquire('sem/nc/e')}), '',
	'a raised parent admits a fourth child');

# --- preemption across a crash -----------------------------------------
$node->safe_psql('postgres', q{
    INSERT INTO sync_limit (name, sizelimit, preempt_grace) VALUES ('pc/x', 1, '8 s'),
           ('pc/all', 2, '8 s');
    INSERT INTO sync_limit (name, sizelimit, parent, guarantee) VALUES
           ('pc/a', 2, 'pc/all', 1), ('pc/b', 2, 'pc/all', 1);
});
$node->safe_psql('postgres', q{
    SELECT sync_request('sem/pc/x', 'v', priority => 1, preemptible => true);
    SELECT sync_request('sem/pc/a', 'a1', preemptible => true);
    SELECT sync_request('sem/pc/a', 'a2', preemptible => true);
});
$node->safe_psql('postgres', q{
    SELECT sync_request('sem/pc/x', 'hi', priority => 5);
    SELECT sync_request('sem/pc/b', 'kb');
});
ok( $node->poll_query_until('postgres', q{
        SELECT count(*) = 2 FROM sync_state
         WHERE name LIKE 'sem/pc/%' AND preempt_deadline IS NOT NULL}),
	'v and a2 are preempted');
my $graces = q{
    SELECT string_agg(workflowkey || '@' || preempt_deadline, ' ' ORDER BY workflowkey)
      FROM sync_state WHERE name LIKE 'sem/pc/%' AND preempt_deadline IS NOT NULL};
my $why = q{
    SELECT string_agg(holder || ':' || waiting_for || '(' || array_to_string(blocking_holders, ',') || ')',
                      ' ' ORDER BY holder)
      FROM sync_waiters WHERE lock_name LIKE 'sem/pc/%'};
my $graces_before = $node->safe_psql('postgres', $graces);
like($graces_before, qr/^a2@\S+ .* v@/, 'a2 and v have deadlines');
is($node->safe_psql('postgres', $why), 'hi:preemption(v) kb:preemption(a2)',
	'before the crash: hi and kb wait for those preemptions');

crash_and_reload('second crash', 'pc', 3);

is($node->safe_psql('postgres', $graces), $graces_before,
	'after the crash: the same holds in their grace, with the same deadlines');
is($node->safe_psql('postgres', $why), 'hi:preemption(v) kb:preemption(a2)',
	'after the crash: hi and kb still wait for those preemptions');
is( $node->safe_psql('postgres', q{
        SELECT string_agg(lock_name || ':' || slots_held || '/' || parent_slots_held, ' ' ORDER BY lock_name)
          FROM sync_locks WHERE lock_name LIKE 'sem/pc/%' AND parent_row IS NOT NULL}),
	'sem/pc/a:2/2 sem/pc/b:0/2',
	'after the crash: the parent counts both holds of a');

ok( $node->poll_query_until('postgres', q{
        SELECT count(*) = 2 FROM sync_state
         WHERE (name, workflowkey) IN (('sem/pc/x', 'hi'), ('sem/pc/b', 'kb')) AND held}),
	'when the graces end, hi and kb hold');
is( $node->safe_psql('postgres', q{
        SELECT string_agg(name || '=' || workflowkey || ':' || held || ':' || (preempt_deadline IS NOT NULL),
                          ' ' ORDER BY name, workflowkey)
          FROM sync_state WHERE name LIKE 'sem/pc/%'}),
	'sem/pc/a=a1:true:false sem/pc/b=kb:true:false sem/pc/x=hi:true:false',
	'v and a2 are gone, a1 keeps its hold, nobody else was preempted');

$node->stop;
done_testing();
