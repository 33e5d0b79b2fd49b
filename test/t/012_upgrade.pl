# The upgrade path: ALTER EXTENSION syncwf UPDATE from version 1.0 to the
# default version (pg_available_extensions.default_version, so the test
# follows the chain as it grows).
#
# Node "upgrade" (syncwf.database = 'postgres'):
#  - database postgres: CREATE EXTENSION syncwf VERSION '1.0', then holds of
#    every kind: a background session holding a mutex and a semaphore with
#    another session queued on the mutex; keyed holds held and pending (with
#    a controller and a lease; two pending requests behind a limit-1
#    semaphore); a WAIT launch plan with one execution holding its slot and
#    two waiting.  The views and tables are recorded, then ALTER EXTENSION
#    syncwf UPDATE runs while all of that is live.  Executions written by
#    SQL whose finished_at does not match their phase get it set exactly
#    for the final phases (1.4);
#  - (a) the updated catalog equals a fresh install (CREATE EXTENSION syncwf
#    in database "fresh" of the same node), object by object: every member
#    of the extension, each function's identity, arguments with defaults,
#    result, language, volatility, strictness, SECURITY DEFINER, leakproof,
#    parallel safety, cost, rows, SET options, owner, ACL, C symbol and
#    body; each relation's kind, options, row security, owner and ACL, its
#    columns (position, type, NOT NULL, default, identity, generated,
#    collation, ACL), constraints, indexes, triggers, rules, policies, view
#    definitions and comments; sequences; types; the extension's
#    configuration tables.  So does every other version that has an update
#    path to the default one, updated in a database of its own (each
#    installed with CREATE EXTENSION syncwf VERSION 'x', which runs
#    syncwf--1.0.sql and the update chain up to x: the repository keeps the
#    full install scripts of 1.0 and of the default version only, as
#    checked here).  The
#    comparison is checked to notice each kind of change it claims to see;
#  - (b) the holds survived the update and still work: the views and tables
#    are as before (same holders, tokens, queues and positions, executions);
#    releasing the keyed hold grants the front pending request with a larger
#    token, written by the worker; the background session still holds its
#    locks, releases them, and the queued session gets the mutex; a
#    terminal update of the running execution promotes the first waiting
#    one (by the worker), the other stays first in the queue.
#
# The comparison runs both databases on one server, so whatever a
# PostgreSQL version prints differently (view definitions, 17's row types
# as extension members) is the same on both sides.  NOT NULL is compared
# through pg_attribute.attnotnull on every version; 18's NOT NULL entries
# in pg_constraint are left out of the constraint listing.
use strict;
use warnings FATAL => 'all';

