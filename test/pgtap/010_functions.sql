-- API contract of the syncwf functions: signatures (argument names, types,
-- defaults), return types, volatility, parallel safety, strictness, and the
-- exact set of functions the extension installs.
BEGIN;

-- One row per SQL-callable API function (every overload of the contract).
CREATE TEMP TABLE api (
    fname    name,
    args     name[],      -- argument types, as pgTAP spells them
    rettype  text,
    arglist  text         -- pg_get_function_arguments()
) ON COMMIT DROP;

INSERT INTO api VALUES
  ('sync_acquire', '{text,integer,interval,integer,text,text}', 'bigint',
   'lock_name text, priority integer DEFAULT 0, timeout interval DEFAULT NULL::interval, slots integer DEFAULT 1, mode text DEFAULT ''exclusive''::text, fair_key text DEFAULT NULL::text'),
  ('sync_acquire', '{text[],integer,interval,integer,text,text}', 'bigint[]',
   'lock_names text[], priority integer DEFAULT 0, timeout interval DEFAULT NULL::interval, slots integer DEFAULT 1, mode text DEFAULT ''exclusive''::text, fair_key text DEFAULT NULL::text'),
  ('sync_try_acquire', '{text,integer,integer,text}', 'bigint',
   'lock_name text, priority integer DEFAULT 0, slots integer DEFAULT 1, mode text DEFAULT ''exclusive''::text'),
  ('sync_try_acquire', '{text[],integer,integer,text}', 'bigint[]',
   'lock_names text[], priority integer DEFAULT 0, slots integer DEFAULT 1, mode text DEFAULT ''exclusive''::text'),
  ('sync_acquire_xact', '{text,integer,interval,integer,text,text}', 'bigint',
   'lock_name text, priority integer DEFAULT 0, timeout interval DEFAULT NULL::interval, slots integer DEFAULT 1, mode text DEFAULT ''exclusive''::text, fair_key text DEFAULT NULL::text'),
  ('sync_acquire_xact', '{text[],integer,interval,integer,text,text}', 'bigint[]',
   'lock_names text[], priority integer DEFAULT 0, timeout interval DEFAULT NULL::interval, slots integer DEFAULT 1, mode text DEFAULT ''exclusive''::text, fair_key text DEFAULT NULL::text'),
  ('sync_try_acquire_xact', '{text,integer,integer,text}', 'bigint',
   'lock_name text, priority integer DEFAULT 0, slots integer DEFAULT 1, mode text DEFAULT ''exclusive''::text'),
  ('sync_try_acquire_xact', '{text[],integer,integer,text}', 'bigint[]',
   'lock_names text[], priority integer DEFAULT 0, slots integer DEFAULT 1, mode text DEFAULT ''exclusive''::text'),
  ('sync_release',          '{text}',                    'boolean',
   'lock_name text'),
  ('sync_release_all',      '{}',                        'integer',
   ''),
  -- keyed holds
  ('sync_request',          '{text,text,integer,text,interval,"timestamp with time zone",integer,text,text,boolean}',
   'setof record',
   'lock_name text, holder text, priority integer DEFAULT 0, controller text DEFAULT NULL::text, lease interval DEFAULT NULL::interval, queued_at timestamp with time zone DEFAULT NULL::timestamp with time zone, slots integer DEFAULT 1, mode text DEFAULT ''exclusive''::text, fair_key text DEFAULT NULL::text, preemptible boolean DEFAULT false'),
  ('sync_request',          '{text[],text,integer,text,interval,"timestamp with time zone",integer,text,text,boolean}',
   'setof record',
   'lock_names text[], holder text, priority integer DEFAULT 0, controller text DEFAULT NULL::text, lease interval DEFAULT NULL::interval, queued_at timestamp with time zone DEFAULT NULL::timestamp with time zone, slots integer DEFAULT 1, mode text DEFAULT ''exclusive''::text, fair_key text DEFAULT NULL::text, preemptible boolean DEFAULT false'),
  ('sync_release',          '{text,text}',               'boolean',
   'lock_name text, holder text'),
  ('sync_release_holder',   '{text}',                    'integer',
   'holder text'),
  ('sync_heartbeat',        '{text}',                    'timestamp with time zone',
   'controller text'),
  ('sync_refresh',          '{text,text,interval}',      'timestamp with time zone',
   'lock_name text, holder text, lease interval DEFAULT NULL::interval'),
  ('sync_is_held',          '{text,text,bigint}',        'boolean',
   'lock_name text, holder text, token bigint DEFAULT NULL::bigint'),
  ('sync_wait',             '{text,text,interval}',      'bigint',
   'lock_name text, holder text, timeout interval DEFAULT NULL::interval'),
  ('sync_wait',             '{text[],text,interval}',    'bigint[]',
   'lock_names text[], holder text, timeout interval DEFAULT NULL::interval'),
  ('sync_force_release',    '{text,text}',               'boolean',
   'lock_name text, holder text'),
  ('sync_forget_controller', '{text,boolean}',           'integer',
   'controller text, release_holds boolean DEFAULT false'),
  ('sync_reconcile',        '{}',                        'integer',
   ''),
  -- launch plans
  ('sync_launch_plan_register', '{text,text,text,text,integer,text,text,interval}', 'void',
   'project text, domain text, name text, version text, max_concurrency integer DEFAULT NULL::integer, behavior text DEFAULT NULL::text, scheduling text DEFAULT ''FIFO''::text, max_pending interval DEFAULT NULL::interval'),
  ('sync_execution_create', '{text,text,text,text,text,integer,boolean}', 'setof record',
   'project text, domain text, name text, version text, execution_id text, priority integer DEFAULT 0, raise_on_limit boolean DEFAULT false'),
  ('sync_execution_update', '{text,text}',               'text',
   'execution_id text, phase text');

