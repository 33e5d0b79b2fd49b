-- API contract of the syncwf relations and role: the sync_limit table
-- (columns, types, primary key, NOT NULL, CHECK constraints, and what the
-- checks accept and refuse; the parent column, its foreign key, index and
-- trigger; the aging columns), the monitoring views and their column types, and the
-- syncwf_admin role.
BEGIN;
SELECT plan(176);

-- sync_limit ---------------------------------------------------------------
SELECT has_table('sync_limit', 'table sync_limit exists');
SELECT columns_are('sync_limit', ARRAY['name', 'sizelimit', 'max_waiters', 'rate_limit', 'rate_period', 'queueing', 'parent', 'guarantee',
                                  'aging_interval', 'aging_max_priority', 'preempt_grace'],
                   'sync_limit has exactly the columns name, sizelimit, max_waiters, rate_limit, rate_period, queueing, parent, guarantee, aging_interval, aging_max_priority, preempt_grace');
SELECT is(
    (SELECT array_agg(attname::text ORDER BY attnum) FROM pg_catalog.pg_attribute
      WHERE attrelid = 'sync_limit'::regclass AND attnum > 0 AND NOT attisdropped),
    ARRAY['name', 'sizelimit', 'max_waiters', 'rate_limit', 'rate_period', 'queueing', 'parent', 'guarantee',
                                  'aging_interval', 'aging_max_priority', 'preempt_grace'],
    'sync_limit columns are in the order name, sizelimit, max_waiters, rate_limit, rate_period, queueing, parent, guarantee, aging_interval, aging_max_priority, preempt_grace (Argo''s two first)');
SELECT col_type_is('sync_limit', 'guarantee', 'integer', 'sync_limit.guarantee is integer');
SELECT col_is_null('sync_limit', 'guarantee', 'sync_limit.guarantee is nullable');
SELECT col_hasnt_default('sync_limit', 'guarantee', 'sync_limit.guarantee has no default');
SELECT col_has_check('sync_limit', 'guarantee', 'sync_limit.guarantee has a CHECK constraint (>= 0)');
SELECT col_type_is('sync_limit', 'aging_interval', 'interval', 'sync_limit.aging_interval is interval');
SELECT col_type_is('sync_limit', 'aging_max_priority', 'integer', 'sync_limit.aging_max_priority is integer');
SELECT col_is_null('sync_limit', 'aging_interval', 'sync_limit.aging_interval is nullable');
SELECT col_is_null('sync_limit', 'aging_max_priority', 'sync_limit.aging_max_priority is nullable');
SELECT col_has_check('sync_limit', 'aging_interval', 'sync_limit.aging_interval has a CHECK constraint (>= 1 second)');
SELECT col_has_check('sync_limit', ARRAY['aging_interval', 'aging_max_priority'],
                     'sync_limit has a CHECK that aging_interval and aging_max_priority are set together');
-- preemption (1.8)
SELECT col_type_is('sync_limit', 'preempt_grace', 'interval', 'sync_limit.preempt_grace is interval');
SELECT col_is_null('sync_limit', 'preempt_grace', 'sync_limit.preempt_grace is nullable (NULL: no preemption)');
SELECT col_has_check('sync_limit', 'preempt_grace', 'sync_limit.preempt_grace has a CHECK constraint (>= 0)');
SELECT throws_ok($$INSERT INTO sync_limit (name, sizelimit, preempt_grace) VALUES ('tap_obj/pg', 1, '-1 s')$$,
                 '23514', NULL, 'a negative preempt_grace is refused with 23514');
SELECT col_type_is('sync_state', 'preemptible', 'boolean', 'sync_state.preemptible is boolean');
SELECT col_not_null('sync_state', 'preemptible', 'sync_state.preemptible is NOT NULL');
SELECT col_default_is('sync_state', 'preemptible', 'false', 'sync_state.preemptible defaults to false');
SELECT col_type_is('sync_state', 'preempt_deadline', 'timestamp with time zone',
                   'sync_state.preempt_deadline is timestamptz');
