# The source only calls downward, as docs/architecture.md's layer table says.
#
# Against the object files the test command built (SYNCWF_BUILD_DIR, read
# with nm):
#
#  - every file of src/*.c is in exactly one layer of the table (section
#    "## Layers" of docs/architecture.md), and its opening comment names
#    the same layer;
#  - every symbol a file uses from another file of syncwf is defined in a
#    lower layer: no file calls its own layer or one above, so no two files
#    reach each other;
#  - every function or variable a file exports is used by another file, or
#    by PostgreSQL (an SQL function with its pg_finfo_ record, _PG_init,
#    Pg_magic_func, the two workers' entry points): file-local ones are static;
#  - a file that other files call has a header of its own name;
#  - no file of src/ is longer than 900 lines.
use strict;
use warnings FATAL => 'all';

use File::Basename qw(basename dirname);
use File::Spec;
use PostgreSQL::Test::Utils;
use Test::More;

my $root = File::Spec->catdir(dirname(File::Spec->rel2abs(__FILE__)), '..', '..');
my $src = File::Spec->catdir($root, 'src');
my $doc = File::Spec->catfile($root, 'docs', 'architecture.md');
my $build = $ENV{SYNCWF_BUILD_DIR};
plan skip_all => 'SYNCWF_BUILD_DIR is not set (scripts/suite.sh sets it)'
  unless defined $build && -d "$build/src";

# --- the layer table ----------------------------------------------------------------
my (%layer_of, $in_section);
for my $line (split /\n/, slurp_file($doc))
{
	if ($line =~ /^(#+)\s+(.*?)\s*$/)
	{
		last if $in_section && length($1) <= 2;
		$in_section = 1 if $2 eq 'Layers' && length($1) == 2;
		next;
	}
	next unless $in_section;
	next unless $line =~ /^\|\s*(\d+)\s*\|([^|]*)\|/;
	my ($layer, $files) = ($1, $2);
	for my $f ($files =~ /`([a-z_0-9]+)\.c`/g)
	{
		ok(!exists $layer_of{$f}, "$f.c is in one layer of the table")
		  or diag("also in layer $layer_of{$f}");
		$layer_of{$f} = $layer;
	}
}
ok(scalar(keys %layer_of) > 10, 'docs/architecture.md has the layer table')
  or BAIL_OUT('no layer table under "## Layers" in docs/architecture.md');

opendir my $dh, $src or die "cannot open $src: $!";
my @sources = sort grep { /\.[ch]$/ } readdir $dh;
closedir $dh;
my @modules = map { /^(.*)\.c$/ ? $1 : () } @sources;
is_deeply([ sort grep { !exists $layer_of{$_} } @modules ], [],
	'every file of src/ is in the layer table');
is_deeply([ sort grep { !-f "$src/$_.c" } keys %layer_of ], [],
	'every file of the layer table is in src/');

# the opening comment of each file names its layer
my @mismatch;
for my $m (@modules)
{
	next unless exists $layer_of{$m};
	my ($said) = slurp_file("$src/$m.c") =~ /\bLayer (\d+)\b/;
	push @mismatch, "$m.c says " . ($said // 'nothing') . ", the table $layer_of{$m}"
	  unless defined $said && $said == $layer_of{$m};
}
is_deeply(\@mismatch, [], "each file's opening comment names its layer");

# --- calls, from the object files -----------------------------------------------------
my (%defined_in, %uses);
for my $m (@modules)
{
	my $obj = "$build/src/$m.o";
	ok(-f $obj, "$m.o was built") or next;
	my $out = `nm $obj`;
	die "nm $obj failed" if $? != 0;
	for (split /\n/, $out)
	{
		if (/^[0-9a-f]+\s+[TDBRC]\s+(\S+)$/) { $defined_in{$1} = $m; }
		elsif (/^\s+U\s+(\S+)$/) { $uses{$m}{$1} = 1; }
	}
}

my (@upward, %used_elsewhere);
for my $m (sort keys %uses)
{
	for my $sym (sort keys %{ $uses{$m} })
	{
		my $def = $defined_in{$sym};
		next unless defined $def && $def ne $m;
		$used_elsewhere{$sym} = 1;
		push @upward, "$m.c (layer $layer_of{$m}) uses $sym of $def.c (layer $layer_of{$def})"
		  if $layer_of{$def} >= $layer_of{$m};
	}
}
is_deeply(\@upward, [], 'every call goes to a lower layer');

my @exported_unused;
for my $sym (sort keys %defined_in)
{
	next if $used_elsewhere{$sym};
	next if $sym =~ /^pg_finfo_/ || exists $defined_in{"pg_finfo_$sym"};
	next if $sym =~ /^(_PG_init|Pg_magic_func|sync_worker_main|sync_rate_worker_main)$/;
	push @exported_unused, "$defined_in{$sym}.c: $sym";
}
is_deeply(\@exported_unused, [], 'what no other file uses is static');

# a file that other files call has a header of its own name
my %called = map { $defined_in{$_} => 1 } keys %used_elsewhere;
is_deeply([ map { "$_.c" } sort grep { !-f "$src/$_.h" } keys %called ], [],
	'every file other files call has its own header');

# --- sizes -----------------------------------------------------------------------------
my @long;
for my $f (@sources)
{
	my $n = () = slurp_file("$src/$f") =~ /\n/g;
	push @long, "$f: $n lines" if $n > 900;
}
is_deeply(\@long, [], 'no file of src/ is longer than 900 lines');

done_testing();
