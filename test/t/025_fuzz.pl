# Seeded fuzz test of every SQL function and table of syncwf.
#
# The functions are not listed here: they are read from the catalog (every
# function that belongs to the extension, with its argument names, types
# and defaults), so a function added later is fuzzed from the day it
# exists.  Trigger functions are exercised through the tables they sit on:
# INSERT, UPDATE, DELETE, TRUNCATE and row locks on every table of the
# extension, with fuzzed values, also read from the catalog.
#
# Node "fuzz" (syncwf.database = 'postgres', an assert-enabled build, a 1 s
# syncwf.inactive_controller_timeout so that controllers go stale during
# the run, max_prepared_transactions = 4), databases postgres and "other"
# (where keyed and launch-plan functions must refuse, 55000).  Five
# sessions: the superuser, a member of syncwf_admin, two sessions of a
# plain role (one with a schema of its own first in its search_path, where
# look-alikes of = for text and of min(numeric) record every use), and the
# syncwf_admin member in "other".  Both databases start with nested limits
# (1.8): parent row f/all (2 slots) over f/s1, f/s2 and f/<long key>
# (1 + 2 + 1), parent h/all (2) over the pattern h/* (1 for each sem/h/...
# without a row of its own) and h/own (1), while f/s3 and h/solo have no
# parent; most of the hot semaphores are their children, so parents fill
# up and requests queue behind them.  Each step of the run, a session
# chosen at random:
#  - calls one function (sometimes two in one statement, or one three
#    times), with arguments drawn by argument name and type: valid lock
#    names, holder keys, controllers, plan identifiers, phases, slots,
#    modes and fair keys from small pools (so that holds, queues,
#    executions and stale controllers build up), or near-valid and
#    invalid ones: empty, at and around every length limit (also in
#    multi-byte characters), control characters, U+0080 to U+009F, odd
#    Unicode, slashes, quotes, NULL; intervals 0, negative, tiny, huge
#    (178000000 years, 2147483647 days 2147483647 months), infinite on 17
#    and later; integer and bigint bounds; arrays empty, with NULLs,
#    duplicates, 64 and 65 names, two dimensions, another lower bound;
#    timestamps at and past their ends; roles that do not exist;
#  - or changes a table (as above; sync_limit.parent names mostly one of
#    the two parents, or none, else a row no parent may be: a child (three
#    levels), a pattern, a launch plan's row, itself, a row that does not
#    exist; half the changes of sync_limit change the nesting: a row's
#    parent, a parent's or a child's sizelimit, both at once, a row of its
#    own for a key under h/*, a parent deleted while named, a parent
#    renamed), or runs a transaction command: BEGIN (also SERIALIZABLE,
#    READ ONLY), COMMIT, ROLLBACK, savepoints, SET CONSTRAINTS ...
#    IMMEDIATE for the checks of parent, PREPARE TRANSACTION, COMMIT /
#    ROLLBACK PREPARED, DISCARD ALL, SET ROLE, VACUUM (FULL), ANALYZE,
#    REINDEX of a table, a reconnect, pg_terminate_backend of another
#    session;
#  - sometimes leaves its statement running while other sessions act
#    (and sometimes cancels it), and sometimes runs it with a 1 ms
#    statement_timeout.
# Halfway, the server stops (fast or immediate) and starts again, with
# whatever the sessions held (keyed holds and their parents' counts are
# rebuilt: the checks of every 250 steps below run then too).
# Every statement has a statement_timeout, so a blocking call ends.
#
# Checked after every statement: no SQLSTATE of class XX (internal error),
# 58 (system error) or 53 (resources) other than 53400 (the documented
# refusal of raise_on_limit) and PostgreSQL's own 53200 of PREPARE
# TRANSACTION past max_prepared_transactions, no FATAL or PANIC, no WARNING
# about a leak, and the server is up; and sync_limit is read, to know when
# each row last changed.  Every 20 steps: no look-alike of the poisoned
# search_path ran inside syncwf; every table and view of the extension can
# be read completely, each row cast to text (so every output function
# runs), in both databases; the server has not restarted; the server log
# has no TRAP (failed assertion), no crash, no SQLSTATE of those classes
# from any process (the background worker included); every notification
# received on channels syncwf and syncwf_launch is valid JSON; for every
# parent, the parent_slots_held that sync_locks shows on each of its
# children is the sum of the slots_held of its live children (a cached
# child holds none), and they all show the same parent_sizelimit; and,
# when no statement is left running, no semaphore (own limit) and no
# parent holds more than its limit, unless a change of sync_limit explains
# it: every hold granted after the last change of its semaphore's row (or
# of its parent: its sizelimit, a child that came under it, rows inserted
# or deleted, a restart, the extension created again) must have found room,
# that is, the holds granted up to it and still held fit the limit
# (launch plans' semaphores, which executions may take whatever the limit,
# are left out).  Every 250 steps, with every session idle (transactions
# ended, prepared ones committed or rolled back), in both databases: no
# transaction-scope entry and no waiting session is left, every pid in the
# views is a live backend, sync_locks agrees with sync_holders and
# sync_waiters; each live semaphore's sizelimit, parent and parent's
# sizelimit are those of its row in sync_limit; no keyed request waits at
# the front of a semaphore's queue with room for it there and under its
# parent, unless a sibling's waiter may go first (one that goes before it
# by effective priority and time and is not plainly held back by its own semaphore;
# requests of several locks, claim-only requests, rates, launch plans and
# a semaphore whose row is a parent are left out); no keyed request waits
# for more slots under one parent than the parent's sizelimit (above 0),
# which it could never get, as a request for more slots than its
# semaphore's limit is refused or withdrawn; and after sync_reconcile()
# the keyed entries in shared memory are exactly the rows of sync_state
# (held or pending, same token).  (These checks of nested limits run first
# as the sessions left things, then again after: every other time the
# extension of one database is dropped and created again, with the holds
# the sessions keep; then the limits and plans the pools name are set
# again, and 3 to 6 keyed requests are made for children of the parents,
# which fill them and queue behind them, and one for several children.)
#
# At the end the sessions end: no session or transaction entry may be left,
# and every lock seen during the run that nobody holds now (a semaphore with
# its limit set to 1 and no parent) can be taken at once (no leaked slot).
# The server restarts with the fuzzed tables (keyed holds are rebuilt from
# them): everything reads again, memory agrees with sync_state, and the
# nested limits agree with sync_limit and their counts.  Then every keyed
# hold is released and every execution deleted: nothing may be left in
# sync_locks, sync_holders or sync_waiters, and every lock seen can be
# taken again.  A last restart, and the tables and views read again.  A
# summary of SQLSTATEs per function goes to the test log.  State must have
# built up during the run, full parents and waiters behind one included.
#
# SYNCWF_FUZZ_SEED (default fixed) seeds the generator; it is printed.
# The same seed draws the same statements as long as the server answers the
# same (timeouts and the background worker can make runs differ).
# SYNCWF_FUZZ_ITERATIONS sets the number of steps.  Every statement, with
# its session and outcome, is written to 025_fuzz_statements.log in the
# test's log directory.
use strict;
use warnings FATAL => 'all';

use IPC::Run;
use JSON::PP;
use Time::HiRes qw(time usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $SEED = $ENV{SYNCWF_FUZZ_SEED} // 1212;
die "SYNCWF_FUZZ_SEED must be a non-negative integer\n" unless $SEED =~ /^\d+$/;
my $ITERATIONS = $ENV{SYNCWF_FUZZ_ITERATIONS} // 3000;
die "SYNCWF_FUZZ_ITERATIONS must be a positive integer\n" unless $ITERATIONS =~ /^[1-9]\d*$/;
diag("025_fuzz: seed $SEED, $ITERATIONS steps (SYNCWF_FUZZ_SEED and SYNCWF_FUZZ_ITERATIONS change them)");
my $T0 = time;

my $STATEMENT_TIMEOUT_MS = 200;
my $LIGHT_CHECK_EVERY = 20;
my $FULL_CHECK_EVERY = 250;
my $MAX_PROBLEMS = 25;

# --- random numbers: xorshift32, independent of perl's rand() ----------------
my $rng = ($SEED * 2654435761 + 0x9E3779B9) & 0xFFFFFFFF;
$rng ||= 1;
sub rnd
{
	my $x = $rng;
	$x ^= ($x << 13) & 0xFFFFFFFF;
	$x ^= $x >> 17;
	$x ^= ($x << 5) & 0xFFFFFFFF;
	$rng = $x;
	return $x / 4294967296;
}
rnd() for 1 .. 20;
sub rint { return int(rnd() * $_[0]); }
sub chance { return rnd() < $_[0]; }
sub pick { return $_[ rint(scalar @_) ]; }

# weighted choice: (weight, value, weight, value, ...)
sub wpick
{
	my @wv = @_;
	my $total = 0;
	for (my $i = 0; $i < @wv; $i += 2) { $total += $wv[$i]; }
	my $r = rnd() * $total;
	for (my $i = 0; $i < @wv; $i += 2)
	{
		return $wv[ $i + 1 ] if ($r -= $wv[$i]) < 0;
	}
	return $wv[-1];
}

# --- the node ----------------------------------------------------------------
my $node = PostgreSQL::Test::Cluster->new('fuzz');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'syncwf'
syncwf.database = 'postgres'
syncwf.inactive_controller_timeout = 1
max_prepared_transactions = 4
max_connections = 40
log_statement = none
log_line_prefix = '%m [%p] %b %e '
});
$node->start;
my $PGV = $node->safe_psql('postgres', 'SHOW server_version_num');

$node->safe_psql('postgres', q{
CREATE EXTENSION syncwf;
CREATE DATABASE other;
CREATE ROLE fuzz_admin LOGIN IN ROLE syncwf_admin;
CREATE ROLE fuzz_user LOGIN;
});
$node->safe_psql('other', 'CREATE EXTENSION syncwf');

# A schema of the plain role with look-alikes of = for text and of
# min(numeric) that record every use; one session puts it first in its
# search_path.  syncwf's own statements must never use them (the statements
# the test generates qualify their =).
$node->safe_psql('postgres', q{
CREATE SCHEMA fuzz_evil AUTHORIZATION fuzz_user;
SET ROLE fuzz_user;
CREATE TABLE fuzz_evil.ran (who name, what text);
GRANT INSERT ON fuzz_evil.ran TO PUBLIC;
CREATE FUNCTION fuzz_evil.eq(a text, b text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO fuzz_evil.ran VALUES (current_user, '=');
    RETURN a OPERATOR(pg_catalog.=) b;
END $$;
CREATE OPERATOR fuzz_evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = fuzz_evil.eq);
CREATE FUNCTION fuzz_evil.min_step(s numeric, v numeric) RETURNS numeric LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO fuzz_evil.ran VALUES (current_user, 'min');
    RETURN CASE WHEN s IS NULL OR v < s THEN v ELSE s END;
END $$;
CREATE AGGREGATE fuzz_evil.min(numeric) (SFUNC = fuzz_evil.min_step, STYPE = numeric);
});

# --- the pools of valid values -------------------------------------------------
my $LONGKEY = 'k' x 249;    # sem/f/<it> is 255 bytes, f/<it> 251
my @LOCKS = (
	'mtx/f/a', 'mtx/f/b', 'mtx/g/a/b', "mtx/\x{fc}n\x{ef}/\x{43a}\x{43b}\x{44e}\x{447}",
	"mtx/f/q'\"\\", 'sem/f/s0', 'sem/f/s1', 'sem/f/s2', 'sem/f/s3', 'sem/f/none',
	"sem/\x{fc}n\x{ef}/\x{43a}\x{43b}\x{44e}\x{447}", 'sem/launchplan/p/d/n1',
	'sem/launchplan/p/d/n2', 'mtx/launchplan/p/d/n1', "mtx/f/$LONGKEY", "sem/f/$LONGKEY",
	'sem/f/all', 'sem/h/a', 'sem/h/b', 'sem/h/c', 'sem/h/own', 'sem/h/solo', 'sem/h/all');
my @LIMITS = ('f/s0', 'f/s1', 'f/s2', 'f/s3', 'f/none', "\x{fc}n\x{ef}/\x{43a}\x{43b}\x{44e}\x{447}",
	"f/$LONGKEY", 'launchplan/p/d/n1', 'launchplan/p/d/n2', 'f/all', 'h/all', 'h/*', 'h/own', 'h/solo');
