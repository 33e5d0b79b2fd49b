# Until shared memory is rebuilt from sync_state after a start, no grant
# may exceed a limit.
#
# sem/r/s (limit 3) is full with three keyed holds and mtx/r/m is held by
# one of them; 10,000 pending keyed requests on another lock make the
# rebuild take a while.  The server is stopped (cleanly, or by kill -9 of
# the postmaster), clients are started that keep trying to connect, and
# the server is started again: as soon as connections are accepted the
# clients race the rebuild with sync_try_acquire, sync_try_acquire_xact,
# sync_acquire with a short timeout, single and multi-lock sync_request,
# while a monitor reads the views.  None may be granted: every try-acquire
# returns NULL, every acquire times out, every request is pending (a
# multi-lock request that includes a free mutex too: all or nothing), the
# monitor never sees more holders than the limit, and afterwards the three
# holds are still the only ones, with their tokens.  Four rounds: clean
# restart and kill -9, each with the worker on (it usually rebuilds first)
# and off (the racing backends rebuild).
use strict;
use warnings FATAL => 'all';

use IPC::Run;
use Time::HiRes qw(sleep time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SyncwfTest;

my $NCLIENTS = 8;
my $NOPS = 150;       # per client and round
my $LIMIT = 3;
my $BIG = 10000;      # pending entries that slow the rebuild down
my $NMON = 60;        # the monitor's checks per round

my $node = PostgreSQL::Test::Cluster->new('race');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'syncwf'
syncwf.database = 'postgres'
max_connections = 40
log_statement = none
# for the rebuild's "syncwf loaded ..." message
log_min_messages = debug1
log_connections = on
});
$node->start;

$node->safe_psql('postgres', qq{
CREATE EXTENSION syncwf;
INSERT INTO sync_limit VALUES ('r/s', $LIMIT);
SELECT sync_request('sem/r/s', 'r/h' || g) FROM generate_series(1, $LIMIT) g;
SELECT sync_request('mtx/r/m', 'r/h1');
SELECT sync_request('mtx/r/big', 'r/big/0');
SELECT count(*) FROM generate_series(1, $BIG) g, sync_request('mtx/r/big', 'r/big/' || g);
} . q{
-- One racing operation; returns '<kind>:none', '<kind>:pending' or '<kind>:granted ...'.
CREATE FUNCTION race_op(kind text, holder text DEFAULT NULL) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    t bigint;
    ts bigint[];
    st text;
BEGIN
    CASE kind
    WHEN 'try' THEN t := sync_try_acquire('sem/r/s', 100);
    WHEN 'try_mtx' THEN t := sync_try_acquire('mtx/r/m', 100);
    WHEN 'try_xact' THEN t := sync_try_acquire_xact('sem/r/s', 100);
    WHEN 'try_arr' THEN ts := sync_try_acquire(ARRAY['mtx/r/free', 'sem/r/s'], 100);
    WHEN 'acquire' THEN
        BEGIN
            t := sync_acquire('sem/r/s', 100, interval '20 ms');
        EXCEPTION WHEN lock_not_available THEN
            RETURN kind || ':none';
        END;
    WHEN 'request' THEN
        SELECT string_agg(DISTINCT status, ',') INTO st FROM sync_request('sem/r/s', holder, 100);
        RETURN kind || ':' || st;
    WHEN 'request_arr' THEN
        SELECT string_agg(DISTINCT status, ',') INTO st
          FROM sync_request(ARRAY['mtx/r/free', 'sem/r/s'], holder, 100);
        RETURN kind || ':' || st;
    END CASE;
    IF t IS NULL AND ts IS NULL THEN
        RETURN kind || ':none';
    END IF;
    PERFORM sync_release_all();
    RETURN kind || ':granted ' || coalesce(t::text, ts::text);
END
$$;
});

my $initial_holders = holders_now();
like($initial_holders, qr/^mtx\/r\/m\|r\/h1\|keyed\|\d+ sem\/r\/s\|r\/h1\|keyed\|\d+ sem\/r\/s\|r\/h2\|keyed\|\d+ sem\/r\/s\|r\/h3\|keyed\|\d+$/,
	'setup: sem/r/s is full with three keyed holds, mtx/r/m is held');

# Holders of the two contended locks (the mutex r/big aside), with tokens.
sub holders_now
{
	return $node->safe_psql('postgres', q{
		SELECT string_agg(concat_ws('|', lock_name, holder, scope, token), ' ' ORDER BY lock_name, holder)
		  FROM sync_holders WHERE lock_name IN ('sem/r/s', 'mtx/r/m', 'mtx/r/free')});
}

# A client that retries connecting until the server accepts it, then runs
# its script; its output file holds the successful attempt's output only.
sub start_client
{
	my ($label, $sql) = @_;
	my $script = "$PostgreSQL::Test::Utils::tmp_check/007_$label.sql";
	my $base = "$PostgreSQL::Test::Utils::log_path/007_$label";
	unlink $script, "$base.out", "$base.err";
	append_to_file($script, $sql);
	my $psql = join(' ', 'psql', '-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1',
		'-h', "'" . $node->host . "'", '-p', $node->port, '-d', 'postgres', '-f', "'$script'");
	# exit status 2: could not connect (or lost the connection); retry
	my $loop = "for i in \$(seq 1 2000); do $psql >'$base.out' 2>>'$base.err'; rc=\$?; "
	  . "[ \$rc -ne 2 ] && exit \$rc; sleep 0.005; done; exit 2";
	return {
		h => IPC::Run::start([ 'sh', '-c', $loop ], '<', '/dev/null'),
		out => "$base.out", err => "$base.err", label => $label };
}

