#!/usr/bin/perl
# test/release/versions.t: the release version agrees everywhere it is written.
#
# The extension's SQL version X.Y is default_version in syncwf.control; a
# release is X.Y.Z (semantic version: the extension version plus a patch
# number).  A release that bumps one place and forgets another ships a PGXN
# zip, a Debian package or a README that names the wrong version, so this
# checks, with core Perl only:
#
#   META.json            version and provides.syncwf.version are X.Y.Z
#   debian/changelog     first line "syncwf (X.Y.Z-N) ..."
#   CHANGELOG.md         "## [X.Y.Z] - date" is the newest entry (after an
#                        optional "## [Unreleased]"); there is an entry V.0
#                        for every extension version V the update scripts
#                        syncwf--A--B.sql name; dates never increase downwards
#   Makefile             DATA names syncwf--X.Y.sql, and that file exists
#   README.md, docs/     every release file name (syncwf-X.Y.Z.zip,
#                        syncwf_X.Y.Z-N_amd64.deb, syncwf-X.Y.Z/) uses X.Y.Z
#   docs/operations.md   "(`syncwf.control`, now X.Y)"
#
# Run from anywhere: prove test/release/versions.t.  SYNCWF_RELEASE_ROOT
# points it at another copy of the repository.

use strict;
use warnings;

use File::Find ();
use File::Spec;
use FindBin;
use JSON::PP;
use Test::More;

my $ROOT = $ENV{SYNCWF_RELEASE_ROOT}
    // File::Spec->catdir($FindBin::Bin, File::Spec->updir, File::Spec->updir);

# ---- reading ---------------------------------------------------------------

sub path_of { return File::Spec->catfile($ROOT, split m{/}, $_[0]) }

# The text of a repository file, or undef if it cannot be read.
sub slurp {
    my ($rel) = @_;
    open my $fh, '<:encoding(UTF-8)', path_of($rel) or return undef;
    local $/;
    return scalar <$fh>;
}

# ---- parsers (pure: text in, values out) -----------------------------------

# default_version = 'X.Y' in a control file.
sub control_version {
    my ($text) = @_;
    return $text =~ /^\s*default_version\s*=\s*'(\d+\.\d+)'\s*$/m ? $1 : undef;
}

# (upstream version, Debian revision) from a debian/changelog's first line.
sub debian_version {
    my ($text) = @_;
    my ($first) = split /\n/, $text // '', 2;
    return ($first // '') =~ /\Asyncwf \((\d+\.\d+\.\d+)-([0-9A-Za-z.+~]+)\) / ? ($1, $2) : ();
}

# Every "## " heading of a Keep a Changelog file, in order, as
# { line, text, version, date }; version is "Unreleased" for that heading,
# version and date are undef for a heading of neither form.
sub changelog_entries {
    my ($text) = @_;
    my ($n, @entries) = (0);
    for my $line (split /\n/, $text) {
        $n++;
        next unless $line =~ /^## /;
        my %e = (line => $n, text => $line);
        if ($line =~ /^## \[Unreleased\]\s*$/i) {
            $e{version} = 'Unreleased';
        } elsif ($line =~ /^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})\s*$/) {
            @e{qw(version date)} = ($1, $2);
        }
        push @entries, \%e;
    }
    return @entries;
}

