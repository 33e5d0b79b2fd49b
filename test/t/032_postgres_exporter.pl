# syncwf's metrics through a real postgres_exporter (Debian's package
# prometheus-postgres-exporter, which the test command installs: 0.11.1 on
# Debian 12, trixie's and sid's in the chroots), started here on 127.0.0.1
# with docs/postgres_exporter.yaml as its --extend.query-path, connected to
# one node as a role without any privilege of its own.
#
# After a known workload (three immediate grants of mtx/app/a; a grant of
# mtx/app/b after a wait of at least 200 ms, held 200 ms; a wait for
# mtx/app/c that times out after 50 ms; a lock held with a session waiting,
# and a keyed lock with requests of an active and of an inactive controller,
# both live while the exporter is scraped) /metrics must show:
#  - every metric the file defines, with the type its usage says, and no
#    other syncwf_ metric (a column the file does not list would be one);
#  - the counts of the workload exactly, the times within what the test
#    measured itself, and every row of sync_lock_stats as the view shows it
#    (also after sync_stats_reset() of one lock);
#  - the live locks of sync_locks, the age of each lock's oldest waiter
#    (entries of inactive controllers left out), and per controller its
#    pending requests, those passed over, and the age of its heartbeat.
use strict;
use warnings FATAL => 'all';

use Cwd qw(abs_path);
use File::Basename qw(dirname);
use File::Spec;
use HTTP::Tiny;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

