# The source is five subsystems that only call downward, as src/README.md
# and each folder's README.md say.
#
# From the READMEs:
#
#  - src/README.md lists the subsystems in order, bottom first, each a
#    folder of src/ with a README.md; no other folder holds code;
#  - each folder's README names its public header (or none), its internal
#    headers and the subsystems it may call (only ones listed before it),
#    and has a table with every file of the folder, and no other.
#
# From the sources:
#
#  - a header of a folder is its public header or one of its internal
#    headers; a file outside the folder includes only the public one, and
#    only of a subsystem its own may call;
#  - no file of src/ is longer than 800 lines, and no function longer than
#    100 (from the line with its name to its closing brace).
#
# From the object files the test command built (SYNCWF_BUILD_DIR, read
# with nm):
#
#  - every symbol a file uses from another subsystem is defined in one its
#    own may call, and declared in that subsystem's public header;
#  - every function or variable a file exports is used by another file, or
#    by PostgreSQL (an SQL function with its pg_finfo_ record, _PG_init,
#    Pg_magic_func, the two workers' entry points): file-local ones are
#    static.
use strict;
use warnings FATAL => 'all';

use File::Basename qw(basename dirname);
use File::Spec;
use PostgreSQL::Test::Utils;
use Test::More;

my $root = File::Spec->catdir(dirname(File::Spec->rel2abs(__FILE__)), '..', '..');
my $src = File::Spec->catdir($root, 'src');
my $build = $ENV{SYNCWF_BUILD_DIR};
plan skip_all => 'SYNCWF_BUILD_DIR is not set (scripts/suite.sh sets it)'
  unless defined $build && -d "$build/src";

# --- the order, from src/README.md ------------------------------------------------------
my @order;
for my $line (split /\n/, slurp_file("$src/README.md"))
{
	push @order, $1 if $line =~ /^\d+\.\s+\[`([a-z]+)\/`\]\(\1\/README\.md\)/;
}
ok(@order >= 4, 'src/README.md lists the subsystems in order: ' . join(' < ', @order))
  or BAIL_OUT('no list of subsystems in src/README.md');
my %rank = map { $order[$_] => $_ } 0 .. $#order;

opendir my $dh, $src or die "cannot open $src: $!";
my @folders = sort grep { -d "$src/$_" && !/^\./ } readdir $dh;
closedir $dh;
is_deeply(\@folders, [ sort @order ], 'the folders of src/ are the subsystems of src/README.md');
opendir $dh, $src or die;
is_deeply([ sort grep { /\.[ch]$/ } readdir $dh ], [], 'no source file lies outside a subsystem');
closedir $dh;

