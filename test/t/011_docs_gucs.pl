# Every configuration parameter is documented, as it is.
#
# docs/reference.md's Configuration table (the first table after the heading
# "## Configuration") has one row per parameter: name, type and unit (with
# the range of numbers), default, when it takes effect.  This test checks,
# against a server that preloads syncwf:
#
#  - the syncwf.* parameters in pg_settings are exactly those of the table;
#  - for each one, the documented type, unit, range, default (compared with
#    boot_val, the built-in default, after converting a default written with
#    a unit to the parameter's unit) and "takes effect" (restart: context
#    postmaster; reload: sighup; any session: user; superuser sessions:
#    superuser) match pg_settings.
use strict;
use warnings FATAL => 'all';
use utf8;

use File::Basename qw(dirname);
use File::Spec;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# docs/ is in the repository root: test/t/../../docs/reference.md, whatever
# the current directory (scripts/test.sh runs prove from test/).
my $reference = File::Spec->catfile(dirname(File::Spec->rel2abs(__FILE__)), '..', '..', 'docs', 'reference.md');
ok(-f $reference, 'docs/reference.md is found in the repository') or BAIL_OUT("no $reference");

# --- the Configuration table of docs/reference.md -----------------------------------
open my $fh, '<:encoding(UTF-8)', $reference or die "cannot open $reference: $!";
my @lines = <$fh>;
close $fh;
chomp @lines;