SELECT col_is_null('sync_state', 'preempt_deadline', 'sync_state.preempt_deadline is nullable (NULL: not preempted)');
SELECT col_type_is('sync_limit', 'name', 'text', 'sync_limit.name is text');
SELECT col_type_is('sync_limit', 'sizelimit', 'integer', 'sync_limit.sizelimit is integer');
SELECT col_type_is('sync_limit', 'max_waiters', 'integer', 'sync_limit.max_waiters is integer');
SELECT col_is_null('sync_limit', 'max_waiters', 'sync_limit.max_waiters is nullable');
SELECT col_hasnt_default('sync_limit', 'max_waiters', 'sync_limit.max_waiters has no default');
SELECT col_has_check('sync_limit', 'max_waiters', 'sync_limit.max_waiters has a CHECK constraint');
SELECT col_type_is('sync_limit', 'rate_limit', 'integer', 'sync_limit.rate_limit is integer');
SELECT col_type_is('sync_limit', 'rate_period', 'interval', 'sync_limit.rate_period is interval');
SELECT col_is_null('sync_limit', 'rate_limit', 'sync_limit.rate_limit is nullable');
SELECT col_is_null('sync_limit', 'rate_period', 'sync_limit.rate_period is nullable');
SELECT col_has_check('sync_limit', 'rate_limit', 'sync_limit.rate_limit has a CHECK constraint');
SELECT col_has_check('sync_limit', 'rate_period', 'sync_limit.rate_period has a CHECK constraint');
SELECT col_has_check('sync_limit', ARRAY['rate_limit', 'rate_period'],
                     'sync_limit has a CHECK that rate_limit and rate_period are set together');
SELECT col_type_is('sync_limit', 'queueing', 'text', 'sync_limit.queueing is text');
SELECT col_is_null('sync_limit', 'queueing', 'sync_limit.queueing is nullable');
SELECT col_hasnt_default('sync_limit', 'queueing', 'sync_limit.queueing has no default (NULL: strict)');
SELECT col_has_check('sync_limit', 'queueing', 'sync_limit.queueing has a CHECK constraint');
-- nested limits (1.8): parent, a deferred foreign key to the same table,
-- its index, and the deferred trigger that checks the rules
SELECT col_type_is('sync_limit', 'parent', 'text', 'sync_limit.parent is text');
SELECT col_is_null('sync_limit', 'parent', 'sync_limit.parent is nullable');
SELECT col_hasnt_default('sync_limit', 'parent', 'sync_limit.parent has no default (NULL: no parent)');
SELECT col_is_fk('sync_limit', 'parent', 'sync_limit.parent is a foreign key');
SELECT fk_ok('sync_limit', 'parent', 'sync_limit', 'name',
             'sync_limit.parent references sync_limit.name');
SELECT is((SELECT format('%s %s %s %s', conname, confupdtype, confdeltype,
                         CASE WHEN condeferrable AND condeferred THEN 'deferred' ELSE 'immediate' END)
             FROM pg_catalog.pg_constraint
            WHERE conrelid = 'sync_limit'::regclass AND contype = 'f'),
          'sync_limit_parent_fkey c a deferred',
          'sync_limit_parent_fkey: ON UPDATE CASCADE, ON DELETE NO ACTION, DEFERRABLE INITIALLY DEFERRED');
SELECT has_index('sync_limit', 'sync_limit_parent_idx', 'parent', 'sync_limit has index sync_limit_parent_idx on (parent)');
SELECT has_trigger('sync_limit', 'sync_limit_tree', 'sync_limit has its trigger sync_limit_tree');
SELECT trigger_is('sync_limit', 'sync_limit_tree', 'sync_limit_check_tree',
                  'sync_limit_tree runs sync_limit_check_tree()');
SELECT is((SELECT format('%s %s', condeferrable, condeferred) FROM pg_catalog.pg_constraint
            WHERE conrelid = 'sync_limit'::regclass AND contype = 't' AND conname = 'sync_limit_tree'),
          't t', 'sync_limit_tree is a constraint trigger, DEFERRABLE INITIALLY DEFERRED');
SELECT function_lang_is('sync_limit_check_tree', ARRAY[]::name[], 'plpgsql',
                        'sync_limit_check_tree() is written in PL/pgSQL');
