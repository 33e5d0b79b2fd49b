# The Node.js examples of examples/node (node-postgres, as
# examples/node/package-lock.json pins it) against a fresh server: the
# scenarios of test/SyncwfExamples.pm. The keyed worker waits for its grant
# with LISTEN syncwf.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use SyncwfExamples;
use Test::More;

my $dir = example_root() . '/examples/node';
ok(system('node', '-e', "require('$dir/node_modules/pg')") == 0,
	'node finds node-postgres in examples/node/node_modules (scripts/suite.sh installs it)')
  or BAIL_OUT("node or $dir/node_modules/pg is missing");

run_examples('node',
	session => [ 'node', "$dir/session-hold.js" ],
	keyed => [ 'node', "$dir/keyed-worker.js" ]);

done_testing();
