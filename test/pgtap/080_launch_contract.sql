-- API contract of launch-plan concurrency policies: the tables
-- sync_launch_plan, sync_execution and sync_launch_event (columns, types,
-- keys, constraints, indexes, triggers), the view sync_launch_plan_stats and
-- sync_launch_plan_metrics(), what sync_launch_plan_register,
-- sync_execution_create and sync_execution_update return, their errors and
-- SQLSTATEs, and the privileges: PUBLIC may read the tables and create and
-- update executions (its own: a terminal update of another role's
-- execution, which would release that role's slot or queue place, is
-- denied), but only the extension's owner and members of syncwf_admin may
-- register plans and write the tables.
--
-- Plans registered in a transaction can be launched in it (the plan's
-- semaphore needs no committed sync_limit row), so everything here happens
-- in one transaction that rolls back: nothing survives, in the tables or in
-- shared memory (executions' slots are keyed holds, transactional too).
-- Releases take effect at commit, so inside this transaction a terminal
-- update frees no slot (checked below); hand-offs at commit are tested by
-- the isolation specs launch-*.  NOTIFY goes out at commit only: tested there.
BEGIN;
SELECT plan(315);

CREATE ROLE tap_lc_user NOLOGIN;                           -- an ordinary role
CREATE ROLE tap_lc_other NOLOGIN;                          -- another ordinary role
CREATE ROLE tap_lc_admin NOLOGIN IN ROLE syncwf_admin;     -- a member of syncwf_admin

-- What sync_execution_create returned, by execution id.
CREATE TEMP TABLE tap_lc_c (execution_id text PRIMARY KEY, nrows integer, phase text, reason text,
                            replaced_execution_id text);
CREATE FUNCTION pg_temp.tap_lc_create(p text, d text, n text, v text, id text, prio integer DEFAULT 0)
RETURNS void LANGUAGE sql AS $f$
    INSERT INTO tap_lc_c
    SELECT id, count(*) OVER (), c.phase, c.reason, c.replaced_execution_id
      FROM sync_execution_create(p, d, n, v, id, prio) c
$f$;

-- Table sync_launch_plan ------------------------------------------------------------------
SELECT has_table('sync_launch_plan', 'table sync_launch_plan exists');
SELECT is(
    (SELECT array_agg(attname::text ORDER BY attnum) FROM pg_catalog.pg_attribute
      WHERE attrelid = 'sync_launch_plan'::regclass AND attnum > 0 AND NOT attisdropped),
    ARRAY['project', 'domain', 'name', 'version', 'max_concurrency', 'behavior', 'scheduling',
          'max_pending', 'updated_at'],
    'sync_launch_plan columns are (project, domain, name, version, max_concurrency, behavior, scheduling, max_pending, updated_at)');
SELECT col_type_is('sync_launch_plan', c, t, format('sync_launch_plan.%s is %s', c, t))
  FROM (VALUES
    ('project',         'text'),
    ('domain',          'text'),
    ('name',            'text'),
    ('version',         'text'),
    ('max_concurrency', 'integer'),
    ('behavior',        'text'),
    ('scheduling',      'text'),
    ('max_pending',     'interval'),
    ('updated_at',      'timestamp with time zone')
  ) AS x(c, t);
SELECT col_not_null('sync_launch_plan', c, format('sync_launch_plan.%s is NOT NULL', c))
  FROM unnest(ARRAY['project', 'domain', 'name', 'version', 'scheduling', 'updated_at']) AS c;
SELECT col_is_null('sync_launch_plan', c, format('sync_launch_plan.%s may be NULL', c))
  FROM unnest(ARRAY['max_concurrency', 'behavior', 'max_pending']) AS c;
SELECT col_default_is('sync_launch_plan', 'scheduling', 'FIFO', 'sync_launch_plan.scheduling defaults to FIFO');
SELECT col_default_is('sync_launch_plan', 'updated_at', 'now()', 'sync_launch_plan.updated_at defaults to now()');
SELECT col_is_pk('sync_launch_plan', ARRAY['project', 'domain', 'name', 'version'],
                 'sync_launch_plan primary key is (project, domain, name, version)');
SELECT is(
    (SELECT array_agg(conname::text ORDER BY conname) FROM pg_catalog.pg_constraint
      WHERE conrelid = 'sync_launch_plan'::regclass AND contype = 'c'),
    ARRAY['sync_launch_plan_behavior_check', 'sync_launch_plan_ident_check', 'sync_launch_plan_max_check',
          'sync_launch_plan_max_pending_check', 'sync_launch_plan_policy_check',
          'sync_launch_plan_scheduling_check'],
    'sync_launch_plan has the CHECK constraints behavior, ident, max, max_pending, policy, scheduling');
SELECT indexes_are('sync_launch_plan', ARRAY['sync_launch_plan_pkey'],
                   'sync_launch_plan has only its primary key index');
SELECT throws_ok(
    format($$INSERT INTO sync_launch_plan (project, domain, name, version, max_concurrency, behavior, scheduling, max_pending)
             VALUES ('tap_lc', 'd', 'bad', 'v1', %s, %L, %L, %L)$$, m, b, s, p),
    '23514', NULL, format('a plan row with %s violates its CHECK (23514)', what))
  FROM (VALUES
    ('-1', 'WAIT', 'FIFO', NULL, 'a negative max_concurrency'),
    ('NULL', 'WAIT', 'FIFO', NULL, 'a behavior without max_concurrency'),
    ('1', NULL, 'FIFO', NULL, 'a max_concurrency without behavior'),
    ('1', 'wait', 'FIFO', NULL, 'a lower-case behavior'),
    ('1', 'QUEUE', 'FIFO', NULL, 'an unknown behavior'),
    ('1', 'WAIT', 'RANDOM', NULL, 'an unknown scheduling'),
    ('1', 'WAIT', 'FIFO', '0 s', 'a max_pending of 0'),
    ('1', 'WAIT', 'FIFO', '-1 min', 'a negative max_pending')
  ) AS x(m, b, s, p, what);
SELECT throws_ok(
    format($$INSERT INTO sync_launch_plan (project, domain, name, version) VALUES (%L, %L, %L, %L)$$, p, d, n, v),
    '23514', NULL, format('a plan row with %s violates sync_launch_plan_ident_check (23514)', what))
  FROM (VALUES
    ('tap/lc', 'd', 'n', 'v1', 'a "/" in the project'),
    ('tap_lc', 'd/x', 'n', 'v1', 'a "/" in the domain'),
    ('tap_lc', 'd', 'n/x', 'v1', 'a "/" in the name'),
    ('', 'd', 'n', 'v1', 'an empty project'),
    ('tap_lc', 'd', repeat('n', 64), 'v1', 'a 64-byte name'),
    ('tap_lc', 'd', 'n', E'v\n1', 'a control character in the version'),
    ('tap_lc', 'd', 'n', repeat('v', 256), 'a 256-byte version')
  ) AS x(p, d, n, v, what);

-- Table sync_execution ----------------------------------------------------------------------
SELECT has_table('sync_execution', 'table sync_execution exists');
SELECT is(
    (SELECT array_agg(attname::text ORDER BY attnum) FROM pg_catalog.pg_attribute
      WHERE attrelid = 'sync_execution'::regclass AND attnum > 0 AND NOT attisdropped),
    ARRAY['execution_id', 'project', 'domain', 'name', 'version', 'phase', 'reason', 'priority',
          'created_at', 'queued_at', 'started_at', 'finished_at', 'owner'],
    'sync_execution columns are (execution_id, project, domain, name, version, phase, reason, priority, created_at, queued_at, started_at, finished_at, owner)');
SELECT col_type_is('sync_execution', c, t, format('sync_execution.%s is %s', c, t))
  FROM (VALUES
    ('execution_id', 'text'),
    ('project',      'text'),
    ('domain',       'text'),
    ('name',         'text'),
    ('version',      'text'),
    ('phase',        'text'),
    ('reason',       'text'),
    ('priority',     'integer'),
    ('created_at',   'timestamp with time zone'),
    ('queued_at',    'timestamp with time zone'),
    ('started_at',   'timestamp with time zone'),
    ('finished_at',  'timestamp with time zone')
  ) AS x(c, t);
SELECT col_not_null('sync_execution', c, format('sync_execution.%s is NOT NULL', c))
  FROM unnest(ARRAY['execution_id', 'project', 'domain', 'name', 'version', 'phase', 'priority',
                    'created_at']) AS c;
SELECT col_is_null('sync_execution', c, format('sync_execution.%s may be NULL', c))
  FROM unnest(ARRAY['reason', 'queued_at', 'started_at', 'finished_at']) AS c;
SELECT col_default_is('sync_execution', 'priority', '0', 'sync_execution.priority defaults to 0');
SELECT col_default_is('sync_execution', 'created_at', 'clock_timestamp()',
                      'sync_execution.created_at defaults to clock_timestamp()');
SELECT col_is_pk('sync_execution', 'execution_id', 'sync_execution primary key is (execution_id)');
SELECT is(
    (SELECT array_agg(conname::text ORDER BY conname) FROM pg_catalog.pg_constraint
      WHERE conrelid = 'sync_execution'::regclass AND contype = 'c'),
    ARRAY['sync_execution_id_check', 'sync_execution_phase_check'],
    'sync_execution has the CHECK constraints id and phase');
SELECT throws_ok(
    format($$INSERT INTO sync_execution (execution_id, project, domain, name, version, phase)
             VALUES (%L, 'tap_lc', 'd', 'n', 'v1', %L)$$, i, ph),
    '23514', NULL, format('an execution row with %s violates its CHECK (23514)', what))
  FROM (VALUES
    ('tap_lc-bad', 'DONE', 'an unknown phase'),
    ('tap_lc-bad', 'queued', 'a lower-case phase'),
    ('', 'QUEUED', 'an empty execution_id'),
    (E'tap_lc\tbad', 'QUEUED', 'a control character in the execution_id'),
    (repeat('x', 256), 'QUEUED', 'a 256-byte execution_id')
  ) AS x(i, ph, what);
SELECT indexes_are('sync_execution', ARRAY['sync_execution_pkey', 'sync_execution_live', 'sync_execution_created'],
                   'sync_execution has the indexes pkey, live and created');
SELECT has_index('sync_execution', 'sync_execution_live', ARRAY['project', 'domain', 'name', 'created_at'],
                 'index sync_execution_live is on (project, domain, name, created_at)');
SELECT has_index('sync_execution', 'sync_execution_created', ARRAY['project', 'domain', 'name', 'created_at'],
                 'index sync_execution_created is on (project, domain, name, created_at)');
SELECT is((SELECT pg_catalog.pg_get_expr(indpred, indrelid) FROM pg_catalog.pg_index
            WHERE indexrelid = 'sync_execution_live'::regclass),
          '(finished_at IS NULL)',
          'sync_execution_live is partial: it covers the executions without finished_at (the live ones)');
SELECT is((SELECT indpred IS NULL FROM pg_catalog.pg_index WHERE indexrelid = 'sync_execution_created'::regclass),
          true, 'sync_execution_created covers every execution');
SELECT is((SELECT reloptions FROM pg_catalog.pg_class WHERE oid = 'sync_execution'::regclass),
          ARRAY['fillfactor=90'], 'sync_execution leaves room on its pages for HOT updates (fillfactor 90)');

-- finished_at is set exactly when the phase is final, whoever writes the row (trigger
-- sync_execution_finished): rows written by SQL, as another system does.
INSERT INTO sync_execution (execution_id, project, domain, name, version, phase, finished_at)
VALUES ('tap_lc-fin-1', 'tap_lc', 'fin', 'n', 'v1', 'SUCCEEDED', NULL),
       ('tap_lc-fin-2', 'tap_lc', 'fin', 'n', 'v1', 'RUNNING', '2020-01-01'),
       ('tap_lc-fin-3', 'tap_lc', 'fin', 'n', 'v1', 'FAILED', '2020-01-01');
SELECT is((SELECT array_agg(execution_id || ' ' || CASE WHEN finished_at IS NULL THEN 'none'
                                                        WHEN finished_at = '2020-01-01' THEN 'as written'
                                                        WHEN finished_at >= now() THEN 'now' END
                            ORDER BY execution_id)
             FROM sync_execution WHERE domain = 'fin'),
          ARRAY['tap_lc-fin-1 now', 'tap_lc-fin-2 none', 'tap_lc-fin-3 as written'],
          'an INSERT: a final phase without finished_at gets the time, a live one loses it, a time written for a final one is kept');
UPDATE sync_execution SET phase = 'RUNNING' WHERE execution_id = 'tap_lc-fin-1';
UPDATE sync_execution SET phase = 'ABORTED' WHERE execution_id = 'tap_lc-fin-2';
UPDATE sync_execution SET finished_at = NULL WHERE execution_id = 'tap_lc-fin-3';
SELECT is((SELECT array_agg(execution_id || ' ' || CASE WHEN finished_at IS NULL THEN 'none'
                                                        WHEN finished_at >= now() THEN 'now' END
                            ORDER BY execution_id)
             FROM sync_execution WHERE domain = 'fin'),
          ARRAY['tap_lc-fin-1 none', 'tap_lc-fin-2 now', 'tap_lc-fin-3 now'],
          'an UPDATE: back to a live phase clears finished_at, to a final one sets it, clearing it on a final one sets it again');
SELECT throws_ok($$UPDATE sync_execution SET phase = 'DONE' WHERE execution_id = 'tap_lc-fin-1'$$,
                 '23514', NULL, 'an unknown phase written by SQL is still the phase CHECK''s error (23514)');
DELETE FROM sync_execution WHERE domain = 'fin';
SELECT throws_ok($$SELECT sync_execution_finished()$$, '39P01', NULL,
                 'sync_execution_finished() called as a function is 39P01');
CREATE TEMP TABLE tap_lc_trig (phase text, finished_at timestamptz);
CREATE TRIGGER tap_lc_trig AFTER INSERT ON tap_lc_trig FOR EACH STATEMENT
    EXECUTE FUNCTION sync_execution_finished();
SELECT throws_ok($$INSERT INTO tap_lc_trig VALUES ('SUCCEEDED', NULL)$$, '39P01', NULL,
                 'sync_execution_finished() fired other than BEFORE INSERT OR UPDATE FOR EACH ROW is 39P01');
DROP TABLE tap_lc_trig;

-- Table sync_launch_event -------------------------------------------------------------------
SELECT has_table('sync_launch_event', 'table sync_launch_event exists');
SELECT is(
    (SELECT array_agg(attname::text ORDER BY attnum) FROM pg_catalog.pg_attribute
      WHERE attrelid = 'sync_launch_event'::regclass AND attnum > 0 AND NOT attisdropped),
    ARRAY['event_id', 'at', 'event', 'project', 'domain', 'name', 'version', 'execution_id',
          'replaced_execution_id', 'reason'],
    'sync_launch_event columns are (event_id, at, event, project, domain, name, version, execution_id, replaced_execution_id, reason)');
SELECT col_type_is('sync_launch_event', c, t, format('sync_launch_event.%s is %s', c, t))
  FROM (VALUES
    ('event_id',              'bigint'),
    ('at',                    'timestamp with time zone'),
    ('event',                 'text'),
    ('project',               'text'),
    ('domain',                'text'),
    ('name',                  'text'),
    ('version',               'text'),
    ('execution_id',          'text'),
    ('replaced_execution_id', 'text'),
    ('reason',                'text')
  ) AS x(c, t);
SELECT col_not_null('sync_launch_event', c, format('sync_launch_event.%s is NOT NULL', c))
  FROM unnest(ARRAY['event_id', 'at', 'event', 'project', 'domain', 'name', 'version', 'execution_id']) AS c;
SELECT col_is_null('sync_launch_event', c, format('sync_launch_event.%s may be NULL', c))
  FROM unnest(ARRAY['replaced_execution_id', 'reason']) AS c;
SELECT col_is_pk('sync_launch_event', 'event_id', 'sync_launch_event primary key is (event_id)');
SELECT matches((SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid) FROM pg_catalog.pg_attrdef d
                 WHERE d.adrelid = 'sync_launch_event'::regclass
                   AND d.adnum = (SELECT attnum FROM pg_catalog.pg_attribute
                                   WHERE attrelid = 'sync_launch_event'::regclass AND attname = 'event_id')),
               '^nextval\(', 'sync_launch_event.event_id is serial (defaults to nextval of a sequence)');