# A table row's cells, trimmed, without the outer pipes (an escaped "\|"
# does not split).
sub cells
{
	my ($line) = @_;
	$line =~ s/^\s*\|//;
	$line =~ s/\|\s*$//;
	return map { my $c = $_; $c =~ s/^\s+|\s+$//g; $c =~ s/\\\|/|/g; $c } split /(?<!\\)\|/, $line, -1;
}

my ($in_section, $in_fence, @table);
for my $line (@lines)
{
	# lines of fenced code blocks ("# a comment" in a shell example) are
	# neither headings nor table rows
	if ($line =~ /^\s*(```|~~~)/) { $in_fence = !$in_fence; next; }
	next if $in_fence;
	if ($line =~ /^(#+)\s+(.*?)\s*$/)
	{
		last if $in_section;    # the section ended without (more of) a table
		$in_section = 1 if $2 eq 'Configuration' && length($1) <= 3;
		next;
	}
	next unless $in_section;
	if ($line =~ /^\s*\|/) { push @table, $line; }
	elsif (@table) { last; }    # the end of the first table of the section
}
ok(scalar(@table) >= 3, 'docs/reference.md has a table in its Configuration section')
  or BAIL_OUT('no Configuration table in docs/reference.md');

my @header = map { lc } cells(shift @table);
my %col;
@col{@header} = (0 .. $#header);
for my $h ('parameter', 'type, unit', 'default', 'takes effect')
{
	ok(exists $col{$h}, "the Configuration table has a column \"$h\"")
	  or BAIL_OUT("no column \"$h\" in: @header");
}
like($table[0], qr/^\s*\|(\s*:?-+:?\s*\|)+\s*$/, 'the header of the Configuration table is followed by its delimiter row');
shift @table;

my (%doc, @doc_order);
for my $row (@table)
{
	my @c = cells($row);
	(my $name = $c[ $col{parameter} ]) =~ s/`//g;
	ok(!exists $doc{$name}, "docs/reference.md documents $name once") or next;
	push @doc_order, $name;
	$doc{$name} = {
		type => $c[ $col{'type, unit'} ],
		default => $c[ $col{default} ],
		effect => $c[ $col{'takes effect'} ],
	};
}

# --- pg_settings of a server that preloads syncwf -----------------------------------
my $node = PostgreSQL::Test::Cluster->new('docs_gucs');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'syncwf'");
$node->start;
my %set = map { $_->{name} => $_ } @{
	decode_json(
		$node->safe_psql(
			'postgres', q{
    SELECT coalesce(json_agg(json_build_object(
               'name', name, 'vartype', vartype, 'unit', unit, 'boot_val', boot_val,
               'min_val', min_val, 'max_val', max_val, 'context', context) ORDER BY name), '[]')
      FROM pg_settings WHERE name LIKE 'syncwf.%'}))
};
$node->stop;

ok(scalar(keys %set) > 0, 'a server that preloads syncwf has syncwf.* parameters');
is_deeply([ sort @doc_order ], [ sort keys %set ],
	'the syncwf.* parameters of pg_settings are exactly those docs/reference.md\'s Configuration table lists');

# --- each documented parameter against pg_settings ----------------------------------
my %type_word = (integer => 'integer', string => 'string', boolean => 'bool',
	real => 'real', 'floating point' => 'real', enum => 'enum');
my %unit_word = (
	milliseconds => 'ms', seconds => 's', minutes => 'min', hours => 'h', days => 'd',
	bytes => 'B', kilobytes => 'kB', megabytes => 'MB', gigabytes => 'GB', terabytes => 'TB');
my %effect_word = (restart => 'postmaster', reload => 'sighup', 'any session' => 'user',
	'superuser sessions' => 'superuser');
# Size of each unit in the smallest of its kind, to convert a default
# written with a unit ('5min', '8 MB') into the parameter's unit.
my %unit_size = (
	us => 0.001, ms => 1, s => 1000, min => 60_000, h => 3_600_000, d => 86_400_000,
	B => 1, kB => 1024, MB => 1024**2, GB => 1024**3, TB => 1024**4);
my %unit_kind = (
	(map { $_ => 'time' } qw(us ms s min h d)),
	(map { $_ => 'memory' } qw(B kB MB GB TB)));

# A number as docs/reference.md writes it ("110,000", "110 000") as pg_settings does.
sub plain_number { my ($n) = @_; $n =~ s/[,\x{202f}\x{a0} _]//g; return $n; }

for my $name (grep { exists $set{$_} } @doc_order)
{
	my ($d, $s) = ($doc{$name}, $set{$name});

	# "integer, seconds (`'5min'` is accepted; 1 – 2147483)", "boolean", ...
	my ($type_cell, $range) = ($d->{type}, undef);
	$range = $1 if $type_cell =~ s/\s*\((.*)\)\s*$//;
	my ($type, $unit) = map { s/^\s+|\s+$//gr } split /,/, $type_cell, 2;
	is($type_word{ lc $type } // "undocumented type word '$type'", $s->{vartype},
		"the reference's type of $name ($type) is its vartype");
	my $doc_unit = defined $unit ? ($unit_word{ lc $unit } // "undocumented unit word '$unit'") : undef;
	is($doc_unit, $s->{unit}, "the reference's unit of $name (" . ($unit // 'none') . ') is its unit');

	if ($s->{vartype} eq 'integer' || $s->{vartype} eq 'real')
	{
		my ($min, $max) =
		  defined $range && $range =~ /(?:^|;)\s*(-?[\d.,\x{202f}]+)\s*(?:–|—|-|to)\s*(-?[\d.,\x{202f}]+)\s*$/
		  ? (plain_number($1), plain_number($2))
		  : ('no range', 'no range');
		is("$min .. $max", "$s->{min_val} .. $s->{max_val}", "the reference's range of $name is its min_val .. max_val");
	}

	# the default: `postgres`, `on`, 110000, 300 (in the unit of the type
	# column) or a number with its own unit
	my $default = $d->{default} =~ s/`//gr;
	$default =~ s/^'(.*)'$/$1/;
	if ($s->{vartype} eq 'bool')
	{
		$default = { true => 'on', yes => 'on', 1 => 'on', on => 'on',
			false => 'off', no => 'off', 0 => 'off', off => 'off' }->{ lc $default } // $default;
	}
	elsif ($s->{vartype} eq 'integer' || $s->{vartype} eq 'real')
	{
		if ($default =~ /^(-?[\d.,\x{202f}]+)\s*([a-zA-Z]+)$/
			&& defined $s->{unit} && exists $unit_size{$2} && exists $unit_size{ $s->{unit} }
			&& $unit_kind{$2} eq $unit_kind{ $s->{unit} })
		{
			$default = plain_number($1) * $unit_size{$2} / $unit_size{ $s->{unit} };
		}
		else
		{
			$default = plain_number($default);
		}
	}
	is($default, $s->{boot_val}, "the reference's default of $name ($d->{default}) is its boot_val");

	is($effect_word{ lc $d->{effect} } // "undocumented takes-effect word '$d->{effect}'",
		$s->{context}, "the reference's \"takes effect\" of $name ($d->{effect}) matches its context");
}

done_testing();