-- 25 functions x 7 assertions, 7 for sync_channel, 4 others
SELECT plan(190);

SELECT has_extension('syncwf', 'extension syncwf is installed');

SELECT has_function(fname, args, format('%s(%s) exists', fname, array_to_string(args, ', ')))
  FROM api ORDER BY fname, args;

SELECT function_returns(fname, args, rettype,
                        format('%s(%s) returns %s', fname, array_to_string(args, ', '), rettype))
  FROM api ORDER BY fname, args;

SELECT is(pg_catalog.pg_get_function_arguments(
              to_regprocedure(format('%I(%s)', fname, array_to_string(args, ',')))),
          arglist,
          format('%s(%s): argument names and defaults', fname, array_to_string(args, ', ')))
  FROM api ORDER BY fname, args;

SELECT volatility_is(fname, args, 'volatile',
                     format('%s(%s) is VOLATILE', fname, array_to_string(args, ', ')))
  FROM api ORDER BY fname, args;

SELECT is((SELECT proparallel::text FROM pg_catalog.pg_proc
            WHERE oid = to_regprocedure(format('%I(%s)', fname, array_to_string(args, ',')))),
          'u',
          format('%s(%s) is PARALLEL UNSAFE', fname, array_to_string(args, ', ')))
  FROM api ORDER BY fname, args;

-- Not STRICT: a NULL argument must raise an error (22004), not return NULL.
SELECT isnt_strict(fname, args,
                   format('%s(%s) is not STRICT', fname, array_to_string(args, ', ')))
  FROM api ORDER BY fname, args;

SELECT function_lang_is(fname, args, 'c',
                        format('%s(%s) is written in C', fname, array_to_string(args, ', ')))
  FROM api ORDER BY fname, args;

-- sync_channel: a function of its argument only, so IMMUTABLE and PARALLEL
-- SAFE (the one exception); not STRICT either.
SELECT has_function('sync_channel', ARRAY['text'], 'sync_channel(text) exists');
SELECT function_returns('sync_channel', ARRAY['text'], 'text', 'sync_channel(text) returns text');
SELECT is(pg_catalog.pg_get_function_arguments('sync_channel(text)'::regprocedure), 'controller text',
          'sync_channel(text): argument name');
SELECT volatility_is('sync_channel', ARRAY['text'], 'immutable', 'sync_channel(text) is IMMUTABLE');
SELECT is((SELECT proparallel::text FROM pg_catalog.pg_proc WHERE oid = 'sync_channel(text)'::regprocedure),
          's', 'sync_channel(text) is PARALLEL SAFE');
SELECT isnt_strict('sync_channel', ARRAY['text'], 'sync_channel(text) is not STRICT');
SELECT function_lang_is('sync_channel', ARRAY['text'], 'c', 'sync_channel(text) is written in C');

-- No extra overloads of the API names (e.g. a stray 1-argument version).
SELECT bag_eq(
    $$SELECT p.oid::regprocedure::text FROM pg_catalog.pg_proc p
       WHERE p.proname IN ('sync_acquire', 'sync_try_acquire', 'sync_acquire_xact',
                           'sync_try_acquire_xact', 'sync_release', 'sync_release_all',
                           'sync_request', 'sync_release_holder', 'sync_heartbeat',
                           'sync_refresh', 'sync_is_held', 'sync_wait', 'sync_channel',
                           'sync_force_release',
                           'sync_forget_controller', 'sync_reconcile',
                           'sync_launch_plan_register', 'sync_execution_create',
                           'sync_execution_update')$$,
    $$SELECT format('%I(%s)', fname, array_to_string(args, ',')) FROM api
      UNION ALL VALUES ('sync_channel(text)')$$,
    'the API function names have exactly the documented overloads');