SELECT col_default_is('sync_launch_event', 'at', 'clock_timestamp()',
                      'sync_launch_event.at defaults to clock_timestamp()');
SELECT throws_ok(
    $$INSERT INTO sync_launch_event (event, project, domain, name, version, execution_id)
      VALUES ('STARTED', 'tap_lc', 'd', 'n', 'v1', 'tap_lc-x')$$,
    '23514', NULL, 'an unknown event violates the CHECK (23514)');
SELECT indexes_are('sync_launch_event', ARRAY['sync_launch_event_pkey', 'sync_launch_event_plan'],
                   'sync_launch_event has the indexes pkey and plan');
SELECT has_index('sync_launch_event', 'sync_launch_event_plan', ARRAY['project', 'domain', 'name', 'at'],
                 'index sync_launch_event_plan is on (project, domain, name, at)');

SELECT is((SELECT count(*)::int FROM pg_catalog.pg_depend d
            WHERE d.classid = 'pg_catalog.pg_class'::regclass
              AND d.refclassid = 'pg_catalog.pg_extension'::regclass
              AND d.refobjid = (SELECT oid FROM pg_catalog.pg_extension WHERE extname = 'syncwf')
              AND d.objid IN ('sync_launch_plan'::regclass, 'sync_execution'::regclass,
                              'sync_launch_event'::regclass, 'sync_launch_plan_stats'::regclass)
              AND d.deptype = 'e'),
          4, 'sync_launch_plan, sync_execution, sync_launch_event and sync_launch_plan_stats belong to extension syncwf');