use File::Basename qw(dirname);
use File::Spec;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# Every property of the extension's objects, one line per fact, sorted.
# Newlines inside a line (view and function bodies) are written as \n.
my $catalog_sql = <<'SQL';
WITH ext AS (
    SELECT oid FROM pg_extension WHERE extname = 'syncwf'
), members AS (
    SELECT d.classid, d.objid, d.objsubid
      FROM pg_depend d
     WHERE d.refclassid = 'pg_extension'::regclass
       AND d.refobjid = (SELECT oid FROM ext)
       AND d.deptype = 'e'
), fns AS (
    SELECT p.* FROM pg_proc p
     WHERE p.oid IN (SELECT objid FROM members WHERE classid = 'pg_proc'::regclass)
), typs AS (
    SELECT t.* FROM pg_type t
     WHERE t.oid IN (SELECT objid FROM members WHERE classid = 'pg_type'::regclass)
), rels AS (
    -- member relations, and the relation behind each member composite type
    SELECT c.* FROM pg_class c
     WHERE c.oid IN (SELECT objid FROM members WHERE classid = 'pg_class'::regclass)
        OR (c.relkind = 'c' AND c.oid IN (SELECT typrelid FROM typs))
), facts(line) AS (
    SELECT 'member ' || pg_describe_object(classid, objid, objsubid) FROM members
    UNION ALL
    SELECT format('extension %s: version %s, relocatable %s, schema %s, owner %s',
                  e.extname, e.extversion, e.extrelocatable,
                  e.extnamespace::regnamespace, e.extowner::regrole)
      FROM pg_extension e WHERE e.oid = (SELECT oid FROM ext)
    UNION ALL
    SELECT format('configuration table %s, condition %L', u.tab::regclass, u.cond)
      FROM pg_extension e, unnest(e.extconfig, e.extcondition) AS u(tab, cond)
     WHERE e.oid = (SELECT oid FROM ext)
    UNION ALL
    SELECT format('function %s: arguments (%s) returns %s, language %s, kind %s, '
                  'volatility %s, strict %s, security definer %s, leakproof %s, '
                  'parallel %s, cost %s, rows %s, support %s, config %s, owner %s, '
                  'acl %s, library %s, source %s, sql body %s',
                  p.oid::regprocedure, pg_get_function_arguments(p.oid),
                  pg_get_function_result(p.oid), l.lanname, p.prokind,
                  p.provolatile, p.proisstrict, p.prosecdef, p.proleakproof,
                  p.proparallel, p.procost, p.prorows, p.prosupport::regproc,
                  (SELECT string_agg(c, ', ' ORDER BY c) FROM unnest(p.proconfig) c),
                  p.proowner::regrole,
                  (SELECT string_agg(a::text, ' ' ORDER BY a::text)
                     FROM unnest(coalesce(p.proacl, acldefault('f', p.proowner))) a),
                  p.probin, p.prosrc, pg_get_function_sqlbody(p.oid))
      FROM fns p JOIN pg_language l ON l.oid = p.prolang
    UNION ALL
    SELECT format('type %s: type %s, category %s, owner %s, acl %s, base type %s, '
                  'not null %s, default %s, labels %s',
                  t.oid::regtype, t.typtype, t.typcategory, t.typowner::regrole,
                  (SELECT string_agg(a::text, ' ' ORDER BY a::text)
                     FROM unnest(coalesce(t.typacl, acldefault('T', t.typowner))) a),
                  nullif(t.typbasetype, 0)::regtype, t.typnotnull, t.typdefault,
                  (SELECT string_agg(quote_literal(enumlabel), ', ' ORDER BY enumsortorder)
                     FROM pg_enum WHERE enumtypid = t.oid))
      FROM typs t
    UNION ALL
    SELECT format('relation %s: kind %s, persistence %s, access method %s, '
                  'options %s, row security %s, forced %s, replica identity %s, '
                  'owner %s, acl %s',
                  c.oid::regclass, c.relkind, c.relpersistence,
                  (SELECT amname FROM pg_am WHERE oid = c.relam),
                  (SELECT string_agg(o, ', ' ORDER BY o) FROM unnest(c.reloptions) o),
                  c.relrowsecurity, c.relforcerowsecurity, c.relreplident,
                  c.relowner::regrole,
                  (SELECT string_agg(a::text, ' ' ORDER BY a::text)
                     FROM unnest(coalesce(c.relacl,
                                          acldefault(CASE c.relkind WHEN 'S' THEN 's' ELSE 'r' END::"char",
                                                     c.relowner))) a))
      FROM rels c
    UNION ALL
    SELECT format('column %s.%s: position %s, type %s, not null %s, default %s, '
                  'identity %s, generated %s, collation %s, acl %s',
                  a.attrelid::regclass, quote_ident(a.attname),
                  row_number() OVER (PARTITION BY a.attrelid ORDER BY a.attnum),
                  format_type(a.atttypid, a.atttypmod), a.attnotnull,
                  pg_get_expr(ad.adbin, ad.adrelid), a.attidentity, a.attgenerated,
                  CASE WHEN a.attcollation <> 0 THEN a.attcollation::regcollation END,
                  (SELECT string_agg(x::text, ' ' ORDER BY x::text) FROM unnest(a.attacl) x))
      FROM pg_attribute a
      LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
     WHERE a.attrelid IN (SELECT oid FROM rels) AND a.attnum > 0 AND NOT a.attisdropped
    UNION ALL
    SELECT format('constraint %s on %s: %s', quote_ident(co.conname),
                  coalesce(co.conrelid::regclass::text, co.contypid::regtype::text),
                  pg_get_constraintdef(co.oid))
      FROM pg_constraint co
     WHERE (co.conrelid IN (SELECT oid FROM rels) OR co.contypid IN (SELECT oid FROM typs))
       AND co.contype <> 'n'
    UNION ALL
    SELECT format('index %s, clustered %s', pg_get_indexdef(i.indexrelid), i.indisclustered)
      FROM pg_index i WHERE i.indrelid IN (SELECT oid FROM rels)
    UNION ALL
    SELECT format('trigger %s on %s: %s, enabled %s', quote_ident(tg.tgname),
                  tg.tgrelid::regclass, pg_get_triggerdef(tg.oid), tg.tgenabled)
      FROM pg_trigger tg
     WHERE tg.tgrelid IN (SELECT oid FROM rels) AND NOT tg.tgisinternal
    UNION ALL
    SELECT format('view %s: %s', c.oid::regclass, pg_get_viewdef(c.oid, true))
      FROM rels c WHERE c.relkind IN ('v', 'm')
    UNION ALL
    SELECT format('rule %s on %s: %s, enabled %s', quote_ident(r.rulename),
                  r.ev_class::regclass, pg_get_ruledef(r.oid), r.ev_enabled)
      FROM pg_rewrite r
     WHERE r.ev_class IN (SELECT oid FROM rels) AND r.rulename <> '_RETURN'
    UNION ALL
    SELECT format('policy %s on %s: command %s, permissive %s, roles %s, using %s, check %s',
                  quote_ident(po.polname), po.polrelid::regclass, po.polcmd, po.polpermissive,
                  (SELECT string_agg(n, ', ' ORDER BY n)
                     FROM unnest(po.polroles) r,
                          LATERAL (SELECT CASE WHEN r = 0 THEN 'public' ELSE r::regrole::text END) x(n)),
                  pg_get_expr(po.polqual, po.polrelid), pg_get_expr(po.polwithcheck, po.polrelid))
      FROM pg_policy po WHERE po.polrelid IN (SELECT oid FROM rels)
    UNION ALL
    SELECT format('sequence %s: type %s, start %s, increment %s, min %s, max %s, '
                  'cache %s, cycle %s, owned by %s',
                  s.seqrelid::regclass, s.seqtypid::regtype, s.seqstart, s.seqincrement,
                  s.seqmin, s.seqmax, s.seqcache, s.seqcycle,
                  (SELECT string_agg(pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid), ', ')
                     FROM pg_depend d
                    WHERE d.classid = 'pg_class'::regclass AND d.objid = s.seqrelid
                      AND d.deptype IN ('a', 'i') AND d.refobjsubid > 0))
      FROM pg_sequence s WHERE s.seqrelid IN (SELECT oid FROM rels)
    UNION ALL
    -- comments on the members, their columns, and the constraints, indexes
    -- and triggers of member relations
    SELECT format('comment on %s: %s',
                  pg_describe_object(ds.classoid, ds.objoid, ds.objsubid), ds.description)
      FROM pg_description ds
     WHERE (ds.classoid, ds.objoid) IN (SELECT classid, objid FROM members)
        OR (ds.classoid = 'pg_class'::regclass
            AND ds.objoid IN (SELECT oid FROM rels
                              UNION ALL
                              SELECT indexrelid FROM pg_index
                               WHERE indrelid IN (SELECT oid FROM rels)))
        OR (ds.classoid = 'pg_constraint'::regclass
            AND ds.objoid IN (SELECT oid FROM pg_constraint
                               WHERE conrelid IN (SELECT oid FROM rels)
                                  OR contypid IN (SELECT oid FROM typs)))
        OR (ds.classoid = 'pg_trigger'::regclass
            AND ds.objoid IN (SELECT oid FROM pg_trigger
                               WHERE tgrelid IN (SELECT oid FROM rels)))
)
SELECT string_agg(l, E'\n' ORDER BY l COLLATE "C")
  FROM (SELECT replace(replace(line, '\', '\\'), E'\n', '\n') FROM facts) f(l)
SQL

sub catalog
{
	my ($node, $db) = @_;
	return $node->safe_psql($db, $catalog_sql);
}

# The lines only one side has, marked "-" (first) and "+" (second).
sub line_diff
{
	my ($first, $second) = @_;
	my %a = map { $_ => 1 } split /\n/, $first;
	my %b = map { $_ => 1 } split /\n/, $second;
	return join("\n",
		(map { "- $_" } sort grep { !$b{$_} } keys %a),
		(map { "+ $_" } sort grep { !$a{$_} } keys %b));
}

# is() on the two catalog texts, with the differing lines on failure.
sub same_catalog
{
	my ($got, $expected, $name) = @_;
	my $ok = is($got, $expected, $name);
	diag("lines of the updated catalog (-) and the fresh one (+) that differ:\n"
		  . line_diff($got, $expected))
	  unless $ok;
	return $ok;
}

# The rows of a table or view, one per line, as row text, sorted.
sub rows
{
	my ($node, $rel, $columns) = @_;
	return $node->safe_psql('postgres',
		"SELECT string_agg(r::text, E'\\n' ORDER BY r::text COLLATE \"C\") FROM (SELECT $columns FROM $rel) r");
}

# The columns a relation has now, so that rows are compared on those only
# (a column an update adds is compared with a fresh install in (a)).
sub columns
{
	my ($node, $rel) = @_;
	return $node->safe_psql('postgres',
		"SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute
		  WHERE attrelid = '$rel'::regclass AND attnum > 0 AND NOT attisdropped");
}
my @recorded = qw(sync_locks sync_holders sync_waiters sync_limit sync_state
  sync_controller sync_launch_plan sync_execution sync_launch_event);

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'syncwf'
syncwf.database = 'postgres'
syncwf.max_locks = 1000
syncwf.max_entries = 1000
syncwf.max_holders = 1000
});
$node->start;

my $default = $node->safe_psql('postgres',
	"SELECT default_version FROM pg_available_extensions WHERE name = 'syncwf'");
note "default version of syncwf: $default";
isnt($default, '1.0', 'the default version is newer than 1.0');
my @sources = split /\n/, $node->safe_psql('postgres', qq{
	SELECT source FROM pg_extension_update_paths('syncwf')
	 WHERE target = '$default' AND path IS NOT NULL
	 ORDER BY source});
ok(scalar(grep { $_ eq '1.0' } @sources), "an update path leads from 1.0 to $default")
  or diag('versions with an update path: ' . join(', ', @sources));

# One full install script per release line: the base (1.0) and the
# default version; every other version installs as 1.0 plus its updates.
my $root = File::Spec->catdir(dirname(File::Spec->rel2abs(__FILE__)), '..', '..');
opendir my $rdh, $root or die "cannot open $root: $!";
my @full = sort map { /^syncwf--([0-9.]+)\.sql$/ ? $1 : () } readdir $rdh;
closedir $rdh;
is(join(' ', @full), "1.0 $default",
	"the repository keeps the full install scripts of 1.0 and $default only");

# --- version 1.0, with holds of every kind ------------------------------------
$node->safe_psql('postgres', q{
	CREATE EXTENSION syncwf VERSION '1.0';
	INSERT INTO sync_limit VALUES ('u/s', 2), ('u/k', 1);
});
is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'syncwf'"),
	'1.0', 'database postgres has syncwf 1.0');

# Session holds: one session holds a mutex and a semaphore, another queues
# on the mutex.
my $holder = $node->background_psql('postgres');
my $holder_pid = $holder->query_safe('SELECT pg_backend_pid()');
my ($mtx_tok, $sem_tok) = split /\|/,
  $holder->query_safe(q{SELECT sync_acquire('mtx/u/m') || '|' || sync_acquire('sem/u/s')});
ok($mtx_tok && $sem_tok, 'session: mtx/u/m and sem/u/s are held by a background session');
my $waiter = $node->background_psql('postgres');
my $waiter_pid = $waiter->query_safe('SELECT pg_backend_pid()');
$waiter->query_until(qr/waiting/, "\\echo waiting\nSELECT sync_acquire('mtx/u/m');\n");
ok( $node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM sync_waiters WHERE lock_name = 'mtx/u/m' AND pid = $waiter_pid"),
	'session: a second session waits for mtx/u/m');

# Keyed holds: held (one with a lease) and pending behind a limit-1 semaphore.
$node->safe_psql('postgres', "SELECT sync_heartbeat('u/ctl')");
is( $node->safe_psql('postgres', q{
		SELECT string_agg(status || ':' || coalesce(queue_position::text, '-'), ' ' ORDER BY n)
		  FROM (SELECT 1, * FROM sync_request('sem/u/k', 'u/h1', 0, 'u/ctl')
		        UNION ALL
		        SELECT 2, * FROM sync_request('mtx/u/km', 'u/h1', 0, 'u/ctl', interval '1 hour')
		        UNION ALL
		        SELECT 3, * FROM sync_request('sem/u/k', 'u/p1', 0, 'u/ctl')
		        UNION ALL
		        SELECT 4, * FROM sync_request('sem/u/k', 'u/p2', 5)) r(n, status, token, queue_position)}),
	'held:- held:- pending:1 pending:1',
	'keyed: two holds, then two pending requests on sem/u/k (the later one first by priority)');
my $keyed_tok = $node->safe_psql('postgres',
	"SELECT token FROM sync_state WHERE name = 'sem/u/k' AND workflowkey = 'u/h1'");

# Launch plans: a WAIT plan of concurrency 1, one execution running, two
# waiting.
$node->safe_psql('postgres',
	"SELECT sync_launch_plan_register('proj', 'dev', 'lp', 'v1', 1, 'WAIT')");
is( $node->safe_psql('postgres', q{
		SELECT string_agg(phase, ' ' ORDER BY n)
		  FROM (SELECT 1, phase FROM sync_execution_create('proj', 'dev', 'lp', 'v1', 'ex1')
		        UNION ALL
		        SELECT 2, phase FROM sync_execution_create('proj', 'dev', 'lp', 'v1', 'ex2')
		        UNION ALL
		        SELECT 3, phase FROM sync_execution_create('proj', 'dev', 'lp', 'v1', 'ex3')) e(n, phase)}),
	'QUEUED PENDING PENDING', 'launch plan: ex1 has the slot, ex2 and ex3 wait');
is($node->safe_psql('postgres', "SELECT sync_execution_update('ex1', 'RUNNING')"),
	'RUNNING', 'launch plan: ex1 runs');

is( $node->safe_psql('postgres', q{
		SELECT string_agg(lock_name || ':' || holders || ':' || waiters, ' ' ORDER BY lock_name)
		  FROM sync_locks}),
	'mtx/u/km:1:0 mtx/u/m:1:1 sem/launchplan/proj/dev/lp:1:2 sem/u/k:1:2 sem/u/s:1:0',
	'before the update: every lock held, with its queue');
my %columns = map { $_ => columns($node, $_) } @recorded;
my %before = map { $_ => rows($node, $_, $columns{$_}) } @recorded;
my $max_tok = $node->safe_psql('postgres', 'SELECT max(token) FROM sync_holders');

# Executions another system wrote by SQL before 1.4 (of a plan without a
# policy, so they hold no slot), with finished_at not matching the phase:
# from 1.4 on it is set exactly when the phase is final.  Not recorded
# above: the update changes them, and they are deleted after the check.
$node->safe_psql('postgres', q{
	INSERT INTO sync_execution (execution_id, project, domain, name, version, phase,
	                            created_at, started_at, finished_at)
	VALUES ('hand-done', 'proj', 'dev', 'hand', 'v1', 'SUCCEEDED',
	        '2020-01-01', '2020-01-02', NULL),
	       ('hand-live', 'proj', 'dev', 'hand', 'v1', 'RUNNING',
	        '2020-01-01', '2020-01-02', '2020-01-03'),
	       ('hand-ok', 'proj', 'dev', 'hand', 'v1', 'FAILED',
	        '2020-01-01', '2020-01-02', '2020-01-03')});

# --- the update -----------------------------------------------------------------
$node->safe_psql('postgres', 'ALTER EXTENSION syncwf UPDATE');
is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'syncwf'"),
	$default, "ALTER EXTENSION syncwf UPDATE brings database postgres to $default");