sub released { return grep { ($_->{version} // '') ne 'Unreleased' } @_ }

# The extension versions the repository's SQL scripts name: A and B of every
# update script syncwf--A--B.sql, V of every full script syncwf--V.sql.
sub script_versions {
    my (@files) = @_;
    my %v;
    for (@files) {
        if (/\Asyncwf--(\d+\.\d+)--(\d+\.\d+)\.sql\z/) { @v{$1, $2} = () }
        elsif (/\Asyncwf--(\d+\.\d+)\.sql\z/)          { $v{$1} = undef }
    }
    return sort { cmp_ext($a, $b) } keys %v;
}

sub cmp_ext {
    my @a = split /\./, $_[0];
    my @b = split /\./, $_[1];
    return $a[0] <=> $b[0] || $a[1] <=> $b[1];
}

# The words of the Makefile variable DATA (with \ continuation lines).
sub makefile_data {
    my ($text) = @_;
    $text =~ s/\\\n/ /g;
    return $text =~ /^DATA\s*[:+?]?=\s*(.*)$/m ? split ' ', $1 : ();
}

# A release file name: syncwf-X.Y.Z.zip and its folder syncwf-X.Y.Z/ (PGXN),
# [postgresql-NN-]syncwf_X.Y.Z-N_arch.deb and syncwf_X.Y.Z.orig.tar.gz
# (Debian), syncwf/X.Y.Z/ (a PGXN URL).  $1 is the whole name, $2 X.Y.Z.
my $RELEASE_FILE = qr{
    (?<![\w.-])
    ( (?:[\w.-]+-)? syncwf [-_/] (\d+\.\d+\.\d+) (?!\d) [\w.+~-]* /? )
}x;

# Release file names in a text: [line, name, X.Y.Z].
sub release_mentions {
    my ($text) = @_;
    my ($n, @found) = (0);
    for my $line (split /\n/, $text) {
        $n++;
        while ($line =~ /$RELEASE_FILE/g) {
            push @found, [$n, $1 =~ s/\.\z//r, $2];
        }
    }
    return @found;
}

# ---- checks (each returns a list of errors) --------------------------------

sub debian_errors {
    my ($text, $release) = @_;
    return ('debian/changelog is missing') if !defined $text;
    my ($first) = split /\n/, $text, 2;
    my ($upstream) = debian_version($text);
    return ("debian/changelog's first line is not \"syncwf (X.Y.Z-N) ...\": "
            . ($first // '(empty)')) if !defined $upstream;
    return $upstream eq $release ? ()
         : ("debian/changelog holds $upstream (\"$first\"), not $release");
}

# The newest entry, after an optional Unreleased, is [release] with a date.
sub changelog_top_errors {
    my ($release, @entries) = @_;
    shift @entries if @entries && ($entries[0]{version} // '') eq 'Unreleased';
    my $top = $entries[0];
    return ("CHANGELOG.md has no version entry after [Unreleased]; want \"## [$release] - YYYY-MM-DD\"")
        if !$top;
    return () if ($top->{version} // '') eq $release && $top->{date};
    return ("CHANGELOG.md's newest entry (line $top->{line}) is \"$top->{text}\", "
            . "not \"## [$release] - YYYY-MM-DD\"");
}

sub changelog_form_errors {
    my (@entries) = @_;
    my @errs = map { "CHANGELOG.md line $_->{line}: \"$_->{text}\" is neither "
                     . '"## [Unreleased]" nor "## [X.Y.Z] - YYYY-MM-DD"' }
        grep { !defined $_->{version} } @entries;
    push @errs, map { "CHANGELOG.md line $_->{line}: [Unreleased] must be the first entry" }
        grep { ($_->{version} // '') eq 'Unreleased' } @entries[1 .. $#entries];
    my %seen;
    push @errs, map { "CHANGELOG.md line $_->{line}: a second entry for $_->{version}" }
        grep { defined $_->{date} && $seen{$_->{version}}++ } @entries;
    return @errs;
}

sub changelog_coverage_errors {
    my ($versions, @entries) = @_;
    my %have = map { $_->{version} => 1 } grep { defined $_->{date} } @entries;
    return map { "CHANGELOG.md has no entry \"## [$_.0] - YYYY-MM-DD\" for extension version $_" }
        grep { !$have{"$_.0"} } @$versions;
}

sub changelog_date_errors {
    my (@entries) = grep { defined $_->{date} } @_;
    my @errs = map { "CHANGELOG.md line $_->{line}: $_->{date} is not a calendar date" }
        grep { !valid_date($_->{date}) } @entries;
    for my $i (1 .. $#entries) {
        my ($newer, $older) = @entries[$i - 1, $i];
        push @errs, "CHANGELOG.md line $older->{line}: [$older->{version}] is dated "
            . "$older->{date}, after [$newer->{version}] above it ($newer->{date})"
            if $older->{date} gt $newer->{date};
    }
    return @errs;
}

sub valid_date {
    my ($y, $m, $d) = split /-/, $_[0];
    my @days = (31, ($y % 4 == 0 && $y % 100 != 0 || $y % 400 == 0) ? 29 : 28,
                31, 30, 31, 30, 31, 31, 30, 31, 30, 31);
    return $m >= 1 && $m <= 12 && $d >= 1 && $d <= $days[$m - 1];
}

sub mention_errors {
    my ($file, $text, $release) = @_;
    return map { "$file line $_->[0] holds $_->[1] (version $_->[2], not $release)" }
        grep { $_->[2] ne $release } release_mentions($text);
}

# ---- what the repository says ----------------------------------------------

sub top_files {
    opendir my $dh, $ROOT or return ();
    return sort grep { -f path_of($_) } readdir $dh;
}

sub doc_files {
    my @docs = ('README.md');
    my $dir = path_of('docs');
    File::Find::find({ no_chdir => 1, wanted => sub {
        push @docs, 'docs/' . File::Spec->abs2rel($_, $dir) =~ s{\\}{/}gr
            if -f $_ && /\.md\z/;
    } }, $dir) if -d $dir;
    return sort @docs;
}

sub read_meta {
    my $text = slurp('META.json');
    return undef if !defined $text;
    return eval { JSON::PP->new->decode($text) };
}

# ---- the tests -------------------------------------------------------------

my $control = slurp('syncwf.control');
my $ext = defined $control ? control_version($control) : undef;
ok(defined $ext, 'syncwf.control has default_version = \'X.Y\'')
    or diag defined $control ? 'no default_version line of that form' : 'syncwf.control is missing';
$ext //= '(unknown)';

my $meta = read_meta();
my $release = ref $meta eq 'HASH' ? $meta->{version} : undef;
ok(defined $release && !ref $release && $release =~ /\A\Q$ext\E\.\d+\z/,
   "META.json version is $ext.Z (default_version $ext plus a patch number)")
    or diag 'META.json ' . (ref $meta eq 'HASH' ? 'holds version ' . ($release // '(none)')
                                                : 'is missing or not a JSON object');
$release = "$ext.0" if !defined $release || ref $release;
note "release version: $release";

my $pv = ref $meta eq 'HASH' ? $meta->{provides}{syncwf}{version} : undef;
is($pv // '(none)', $release, "META.json provides.syncwf.version is $release");

my @debian = debian_errors(slurp('debian/changelog'), $release);
ok(!@debian, "debian/changelog's first line is \"syncwf ($release-N) ...\"")
    or diag join "\n", @debian;

my $changelog = slurp('CHANGELOG.md');
ok(defined $changelog, 'CHANGELOG.md exists') or diag 'CHANGELOG.md is missing at ' . path_of('CHANGELOG.md');
my @entries = changelog_entries($changelog // '');
my @ext_versions = script_versions(top_files());
push @ext_versions, $ext if !grep { $_ eq $ext } @ext_versions;
changelog_ok("CHANGELOG.md's newest entry is [$release] - date (after an optional [Unreleased])",
    changelog_top_errors($release, @entries));
changelog_ok('CHANGELOG.md level-2 headings are [Unreleased] then [X.Y.Z] - YYYY-MM-DD, one per version',
    changelog_form_errors(@entries));
changelog_ok('CHANGELOG.md has an entry V.0 for every extension version (' . join(', ', @ext_versions) . ')',
    changelog_coverage_errors(\@ext_versions, @entries));
changelog_ok('CHANGELOG.md entry dates never increase from top to bottom',
    changelog_date_errors(@entries));

sub changelog_ok {
    my ($name, @errs) = @_;
    @errs = ('CHANGELOG.md is missing') if !defined $changelog;
    ok(!@errs, $name) or diag join "\n", @errs;
}

my @data = makefile_data(slurp('Makefile') // '');
ok((grep { $_ eq "syncwf--$ext.sql" } @data), "Makefile DATA names syncwf--$ext.sql")
    or diag 'Makefile DATA is: ' . (@data ? "@data" : '(not found)');
ok(-f path_of("syncwf--$ext.sql"), "syncwf--$ext.sql exists")
    or diag 'missing: ' . path_of("syncwf--$ext.sql");

my (@mentions, @wrong);
for my $file (doc_files()) {
    my $text = slurp($file) // next;
    push @mentions, release_mentions($text);
    push @wrong, mention_errors($file, $text, $release);
}
note scalar(@mentions) . ' release file name(s) in README.md and docs/';
ok(!@wrong, "release file names in README.md and docs/ all use $release")
    or diag join "\n", @wrong;

my $ops = slurp('docs/operations.md');
my ($said) = ($ops // '') =~ /`syncwf\.control`,\s+now\s+(\d+\.\d+)\)/;
is($said // (defined $ops ? '(no sentence "`syncwf.control`, now X.Y)")' : '(docs/operations.md is missing)'),
   $ext, "docs/operations.md says the extension version is now $ext");

# ---- self-tests of the parsers and checks ------------------------------------

is(control_version("comment = 'x'\ndefault_version = '2.3'\n"), '2.3',
   'self-test: control_version reads default_version');
is_deeply([debian_version("syncwf (1.6.2-3) unstable; urgency=medium\n")], ['1.6.2', '3'],
   'self-test: debian_version reads upstream version and revision');
ok(scalar(debian_errors("syncwf (1.6.0-1) unstable; urgency=medium\n", '1.7.0')),
   'self-test: a debian/changelog with 1.6.0 is an error against 1.7.0');
my @sample = changelog_entries(join "\n", '# Changelog', '## [Unreleased]',
    '## [1.7.0] - 2026-11-28', '## [1.6.0] - 2026-12-01', '## [1.4.0] - 2026-01-01', '## 1.3');
ok(!changelog_top_errors('1.7.0', @sample), 'self-test: [1.7.0] under [Unreleased] is the newest entry');
ok(scalar(changelog_top_errors('1.8.0', @sample)), 'self-test: [1.7.0] on top is an error against 1.8.0');
ok(scalar(changelog_date_errors(@sample)), 'self-test: a date later than the entry above is an error');
is_deeply([changelog_coverage_errors(['1.4', '1.5'], @sample)],
   ['CHANGELOG.md has no entry "## [1.5.0] - YYYY-MM-DD" for extension version 1.5'],
   'self-test: a missing extension version is an error naming it');
ok(scalar(changelog_form_errors(@sample)), 'self-test: a level-2 heading "1.3" (no brackets, no date) is an error');
is_deeply([script_versions(qw(syncwf--1.0.sql syncwf--1.0--1.1.sql syncwf--1.9--1.10.sql x.sql))],
   ['1.0', '1.1', '1.9', '1.10'], 'self-test: script_versions reads the SQL script names');
is_deeply([map { $_->[1] } release_mentions(
    "get dist/syncwf-1.6.0.zip, unzip to syncwf-1.6.0/ then\n"
    . "dpkg -i postgresql-15-syncwf_1.6.0-1_amd64.deb; 8-launch-syncwf-1 is no file\n")],
   ['syncwf-1.6.0.zip', 'syncwf-1.6.0/', 'postgresql-15-syncwf_1.6.0-1_amd64.deb'],
   'self-test: release_mentions finds zip, folder and Debian file names only');
ok(scalar(mention_errors('README.md', 'see dist/syncwf-1.6.0.zip', '1.7.0')),
   'self-test: a README naming syncwf-1.6.0.zip is an error against 1.7.0');

done_testing();