SELECT is((SELECT proconfig FROM pg_catalog.pg_proc WHERE oid = 'sync_limit_check_tree()'::regprocedure),
          ARRAY['search_path=pg_catalog, pg_temp'],
          'sync_limit_check_tree() runs with search_path pg_catalog, pg_temp');
SELECT col_type_is('sync_locks', 'parent_row', 'text', 'sync_locks.parent_row is text');
SELECT col_type_is('sync_locks', 'parent_sizelimit', 'integer', 'sync_locks.parent_sizelimit is integer');
SELECT col_type_is('sync_locks', 'parent_slots_held', 'integer', 'sync_locks.parent_slots_held is integer');
SELECT col_type_is('sync_locks', 'rate_tokens', 'integer', 'sync_locks.rate_tokens is integer');
SELECT col_type_is('sync_locks', 'rate_next_refill', 'timestamp with time zone',
                   'sync_locks.rate_next_refill is timestamptz');
SELECT has_pk('sync_limit', 'sync_limit has a primary key');
SELECT col_is_pk('sync_limit', 'name', 'sync_limit primary key is (name)');
SELECT col_not_null('sync_limit', 'name', 'sync_limit.name is NOT NULL');
SELECT col_not_null('sync_limit', 'sizelimit', 'sync_limit.sizelimit is NOT NULL');
SELECT col_hasnt_default('sync_limit', 'sizelimit', 'sync_limit.sizelimit has no default');
SELECT col_has_check('sync_limit', 'name', 'sync_limit.name has a CHECK constraint');
SELECT col_has_check('sync_limit', 'sizelimit', 'sync_limit.sizelimit has a CHECK constraint');
SELECT is((SELECT count(*)::int FROM pg_catalog.pg_constraint
            WHERE conrelid = 'sync_limit'::regclass AND contype = 'c'),
          11, 'sync_limit has eleven CHECK constraints');

-- What the constraints mean.  The triggers only record the change; the
-- final ROLLBACK discards it.
SELECT lives_ok($$INSERT INTO sync_limit VALUES ('tap_obj/k', 0)$$,
                'a limit of 0 is accepted');
SELECT lives_ok($$INSERT INTO sync_limit VALUES ('tap_obj/key/with/slashes', 5)$$,
                'a key may contain "/"');
SELECT lives_ok($$INSERT INTO sync_limit VALUES ('n/' || repeat('k', 254), 1)$$,
                'a 256-byte name is accepted');
SELECT throws_ok($$INSERT INTO sync_limit VALUES ('n/' || repeat('k', 255), 1)$$,
                 '23514', NULL, 'a 257-byte name violates the CHECK (23514)');
SELECT throws_ok($$INSERT INTO sync_limit VALUES ('tap_obj/neg', -1)$$,
                 '23514', NULL, 'a negative sizelimit violates the CHECK (23514)');
SELECT throws_ok($$INSERT INTO sync_limit VALUES ('noslash', 1)$$,
                 '23514', NULL, 'a name without "/" violates the CHECK (23514)');
SELECT throws_ok($$INSERT INTO sync_limit VALUES ('/key', 1)$$,
                 '23514', NULL, 'an empty namespace violates the CHECK (23514)');
SELECT throws_ok($$INSERT INTO sync_limit VALUES ('ns/', 1)$$,
                 '23514', NULL, 'an empty key violates the CHECK (23514)');
SELECT throws_ok($$INSERT INTO sync_limit VALUES (E'ns/a\nb', 1)$$,
                 '23514', NULL, 'a control character violates the CHECK (23514)');
SELECT throws_ok($$INSERT INTO sync_limit (name) VALUES ('tap_obj/nolimit')$$,
                 '23502', NULL, 'a NULL sizelimit violates NOT NULL (23502)');
SELECT throws_ok($$INSERT INTO sync_limit VALUES (NULL, 1)$$,
                 '23502', NULL, 'a NULL name violates NOT NULL (23502)');
SELECT throws_ok($$INSERT INTO sync_limit VALUES ('tap_obj/k', 3)$$,
                 '23505', NULL, 'a duplicate name violates the primary key (23505)');