SELECT ok((SELECT 'sync_launch_plan'::regclass = ANY (extconfig) FROM pg_catalog.pg_extension WHERE extname = 'syncwf'),
          'sync_launch_plan rows are dumped by pg_dump (pg_extension_config_dump)');

-- Triggers -----------------------------------------------------------------------------------
SELECT triggers_are('sync_launch_plan', ARRAY['sync_launch_plan_changed'],
                    'sync_launch_plan has exactly the trigger sync_launch_plan_changed');
SELECT triggers_are('sync_execution', ARRAY['sync_execution_changed', 'sync_execution_finished'],
                    'sync_execution has exactly the triggers sync_execution_changed and sync_execution_finished');
SELECT is((SELECT count(*)::int FROM pg_catalog.pg_trigger
            WHERE tgrelid = 'sync_launch_event'::regclass AND NOT tgisinternal),
          0, 'sync_launch_event has no trigger');
SELECT trigger_is(t, g, f, format('trigger %s on %s calls %s()', g, t, f))
  FROM (VALUES
    ('sync_launch_plan', 'sync_launch_plan_changed', 'sync_launch_plan_changed'),
    ('sync_execution',   'sync_execution_changed',   'sync_execution_changed'),
    ('sync_execution',   'sync_execution_finished',  'sync_execution_finished')
  ) AS x(t, g, f);
SELECT matches(
    (SELECT pg_catalog.pg_get_triggerdef(oid) FROM pg_catalog.pg_trigger
      WHERE tgrelid = t::regclass AND tgname = g),
    '^CREATE TRIGGER ' || g || ' ' || d || ' ON \S*' || t || ' FOR EACH ' || l || ' ',
    format('trigger %s fires %s on %s for each %s', g, d, t, l))
  FROM (VALUES
    ('sync_launch_plan', 'sync_launch_plan_changed', 'AFTER INSERT OR DELETE OR UPDATE', 'STATEMENT'),
    ('sync_execution',   'sync_execution_changed',   'AFTER DELETE OR UPDATE',           'STATEMENT'),
    ('sync_execution',   'sync_execution_finished',  'BEFORE INSERT OR UPDATE OF phase, finished_at', 'ROW')
  ) AS x(t, g, d, l);
SELECT is((SELECT count(*)::int FROM pg_catalog.pg_trigger
            WHERE tgrelid IN ('sync_launch_plan'::regclass, 'sync_execution'::regclass)
              AND tgenabled <> 'O'),
          0, 'the triggers are enabled');

-- Functions, the view and the metrics function ---------------------------------------------------
SELECT has_function('sync_launch_plan_register',
                    ARRAY['text', 'text', 'text', 'text', 'integer', 'text', 'text', 'interval'],
                    'sync_launch_plan_register(text, text, text, text, integer, text, text, interval) exists');
SELECT has_function('sync_execution_create',
                    ARRAY['text', 'text', 'text', 'text', 'text', 'integer', 'boolean'],
                    'sync_execution_create(text, text, text, text, text, integer, boolean) exists');
SELECT has_function('sync_execution_update', ARRAY['text', 'text'],
                    'sync_execution_update(text, text) exists');
SELECT has_function('sync_launch_plan_metrics', ARRAY['interval'],
                    'sync_launch_plan_metrics(interval) exists');
SELECT function_returns('sync_launch_plan_register',
                        ARRAY['text', 'text', 'text', 'text', 'integer', 'text', 'text', 'interval'], 'void',
                        'sync_launch_plan_register returns void');
SELECT function_returns('sync_execution_update', ARRAY['text', 'text'], 'text',
                        'sync_execution_update returns text');
SELECT is(
    (SELECT array_to_string(proargnames, ',') || ' / ' || pg_catalog.pg_get_function_result(oid)
       FROM pg_catalog.pg_proc WHERE oid = 'sync_execution_create(text, text, text, text, text, integer, boolean)'::regprocedure),
    'project,domain,name,version,execution_id,priority,raise_on_limit,phase,reason,replaced_execution_id'
        || ' / TABLE(phase text, reason text, replaced_execution_id text)',
    'sync_execution_create(project, domain, name, version, execution_id, priority, raise_on_limit) RETURNS TABLE (phase text, reason text, replaced_execution_id text)');
SELECT is(
    (SELECT pg_catalog.pg_get_function_arguments(oid) FROM pg_catalog.pg_proc
      WHERE oid = 'sync_launch_plan_register(text, text, text, text, integer, text, text, interval)'::regprocedure),
    'project text, domain text, name text, version text, max_concurrency integer DEFAULT NULL::integer, '
        || 'behavior text DEFAULT NULL::text, scheduling text DEFAULT ''FIFO''::text, '
        || 'max_pending interval DEFAULT NULL::interval',
    'sync_launch_plan_register arguments and defaults are as documented');
SELECT is(
    (SELECT pg_catalog.pg_get_function_arguments(oid) FROM pg_catalog.pg_proc
      WHERE oid = 'sync_execution_create(text, text, text, text, text, integer, boolean)'::regprocedure),
    'project text, domain text, name text, version text, execution_id text, priority integer DEFAULT 0, '
        || 'raise_on_limit boolean DEFAULT false',
    'sync_execution_create: priority defaults to 0, raise_on_limit to false');
SELECT is(
    (SELECT pg_catalog.pg_get_function_arguments(oid) || ' / ' || pg_catalog.pg_get_function_result(oid)
       FROM pg_catalog.pg_proc WHERE oid = 'sync_launch_plan_metrics(interval)'::regprocedure),
    'window_length interval DEFAULT ''01:00:00''::interval / TABLE(project text, domain text, name text, '
        || 'active bigint, pending bigint, skipped bigint, aborted bigint, replaced bigint, timed_out bigint, '
        || 'pending_p50 interval, pending_p95 interval, pending_max interval)',
    'sync_launch_plan_metrics(window_length DEFAULT 1 hour) returns the per-plan metrics');
SELECT volatility_is('sync_launch_plan_metrics', ARRAY['interval'], 'stable',
                     'sync_launch_plan_metrics is STABLE');
SELECT has_view('sync_launch_plan_stats', 'view sync_launch_plan_stats exists');
SELECT is(
    (SELECT array_agg(attname::text || ' ' || format_type(atttypid, atttypmod) ORDER BY attnum)
       FROM pg_catalog.pg_attribute
      WHERE attrelid = 'sync_launch_plan_stats'::regclass AND attnum > 0 AND NOT attisdropped),
    ARRAY['project text', 'domain text', 'name text', 'active bigint', 'pending bigint', 'skipped bigint',
          'aborted bigint', 'replaced bigint', 'timed_out bigint', 'pending_p50 interval',
          'pending_p95 interval', 'pending_max interval'],
    'sync_launch_plan_stats columns are the metrics'' (project, domain, name, active, pending, skipped, aborted, replaced, timed_out, pending_p50, pending_p95, pending_max)');
SELECT is_empty($$SELECT * FROM sync_launch_plan_stats WHERE project = 'tap_lc'$$,
                'sync_launch_plan_stats has no row for a project without plans');