is( $node->safe_psql('postgres', q{
		SELECT string_agg(execution_id || ':' || COALESCE(finished_at::date::text, 'none'), ' '
		                  ORDER BY execution_id)
		  FROM sync_execution WHERE name = 'hand'}),
	'hand-done:2020-01-02 hand-live:none hand-ok:2020-01-03',
	'finished_at is set exactly for the final phases: a final one without it gets its start time, a live one loses it');
$node->safe_psql('postgres', "DELETE FROM sync_execution WHERE name = 'hand'");

# --- (a) the updated catalog equals a fresh install --------------------------------
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION syncwf');
is($node->safe_psql('fresh', "SELECT extversion FROM pg_extension WHERE extname = 'syncwf'"),
	$default, "CREATE EXTENSION syncwf installs $default");
my $fresh = catalog($node, 'fresh');

# The listing sees every kind of object it compares.
my %count;
$count{ (split / /, $_)[0] }++ for split /\n/, $fresh;
note join(', ', map { "$count{$_} $_" } sort keys %count);
for my $kind (qw(member extension configuration function relation column
	constraint index trigger view sequence comment))
{
	ok(($count{$kind} // 0) > 0, "the catalog listing has lines of kind \"$kind\"");
}
cmp_ok($count{member}, '>=', 40, 'the catalog listing has every member of the extension');

same_catalog(catalog($node, 'postgres'), $fresh,
	"1.0 updated to $default with holds live: the same objects as a fresh install");

# Every version with an update path, updated without data in a database of
# its own.
for my $v (@sources)
{
	(my $db = "from_$v") =~ s/[^a-z0-9_]/_/g;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, "CREATE EXTENSION syncwf VERSION '$v'");
	$node->safe_psql($db, 'ALTER EXTENSION syncwf UPDATE');
	same_catalog(catalog($node, $db), $fresh,
		"$v updated to $default: the same objects as a fresh install");
}

# The comparison notices each kind of change (made in a transaction that is
# rolled back).
my @changes = (
	[ 'a dropped function',
	  'ALTER EXTENSION syncwf DROP FUNCTION sync_reconcile(); DROP FUNCTION sync_reconcile()',
	  qr/^- member function sync_reconcile\(\)$/m ],
	[ 'a function\'s volatility',
	  'ALTER FUNCTION sync_heartbeat(text) STABLE',
	  qr/^\+ function sync_heartbeat\(text\): .*volatility s,/m ],
	[ 'a function\'s parallel safety',
	  'ALTER FUNCTION sync_is_held(text, text, bigint) PARALLEL SAFE',
	  qr/^\+ function sync_is_held\(text,text,bigint\): .*parallel s,/m ],
	[ 'SECURITY DEFINER',
	  'ALTER FUNCTION sync_release_all() SECURITY DEFINER',
	  qr/^\+ function sync_release_all\(\): .*security definer t,/m ],
	[ 'a function\'s SET option',
	  'ALTER FUNCTION sync_release_all() SET search_path = pg_catalog',
	  qr/^\+ function sync_release_all\(\): .*config search_path=pg_catalog,/m ],
	[ 'a function\'s ACL',
	  'REVOKE EXECUTE ON FUNCTION sync_release_holder(text) FROM PUBLIC',
	  qr/^\+ function sync_release_holder\(text\): .*acl /m ],
	[ 'an argument default',
	  q{CREATE OR REPLACE FUNCTION sync_try_acquire(lock_name text, priority integer DEFAULT 1,
	                                              slots integer DEFAULT 1, mode text DEFAULT 'exclusive')
	    RETURNS bigint AS '$libdir/syncwf', 'sync_try_acquire' LANGUAGE C VOLATILE PARALLEL UNSAFE},
	  qr/^\+ function sync_try_acquire\(text,integer,integer,text\): arguments \(lock_name text, priority integer DEFAULT 1, slots/m ],
	[ 'a C symbol',
	  q{CREATE OR REPLACE FUNCTION sync_release_all() RETURNS integer
	    AS '$libdir/syncwf', 'sync_release_holder' LANGUAGE C VOLATILE PARALLEL UNSAFE},
	  qr/^\+ function sync_release_all\(\): .*source sync_release_holder,/m ],
	[ 'a column default',
	  q{ALTER TABLE sync_launch_plan ALTER COLUMN scheduling SET DEFAULT 'LIFO'},
	  qr/^\+ column sync_launch_plan\.scheduling: .*default 'LIFO'::text,/m ],
	[ 'a column\'s NOT NULL',
	  'ALTER TABLE sync_execution ALTER COLUMN reason SET NOT NULL',
	  qr/^\+ column sync_execution\.reason: .*not null t,/m ],
	[ 'a column\'s type',
	  'ALTER TABLE sync_launch_event ALTER COLUMN reason TYPE varchar(100)',
	  qr/^\+ column sync_launch_event\.reason: .*type character varying\(100\),/m ],
	[ 'an added column',
	  'ALTER TABLE sync_limit ADD COLUMN note text',
	  qr/^\+ column sync_limit\.note: position \d+,/m ],
	[ 'a table\'s ACL',
	  'GRANT INSERT ON sync_limit TO PUBLIC',
	  qr/^\+ relation sync_limit: .*acl .*=ar\//m ],
	[ 'a view\'s ACL',
	  'REVOKE SELECT ON sync_holders FROM PUBLIC',
	  qr/^\+ relation sync_holders: /m ],
	[ 'a table\'s storage options',
	  'ALTER TABLE sync_state SET (autovacuum_vacuum_threshold = 1000)',
	  qr/^\+ relation sync_state: .*autovacuum_vacuum_threshold=1000/m ],
	[ 'a constraint',
	  'ALTER TABLE sync_limit DROP CONSTRAINT sync_limit_sizelimit_check',
	  qr/^- constraint sync_limit_sizelimit_check on sync_limit: CHECK/m ],
	[ 'an index',
	  'DROP INDEX sync_execution_created',
	  qr/^- index CREATE INDEX sync_execution_created ON /m ],
	[ 'a trigger',
	  'ALTER TABLE sync_state DISABLE TRIGGER sync_state_deleted',
	  qr/^\+ trigger sync_state_deleted on sync_state: .*enabled D$/m ],
	[ 'a view definition',
	  q{CREATE OR REPLACE VIEW sync_locks AS
	    SELECT * FROM sync_lock_status() WHERE holders > 0},
	  qr/^\+ view sync_locks: .*holders > 0/m ],
	[ 'a sequence',
	  'ALTER SEQUENCE sync_launch_event_event_id_seq INCREMENT BY 2',
	  qr/^\+ sequence sync_launch_event_event_id_seq: .*increment 2,/m ],
	[ 'a comment',
	  q{COMMENT ON VIEW sync_holders IS 'changed'},
	  qr/^\+ comment on view sync_holders: changed$/m ],
	[ 'a configuration table',
	  q{UPDATE pg_extension SET extcondition[1] = 'WHERE false' WHERE extname = 'syncwf'},
	  qr/^\+ configuration table sync_limit, condition 'WHERE false'$/m ],
);
for my $c (@changes)
{
	my ($label, $sql, $expect) = @$c;
	my $changed = $node->safe_psql('fresh', "BEGIN;\n$sql;\n$catalog_sql;\nROLLBACK;");
	like(line_diff($fresh, $changed), $expect, "the comparison notices $label");
}
same_catalog(catalog($node, 'fresh'), $fresh, 'the fresh install is unchanged after the checks');

# --- (b) the holds survived and still work ------------------------------------------
for my $rel (@recorded)
{
	is(rows($node, $rel, $columns{$rel}), $before{$rel}, "after the update: $rel as before");
}
is( $node->safe_psql('postgres', qq{
		SELECT string_agg(lock_name || ':' || token, ' ' ORDER BY lock_name)
		  FROM sync_holders WHERE pid = $holder_pid}),
	"mtx/u/m:$mtx_tok sem/u/s:$sem_tok",
	'session: the background session still holds both locks, with their tokens');
is($node->safe_psql('postgres', "SELECT sync_is_held('sem/u/k', 'u/h1', $keyed_tok)"),
	't', 'keyed: u/h1 still holds sem/u/k with its token');

# Keyed hand-off: the front of the queue (u/p2, priority 5) gets the slot.
is($node->safe_psql('postgres', "SELECT sync_release('sem/u/k', 'u/h1')"),
	't', 'keyed: release u/h1\'s hold of sem/u/k');
ok( $node->poll_query_until('postgres',
		"SELECT held FROM sync_state WHERE name = 'sem/u/k' AND workflowkey = 'u/p2'"),
	'keyed: the front pending request (u/p2) is granted, written by the worker');
is( $node->safe_psql('postgres', qq{
		SELECT h.token = s.token AND s.token > $max_tok
		  FROM sync_holders h JOIN sync_state s ON s.name = h.lock_name AND s.workflowkey = h.holder
		 WHERE h.lock_name = 'sem/u/k' AND h.holder = 'u/p2'}),
	't', 'keyed: its token, the same in sync_state and sync_holders, is above every earlier token');
is( $node->safe_psql('postgres', q{
		SELECT string_agg(holder || ':' || position, ' ' ORDER BY position)
		  FROM sync_waiters WHERE lock_name = 'sem/u/k'}),
	'u/p1:1', 'keyed: u/p1 moved up to position 1');
is( $node->safe_psql('postgres', "SELECT sync_release_holder('u/h1') || ',' || sync_release_holder('u/p2')"),
	'1,1', 'keyed: u/h1 releases mtx/u/km, u/p2 releases sem/u/k');
ok( $node->poll_query_until('postgres',
		"SELECT held FROM sync_state WHERE name = 'sem/u/k' AND workflowkey = 'u/p1'"),
	'keyed: then u/p1 is granted');

# Session hand-off: the holder releases the mutex; the queued session gets it.
is($holder->query_safe(q{SELECT sync_release('mtx/u/m')}),
	't', 'session: the background session releases mtx/u/m');
ok( $node->poll_query_until('postgres', qq{
		SELECT pid = $waiter_pid AND token > $max_tok
		  FROM sync_holders WHERE lock_name = 'mtx/u/m'}),
	'session: the queued session holds mtx/u/m, with a larger token');
is($holder->query_safe('SELECT sync_release_all()'),
	'1', 'session: the background session releases sem/u/s, its last hold');
$holder->quit;
$waiter->quit;
ok( $node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM sync_holders WHERE scope <> 'keyed'"),
	'session: no session hold is left once both sessions have ended');

# Launch plans: the running execution finishes; the first waiting one is
# promoted by the worker.
is($node->safe_psql('postgres', "SELECT sync_execution_update('ex1', 'SUCCEEDED')"),
	'SUCCEEDED', 'launch plan: ex1 succeeds');
ok( $node->poll_query_until('postgres',
		"SELECT phase = 'QUEUED' FROM sync_execution WHERE execution_id = 'ex2'"),
	'launch plan: ex2 is promoted to QUEUED');
is( $node->safe_psql('postgres', q{
		SELECT (SELECT string_agg(holder, ' ') FROM sync_holders
		         WHERE lock_name = 'sem/launchplan/proj/dev/lp')
		       || '|' || (SELECT string_agg(holder || ':' || position, ' ') FROM sync_waiters
		                   WHERE lock_name = 'sem/launchplan/proj/dev/lp')
		       || '|' || (SELECT string_agg(event || ':' || execution_id, ' ') FROM sync_launch_event)}),
	'ex2|ex3:1|PROMOTED:ex2',
	'launch plan: ex2 holds the slot, ex3 waits first, one PROMOTED event');

# New work after the update.
is( $node->safe_psql('postgres', qq{
		SELECT status = 'held' AND token > $max_tok FROM sync_request('mtx/u/new', 'u/new')}),
	't', 'keyed: a new request is granted with a larger token');
is($node->safe_psql('postgres', "SELECT phase FROM sync_execution_create('proj', 'dev', 'lp', 'v1', 'ex4')"),
	'PENDING', 'launch plan: a new execution waits behind ex3');

$node->stop;
done_testing();
