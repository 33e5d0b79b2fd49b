# test/SyncwfPatroni.pm: a three-node Patroni cluster on one etcd, all on
# 127.0.0.1, for test/t/033_patroni_failover.pl (scripts/suite.sh puts
# test/ on @INC). Every process it starts (etcd, Patroni, the clients of
# test/syncwf_ha_client.py) is a child of the test, killed in the END block
# of this module whatever happens, and every wait is bounded.
#
#   SyncwfPatroni->new(%opts)      ports, directories, configuration
#   $c->start_etcd, $c->start_patroni($name), $c->stop_all
#   $c->leader, $c->sync_standby   the DCS's leader and /sync keys (read
#                                  from etcd itself, so a frozen Patroni
#                                  does not matter)
#   $c->rest($name, $method, $path, $body)
#   $c->sql($name, $sql)           psql -X -A -t on that node, bounded
#   $c->postmaster_pid($name), $c->patroni_pid($name)
#   $c->start_client(%args), $c->events    the clients and their JSON lines
#   poll_until($timeout, $step, $sub)      bounded polling
#
# The test process makes itself a child subreaper (Linux prctl), so that
# the postmasters a killed Patroni leaves behind, and the backends of a
# killed postmaster, become its children and are reaped at once: a zombie
# postmaster would make its postmaster.pid look alive to the next start.
package SyncwfPatroni;

use strict;
use warnings FATAL => 'all';

use Config;
use Exporter 'import';
use File::Temp ();
use HTTP::Tiny;
use IPC::Run;
use JSON::PP;
use MIME::Base64 qw(encode_base64 decode_base64);
use POSIX qw(WNOHANG);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Time::HiRes qw(time usleep);

our @EXPORT = qw(poll_until reap alive find_program run_bg);

my %children;    # pid => name, of every process spawned here
my %exit_status; # pid => wait status, of those reaped
my @clusters;

# prctl(PR_SET_CHILD_SUBREAPER, 1): syscall 157 on x86_64, 167 on aarch64
{
	my %nr = (x86_64 => 157, aarch64 => 167);
	my ($arch) = $Config{archname} =~ /^(x86_64|aarch64)/;
	syscall($nr{$arch}, 36, 1, 0, 0, 0) if $arch && $^O eq 'linux';
}

# Reap every child that has exited (ours, or an orphan handed to us).
sub reap
{
	while ((my $pid = waitpid(-1, WNOHANG)) > 0)
	{
		$exit_status{$pid} = $?;
		delete $children{$pid};
	}
	return;
}

# A process that exists and is not a zombie.
sub alive
{
	my ($pid) = @_;
	return 0 unless $pid;
	reap();
	return 0 unless kill(0, $pid);
	open(my $fh, '<', "/proc/$pid/stat") or return 0;
	my $stat = <$fh> // '';
	close $fh;
	return $stat =~ /\)\s+Z\s/ ? 0 : 1;
}

# Poll $sub every $step seconds until it returns true or $timeout seconds
# have passed; its last value.
sub poll_until
{
	my ($timeout, $step, $sub) = @_;
	my $deadline = time + $timeout;
	for (;;)
	{
		reap();
		my $v = $sub->();
		return $v if $v || time > $deadline;
		usleep($step * 1_000_000);
	}
}

