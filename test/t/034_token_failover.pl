# Fencing tokens across promotion: the token reservation travels through
# WAL (syncwf's resource manager), so a promoted synchronous standby hands
# out tokens above every token the old primary handed out -- session and
# transaction holds included, whose tokens are in no table, and whatever
# the clocks say.
#
#  (a) the primary's tokens run far ahead of every clock (its reservation
#      file is planted 10^12 us ahead before a restart), so neither the
#      standby's clock nor sync_state can order them: a session hold, a
#      transaction hold and a keyed hold are granted on the primary; the
#      standby replays the reservation record (its file says so too); the
#      standby is restarted after a checkpoint and a restartpoint (so its
#      redo starts after the record, and only its file knows it), then
#      promoted: its first session, transaction and keyed tokens are above
#      every token of the old primary;
#  (b) a planned switchover to a second synchronous standby (the primary
#      shut down cleanly, as Patroni demotes, with a session hold still
#      taken): the promoted node's tokens are above every earlier token;
#  (c) a token is handed out only once the synchronous standby has its
#      reservation: with the synchronous standby stopped, the first grant
#      after a restart (which needs a new reservation) waits; canceled by
#      statement_timeout it fails with 57014 and leaves nothing held; once
#      the standby is back, the same acquire succeeds with a larger token;
#  (d) a standby without syncwf preloaded stops replay at syncwf's first
#      record, naming the resource manager;
#  (e) a keyed hand-off whose commit became visible without the standby's
#      acknowledgement (a canceled wait for synchronous replication) is
#      not reported: sync_is_held says false, sync_wait and a repeated
#      sync_request wait for the standby (57014 when canceled), and once
#      the standby is back sync_wait returns the grant's token;
#  (f) the cost of an acquire that writes a reservation (with the
#      synchronous standby streaming) against one that does not, noted.
use strict;
use warnings FATAL => 'all';

use IPC::Run;
use Time::HiRes qw(sleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# Compare two non-negative decimal integers given as strings.
sub cmp_big
{
	my ($a, $b) = @_;
	return length($a) <=> length($b) || $a cmp $b;
}

sub configure
{
	my ($node) = @_;
	$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'syncwf'
syncwf.database = 'postgres'
wal_log_hints = on
wal_keep_size = '256MB'
log_min_messages = log
});
	return;
}

my $setup = q{
CREATE EXTENSION syncwf;
INSERT INTO sync_limit VALUES ('t/s', 2);
};

# One session's hold of each kind on $node: returns the three tokens
# (session, transaction, keyed), all released again.
sub tokens_of_each_kind
{
	my ($node, $tag) = @_;
	my $s = $node->safe_psql('postgres',
		"SELECT sync_acquire('mtx/t/$tag'); SELECT sync_release('mtx/t/$tag');");
	($s) = split /\n/, $s;
	my $x = $node->safe_psql('postgres',
		"BEGIN; SELECT sync_acquire_xact('mtx/t/x$tag'); COMMIT;");
	my ($st, $k) = split /\|/, $node->safe_psql('postgres',
		"SELECT status, token FROM sync_request('sem/t/s', 't/$tag')");
	is($st, 'held', "$tag: the keyed request is granted");
	$node->safe_psql('postgres', "SELECT sync_release('sem/t/s', 't/$tag')");
	return ($s, $x, $k);
}

# A streaming standby $name of $leader (from a new backup $bk), made its
# synchronous standby.
sub sync_standby_of
{
	my ($leader, $name, $bk) = @_;
	$leader->backup($bk);
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init_from_backup($leader, $bk, has_streaming => 1);
	$node->append_conf('postgresql.conf',
		"cluster_name = '$name'\nsynchronous_standby_names = ''\n");
	$node->start;
	$leader->append_conf('postgresql.conf', "synchronous_standby_names = '$name'\n");
	$leader->reload;
	$leader->poll_query_until('postgres',
		"SELECT sync_state = 'sync' FROM pg_stat_replication WHERE application_name = '$name'")
	  or die "$name did not become a synchronous standby";
	return $node;
}

# --- (a) the promoted standby is above the old primary's tokens -------------
my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
configure($primary);
$primary->start;
$primary->safe_psql('postgres', $setup);
my $standby = sync_standby_of($primary, 'standby', 'bk');

# Tokens far ahead of every clock: plant the primary's reservation file
# 10^12 us (11.6 days) ahead, and restart it.
my $now_us = $primary->safe_psql('postgres',
	q{SELECT (extract(epoch FROM now() - '2000-01-01 00:00:00+00') * 1000000)::bigint});
