# Every difference between PostgreSQL versions lives in src/core/compat.h.
#
#  - no other file under src/ tests PG_VERSION_NUM;
#  - each guard in src/core/compat.h is keyed on a major release (NN0000), the
#    one that made the change, so a major the test command cannot run (16)
#    still takes the branch its headers need;
#  - the module this suite built loads in the server it is tested with
#    (PG_MODULE_MAGIC refuses a module built for another major).
use strict;
use warnings FATAL => 'all';

use File::Basename qw(dirname);
use File::Spec;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# src/ is in the repository root: test/t/../../src, whatever the current
# directory.
my $src = File::Spec->catdir(dirname(File::Spec->rel2abs(__FILE__)), '..', '..', 'src');
# Every .c and .h file of src/ and its subsystem folders, as "folder/file".
my @files;
for my $dir ('', map { "$_/" } grep { -d "$src/$_" } do { opendir my $d, $src or die; grep { !/^\./ } readdir $d })
{
	opendir my $dh, "$src/$dir" or die "cannot open $src/$dir: $!";
	push @files, map { "$dir$_" } grep { /\.[ch]$/ } readdir $dh;
	closedir $dh;
}
@files = sort @files;
ok(scalar(grep { $_ eq 'core/compat.h' } @files), 'src/core/compat.h exists');

my (@outside, @guards);
for my $f (@files)
{
	my $text = slurp_file(File::Spec->catfile($src, $f));
	my @lines = split /\n/, $text;
	for my $i (0 .. $#lines)
	{
		next unless $lines[$i] =~ /PG_VERSION_NUM/;
		if ($f eq 'core/compat.h')
		{
			push @guards, $lines[$i] if $lines[$i] =~ /^\s*#\s*(?:if|elif)/;
		}
		else
		{
			push @outside, "$f:" . ($i + 1) . ": $lines[$i]";
		}
	}
}
is(join("\n", @outside), '', 'no file of src/ but core/compat.h tests PG_VERSION_NUM');
ok(scalar(@guards) >= 5, 'src/core/compat.h has its version guards (' . scalar(@guards) . ')');
is( join("\n", grep { !/PG_VERSION_NUM\s*(?:>=|<)\s*1[5-9]0000\b/ } @guards),
	'',
	'every guard compares PG_VERSION_NUM with a major release (>= or < NN0000)');

# The installed module was built against this server's major: a module
# built for another one fails its magic-block check and the server does not
# start.
my $node = PostgreSQL::Test::Cluster->new('guards');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'syncwf'");
$node->start;
my $num = $node->safe_psql('postgres', 'SHOW server_version_num');
like($num, qr/^1[5-9]\d{4}$/, "server_version_num $num is a supported major");
is( $node->safe_psql('postgres', q{
    SELECT setting FROM pg_settings WHERE name = 'shared_preload_libraries'}),
	'syncwf', 'the module built for this major loads at server start');
$node->stop;
done_testing();