-- sync_launch_plan_register -------------------------------------------------------------------------
-- Plans registered (and launched, below) in this transaction.
SELECT lives_ok($$SELECT sync_launch_plan_register('tap_lc', 'd', 'wait', 'v1', 1, 'WAIT')$$,
                'register a WAIT plan (limit 1)');
SELECT is(sync_launch_plan_register('tap_lc', 'd', 'skip', 'v1', 1)::text, '',
          'sync_launch_plan_register returns void');
SELECT lives_ok($$SELECT sync_launch_plan_register('tap_lc', 'd', 'abort', 'v1', 1, 'abort')$$,
                'register an ABORT plan (behavior in lower case)');
SELECT lives_ok($$SELECT sync_launch_plan_register('tap_lc', 'd', 'repl', 'v1', 1, 'Replace', 'lifo')$$,
                'register a REPLACE plan (mixed case, LIFO)');
SELECT lives_ok($$SELECT sync_launch_plan_register('tap_lc', 'd', 'repl0', 'v1', 0, 'REPLACE')$$,
                'register a REPLACE plan with limit 0');
SELECT lives_ok($$SELECT sync_launch_plan_register('tap_lc', 'd', 'free', 'v1')$$,
                'register a plan version without a policy');
SELECT lives_ok($$SELECT sync_launch_plan_register('tap_lc', 'd', 'prio', 'v1', 1, 'WAIT', 'priority', '10 min')$$,
                'register a WAIT plan with PRIORITY scheduling and max_pending');
SELECT results_eq(
    $$SELECT name, max_concurrency, behavior, scheduling, max_pending FROM sync_launch_plan
       WHERE project = 'tap_lc' ORDER BY name$$,
    $$VALUES ('abort'::text, 1, 'ABORT'::text, 'FIFO'::text, NULL::interval),
             ('free', NULL, NULL, 'FIFO', NULL),
             ('prio', 1, 'WAIT', 'PRIORITY', '10 min'),
             ('repl', 1, 'REPLACE', 'LIFO', NULL),
             ('repl0', 0, 'REPLACE', 'FIFO', NULL),
             ('skip', 1, 'SKIP', 'FIFO', NULL),
             ('wait', 1, 'WAIT', 'FIFO', NULL)$$,
    'the rows: behavior and scheduling stored in upper case; SKIP is the default behavior with a limit; FIFO the default order');
SELECT lives_ok($$SELECT sync_launch_plan_register('tap_lc', 'd', 'free', 'v1', NULL)$$,
                'registering an existing version again is an upsert');
SELECT is((SELECT count(*)::int FROM sync_launch_plan WHERE project = 'tap_lc' AND name = 'free'), 1,
          '... that adds no row');
SELECT is_empty($$SELECT * FROM sync_limit WHERE name LIKE 'launchplan/tap_lc/%'$$,
                'registering plans writes no sync_limit row');

SELECT throws_ok(format('SELECT sync_launch_plan_register(%s)', a), e, NULL, format('register %s raises %s', what, e))
  FROM (VALUES
    ($$NULL, 'd', 'n', 'v1'$$,                         '22004', 'with a NULL project'),
    ($$'tap_lc', NULL, 'n', 'v1'$$,                    '22004', 'with a NULL domain'),
    ($$'tap_lc', 'd', NULL, 'v1'$$,                    '22004', 'with a NULL name'),
    ($$'tap_lc', 'd', 'n', NULL$$,                     '22004', 'with a NULL version'),
    ($$'', 'd', 'n', 'v1'$$,                           '22023', 'with an empty project'),
    ($$'tap_lc', 'd', '', 'v1'$$,                      '22023', 'with an empty name'),
    ($$'tap_lc', 'd', 'n', ''$$,                       '22023', 'with an empty version'),
    ($$'tap/lc', 'd', 'n', 'v1'$$,                     '22023', 'with a "/" in the project'),
    ($$'tap_lc', 'd/x', 'n', 'v1'$$,                   '22023', 'with a "/" in the domain'),
    ($$'tap_lc', 'd', 'n/x', 'v1'$$,                   '22023', 'with a "/" in the name'),
    ($$E'tap\tlc', 'd', 'n', 'v1'$$,                   '22023', 'with a control character in the project'),
    ($$'tap_lc', 'd', 'n', E'v\n1'$$,                  '22023', 'with a control character in the version'),
    ($$repeat('p', 64), 'd', 'n', 'v1'$$,              '22023', 'with a 64-byte project'),
    ($$'tap_lc', 'd', 'n', repeat('v', 256)$$,         '22023', 'with a 256-byte version'),
    ($$'tap_lc', 'd', 'n', 'v1', -1, 'WAIT'$$,         '22023', 'with a negative max_concurrency'),
    ($$'tap_lc', 'd', 'n', 'v1', 1, 'QUEUE'$$,         '22023', 'with an unknown behavior'),
    ($$'tap_lc', 'd', 'n', 'v1', NULL, 'WAIT'$$,       '22023', 'with a behavior but no max_concurrency'),
    ($$'tap_lc', 'd', 'n', 'v1', 1, 'WAIT', 'RANDOM'$$, '22023', 'with an unknown scheduling'),
    ($$'tap_lc', 'd', 'n', 'v1', 1, 'WAIT', 'FIFO', '0 s'$$, '22023', 'with a max_pending of 0'),
    ($$'tap_lc', 'd', 'n', 'v1', 1, 'WAIT', 'FIFO', '-1 s'$$, '22023', 'with a negative max_pending')
  ) AS x(a, e, what);
SELECT throws_ok($$SELECT sync_launch_plan_register('tap_lc', 'd', 'n', 'v1', -1, 'WAIT')$$, '22023',
                 'max_concurrency must not be negative', 'the message for a negative limit');
SELECT throws_ok($$SELECT sync_launch_plan_register('tap_lc', 'd', 'n', 'v1', 1, 'queue')$$, '22023',
                 'unknown concurrency behavior "QUEUE"', 'the message for an unknown behavior');
SELECT is_empty($$SELECT * FROM sync_launch_plan WHERE project = 'tap_lc' AND name = 'n'$$,
                'the refused registrations wrote nothing');

-- sync_execution_create: one row, a phase in the documented set -------------------------------------
SELECT lives_ok($$SELECT pg_temp.tap_lc_create('tap_lc', 'd', 'wait', 'v1', 'tap_lc-wait-1')$$,
                'a plan registered in this transaction can be launched in it (its semaphore needs no committed sync_limit row)');
DO $$ BEGIN
    PERFORM pg_temp.tap_lc_create('tap_lc', 'd', 'wait', 'v1', 'tap_lc-wait-2');
    PERFORM pg_temp.tap_lc_create('tap_lc', 'd', 'skip', 'v1', 'tap_lc-skip-1');
    PERFORM pg_temp.tap_lc_create('tap_lc', 'd', 'skip', 'v1', 'tap_lc-skip-2');
    PERFORM pg_temp.tap_lc_create('tap_lc', 'd', 'abort', 'v1', 'tap_lc-abort-1');
    PERFORM pg_temp.tap_lc_create('tap_lc', 'd', 'abort', 'v1', 'tap_lc-abort-2');
    PERFORM pg_temp.tap_lc_create('tap_lc', 'd', 'repl', 'v1', 'tap_lc-repl-1');
    PERFORM pg_temp.tap_lc_create('tap_lc', 'd', 'repl', 'v1', 'tap_lc-repl-2');
    PERFORM pg_temp.tap_lc_create('tap_lc', 'd', 'repl0', 'v1', 'tap_lc-repl0-1');
    PERFORM pg_temp.tap_lc_create('tap_lc', 'd', 'free', 'v1', 'tap_lc-free-1');
    PERFORM pg_temp.tap_lc_create('tap_lc', 'd', 'free', 'v1', 'tap_lc-free-2');
END $$;

SELECT is_empty($$SELECT * FROM tap_lc_c WHERE nrows <> 1$$,
                'sync_execution_create returns exactly one row, for every outcome');
SELECT is_empty($$SELECT * FROM tap_lc_c WHERE phase IS NULL OR phase NOT IN ('QUEUED', 'PENDING', 'FAILED', 'SKIPPED')$$,
                'the phase returned is QUEUED, PENDING, FAILED or SKIPPED');