-- Every function the extension owns: the API plus the monitoring SRFs and
-- the sync_limit trigger function.
SELECT bag_eq(
    $$SELECT d.objid::regprocedure::text
        FROM pg_catalog.pg_depend d
       WHERE d.classid = 'pg_catalog.pg_proc'::regclass
         AND d.refclassid = 'pg_catalog.pg_extension'::regclass
         AND d.refobjid = (SELECT oid FROM pg_catalog.pg_extension WHERE extname = 'syncwf')
         AND d.deptype = 'e'$$,
    $$SELECT format('%I(%s)', fname, array_to_string(args, ',')) FROM api
      UNION ALL VALUES ('sync_channel(text)'), ('sync_lock_status()'), ('sync_entry_status()'), ('sync_limit_changed()'),
                       ('sync_state_guard()'), ('sync_state_deleted()'), ('sync_state_claimed()'), ('sync_controller_changed()'),
                       ('sync_controller_stamp()'), ('sync_launch_plan_changed()'),
                       ('sync_execution_changed()'), ('sync_execution_finished()'),
                       ('sync_launch_plan_metrics(interval)'), ('sync_lock_stats_rows()'),
                       ('sync_stats_reset(text)'), ('sync_fair_weight_changed()'),
                       ('sync_memory_status()'), ('sync_limit_check_tree()'),
                       ('sync_limit_check_guarantees(text,integer)')$$,
    'extension syncwf owns exactly the API functions, the monitoring SRFs and the trigger functions');

-- The columns of the function behind sync_locks (the view's, 1.8 adding
-- the parent row's three and the guarantee's two at the end).
SELECT is(pg_get_function_arguments('sync_lock_status()'::regprocedure),
          'OUT lock_name text, OUT kind text, OUT sizelimit integer, OUT holders integer, '
          'OUT waiters integer, OUT limit_row text, OUT max_waiters integer, '
          'OUT slots_held integer, OUT rate_tokens integer, '
          'OUT rate_next_refill timestamp with time zone, OUT parent_row text, '
          'OUT parent_sizelimit integer, OUT parent_slots_held integer, '
          'OUT guarantee integer, OUT borrowed integer',
          'sync_lock_status() has the OUT columns of sync_locks, parent_row, parent_sizelimit, parent_slots_held, guarantee and borrowed last');

-- The columns of the function behind sync_holders and sync_waiters (1.8
-- adding why a waiter waits at the end).
SELECT is(pg_get_function_arguments('sync_entry_status()'::regprocedure),
          'OUT lock_name text, OUT state text, OUT pid integer, OUT scope text, '
          'OUT token bigint, OUT priority integer, OUT queue_position integer, '
          'OUT request_size integer, OUT since timestamp with time zone, '
          'OUT holder text, OUT controller text, '
          'OUT lease_expires timestamp with time zone, OUT active boolean, '
          'OUT slots integer, OUT mode text, OUT passes integer, OUT fair_key text, '
          'OUT fair_weight integer, OUT waiting_for text, OUT waiting_for_row text, '
          'OUT blocking_pids integer[], OUT blocking_holders text[], '
          'OUT estimated_wait interval, OUT effective_priority integer',
          'sync_entry_status() has waiting_for, waiting_for_row, blocking_pids, blocking_holders, estimated_wait and effective_priority last');

-- Named-argument calls work with the documented names.
SELECT lives_ok(
    $$SELECT sync_try_acquire(lock_name => 'mtx/tap_fn/named', priority => 3);
      SELECT sync_release(lock_name => 'mtx/tap_fn/named')$$,
    'named arguments lock_name, priority are accepted');
SELECT lives_ok(
    $$SELECT sync_try_acquire(lock_name => 'mtx/tap_fn/named', mode => 'shared', slots => 1);
      SELECT sync_release(lock_name => 'mtx/tap_fn/named')$$,
    'named arguments slots, mode are accepted, in any order');
SELECT lives_ok(
    $$SELECT sync_acquire(lock_name => 'mtx/tap_fn/named', fair_key => 'tenant', timeout => '0');
      SELECT sync_release(lock_name => 'mtx/tap_fn/named')$$,
    'named argument fair_key is accepted');

SELECT * FROM finish();
ROLLBACK;