# The test command installs the exporter (scripts/suite.sh,
# scripts/chroot.sh): a missing one is a failure, not a skip.
my ($exporter) =
  grep { -x } ((map { "$_/prometheus-postgres-exporter" } split(/:/, $ENV{PATH} // '')),
	'/usr/bin/prometheus-postgres-exporter');
if (!$exporter)
{
	fail('prometheus-postgres-exporter is installed (the test command installs '
		  . "Debian's package prometheus-postgres-exporter)");
	done_testing();
	exit 1;
}
my ($vout, $verr) = run_command([ $exporter, '--version' ]);
my ($exporter_version) = ($vout . $verr) =~ /version (\S+)/;
note "using $exporter: postgres_exporter " . ($exporter_version // 'of unknown version');

# The repository root is test/t/../.., whatever the current directory.
my $root = abs_path(File::Spec->catdir(dirname(File::Spec->rel2abs(__FILE__)), '..', '..'));
my $queries = "$root/docs/postgres_exporter.yaml";
ok(-f $queries, 'docs/postgres_exporter.yaml exists') or BAIL_OUT("no $queries");

# --- what the file defines -------------------------------------------------------
# Each top-level key is a namespace; each column under metrics: is a LABEL
# or a metric <namespace>_<column> of type COUNTER or GAUGE.
my (%defined, $ns, $col);
for my $line (split /\n/, slurp_file($queries))
{
	if ($line =~ /^([a-z][a-z0-9_]*):\s*$/) { $ns = $1; undef $col; next; }
	if ($line =~ /^\s+- ([a-z][a-z0-9_]*):\s*$/) { $col = $1; next; }
	if ($line =~ /^\s+usage:\s*"?([A-Z]+)"?\s*$/)
	{
		die "usage outside a column: $line" unless defined $ns && defined $col;
		$defined{"${ns}_$col"} = lc $1 unless $1 eq 'LABEL';
	}
}
my %want = (
	syncwf_lock_stats_grants_immediate_total => 'counter',
	syncwf_lock_stats_grants_waited_total => 'counter',
	syncwf_lock_stats_timeouts_total => 'counter',
	syncwf_lock_stats_cancels_total => 'counter',
	syncwf_lock_stats_deadlocks_total => 'counter',
	syncwf_lock_stats_preemptions_total => 'counter',
	syncwf_lock_stats_wait_count_total => 'counter',
	syncwf_lock_stats_wait_seconds_total => 'counter',
	syncwf_lock_stats_hold_count_total => 'counter',
	syncwf_lock_stats_hold_seconds_total => 'counter',
	syncwf_lock_stats_max_queue => 'gauge',
	syncwf_lock_stats_reset_timestamp_seconds => 'gauge',
	syncwf_lock_stats_wait_p50_seconds => 'gauge',
	syncwf_lock_stats_wait_p99_seconds => 'gauge',
	syncwf_lock_stats_wait_max_seconds => 'gauge',
	syncwf_locks_holders => 'gauge',
	syncwf_locks_waiters => 'gauge',
	syncwf_locks_slots_held => 'gauge',
	syncwf_waiters_oldest_wait_seconds => 'gauge',
	syncwf_controllers_pending => 'gauge',
	syncwf_controllers_inactive_pending => 'gauge',
	syncwf_controllers_heartbeat_age_seconds => 'gauge',
	syncwf_memory_allocated_bytes => 'gauge',
	syncwf_memory_used_bytes => 'gauge',
	syncwf_memory_max_bytes => 'gauge',
	syncwf_memory_pct_of_max => 'gauge',
	syncwf_memory_locks => 'gauge',
	syncwf_memory_cached_locks => 'gauge',
	syncwf_memory_entries => 'gauge',
	syncwf_memory_holders => 'gauge',
	syncwf_memory_grows_refused_total => 'counter');
is_deeply(\%defined, \%want,
	'docs/postgres_exporter.yaml defines the documented metrics, each with its type');

# --- the node and its workload -----------------------------------------------------
my $node = PostgreSQL::Test::Cluster->new('syncwf');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'syncwf'
syncwf.database = 'postgres'
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION syncwf;
CREATE ROLE metrics LOGIN;
});
my $t_start = $node->safe_psql('postgres', 'SELECT extract(epoch FROM now())');

sub sq { return $node->safe_psql('postgres', $_[0]); }
sub poll { return $node->poll_query_until('postgres', $_[0]); }

sub session
{
	my $s = $node->background_psql('postgres', on_error_stop => 0);
	$s->set_query_timer_restart;
	$s->query_safe('\set VERBOSITY verbose');
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	return ($s, $pid);
}

# Start a blocking statement in session $s; wait until it is on its way.
sub start_blocking
{
	my ($s, $sql) = @_;
	$s->query_until(qr/started/, "\\echo started\n$sql;\n");
	return;
}

my ($h, $h_pid) = session();
my ($w, $w_pid) = session();

# mtx/app/a: three grants at once, three holds released.
sq(q{
SELECT sync_acquire('mtx/app/a'); SELECT sync_release('mtx/app/a');
SELECT sync_acquire('mtx/app/a'); SELECT sync_release('mtx/app/a');
SELECT sync_acquire('mtx/app/a'); SELECT sync_release('mtx/app/a');
});

# mtx/app/b: h holds; w waits (at least 200 ms), is granted when h
# releases, holds 200 ms and releases.
$h->query_safe(q{SELECT sync_acquire('mtx/app/b')});
start_blocking($w, q{SELECT 'granted:' || sync_acquire('mtx/app/b')});
ok(poll(qq{SELECT count(*) = 1 FROM sync_waiters WHERE lock_name = 'mtx/app/b' AND pid = $w_pid}),
	'w waits for mtx/app/b');
usleep(200_000);
is($h->query_safe(q{SELECT sync_release('mtx/app/b')}), 't', 'h releases mtx/app/b');
my $out = $w->query_safe('SELECT pg_sleep(0.2)');
like($out, qr/^granted:\d+$/m, 'w was granted mtx/app/b') or diag($out);
is($w->query_safe(q{SELECT sync_release('mtx/app/b')}), 't', '... held it 200 ms and released it');

# mtx/app/c: h holds; w's wait times out after 50 ms (55P03); h releases.
$h->query_safe(q{SELECT sync_acquire('mtx/app/c')});
$out = $w->query(q{SELECT sync_acquire('mtx/app/c', timeout => '50 ms')});
like($w->{stderr}, qr/ERROR:  55P03:/, "w's wait for mtx/app/c times out with 55P03");
$w->{stderr} = '';
is($h->query_safe(q{SELECT sync_release('mtx/app/c')}), 't', 'h releases mtx/app/c');

# Live while the exporter scrapes: mtx/app/d held by h, w waiting for it.
$h->query_safe(q{SELECT sync_acquire('mtx/app/d')});
start_blocking($w, q{SELECT 'granted:' || sync_acquire('mtx/app/d')});
ok(poll(qq{SELECT count(*) = 1 FROM sync_waiters WHERE lock_name = 'mtx/app/d' AND pid = $w_pid}),
	'w waits for mtx/app/d, which h holds');

# ... and mtx/keyed/q held for wf-1 (controller ctl-live), with wf-2
# pending for ctl-gone, which is then made inactive (its sync_controller
# row deleted), and wf-3 pending for ctl-live.
is( sq(q{
SELECT sync_heartbeat('ctl-live') IS NOT NULL;
SELECT status FROM sync_request('mtx/keyed/q', 'wf-1', controller => 'ctl-live');
SELECT status FROM sync_request('mtx/keyed/q', 'wf-2', controller => 'ctl-gone');
SELECT status FROM sync_request('mtx/keyed/q', 'wf-3', controller => 'ctl-live');
DELETE FROM sync_controller WHERE controller = 'ctl-gone';
}),
	"t\nheld\npending\npending",
	'mtx/keyed/q: wf-1 held, wf-2 (ctl-gone) and wf-3 (ctl-live) pending');
is( sq(q{SELECT string_agg(holder || ':' || controller || ':' || active, ' ' ORDER BY holder)
           FROM sync_waiters WHERE lock_name = 'mtx/keyed/q'}),
	'wf-2:ctl-gone:false wf-3:ctl-live:true',
	'... wf-2 is passed over: ctl-gone is inactive');

# --- the exporter -------------------------------------------------------------------------
# Only what the file defines, as far as the version allows: no default
# metrics, no pg_settings, and every collector that is on by default (their
# names differ between versions: read from --help) turned off.
my ($help_out, $help_err) = run_command([ $exporter, '--help' ]);
my $help = ($help_out . $help_err) =~ s/\s+/ /gr;
my @collectors_off;
while ($help =~ /--(?:\[no-\])?collector\.([\w.]+) Enable the [\w.]+ collector \(default: enabled\)/g)
{
	push @collectors_off, "--no-collector.$1";
}
note 'turning off: ' . join(' ', @collectors_off);
ok(scalar(grep { $_ eq '--no-collector.database' } @collectors_off),
	"the exporter's --help lists its collectors (database is on by default)");

my $eport = PostgreSQL::Test::Cluster::get_free_port();
my $elog = "$PostgreSQL::Test::Utils::log_path/032_postgres_exporter_exporter.log";
my $sockdir = $node->host =~ s/([^A-Za-z0-9\-._~\/])/sprintf('%%%02X', ord($1))/ger;
$ENV{DATA_SOURCE_NAME} =
  'postgresql://metrics@:' . $node->port . "/postgres?host=$sockdir&sslmode=disable";
my $exp = IPC::Run::start(
	[
		$exporter, "--web.listen-address=127.0.0.1:$eport",
		"--extend.query-path=$queries", '--disable-default-metrics',
		'--disable-settings-metrics', @collectors_off
	],
	'<', \undef, '>>', $elog, '2>>', $elog);
END { $exp->kill_kill if $exp && $exp->pumpable; }

my $http = HTTP::Tiny->new(timeout => 30, proxy => undef, http_proxy => undef);

# GET /metrics, retried until the exporter answers (bounded); a copy of
# each answer goes to the log directory as 032_postgres_exporter_metrics_N.txt.
my $fetches = 0;
sub fetch_metrics
{
	for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		my $r = $http->get("http://127.0.0.1:$eport/metrics");
		if ($r->{success})
		{
			$fetches++;
			PostgreSQL::Test::Utils::append_to_file(
				"$PostgreSQL::Test::Utils::log_path/032_postgres_exporter_metrics_$fetches.txt",
				$r->{content});
			return $r->{content};
		}
		die 'the exporter exited: ' . slurp_file($elog) unless $exp->pumpable;
		usleep(100_000);
	}
	return undef;
}