SELECT results_eq(
    $$SELECT execution_id, phase, reason, replaced_execution_id FROM tap_lc_c ORDER BY execution_id$$,
    $$VALUES
      ('tap_lc-abort-1'::text, 'QUEUED'::text, NULL::text, NULL::text),
      ('tap_lc-abort-2', 'FAILED', 'Concurrency limit (1) reached for launch plan tap_lc/d/abort', NULL),
      ('tap_lc-free-1', 'QUEUED', NULL, NULL),
      ('tap_lc-free-2', 'QUEUED', NULL, NULL),
      ('tap_lc-repl-1', 'QUEUED', NULL, NULL),
      ('tap_lc-repl-2', 'QUEUED', NULL, 'tap_lc-repl-1'),
      ('tap_lc-repl0-1', 'FAILED',
       'Concurrency limit (0) reached for launch plan tap_lc/d/repl0; no running execution to replace', NULL),
      ('tap_lc-skip-1', 'QUEUED', NULL, NULL),
      ('tap_lc-skip-2', 'SKIPPED', 'Concurrency limit (1) reached for launch plan tap_lc/d/skip', NULL),
      ('tap_lc-wait-1', 'QUEUED', NULL, NULL),
      ('tap_lc-wait-2', 'PENDING', 'Waiting for a slot: concurrency limit (1) reached for launch plan tap_lc/d/wait', NULL)$$,
    'free slot: QUEUED; full: WAIT -> PENDING, ABORT -> FAILED, SKIP -> SKIPPED, REPLACE -> QUEUED replacing the oldest, REPLACE with nothing to replace -> FAILED; no policy: QUEUED');
SELECT results_eq(
    $$SELECT execution_id, phase, reason, priority, queued_at IS NOT NULL, finished_at IS NOT NULL
        FROM sync_execution WHERE project = 'tap_lc' ORDER BY execution_id$$,
    $$VALUES
      ('tap_lc-abort-1'::text, 'QUEUED'::text, NULL::text, 0, true, false),
      ('tap_lc-abort-2', 'FAILED', 'Concurrency limit (1) reached for launch plan tap_lc/d/abort', 0, false, true),
      ('tap_lc-free-1', 'QUEUED', NULL, 0, true, false),
      ('tap_lc-free-2', 'QUEUED', NULL, 0, true, false),
      ('tap_lc-repl-1', 'ABORTING',
       'Replaced by execution tap_lc-repl-2: concurrency limit (1) reached for launch plan tap_lc/d/repl', 0, true, false),
      ('tap_lc-repl-2', 'QUEUED', NULL, 0, true, false),
      ('tap_lc-repl0-1', 'FAILED',
       'Concurrency limit (0) reached for launch plan tap_lc/d/repl0; no running execution to replace', 0, false, true),
      ('tap_lc-skip-1', 'QUEUED', NULL, 0, true, false),
      ('tap_lc-wait-1', 'QUEUED', NULL, 0, true, false),
      ('tap_lc-wait-2', 'PENDING', 'Waiting for a slot: concurrency limit (1) reached for launch plan tap_lc/d/wait', 0, false, false)$$,
    'sync_execution: a skipped execution has no row; FAILED ones are finished; the replaced one is ABORTING with a reason naming its replacement');
SELECT results_eq(
    $$SELECT event, name, version, execution_id, replaced_execution_id FROM sync_launch_event
       WHERE project = 'tap_lc' ORDER BY event_id$$,
    $$VALUES ('SKIPPED'::text, 'skip'::text, 'v1'::text, 'tap_lc-skip-2'::text, NULL::text),
             ('ABORTED', 'abort', 'v1', 'tap_lc-abort-2', NULL),
             ('REPLACED', 'repl', 'v1', 'tap_lc-repl-2', 'tap_lc-repl-1'),
             ('ABORTED', 'repl0', 'v1', 'tap_lc-repl0-1', NULL)$$,
    'sync_launch_event: one event per skip, abort and replacement, in order');
SELECT results_eq(
    $$SELECT lock_name, holder FROM sync_holders WHERE lock_name LIKE 'sem/launchplan/tap_lc/%'
       ORDER BY lock_name, holder$$,
    $$VALUES ('sem/launchplan/tap_lc/d/abort'::text, 'tap_lc-abort-1'::text),
             ('sem/launchplan/tap_lc/d/repl', 'tap_lc-repl-1'),
             ('sem/launchplan/tap_lc/d/repl', 'tap_lc-repl-2'),
             ('sem/launchplan/tap_lc/d/skip', 'tap_lc-skip-1'),
             ('sem/launchplan/tap_lc/d/wait', 'tap_lc-wait-1')$$,
    'the slots are keyed holds of sem/launchplan/<project>/<domain>/<name> by execution id (a plan without any policy takes none; the replaced one lets go at commit)');
SELECT results_eq(
    $$SELECT lock_name, holder, position FROM sync_waiters WHERE lock_name LIKE 'sem/launchplan/tap_lc/%'$$,
    $$VALUES ('sem/launchplan/tap_lc/d/wait'::text, 'tap_lc-wait-2'::text, 1)$$,
    'the PENDING execution waits in sync_waiters');
SELECT results_eq(
    $$SELECT name, active, pending, skipped, aborted, replaced, timed_out FROM sync_launch_plan_stats
       WHERE project = 'tap_lc' ORDER BY name$$,
    $$VALUES ('abort'::text, 1::bigint, 0::bigint, 0::bigint, 1::bigint, 0::bigint, 0::bigint),
             ('free', 2, 0, 0, 0, 0, 0),
             ('prio', 0, 0, 0, 0, 0, 0),
             ('repl', 2, 0, 0, 0, 1, 0),
             ('repl0', 0, 0, 0, 1, 0, 0),
             ('skip', 1, 0, 1, 0, 0, 0),
             ('wait', 1, 1, 0, 0, 0, 0)$$,
    'sync_launch_plan_stats counts active and pending executions and the events per plan');
SELECT results_eq(
    $$SELECT * FROM sync_launch_plan_metrics(interval '1 hour') WHERE project = 'tap_lc' ORDER BY name$$,
    $$SELECT * FROM sync_launch_plan_stats WHERE project = 'tap_lc' ORDER BY name$$,
    'sync_launch_plan_stats is sync_launch_plan_metrics(''1 hour'')');
SELECT results_eq(
    $$SELECT name, active, skipped, aborted, replaced FROM sync_launch_plan_metrics()
       WHERE project = 'tap_lc' AND name IN ('abort', 'skip') ORDER BY name$$,
    $$VALUES ('abort'::text, 1::bigint, 0::bigint, 1::bigint, 0::bigint), ('skip', 1, 1, 0, 0)$$,
    'sync_launch_plan_metrics() defaults to a window of one hour');

-- idempotence: an existing id reports its state and changes nothing
SELECT results_eq(
    $$SELECT * FROM sync_execution_create('tap_lc', 'd', 'wait', 'v1', 'tap_lc-wait-2')$$,
    $$VALUES ('PENDING'::text, 'Waiting for a slot: concurrency limit (1) reached for launch plan tap_lc/d/wait'::text, NULL::text)$$,
    'creating an existing PENDING id again reports PENDING with its reason');
SELECT results_eq(
    $$SELECT * FROM sync_execution_create('tap_lc', 'd', 'repl', 'v1', 'tap_lc-repl-1')$$,
    $$VALUES ('ABORTING'::text, 'Replaced by execution tap_lc-repl-2: concurrency limit (1) reached for launch plan tap_lc/d/repl'::text, NULL::text)$$,
    'creating a replaced id again reports ABORTING (and replaces nothing)');
SELECT results_eq(
    $$SELECT phase FROM sync_execution_create('tap_lc', 'd', 'abort', 'v1', 'tap_lc-abort-2', 5, true)$$,
    $$VALUES ('FAILED'::text)$$,
    'creating an existing FAILED id again reports FAILED, even with raise_on_limit');
SELECT results_eq(
    $$SELECT phase FROM sync_execution_create('tap_lc', 'd', 'wait', 'v2-unregistered', 'tap_lc-wait-1')$$,
    $$VALUES ('QUEUED'::text)$$,
    'an existing id of the same plan name reports its state whatever the version');
SELECT is((SELECT count(*)::int FROM sync_execution WHERE project = 'tap_lc'), 10,
          'the repeated creates added no execution');
SELECT is((SELECT count(*)::int FROM sync_launch_event WHERE project = 'tap_lc'), 4,
          'the repeated creates added no event');