SELECT lives_ok($$INSERT INTO sync_limit VALUES ('tap_obj/*', 2, 0)$$,
                'a pattern row with a cap of 0 is accepted');
SELECT throws_ok($$INSERT INTO sync_limit VALUES ('tap_obj/negcap', 1, -1)$$,
                 '23514', NULL, 'a negative max_waiters violates the CHECK (23514)');
SELECT lives_ok($$INSERT INTO sync_limit (name, sizelimit, queueing) VALUES ('tap_obj/s', 1, 'strict'), ('tap_obj/b', 1, 'best_effort')$$,
                'queueing accepts strict and best_effort');
SELECT throws_ok($$INSERT INTO sync_limit (name, sizelimit, queueing) VALUES ('tap_obj/q', 1, 'fair')$$,
                 '23514', NULL, 'another queueing violates the CHECK (23514)');
SELECT throws_ok($$INSERT INTO sync_limit (name, sizelimit, queueing) VALUES ('tap_obj/q', 1, 'Strict')$$,
                 '23514', NULL, 'queueing is case-sensitive (23514)');
SELECT lives_ok($$INSERT INTO sync_limit (name, sizelimit, aging_interval, aging_max_priority) VALUES ('tap_obj/age', 1, '1 s', 3)$$,
                'aging: an interval of 1 second and a ceiling are accepted');
SELECT throws_ok($$INSERT INTO sync_limit (name, sizelimit, aging_interval, aging_max_priority) VALUES ('tap_obj/age2', 1, '999 ms', 3)$$,
                 '23514', NULL, 'aging: an interval below 1 second is refused (23514)');
SELECT throws_ok($$INSERT INTO sync_limit (name, sizelimit, aging_interval) VALUES ('tap_obj/age2', 1, '1 min')$$,
                 '23514', NULL, 'aging: an interval without a ceiling is refused (23514)');
SELECT throws_ok($$INSERT INTO sync_limit (name, sizelimit, aging_max_priority) VALUES ('tap_obj/age2', 1, 4)$$,
                 '23514', NULL, 'aging: a ceiling without an interval is refused (23514)');
SELECT throws_ok($$INSERT INTO sync_limit VALUES ('/*', 1)$$,
                 '23514', NULL, 'a pattern with an empty prefix violates the CHECK (23514)');
SELECT throws_ok($$INSERT INTO sync_limit VALUES ('*', 1)$$,
                 '23514', NULL, 'a pattern without a namespace violates the CHECK (23514)');
-- The parent rules, checked at the end of each statement here (they are
-- checked at commit otherwise, and this file rolls back).
SET CONSTRAINTS sync_limit_tree, sync_limit_parent_fkey IMMEDIATE;
SELECT lives_ok($$INSERT INTO sync_limit (name, sizelimit) VALUES ('tap_obj/all', 4);
                  INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('tap_obj/p/*', 4, 'tap_obj/all')$$,
                'a pattern row with a parent as high as the parent is accepted');
SELECT throws_ok($$INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('tap_obj/p1', 5, 'tap_obj/all')$$,
                 '23514', NULL, 'a child above its parent is refused (23514)');
SELECT throws_ok($$INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('tap_obj/p1', 1, 'tap_obj/p/*')$$,
                 '23514', NULL, 'a pattern row as the parent is refused (23514)');
SELECT throws_ok($$INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('tap_obj/p1', 1, 'tap_obj/none')$$,
                 '23503', NULL, 'a parent that does not exist violates the foreign key (23503)');
SELECT throws_ok($$DELETE FROM sync_limit WHERE name = 'tap_obj/all'$$,
                 '23503', NULL, 'deleting a parent with children violates the foreign key (23503)');
SET CONSTRAINTS sync_limit_tree, sync_limit_parent_fkey DEFERRED;

