# test/SyncwfTest.pm: helpers shared by the Perl TAP tests in test/t/
# (scripts/test.sh puts test/ on @INC).
#
#   listener($node, $db, $channel)  a LISTEN connection (channel default
#                                   "syncwf", taken as it is: quoted);
#                                   collect() runs one query in it and
#                                   gathers the notifications psql printed
#   next_event($l, $timeout, $poll_us, $tick, %want)
#                                   wait for an event matching %want
#   events_like($l, %want), describe_events($l)
#   wait_children_gone($node, $pm_pid, $poll_s)
#                                   after a kill -9 of the postmaster
package SyncwfTest;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use JSON::PP;
use PostgreSQL::Test::Utils;
use Time::HiRes qw(usleep time);

our @EXPORT = qw(listener collect next_event events_like describe_events
  wait_children_gone);

# A notification printed after query N reached psql before query N+1
# started, so the clock of query N+1 bounds the time it was received: that
# is its seen_by.
sub listener
{
	my ($node, $db, $channel) = @_;
	$channel //= 'syncwf';
	my $psql = $node->background_psql($db);
	$psql->set_query_timer_restart;
	my $quoted = $channel =~ s/"/""/gr;
	$psql->query_safe(qq{LISTEN "$quoted"});
	my $pid = $psql->query_safe('SELECT pg_backend_pid()');
	return {
		psql => $psql, pid => $pid, channel => $channel,
		events => [], unbounded => [], received => 0
	};
}

sub collect
{
	my ($l) = @_;
	my $out = $l->{psql}->query_safe('SELECT extract(epoch FROM clock_timestamp())');
	my ($now, @new);
	for my $line (split /\n/, $out)
	{
		if ($line =~
			/^Asynchronous notification "\Q$l->{channel}\E" with payload "(.*)" received from server process with PID (\d+)\.$/
		  )
		{
			my $ev = decode_json($1);
			$ev->{sender} = $2;
			$ev->{seq} = ++$l->{received};
			push @new, $ev;
		}
		elsif ($line =~ /^\d+(\.\d+)?$/)
		{
			$now = $line;
		}
		else
		{
			die "unexpected listener output: $line";
		}
	}
	die "listener: no clock in output" unless defined $now;
	$_->{seen_by} = $now for @{ $l->{unbounded} };
	push @{ $l->{events} }, @{ $l->{unbounded} };
	$l->{unbounded} = \@new;
	return $now;
}

# Wait (up to $timeout s) for an event matching %want, polling every
# $poll_us; $tick->() (if given) runs between polls.  Returns the event
# (undef on timeout) and marks it consumed.
sub next_event
{
	my ($l, $timeout, $poll_us, $tick, %want) = @_;
	my $deadline = time + $timeout;
	for (;;)
	{
		for my $ev (@{ $l->{events} })
		{
			next if $ev->{consumed};
			next if grep { !defined $ev->{$_} || $ev->{$_} ne $want{$_} } keys %want;
			$ev->{consumed} = 1;
			return $ev;
		}
		return undef if time > $deadline;
		$tick->() if $tick;
		collect($l);
		usleep($poll_us);
	}
}

# Every event received so far (after one more poll), matching %want.
sub events_like
{
	my ($l, %want) = @_;
	collect($l);
	collect($l);
	return grep {
		my $ev = $_;
		!grep { !defined $ev->{$_} || $ev->{$_} ne $want{$_} } keys %want
	} @{ $l->{events} };
}

sub describe_events
{
	my ($l) = @_;
	return join("\n", map { encode_json($_) } @{ $l->{events} }, @{ $l->{unbounded} });
}

# Keep the processes of a killed postmaster from blocking the next start:
# wait (polling every $poll_s, default 0.1 s) until it and its children
# (named after the cluster) are gone.  False on timeout.
sub wait_children_gone
{
	my ($node, $pm_pid, $poll_s) = @_;
	$poll_s //= 0.1;
	my $name = $node->name;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	while (time() < $deadline)
	{
		my $left = kill(0, $pm_pid) ? 1 : 0;
		for my $f (glob('/proc/[0-9]*/cmdline'))
		{
			open(my $fh, '<', $f) or next;
			my $cmd = <$fh> // '';
			close $fh;
			$left++ if $cmd =~ /^postgres: \Q$name\E: /;
		}
		return 1 if !$left;
		usleep($poll_s * 1_000_000);
	}
	return 0;
}

1;