SELECT is((SELECT priority FROM sync_execution WHERE execution_id = 'tap_lc-abort-2'), 0,
          'the repeated create changed nothing (priority)');

-- priority is recorded; PRIORITY scheduling orders the queue by it
DO $$ BEGIN
    PERFORM pg_temp.tap_lc_create('tap_lc', 'd', 'prio', 'v1', 'tap_lc-prio-1', 0);
    PERFORM pg_temp.tap_lc_create('tap_lc', 'd', 'prio', 'v1', 'tap_lc-prio-2', 1);
    PERFORM pg_temp.tap_lc_create('tap_lc', 'd', 'prio', 'v1', 'tap_lc-prio-3', 7);
    PERFORM pg_temp.tap_lc_create('tap_lc', 'd', 'prio', 'v1', 'tap_lc-prio-4', -3);
END $$;
SELECT results_eq(
    $$SELECT holder, position FROM sync_waiters WHERE lock_name = 'sem/launchplan/tap_lc/d/prio' ORDER BY position$$,
    $$VALUES ('tap_lc-prio-3'::text, 1), ('tap_lc-prio-2', 2), ('tap_lc-prio-4', 3)$$,
    'PRIORITY scheduling: waiting executions are queued by priority, highest first');
SELECT results_eq(
    $$SELECT execution_id, priority FROM sync_execution WHERE project = 'tap_lc' AND name = 'prio' ORDER BY execution_id$$,
    $$VALUES ('tap_lc-prio-1'::text, 0), ('tap_lc-prio-2', 1), ('tap_lc-prio-3', 7), ('tap_lc-prio-4', -3)$$,
    'sync_execution.priority records the priority given');

-- raise_on_limit: SQLSTATE 53400 with the reason as message; nothing recorded
SELECT throws_ok($$SELECT * FROM sync_execution_create('tap_lc', 'd', 'skip', 'v1', 'tap_lc-skip-3', 0, true)$$,
                 '53400', 'Concurrency limit (1) reached for launch plan tap_lc/d/skip',
                 'raise_on_limit: a full SKIP plan raises 53400 with the reason');
SELECT throws_ok($$SELECT * FROM sync_execution_create('tap_lc', 'd', 'abort', 'v1', 'tap_lc-abort-3', 0, true)$$,
                 '53400', 'Concurrency limit (1) reached for launch plan tap_lc/d/abort',
                 'raise_on_limit: a full ABORT plan raises 53400 with the reason');
SELECT throws_ok($$SELECT * FROM sync_execution_create('tap_lc', 'd', 'repl0', 'v1', 'tap_lc-repl0-2', 0, true)$$,
                 '53400', 'Concurrency limit (0) reached for launch plan tap_lc/d/repl0; no running execution to replace',
                 'raise_on_limit: a REPLACE plan with nothing to replace raises 53400 with the reason');
SELECT is_empty($$SELECT * FROM sync_execution WHERE execution_id IN ('tap_lc-skip-3', 'tap_lc-abort-3', 'tap_lc-repl0-2')$$,
                'raise_on_limit: the refused creates recorded no execution');
SELECT is((SELECT count(*)::int FROM sync_launch_event WHERE project = 'tap_lc'), 4,
          'raise_on_limit: ... and no event');
SELECT results_eq(
    $$SELECT phase FROM sync_execution_create('tap_lc', 'd', 'wait', 'v1', 'tap_lc-wait-3', 0, true)$$,
    $$VALUES ('PENDING'::text)$$,
    'raise_on_limit: a full WAIT plan is not a refusal (PENDING)');
SELECT results_eq(
    $$SELECT phase, replaced_execution_id FROM sync_execution_create('tap_lc', 'd', 'repl', 'v1', 'tap_lc-repl-3', 0, true)$$,
    $$VALUES ('QUEUED'::text, 'tap_lc-repl-2'::text)$$,
    'raise_on_limit: a full REPLACE plan with an execution to replace replaces it');
SELECT results_eq(
    $$SELECT phase FROM sync_execution_create('tap_lc', 'd', 'free', 'v1', 'tap_lc-free-3', 0, true)$$,
    $$VALUES ('QUEUED'::text)$$,
    'raise_on_limit: a version without a policy is never refused');

-- errors of sync_execution_create
SELECT throws_ok(format('SELECT * FROM sync_execution_create(%s)', a), e, NULL,
                 format('sync_execution_create %s raises %s', what, e))
  FROM (VALUES
    ($$NULL, 'd', 'wait', 'v1', 'tap_lc-e'$$,            '22004', 'with a NULL project'),
    ($$'tap_lc', NULL, 'wait', 'v1', 'tap_lc-e'$$,       '22004', 'with a NULL domain'),
    ($$'tap_lc', 'd', NULL, 'v1', 'tap_lc-e'$$,          '22004', 'with a NULL name'),
    ($$'tap_lc', 'd', 'wait', NULL, 'tap_lc-e'$$,        '22004', 'with a NULL version'),
    ($$'tap_lc', 'd', 'wait', 'v1', NULL$$,              '22004', 'with a NULL execution_id'),
    ($$'tap_lc', 'd', 'wait', 'v1', 'tap_lc-e', NULL$$,  '22004', 'with a NULL priority'),
    ($$'tap_lc', 'd', 'wait', 'v1', ''$$,                '22023', 'with an empty execution_id'),
    ($$'tap_lc', 'd', 'wait', 'v1', E'tap_lc\te'$$,      '22023', 'with a control character in the execution_id'),
    ($$'tap_lc', 'd', 'wait', 'v1', repeat('e', 256)$$,  '22023', 'with a 256-byte execution_id'),
    ($$'tap/lc', 'd', 'wait', 'v1', 'tap_lc-e'$$,        '22023', 'with a "/" in the project'),
    ($$'tap_lc', 'd', 'wait', 'v9', 'tap_lc-e'$$,        '42704', 'for an unregistered version'),
    ($$'tap_lc', 'd', 'nosuch', 'v1', 'tap_lc-e'$$,      '42704', 'for an unregistered plan'),
    ($$'tap_lc', 'd', 'skip', 'v1', 'tap_lc-wait-1'$$,   '23505', 'with an id used by another plan')
  ) AS x(a, e, what);
SELECT throws_ok($$SELECT * FROM sync_execution_create('tap_lc', 'd', 'wait', 'v9', 'tap_lc-e')$$, '42704',
                 'launch plan tap_lc/d/wait version "v9" is not registered',
                 'the message for an unregistered version');
SELECT throws_ok($$SELECT * FROM sync_execution_create('tap_lc', 'd', 'skip', 'v1', 'tap_lc-wait-1')$$, '23505',
                 'execution "tap_lc-wait-1" already exists for launch plan tap_lc/d/wait',
                 'the message for an id used by another plan');
SELECT is_empty($$SELECT * FROM sync_execution WHERE execution_id = 'tap_lc-e'$$,
                'the failed creates recorded nothing');

-- sync_execution_update ----------------------------------------------------------------------------
CREATE TEMP TABLE tap_lc_hot AS
    SELECT n_tup_upd, n_tup_hot_upd FROM pg_catalog.pg_stat_xact_user_tables
     WHERE relid = 'sync_execution'::regclass;
SELECT is(sync_execution_update('tap_lc-wait-1', 'RUNNING'), 'RUNNING', 'QUEUED -> RUNNING returns the new phase');
SELECT results_eq(
    $$SELECT s.n_tup_upd - h.n_tup_upd, s.n_tup_hot_upd - h.n_tup_hot_upd
        FROM pg_catalog.pg_stat_xact_user_tables s, tap_lc_hot h
       WHERE s.relid = 'sync_execution'::regclass$$,
    $$VALUES (1::bigint, 1::bigint)$$,
    'a move between two live phases is a HOT update: no indexed column changes');
SELECT results_eq(
    $$SELECT phase, started_at IS NOT NULL, finished_at IS NULL FROM sync_execution WHERE execution_id = 'tap_lc-wait-1'$$,
    $$VALUES ('RUNNING'::text, true, true)$$,
    'RUNNING sets started_at');
SELECT is(sync_execution_update('tap_lc-wait-1', 'RUNNING'), 'RUNNING', 'the same phase again is a no-op');
SELECT is(sync_execution_update('tap_lc-wait-1', 'succeeding'), 'SUCCEEDING',
          'phases are case-insensitive; RUNNING -> SUCCEEDING');