-- Views --------------------------------------------------------------------
SELECT has_view('sync_locks', 'view sync_locks exists');
SELECT has_view('sync_holders', 'view sync_holders exists');
SELECT has_view('sync_waiters', 'view sync_waiters exists');
SELECT has_view('sync_lock_stats', 'view sync_lock_stats exists');
SELECT has_view('sync_memory', 'view sync_memory exists');
SELECT is(
    (SELECT array_agg(attname::text ORDER BY attnum) FROM pg_catalog.pg_attribute
      WHERE attrelid = 'sync_memory'::regclass AND attnum > 0 AND NOT attisdropped),
    ARRAY['allocated_bytes', 'used_bytes', 'max_bytes', 'pct_of_max', 'locks', 'cached_locks',
          'entries', 'holders', 'lock_slots', 'entry_slots', 'holder_slots', 'grows_refused'],
    'sync_memory columns are (allocated_bytes, used_bytes, max_bytes, pct_of_max, locks, cached_locks, entries, holders, lock_slots, entry_slots, holder_slots, grows_refused)');
SELECT is((SELECT count(*) FROM sync_memory), 1::bigint, 'sync_memory has one row');
SELECT ok((SELECT used_bytes <= allocated_bytes AND allocated_bytes <= max_bytes
                  AND max_bytes = pg_size_bytes(current_setting('syncwf.max_memory'))
                  AND locks <= lock_slots AND entries <= entry_slots AND holders <= holder_slots
             FROM sync_memory),
          'sync_memory: in use <= allocated <= syncwf.max_memory, counts within the slots made');
SELECT function_returns('sync_stats_reset', ARRAY['text'], 'timestamp with time zone',
                        'sync_stats_reset(text) returns timestamptz');

SELECT is(
    (SELECT array_agg(attname::text ORDER BY attnum) FROM pg_catalog.pg_attribute
      WHERE attrelid = 'sync_locks'::regclass AND attnum > 0 AND NOT attisdropped),
    ARRAY['lock_name', 'kind', 'sizelimit', 'holders', 'waiters', 'limit_row', 'max_waiters',
          'slots_held', 'rate_tokens', 'rate_next_refill',
          'parent_row', 'parent_sizelimit', 'parent_slots_held', 'guarantee', 'borrowed'],
    'sync_locks columns are (lock_name, kind, sizelimit, holders, waiters, limit_row, max_waiters, slots_held, rate_tokens, rate_next_refill, parent_row, parent_sizelimit, parent_slots_held, guarantee, borrowed)');
SELECT col_type_is('sync_locks', 'guarantee', 'integer', 'sync_locks.guarantee is integer');
SELECT col_type_is('sync_locks', 'borrowed', 'integer', 'sync_locks.borrowed is integer');
SELECT col_type_is('sync_locks', 'limit_row', 'text', 'sync_locks.limit_row is text');
SELECT col_type_is('sync_locks', 'max_waiters', 'integer', 'sync_locks.max_waiters is integer');
SELECT is(
    (SELECT array_agg(attname::text ORDER BY attnum) FROM pg_catalog.pg_attribute
      WHERE attrelid = 'sync_holders'::regclass AND attnum > 0 AND NOT attisdropped),
    ARRAY['lock_name', 'pid', 'scope', 'token', 'priority', 'since',
          'holder', 'controller', 'lease_expires', 'slots', 'mode', 'fair_key'],
    'sync_holders columns are (lock_name, pid, scope, token, priority, since, holder, controller, lease_expires, slots, mode, fair_key)');
SELECT is(
    (SELECT array_agg(attname::text ORDER BY attnum) FROM pg_catalog.pg_attribute
      WHERE attrelid = 'sync_waiters'::regclass AND attnum > 0 AND NOT attisdropped),
    ARRAY['lock_name', 'pid', 'scope', 'priority', 'effective_priority', 'position', 'request_size', 'waiting_since',
          'holder', 'controller', 'active', 'slots', 'mode', 'passes', 'fair_key', 'fair_weight',
          'waiting_for', 'waiting_for_row', 'blocking_pids', 'blocking_holders', 'estimated_wait'],
    'sync_waiters columns are (lock_name, pid, scope, priority, effective_priority, position, request_size, waiting_since, holder, controller, active, slots, mode, passes, fair_key, fair_weight, waiting_for, waiting_for_row, blocking_pids, blocking_holders, estimated_wait)');
