# syncwf without shared_preload_libraries: a clear error, never a crash.
#
#  - CREATE EXTENSION on a server that does not preload syncwf fails with a
#    message naming shared_preload_libraries, and a hint;
#  - with the module preloaded the extension works;
#  - when the server is later restarted without the preload, every function
#    fails with the same clear error (repeatedly, in the same session), the
#    server stays up, and the extension can still be dropped.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('no_preload');
$node->init;
$node->start;

# psql with SQLSTATEs in the error output.
sub try_sql
{
	my ($sql) = @_;
	my ($ret, $out, $err) =
	  $node->psql('postgres', "\\set VERBOSITY verbose\n$sql", on_error_stop => 1);
	return ($ret, $out, $err);
}

sub expect_preload_error
{
	my ($sql, $label) = @_;
	my ($ret, $out, $err) = try_sql($sql);
	isnt($ret, 0, "$label: fails");
	like($err, qr/ERROR:  55000: syncwf must be loaded via shared_preload_libraries/,
		"$label: error names shared_preload_libraries (SQLSTATE 55000)");
	like($err, qr/HINT:  .*shared_preload_libraries.*restart the server/,
		"$label: hint says how to fix it");
	unlike($err, qr/server closed the connection|terminated abnormally/,
		"$label: the backend did not crash");
	return;
}

# --- 1. not preloaded: CREATE EXTENSION refuses ---------------------------------
expect_preload_error('CREATE EXTENSION syncwf', 'CREATE EXTENSION without preload');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_extension WHERE extname = 'syncwf'"),
	'0', 'the failed CREATE EXTENSION left no extension behind');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_class WHERE relname = 'sync_limit'"),
	'0', '... and no sync_limit table');
expect_preload_error("LOAD 'syncwf'", 'LOAD without preload');

# --- 2. preloaded: works ---------------------------------------------------------------
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'syncwf'");
$node->restart;
$node->safe_psql('postgres', q{
    CREATE EXTENSION syncwf;
    INSERT INTO sync_limit VALUES ('t/s', 2);
});
is($node->safe_psql('postgres',
		"SELECT sync_acquire('mtx/t/a') IS NOT NULL, sync_try_acquire('sem/t/s') IS NOT NULL"),
	't|t', 'with the module preloaded, the extension works');

# --- 3. preload removed again: clear errors, no crash ---------------------------------
$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "''");
$node->restart;
is($node->safe_psql('postgres', 'SHOW shared_preload_libraries'), '',
	'server restarted without shared_preload_libraries');

my $offset = -s $node->logfile;
expect_preload_error("SELECT sync_acquire('mtx/t/a')", 'sync_acquire without preload');
expect_preload_error("SELECT sync_try_acquire('sem/t/s')", 'sync_try_acquire without preload');
expect_preload_error("SELECT sync_acquire_xact(ARRAY['mtx/t/a', 'mtx/t/b'])",
	'sync_acquire_xact(text[]) without preload');
expect_preload_error("SELECT sync_release('mtx/t/a')", 'sync_release without preload');
expect_preload_error('SELECT sync_release_all()', 'sync_release_all without preload');
expect_preload_error('SELECT * FROM sync_locks', 'SELECT sync_locks without preload');
expect_preload_error('SELECT * FROM sync_holders', 'SELECT sync_holders without preload');
# Changing sync_limit fires a trigger of the module.  Whether that is
# refused or allowed without the module is a design choice; a refusal must
# be the clear error, and the backend must not crash either way.
{
	my ($ret, $out, $err) = try_sql("INSERT INTO sync_limit VALUES ('t/x', 1)");
	unlike($err, qr/server closed the connection|terminated abnormally/,
		'INSERT INTO sync_limit without preload: the backend did not crash');
	if ($ret == 0)
	{
		pass('INSERT INTO sync_limit without preload: allowed');
	}
	else
	{
		like($err, qr/syncwf must be loaded via shared_preload_libraries/,
			'INSERT INTO sync_limit without preload: refused with the clear error');
	}
}

# The same session, twice: the error is raised every time, not only on the
# first load attempt.
my ($ret, $out, $err) = try_sql(
	"\\set ON_ERROR_STOP 0\nSELECT sync_acquire('mtx/t/a');\nSELECT sync_acquire('mtx/t/a');\nSELECT 'alive';");
my @errors = ($err =~ /syncwf must be loaded via shared_preload_libraries/g);
is(scalar(@errors), 2, 'a second call in the same session fails the same way');
like($out, qr/alive/, 'the session is still usable after the errors');

is($node->safe_psql('postgres', "SELECT sizelimit FROM sync_limit WHERE name = 't/s'"), '2',
	'sync_limit is still readable without the module (plain table)');
unlike(slurp_file($node->logfile, $offset),
	qr/terminated by signal|server process .* exited with exit code [^0]|all server processes terminated/,
	'server log shows no crash');

# Dropping the extension needs no library.
($ret, $out, $err) = try_sql('DROP EXTENSION syncwf');
is($ret, 0, 'DROP EXTENSION syncwf works without the preload') or diag($err);
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_extension WHERE extname = 'syncwf'"),
	'0', 'the extension is gone');

$node->stop;
done_testing();
