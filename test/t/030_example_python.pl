# The Python examples of examples/python (psycopg 3, Debian's
# /usr/bin/python3) against a fresh server: the scenarios of
# test/SyncwfExamples.pm. The keyed worker waits for its grant with
# sync_wait.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use SyncwfExamples;
use Test::More;

my $dir = example_root() . '/examples/python';
my $python = '/usr/bin/python3';
ok(system($python, '-c', 'import psycopg') == 0,
	"$python imports psycopg (Debian's python3-psycopg; scripts/suite.sh installs it)")
  or BAIL_OUT("no psycopg for $python");

run_examples('python',
	session => [ $python, "$dir/session_hold.py" ],
	keyed => [ $python, "$dir/keyed_worker.py" ]);

done_testing();