SELECT is(
    (SELECT array_agg(attname::text ORDER BY attnum) FROM pg_catalog.pg_attribute
      WHERE attrelid = 'sync_lock_stats'::regclass AND attnum > 0 AND NOT attisdropped),
    ARRAY['lock_name', 'grants_immediate', 'grants_waited', 'timeouts', 'cancels',
          'deadlocks', 'preemptions', 'wait_count', 'wait_total', 'wait_p50', 'wait_p99', 'wait_max',
          'hold_count', 'hold_total', 'max_queue', 'stats_reset'],
    'sync_lock_stats columns are (lock_name, grants_immediate, grants_waited, timeouts, cancels, deadlocks, preemptions, wait_count, wait_total, wait_p50, wait_p99, wait_max, hold_count, hold_total, max_queue, stats_reset)');

SELECT col_type_is(v, c, t, format('%s.%s is %s', v, c, t))
  FROM (VALUES
    ('sync_locks',   'lock_name',     'text'),
    ('sync_locks',   'kind',          'text'),
    ('sync_locks',   'sizelimit',     'integer'),
    ('sync_locks',   'holders',       'integer'),
    ('sync_locks',   'waiters',       'integer'),
    ('sync_holders', 'lock_name',     'text'),
    ('sync_holders', 'pid',           'integer'),
    ('sync_holders', 'scope',         'text'),
    ('sync_holders', 'token',         'bigint'),
    ('sync_holders', 'priority',      'integer'),
    ('sync_holders', 'since',         'timestamp with time zone'),
    ('sync_waiters', 'lock_name',     'text'),
    ('sync_waiters', 'pid',           'integer'),
    ('sync_waiters', 'scope',         'text'),
    ('sync_waiters', 'priority',      'integer'),
    ('sync_waiters', 'position',      'integer'),
    ('sync_waiters', 'request_size',  'integer'),
    ('sync_waiters', 'waiting_since', 'timestamp with time zone'),
    ('sync_waiters', 'passes',        'integer'),
    ('sync_waiters', 'fair_key',      'text'),
    ('sync_waiters', 'fair_weight',   'integer'),
    ('sync_waiters', 'waiting_for',   'text'),
    ('sync_waiters', 'waiting_for_row', 'text'),
    ('sync_waiters', 'blocking_pids', 'integer[]'),
    ('sync_waiters', 'blocking_holders', 'text[]'),
    ('sync_waiters', 'estimated_wait', 'interval'),
    ('sync_waiters', 'effective_priority', 'integer'),
    ('sync_holders', 'fair_key',      'text'),
    ('sync_lock_stats', 'lock_name',        'text'),
    ('sync_lock_stats', 'grants_immediate', 'bigint'),
    ('sync_lock_stats', 'grants_waited',    'bigint'),
    ('sync_lock_stats', 'timeouts',         'bigint'),
    ('sync_lock_stats', 'cancels',          'bigint'),
    ('sync_lock_stats', 'deadlocks',        'bigint'),
    ('sync_lock_stats', 'preemptions',      'bigint'),
    ('sync_lock_stats', 'wait_count',       'bigint'),
    ('sync_lock_stats', 'wait_total',       'interval'),
    ('sync_lock_stats', 'wait_p50',         'interval'),
    ('sync_lock_stats', 'wait_p99',         'interval'),
    ('sync_lock_stats', 'wait_max',         'interval'),
    ('sync_lock_stats', 'hold_count',       'bigint'),
    ('sync_lock_stats', 'hold_total',       'interval'),
    ('sync_lock_stats', 'max_queue',        'integer'),
    ('sync_lock_stats', 'stats_reset',      'timestamp with time zone')
  ) AS x(v, c, t);

-- Role -----------------------------------------------------------------------
SELECT has_role('syncwf_admin', 'role syncwf_admin exists');
SELECT isnt_superuser('syncwf_admin', 'syncwf_admin is not a superuser');
SELECT is((SELECT rolcanlogin FROM pg_catalog.pg_roles WHERE rolname = 'syncwf_admin'),
          false, 'syncwf_admin is NOLOGIN');