# --- each folder's README -----------------------------------------------------------
my (%public, %internal, %may_call, %subsystem_of, @files);
for my $sub (@order)
{
	my $readme = "$src/$sub/README.md";
	ok(-f $readme, "$sub/README.md exists") or next;
	my $text = slurp_file($readme);
	my ($pub) = $text =~ /^- Public header: (.*)$/m;
	my ($int) = $text =~ /^- Internal headers: (.*)$/m;
	my ($calls) = $text =~ /^- May call: (.*)$/m;
	ok(defined $pub && defined $int && defined $calls,
		"$sub/README.md names its public header, internal headers and callees")
	  or next;
	($public{$sub}) = $pub =~ /`\Q$sub\E\/([a-z_]+\.h)`/;
	is($public{$sub} // 'none', $pub =~ /^none\b/ ? 'none' : "$sub.h",
		"$sub/: the public header is $sub/$sub.h or none");
	$internal{$sub} = { map { $_ => 1 } $int =~ /`\Q$sub\E\/([a-z_]+\.h)`/g };
	$may_call{$sub} = { map { $_ => 1 } ($calls =~ /^nothing/ ? () : split /,\s*/, $calls) };
	my @bad = grep { !exists $rank{$_} || $rank{$_} >= $rank{$sub} } keys %{ $may_call{$sub} };
	is_deeply(\@bad, [], "$sub/ may call only subsystems listed before it");

	my %listed = map { $_ => 1 } $text =~ /^\|\s*`([a-z_0-9]+\.[ch])`\s*\|/mg;
	opendir my $fd, "$src/$sub" or die;
	my @here = sort grep { /\.[ch]$/ } readdir $fd;
	closedir $fd;
	is_deeply([ sort keys %listed ], \@here, "$sub/README.md lists exactly the files of $sub/");
	for my $f (@here)
	{
		$subsystem_of{"$sub/$f"} = $sub;
		push @files, "$sub/$f";
		next unless $f =~ /\.h$/;
		ok(($public{$sub} // '') eq $f || $internal{$sub}{$f},
			"$sub/$f is the public header of $sub/ or one of its internal ones");
	}
}

# --- includes ------------------------------------------------------------------------
my @bad_includes;
for my $file (@files)
{
	my $sub = $subsystem_of{$file};
	for my $inc (slurp_file("$src/$file") =~ /^\s*#\s*include\s+"([^"]+)"/mg)
	{
		my ($isub, $ih) = $inc =~ m{^([a-z]+)/([a-z_]+\.h)$};
		next unless defined $isub && exists $rank{$isub};
		next if $isub eq $sub;
		push @bad_includes, "$file includes $inc"
		  unless $may_call{$sub}{$isub} && ($public{$isub} // '') eq $ih;
	}
	for my $inc (slurp_file("$src/$file") =~ /^\s*#\s*include\s+"([a-z_]+\.h)"/mg)
	{
		push @bad_includes, "$file includes $inc without its folder"
		  if -f "$src/$sub/$inc";
	}
}
is_deeply(\@bad_includes, [],
	'outside a subsystem only its public header is included, by subsystems that may call it');

# --- sizes ---------------------------------------------------------------------------
my (@long_files, @long_functions);
for my $file (@files)
{
	my @lines = split /\n/, slurp_file("$src/$file"), -1;
	push @long_files, "$file: " . (@lines - 1) . ' lines' if @lines - 1 > 800;
	next unless $file =~ /\.c$/;
	for my $i (0 .. $#lines)
	{
		next unless $lines[$i] eq '{';
		# a function's body opens with "{" alone, within a few lines of its name
		my ($name, $start);
		for my $j (reverse(($i > 6 ? $i - 6 : 0) .. $i - 1))
		{
			if ($lines[$j] =~ /^(\w+)\(/) { ($name, $start) = ($1, $j); last; }
			last if $lines[$j] =~ /^$|[;}]\s*$/;
		}
		next unless defined $name;
		my $end = $i;
		$end++ while $end < $#lines && $lines[$end] ne '}';
		my $n = $end - $start + 1;
		push @long_functions, "$file: $name, $n lines" if $n > 100;
	}
}
is_deeply(\@long_files, [], 'no file of src/ is longer than 800 lines');
is_deeply(\@long_functions, [], 'no function is longer than 100 lines');

# --- calls, from the object files -----------------------------------------------------
my (%defined_in, %uses);
for my $file (grep { /\.c$/ } @files)
{
	(my $obj = "$build/src/$file") =~ s/\.c$/.o/;
	ok(-f $obj, "$file was built") or next;
	my $out = `nm $obj`;
	die "nm $obj failed" if $? != 0;
	for (split /\n/, $out)
	{
		if (/^[0-9a-f]+\s+[TDBRC]\s+(\S+)$/) { $defined_in{$1} = $file; }
		elsif (/^\s+U\s+(\S+)$/) { $uses{$file}{$1} = 1; }
	}
}

my (@upward, @undeclared, %used_elsewhere);
my %public_text = map {
	$_ => (defined $public{$_} ? slurp_file("$src/$_/$public{$_}") : '')
} @order;
for my $file (sort keys %uses)
{
	my $sub = $subsystem_of{$file};
	for my $sym (sort keys %{ $uses{$file} })
	{
		my $def = $defined_in{$sym};
		next unless defined $def && $def ne $file;
		$used_elsewhere{$sym} = 1;
		my $dsub = $subsystem_of{$def};
		next if $dsub eq $sub;
		push @upward, "$file ($sub) uses $sym of $def ($dsub)"
		  unless $may_call{$sub}{$dsub};
		push @undeclared, "$sym of $def, used by $file, is not in $dsub/" . ($public{$dsub} // '(none)')
		  unless $public_text{$dsub} =~ /\b\Q$sym\E\b/;
	}
}
is_deeply(\@upward, [], 'every call to another subsystem goes to one the caller may call');
is_deeply(\@undeclared, [], 'what other subsystems use is declared in the public header');

my @exported_unused;
for my $sym (sort keys %defined_in)
{
	next if $used_elsewhere{$sym};
	next if $sym =~ /^pg_finfo_/ || exists $defined_in{"pg_finfo_$sym"};
	next if $sym =~ /^(_PG_init|Pg_magic_func|sync_worker_main|sync_rate_worker_main)$/;
	push @exported_unused, "$defined_in{$sym}: $sym";
}
is_deeply(\@exported_unused, [], 'what no other file uses is static');

done_testing();