# The text format: { name => [ { labels => {...}, value => N }, ... ] },
# and the TYPE and HELP of each name.
sub parse_metrics
{
	my ($text) = @_;
	my (%samples, %type, %help);
	for my $line (split /\n/, $text)
	{
		if ($line =~ /^# TYPE (\S+) (\S+)$/) { $type{$1} = $2; next; }
		if ($line =~ /^# HELP (\S+) (.*)$/) { $help{$1} = $2; next; }
		next if $line =~ /^#/ || $line !~ /\S/;
		$line =~ /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: -?\d+)?$/
		  or die "unexpected line in /metrics: $line";
		my ($name, $lab, $value) = ($1, $2 // '', $3);
		my %labels;
		while ($lab =~ /\G([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)",?/gc)
		{
			my ($k, $v) = ($1, $2);
			$labels{$k} = $v =~ s/\\(.)/$1 eq 'n' ? "\n" : $1/ger;
		}
		die "unparsed labels in /metrics: $line" if (pos($lab) // 0) != length($lab);
		push @{ $samples{$name} }, { labels => \%labels, value => $value };
	}
	return { samples => \%samples, type => \%type, help => \%help };
}

# The value of metric $name in the sample whose labels include %sel; undef
# when there is none, a failure when there are several.
sub value
{
	my ($m, $name, %sel) = @_;
	my @hits = grep {
		my $l = $_->{labels};
		!grep { !defined $l->{$_} || $l->{$_} ne $sel{$_} } keys %sel
	} @{ $m->{samples}{$name} // [] };
	fail("one sample of $name for " . join(',', map { "$_=$sel{$_}" } sort keys %sel))
	  if @hits > 1;
	return @hits ? $hits[0]{value} : undef;
}

# The label values of $label over the samples of $name, sorted.
sub label_values
{
	my ($m, $name, $label) = @_;
	return [ sort map { $_->{labels}{$label} // '' } @{ $m->{samples}{$name} // [] } ];
}

sub near
{
	my ($got, $want, $name) = @_;
	return ok(defined $got && abs($got - $want) <= 1e-6 * (1 + abs($want)), $name)
	  || diag('got ' . ($got // 'nothing') . ", want $want");
}

sub between
{
	my ($got, $lo, $hi, $name) = @_;
	return ok(defined $got && $got >= $lo - 1e-6 && $got <= $hi + 1e-6, $name)
	  || diag('got ' . ($got // 'nothing') . ", want $lo .. $hi");
}

# Every row of sync_lock_stats as the exporter shows it: the same rows,
# each column in seconds or as a count.
sub check_mirror
{
	my ($m, $when) = @_;
	my @rows = map { [ split /\|/, $_, -1 ] } split /\n/, sq(q{
SELECT lock_name, grants_immediate, grants_waited, timeouts, cancels, deadlocks,
       wait_count, coalesce(extract(epoch FROM wait_total), 0), hold_count,
       coalesce(extract(epoch FROM hold_total), 0), max_queue,
       extract(epoch FROM stats_reset), extract(epoch FROM wait_p50),
       extract(epoch FROM wait_p99), extract(epoch FROM wait_max)
  FROM sync_lock_stats ORDER BY lock_name});
	my @cols = qw(grants_immediate_total grants_waited_total timeouts_total cancels_total
	  deadlocks_total wait_count_total wait_seconds_total hold_count_total hold_seconds_total max_queue
	  reset_timestamp_seconds);
	is_deeply(
		label_values($m, 'syncwf_lock_stats_grants_immediate_total', 'lock_name'),
		[ sort map { $_->[0] } @rows ],
		"$when: one series per row of sync_lock_stats");
	is_deeply(
		label_values($m, 'syncwf_lock_stats_wait_max_seconds', 'lock_name'),
		[ sort map { $_->[0] } grep { $_->[6] > 0 } @rows ],
		"$when: wait percentiles for the rows that counted a wait, only");
	my $bad = 0;
	for my $r (@rows)
	{
		my ($lock, @v) = @$r;
		for my $i (0 .. $#cols)
		{
			my $got = value($m, "syncwf_lock_stats_$cols[$i]", lock_name => $lock);
			$bad++, diag("$lock $cols[$i]: got " . ($got // 'nothing') . ", view $v[$i]")
			  unless defined $got && abs($got - $v[$i]) <= 1e-6 * (1 + abs($v[$i]));
		}
		next unless $v[4] > 0;
		my @q = qw(p50_seconds p99_seconds max_seconds);
		for my $i (0 .. 2)
		{
			my $got = value($m, "syncwf_lock_stats_wait_$q[$i]", lock_name => $lock);
			$bad++, diag("$lock $q[$i]: got " . ($got // 'nothing') . ", view $v[10 + $i]")
			  unless defined $got && abs($got - $v[ 10 + $i ]) <= 1e-6 * (1 + abs($v[ 10 + $i ]));
		}
	}
	is($bad, 0, "$when: every value equals the view's");
	return;
}

# Ages of the oldest counted waiter per lock, and of each heartbeat, as
# the server sees them now.
sub ages
{
	my %age = map { split /\|/ } split /\n/, sq(q{
SELECT 'lock:' || lock_name, max(extract(epoch FROM now() - waiting_since))
  FROM sync_waiters WHERE active GROUP BY lock_name
UNION ALL
SELECT 'controller:' || controller, extract(epoch FROM now() - time) FROM sync_controller});
	return \%age;
}

my $before = ages();
my $text = fetch_metrics();
my $after = ages();
if (!ok(defined $text, "the exporter answers on 127.0.0.1:$eport/metrics"))
{
	diag(slurp_file($elog));
	done_testing();
	exit 1;
}
my $m = parse_metrics($text);

# The exporter ran every query of the file without an error.
is(value($m, 'pg_up'), 1, 'pg_up 1: the exporter reached the node');
is(value($m, 'pg_exporter_user_queries_load_error', filename => $queries), 0,
	'pg_exporter_user_queries_load_error 0: the file was loaded');
is(value($m, 'pg_exporter_last_scrape_error'), 0,
	'pg_exporter_last_scrape_error 0: every query ran');
my @ours = sort grep { /^syncwf_/ } keys %{ $m->{type} };
is_deeply(\@ours, [ sort keys %want ], 'the syncwf_ metrics are exactly those of the file');
is_deeply({ map { $_ => $m->{type}{$_} } @ours }, \%want, '... each of its type');
is_deeply([ grep { /^syncwf_/ && $m->{help}{$_} =~ /^Unknown metric/ } keys %{ $m->{help} } ],
	[], '... each with its description (no column the file does not list)');
my @wrong_db = grep { ($_->{labels}{datname} // '') ne 'postgres' }
  map { @{ $m->{samples}{$_} } } @ours;
is(scalar(@wrong_db), 0, 'every syncwf_ sample has datname="postgres"');

# The workload's counts, exactly.
my %stats = (
	'mtx/app/a' => [ 3, 0, 0, 0, 0, 0, 3, 0 ],
	'mtx/app/b' => [ 1, 1, 0, 0, 0, 1, 2, 1 ],
	'mtx/app/c' => [ 1, 0, 1, 0, 0, 1, 1, 1 ]);
my @count_cols = qw(grants_immediate_total grants_waited_total timeouts_total cancels_total
  deadlocks_total wait_count_total hold_count_total max_queue);
for my $lock (sort keys %stats)
{
	is_deeply(
		[ map { value($m, "syncwf_lock_stats_$_", lock_name => $lock) } @count_cols ],
		$stats{$lock},
		"$lock: " . join(', ', map { "$count_cols[$_] $stats{$lock}[$_]" } 0 .. $#count_cols));
}
is_deeply(
	label_values($m, 'syncwf_lock_stats_grants_immediate_total', 'lock_name'),
	[ 'mtx/app/a', 'mtx/app/b', 'mtx/app/c', 'mtx/app/d', 'mtx/keyed/q' ],
	'sync_lock_stats rows: the five locks of the workload');
is(value($m, 'syncwf_lock_stats_wait_seconds_total', lock_name => 'mtx/app/a'), 0,
	'mtx/app/a: wait_seconds_total 0');
is(value($m, 'syncwf_lock_stats_wait_max_seconds', lock_name => 'mtx/app/a'), undef,
	'mtx/app/a: no wait percentiles, as it never waited');

# The times, within what the test measured.
my $max_b = value($m, 'syncwf_lock_stats_wait_max_seconds', lock_name => 'mtx/app/b');
between($max_b, 0.2, $PostgreSQL::Test::Utils::timeout_default,
	'mtx/app/b: its one wait lasted at least the 200 ms the test waited');
near(value($m, 'syncwf_lock_stats_wait_seconds_total', lock_name => 'mtx/app/b'), $max_b // -1,
	'mtx/app/b: wait_seconds_total is that wait');
my $p50_b = value($m, 'syncwf_lock_stats_wait_p50_seconds', lock_name => 'mtx/app/b');
near(value($m, 'syncwf_lock_stats_wait_p99_seconds', lock_name => 'mtx/app/b'), $p50_b // -1,
	'mtx/app/b: p99 = p50 over one wait');
between($p50_b, 0.875 * ($max_b // 0), $max_b // -1,
	'mtx/app/b: p50 within 12.5% below the wait (the middle of its bucket)');
between(value($m, 'syncwf_lock_stats_hold_seconds_total', lock_name => 'mtx/app/b'),
	0.4, $PostgreSQL::Test::Utils::timeout_default,
	"mtx/app/b: hold_seconds_total at least h's 200 ms and w's 200 ms");
my $max_c = value($m, 'syncwf_lock_stats_wait_max_seconds', lock_name => 'mtx/app/c');
between($max_c, 0.045, $PostgreSQL::Test::Utils::timeout_default,
	'mtx/app/c: its wait lasted its timeout, 50 ms');
near(value($m, 'syncwf_lock_stats_wait_seconds_total', lock_name => 'mtx/app/c'), $max_c // -1,
	'mtx/app/c: wait_seconds_total is that wait');
my $now = sq('SELECT extract(epoch FROM now())');
between(value($m, 'syncwf_lock_stats_reset_timestamp_seconds', lock_name => 'mtx/app/a'),
	$t_start, $now, 'mtx/app/a: reset_timestamp_seconds is when the test ran');

check_mirror($m, 'first scrape');

# Live locks (sync_locks).
is_deeply(label_values($m, 'syncwf_locks_holders', 'lock_name'), [ 'mtx/app/d', 'mtx/keyed/q' ],
	'sync_locks: the two live locks');
is_deeply(
	[ map { value($m, "syncwf_locks_$_", lock_name => 'mtx/app/d') } qw(holders waiters slots_held) ],
	[ 1, 1, 1 ], 'mtx/app/d: holders 1, waiters 1, slots_held 1');
is_deeply(
	[ map { value($m, "syncwf_locks_$_", lock_name => 'mtx/keyed/q') } qw(holders waiters slots_held) ],
	[ 1, 2, 1 ], 'mtx/keyed/q: holders 1, waiters 2 (one passed over), slots_held 1');

# syncwf's memory (sync_memory): the entries of those two locks, the cap.
is(value($m, 'syncwf_memory_entries'), 5,
	'sync_memory: 5 entries (a hold and a waiter, a hold and two waiters)');
cmp_ok(value($m, 'syncwf_memory_max_bytes'), '==', 2048 * 1024 * 1024,
	'sync_memory: max_bytes is syncwf.max_memory (2 GB)');
ok( value($m, 'syncwf_memory_used_bytes') <= value($m, 'syncwf_memory_allocated_bytes')
	  && value($m, 'syncwf_memory_allocated_bytes') > 0,
	'sync_memory: some memory taken, no more in use than taken');
is(value($m, 'syncwf_memory_grows_refused_total'), 0, 'sync_memory: no growth refused');

# The oldest waiter of each lock, between the ages before and after the scrape.
is_deeply(label_values($m, 'syncwf_waiters_oldest_wait_seconds', 'lock_name'),
	[ 'mtx/app/d', 'mtx/keyed/q' ], 'oldest_wait_seconds for both locks with a queue');
for my $lock ('mtx/app/d', 'mtx/keyed/q')
{
	between(value($m, 'syncwf_waiters_oldest_wait_seconds', lock_name => $lock),
		$before->{"lock:$lock"}, $after->{"lock:$lock"},
		"$lock: oldest_wait_seconds is the age of its oldest counted waiter");
}

# Controllers.
is_deeply(label_values($m, 'syncwf_controllers_pending', 'controller'),
	[ 'ctl-gone', 'ctl-live' ], 'a series for each controller');
is_deeply(
	[ map { value($m, "syncwf_controllers_$_", controller => 'ctl-live') }
		  qw(pending inactive_pending) ],
	[ 1, 0 ], 'ctl-live: 1 pending request, none passed over');
is_deeply(
	[ map { value($m, "syncwf_controllers_$_", controller => 'ctl-gone') }
		  qw(pending inactive_pending) ],
	[ 1, 1 ], 'ctl-gone (inactive): 1 pending request, passed over');
is_deeply(label_values($m, 'syncwf_controllers_heartbeat_age_seconds', 'controller'),
	['ctl-live'], 'a heartbeat age for ctl-live only (ctl-gone has no sync_controller row)');
between(value($m, 'syncwf_controllers_heartbeat_age_seconds', controller => 'ctl-live'),
	$before->{'controller:ctl-live'}, $after->{'controller:ctl-live'},
	"ctl-live: heartbeat_age_seconds is the age of its last heartbeat");

# --- after sync_stats_reset() of one lock -------------------------------------------------
my $reset_at = sq(q{SELECT extract(epoch FROM sync_stats_reset('mtx/app/a'))});
ok(defined $reset_at && length $reset_at, "sync_stats_reset('mtx/app/a') ran");
$m = parse_metrics(fetch_metrics() // '');
check_mirror($m, "after sync_stats_reset('mtx/app/a')");
is_deeply(
	[ map { value($m, "syncwf_lock_stats_$_", lock_name => 'mtx/app/b') } @count_cols ],
	$stats{'mtx/app/b'}, '... mtx/app/b still has its counts');

# --- the end -------------------------------------------------------------------------------
is($h->query_safe(q{SELECT sync_release('mtx/app/d')}), 't', 'h releases mtx/app/d');
$out = $w->query_safe(q{SELECT sync_release('mtx/app/d')});
like($out, qr/^granted:\d+$/m, '... w was granted it, and releases it') or diag($out);
$h->quit;
$w->quit;

$exp->kill_kill;
ok(!$exp->pumpable, 'the exporter is stopped');
my $log = slurp_file($elog);
unlike($log, qr/Error running query|Failed to reload user queries|level=(?:error|ERROR)/,
	"the exporter's log shows no error") or diag($log);

$node->stop;
done_testing();