# the parent rows (nested limits) of $BASE_LIMITS_SQL, and rows that are
# or may become their children
my @PARENTS = ('f/all', 'h/all');
my @CHILDREN = ('f/s1', 'f/s2', "f/$LONGKEY", 'h/*', 'h/own', 'h/solo', 'f/s3', 'f/s0');
my @HOT_LOCKS = ('mtx/f/a', 'sem/f/s1', 'sem/f/s2', 'sem/h/a', 'sem/h/b', 'sem/launchplan/p/d/n1');
my @HOT_HOLDERS = ('ns/wf1', 'ns/wf2');
my @HOLDERS = ('ns/wf1', 'ns/wf2', 'ns/wf3', 'ns/wf4', 'w', "ns/\x{fc}", 'h' x 255, "q'\"\\");
my @CONTROLLERS = ('c1', 'c2', 'c3', 'c' x 255, "\x{441}");
my @PROJECTS = ('p', 'q');
my @PLANS = map { "n$_" } 1 .. 6;
my @VERSIONS = ('v1', 'v2', 'v/3');
my @PHASES = qw(PENDING QUEUED RUNNING SUCCEEDING SUCCEEDED FAILING FAILED ABORTING ABORTED TIMED_OUT);
my @ROLES = ('postgres', 'fuzz_user', 'fuzz_admin', 'syncwf_admin');
my @FAIR_KEYS = ('tenant-a', 'tenant-b', "t\x{e9}nant");

# The limits and plans the pools name; set again at every full check, since
# the fuzzed statements change and delete them.  Nested limits: parent f/all
# (2 slots) over f/s1, f/s2 and f/<long key> (1 + 2 + 1), parent h/all (2)
# over the pattern h/* (1 for each sem/h/... without a row of its own) and
# h/own (1); f/s3 and h/solo (under the pattern's prefix) have no parent.
# First every other row loses the parent the fuzz gave it, so that none
# names a row of these as its parent in a way the rows below would break
# (a third level, a sizelimit above the parent's).
my $BASE_LIMITS_SQL = q{
UPDATE sync_limit SET parent = NULL
 WHERE parent IS NOT NULL
   AND name NOT IN ('f/s1', 'f/s2', 'f/' || repeat('k', 249), 'h/*', 'h/own');
INSERT INTO sync_limit (name, sizelimit, parent, preempt_grace) VALUES ('f/s0', 0, NULL, NULL),
    ('f/s1', 1, 'f/all', '0'), ('f/s2', 2, 'f/all', NULL), ('f/s3', 3, NULL, NULL),
    ('f/all', 2, NULL, '100 ms'),
    (E'\u00fcn\u00ef/\u043a\u043b\u044e\u0447', 2, NULL, NULL), ('f/' || repeat('k', 249), 1, 'f/all', NULL),
    ('h/all', 2, NULL, NULL), ('h/*', 1, 'h/all', '100 ms'), ('h/own', 1, 'h/all', NULL), ('h/solo', 2, NULL, NULL)
    ON CONFLICT (name) DO UPDATE SET sizelimit = EXCLUDED.sizelimit, parent = EXCLUDED.parent,
                                     preempt_grace = EXCLUDED.preempt_grace;
};
my $BASE_SQL = $BASE_LIMITS_SQL . q{
INSERT INTO sync_limit VALUES ('launchplan/p/d/n2', 1)
    ON CONFLICT (name) DO UPDATE SET sizelimit = EXCLUDED.sizelimit;
SELECT sync_launch_plan_register('p', 'd', 'n1', 'v1', 1, 'WAIT');
SELECT sync_launch_plan_register('p', 'd', 'n2', 'v1', 2, 'SKIP');
SELECT sync_launch_plan_register('p', 'd', 'n3', 'v1', 1, 'REPLACE');
SELECT sync_launch_plan_register('p', 'd', 'n4', 'v1', 1, 'ABORT');
SELECT sync_launch_plan_register('p', 'd', 'n5', 'v1');
SELECT sync_launch_plan_register('p', 'd', 'n6', 'v1', 2, 'WAIT', 'PRIORITY', '1 s');
SELECT sync_launch_plan_register('p', 'd', 'n6', 'v2', 1, 'WAIT', 'LIFO');
};
$node->safe_psql('postgres', $BASE_SQL);
$node->safe_psql('other', $BASE_LIMITS_SQL);

# --- the extension's functions and tables, from the catalog --------------------
my $members = q{
SELECT d.objid FROM pg_depend d
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'syncwf')};

my @FUNCS;
for my $line (split /\n/, $node->safe_psql('postgres', qq{
SELECT p.oid::regprocedure, quote_ident(n.nspname) || '.' || quote_ident(p.proname), p.prokind,
       p.pronargdefaults,
       coalesce((SELECT string_agg(coalesce(u.an, '') || ':' || format_type(u.at, NULL), ';' ORDER BY u.i)
                   FROM unnest(coalesce(p.proallargtypes, p.proargtypes::oid[]),
                               coalesce(p.proargmodes, array_fill('i'::"char", ARRAY[p.pronargs::int])),
                               coalesce(p.proargnames, array_fill(''::text, ARRAY[cardinality(coalesce(p.proallargtypes, p.proargtypes::oid[]))])))
                        WITH ORDINALITY AS u(at, am, an, i)
                  WHERE u.am IN ('i', 'b', 'v')), '')
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE p.oid IN ($members AND d.classid = 'pg_proc'::regclass)
   AND p.prorettype <> 'trigger'::regtype
 ORDER BY 1}))
{
	my ($sig, $qname, $kind, $ndef, $args) = split /\|/, $line, 5;
	my @args = map { my ($n, $t) = split /:/, $_, 2; { name => $n, type => $t } } grep { $_ ne '' } split /;/, $args;
	# the calls that build state up come more often
	push @FUNCS, { sig => $sig, qname => $qname, kind => $kind, ndef => $ndef, args => \@args,
		weight => ($qname =~ /request|acquire|create|register|update|heartbeat|wait/ ? 3 : 1) };
}
my @TRIGGERS = split /\n/, $node->safe_psql('postgres', qq{
SELECT DISTINCT c.relname || ':' || t.tgtype::int || ':' || t.tgfoid::regproc
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
 WHERE NOT t.tgisinternal AND c.oid IN ($members AND d.classid = 'pg_class'::regclass)
 ORDER BY 1});
my @TRIGGER_FUNCS = split /\n/, $node->safe_psql('postgres', qq{
SELECT p.oid::regprocedure FROM pg_proc p
 WHERE p.oid IN ($members AND d.classid = 'pg_proc'::regclass) AND p.prorettype = 'trigger'::regtype
 ORDER BY 1});