SELECT throws_ok(format('SELECT sync_execution_update(%s)', a), e, NULL,
                 format('sync_execution_update %s raises %s', what, e))
  FROM (VALUES
    ($$'tap_lc-wait-1', 'RUNNING'$$,   '55000', 'backwards (SUCCEEDING -> RUNNING)'),
    ($$'tap_lc-wait-1', 'QUEUED'$$,    '55000', 'backwards (SUCCEEDING -> QUEUED)'),
    ($$'tap_lc-wait-1', 'PENDING'$$,   '55000', 'backwards (SUCCEEDING -> PENDING)'),
    ($$'tap_lc-wait-1', 'FAILING'$$,   '55000', 'sideways (SUCCEEDING -> FAILING)'),
    ($$'tap_lc-wait-2', 'QUEUED'$$,    '55000', 'of a PENDING execution to QUEUED'),
    ($$'tap_lc-wait-2', 'RUNNING'$$,   '55000', 'of a PENDING execution to RUNNING'),
    ($$'tap_lc-abort-2', 'SUCCEEDED'$$, '55000', 'of a terminal (FAILED) execution'),
    ($$'tap_lc-wait-1', 'DONE'$$,      '22023', 'to an unknown phase'),
    ($$'tap_lc-wait-1', 'SKIPPED'$$,   '22023', 'to SKIPPED (not a phase)'),
    ($$'tap_lc-nosuch', 'RUNNING'$$,   '42704', 'of an unknown execution'),
    ($$NULL, 'RUNNING'$$,              '22004', 'with a NULL execution_id'),
    ($$'tap_lc-wait-1', NULL$$,        '22004', 'with a NULL phase'),
    ($$'', 'RUNNING'$$,                '22023', 'with an empty execution_id')
  ) AS x(a, e, what);
SELECT throws_ok($$SELECT sync_execution_update('tap_lc-abort-2', 'SUCCEEDED')$$, '55000',
                 'execution "tap_lc-abort-2" is FAILED, which is final', 'the message for a terminal execution');
SELECT throws_ok($$SELECT sync_execution_update('tap_lc-wait-1', 'QUEUED')$$, '55000',
                 'execution "tap_lc-wait-1" cannot go from SUCCEEDING back to QUEUED', 'the message for a backwards move');
SELECT throws_ok($$SELECT sync_execution_update('tap_lc-wait-2', 'RUNNING')$$, '55000',
                 'execution "tap_lc-wait-2" is waiting for a slot', 'the message for a PENDING execution');
SELECT throws_ok($$SELECT sync_execution_update('tap_lc-nosuch', 'RUNNING')$$, '42704',
                 'execution "tap_lc-nosuch" does not exist', 'the message for an unknown execution');
SELECT throws_ok($$SELECT sync_execution_update('tap_lc-wait-1', 'DONE')$$, '22023',
                 'unknown execution phase "DONE"', 'the message for an unknown phase');
SELECT is((SELECT phase FROM sync_execution WHERE execution_id = 'tap_lc-wait-1'), 'SUCCEEDING',
          'the refused updates changed nothing');

SELECT is(sync_execution_update('tap_lc-wait-1', 'SUCCEEDED'), 'SUCCEEDED', 'SUCCEEDING -> SUCCEEDED');
SELECT results_eq(
    $$SELECT phase, finished_at IS NOT NULL FROM sync_execution WHERE execution_id = 'tap_lc-wait-1'$$,
    $$VALUES ('SUCCEEDED'::text, true)$$, 'a terminal phase sets finished_at');
SELECT is(sync_execution_update('tap_lc-wait-1', 'SUCCEEDED'), 'SUCCEEDED', 'the same terminal phase again is a no-op');
SELECT throws_ok($$SELECT sync_execution_update('tap_lc-wait-1', 'FAILED')$$, '55000', NULL,
                 'a terminal phase is final (SUCCEEDED -> FAILED raises 55000)');
SELECT results_eq(
    $$SELECT holder FROM sync_holders WHERE lock_name = 'sem/launchplan/tap_lc/d/wait'$$,
    $$VALUES ('tap_lc-wait-1'::text)$$,
    'the terminal update releases the slot only at commit: inside the transaction it is still held');
SELECT is((SELECT phase FROM sync_execution WHERE execution_id = 'tap_lc-wait-2'), 'PENDING',
          '... and the pending execution is still PENDING');
SELECT is(sync_execution_update('tap_lc-wait-3', 'ABORTED'), 'ABORTED', 'a PENDING execution may be ABORTED (gives up waiting)');
SELECT is(sync_execution_update('tap_lc-free-1', 'RUNNING'), 'RUNNING', 'an execution without a policy moves on too');
SELECT is(sync_execution_update('tap_lc-free-1', 'TIMED_OUT'), 'TIMED_OUT', 'TIMED_OUT is a terminal phase it may reach');
SELECT is(sync_execution_update('tap_lc-repl-1', 'ABORTED'), 'ABORTED', 'the replaced (ABORTING) execution ends ABORTED');

-- read-only transactions
SELECT throws_ok(q, '25006', NULL, d)
  FROM (VALUES
    ($$SET LOCAL transaction_read_only = on; SELECT * FROM sync_execution_create('tap_lc', 'd', 'free', 'v1', 'tap_lc-ro')$$,
     'sync_execution_create in a read-only transaction raises 25006'),
    ($$SET LOCAL transaction_read_only = on; SELECT sync_execution_update('tap_lc-free-2', 'RUNNING')$$,
     'sync_execution_update in a read-only transaction raises 25006'),
    ($$SET LOCAL transaction_read_only = on; SELECT sync_launch_plan_register('tap_lc', 'd', 'ro', 'v1')$$,
     'sync_launch_plan_register in a read-only transaction raises 25006')
  ) AS x(q, d);
SELECT is(current_setting('transaction_read_only'), 'off', 'the read-only settings were rolled back with the errors');

-- Privileges: catalogs ---------------------------------------------------------------------------------
SELECT table_privs_are(t, 'public', ARRAY['SELECT'],
                       format('PUBLIC may only SELECT %s', t))
  FROM (VALUES ('sync_launch_plan'), ('sync_execution'), ('sync_launch_event'), ('sync_launch_plan_stats')) AS x(t);
SELECT table_privs_are(t, 'tap_lc_user', ARRAY['SELECT'],
                       format('an ordinary role may only SELECT %s', t))
  FROM (VALUES ('sync_launch_plan'), ('sync_execution'), ('sync_launch_event')) AS x(t);
SELECT table_privs_are(t, 'syncwf_admin', ARRAY['DELETE', 'INSERT', 'SELECT', 'UPDATE'],
                       format('syncwf_admin may SELECT, INSERT, UPDATE and DELETE %s', t))
  FROM (VALUES ('sync_launch_plan'), ('sync_execution')) AS x(t);
SELECT table_privs_are('sync_launch_event', 'syncwf_admin', ARRAY['DELETE', 'SELECT'],
                       'syncwf_admin may SELECT and DELETE sync_launch_event (events are written by syncwf only)');
SELECT function_privs_are(f, a, 'public', ARRAY['EXECUTE'],
                          format('PUBLIC may EXECUTE %s(%s)', f, array_to_string(a, ', ')))
  FROM (VALUES
    ('sync_launch_plan_register', '{text,text,text,text,integer,text,text,interval}'::name[]),
    ('sync_execution_create',     '{text,text,text,text,text,integer,boolean}'),
    ('sync_execution_update',     '{text,text}'),
    ('sync_launch_plan_metrics',  '{interval}')
  ) AS x(f, a);

-- Privileges: an ordinary role ------------------------------------------------------------------------------
SELECT lives_ok($$SELECT sync_launch_plan_register('tap_lc', 'd', 'shared', 'v1', 1, 'WAIT')$$,
                'the owner registers a plan for the roles below');
SET ROLE tap_lc_user;
SELECT is(current_user::text, 'tap_lc_user', 'now acting as an ordinary role');
SELECT lives_ok($$SELECT * FROM sync_launch_plan$$, 'ordinary role: SELECT sync_launch_plan');
SELECT lives_ok($$SELECT * FROM sync_execution$$, 'ordinary role: SELECT sync_execution');
SELECT lives_ok($$SELECT * FROM sync_launch_event$$, 'ordinary role: SELECT sync_launch_event');
SELECT is((SELECT count(*)::int FROM sync_launch_plan_stats WHERE project = 'tap_lc'), 8,
          'ordinary role: SELECT sync_launch_plan_stats');