-- Extension membership and dump behaviour.
SELECT is((SELECT count(*)::int FROM pg_catalog.pg_depend d
            WHERE d.classid = 'pg_catalog.pg_class'::regclass
              AND d.refclassid = 'pg_catalog.pg_extension'::regclass
              AND d.refobjid = (SELECT oid FROM pg_catalog.pg_extension WHERE extname = 'syncwf')
              AND d.objid IN ('sync_limit'::regclass, 'sync_locks'::regclass,
                              'sync_holders'::regclass, 'sync_waiters'::regclass)
              AND d.deptype = 'e'),
          4, 'sync_limit and the three views belong to extension syncwf');
SELECT is((SELECT extconfig FROM pg_catalog.pg_extension WHERE extname = 'syncwf'),
          ARRAY['sync_limit'::regclass::oid, 'sync_fair_weight'::regclass::oid,
                'sync_launch_plan'::regclass::oid,
                'sync_execution'::regclass::oid, 'sync_launch_event'::regclass::oid,
                'sync_launch_event_event_id_seq'::regclass::oid],
          'sync_limit, sync_fair_weight and the launch plan tables are extension configuration tables (their rows are dumped)');

-- sync_fair_weight: weights of fair keys
SELECT has_table('sync_fair_weight', 'table sync_fair_weight exists');
SELECT columns_are('sync_fair_weight', ARRAY['pattern', 'fair_key', 'weight'],
                   'sync_fair_weight columns are (pattern, fair_key, weight)');
SELECT col_is_pk('sync_fair_weight', ARRAY['pattern', 'fair_key'],
                 'sync_fair_weight primary key is (pattern, fair_key)');
SELECT col_type_is('sync_fair_weight', 'weight', 'integer', 'sync_fair_weight.weight is integer');
SELECT col_default_is('sync_fair_weight', 'weight', 1, 'sync_fair_weight.weight defaults to 1');
SELECT col_has_check('sync_fair_weight', 'weight', 'sync_fair_weight.weight has a CHECK constraint');
SELECT col_has_check('sync_fair_weight', 'pattern', 'sync_fair_weight.pattern has a CHECK constraint');
SELECT col_has_check('sync_fair_weight', 'fair_key', 'sync_fair_weight.fair_key has a CHECK constraint');
SELECT has_trigger('sync_fair_weight', 'sync_fair_weight_changed',
                   'sync_fair_weight has its change trigger');
SELECT col_type_is('sync_state', 'fair_key', 'text', 'sync_state.fair_key is text');
SELECT col_is_null('sync_state', 'fair_key', 'sync_state.fair_key is nullable');
SELECT col_hasnt_default('sync_state', 'fair_key', 'sync_state.fair_key has no default');
SELECT is((SELECT extrelocatable FROM pg_catalog.pg_extension WHERE extname = 'syncwf'),
          false, 'syncwf is not relocatable');

-- Views are empty when nothing is held, and report what is.
SELECT is_empty($$SELECT * FROM sync_locks WHERE lock_name LIKE '%/tap_obj/%'$$,
                'sync_locks shows no lock of this file before any acquire');
SELECT isnt(sync_acquire('mtx/tap_obj/m'), NULL, 'acquired mtx/tap_obj/m');
SELECT results_eq(
    $$SELECT lock_name, kind, sizelimit, holders, waiters FROM sync_locks
       WHERE lock_name = 'mtx/tap_obj/m'$$,
    $$VALUES ('mtx/tap_obj/m'::text, 'mutex'::text, 1, 1, 0)$$,
    'sync_locks: a held mutex has kind mutex, sizelimit 1, 1 holder, 0 waiters');
SELECT results_eq(
    $$SELECT lock_name, pid, scope, priority FROM sync_holders
       WHERE lock_name = 'mtx/tap_obj/m'$$,
    $$VALUES ('mtx/tap_obj/m'::text, pg_backend_pid(), 'session'::text, 0)$$,
    'sync_holders: the hold shows our pid, session scope and priority 0');
SELECT is(sync_release('mtx/tap_obj/m'), true, 'released mtx/tap_obj/m');

SELECT * FROM finish();
ROLLBACK;
