#!/usr/bin/perl
# test/release/meta_spec.t: META.json is valid against the PGXN Meta Spec
# 1.0.0 (https://pgxn.org/spec/, canonical text https://pgxn.org/meta/spec.txt).
#
# PGXN Manager refuses a distribution whose META.json does not validate, and
# the message it gives comes late (at upload).  This test checks the file here,
# with core Perl only: the required keys and their types, the spec's Term,
# Tag, Version and Version Range formats, the known license strings, the
# prereqs phases and relationships, custom keys (x_ / X_), and that every file
# META.json names (provides' file and docfile, no_index) is in the repository.
#
# Run from anywhere: prove test/release/meta_spec.t.  SYNCWF_RELEASE_ROOT
# points it at another copy of the repository.
#
# Where the spec's prose and the reference validators differ, this follows
# what both validators accept (see the comments at SEMVER and tag_errors).

use strict;
use warnings;

use B ();
use File::Spec;
use FindBin;
use JSON::PP;
use Test::More;

my $ROOT = $ENV{SYNCWF_RELEASE_ROOT}
    // File::Spec->catdir($FindBin::Bin, File::Spec->updir, File::Spec->updir);

# Semantic Versioning 2.0.0, the regular expression semver.org suggests.  The
# spec's prose (written against SemVer 1.0.0-beta) also shows "2.0.0alpha3",
# a special version without the dash; both PGXN validators (pgxn/meta's JSON
# schema and PGXN::Meta::Validator through SemVer.pm) now require SemVer 2.
my $IDENT  = qr/(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)/;
my $SEMVER = qr/(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)
                (?:-$IDENT(?:\.$IDENT)*)?
                (?:\+[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*)?/x;

my %LICENSES = map { $_ => 1 } qw(
    agpl_3 apache_1_1 apache_2_0 artistic_1 artistic_2 bsd freebsd gfdl_1_2
    gfdl_1_3 gpl_1 gpl_2 gpl_3 lgpl_2_1 lgpl_3_0 mit mozilla_1_0 mozilla_1_1
    openssl perl_5 postgresql qpl_1_0 ssleay sun zlib
    open_source restricted unrestricted unknown);
my %PHASES    = map { $_ => 1 } qw(configure build test runtime develop);
my %RELATIONS = map { $_ => 1 } qw(requires recommends suggests conflicts);
my %STATUSES  = map { $_ => 1 } qw(stable testing unstable);

# Top-level fields: name => [required?, what the check asserts, checker].
# A checker takes (value, field path) and returns a list of errors, each
# "path: what is wrong".
my @FIELDS = (
    [name       => 1, 'a Term (2+ characters, no /, \\, space or control)', \&term_errors],
    [abstract   => 1, 'a non-empty String',                 \&string_errors],
    [maintainer => 1, 'a String or a List of Strings',      \&maintainer_errors],
    [license    => 1, 'a known License String, a List of them, or a Map of name => URI', \&license_errors],
    [provides   => 1, 'a Map of extension Terms to {file, version[, abstract, docfile]} with existing files', \&provides_errors],
    [version    => 1, 'a semantic Version',                 \&version_errors],
    ['meta-spec' => 1, 'a Map with version "1.0.0" and an optional URI', \&meta_spec_errors],
    [description    => 0, 'a non-empty String',             \&string_errors],
    [generated_by   => 0, 'a non-empty String',             \&string_errors],
    [tags           => 0, 'a List of Tags (1-255 characters, no /, \\ or control)', \&tags_errors],
    [no_index       => 0, 'a Map of file / directory Lists of existing paths', \&no_index_errors],
    [prereqs        => 0, 'phases of relationships of Term => Version Range', \&prereqs_errors],
    [release_status => 0, 'one of stable, testing, unstable', \&release_status_errors],
    [resources      => 0, 'a Map of homepage, bugtracker and repository', \&resources_errors],
);
my %KNOWN = map { $_->[0] => 1 } @FIELDS;

# ---- the validator -------------------------------------------------------

# Every error in a decoded META.json hash, as "field: what is wrong".
sub meta_errors {
    my ($meta) = @_;
    return ('META.json: the top level is not a JSON object')
        unless ref $meta eq 'HASH';
    return (unknown_key_errors($meta), map { field_errors($meta, @$_) } @FIELDS);
}

sub field_errors {
    my ($meta, $field, $required, undef, $check) = @_;
    return exists $meta->{$field} ? $check->($meta->{$field}, $field)
         : $required              ? ("$field: required field is missing")
         :                          ();
}

sub unknown_key_errors {
    my ($meta) = @_;
    return map { "$_: unknown top-level key (custom keys must start with x_ or X_)" }
        grep { !$KNOWN{$_} && !is_custom($_) } sort keys %$meta;
}

# ---- types -----------------------------------------------------------------

sub is_custom { return $_[0] =~ /\Ax_./i }

# A JSON string (not a number, boolean, null, array or object).
sub is_string {
    my ($v) = @_;
    return 0 if !defined $v || ref $v;
    if (defined &builtin::created_as_string) {
        no warnings;
        return builtin::created_as_string($v);
    }
    my $flags = B::svref_2object(\$v)->FLAGS;
    return ($flags & B::SVp_POK) && !($flags & (B::SVp_IOK | B::SVp_NOK));
}

sub show { return JSON::PP->new->canonical->allow_nonref->encode($_[0]) }

sub string_errors {
    my ($v, $path) = @_;
    return is_string($v) && length $v ? ()
         : ("$path: must be a non-empty String, not " . show($v));
}

sub map_errors {
    my ($v, $path) = @_;
    return ref $v eq 'HASH' ? () : ("$path: must be a Map (JSON object), not " . show($v));
}

# Keys of a Map the spec does not define must be custom keys.
sub extra_key_errors {
    my ($map, $path, @known) = @_;
    my %known = map { $_ => 1 } @known;
    return map { "$path.$_: unknown key (custom keys must start with x_ or X_)" }
        grep { !$known{$_} && !is_custom($_) } sort keys %$map;
}

# The spec: consumers take a String where a List is expected as a List of
# one; producers should write arrays, but a String is valid.
sub as_list {
    my ($v) = @_;
    return ref $v eq 'ARRAY' ? @$v : ($v);
}

sub list_errors {
    my ($v, $path) = @_;
    return () if ref $v eq 'ARRAY' ? @$v : is_string($v);
    return ("$path: must be a List of one or more items, not " . show($v));
}

sub term_errors {
    my ($v, $path) = @_;
    return string_errors($v, $path) if !is_string($v);
    return () if length $v >= 2 && $v !~ m{[/\\\s\p{Cc}]};
    return ("$path: " . show($v) . ' is not a Term (2+ characters, no /, \\, space or control)');
}

sub version_errors {
    my ($v, $path) = @_;
    return () if is_string($v) && $v =~ /\A$SEMVER\z/;
    return ("$path: " . show($v) . ' is not a semantic version (MAJOR.MINOR.PATCH, e.g. "1.7.0")');
}

sub uri_errors {
    my ($v, $path) = @_;
    return () if is_string($v) && $v =~ m{\A[A-Za-z][A-Za-z0-9+.-]*:[^\s]+\z};
    return ("$path: " . show($v) . ' is not a URI');
}

# A relative path with unix conventions that names something in the
# repository (-f for files, -d for directories).
sub path_errors {
    my ($v, $path, $want_dir) = @_;
    return string_errors($v, $path) if !is_string($v) || !length $v;
    return ("$path: '$v' must be relative, with / separators")
        if $v =~ m{\A/|\\};
    (my $rel = $v) =~ s{\A\./}{};
    my @parts = split m{/}, $rel;
    return ("$path: '$v' must not contain . or .. components")
        if grep { $_ eq '.' || $_ eq '..' } @parts;
    my $abs = File::Spec->catfile($ROOT, @parts);
    return () if $want_dir ? -d $abs : -f $abs;
    return ("$path: '$v' does not exist in the repository ($ROOT)");
}

# ---- fields ----------------------------------------------------------------

sub maintainer_errors {
    my ($v, $path) = @_;
    my @errs = list_errors($v, $path);
    return @errs if @errs;
    my $i = 0;
    return map { string_errors($_, $path . '[' . $i++ . ']') } as_list($v);
}

sub license_errors {
    my ($v, $path) = @_;
    if (ref $v eq 'HASH') {
        return ("$path: a license Map needs at least one name => URI") if !%$v;
        return map { uri_errors($v->{$_}, "$path.$_") } sort keys %$v;
    }
    my @errs = list_errors($v, $path);
    return @errs if @errs;
    return map { "$path: " . show($_) . ' is not a License String of the spec' }
        grep { !is_string($_) || !$LICENSES{$_} } as_list($v);
}

sub provides_errors {
    my ($v, $path) = @_;
    return map_errors($v, $path) if ref $v ne 'HASH';
    return ("$path: must name at least one extension") if !%$v;
    return map { extension_errors($v->{$_}, "$path.$_", $_) } sort keys %$v;
}

sub extension_errors {
    my ($v, $path, $name) = @_;
    my @errs = term_errors($name, $path);
    return (@errs, map_errors($v, $path)) if ref $v ne 'HASH';
    for my $key (qw(file version)) {
        push @errs, "$path.$key: required field is missing" if !exists $v->{$key};
    }
    push @errs, path_errors($v->{file}, "$path.file")       if exists $v->{file};
    push @errs, version_errors($v->{version}, "$path.version") if exists $v->{version};
    push @errs, string_errors($v->{abstract}, "$path.abstract") if exists $v->{abstract};
    push @errs, path_errors($v->{docfile}, "$path.docfile") if exists $v->{docfile};
    return (@errs, extra_key_errors($v, $path, qw(file version abstract docfile)));
}

sub meta_spec_errors {
    my ($v, $path) = @_;
    return map_errors($v, $path) if ref $v ne 'HASH';
    my @errs = (defined $v->{version} && is_string($v->{version}) && $v->{version} eq '1.0.0')
        ? () : ("$path.version: must be \"1.0.0\", not " . show($v->{version}));
    push @errs, uri_errors($v->{url}, "$path.url") if exists $v->{url};
    return (@errs, extra_key_errors($v, $path, qw(version url)));
}

# The spec's Tag: fewer than 256 characters, no /, \ or control characters.
# Its prose also forbids spaces, but its own examples ("unit testing") have
# them, and both validators accept them.
sub tags_errors {
    my ($v, $path) = @_;
    return ("$path: must be a List (JSON array) of Tags, not " . show($v))
        if ref $v ne 'ARRAY' || !@$v;
    my $i = 0;
    return map { tag_errors($_, $path . '[' . $i++ . ']') } @$v;
}

sub tag_errors {
    my ($v, $path) = @_;
    return string_errors($v, $path) if !is_string($v) || !length $v;
    return () if length $v < 256 && $v !~ m{[/\\\p{Cc}]};
    return ("$path: " . show($v) . ' is not a Tag (under 256 characters, no /, \\ or control)');
}

sub no_index_errors {
    my ($v, $path) = @_;
    return map_errors($v, $path) if ref $v ne 'HASH';
    my @errs = extra_key_errors($v, $path, qw(file directory));
    for my $key (grep { exists $v->{$_} } qw(file directory)) {
        my @list = list_errors($v->{$key}, "$path.$key");
        my $i = 0;
        push @errs, @list ? @list
            : map { path_errors($_, "$path.$key" . '[' . $i++ . ']', $key eq 'directory') }
                  as_list($v->{$key});
    }
    return @errs;
}

sub prereqs_errors {
    return known_keys_errors(@_, \%PHASES, 'phase (configure, build, test, runtime, develop)',
                             \&phase_errors);
}

sub phase_errors {
    return known_keys_errors(@_, \%RELATIONS,
                             'relationship (requires, recommends, suggests, conflicts)',
                             \&relation_errors);
}

# known_keys_errors(value, path, known, what, check): an object whose keys
# are the spec's (or custom x_ ones, not checked further); each known key's
# value checked by check(value, path).
sub known_keys_errors {
    my ($v, $path, $known, $what, $check) = @_;
    return map_errors($v, $path) if ref $v ne 'HASH';
    my @errs;
    for my $key (sort keys %$v) {
        my $p = "$path.$key";
        if ($known->{$key}) {
            push @errs, $check->($v->{$key}, $p);
        } elsif (!is_custom($key)) {
            push @errs, "$p: unknown $what";
        }
    }
    return @errs;
}

sub relation_errors {
    my ($v, $path) = @_;
    return map_errors($v, $path) if ref $v ne 'HASH';
    return map { (term_errors($_, "$path.$_"), range_errors($v->{$_}, "$path.$_")) }
        sort keys %$v;
}

# A Version Range: 0 (any version; a string or the JSON number), a Version
# (at least it), or [op] Version clauses with op one of < <= > >= == !=,
# joined by commas.
sub range_errors {
    my ($v, $path) = @_;
    return () if defined $v && !ref $v && !is_string($v) && $v == 0;
    my $ok = is_string($v) && $v =~ /\S/ && !grep { !/\A(?:0|(?:(?:[<>]=?|[=!]=)\s*)?$SEMVER)\z/ }
        split /\s*,\s*/, $v =~ s/\A\s+|\s+\z//gr, -1;
    return $ok ? () : ("$path: " . show($v) . ' is not a Version Range (e.g. 0, "15.0.0", ">= 1.2.0, < 2.0.0")');
}

sub release_status_errors {
    my ($v, $path) = @_;
    return () if is_string($v) && $STATUSES{$v};
    return ("$path: " . show($v) . ' is not one of stable, testing, unstable');
}

sub resources_errors {
    my ($v, $path) = @_;
    return map_errors($v, $path) if ref $v ne 'HASH';
    my @errs = extra_key_errors($v, $path, qw(homepage bugtracker repository));
    push @errs, uri_errors($v->{homepage}, "$path.homepage") if exists $v->{homepage};
    push @errs, bugtracker_errors($v->{bugtracker}, "$path.bugtracker") if exists $v->{bugtracker};
    push @errs, repository_errors($v->{repository}, "$path.repository") if exists $v->{repository};
    return @errs;
}

sub bugtracker_errors {
    my ($v, $path) = @_;
    return map_errors($v, $path) if ref $v ne 'HASH';
    my @errs = extra_key_errors($v, $path, qw(web mailto));
    push @errs, "$path: needs web or mailto" if !exists $v->{web} && !exists $v->{mailto};
    push @errs, uri_errors($v->{web}, "$path.web") if exists $v->{web};
    push @errs, "$path.mailto: " . show($v->{mailto}) . ' is not an email address'
        if exists $v->{mailto} && !(is_string($v->{mailto}) && $v->{mailto} =~ /\A[^@\s]+@[^@\s]+\z/);
    return @errs;
}

sub repository_errors {
    my ($v, $path) = @_;
    return map_errors($v, $path) if ref $v ne 'HASH';
    my @errs = extra_key_errors($v, $path, qw(url web type));
    push @errs, "$path: needs url (with type) or web" if !exists $v->{url} && !exists $v->{web};
    push @errs, uri_errors($v->{$_}, "$path.$_") for grep { exists $v->{$_} } qw(url web);
    push @errs, "$path.type: " . show($v->{type}) . ' must be a lowercase string (git, svn, hg, ...)'
        if exists $v->{type} && !(is_string($v->{type}) && $v->{type} =~ /\A\p{Ll}+\z/);
    return @errs;
}

# ---- the tests -------------------------------------------------------------

sub read_meta {
    my $file = File::Spec->catfile($ROOT, 'META.json');
    open my $fh, '<:raw', $file or return (undef, "cannot open $file: $!");
    my $text = do { local $/; <$fh> };
    my $meta = eval { JSON::PP->new->utf8->decode($text) };
    return $meta ? ($meta, undef) : (undef, "$file is not valid JSON: $@");
}

sub copy_of { return JSON::PP->new->utf8->decode(JSON::PP->new->utf8->encode($_[0])) }

# Asserts that a broken copy gives an error naming $field.
sub rejects {
    my ($what, $field, $meta) = @_;
    my @errs = grep { /\A\Q$field\E(?:[.:\[])/ } meta_errors($meta);
    ok(@errs, "self-test: $what is an error naming '$field'")
        or diag "errors were:\n  " . join("\n  ", meta_errors($meta));
}

sub self_tests {
    my ($meta) = @_;
    my %c;
    $c{$_} = copy_of($meta) for qw(missing version file unknown range tag);
    delete $c{missing}{abstract};
    $c{version}{version} = '1.7';
    my ($ext) = sort keys %{ $c{file}{provides} };
    $c{file}{provides}{$ext}{file} = 'no-such-dir/syncwf--9.9.sql';
    $c{unknown}{homepage} = 'https://example.org/';
    $c{range}{prereqs} = { runtime => { requires => { PostgreSQL => '>= 15' } } };
    $c{tag}{tags} = ['ok', 'a/b'];
    rejects('a removed required field', abstract => $c{missing});
    rejects('version "1.7"', version => $c{version});
    rejects('a provides file that does not exist', "provides.$ext.file" => $c{file});
    rejects('an unknown top-level key', homepage => $c{unknown});
    rejects('a version range ">= 15"', 'prereqs.runtime.requires.PostgreSQL' => $c{range});
    rejects('a tag with a slash', 'tags[1]' => $c{tag});
    is_deeply([meta_errors(copy_of($meta))], [meta_errors($meta)],
        'self-test: a copy validates as the original does (types survive copying)');
}

my ($meta, $err) = read_meta();
ok($meta && ref $meta eq 'HASH', 'META.json exists and is a JSON object')
    or diag $err // 'the top level is not an object';
if (ref $meta eq 'HASH') {
    for my $f (@FIELDS) {
        my ($field, $required, $what) = @$f;
        my @errs = field_errors($meta, @$f);
        my $name = exists $meta->{$field} ? "META.json $field: $what"
                 : $required ? "META.json $field: present (required)"
                 : "META.json $field: absent (optional)";
        ok(!@errs, $name) or diag join "\n", @errs;
    }
    # Beyond the spec's required keys: what every syncwf release states (the
    # PostgreSQL versions it runs on, where it lives, its tags).
    for my $path (['prereqs', 'runtime', 'requires', 'PostgreSQL'], ['resources', 'homepage'],
                  ['tags']) {
        my $v = $meta;
        $v = ref $v eq 'HASH' ? $v->{$_} : undef for @$path;
        ok(defined $v, 'META.json has ' . join('.', @$path));
    }
    my @extra = unknown_key_errors($meta);
    ok(!@extra, 'META.json has no unknown top-level keys (only spec keys and x_ / X_)')
        or diag join "\n", @extra;
    self_tests($meta);
}
done_testing();