my (@TABLES, @RELS);
for my $line (split /\n/, $node->safe_psql('postgres', qq{
SELECT c.relkind, quote_ident(n.nspname) || '.' || quote_ident(c.relname), c.relname,
       coalesce((SELECT string_agg(a.attname || ':' || format_type(a.atttypid, a.atttypmod) || ':' ||
                                   (a.attnotnull AND NOT a.atthasdef)::int || ':' ||
                                   coalesce((SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary
                                                AND a.attnum = ANY (i.indkey)), 0), ';' ORDER BY a.attnum)
                   FROM pg_attribute a
                  WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '')
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.oid IN ($members AND d.classid = 'pg_class'::regclass)
 ORDER BY 3}))
{
	my ($kind, $qname, $name, $cols) = split /\|/, $line, 4;
	push @RELS, $qname;
	next unless $kind eq 'r' || $kind eq 'p';
	my @cols = map {
		my ($n, $t, $req, $pk) = split /:/, $_;
		{ name => $n, type => $t, required => $req, pk => $pk }
	} split /;/, $cols;
	push @TABLES, { qname => $qname, name => $name, cols => \@cols };
}
ok(@FUNCS >= 20, scalar(@FUNCS) . ' functions of the extension to fuzz');
ok(@TABLES >= 6, scalar(@TABLES) . ' tables of the extension to fuzz: ' . join(', ', map { $_->{name} } @TABLES));
ok(@TRIGGERS >= 1, scalar(@TRIGGERS) . ' triggers on those tables');
note "functions:\n  " . join("\n  ", map { $_->{sig} } @FUNCS);
note "relations read at every check: " . join(', ', @RELS);

# --- literals ----------------------------------------------------------------
# A text literal: E'...', ASCII only, every other character escaped.
sub lit
{
	my ($v) = @_;
	return 'NULL' unless defined $v;
	my $o = "E'";
	for my $ch (split //, $v)
	{
		my $c = ord $ch;
		if ($ch eq "'") { $o .= "''"; }
		elsif ($ch eq '\\') { $o .= '\\\\'; }
		elsif ($c < 0x20 || $c == 0x7f) { $o .= sprintf('\\x%02x', $c); }
		elsif ($c < 0x7f) { $o .= $ch; }
		elsif ($c <= 0xffff) { $o .= sprintf('\\u%04x', $c); }
		else { $o .= sprintf('\\U%08x', $c); }
	}
	return "$o'";
}
sub tlit { return lit($_[0]) . '::text'; }

# text[] from a list of elements (undef: NULL element); $lb: lower bound;
# $rows: a second dimension of that many rows
sub arr
{
	my ($elems, $lb, $rows) = @_;
	return 'NULL::text[]' unless defined $elems;
	my @e = map {
		if (defined $_) { (my $x = $_) =~ s/(["\\])/\\$1/g; qq{"$x"} }
		else { 'NULL' }
	} @$elems;
	my $s;
	if ($rows && @e)
	{
		my @r;
		push @r, '{' . join(',', @e) . '}' for 1 .. $rows;
		$s = '{' . join(',', @r) . '}';
	}
	else
	{
		$s = '{' . join(',', @e) . '}';
		$s = "[$lb:" . ($lb + @e - 1) . "]=$s" if defined $lb && @e;
	}
	return lit($s) . '::text[]';
}

sub blen { my $c = $_[0]; utf8::encode($c); return length $c; }

# --- odd values ----------------------------------------------------------------
my @ODD = map { chr } (0x01, 0x09, 0x0a, 0x0d, 0x1b, 0x1f, 0x7f, 0x80, 0x85, 0x9f, 0xa0, 0xad,
	0xdf, 0x130, 0x301, 0x200b, 0x2028, 0x202e, 0xfeff, 0xfffd, 0xffff, 0x10ffff, 0x1f600);
my @PUNCT = ('/', '\\', "'", '"', '%', '_', '*', '{', '}', ',', ' ', '.', ':', ';', '$', '(', ')',
	'[', ']', '=', '>', '<', '-', '@');
my @LIMIT_LENGTHS = (1, 2, 62, 63, 64, 65, 250, 251, 252, 253, 254, 255, 256, 257, 1000, 8200);

# pad $s to $len bytes with $c (a multi-byte $c may overshoot by its length - 1)
sub pad
{
	my ($s, $len, $c) = @_;
	$c //= 'x';
	my $clen = blen($c);
	my $have = blen($s);
	return $s if $have >= $len;
	return $s . ($c x int(($len - $have + $clen - 1) / $clen));
}

sub weird_text
{
	return wpick(
		3, '',
		1, ' ',
		1, '/',
		1, '//',
		1, 'NULL',
		6, pad('', pick(@LIMIT_LENGTHS), pick('x', "\x{e9}", "\x{1f600}", "\x{85}")),
		1, 'x' x 100000,
		8, join('', map { pick(@ODD, @PUNCT, 'a', 'b', 'Z', '0') } 1 .. 1 + rint(12)));
}

# a near-valid variant of a valid value
sub mutate
{
	my ($v) = @_;
	my $pos = rint(length($v) + 1);
	return wpick(
		3, substr($v, 0, $pos) . pick(@ODD) . substr($v, $pos),
		2, substr($v, 0, $pos) . '/' . substr($v, $pos),
		1, substr($v, 0, $pos) . ($pos < length $v ? substr($v, $pos + 1) : ''),
		1, uc $v,
		1, " $v",
		1, "$v ",
		1, "$v/",
		2, pad($v, pick(@LIMIT_LENGTHS), pick('x', "\x{e9}", '/')),
		1, $v . pick(@ODD));
}

sub weird_lock_name
{
	my $kind = pick('mtx', 'sem', 'MTX', '', 'lock', 'mtx ', 'sem/launchplan');
	my $ns = pick('f', '', 'launchplan', "\x{fc}", 'a b', pick(@ODD), pick(@PUNCT), 'x' x 300);
	my $key = pick('a', '', 'a/b', 'p/d', 'p/d/n1/x', pick(@ODD), pick(@PUNCT), "\x{1f600}");
	return wpick(
		5, join('/', $kind, $ns, $key),
		1, "$kind/$ns",
		1, "$kind/",
		2, pad("$kind/$ns/", pick(@LIMIT_LENGTHS), pick('k', "\x{e9}", '/')),
		2, mutate(pick(@LOCKS)),
		1, weird_text());
}

my @INTERVALS = ('0', '-1 microsecond', '1 microsecond', '0.4 microseconds', '-1 s', '-1 mon',
	'1 mon -30 days', '1 day -86400 s', '178000000 years', '-178000000 years',
	'2147483647 days 2147483647 months', '-2147483648 days', '2147483647 hours',
	'292250 years', '292252 years', '290000 years 11 mons', '1000 years', '1 mon');
push @INTERVALS, 'infinity', '-infinity' if $PGV >= 170000;
my @TIMESTAMPS = ("'infinity'", "'-infinity'", "'epoch'", "'4714-11-24 00:00:00+00 BC'",
	"'294276-12-31 23:59:59.999999+00'", "'1999-12-31 23:59:59+14'", 'now() + interval \'290000 years\'',
	"'2000-01-01'", 'now() - interval \'100 years\'');
my @INT_BOUNDS = (2147483647, -2147483648, -1, 1000000, -1000000);
my @BIGINT_BOUNDS = ('9223372036854775807', '-9223372036854775808', '0', '-1', '1');

sub num { my ($v, $type) = @_; return "($v)::$type"; }
sub ival { my ($v) = @_; return defined $v ? lit($v) . '::interval' : 'NULL::interval'; }

# --- values by role -------------------------------------------------------------
my %NAME_ROLE = (
	lock_name => 'lock_name', lock_names => 'lock_names', holder => 'holder',
	workflowkey => 'holder', controller => 'controller', priority => 'priority',
	timeout => 'timeout', lease => 'lease', queued_at => 'ts', token => 'token',
	release_holds => 'bool', raise_on_limit => 'bool', project => 'project',
	domain => 'domain', name => 'plan_name', version => 'version',
	max_concurrency => 'max_concurrency', admit_limit => 'max_concurrency',
	behavior => 'behavior', scheduling => 'scheduling', max_pending => 'max_pending',
	execution_id => 'execution_id', replaced_execution_id => 'execution_id',
	phase => 'phase', window_length => 'interval', owner => 'role', event => 'event',
	reason => 'text', sizelimit => 'limit', held => 'bool', slots => 'slots', mode => 'mode',
	fair_key => 'fair_key', preemptible => 'bool');
my %COL_ROLE = ('sync_limit.name' => 'limit_name', 'sync_state.name' => 'lock_name',
	'sync_controller.controller' => 'controller_nn', 'sync_launch_plan.behavior' => 'behavior_uc',
	'sync_launch_plan.scheduling' => 'scheduling_uc', 'sync_limit.queueing' => 'queueing',
	'sync_limit.parent' => 'parent', 'sync_limit.aging_interval' => 'aging_interval',
	'sync_limit.aging_max_priority' => 'aging_max', 'sync_limit.preempt_grace' => 'preempt_grace',
	'sync_state.preemptible' => 'bool', 'sync_state.preempt_deadline' => 'ts');

my %GEN;
%GEN = (
	lock_name => sub {
		my ($w) = @_;
		return 'NULL::text' if $w && chance(0.08);
		return tlit($w ? weird_lock_name()
			  : wpick(50, pick(@HOT_LOCKS), 35, pick(@LOCKS), 10, 'mtx/f/r' . rint(40), 5, 'sem/h/r' . rint(20)));
	},
	lock_names => sub {
		my ($w) = @_;
		if (!$w)
		{
			my %seen;
			my @n = grep { !$seen{$_}++ } map { pick(@LOCKS) } 1 .. 1 + rint(3);
			return arr(\@n);
		}
		return wpick(
			2, 'NULL::text[]',
			2, arr([]),
			2, arr([undef]),
			2, arr([ pick(@LOCKS), undef ]),
			3, arr([ ('mtx/f/a') x 2 ]),
			2, arr([ map { "mtx/f/m$_" } 1 .. 64 ]),
			2, arr([ map { "mtx/f/m$_" } 1 .. 65 ]),
			1, arr([ map { "mtx/f/m$_" } 1 .. 1000 ]),
			2, arr([ pick(@LOCKS), pick(@LOCKS) ], undef, 2),
			3, arr([ pick(@LOCKS), 'mtx/f/lb' ], pick(0, 5, -3)),
			5, arr([ map { chance(0.5) ? weird_lock_name() : pick(@LOCKS) } 1 .. 1 + rint(4) ]));
	},
	holder => sub {
		my ($w) = @_;
		return 'NULL::text' if $w && chance(0.15);
		return tlit($w ? (chance(0.5) ? mutate(pick(@HOLDERS)) : weird_text())
			  : chance(0.5) ? pick(@HOT_HOLDERS) : pick(@HOLDERS));
	},
	controller => sub {
		my ($w) = @_;
		return 'NULL::text' if chance($w ? 0.15 : 0.4);
		return tlit($w ? (chance(0.5) ? mutate(pick(@CONTROLLERS)) : weird_text()) : pick(@CONTROLLERS));
	},
	controller_nn => sub {
		my ($w) = @_;
		return 'NULL::text' if $w && chance(0.1);
		return tlit($w ? (chance(0.5) ? mutate(pick(@CONTROLLERS)) : weird_text()) : pick(@CONTROLLERS));
	},
	priority => sub {
		my ($w) = @_;
		return $w ? (chance(0.2) ? 'NULL::integer' : num(pick(@INT_BOUNDS), 'integer'))
		  : num(pick(0, 0, 0, 1, 2, -1), 'integer');
	},
	timeout => sub {
		my ($w) = @_;
		return $w ? ival(chance(0.15) ? undef : pick(@INTERVALS))
		  : ival(pick('0', '1 ms', '10 ms', '30 ms', '30 ms', undef));
	},
	lease => sub {
		my ($w) = @_;
		return $w ? ival(chance(0.1) ? undef : pick(@INTERVALS))
		  : ival(pick(undef, undef, '100 ms', '1 s', '10 s', '1 hour'));
	},
	max_pending => sub {
		my ($w) = @_;
		return $w ? ival(chance(0.1) ? undef : pick(@INTERVALS))
		  : ival(pick(undef, undef, '200 ms', '1 s', '1 hour'));
	},
	interval => sub {
		my ($w) = @_;
		return $w ? ival(chance(0.1) ? undef : pick(@INTERVALS)) : ival(pick('1 hour', '1 s', '1 day'));
	},
	ts => sub {
		my ($w) = @_;
		return 'NULL::timestamptz' if chance($w ? 0.1 : 0.5);
		return '(' . ($w ? pick(@TIMESTAMPS) : pick('now()', "now() - interval '1 minute'",
					"now() + interval '1 minute'", "'2000-01-01 00:00:00+00'")) . ')::timestamptz';
	},
	token => sub {
		my ($w) = @_;
		return $w ? num(pick(@BIGINT_BOUNDS, 'NULL'), 'bigint')
		  : pick('NULL::bigint',
			'(SELECT max(token) FROM sync_holders)',
			'(SELECT min(token) FROM sync_state)');
	},
	bigint => sub {
		my ($w) = @_;
		return num(pick(@BIGINT_BOUNDS, 'NULL', rint(100)), 'bigint');
	},
	bool => sub {
		my ($w) = @_;
		return $w && chance(0.3) ? 'NULL::boolean' : pick('true', 'false');
	},
	project => sub { return ident($_[0], chance(0.85) ? ['p'] : \@PROJECTS, 63); },
	domain => sub { return ident($_[0], ['d'], 63); },
	plan_name => sub { return ident($_[0], chance(0.5) ? [ 'n1', 'n6' ] : \@PLANS, 63); },
	version => sub { return ident($_[0], chance(0.7) ? ['v1'] : \@VERSIONS, 255); },
	execution_id => sub { return ident($_[0], [ map { "e$_" } 1 .. (chance(0.5) ? 5 : 40) ], 255); },
	max_concurrency => sub {
		my ($w) = @_;
		return $w ? num(pick(@INT_BOUNDS, 'NULL'), 'integer') : num(pick(0, 1, 1, 2, 2, 3, 'NULL'), 'integer');
	},
	behavior => sub {
		my ($w) = @_;
		return $w ? tlit(chance(0.5) ? mutate(pick(qw(WAIT ABORT REPLACE SKIP))) : weird_text())
		  : chance(0.1) ? 'NULL::text' : tlit(pick(qw(WAIT ABORT REPLACE SKIP wait Skip)));
	},
	scheduling => sub {
		my ($w) = @_;
		return $w ? tlit(chance(0.5) ? mutate(pick(qw(FIFO LIFO PRIORITY))) : weird_text())
		  : chance(0.1) ? 'NULL::text' : tlit(pick(qw(FIFO LIFO PRIORITY lifo)));
	},
	behavior_uc => sub {
		my ($w) = @_;
		return $w ? $GEN{behavior}->($w) : chance(0.15) ? 'NULL::text' : tlit(pick(qw(WAIT ABORT REPLACE SKIP)));
	},
	scheduling_uc => sub {
		my ($w) = @_;
		return $w ? $GEN{scheduling}->($w) : tlit(pick(qw(FIFO LIFO PRIORITY)));
	},
	phase => sub {
		my ($w) = @_;
		return 'NULL::text' if $w && chance(0.1);
		return tlit($w ? pick('SKIPPED', mutate(pick(@PHASES)), weird_text()) : chance(0.8) ? pick(@PHASES) : lc pick(@PHASES));
	},
	event => sub {
		my ($w) = @_;
		return tlit($w ? weird_text() : pick(qw(SKIPPED ABORTED REPLACED PROMOTED TIMED_OUT)));
	},
	limit_name => sub {
		my ($w) = @_;
		return 'NULL::text' if $w && chance(0.1);
		return tlit($w ? (chance(0.6) ? mutate(pick(@LIMITS)) : weird_text()) : pick(@LIMITS));
	},
	# a parent row: mostly one of the pools' parents, or none; else another
	# row of the pool (a child: three levels; a pattern; a launch plan's
	# row; itself; f/none, which has no row) or a near-valid name
	parent => sub {
		my ($w) = @_;
		return wpick(1, 'NULL::text', 4, tlit(mutate(pick(@PARENTS, @LIMITS))), 3, tlit(weird_text())) if $w;
		return wpick(25, 'NULL::text', 55, tlit(pick(@PARENTS)), 20, tlit(pick(@LIMITS)));
	},
	# priority aging: an interval of a second or a few, or none (a weird
	# one: below the 1 second the CHECK asks, or one of the intervals);
	# a ceiling near the priorities the fuzz asks for
	aging_interval => sub {
		my ($w) = @_;
		return $w ? ival(pick(undef, '999 ms', '0', '-1 s', @INTERVALS)) : ival(pick(undef, '1 s', '1 s', '2 s', '1 hour'));
	},
	aging_max => sub {
		my ($w) = @_;
		return $w ? num(pick(@INT_BOUNDS, 'NULL'), 'integer') : num(pick('NULL', 0, 1, 2, 5), 'integer');
	},
	# preemption: a grace of none, nothing, a moment or an hour (a weird
	# one: negative, or one of the intervals)
	preempt_grace => sub {
		my ($w) = @_;
		return $w ? ival(pick(undef, '-1 s', '-1 us', @INTERVALS)) : ival(pick(undef, undef, '0', '100 ms', '1 hour'));
	},
	queueing => sub {
		my ($w) = @_;
		return tlit($w ? (chance(0.5) ? mutate(pick('strict', 'best_effort')) : weird_text()) : pick('strict', 'best_effort', undef));
	},
	limit => sub {
		my ($w) = @_;
		return $w ? num(pick(@INT_BOUNDS, 'NULL'), 'integer') : num(pick(0, 1, 1, 2, 3), 'integer');
	},
	slots => sub {
		my ($w) = @_;
		return $w ? num(pick(@INT_BOUNDS, 0, 'NULL'), 'integer') : num(pick(1, 1, 1, 1, 2, 3), 'integer');
	},
	mode => sub {
		my ($w) = @_;
		return $w ? (chance(0.2) ? 'NULL::text' : tlit(chance(0.5) ? mutate(pick('exclusive', 'shared')) : weird_text()))
		  : tlit(pick('exclusive', 'exclusive', 'exclusive', 'shared'));
	},
	fair_key => sub {
		my ($w) = @_;
		return $w ? tlit(chance(0.5) ? mutate(pick(@FAIR_KEYS)) : weird_text())
		  : chance(0.6) ? 'NULL::text' : tlit(pick(@FAIR_KEYS));
	},
	role => sub {
		my ($w) = @_;
		return $w ? pick("'-'", "'4294967295'", "'pg_monitor'", 'NULL') . '::regrole'
		  : lit(pick(@ROLES)) . '::regrole';
	},
	text => sub {
		my ($w) = @_;
		return $w ? tlit(weird_text()) : chance(0.5) ? 'NULL::text' : tlit('r');
	},
	'text[]' => sub {
		my ($w) = @_;
		return $w ? arr([ map { weird_text() } 1 .. rint(4) ]) : arr([ 'a', 'b' ]);
	},
	integer => sub { my ($w) = @_; return $w ? num(pick(@INT_BOUNDS, 'NULL'), 'integer') : num(pick(0, 1, 2), 'integer'); },
	'timestamp with time zone' => sub { return $GEN{ts}->(@_); },
	boolean => sub { return $GEN{bool}->(@_); },
	regrole => sub { return $GEN{role}->(@_); },
);

sub ident
{
	my ($w, $pool, $max) = @_;
	return tlit(pick(@$pool)) unless $w;
	return wpick(
		1, 'NULL::text',
		4, tlit(mutate(pick(@$pool))),
		2, tlit(pad(pick(@$pool), pick($max - 1, $max, $max + 1), pick('x', "\x{e9}"))),
		3, tlit(weird_text()));
}

# A value for an argument or a column: by table.column, by name, by type.
sub value
{
	my ($name, $type, $weird, $table) = @_;
	my $role = (defined $table ? $COL_ROLE{"$table.$name"} : undef) // $NAME_ROLE{ $name // '' } // $type;
	$role = $type unless $GEN{$role};
	return $GEN{$role}->($weird) if $GEN{$role};
	if ($type eq 'bigint') { return $GEN{bigint}->($weird); }
	if ($type eq 'interval') { return $GEN{interval}->($weird); }
	return "NULL::$type";
}

# --- statements ----------------------------------------------------------------
sub qid { my ($n) = @_; (my $x = $n) =~ s/"/""/g; return qq{"$x"}; }

sub call_expr
{
	my ($f) = @_;
	my @args = @{ $f->{args} };
	my $weird = pick(0, 0, 0.15, 0.5);
	my $nreq = @args - $f->{ndef};
	my @parts;
	if (chance(0.3) && !grep { $_->{name} eq '' } @args)
	{
		for my $i (0 .. $#args)
		{
			next if $i >= $nreq && chance(0.4);
			push @parts, qid($args[$i]{name}) . ' => ' . value($args[$i]{name}, $args[$i]{type}, chance($weird));
		}
	}
	else
	{
		my $n = chance(0.6) ? @args : $nreq + rint($f->{ndef} + 1);
		push @parts, value($args[$_]{name}, $args[$_]{type}, chance($weird)) for 0 .. $n - 1;
	}
	return "$f->{qname}(" . join(', ', @parts) . ')';
}

# (statement, label): one call, two calls in one statement, or one three times
sub call_statement
{
	my ($f) = @_;
	return ('CALL ' . call_expr($f), $f->{sig}) if $f->{kind} eq 'p';
	my $form = wpick(90, 'one', 5, 'two', 5, 'three');
	if ($form eq 'two')
	{
		my $g = pick(grep { $_->{kind} ne 'p' } @FUNCS);
		return ('SELECT (SELECT string_agg(r::text, \',\') FROM ' . call_expr($f) . ' r), '
			  . '(SELECT string_agg(r::text, \',\') FROM ' . call_expr($g) . ' r)', 'two calls in one statement');
	}
	return ('SELECT r::text FROM generate_series(1, 3) g, LATERAL ' . call_expr($f) . ' r', 'one call three times')
	  if $form eq 'three';
	return ('SELECT r::text FROM ' . call_expr($f) . ' r', $f->{sig});
}

my %TABLE_WEIGHT = (sync_limit => 4, sync_state => 3, sync_controller => 2,
	sync_launch_plan => 2, sync_execution => 3, sync_launch_event => 1);

sub where_clause
{
	my ($t) = @_;
	return '' if chance(0.08);
	my @pk = grep { $_->{pk} } @{ $t->{cols} };
	my $c = (@pk && chance(0.6)) ? pick(@pk) : pick(@{ $t->{cols} });
	my $w = chance(0.3);
	return ' WHERE ' . wpick(
		8, qid($c->{name}) . ' OPERATOR(pg_catalog.=) ' . value($c->{name}, $c->{type}, $w, $t->{name}),
		1, qid($c->{name}) . ' IS NULL',
		1, qid($c->{name}) . ' IS NOT NULL',
		1, 'ctid = (SELECT min(ctid) FROM ' . $t->{qname} . ')');
}

my %attempted; # label -> count (by sessions that may change the tables)

# A change of the nesting of sync_limit, as (statement, operation): a row's
# parent set (or cleared, or to a row that breaks a rule), a parent's or a
# child's sizelimit raised or lowered (a parent below a child is refused),
# a parent and a child changed together, a row of its own for a key under
# the pattern h/* (which takes it from h/*'s parent), a parent deleted
# while children name it (23503) or a child deleted, a parent renamed (its
# children follow, ON UPDATE CASCADE) or renamed to a name no parent may
# have; or a row's priority aging set or cleared (both columns, or one of
# them with a weird value); or a row's preempt_grace set or cleared.
sub nested_limit_statement
{
	my ($t) = @_;
	my $w = chance(0.15);
	my $is = sub { return ' WHERE name OPERATOR(pg_catalog.=) ' . tlit($_[0]); };
	return @{ wpick(
		30, [ "UPDATE $t->{qname} SET parent = " . $GEN{parent}->($w)
			  . $is->(pick(@CHILDREN, @PARENTS, 'h/r' . rint(20))), 'UPDATE' ],
		25, [ "UPDATE $t->{qname} SET sizelimit = " . $GEN{limit}->(0) . $is->(pick(@PARENTS, @PARENTS, @CHILDREN)), 'UPDATE' ],
		8, [ "UPDATE $t->{qname} SET sizelimit = " . $GEN{limit}->(0)
			  . ' WHERE name OPERATOR(pg_catalog.=) ANY (' . arr([ pick(@PARENTS), pick(@CHILDREN) ]) . ')', 'UPDATE' ],
		20, [ "INSERT INTO $t->{qname} (name, sizelimit, parent) VALUES (" . tlit('h/r' . rint(20)) . ', '
			  . $GEN{limit}->(0) . ', ' . $GEN{parent}->($w) . ') ON CONFLICT (name) DO UPDATE SET '
			  . 'sizelimit = EXCLUDED.sizelimit, parent = EXCLUDED.parent', 'INSERT' ],
		10, [ "DELETE FROM $t->{qname}" . $is->(pick(@PARENTS, 'h/own', 'h/*', 'h/r' . rint(20))), 'DELETE' ],
		8, [ "UPDATE $t->{qname} SET preempt_grace = " . $GEN{preempt_grace}->($w)
			  . $is->(pick(@PARENTS, @CHILDREN, @LIMITS)), 'UPDATE' ],
		12, [ "UPDATE $t->{qname} SET aging_interval = " . $GEN{aging_interval}->($w) . ', aging_max_priority = '
			  . $GEN{aging_max}->($w) . $is->(pick(@CHILDREN, @LIMITS)), 'UPDATE' ],
		7, [ "UPDATE $t->{qname} SET name = " . tlit(pick('f/all2', 'h/all2', 'h/all/*', 'launchplan/x/y/z', 'f/s1'))
			  . $is->(pick(@PARENTS, 'f/all2', 'h/all2')), 'UPDATE' ]) };
}

# returns (statement, operation)
sub dml_statement
{
	my ($t, $op);
	# Now and then a change of a table that no privileged session has made
	# yet, so that every trigger is reached whatever the seed (the check at
	# the end); otherwise a table and an operation at random.
	my @unreached_changes = grep { !$attempted{"$_->[0]{name} $_->[1]"} }
	  map { my $tb = $_; map { [ $tb, $_ ] } qw(INSERT UPDATE DELETE TRUNCATE) } @TABLES;
	if (@unreached_changes && chance(0.1))
	{
		($t, $op) = @{ pick(@unreached_changes) };
	}
	else
	{
		$t = wpick(map { ($TABLE_WEIGHT{ $_->{name} } // 1, $_) } @TABLES);
		$op = wpick(36, 'INSERT', 28, 'UPDATE', 24, 'DELETE', 7, 'TRUNCATE', 5, 'LOCK');
	}
	if ($t->{name} eq 'sync_limit' && $op =~ /^(INSERT|UPDATE|DELETE)$/ && chance(0.5))
	{
		my ($s, $kind) = nested_limit_statement($t);
		return ($s, "$t->{name} $kind");
	}
	my $w = pick(0, 0, 0.2, 0.6);
	my @cols = @{ $t->{cols} };
	if ($op eq 'INSERT')
	{
		my @c = grep { $_->{required} || chance(0.5) } @cols;
		@c = ($cols[0]) unless @c;
		my @rows;
		for (1 .. (chance(0.15) ? 2 + rint(2) : 1))
		{
			push @rows, '(' . join(', ', map { value($_->{name}, $_->{type}, chance($w), $t->{name}) } @c) . ')';
		}
		my $s = "INSERT INTO $t->{qname} (" . join(', ', map { qid($_->{name}) } @c) . ') VALUES ' . join(', ', @rows);
		my @pk = grep { $_->{pk} } @cols;
		my @nonpk = grep { !$_->{pk} } @c;
		if (@pk && chance(0.25))
		{
			$s .= ' ON CONFLICT (' . join(', ', map { qid($_->{name}) } @pk) . ') DO '
			  . (@nonpk && chance(0.6)
				? 'UPDATE SET ' . join(', ', map { qid($_->{name}) . ' = EXCLUDED.' . qid($_->{name}) } @nonpk)
				: 'NOTHING');
		}
		return ($s, "$t->{name} INSERT");
	}
	if ($op eq 'UPDATE')
	{
		my @set = map { pick(@cols) } 1 .. 1 + rint(2);
		my %seen;
		@set = grep { !$seen{ $_->{name} }++ } @set;
		return ("UPDATE $t->{qname} SET "
			  . join(', ', map { qid($_->{name}) . ' = ' . value($_->{name}, $_->{type}, chance($w), $t->{name}) } @set)
			  . where_clause($t), "$t->{name} UPDATE");
	}
	return ("DELETE FROM $t->{qname}" . where_clause($t), "$t->{name} DELETE") if $op eq 'DELETE';
	return ("TRUNCATE $t->{qname}", "$t->{name} TRUNCATE") if $op eq 'TRUNCATE';
	return (pick("SELECT count(*) FROM (SELECT 1 FROM $t->{qname}" . where_clause($t) . ' FOR UPDATE) s',
			"SELECT count(*) FROM (SELECT 1 FROM $t->{qname}" . where_clause($t) . ' FOR SHARE) s',
			"LOCK TABLE $t->{qname} IN " . pick('ROW EXCLUSIVE', 'SHARE', 'ACCESS EXCLUSIVE') . ' MODE'),
		"$t->{name} LOCK");
}

# --- sessions: psql processes driven through IPC::Run -------------------------
my $LOGF;
open($LOGF, '>', "$PostgreSQL::Test::Utils::log_path/025_fuzz_statements.log") or die $!;
binmode($LOGF, ':utf8');
my @recent;    # the last statements, for reports

my @problems;
my %stats;     # label -> sqlstate -> count
my $step = 0;

sub problem
{
	my ($what) = @_;
	print $LOGF "-- PROBLEM: $what\n";
	utf8::encode($what);    # the TAP output takes bytes
	push @problems, "step $step: $what" if @problems < $MAX_PROBLEMS;
	note "PROBLEM at step $step: $what";
}

sub session_start
{
	my ($s) = @_;
	@$s{qw(in out err seq tx aborted busy pid)} = ('', '', '', 0, 0, 0, undef, undef);
	$s->{timer} = IPC::Run::timer($PostgreSQL::Test::Utils::timeout_default);
	my $st = $s->{statement_timeout} // $STATEMENT_TIMEOUT_MS;
	my $lt = $s->{lock_timeout} // 0;
	my $conn = $node->connstr($s->{db})
	  . " user=$s->{user} application_name=fuzz_$s->{name}"
	  . " options='-c statement_timeout=$st -c lock_timeout=$lt"
	  . ($s->{search_path} ? " -c search_path=$s->{search_path}" : '') . "'";
	$s->{h} = IPC::Run::start([ 'psql', '-X', '-q', '-A', '-t', '-v', 'VERBOSITY=verbose', '-d', $conn ],
		'<', \$s->{in}, '>', \$s->{out}, '2>', \$s->{err}, $s->{timer});
	my $r = run($s, 'SELECT pg_backend_pid()');
	die "session $s->{name} did not start: $r->[0]{err}" unless $r->[0]{out} =~ /^(\d+)$/m;
	$s->{pid} = $1;
	return $s;
}

sub session_stop
{
	my ($s) = @_;
	$s->{in} .= "\\q\n";
	eval { $s->{h}->finish; };
	eval { $s->{h}->kill_kill; } if $@;
	$s->{h} = undef;
}

# Send statements to a session without waiting for them.
sub send_stmts
{
	my ($s, @stmts) = @_;
	my $n = ++$s->{seq};
	my $buf = '';
	for my $k (0 .. $#stmts)
	{
		$buf .= "$stmts[$k];\n\\echo '\@\@$n.$k\@\@'\n\\warn '\@\@$n.$k\@\@'\n";
	}
	$s->{in} .= $buf;
	$s->{busy} = { n => $n, stmts => \@stmts };
	$s->{timer}->start($PostgreSQL::Test::Utils::timeout_default);
}

# Wait for what send_stmts sent; one result per statement:
# { out, err, errors => [[severity, sqlstate, message]], lost }
sub collect
{
	my ($s) = @_;
	my $b = $s->{busy} or die "session $s->{name} is not busy";
	my ($n, $last) = ($b->{n}, $#{ $b->{stmts} });
	my $done = qr/\@\@$n\.$last\@\@\n/;
	my $lost = 0;
	until ($s->{out} =~ $done && $s->{err} =~ $done)
	{
		if (!$s->{h}->pumpable) { $lost = 1; last; }
		die "session $s->{name}: no answer in $PostgreSQL::Test::Utils::timeout_default s to: "
		  . join('; ', @{ $b->{stmts} }) if $s->{timer}->is_expired;
		eval { $s->{h}->pump; };
	}
	my @res;
	for my $k (0 .. $last)
	{
		my $mark = qr/\@\@$n\.$k\@\@\n/;
		my %r = (out => '', err => '', errors => [], lost => 0);
		for my $stream (qw(out err))
		{
			if ($s->{$stream} =~ s/^(.*?)$mark//s) { $r{$stream} = $1; }
			else { $r{$stream} = $s->{$stream}; $s->{$stream} = ''; $r{lost} = 1; }
		}
		while ($r{err} =~ /^(?:psql:[^\n]*?: )?(ERROR|FATAL|PANIC|WARNING):  ([0-9A-Z]{5}): ([^\n]*)/mg)
		{
			push @{ $r{errors} }, [ $1, $2, $3 ];
		}
		utf8::decode($r{out});
		utf8::decode($r{err});
		$r{out} =~ s/\n\z//;
		$r{lost} = 1 if $r{err} =~ /connection to server was lost|server closed the connection|no connection to the server/;
		push @res, \%r;
	}
	$s->{busy} = undef;
	if ($lost || grep { $_->{lost} } @res)
	{
		$res[-1]{lost} = 1;
		eval { $s->{h}->finish; };
		$s->{dead} = 1;
	}
	return \@res;
}

sub run { my ($s, @stmts) = @_; send_stmts($s, @stmts); return collect($s); }

# the first ERROR, FATAL or PANIC of a result, as [severity, sqlstate, message]
sub first_error
{
	my ($r) = @_;
	my ($e) = grep { $_->[0] ne 'WARNING' } @{ $r->{errors} };
	return $e;
}

# Is this SQLSTATE acceptable as an answer to fuzzed input?
sub bad_sqlstate
{
	my ($state) = @_;
	return 1 if $state =~ /^(XX|58)/;
	return 1 if $state =~ /^53/ && $state ne '53400';
	return 0;
}

my @SESSIONS = (
	{ name => 'super', db => 'postgres', user => 'postgres', weight => 25 },
	{ name => 'admin', db => 'postgres', user => 'fuzz_admin', weight => 25 },
	{ name => 'user', db => 'postgres', user => 'fuzz_user', weight => 22 },
	{ name => 'user2', db => 'postgres', user => 'fuzz_user', weight => 13,
		search_path => 'fuzz_evil,pg_catalog,public' },
	{ name => 'other', db => 'other', user => 'fuzz_admin', weight => 10 });
session_start($_) for @SESSIONS;
my %CHECKER = (user => 'postgres', statement_timeout => 20000, lock_timeout => 100);
my $checker = session_start({ name => 'checker', db => 'postgres', %CHECKER });
my $checker_other = session_start({ name => 'checker_other', db => 'other', %CHECKER });
my $listener = session_start({ name => 'listener', db => 'postgres', %CHECKER });
run($listener, 'LISTEN syncwf', 'LISTEN syncwf_launch');
my %notifications;    # channel -> count

# A statement of the checker that must work; $soft: unless another
# session holds a lock it needs (the checker's lock_timeout is 100 ms).
sub check_sql
{
	my ($s, $sql, $what, $soft) = @_;
	my $r = run($s, $sql)->[0];
	my $e = first_error($r);
	return undef if $soft && !$r->{lost} && $e && $e->[1] eq '55P03';
	if ($e || $r->{lost})
	{
		problem("$what: " . ($e ? "$e->[1] $e->[2]" : 'connection lost') . " ($sql)");
		session_start($s) if $r->{lost} && server_up();
		return undef;
	}
	return $r->{out};
}

my $start_time = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
my $server_down = 0;

sub server_up
{
	return 0 if $server_down;
	my $ok = eval { $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()', timeout => 30) };
	if (!defined $ok)
	{
		$server_down = 1;
		problem('the server is down');
		return 0;
	}
	if ($ok ne $start_time)
	{
		problem("the server restarted (started at $start_time, now $ok)");
		$start_time = $ok;
	}
	return 1;
}

# --- the server log -------------------------------------------------------------
my $log_offset = -s $node->logfile;
my %log_states;    # sqlstate -> count, over every process
my $shutting_down = 0;

sub scan_log
{
	my $text = slurp_file($node->logfile, $log_offset);
	$log_offset += length $text;
	utf8::decode($text);
	for my $line (split /\n/, $text)
	{
		# background workers exit with code 1 when the server shuts down
		$shutting_down = 1 if $line =~ /received (fast|smart|immediate) shutdown request/;
		$shutting_down = 0 if $line =~ /database system is ready to accept connections/;
		next if $shutting_down && $line =~ /exited with exit code 1$/;
		if ($line =~ /^\S+ \S+ \S+ \[\d+\] (.*?) ([0-9A-Z]{5}) (ERROR|FATAL|PANIC|WARNING|LOG):/)
		{
			my ($btype, $state, $sev) = ($1, $2, $3);
			$log_states{"$state $sev $btype"}++ if $state ne '00000';
			problem("server log: $line")
			  if (bad_sqlstate($state) && $line !~ /maximum number of prepared transactions reached/)
			  || $sev eq 'PANIC';
			problem("server log, $btype: $line") if $sev eq 'ERROR' && $btype !~ /client backend/;
		}
		problem("server log: $line")
		  if $line =~ /TRAP:|terminated by signal|exited with exit code|was terminated|server process .* exited|all server processes terminated|leak|was not closed|still referenced/
		  && $line !~ /terminating connection due to administrator command/
		  && $line !~ /DETAIL:  Key \(.*\) is still referenced from table/;    # a foreign key's 23503
	}
}

# --- checks -----------------------------------------------------------------------
my %seen_locks = (postgres => {}, other => {});    # lock names seen in sync_locks
# full_parents: parent rows whose children fill them; behind_parent:
# waiters on a child with room for them whose parent has none
my @BUILT_UP = qw(session transaction keyed waiters executions plans controllers full_parents behind_parent);
my %max_seen = map { $_ => 0 } @BUILT_UP;

sub read_everything
{
	my ($quiescent) = @_;
	for my $pair ([ $checker, 'postgres' ], [ $checker_other, 'other' ])
	{
		my ($c, $db) = @$pair;
		for my $rel (@RELS)
		{
			my $sql = "SELECT count(*), coalesce(sum(length(t::text)), 0) FROM (SELECT * FROM $rel) t";
			my $r = run($c, $sql)->[0];
			my $e = first_error($r);
			next if !$r->{lost} && $e && $e->[1] eq '55P03' && !$quiescent;    # a session's lock
			problem("reading $rel in $db: " . ($e ? "$e->[1] $e->[2]" : 'connection lost')) if $e || $r->{lost};
			session_start($c) if $r->{lost} && server_up();
		}
	}
}

sub light_check
{
	my ($quiescent) = @_;
	return unless server_up();
	read_everything($quiescent);
	scan_log();
	my $r = run($listener, 'SELECT 1')->[0];
	for my $line (split /\n/, $r->{out})
	{
		next if $line eq '1';
		if ($line =~ /^Asynchronous notification "(\w+)" with payload "(.*)" received from server process with PID \d+\.$/)
		{
			my ($ch, $payload) = ($1, $2);
			$notifications{$ch}++;
			my $ev = eval { JSON::PP->new->decode($payload) };    # characters, not bytes
			problem("notification on $ch is not valid JSON: $payload") unless ref $ev eq 'HASH';
		}
		else
		{
			problem("listener: unexpected line: $line");
		}
	}
	my $evil = check_sql($checker,
		q{SELECT string_agg(DISTINCT who || ' ran ' || what, ', ') FROM fuzz_evil.ran}, 'fuzz_evil.ran', 1);
	if (defined $evil && $evil ne '')
	{
		problem("look-alikes of a caller's search_path ran inside syncwf: $evil; last statements:\n"
			  . join('', @recent));
		check_sql($checker, 'TRUNCATE fuzz_evil.ran', 'fuzz_evil.ran');
	}
	my $counts = check_sql($checker, q{
SELECT (SELECT count(*) FROM sync_holders WHERE scope = 'session'),
       (SELECT count(*) FROM sync_holders WHERE scope = 'transaction'),
       (SELECT count(*) FROM sync_holders WHERE scope = 'keyed'),
       (SELECT count(*) FROM sync_waiters),
       (SELECT count(*) FROM sync_execution),
       (SELECT count(*) FROM sync_launch_plan),
       (SELECT count(*) FROM sync_controller),
       (SELECT count(DISTINCT parent_row) FROM sync_locks
         WHERE parent_sizelimit > 0 AND parent_slots_held >= parent_sizelimit),
       (SELECT count(*) FROM sync_waiters w JOIN sync_locks l USING (lock_name)
         WHERE l.parent_slots_held + w.slots > l.parent_sizelimit AND l.slots_held + w.slots <= l.sizelimit)},
		'counting', 1);
	if (defined $counts && $counts =~ /^(\d+)\|(\d+)\|(\d+)\|(\d+)\|(\d+)\|(\d+)\|(\d+)\|(\d+)\|(\d+)$/)
	{
		my @v = ($1, $2, $3, $4, $5, $6, $7, $8, $9);
		for my $k (@BUILT_UP)
		{
			my $x = shift @v;
			$max_seen{$k} = $x if $x > $max_seen{$k};
		}
	}
	my $running = grep { $_->{busy} } @SESSIONS;
	for my $pair ([ $checker, 'postgres' ], [ $checker_other, 'other' ])
	{
		my ($c, $db) = @$pair;
		parent_counts($c, $db);
		over_limit($c, $db) unless $running;
	}
	for my $pair ([ $checker, 'postgres' ], [ $checker_other, 'other' ])
	{
		my ($c, $db) = @$pair;
		next if keys %{ $seen_locks{$db} } >= 400;
		my $names = check_sql($c, q{SELECT string_agg(encode(convert_to(lock_name, 'UTF8'), 'hex'), ',') FROM sync_locks},
			'sync_locks', 1);
		for my $hex (split /,/, $names // '')
		{
			my $n = pack('H*', $hex);
			utf8::decode($n);
			$seen_locks{$db}{$n} = 1;
		}
	}
}

# Repeat a check query until it returns 't' (the worker and lease expiry
# race with it); report the last answer otherwise.
sub settled
{
	my ($sql, $what, $c) = @_;
	$c //= $checker;
	my $out;
	for my $try (1 .. 20)
	{
		$out = check_sql($c, $sql, $what);
		return 1 if !defined $out || $out eq 't';
		usleep(100_000);
	}
	problem("$what: $out");
	return 0;
}

sub keyed_invariants
{
	settled(q{SELECT sync_reconcile() >= 0 AND NOT EXISTS (
    SELECT 1
      FROM (SELECT lock_name, holder, state = 'held' AS held, token
              FROM sync_entry_status() WHERE scope = 'keyed') m
      FULL JOIN sync_state s ON s.name = m.lock_name AND s.workflowkey = m.holder
     WHERE m.lock_name IS NULL OR s.name IS NULL OR m.held <> s.held
        OR (s.held AND m.token IS DISTINCT FROM s.token)
        OR (s.held AND (s.token IS NULL OR s.granted_at IS NULL))
        OR (NOT s.held AND s.token IS NOT NULL))},
		'keyed entries in shared memory and rows of sync_state differ');
	# only a preemptible hold is ever preempted, and its lease ends with
	# its grace
	settled(q{SELECT NOT EXISTS (
    SELECT 1 FROM sync_state
     WHERE preempt_deadline IS NOT NULL
       AND NOT (held AND preemptible AND lease_expires <= preempt_deadline))},
		'a row of sync_state is preempted but not a preemptible hold, or outlives its grace');
}

# sync_locks counts what sync_holders and sync_waiters list
sub locks_agree
{
	my ($c, $db) = @_;
	settled(q{SELECT NOT EXISTS (
    SELECT 1 FROM sync_locks l
     WHERE l.holders <> (SELECT count(*) FROM sync_holders h WHERE h.lock_name = l.lock_name)
        OR l.waiters <> (SELECT count(*) FROM sync_waiters w WHERE w.lock_name = l.lock_name)
        OR (l.kind = 'mutex' AND l.holders > 1
            AND EXISTS (SELECT 1 FROM sync_holders h WHERE h.lock_name = l.lock_name AND h.mode = 'exclusive')))},
		"$db: sync_locks disagrees with sync_holders and sync_waiters", $c);
}

# --- nested limits -------------------------------------------------------------------
# When sync_limit last changed, as the checker sees it: read after every
# step (and after whatever else may change it), keyed by row name (hex) or
# '*' for any change of which rows exist (a pattern may then apply to
# other semaphores, a semaphore to another parent).  A change of a row's
# sizelimit counts for that row (its semaphores, or its children if it is
# a parent); a change of its parent, for the old and the new parent.  The
# time is the checker's clock at the read that saw the change, so never
# before its commit.  A change the reads may have missed (a statement left
# running, which may commit between two reads, or the extension created
# again, or a restart) counts as '*' at the next read.
my %limit_text;                                      # db -> the rows as last read
my %limit_changed = (postgres => {}, other => {});   # db -> key -> timestamptz
my %limit_unseen = (postgres => 1, other => 1);      # db -> 1: count the next read as a change of everything

sub track_limits
{
	for my $pair ([ $checker, 'postgres' ], [ $checker_other, 'other' ])
	{
		my ($c, $db) = @$pair;
		next if $c->{dead};
		# soft: a session may hold a lock on the table; a later read sees it
		my $out = check_sql($c, q{SELECT clock_timestamp() || '|' || coalesce(string_agg(
    encode(convert_to(name, 'UTF8'), 'hex') || ':' || sizelimit || ':' || coalesce(encode(convert_to(parent, 'UTF8'), 'hex'), '-'),
    ',' ORDER BY name), '') FROM sync_limit}, "$db: reading sync_limit", 1);
		next unless defined $out;
		my ($now, $text) = split /\|/, $out, 2;
		my $old = $limit_text{$db};
		$limit_text{$db} = $text;
		if ($limit_unseen{$db} || !defined $old)
		{
			$limit_changed{$db}{'*'} = $now;
			$limit_unseen{$db} = 0;
			next;
		}
		next if $text eq $old;
		my %o = map { my ($n, @v) = split /:/; ($n => \@v) } split /,/, $old;
		my %n = map { my ($n, @v) = split /:/; ($n => \@v) } split /,/, $text;
		if (join(',', sort keys %o) ne join(',', sort keys %n))
		{
			$limit_changed{$db}{'*'} = $now;
			next;
		}
		for my $k (keys %n)
		{
			my ($ol, $op) = @{ $o{$k} };
			my ($nl, $np) = @{ $n{$k} };
			$limit_changed{$db}{$k} = $now if $ol ne $nl;
			if ($op ne $np)
			{
				$limit_changed{$db}{$op} = $now if $op ne '-';
				$limit_changed{$db}{$np} = $now if $np ne '-';
			}
		}
	}
}

# Nested limits, at any check: the slots sync_locks shows held under each
# parent, on each of its children, are the slots its live children hold
# (a cached child holds none), and all its children show the same parent
# limit.
sub parent_counts
{
	my ($c, $db) = @_;
	settled(q{WITH l AS (SELECT * FROM sync_locks WHERE parent_row IS NOT NULL),
     g AS (SELECT parent_row, sum(slots_held) AS held, min(parent_slots_held) AS lo, max(parent_slots_held) AS hi,
                  min(parent_sizelimit) AS llo, max(parent_sizelimit) AS lhi, string_agg(lock_name, ', ') AS children
             FROM l GROUP BY parent_row)
SELECT coalesce(string_agg(format('parent %s: its children (%s) hold %s slots, sync_locks shows %s held of %s',
                                  parent_row, children, held,
                                  CASE WHEN lo = hi THEN lo::text ELSE lo || ' to ' || hi END,
                                  CASE WHEN llo = lhi THEN llo::text ELSE llo || ' to ' || lhi END), '; '), 't')
  FROM g WHERE held <> lo OR lo <> hi OR llo <> lhi},
		"$db: slots held under a parent and by its children differ", $c);
}

# No semaphore and no parent holds more than its limit, unless a change of
# sync_limit could explain it: a lowered limit preempts nobody, a row that
# takes another parent brings its holds along, and a restart rebuilds
# keyed holds whatever the limits.  So each hold granted after the last
# change that concerns its semaphore's row (or its parent) must have found
# room: the holds granted up to it (and still held) fit the limit.  Claims
# of sync_state rows are granted only with room too.  Launch plans'
# semaphores are left out (their executions may be granted whatever the
# limit).  Only with no statement running, so that no change can commit
# unseen.
sub over_limit
{
	my ($c, $db) = @_;
	my $changes = join(', ', map { '(' . lit($_) . ', ' . lit($limit_changed{$db}{$_}) . '::timestamptz)' }
		  sort keys %{ $limit_changed{$db} });
	$changes ||= q{('*', '-infinity'::timestamptz)};
	settled(qq{WITH ch(k, at) AS (VALUES $changes),
     l AS (SELECT * FROM sync_locks WHERE kind = 'semaphore'),
     h AS (SELECT h.lock_name, h.slots, h.since, l.limit_row, l.sizelimit, l.parent_row, l.parent_sizelimit,
                  greatest((SELECT max(at) FROM ch WHERE k = '*'),
                           (SELECT max(at) FROM ch WHERE k = encode(convert_to(l.limit_row, 'UTF8'), 'hex'))) AS own_at,
                  greatest((SELECT max(at) FROM ch WHERE k = '*'),
                           (SELECT max(at) FROM ch WHERE k = encode(convert_to(l.parent_row, 'UTF8'), 'hex'))) AS parent_at
             FROM sync_holders h JOIN l USING (lock_name)),
     o AS (SELECT format('%s holds %s slots of %s with the hold granted at %s (its row last changed at %s)',
                         a.lock_name, (SELECT sum(b.slots) FROM h b WHERE b.lock_name = a.lock_name AND b.since <= a.since),
                         a.sizelimit, a.since, a.own_at) AS what
             FROM h a
            WHERE NOT starts_with(a.lock_name, 'sem/launchplan/') AND a.limit_row IS NOT NULL
              AND a.sizelimit IS NOT NULL AND a.since > a.own_at
              AND (SELECT sum(b.slots) FROM h b WHERE b.lock_name = a.lock_name AND b.since <= a.since) > a.sizelimit
           UNION ALL
           SELECT format('parent %s: its children hold %s slots of %s with the hold of %s granted at %s (the parent last changed at %s)',
                         a.parent_row, (SELECT sum(b.slots) FROM h b WHERE b.parent_row = a.parent_row AND b.since <= a.since),
                         a.parent_sizelimit, a.lock_name, a.since, a.parent_at)
             FROM h a
            WHERE a.parent_row IS NOT NULL AND a.since > a.parent_at
              AND (SELECT sum(b.slots) FROM h b WHERE b.parent_row = a.parent_row AND b.since <= a.since) > a.parent_sizelimit)
SELECT coalesce(string_agg(what, '; '), 't') FROM o},
		"$db: a semaphore or a parent was granted more than its limit", $c);
}

# With every session idle: the limits in force are those of the committed
# rows (each live semaphore's parent and the parent's sizelimit, as
# sync_limit says for its row), and no keyed request waits at the front of
# a semaphore's queue while the semaphore has room for it and so has its
# parent (unless a sibling's waiter may go first: one at the front of its
# queue, or anywhere in a best-effort queue, that goes before it by
# priority and time and is not plainly held back by its own semaphore).
# Left out, as they wait for other reasons: requests of several locks,
# claim-only requests, launch plans' semaphores, rates, and a semaphore
# whose row is a parent.
sub nested_quiescent
{
	my ($c, $db) = @_;
	settled(q{SELECT coalesce(string_agg(format('%s: row %s names parent %s (sizelimit %s) and has sizelimit %s; sync_locks says parent %s (%s), sizelimit %s',
                                  l.lock_name, l.limit_row, r.parent, p.sizelimit, r.sizelimit,
                                  l.parent_row, l.parent_sizelimit, l.sizelimit), '; '), 't')
  FROM sync_locks l JOIN sync_limit r ON r.name = l.limit_row
  LEFT JOIN sync_limit p ON p.name = r.parent
 WHERE l.kind = 'semaphore'
   AND (l.parent_row IS DISTINCT FROM r.parent OR l.parent_sizelimit IS DISTINCT FROM p.sizelimit
        OR (NOT starts_with(l.lock_name, 'sem/launchplan/') AND l.sizelimit IS DISTINCT FROM r.sizelimit))},
		"$db: the limits in force are not those of sync_limit", $c);
	settled(q{WITH l AS (SELECT * FROM sync_locks WHERE kind = 'semaphore'),
     w AS (SELECT w.lock_name, w.position, w.request_size, w.slots, w.effective_priority AS priority,
                  w.waiting_since, w.holder,
                  l.limit_row, l.sizelimit, l.slots_held, l.parent_row, l.parent_sizelimit, l.parent_slots_held,
                  l.rate_tokens, r.queueing, r.rate_limit, s.claim, s.admit_limit
             FROM sync_waiters w JOIN l USING (lock_name)
             LEFT JOIN sync_limit r ON r.name = l.limit_row
             LEFT JOIN sync_state s ON s.name = w.lock_name AND s.workflowkey = w.holder
            WHERE w.active)
SELECT coalesce(string_agg(format('%s: %s waits at the front for %s slots (priority %s, since %s) while %s of %s are held%s',
                                  a.lock_name, a.holder, a.slots, a.priority, a.waiting_since, a.slots_held, a.sizelimit,
                                  CASE WHEN a.parent_row IS NULL THEN ''
                                       ELSE format(' and %s of %s under parent %s', a.parent_slots_held,
                                                   a.parent_sizelimit, a.parent_row) END), '; '), 't')
  FROM w a
 WHERE a.position = 1 AND a.request_size = 1 AND NOT starts_with(a.lock_name, 'sem/launchplan/')
   AND a.limit_row IS NOT NULL AND a.sizelimit IS NOT NULL AND a.rate_tokens IS NULL AND a.rate_limit IS NULL
   AND a.claim IS FALSE AND a.admit_limit IS NULL
   AND a.slots_held + a.slots <= a.sizelimit
   AND NOT EXISTS (SELECT 1 FROM sync_limit c WHERE c.parent = a.limit_row)
   AND (a.parent_row IS NULL
        OR (a.parent_slots_held + a.slots <= a.parent_sizelimit
            AND NOT EXISTS (SELECT 1 FROM w b
                             WHERE b.parent_row = a.parent_row AND b.lock_name <> a.lock_name
                               AND (b.priority > a.priority
                                    OR (b.priority = a.priority AND b.waiting_since <= a.waiting_since))
                               AND (b.position = 1 OR b.queueing = 'best_effort')
                               AND NOT (b.position = 1 AND b.request_size = 1 AND b.rate_tokens IS NULL
                                        AND b.sizelimit IS NOT NULL AND b.queueing IS DISTINCT FROM 'best_effort'
                                        AND b.slots_held + b.slots > b.sizelimit))))},
		"$db: a request waits for slots that are free", $c);
	# A request for more slots than its semaphore's limit (above 0) is
	# refused (22023), and a keyed one withdrawn when the limit is lowered
	# under it: it could never be granted.  The same must go for a parent:
	# the slots a request takes under one parent (a request of several of
	# its children) must fit the parent's sizelimit, or the request waits
	# for ever at the front of its children's queues, and holds back
	# everyone behind it.
	settled(q{SELECT coalesce(string_agg(format('holder %s waits for %s slots under parent %s (%s), whose sizelimit is %s',
                                  workflowkey, slots, parent_row, names, parent_sizelimit), '; '), 't')
  FROM (SELECT s.workflowkey, s.request_id, l.parent_row, l.parent_sizelimit, sum(s.slots) AS slots,
               string_agg(s.name, ', ' ORDER BY s.name) AS names
          FROM sync_state s JOIN sync_locks l ON l.lock_name = s.name
         WHERE NOT s.held AND l.parent_row IS NOT NULL
         GROUP BY 1, 2, 3, 4) r
 WHERE r.parent_sizelimit > 0 AND r.slots > r.parent_sizelimit},
		"$db: a request waits for more slots under a parent than the parent has", $c);
}

# Every lock seen in the database that nobody holds or waits for now (a
# semaphore with its limit set to 1) can be taken at once: no slot leaked.
# Returns (locks taken, locks tried).
sub retake
{
	my ($c, $db) = @_;
	my ($free, $tried) = (0, 0);
	for my $n (sort keys %{ $seen_locks{$db} })
	{
		my $l = lit($n);
		next if check_sql($c, "SELECT EXISTS (SELECT 1 FROM sync_locks WHERE lock_name = $l)", 'sync_locks') ne 'f';
		if ($n =~ m{^sem/(.*)$}s)
		{
			my $row = $1;
			# a parent row's semaphore is not a lock of its own (55000)
			next if (check_sql($c, 'SELECT EXISTS (SELECT 1 FROM sync_limit WHERE parent = ' . lit($row) . ')',
					'sync_limit') // 't') ne 'f';
			# limit 1 and nothing else: a rate the run left on the row
			# (one token an hour), or a parent that keyed holds of
			# siblings fill, must not pass for a leaked slot
			my $r = run($c, 'INSERT INTO sync_limit VALUES (' . lit($row) . ', 1) ON CONFLICT (name) DO UPDATE SET sizelimit = 1, '
				  . 'max_waiters = NULL, rate_limit = NULL, rate_period = NULL, queueing = NULL, parent = NULL')->[0];
			next if first_error($r);    # a name the table's CHECK refuses: never a semaphore with a limit
		}
		my $got = check_sql($c, "SELECT sync_try_acquire($l) IS NOT NULL", "$db: taking $n again");
		next unless defined $got;
		if ($got eq 't') { $free++; }
		else { problem("$db: lock $n cannot be taken again (a leaked slot)"); }
		$tried++;
		check_sql($c, 'SELECT sync_release_all()', 'release');
	}
	return ($free, $tried);
}

sub quiesce
{
	for my $s (@SESSIONS)
	{
		finish_async($s) if $s->{busy};
		next if $s->{dead};
		if ($s->{tx})
		{
			my $stmt = pick('COMMIT', 'ROLLBACK');
			record($s, [$stmt], run($s, $stmt), ['control']);
			$s->{tx} = 0;
		}
		# back to its own role
		run($s, 'RESET ROLE') if $s->{name} eq 'super';
	}
	for my $pair ([ $checker, 'postgres' ], [ $checker_other, 'other' ])
	{
		my ($c, $db) = @$pair;
		my $gids = check_sql($c, 'SELECT string_agg(gid, \',\') FROM pg_prepared_xacts WHERE database = current_database()', 'prepared');
		for my $gid (split /,/, $gids // '')
		{
			check_sql($c, pick('COMMIT', 'ROLLBACK') . " PREPARED '$gid'", 'finishing a prepared transaction');
		}
	}
}

# Keyed requests for children of the parents of $BASE_LIMITS_SQL, made at
# every full check once the limits are set again: the parents fill up and
# requests queue behind them (or behind their own semaphore), with mixed
# priorities, slots and leases, some preemptible (f/all, f/s1 and h/*
# have a preempt_grace), some with a controller that goes stale,
# and one request of several children.
# The fuzz then finds them to release, refresh, claim and delete.
my @CHILD_LOCKS = ('sem/f/s1', 'sem/f/s2', "sem/f/$LONGKEY", 'sem/h/a', 'sem/h/b', 'sem/h/c', 'sem/h/own');

sub seed_nested
{
	my @stmts;
	for (1 .. 3 + rint(4))
	{
		push @stmts, 'SELECT sync_request(' . join(', ', tlit(pick(@CHILD_LOCKS, 'sem/h/r' . rint(20))),
			tlit(pick(@HOLDERS)), 'priority => ' . num(pick(0, 0, 0, 1, -1), 'integer'),
			'controller => ' . (chance(0.25) ? tlit(pick(@CONTROLLERS)) : 'NULL::text'),
			'lease => ' . ival(pick(undef, undef, '10 s', '1 hour')), 'slots => ' . num(pick(1, 1, 1, 2), 'integer'),
			'preemptible => ' . (chance(0.4) ? 'true' : 'false')) . ')';
	}
	# a preemptible hold of f/s1 (one slot, preempt_grace 0) and a waiter of
	# higher priority for it, which preempts it if it was granted
	push @stmts, "SELECT sync_request('sem/f/s1', 'ns/wf3', priority => -1, preemptible => true)",
	  "SELECT sync_request('sem/f/s1', 'ns/wf4', priority => 2)";
	# and one of several children together: of one parent (two or three
	# of f/all's or h/all's) or of both
	my $family = wpick(2, [ @CHILD_LOCKS[ 0 .. 2 ] ], 2, [ @CHILD_LOCKS[ 3 .. 6 ] ], 1, \@CHILD_LOCKS);
	my %seen;
	my @n = grep { !$seen{$_}++ } map { pick(@$family) } 1 .. 2 + rint(3);
	push @stmts, 'SELECT sync_request(' . arr(\@n) . ', ' . tlit(pick(@HOLDERS)) . ', priority => '
	  . num(pick(0, 0, 1), 'integer') . ')' if @n > 1;
	record($checker, \@stmts, run($checker, @stmts), [ ('sync_request for a child (full check)') x @stmts ]);
}

# Holds preempted so far: the counts of sync_lock_stats, which start again
# from zero at a restart, added up over the full checks (for the record).
my $preempted_total = 0;
my $preempted_last = 0;

sub count_preemptions
{
	my $n = check_sql($checker, 'SELECT coalesce(sum(preemptions), 0) FROM sync_lock_stats',
		'counting preemptions') // return;
	$preempted_total += $n >= $preempted_last ? $n - $preempted_last : $n;
	$preempted_last = $n;
}

sub full_check
{
	return unless server_up();
	count_preemptions();
	quiesce();
	track_limits();
	for my $pair ([ $checker, 'postgres' ], [ $checker_other, 'other' ])
	{
		my ($c, $db) = @$pair;
		parent_counts($c, $db);
		over_limit($c, $db);
		nested_quiescent($c, $db);
	}
	if (chance(0.5))
	{
		# The extension dropped and created again, with whatever the
		# sessions hold (keyed holds are rebuilt from the new, empty
		# tables).  Only between transactions: PostgreSQL does not lock a
		# function while a transaction uses it, so one that began before
		# the DROP may still find the old function by name and fail with
		# PostgreSQL's own "cache lookup failed" (XX000).
		my $c = pick($checker, $checker_other);
		my @stmts = ('BEGIN', 'DROP EXTENSION syncwf', 'CREATE EXTENSION syncwf', 'COMMIT');
		record($c, \@stmts, run($c, @stmts), [ 'control', 'recreate extension', 'recreate extension', 'control' ]);
		$limit_unseen{ $c == $checker ? 'postgres' : 'other' } = 1;
	}
	check_sql($checker, $BASE_SQL, 'setting the limits and plans again');
	check_sql($checker_other, $BASE_LIMITS_SQL, 'other: setting the limits again');
	seed_nested();
	track_limits();
	light_check(1);
	for my $pair ([ $checker, 'postgres' ], [ $checker_other, 'other' ])
	{
		my ($c, $db) = @$pair;
		settled(q{SELECT NOT EXISTS (SELECT 1 FROM sync_entry_status() WHERE scope = 'transaction')},
			"$db: a transaction-scope entry outlived its transaction", $c);
		settled(q{SELECT NOT EXISTS (SELECT 1 FROM sync_waiters WHERE pid IS NOT NULL)},
			"$db: a session waits while every session is idle", $c);
		settled(q{SELECT NOT EXISTS (SELECT 1 FROM sync_entry_status() e
                    WHERE e.pid IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = e.pid))},
			"$db: an entry belongs to a backend that has exited", $c);
		locks_agree($c, $db);
		nested_quiescent($c, $db);
	}
	keyed_invariants();
}

# --- running steps ------------------------------------------------------------------
sub record
{
	my ($s, $stmts, $res, $labels) = @_;
	for my $k (0 .. $#$stmts)
	{
		my $r = $res->[$k] or next;
		my $label = $labels->[$k] // 'control';
		my $e = first_error($r);
		my $state = $e ? $e->[1] : 'ok';
		$state = 'lost' if $r->{lost} && !$e;
		$stats{$label}{$state}++;
		# reached the table (past privileges, read-only and lock waits)
		$attempted{$label}++ if $state !~ /^(42501|25006|25P02|57014|55P03|25P01|lost)$/;
		my $line = "-- [$step] $s->{name}: $state" . ($e ? " $e->[2]" : '') . "\n$stmts->[$k];\n";
		print $LOGF $line;
		push @recent, $line;
		shift @recent if @recent > 12;
		for my $m (@{ $r->{errors} })
		{
			my ($sev, $st, $msg) = @$m;
			# PostgreSQL's own limit (max_prepared_transactions)
			next if $st eq '53200' && $stmts->[$k] =~ /^PREPARE TRANSACTION/;
			problem("$s->{name}: $sev $st $msg\n  in: " . substr($stmts->[$k], 0, 2000) . "\n" . $r->{err})
			  if bad_sqlstate($st) || $sev eq 'PANIC'
			  || ($sev eq 'FATAL' && !($st eq '57P01' && $s->{terminated}))
			  || ($sev eq 'WARNING' && $msg =~ /leak|not closed|still referenced|unpinned/i);
		}
		# a transaction hold taken in an open transaction lasts until its
		# end: state of that kind built up, whether or not a check saw it
		$max_seen{transaction} ||= 1
		  if $state eq 'ok' && $s->{tx}
		  && $stmts->[$k] =~ /\bsync_(?:try_)?acquire_xact\(/
		  && ($r->{out} // '') =~ /\d/;
		if ($s->{tx})
		{
			if ($stmts->[$k] =~ /^(COMMIT|ROLLBACK|PREPARE TRANSACTION)\b/ && $stmts->[$k] !~ /^ROLLBACK TO/)
			{
				$s->{tx} = 0;
				$s->{aborted} = 0;
			}
			elsif ($stmts->[$k] =~ /^ROLLBACK TO/ && !$e) { $s->{aborted} = 0; }
			elsif ($e) { $s->{aborted} = 1; }
		}
		elsif ($stmts->[$k] =~ /^BEGIN/ && !$e)
		{
			$s->{tx} = 1;
			$s->{aborted} = 0;
		}
	}
	if ($res->[-1]{lost})
	{
		$s->{dead} = 1;
		if (!$s->{terminated} && server_up())
		{
			problem("session $s->{name} lost its connection; last statements:\n" . join('', @recent));
		}
	}
}

sub after_step
{
	my ($s, $wrapped) = @_;
	if ($s->{dead})
	{
		return unless server_up();
		$s->{dead} = $s->{terminated} = 0;
		session_start($s);
		return;
	}
	if ($s->{tx} && $s->{aborted})
	{
		# an error inside the transaction: back to the wrapping savepoint,
		# or the transaction is over
		my @stmts = $wrapped ? ('ROLLBACK TO SAVEPOINT fz_w') : ('ROLLBACK');
		record($s, \@stmts, run($s, @stmts), ['control']);
	}
}

sub finish_async
{
	my ($s) = @_;
	my $b = $s->{busy};
	# a change of sync_limit may have committed at any time since it was sent
	$limit_unseen{ $s->{db} } = 1 if grep { /^sync_limit / } @{ $b->{labels} };
	record($s, $b->{stmts}, collect($s), $b->{labels});
	after_step($s, $b->{wrapped});
}

sub control_statement
{
	my ($s) = @_;
	if ($s->{tx})
	{
		return wpick(
			30, 'COMMIT',
			18, 'ROLLBACK',
			6, "PREPARE TRANSACTION 'fz_$step'",
			15, 'SAVEPOINT ' . pick('s1', 's2'),
			8, 'ROLLBACK TO SAVEPOINT ' . pick('s1', 's2'),
			6, 'RELEASE SAVEPOINT ' . pick('s1', 's2'),
			4, 'SELECT pg_sleep(0.05)',
			3, 'SET LOCAL ROLE fuzz_user',
			2, 'SET CONSTRAINTS sync_limit_parent_fkey, sync_limit_tree IMMEDIATE');
	}
	return wpick(
		40, pick('BEGIN', 'BEGIN', 'BEGIN ISOLATION LEVEL SERIALIZABLE',
			'BEGIN ISOLATION LEVEL REPEATABLE READ', 'BEGIN READ ONLY'),
		6, 'DISCARD ALL',
		6, pick('COMMIT PREPARED', 'ROLLBACK PREPARED') . " 'fz_" . ($step - rint(30)) . "'",
		5, 'SELECT pg_sleep(' . pick('0.02', '0.1', '0.3') . ')',
		4, ($s->{name} eq 'super' ? pick('SET ROLE fuzz_user', 'SET ROLE fuzz_admin', 'RESET ROLE') : 'RESET ROLE'),
		4, pick('VACUUM', 'ANALYZE', 'VACUUM FULL', 'REINDEX TABLE') . ' ' . pick(map { $_->{qname} } @TABLES),
		3, 'reconnect',
		2, 'terminate',
		2, 'cancel');
}

sub step
{
	my @live = grep { !$_->{busy} } @SESSIONS;
	my $s = wpick(map { ($_->{weight}, $_) } @live);
	my $kind = wpick(55, 'call', 20, 'dml', 25, 'control');
	my (@stmts, @labels);
	my $wrapped = 0;
	if ($kind eq 'control')
	{
		my $c = control_statement($s);
		if ($c eq 'reconnect')
		{
			print $LOGF "-- [$step] $s->{name}: reconnect\n";
			session_stop($s);
			session_start($s);
			return;
		}
		if ($c eq 'terminate' || $c eq 'cancel')
		{
			my $victim = pick(grep { $_ != $s } @SESSIONS);
			return if $victim->{dead};
			if ($c eq 'terminate')
			{
				$victim->{terminated} = 1;
				print $LOGF "-- [$step] terminate $victim->{name}\n";
				check_sql($checker, "SELECT pg_terminate_backend($victim->{pid})", 'terminate');
				if ($victim->{busy}) { finish_async($victim); }
				else
				{
					session_stop($victim);
					$victim->{dead} = $victim->{terminated} = 0;
					session_start($victim);
				}
			}
			elsif ($victim->{busy})
			{
				print $LOGF "-- [$step] cancel $victim->{name}\n";
				check_sql($checker, "SELECT pg_cancel_backend($victim->{pid})", 'cancel');
			}
			return;
		}
		@stmts = ($c);
		@labels = ('control');
	}
	else
	{
		my ($stmt, $label);
		if ($kind eq 'call')
		{
			($stmt, $label) = call_statement(wpick(map { ($_->{weight}, $_) } @FUNCS));
		}
		else
		{
			($stmt, $label) = dml_statement();
		}
		if (chance(0.04))
		{
			@stmts = ("SET statement_timeout = '1ms'", $stmt, 'RESET statement_timeout');
			@labels = ('control', $label, 'control');
		}
		else
		{
			@stmts = ($stmt);
			@labels = ($label);
		}
		if ($s->{tx} && chance(0.5))
		{
			unshift @stmts, 'SAVEPOINT fz_w';
			unshift @labels, 'control';
			$wrapped = 1;
		}
	}
	if ($kind ne 'control' && chance(0.1) && @live > 2)
	{
		send_stmts($s, @stmts);
		$s->{busy}{labels} = \@labels;
		$s->{busy}{wrapped} = $wrapped;
		$s->{busy}{until} = $step + 2 + rint(4);
		return;
	}
	record($s, \@stmts, run($s, @stmts), \@labels);
	after_step($s, $wrapped);
}

# Halfway, the server stops (fast, or immediate: as after a crash) with
# whatever the sessions hold, and starts again: keyed holds are rebuilt from
# the tables, and memory must agree.  Transactions end first, prepared ones
# too: one that locked a table would keep it locked past the start.
sub restart_mid_run
{
	my $mode = pick('fast', 'immediate');
	quiesce();    # no prepared transaction may keep a lock on a table past the start
	print $LOGF "-- [$step] restart ($mode)\n";
	for my $s (@SESSIONS, $checker, $checker_other, $listener)
	{
		$s->{in} .= "\\q\n";
		$s->{busy} = undef;
	}
	$node->stop($mode);
	session_stop($_) for (@SESSIONS, $checker, $checker_other, $listener);
	$node->start;
	$start_time = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
	for my $s (@SESSIONS, $checker, $checker_other, $listener)
	{
		$s->{dead} = $s->{terminated} = 0;
		session_start($s);
	}
	run($listener, 'LISTEN syncwf', 'LISTEN syncwf_launch');
	read_everything(1);
	keyed_invariants();
	locks_agree($checker, 'postgres');
	%limit_unseen = (postgres => 1, other => 1);
	track_limits();
	for my $pair ([ $checker, 'postgres' ], [ $checker_other, 'other' ])
	{
		parent_counts(@$pair);
		nested_quiescent(@$pair);
	}
	scan_log();
}

# --- the run ----------------------------------------------------------------------
for ($step = 1; $step <= $ITERATIONS && !$server_down; $step++)
{
	for my $s (@SESSIONS)
	{
		finish_async($s) if $s->{busy} && $s->{busy}{until} <= $step;
	}
	step();
	last if $server_down;
	track_limits();
	light_check() if $step % $LIGHT_CHECK_EVERY == 0;
	full_check() if $step % $FULL_CHECK_EVERY == 0;
	restart_mid_run() if $step == int($ITERATIONS / 2);
}
my $t_run = time - $T0;
full_check() unless $server_down;

# --- the end: sessions end, restart, release everything, restart -------------
SKIP:
{
	skip 'the server is down', 6 if $server_down;

	# the sessions end: their holds and waits go, no slot stays taken
	session_stop($_) for @SESSIONS;
	my ($free, $tried) = (0, 0);
	for my $pair ([ $checker, 'postgres' ], [ $checker_other, 'other' ])
	{
		my ($c, $db) = @$pair;
		settled(q{SELECT NOT EXISTS (SELECT 1 FROM sync_entry_status() WHERE pid IS NOT NULL)},
			"$db: session or transaction entries left after every session ended", $c);
		locks_agree($c, $db);
		my @r = retake($c, $db);
		$free += $r[0];
		$tried += $r[1];
	}
	ok($tried >= 5 && $free == $tried,
		"after the sessions ended, every lock seen that nobody holds can be taken again ($free of $tried)");
	scan_log();

	# a restart with the fuzzed tables: keyed holds are rebuilt from them
	session_stop($_) for ($checker, $checker_other, $listener);
	my $before = $node->safe_psql('postgres', 'SELECT count(*) FROM sync_state');
	$node->restart;
	$start_time = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
	session_start($_) for ($checker, $checker_other, $listener);
	is(check_sql($checker, 'SELECT count(*) FROM sync_state', 'after the restart'), $before,
		"after a restart with the fuzzed tables, sync_state has its $before rows");
	read_everything(1);
	keyed_invariants();
	locks_agree($checker, 'postgres');
	parent_counts($checker, 'postgres');
	nested_quiescent($checker, 'postgres');
	scan_log();

	count_preemptions();

	# release everything
	check_sql($checker, q{SELECT count(sync_release_holder(h)) FROM (SELECT DISTINCT workflowkey AS h FROM sync_state) s},
		'releasing every keyed holder');
	check_sql($checker, 'DELETE FROM sync_execution', 'deleting every execution');
	is(check_sql($checker, 'SELECT count(*) FROM sync_state', 'sync_state'), '0', 'every keyed hold released');
	settled(q{SELECT sync_reconcile() >= 0 AND NOT EXISTS (SELECT 1 FROM sync_locks)},
		'locks left in sync_locks after everything was released');
	is(check_sql($checker, 'SELECT count(*) FROM sync_holders', 'sync_holders') . '/'
		  . check_sql($checker, 'SELECT count(*) FROM sync_waiters', 'sync_waiters'),
		'0/0', 'sync_holders and sync_waiters are empty');
	($free, $tried) = retake($checker, 'postgres');
	ok($tried >= 5 && $free == $tried,
		"after every keyed hold was released, every lock seen can be taken again ($free of $tried, "
		  . scalar(keys %{ $seen_locks{postgres} }) . ' seen)');
	settled(q{SELECT NOT EXISTS (SELECT 1 FROM sync_locks)}, 'locks left after the last check');

	session_stop($_) for ($checker, $checker_other, $listener);
	$node->restart;
	$start_time = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
	session_start($_) for ($checker, $checker_other);
	read_everything(1);
	is(check_sql($checker, q{SELECT (SELECT count(*) FROM sync_locks) + (SELECT count(*) FROM sync_state)}, 'after restart'),
		'0', 'after the last restart nothing is held or pending');
	session_stop($_) for ($checker, $checker_other);
	scan_log();
}

# --- results ----------------------------------------------------------------------
my $calls = 0;
my $ok_calls = 0;
my @summary;
for my $label (sort keys %stats)
{
	my $h = $stats{$label};
	my $n = 0;
	$n += $_ for values %$h;
	$calls += $n unless $label eq 'control';
	$ok_calls += $h->{ok} // 0 unless $label eq 'control';
	push @summary, sprintf('%-70s %5d: %s', $label, $n,
		join(' ', map { "$_=$h->{$_}" } sort { $h->{$b} <=> $h->{$a} || $a cmp $b } keys %$h));
}
note "SQLSTATEs per function and statement:\n" . join("\n", @summary);
note 'SQLSTATEs in the server log (state severity process): '
  . join(', ', map { "$_=$log_states{$_}" } sort keys %log_states);
note 'notifications received: ' . join(', ', map { "$_=$notifications{$_}" } sort keys %notifications);
note "holds preempted: $preempted_total";
note 'most seen at a check: ' . join(', ', map { "$_=$max_seen{$_}" } sort keys %max_seen);

my @never = grep { !$stats{ $_->{sig} } } @FUNCS;
is(join(', ', map { $_->{sig} } @never), '', 'every function of the extension was called');
my @never_ok = grep { !($stats{ $_->{sig} }{ok}) } @FUNCS;
note 'functions that never succeeded: ' . join(', ', map { $_->{sig} } @never_ok);
ok(@never_ok <= @FUNCS / 4, scalar(@FUNCS) - scalar(@never_ok) . ' of ' . scalar(@FUNCS) . ' functions succeeded at least once');
ok($calls > 0 && $ok_calls / $calls > 0.2 && $ok_calls / $calls < 0.9,
	"a mix of successful and refused calls ($ok_calls of $calls succeeded)");

# every trigger was reached by a role allowed to change its table
my %ev_name = (4 => 'INSERT', 8 => 'DELETE', 16 => 'UPDATE', 32 => 'TRUNCATE');
my @unreached;
for my $tr (@TRIGGERS)
{
	my ($rel, $type, $fn) = split /:/, $tr;
	for my $bit (keys %ev_name)
	{
		next unless ($type + 0) & $bit;
		push @unreached, "$fn on $rel $ev_name{$bit}" unless $attempted{"$rel $ev_name{$bit}"};
	}
}
is(join(', ', @unreached), '', 'every trigger was fired by statements of privileged sessions');
my %trigger_fn = map { (split /:/)[2] => 1 } @TRIGGERS;
is(join(', ', grep { my $f = $_; !grep { $f =~ /^\Q$_\E\(/ } keys %trigger_fn } @TRIGGER_FUNCS), '',
	'every trigger function sits on a table of the extension');
SKIP:
{
	skip 'the server is down', 1 if $server_down;
	is(join(', ', grep { !$max_seen{$_} } sort keys %max_seen), '',
		'state built up: session, transaction and keyed holds, waiters, executions, plans, controllers, '
		  . 'full parents, waiters behind a full parent');
}
is(scalar(@problems), 0, 'no crash, internal error, unreadable row or leak found')
  or diag(join("\n", @problems));
note sprintf('%d steps in %.1f s, %.1f s in all', $step - 1, $t_run, time - $T0);
close $LOGF;

done_testing();