my @variants = (
	[ 'restart', 'on' ],
	[ 'restart', 'off' ],
	[ 'kill -9', 'on' ],
	[ 'kill -9', 'off' ]);
my $round = 0;
my $raced = 0;
for my $v (@variants)
{
	my ($how, $worker) = @$v;
	$round++;
	my $label = "round $round ($how, worker $worker)";

	# the clients' scripts: request holders are unique per round
	my (@clients, %nrequests);
	my @kinds = qw(try try_mtx try_xact try_arr acquire request request_arr);
	my $nreq_rows = 0;
	for my $c (1 .. $NCLIENTS)
	{
		my $sql = '';
		for my $n (1 .. $NOPS)
		{
			my $kind = $kinds[ ($n + $c) % @kinds ];
			if ($kind =~ /^request/)
			{
				$sql .= "SELECT race_op('$kind', 'r/c$c/$round/$n');\n";
				$nreq_rows += $kind eq 'request' ? 1 : 2;
			}
			else
			{
				$sql .= "SELECT race_op('$kind');\n";
			}
		}
		push @clients, [ "r${round}_c$c", $sql ];
	}
	my $mon_sql = q{SELECT 'mon:' || count(*) FILTER (WHERE lock_name = 'sem/r/s')
	                || ':' || count(*) FILTER (WHERE lock_name = 'mtx/r/m')
	                || ':' || count(*) FILTER (WHERE lock_name = 'mtx/r/free')
	                || ':' || (SELECT count(*) FROM sync_state WHERE name = 'sem/r/s' AND held)
	           FROM sync_holders;
} x $NMON;

	# stop the server
	$node->append_conf('postgresql.conf', "syncwf.enable_worker = $worker");
	if ($how eq 'restart')
	{
		$node->stop('fast');
	}
	else
	{
		my $pm_pid = $node->{_pid};
		$node->kill9;
		ok(wait_children_gone($node, $pm_pid, 0.02), "$label: the killed server's processes are gone");
	}
	my $log_offset = -s $node->logfile;

	# clients first, then the server
	my @running = map { start_client(@$_) } @clients;
	push @running, start_client("r${round}_monitor", $mon_sql);
	sleep(0.05);
	$node->start;

	for my $cl (@running)
	{
		eval { $cl->{h}->finish; 1 } or diag("$cl->{label}: $@");
		is($cl->{h}->result(0), 0, "$label: $cl->{label} ran its script") or
		  diag(slurp_file($cl->{err}));
	}

	my $monitor = pop @running;
	my %seen;
	for my $cl (@running)
	{
		$seen{$_}++ for split /\n/, slurp_file($cl->{out});
	}
	my @bad = grep { !/^\w+:(none|pending)$/ } sort keys %seen;
	is("@bad", '', "$label: nothing granted while sem/r/s was full (no other result than none or pending)");
	my $total = 0;
	$total += $_ for values %seen;
	is($total, $NCLIENTS * $NOPS, "$label: every operation returned");
	note("$label: " . join(', ', map { "$_ x $seen{$_}" } sort keys %seen));

	my @mon = split /\n/, slurp_file($monitor->{out});
	is(scalar(@mon), $NMON, "$label: the monitor made all its checks");
	my @over = grep {
		my (undef, $s, $m, $f, $t) = split /:/;
		$s > $LIMIT || $m > 1 || $f > 0 || $t > $LIMIT
	} @mon;
	is("@over", '', "$label: the monitor never saw more holders than the limits");

	is(holders_now(), $initial_holders,
		"$label: the three keyed holds (and the mutex's) are the only holders, with their tokens");
	is( $node->safe_psql('postgres', qq{
			SELECT count(*) || ':' || count(*) FILTER (WHERE held)
			  FROM sync_state WHERE workflowkey LIKE 'r/c%/$round/%'}),
		"$nreq_rows:0", "$label: every request of the round is pending in sync_state");
	is( $node->safe_psql('postgres', qq{
			SELECT count(*) FROM sync_waiters WHERE holder LIKE 'r/c%/$round/%'}),
		$nreq_rows, "$label: and queued in shared memory");
	is( $node->safe_psql('postgres', "SELECT count(*) FROM sync_waiters WHERE lock_name = 'mtx/r/big'"),
		$BIG, "$label: the other queue was rebuilt whole");
	my $log = slurp_file($node->logfile, $log_offset);
	my @loads = $log =~ /syncwf loaded \d+ keyed entries/g;
	is(scalar(@loads), 1, "$label: shared memory was rebuilt once");
	# evidence of the race: sessions that connected before the rebuild was
	# done (the rebuilding session itself aside)
	if ($log =~ /^(.*?)\[(\d+)\][^\n]*syncwf loaded/s)
	{
		my ($before, $loader) = ($1, $2);
		my $n = () = $before =~ /\[(?!$loader\])\d+\] \S+ LOG:  connection authorized/g;
		$raced += $n;
		note("$label: $n other sessions connected before the rebuild was done");
	}
	unlike($log, qr/TRAP:|PANIC|server process .* was terminated/, "$label: no crash or assertion failure");

	# the requests of this round go
	$node->safe_psql('postgres', qq{
		SELECT sync_release_holder(workflowkey)
		  FROM (SELECT DISTINCT workflowkey FROM sync_state WHERE workflowkey LIKE 'r/c%/$round/%') s});
}

ok($raced > 0, "$raced sessions in all connected while a rebuild was under way");

$node->stop;
done_testing();
