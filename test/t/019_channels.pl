# Events of keyed holds on the channel of each controller, and fencing
# tokens as JSON numbers.
#
#  - a controller listening on its own channel (sync_channel()) gets the
#    "granted" event of its entry, with the token sync_state records, and
#    the "lost" event when the hold is taken away, each also sent on
#    "syncwf"; a controller listening on its channel gets nothing about
#    another controller's entries;
#  - tokens fit in 53 bits, so that JavaScript reads them exactly: started
#    from a reservation file 3 below 2^53, the server starts without a
#    warning, hands out 2^53 - 2, 2^53 - 1, then 2^53 and logs a WARNING
#    saying so (once); a keyed grant past 2^53 is announced with its exact
#    token, and a server that starts past 2^53 says so in its log.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/..";
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SyncwfTest;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('channels');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'syncwf'
syncwf.database = 'postgres'
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION syncwf');

sub sq { return $node->safe_psql('postgres', $_[0]); }

my $ch1 = sq(q{SELECT sync_channel('ctl-1')});
is($ch1, 'syncwf/ctl-1', 'the channel of controller ctl-1');
my $l1 = listener($node, 'postgres', $ch1);
my $l2 = listener($node, 'postgres', sq(q{SELECT sync_channel('ctl-2')}));
my $all = listener($node, 'postgres');

# ns/wf0 (ctl-2) holds; ns/wf1 (ctl-1) waits; the release hands it over.
sq(q{SELECT sync_request('mtx/ch/a', 'ns/wf0', controller => 'ctl-2')});
is(sq(q{SELECT status FROM sync_request('mtx/ch/a', 'ns/wf1', controller => 'ctl-1')}),
	'pending', 'ns/wf1 (ctl-1) is pending');
sq(q{SELECT sync_release('mtx/ch/a', 'ns/wf0')});
my $ev = next_event($l1, 10, 20_000, undef, event => 'granted', holder => 'ns/wf1');
ok(defined $ev, "ctl-1's channel carries the grant of ns/wf1") or diag(describe_events($l1));
my $t1 = sq(q{SELECT token FROM sync_state WHERE name = 'mtx/ch/a'});
is($ev->{token} // '', $t1, '... with the token sync_state records');
is($ev->{controller} // '', 'ctl-1', '... and the controller');
ok(defined next_event($all, 10, 20_000, undef, event => 'granted', holder => 'ns/wf1'),
	'"syncwf" carries it too');

sq(q{SELECT sync_force_release('mtx/ch/a', 'ns/wf1')});
$ev = next_event($l1, 10, 20_000, undef, event => 'lost', holder => 'ns/wf1');
ok(defined $ev, "ctl-1's channel carries the loss") or diag(describe_events($l1));
is($ev->{token} // '', $t1, '... with the token of the grant that ended');
is($ev->{reason} // '', 'forced release', '... and its reason');
ok(defined next_event($all, 10, 20_000, undef, event => 'lost', holder => 'ns/wf1'),
	'"syncwf" carries it too');
is(scalar(events_like($l2)), 0, "ctl-2's channel carried nothing about ctl-1's entry")
  or diag(describe_events($l2));
$_->{psql}->quit for ($l1, $l2, $all);

# --- tokens past 2^53 ----------------------------------------------------------------
my $limit = '9007199254740992';    # 2^53
$node->stop;
my $file = $node->data_dir . '/syncwf.token';
open(my $fh, '>', $file) or die "cannot write $file: $!";
print $fh "9007199254740989\n";
close $fh;
my $offset = -s $node->logfile;
$node->start;
unlike(slurp_file($node->logfile, $offset), qr/fencing tokens have reached 2\^53/,
	'started 3 below 2^53: no warning');
my @tokens;
for (1 .. 3)
{
	push @tokens, sq(q{SELECT sync_try_acquire('mtx/ch/t')});
	sq(q{SELECT sync_release('mtx/ch/t')});
}
is("@tokens", '9007199254740990 9007199254740991 9007199254740992',
	'the tokens 2^53 - 2, 2^53 - 1 and 2^53');
my $log = slurp_file($node->logfile, $offset);
like($log, qr/WARNING:  syncwf fencing tokens have reached 2\^53\n.*DETAIL:  Token $limit and the tokens after it do not fit in a double/,
	'handing out 2^53 logs a WARNING naming the token');
my $n = () = $log =~ /fencing tokens have reached/g;
is($n, 1, '... once');

$l1 = listener($node, 'postgres', $ch1);
sq(q{SELECT sync_request('mtx/ch/b', 'ns/wf2')});
sq(q{SELECT sync_request('mtx/ch/b', 'ns/wf3', controller => 'ctl-1')});
sq(q{SELECT sync_release('mtx/ch/b', 'ns/wf2')});
$ev = next_event($l1, 10, 20_000, undef, event => 'granted', holder => 'ns/wf3');
my $t3 = sq(q{SELECT token FROM sync_state WHERE name = 'mtx/ch/b'});
ok($t3 > $limit, "a keyed grant past 2^53: $t3");
is($ev->{token} // '', $t3, '... is announced with its exact token');
$l1->{psql}->quit;
sq(q{SELECT sync_release('mtx/ch/b', 'ns/wf3')});

$offset = -s $node->logfile;
$node->restart;
like(slurp_file($node->logfile, $offset), qr/WARNING:  syncwf fencing tokens have reached 2\^53/,
	'a server that starts past 2^53 logs the WARNING');
$node->stop;
done_testing();