my $planted = $now_us + 1_000_000_000_000;
$primary->stop;
PostgreSQL::Test::Utils::append_to_file($primary->data_dir . '/syncwf.token.new', "$planted\n");
rename($primary->data_dir . '/syncwf.token.new', $primary->data_dir . '/syncwf.token')
  or die "rename: $!";
$primary->start;

my @old = tokens_of_each_kind($primary, 'a1');
ok(cmp_big($old[0], $planted) > 0, "(a) the primary's session token is above the planted reservation");
my $last_old = $old[0];
for my $t (@old[1 .. 2])
{
	ok(cmp_big($t, $last_old) > 0, "(a) the primary's tokens increase ($t)");
	$last_old = $t;
}

# The standby has the reservation in memory and in its file.
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('flush'));
my $standby_file = slurp_file($standby->data_dir . '/syncwf.token');
chomp $standby_file;
ok(cmp_big($standby_file, $last_old) > 0,
	"(a) the standby's token file holds the replayed reservation ($standby_file)");

# Redo after a restartpoint begins past the record: the file must carry it.
$primary->safe_psql('postgres', 'CHECKPOINT');
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('flush'));
$standby->safe_psql('postgres', 'CHECKPOINT');
$standby->restart;

# The old primary stops (as in a failover), the standby is promoted.
$primary->stop('immediate');
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the standby was not promoted';
$standby->poll_query_until('postgres',
	"SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'syncwf worker'")
  or die 'no syncwf worker on the promoted server';

my @new = tokens_of_each_kind($standby, 'a2');
for my $i (0 .. 2)
{
	ok(cmp_big($new[$i], $last_old) > 0,
		"(a) promoted: token $new[$i] is above every token of the old primary ($last_old)");
	$last_old = $new[$i];
}

# --- (b) a planned switchover to a second standby ---------------------------
# (the Patroni test, 033, switches over and rewinds real nodes)
my $second = sync_standby_of($standby, 'second', 'bk2');
my @mid = tokens_of_each_kind($standby, 'b1');
for my $i (0 .. 2)
{
	ok(cmp_big($mid[$i], $last_old) > 0, "(b) the new primary's tokens increase ($mid[$i])");
	$last_old = $mid[$i];
}
# a session hold kept across the switchover, as a client of the old primary
my $held = $standby->safe_psql('postgres', "SELECT sync_acquire('mtx/t/b-held')");
$standby->stop;		# clean, as Patroni demotes
$second->promote;
$second->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the second standby was not promoted';
ok(cmp_big($held, $last_old) > 0, '(b) the last session token of the old primary');
$last_old = $held;
my @back = tokens_of_each_kind($second, 'b2');
for my $i (0 .. 2)
{
	ok(cmp_big($back[$i], $last_old) > 0,
		"(b) switched over: token $back[$i] is above every earlier token ($last_old)");
	$last_old = $back[$i];
}

# --- (c) no token before the synchronous standby has its reservation -------
my $third = sync_standby_of($second, 'third', 'bk3');
my @c1 = tokens_of_each_kind($second, 'c1');
$last_old = $c1[2];

$third->stop;
$second->restart;	# the first grant after a start reserves a new block
my ($ret, $out, $err) = $second->psql('postgres',
	"SET statement_timeout = '1s'; SELECT sync_acquire('mtx/t/c2');");
isnt($ret, 0, '(c) the acquire fails while the synchronous standby is away');
like($err, qr/canceling wait for synchronous replication/,
	'(c) ... after waiting for the synchronous standby');
like($err, qr/ERROR:\s+canceling the acquire: its fencing token is not yet known to the synchronous standby/,
	'(c) ... with the error that says why');
is($second->safe_psql('postgres', "SELECT count(*) FROM sync_holders"), '0',
	'(c) ... and nothing is held');

$third->start;
my $c2 = $second->safe_psql('postgres',
	"SET statement_timeout = '60s'; SELECT sync_acquire('mtx/t/c2');");
ok(cmp_big($c2, $last_old) > 0, "(c) with the standby back, the acquire succeeds ($c2)");
($ret, $out, $err) = $second->psql('postgres',
	"SELECT sync_acquire('mtx/t/c3') > $c2");
is($out, 't', '(c) and the next token is larger still');
$primary = $second;
$standby = $third;

# --- (e) no keyed grant is reported before the standby has it ---------------
# A release whose commit PostgreSQL makes visible without the synchronous
# standby (its wait canceled by statement_timeout) hands the slot on, here
# only: the next holder is not told it holds until the standby has it.
is($primary->safe_psql('postgres', "SELECT status FROM sync_request('mtx/t/e', 'e/a')"),
	'held', '(e) e/a holds mtx/t/e');
