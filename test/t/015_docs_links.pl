# Every relative link of the documentation leads somewhere.
#
# For each Markdown link of README.md, docs/*.md, docs/architecture/*.md,
# examples/README.md, and src/README.md and src/*/README.md where they exist,
# whose target has no scheme (http:, https:, mailto:, ... are left alone):
#
#  - the file it names exists, relative to the linking file (a target that
#    is only "#anchor" names the linking file itself);
#  - an "#anchor" into a .md file is the anchor of one of that file's
#    headings, as GitHub makes them: the heading's text lowercased, every
#    character but letters, digits, "_", "-" and spaces removed, spaces
#    turned into "-"; the second heading with the same anchor gets "-1",
#    the third "-2", and so on.
#
# Fenced code blocks and code spans hold no links and no headings.  Also,
# every page docs/*.md is linked from README.md or from docs/README.md (the
# index of docs/, when there is one, itself linked from README.md), and
# every page docs/architecture/*.md from docs/architecture.md.
#
# The architecture pages (docs/architecture.md, docs/architecture/*.md) are
# wrapped: outside fenced code blocks, tables and lines holding a URL, no
# line is longer than 100 characters.  Needs no server.
use strict;
use warnings FATAL => 'all';
use utf8;

use Cwd qw(abs_path);
use File::Basename qw(dirname);
use File::Spec;
use Test::More;

# The repository root is test/t/../.., whatever the current directory
# (scripts/test.sh runs prove from test/).
my $root = abs_path(File::Spec->catdir(dirname(File::Spec->rel2abs(__FILE__)), '..', '..'));
ok(-f "$root/README.md", 'README.md is found in the repository root') or BAIL_OUT("no $root/README.md");

# The Markdown files directly in a directory of the repository, as paths
# relative to the root, sorted; none when the directory does not exist.
sub md_files_in
{
	my ($dir) = @_;
	opendir my $dh, "$root/$dir" or return ();
	my @files = map { "$dir/$_" } sort grep { /\.md$/ && -f "$root/$dir/$_" } readdir $dh;
	closedir $dh;
	return @files;
}

my @pages = md_files_in('docs');
ok(scalar(@pages) > 0, 'docs/ has Markdown pages (' . scalar(@pages) . ')');
my @arch_pages = md_files_in('docs/architecture');
ok(scalar(@arch_pages) > 0, 'docs/architecture/ has Markdown pages (' . scalar(@arch_pages) . ')');

# The folder READMEs of src/, once they exist: src/README.md and
# src/<subsystem>/README.md.
my @src_readmes = grep { -f "$root/$_" } 'src/README.md';
if (opendir my $sh, "$root/src")
{
	push @src_readmes, map { "src/$_/README.md" }
	  sort grep { !/^\./ && -d "$root/src/$_" && -f "$root/src/$_/README.md" } readdir $sh;
	closedir $sh;
}

# A path relative to the repository root, for messages.
sub rel
{
	my ($path) = @_;
	return File::Spec->abs2rel($path, $root);
}