SELECT is((SELECT count(*)::int FROM sync_launch_plan_metrics('1 day') WHERE project = 'tap_lc'), 8,
          'ordinary role: sync_launch_plan_metrics()');
SELECT throws_ok($$SELECT sync_launch_plan_register('tap_lc', 'd', 'mine', 'v1', 1, 'WAIT')$$, '42501', NULL,
                 'ordinary role: registering a new plan is denied (42501)');
SELECT throws_ok($$SELECT sync_launch_plan_register('tap_lc', 'd', 'shared', 'v1', 5, 'WAIT')$$, '42501', NULL,
                 'ordinary role: changing a plan''s policy is denied (42501)');
SELECT throws_ok(q, '42501', NULL, format('ordinary role: %s is denied (42501)', q))
  FROM (VALUES
    ($$INSERT INTO sync_launch_plan (project, domain, name, version) VALUES ('tap_lc', 'd', 'mine', 'v1')$$),
    ($$UPDATE sync_launch_plan SET max_concurrency = 5 WHERE project = 'tap_lc'$$),
    ($$DELETE FROM sync_launch_plan WHERE project = 'tap_lc'$$),
    ($$TRUNCATE sync_launch_plan$$),
    ($$INSERT INTO sync_execution (execution_id, project, domain, name, version, phase) VALUES ('tap_lc-forged', 'tap_lc', 'd', 'shared', 'v1', 'RUNNING')$$),
    ($$UPDATE sync_execution SET phase = 'SUCCEEDED' WHERE project = 'tap_lc'$$),
    ($$DELETE FROM sync_execution WHERE project = 'tap_lc'$$),
    ($$TRUNCATE sync_execution$$),
    ($$INSERT INTO sync_launch_event (event, project, domain, name, version, execution_id) VALUES ('SKIPPED', 'tap_lc', 'd', 'shared', 'v1', 'tap_lc-forged')$$),
    ($$UPDATE sync_launch_event SET reason = 'forged'$$),
    ($$DELETE FROM sync_launch_event$$),
    ($$TRUNCATE sync_launch_event$$)
  ) AS x(q);
-- ... but it may create and update executions
SELECT results_eq(
    $$SELECT phase FROM sync_execution_create('tap_lc', 'd', 'shared', 'v1', 'tap_lc-u1')$$,
    $$VALUES ('QUEUED'::text)$$, 'ordinary role: sync_execution_create (QUEUED)');
SELECT results_eq(
    $$SELECT phase FROM sync_execution_create('tap_lc', 'd', 'shared', 'v1', 'tap_lc-u2')$$,
    $$VALUES ('PENDING'::text)$$, 'ordinary role: sync_execution_create (PENDING)');
SELECT is(sync_execution_update('tap_lc-u1', 'RUNNING'), 'RUNNING', 'ordinary role: sync_execution_update of its own execution');
SELECT results_eq(
    $$SELECT workflowkey, held, owner::text FROM sync_state WHERE name = 'sem/launchplan/tap_lc/d/shared' ORDER BY workflowkey$$,
    $$VALUES ('tap_lc-u1'::text, true, 'tap_lc_user'::text), ('tap_lc-u2', false, 'tap_lc_user')$$,
    'ordinary role: its executions'' slot and queue place are keyed holds owned by it');
SELECT is((SELECT count(*)::int FROM sync_launch_plan WHERE project = 'tap_lc' AND name = 'mine'), 0,
          'ordinary role: the denied statements registered nothing');
RESET ROLE;

-- Another ordinary role may not end it (that would release tap_lc_user's slot) ------------------------------
SET ROLE tap_lc_other;
SELECT is(current_user::text, 'tap_lc_other', 'now acting as another ordinary role');
SELECT throws_ok($$SELECT sync_execution_update('tap_lc-u1', 'SUCCEEDED')$$, '42501',
                 'permission denied for keyed hold "sem/launchplan/tap_lc/d/shared" of holder "tap_lc-u1"',
                 'another role: a terminal update of someone else''s running execution is denied (42501)');
SELECT throws_ok($$SELECT sync_execution_update('tap_lc-u1', 'ABORTED')$$, '42501', NULL,
                 'another role: aborting someone else''s running execution is denied (42501)');
SELECT throws_ok($$SELECT sync_execution_update('tap_lc-u2', 'ABORTED')$$, '42501', NULL,
                 'another role: ending someone else''s PENDING execution (its queue place) is denied (42501)');
SELECT results_eq(
    $$SELECT execution_id, phase FROM sync_execution WHERE execution_id IN ('tap_lc-u1', 'tap_lc-u2') ORDER BY 1$$,
    $$VALUES ('tap_lc-u1'::text, 'RUNNING'::text), ('tap_lc-u2', 'PENDING')$$,
    'another role: the denied updates changed no phase');
SELECT results_eq(
    $$SELECT holder FROM sync_holders WHERE lock_name = 'sem/launchplan/tap_lc/d/shared'$$,
    $$VALUES ('tap_lc-u1'::text)$$, 'another role: ... and released no slot');
SELECT results_eq(
    $$SELECT phase FROM sync_execution_create('tap_lc', 'd', 'shared', 'v1', 'tap_lc-o1')$$,
    $$VALUES ('PENDING'::text)$$, 'another role: creates its own execution (PENDING behind the others)');
SELECT is(sync_execution_update('tap_lc-o1', 'ABORTED'), 'ABORTED', 'another role: ends its own execution');
SELECT throws_ok($$SELECT sync_launch_plan_register('tap_lc', 'd', 'shared', 'v2')$$, '42501', NULL,
                 'another role: registering a version is denied (42501)');
RESET ROLE;

-- A member of syncwf_admin --------------------------------------------------------------------------------
SET ROLE tap_lc_admin;
SELECT is(current_user::text, 'tap_lc_admin', 'now acting as a member of syncwf_admin');
SELECT lives_ok($$SELECT sync_launch_plan_register('tap_lc', 'd', 'adm', 'v1', 2, 'SKIP')$$,
                'syncwf_admin member: sync_launch_plan_register of a new plan');
SELECT lives_ok($$SELECT sync_launch_plan_register('tap_lc', 'd', 'shared', 'v2', 3, 'WAIT')$$,
                'syncwf_admin member: registering a new version of an existing plan');
SELECT lives_ok($$UPDATE sync_launch_plan SET max_pending = '1 h' WHERE project = 'tap_lc' AND name = 'adm'$$,
                'syncwf_admin member: UPDATE sync_launch_plan');
SELECT lives_ok($$INSERT INTO sync_launch_plan (project, domain, name, version) VALUES ('tap_lc', 'd', 'adm', 'v2')$$,
                'syncwf_admin member: INSERT INTO sync_launch_plan');
SELECT lives_ok($$DELETE FROM sync_launch_plan WHERE project = 'tap_lc' AND name = 'adm' AND version = 'v2'$$,
                'syncwf_admin member: DELETE FROM sync_launch_plan');
SELECT results_eq(
    $$SELECT version, max_concurrency, behavior, max_pending FROM sync_launch_plan
       WHERE project = 'tap_lc' AND name IN ('adm', 'shared') ORDER BY name, version$$,
    $$VALUES ('v1'::text, 2, 'SKIP'::text, '1 h'::interval), ('v1', 1, 'WAIT', NULL), ('v2', 3, 'WAIT', NULL)$$,
    'syncwf_admin member: the plans it registered and edited');
SELECT throws_ok($$INSERT INTO sync_launch_event (event, project, domain, name, version, execution_id) VALUES ('SKIPPED', 'tap_lc', 'd', 'adm', 'v1', 'tap_lc-forged')$$,
                 '42501', NULL, 'syncwf_admin member: INSERT INTO sync_launch_event is denied (42501)');
SELECT is(sync_execution_update('tap_lc-u1', 'SUCCEEDED'), 'SUCCEEDED',
          'syncwf_admin member: may end another role''s execution');
RESET ROLE;

-- Everything above was in this transaction; the ROLLBACK below leaves no trace.
SELECT results_eq(
    $$SELECT count(*)::int FROM sync_locks WHERE lock_name LIKE 'sem/launchplan/tap_lc/%'$$,
    $$VALUES (6)$$,
    'the plans'' semaphores are live in shared memory until the ROLLBACK');

SELECT * FROM finish();
ROLLBACK;