sub find_program
{
	my ($name, @extra) = @_;
	for my $d ((split /:/, $ENV{PATH} // ''), @extra)
	{
		return "$d/$name" if -x "$d/$name";
	}
	return undef;
}

# Start a program in the background, stdout and stderr appended to $log.
sub spawn
{
	my ($name, $log, @cmd) = @_;
	my $pid = fork();
	die "fork: $!" unless defined $pid;
	if ($pid == 0)
	{
		open(STDIN, '<', '/dev/null');
		open(STDOUT, '>>', $log) or POSIX::_exit(127);
		open(STDERR, '>&', \*STDOUT);
		exec(@cmd) or POSIX::_exit(127);
	}
	$children{$pid} = $name;
	return $pid;
}

# Run a command to its end, reaping orphans meanwhile (a Patroni that
# waits for its old postmaster to exit would otherwise wait for our next
# poll): (exit status or undef on timeout, its output).
sub run_bg
{
	my ($timeout, $out, @cmd) = @_;
	unlink $out;
	my $pid = spawn("command $cmd[0]", $out, @cmd);
	my $done = poll_until($timeout, 0.05, sub { exists $exit_status{$pid} });
	kill('KILL', $pid) unless $done;
	poll_until(5, 0.05, sub { exists $exit_status{$pid} });
	my $text = -f $out ? PostgreSQL::Test::Utils::slurp_file($out) : '';
	return ($done ? $exit_status{$pid} >> 8 : undef, $text);
}

sub new
{
	my ($class, %o) = @_;
	my $self = bless {
		ttl => 10, loop_wait => 1, retry_timeout => 4,
		scope => 'syncwf-ha', %o
	}, $class;
	# A write to a connection a killed node closed (its REST port, psql's
	# pipes) must fail, not end the test with SIGPIPE and no word of why.
	$SIG{PIPE} = 'IGNORE';
	$self->{dir} = PostgreSQL::Test::Utils::tempdir('patroni');
	# unix sockets need short paths
	$self->{sockbase} = File::Temp::tempdir('syncwf-ha-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	$self->{logdir} = $PostgreSQL::Test::Utils::log_path;
	$self->{prefix} = $o{prefix} // '033_patroni_failover';
	my $pg_config = find_program('pg_config') or die "no pg_config on PATH";
	chomp(my $bindir = `$pg_config --bindir`);
	$self->{bindir} = $bindir;
	$self->{etcd_port} = PostgreSQL::Test::Cluster::get_free_port();
	$self->{etcd_peer} = PostgreSQL::Test::Cluster::get_free_port();
	for my $i (1 .. 3)
	{
		my $name = "node$i";
		push @{ $self->{names} }, $name;
		$self->{node}{$name} = {
			name => $name,
			port => PostgreSQL::Test::Cluster::get_free_port(),
			rest => PostgreSQL::Test::Cluster::get_free_port(),
			data => "$self->{dir}/$name/data",
			sock => "$self->{sockbase}/$name",
			cfg => "$self->{dir}/$name.yml",
			log => "$self->{logdir}/$self->{prefix}_$name.log",
		};
		mkdir "$self->{dir}/$name";
		mkdir "$self->{sockbase}/$name";
	}
	$self->{http} = HTTP::Tiny->new(timeout => 3);
	$self->{clients} = [];
	$self->{events} = [];
	$self->{offsets} = {};
	push @clusters, $self;
	$self->write_configs;
	return $self;
}

sub node { return $_[0]->{node}{ $_[1] }; }
sub names { return @{ $_[0]->{names} }; }
sub port_of { return $_[0]->{node}{ $_[1] }{port}; }

sub name_of_port
{
	my ($self, $port) = @_;
	for my $n ($self->names) { return $n if $self->port_of($n) == ($port // 0); }
	return undef;
}

# The multi-host connection string of the clients.
sub dsn
{
	my ($self) = @_;
	my @p = map { $self->port_of($_) } $self->names;
	return 'host=' . join(',', ('127.0.0.1') x @p) . ' port=' . join(',', @p)
	  . ' dbname=postgres user=postgres target_session_attrs=read-write'
	  . ' keepalives=1 keepalives_idle=5 keepalives_interval=1 keepalives_count=3';
}

# --- etcd ---------------------------------------------------------------------

sub start_etcd
{
	my ($self) = @_;
	my $etcd = find_program('etcd', '/usr/bin', '/usr/sbin') or die "no etcd";
	my ($c, $p) = ($self->{etcd_port}, $self->{etcd_peer});
	$self->{etcd_pid} = spawn('etcd', "$self->{logdir}/$self->{prefix}_etcd.log", $etcd,
		'--name', 'e0', '--data-dir', "$self->{dir}/etcd",
		'--listen-client-urls', "http://127.0.0.1:$c",
		'--advertise-client-urls', "http://127.0.0.1:$c",
		'--listen-peer-urls', "http://127.0.0.1:$p",
		'--initial-advertise-peer-urls', "http://127.0.0.1:$p",
		'--initial-cluster', "e0=http://127.0.0.1:$p",
		'--initial-cluster-state', 'new',
		'--logger', 'zap', '--log-level', 'warn');
	return poll_until(30, 0.1, sub {
		die "etcd exited\n" unless alive($self->{etcd_pid});
		my $r = $self->{http}->get("http://127.0.0.1:$c/health");
		return $r->{success} && $r->{content} =~ /"health":\s*"true"/;
	});
}

# A key of the cluster's DCS namespace, read from etcd (v3 gateway).
sub dcs_get
{
	my ($self, $key) = @_;
	my $k = encode_base64("/service/$self->{scope}/$key", '');
	my $r = $self->{http}->post("http://127.0.0.1:$self->{etcd_port}/v3/kv/range",
		{ content => encode_json({ key => $k }) });
	return undef unless $r->{success};
	my $j = eval { decode_json($r->{content}) } or return undef;
	return undef unless $j->{kvs} && @{ $j->{kvs} };
	return decode_base64($j->{kvs}[0]{value} // '');
}

# The lease of the leader key: (granted TTL, remaining TTL) in seconds.
sub leader_lease
{
	my ($self) = @_;
	my $k = encode_base64("/service/$self->{scope}/leader", '');
	my $r = $self->{http}->post("http://127.0.0.1:$self->{etcd_port}/v3/kv/range",
		{ content => encode_json({ key => $k }) });
	my $j = $r->{success} && eval { decode_json($r->{content}) } or return;
	my $lease = $j->{kvs} && $j->{kvs}[0]{lease} or return;
	$r = $self->{http}->post("http://127.0.0.1:$self->{etcd_port}/v3/lease/timetolive",
		{ content => encode_json({ ID => $lease }) });
	$j = $r->{success} && eval { decode_json($r->{content}) } or return;
	return ($j->{grantedTTL}, $j->{TTL});
}

sub leader { my $v = $_[0]->dcs_get('leader'); return (defined $v && $v ne '') ? $v : undef; }

sub sync_standby
{
	my ($self) = @_;
	my $v = $self->dcs_get('sync') // return undef;
	my $j = eval { decode_json($v) } or return undef;
	my $s = $j->{sync_standby};
	return ref($s) eq 'ARRAY' ? $s->[0] : $s;
}

# --- Patroni --------------------------------------------------------------------

sub write_configs
{
	my ($self) = @_;
	my $t = JSON::PP::true;
	my $f = JSON::PP::false;
	for my $name ($self->names)
	{
		my $n = $self->node($name);
		my $cfg = {
			scope => $self->{scope},
			namespace => '/service/',
			name => $name,
			restapi => {
				listen => "127.0.0.1:$n->{rest}",
				connect_address => "127.0.0.1:$n->{rest}"
			},
			etcd3 => { hosts => ["127.0.0.1:$self->{etcd_port}"] },
			bootstrap => {
				dcs => {
					ttl => $self->{ttl},
					loop_wait => $self->{loop_wait},
					retry_timeout => $self->{retry_timeout},
					maximum_lag_on_failover => 16777216,
					synchronous_mode => $t,
					# strict mode is switched on once the cluster is up:
					# Patroni before 3.0.4 can hang bootstrapping with it
					synchronous_mode_strict => $f,
					postgresql => {
						use_pg_rewind => $t,
						# no replication slots: a new leader creates its
						# members' slots only after its post-promotion
						# checkpoint, and until then the synchronous standby
						# strict mode waits for cannot attach (about 3 s);
						# wal_keep_size keeps the WAL a rejoining node needs
						use_slots => $f,
						parameters => {
							wal_level => 'replica',
							hot_standby => 'on',
							wal_log_hints => 'on',
							max_wal_senders => 10,
							max_replication_slots => 10,
							wal_keep_size => '128MB',
							# a standby whose primary went away tries the
							# next one (Patroni's new primary_conninfo)
							# after 0.2 s, not 5: strict mode holds every
							# grant of a new primary back until then
							wal_retrieve_retry_interval => '200ms',
							max_connections => 60,
							shared_preload_libraries => 'syncwf',
							'syncwf.database' => 'postgres',
							fsync => 'off',
							full_page_writes => 'on',
						},
					},
				},
				initdb => [ { encoding => 'UTF8' }, { locale => 'C' } ],
			},
			postgresql => {
				listen => "127.0.0.1:$n->{port}",
				connect_address => "127.0.0.1:$n->{port}",
				data_dir => $n->{data},
				bin_dir => $self->{bindir},
				pgpass => "$self->{dir}/$name.pgpass",
				authentication => {
					superuser => { username => 'postgres' },
					replication => { username => 'postgres' },
					rewind => { username => 'postgres' },
				},
				parameters => {
					unix_socket_directories => $n->{sock},
					logging_collector => 'on',
					log_directory => $self->{logdir},
					log_filename => "$self->{prefix}_pg_$name.log",
					log_line_prefix => '%m [%p] %q%a ',
					log_min_messages => 'warning',
				},
				pg_hba => [
					'local all all trust',
					'host all all 127.0.0.1/32 trust',
					'host replication all 127.0.0.1/32 trust',
				],
				basebackup => [ { checkpoint => 'fast' } ],
			},
			tags => { nofailover => $f, noloadbalance => $f, clonefrom => $f, nosync => $f },
		};
		# JSON is YAML
		PostgreSQL::Test::Utils::append_to_file($n->{cfg},
			JSON::PP->new->canonical->pretty->encode($cfg));
	}
	return;
}

sub start_patroni
{
	my ($self, $name) = @_;
	my $n = $self->node($name);
	my $patroni = find_program('patroni', '/usr/bin') or die "no patroni";
	PostgreSQL::Test::Utils::append_to_file($n->{log},
		sprintf("\n==== %.3f test: starting patroni %s\n", time, $name));
	$n->{pid} = spawn("patroni $name", $n->{log}, $patroni, $n->{cfg});
	return $n->{pid};
}

sub patroni_pid { return $_[0]->node($_[1])->{pid}; }

sub postmaster_pid
{
	my ($self, $name) = @_;
	my $f = $self->node($name)->{data} . '/postmaster.pid';
	open(my $fh, '<', $f) or return undef;
	my $pid = <$fh>;
	close $fh;
	chomp $pid if defined $pid;
	return ($pid && $pid =~ /^\d+$/) ? $pid : undef;
}

sub rest
{
	my ($self, $name, $method, $path, $body, $timeout) = @_;
	my $url = "http://127.0.0.1:" . $self->node($name)->{rest} . $path;
	my $http = $timeout ? HTTP::Tiny->new(timeout => $timeout) : $self->{http};
	my $r = $http->request($method, $url,
		defined $body
		? { content => encode_json($body), headers => { 'Content-Type' => 'application/json' } }
		: {});
	return ($r->{status}, $r->{content});
}

sub rest_json
{
	my ($self, $name, $path) = @_;
	my ($st, $body) = $self->rest($name, 'GET', $path);
	return undef unless $st && $st =~ /^2/;
	return eval { decode_json($body) };
}

# psql on one node over TCP; (stdout, stderr, success), bounded by $timeout
sub sql
{
	my ($self, $name, $sql, $timeout) = @_;
	my $port = $self->port_of($name);
	my ($out, $err) = ('', '');
	my $ok = eval {
		IPC::Run::run([ "$self->{bindir}/psql", '-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1',
				'-d', "host=127.0.0.1 port=$port dbname=postgres user=postgres connect_timeout=3",
				'-c', $sql ],
			'<', \undef, '>', \$out, '2>', \$err, IPC::Run::timeout($timeout // 20));
	};
	$err .= $@ if $@;
	chomp $out;
	return wantarray ? ($out, $err, $ok ? 1 : 0) : ($ok ? $out : undef);
}

# A node that is a hot standby streaming from the current leader.
sub streaming
{
	my ($self, $name) = @_;
	my $r = $self->sql($name,
		"SELECT pg_is_in_recovery()::text || ':' || coalesce((SELECT status FROM pg_stat_wal_receiver), '')",
		5);
	return defined $r && $r eq 'true:streaming';
}

# The leader's PostgreSQL is a primary, both others stream from it, and the
# DCS names a synchronous standby: the leader's name, or undef.
sub healthy
{
	my ($self) = @_;
	my $l = $self->leader // return undef;
	my $r = $self->sql($l, 'SELECT pg_is_in_recovery()::text || (SELECT count(*) FROM pg_stat_replication WHERE state = \'streaming\')', 5);
	return undef unless defined $r && $r eq 'false2';
	for my $n (grep { $_ ne $l } $self->names) { return undef unless $self->streaming($n); }
	my $s = $self->sync_standby;
	return undef unless $s && $s ne $l;
	return $l;
}

# Stop Patroni on every node (it stops its PostgreSQL), then kill what is
# left, and etcd.
sub stop_all
{
	my ($self, $grace) = @_;
	$grace //= 30;
	for my $n ($self->names)
	{
		my $pid = $self->node($n)->{pid};
		kill('CONT', $pid) if alive($pid);
		kill('TERM', $pid) if alive($pid);
	}
	poll_until($grace, 0.2, sub { !grep { alive($self->node($_)->{pid}) } $self->names });
	$self->kill_all;
	return;
}

sub kill_all
{
	my ($self) = @_;
	for my $n ($self->names)
	{
		my $pid = $self->node($n)->{pid};
		kill('KILL', $pid) if alive($pid);
		my $pm = $self->postmaster_pid($n);
		kill('KILL', $pm) if $pm && alive($pm);
	}
	for my $c (@{ $self->{clients} }) { kill('KILL', $c->{pid}) if alive($c->{pid}); }
	kill('KILL', $self->{etcd_pid}) if alive($self->{etcd_pid});
	poll_until(10, 0.1, sub { !grep { $children{$_} } keys %children });
	return;
}

# --- clients --------------------------------------------------------------------

sub start_client
{
	my ($self, %a) = @_;
	my $script = $a{script};
	my $log = "$self->{dir}/client_$a{id}.jsonl";
	$self->{stopfile} = "$self->{dir}/clients.stop";
	my @cmd = ($a{python}, $script, '--kind', $a{kind}, '--id', $a{id},
		'--dsn', $self->dsn, '--log', $log, '--stop', $self->{stopfile},
		'--seed', $a{seed} // 0);
	push @cmd, '--lock', $a{lock} if $a{lock};
	push @cmd, qw(--hold-min 0 --hold-max 0.002 --gap-min 0.005 --gap-max 0.01) if $a{fast};
	my $pid = spawn("client $a{id}", "$self->{dir}/client_$a{id}.stderr", @cmd);
	push @{ $self->{clients} }, { %a, pid => $pid, log => $log };
	return $pid;
}

sub stop_clients
{
	my ($self, $timeout) = @_;
	PostgreSQL::Test::Utils::append_to_file($self->{stopfile}, "stop\n");
	my $ok = poll_until($timeout, 0.1, sub { !grep { alive($_->{pid}) } @{ $self->{clients} } });
	for my $c (@{ $self->{clients} }) { kill('KILL', $c->{pid}) if alive($c->{pid}); }
	return $ok;
}

# Every event the clients have logged so far (complete lines only), in the
# order of their times.
sub events
{
	my ($self) = @_;
	my $new = 0;
	for my $c (@{ $self->{clients} })
	{
		open(my $fh, '<', $c->{log}) or next;
		seek($fh, $self->{offsets}{ $c->{log} } // 0, 0);
		while (my $line = <$fh>)
		{
			last unless $line =~ /\n\z/;
			$self->{offsets}{ $c->{log} } = tell($fh);
			my $e = eval { decode_json($line) };
			if (!$e)
			{
				# a client's line is JSON or a bug of the client: say so once
				Test::More::diag("$c->{log}: not an event: $line");
				next;
			}
			push @{ $self->{events} }, $e;
			$new++;
		}
		close $fh;
	}
	@{ $self->{events} } = sort { $a->{t} <=> $b->{t} } @{ $self->{events} } if $new;
	return $self->{events};
}

sub client_stderr
{
	my ($self) = @_;
	my $s = '';
	for my $c (@{ $self->{clients} })
	{
		my $f = "$self->{dir}/client_$c->{id}.stderr";
		$s .= "--- $c->{id}:\n" . PostgreSQL::Test::Utils::slurp_file($f) if -s $f;
	}
	return $s;
}

END
{
	my $rc = $?;
	$_->kill_all for @clusters;
	$? = $rc;
}

1;