# The lines of a Markdown file, with every line of a fenced code block
# (fences included) blanked, so that line numbers stay.
sub prose_lines
{
	my ($file) = @_;
	open my $fh, '<:encoding(UTF-8)', $file or die "cannot open $file: $!";
	my @lines = <$fh>;
	close $fh;
	chomp @lines;
	my ($fence, @out);
	for my $line (@lines)
	{
		if (defined $fence)
		{
			# a fence closes with at least as many of the same character
			my ($char, $len) = (substr($fence, 0, 1), length $fence);
			undef $fence if $line =~ /^\s*\Q$char\E{$len,}\s*$/;
			push @out, '';
		}
		elsif ($line =~ /^\s*(`{3,}|~{3,})/)
		{
			$fence = $1;
			push @out, '';
		}
		else
		{
			push @out, $line;
		}
	}
	return @out;
}

# The text with the brackets and parentheses of code spans turned into
# spaces: same length, so offsets into it are offsets into the text.
sub mask_code_spans
{
	my ($text) = @_;
	$text =~ s{(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)}{$1 . ($2 =~ tr/[]()/    /r) . $1}gse;
	return $text;
}

# A heading's anchor before duplicates are numbered (GitHub's rule).
sub slug
{
	my ($text) = @_;
	$text =~ s/!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^)]*\)/$1/g;    # a link counts by its text
	$text = lc $text;
	$text =~ s/[^\p{Word}\- ]//g;
	$text =~ s/ /-/g;
	return $text;
}

# The anchors of the headings of a Markdown file, as a set.
my %anchor_cache;

sub anchors
{
	my ($file) = @_;
	return $anchor_cache{$file} //= do {
		my (%ids, %seen);
		for my $line (prose_lines($file))
		{
			next unless $line =~ /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$/;
			my $text = $2 // '';
			$text =~ s/(?:^|[ \t]+)#+$//;    # an optional closing sequence
			my $id = slug($text);
			my $n = $seen{$id}++;
			$ids{ $n ? "$id-$n" : $id } = 1;
		}
		\%ids;
	};
}

sub uri_unescape
{
	my ($s) = @_;
	$s =~ s/%([0-9A-Fa-f]{2})/chr(hex $1)/ge;
	return $s;
}

# [text](target "title"), ![alt](target), and reference definitions
# "[label]: target": each as [line number, link as written, target].
sub links_of
{
	my ($file) = @_;
	my $prose = join("\n", prose_lines($file)) . "\n";
	my $text = mask_code_spans($prose);
	my @links;
	while ($text =~ m{
			!?\[ (?: [^\[\]] | \[ [^\[\]]* \] )* \]
			\( \s* ( <[^<>\n]*> | [^\s()]* (?: \( [^\s()]* \) [^\s()]* )* )
			(?: \s+ (?: "[^"]*" | '[^']*' | \( [^()]* \) ) )? \s* \)
		}gx)
	{
		my ($start, $end, $target) = ($-[0], $+[0], $1);
		my $line = 1 + (substr($text, 0, $start) =~ tr/\n//);
		my $link = substr($prose, $start, $end - $start) =~ s/\s*\n\s*/ /gr;
		$target =~ s/^<(.*)>$/$1/;
		push @links, [ $line, $link, $target ];
	}
	while ($text =~ m{^ {0,3}\[[^\]]+\]:[ \t]*(<[^<>\n]*>|\S+)}gm)
	{
		my ($start, $end, $target) = ($-[0], $+[0], $1);
		my $line = 1 + (substr($text, 0, $start) =~ tr/\n//);
		my $link = substr($prose, $start, $end - $start);
		$target =~ s/^<(.*)>$/$1/;
		push @links, [ $line, $link, $target ];
	}
	return @links;
}

my @checked = ('README.md', @pages, @arch_pages, 'examples/README.md', @src_readmes);
my (@broken, %linked_from, $count);
for my $page (@checked)
{
	my $from = "$root/$page";
	for my $l (links_of($from))
	{
		my ($line, $link, $target) = @$l;
		next if $target =~ m{^[A-Za-z][A-Za-z0-9+.-]*:} || $target =~ m{^//};
		$count++;
		my ($path, $anchor) = split /#/, $target, 2;
		$path = uri_unescape($path);
		my $file =
			$path eq '' ? $from
		  : $path =~ m{^/} ? "$root$path"
		  : File::Spec->catfile(dirname($from), $path);
		if (!-e $file)
		{
			push @broken, "$page:$line: $link: no file " . rel(File::Spec->canonpath($file));
			next;
		}
		$file = abs_path($file);
		push @{ $linked_from{$file} }, $page;
		next unless defined $anchor && $anchor ne '' && $file =~ /\.md$/i && -f $file;
		$anchor = uri_unescape($anchor);
		push @broken, "$page:$line: $link: no heading of " . rel($file) . " has the anchor #$anchor"
		  unless anchors($file)->{$anchor};
	}
}
ok($count > 50, "the documentation has relative links ($count)");
note('checked: ' . join(' ', @checked));
is_deeply(\@broken, [], 'every relative link of the documentation (' . scalar(@checked) . ' files) resolves, anchors included')
  or diag("broken links:\n" . join("\n", map { "  $_" } @broken));

# Every page of docs/ can be reached from README.md: linked from it, or from
# docs/README.md, which README.md links to.
my @unlinked;
for my $page (@pages)
{
	my @index = $page eq 'docs/README.md' ? ('README.md') : ('README.md', 'docs/README.md');
	my %from = map { $_ => 1 } @{ $linked_from{ abs_path("$root/$page") } // [] };
	push @unlinked, $page unless grep { $from{$_} } @index;
}
is_deeply(\@unlinked, [], 'every page of docs/ is linked from README.md or from the index docs/README.md')
  or diag("pages not linked from the index:\n" . join("\n", map { "  $_" } @unlinked));

# Every page of docs/architecture/ is linked from the overview.
my @unlinked_arch;
for my $page (@arch_pages)
{
	my %from = map { $_ => 1 } @{ $linked_from{ abs_path("$root/$page") } // [] };
	push @unlinked_arch, $page unless $from{'docs/architecture.md'};
}
is_deeply(\@unlinked_arch, [], 'every page of docs/architecture/ is linked from docs/architecture.md')
  or diag("pages not linked from docs/architecture.md:\n" . join("\n", map { "  $_" } @unlinked_arch));

# The architecture pages are wrapped at 100 characters, except in fenced
# code blocks (blanked by prose_lines), tables and lines holding a URL.
my @long;
for my $page ('docs/architecture.md', @arch_pages)
{
	my $n = 0;
	for my $line (prose_lines("$root/$page"))
	{
		$n++;
		next if $line =~ /^\s*\|/ || $line =~ m{[A-Za-z][A-Za-z0-9+.-]*://};
		push @long, "$page:$n: " . length($line) . ' characters' if length($line) > 100;
	}
}
is_deeply(\@long, [], 'no line of the architecture pages is longer than 100 characters (tables, code and URLs aside)')
  or diag("long lines:\n" . join("\n", map { "  $_" } @long));

done_testing();