is($primary->safe_psql('postgres', "SELECT status FROM sync_request('mtx/t/e', 'e/b')"),
	'pending', '(e) e/b waits behind it');
$standby->stop;
# statement_timeout ends before the commit: cancel the commit's wait
my ($rin, $rout, $rerr) = ('', '', '');
my $rel = IPC::Run::start(
	[
		'psql', '-X', '-At', '-h', $primary->host, '-p', $primary->port,
		'-d', 'postgres', '-c', "SELECT sync_release('mtx/t/e', 'e/a')"
	],
	\$rin, \$rout, \$rerr);
ok( $primary->poll_query_until('postgres',
		"SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'SyncRep'"),
	"(e) the release's commit waits for the synchronous standby");
$rel->finish;
like($rerr, qr/canceling wait for synchronous replication due to user request/,
	"(e) the release's wait for the synchronous standby is canceled");
is($primary->safe_psql('postgres',
	"SELECT held FROM sync_state WHERE name = 'mtx/t/e' AND workflowkey = 'e/b'"),
	't', '(e) PostgreSQL shows the hand-off committed here');
is($primary->safe_psql('postgres', "SELECT sync_is_held('mtx/t/e', 'e/b')"),
	'f', '(e) sync_is_held does not report it');
($ret, $out, $err) = $primary->psql('postgres',
	"SET statement_timeout = '1s'; SELECT sync_wait('mtx/t/e', 'e/b');");
like($err, qr/ERROR:\s+canceling: a grant is not yet known to the synchronous standby/,
	'(e) sync_wait waits for the standby, and fails when canceled');
($ret, $out, $err) = $primary->psql('postgres',
	"SET statement_timeout = '1s'; SELECT status FROM sync_request('mtx/t/e', 'e/b');");
like($err, qr/ERROR:\s+canceling: a grant is not yet known to the synchronous standby/,
	'(e) so does a repeated sync_request');
$standby->start;
my $etok = $primary->safe_psql('postgres',
	"SET statement_timeout = '60s'; SELECT sync_wait('mtx/t/e', 'e/b', '60s');");
ok(cmp_big($etok, $c2) > 0, "(e) once the standby has it, sync_wait returns its token ($etok)");
is($primary->safe_psql('postgres', "SELECT sync_is_held('mtx/t/e', 'e/b', $etok)"),
	't', '(e) and sync_is_held reports it');

# --- (f) what a reservation costs --------------------------------------------
# The first grant after a start writes a reservation (file, WAL record,
# flush, and the wait for the synchronous standby); the next 2^20 do not.
# Measured here for the docs (high-availability.md), as the median of 5
# restarts, with the synchronous standby streaming.
sub acquire_ms
{
	my ($node, $name) = @_;
	my $out = $node->safe_psql('postgres',
		"SELECT extract(epoch FROM clock_timestamp()) * 1000;"
		  . " SELECT sync_acquire('$name');"
		  . " SELECT extract(epoch FROM clock_timestamp()) * 1000;");
	my @l = split /\n/, $out;
	return $l[2] - $l[0];
}
my (@first, @second);
for my $i (1 .. 5)
{
	$primary->restart;
	$primary->poll_query_until('postgres',
		"SELECT sync_state = 'sync' FROM pg_stat_replication WHERE application_name = 'third'")
	  or die 'the standby did not become synchronous again';
	push @first,  acquire_ms($primary, "mtx/t/f$i");
	push @second, acquire_ms($primary, "mtx/t/g$i");
}
@first  = sort { $a <=> $b } @first;
@second = sort { $a <=> $b } @second;
note(sprintf('(f) an acquire that writes a reservation: median %.2f ms; one that does not: %.2f ms',
	$first[2], $second[2]));

# --- (d) a standby must preload syncwf ---------------------------------------
$primary->backup('bk4');
my $bare = PostgreSQL::Test::Cluster->new('bare');
$bare->init_from_backup($primary, 'bk4', has_streaming => 1);
$bare->append_conf('postgresql.conf', "shared_preload_libraries = ''\n");
$bare->start(fail_ok => 1);
# a new reservation after the backup, for the bare standby to meet
$primary->restart;
$primary->safe_psql('postgres', "SELECT sync_acquire('mtx/t/d1')");
my $found = 0;
for (1 .. 300)
{
	my $log = slurp_file($bare->logfile);
	if ($log =~ /resource manager with ID 199 not registered|rmgr ID 199|custom resource manager/i)
	{
		$found = 1;
		last;
	}
	sleep 0.1;
}
ok($found, '(d) a standby without syncwf stops replay naming the resource manager');
$bare->stop('immediate', fail_ok => 1);

$primary->stop;
$standby->stop;
done_testing();
