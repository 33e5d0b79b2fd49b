-- API contract of keyed holds: what sync_request, sync_release,
-- sync_release_holder, sync_is_held, sync_wait, sync_refresh and
-- sync_heartbeat return, their errors and SQLSTATEs, the tables sync_state
-- and sync_controller (columns, types, keys, constraints, triggers) and what
-- the triggers do.
--
-- Keyed requests and releases are transactional: this file is one
-- transaction that rolls back, so nothing it requests or releases inside it
-- survives -- in the tables or in shared memory -- which is itself part of
-- the contract (checked with savepoints below).  A release takes effect at
-- commit, so inside the transaction a released hold still occupies its lock.
--
-- Two things need committed state, made before BEGIN and removed after
-- ROLLBACK: the semaphore tap_kc/two needs a committed sync_limit row, and
-- a pending entry of an inactive controller (queue_position NULL) needs a
-- committed request and a committed DELETE of its controller's row.
DO $$
BEGIN
    -- leftovers of an interrupted earlier run (only when run by hand)
    PERFORM sync_release_holder('tap_kc/sleeper');
    PERFORM sync_release_holder('tap_kc/blocker');
    DELETE FROM sync_controller WHERE controller = 'tap_kc/ctl';
    DELETE FROM sync_limit WHERE name LIKE 'tap_kc/%';
END
$$;
INSERT INTO sync_limit VALUES ('tap_kc/two', 2);
DO $$
BEGIN
    PERFORM sync_heartbeat('tap_kc/ctl');      -- so that the DELETE below finds its row
    PERFORM sync_request('mtx/tap_kc/dormant', 'tap_kc/blocker');
    PERFORM sync_request('mtx/tap_kc/dormant', 'tap_kc/sleeper', 0, 'tap_kc/ctl');
END
$$;
DELETE FROM sync_controller WHERE controller = 'tap_kc/ctl';   -- inactive at commit

BEGIN;
SELECT plan(236);

-- What sync_request returned, by tag.
CREATE TEMP TABLE tap_kc_r (tag text PRIMARY KEY, status text, token bigint, queue_position integer);
CREATE TEMP TABLE tap_kc_arr (tag text, ord serial, lock_name text, status text, token bigint,
                              queue_position integer);

-- Tables: sync_state ------------------------------------------------------------
SELECT has_table('sync_state', 'table sync_state exists');
SELECT is(
    (SELECT array_agg(attname::text ORDER BY attnum) FROM pg_catalog.pg_attribute
      WHERE attrelid = 'sync_state'::regclass AND attnum > 0 AND NOT attisdropped),
    ARRAY['name', 'workflowkey', 'controller', 'held', 'priority', 'time', 'token',
          'granted_at', 'lease', 'lease_expires', 'owner', 'request_id', 'seq', 'admit_limit', 'claim',
          'slots', 'mode', 'fair_key', 'preemptible', 'preempt_deadline'],
    'sync_state columns are (name, workflowkey, controller, held, priority, time, token, granted_at, lease, lease_expires, owner, request_id, seq, admit_limit, claim, slots, mode, fair_key, preemptible, preempt_deadline)');
SELECT col_type_is('sync_state', c, t, format('sync_state.%s is %s', c, t))
  FROM (VALUES
    ('name',          'text'),
    ('workflowkey',   'text'),
    ('controller',    'text'),
    ('held',          'boolean'),
    ('priority',      'integer'),
    ('time',          'timestamp with time zone'),
    ('token',         'bigint'),
    ('granted_at',    'timestamp with time zone'),
    ('lease',         'interval'),
    ('lease_expires', 'timestamp with time zone'),
    ('owner',         'regrole'),
    ('request_id',    'bigint'),
    ('seq',           'bigint'),
    ('admit_limit',   'integer'),
    ('slots',         'integer'),
    ('mode',          'text')
  ) AS x(c, t);
SELECT col_not_null('sync_state', c, format('sync_state.%s is NOT NULL', c))
  FROM unnest(ARRAY['name', 'workflowkey', 'held', 'priority', 'time', 'owner', 'request_id', 'seq',
                    'slots']) AS c;
SELECT col_is_null('sync_state', c, format('sync_state.%s may be NULL', c))
  FROM unnest(ARRAY['controller', 'token', 'granted_at', 'lease', 'lease_expires', 'admit_limit',
                    'mode']) AS c;
SELECT col_default_is('sync_state', 'slots', '1', 'sync_state.slots defaults to 1');
SELECT throws_ok(
    $$INSERT INTO sync_state (name, workflowkey, held, priority, time, owner, request_id, seq, slots)
      VALUES ('sem/tap_kc/check', 'tap_kc/check', false, 0, now(), current_user::regrole, 0, 0, 0)$$,
    '22023', 'slots must be at least 1, not 0', 'a row inserted by hand with slots below 1 is refused (22023)');
SELECT throws_ok(
    $$INSERT INTO sync_state (name, workflowkey, held, priority, time, owner, request_id, seq, mode)
      VALUES ('mtx/tap_kc/check', 'tap_kc/check', false, 0, now(), current_user::regrole, 0, 0, 'read')$$,
    '22023', 'unknown lock mode "read" in a sync_state row', 'a row inserted by hand with an unknown mode is refused (22023)');
SELECT has_pk('sync_state', 'sync_state has a primary key');
SELECT col_is_pk('sync_state', ARRAY['name', 'workflowkey'],
                 'sync_state primary key is (name, workflowkey)');

-- Tables: sync_controller ---------------------------------------------------------
SELECT has_table('sync_controller', 'table sync_controller exists');
SELECT is(
    (SELECT array_agg(attname::text ORDER BY attnum) FROM pg_catalog.pg_attribute
      WHERE attrelid = 'sync_controller'::regclass AND attnum > 0 AND NOT attisdropped),
    ARRAY['controller', 'time'],
    'sync_controller columns are (controller, time)');
SELECT col_type_is('sync_controller', 'controller', 'text', 'sync_controller.controller is text');
SELECT col_type_is('sync_controller', 'time', 'timestamp with time zone',
                   'sync_controller.time is timestamp with time zone');
SELECT col_not_null('sync_controller', 'time', 'sync_controller.time is NOT NULL');
SELECT has_pk('sync_controller', 'sync_controller has a primary key');
SELECT col_is_pk('sync_controller', 'controller', 'sync_controller primary key is (controller)');
SELECT col_has_check('sync_controller', 'controller', 'sync_controller.controller has a CHECK constraint');
SELECT throws_ok($$INSERT INTO sync_controller VALUES ('', now())$$, '23514', NULL,
                 'an empty controller name violates the CHECK (23514)');
SELECT throws_ok($$INSERT INTO sync_controller VALUES (repeat('c', 257), now())$$, '23514', NULL,
                 'a 257-byte controller name violates the CHECK (23514)');

SELECT is((SELECT count(*)::int FROM pg_catalog.pg_depend d
            WHERE d.classid = 'pg_catalog.pg_class'::regclass
              AND d.refclassid = 'pg_catalog.pg_extension'::regclass
              AND d.refobjid = (SELECT oid FROM pg_catalog.pg_extension WHERE extname = 'syncwf')
              AND d.objid IN ('sync_state'::regclass, 'sync_controller'::regclass)
              AND d.deptype = 'e'),
          2, 'sync_state and sync_controller belong to extension syncwf');

-- Triggers ---------------------------------------------------------------------------
SELECT triggers_are('sync_state', ARRAY['sync_state_guard', 'sync_state_deleted', 'sync_state_truncated', 'sync_state_claimed'],
                    'sync_state has exactly the triggers sync_state_guard, sync_state_deleted, sync_state_truncated, sync_state_claimed');
SELECT triggers_are('sync_controller', ARRAY['sync_controller_stamp', 'sync_controller_changed', 'sync_controller_truncated'],
                    'sync_controller has exactly the triggers sync_controller_stamp, sync_controller_changed, sync_controller_truncated');
SELECT trigger_is(t, g, f, format('trigger %s on %s calls %s()', g, t, f))
  FROM (VALUES
    ('sync_state',      'sync_state_guard',          'sync_state_guard'),
    ('sync_state',      'sync_state_deleted',        'sync_state_deleted'),
    ('sync_state',      'sync_state_truncated',      'sync_state_deleted'),
    ('sync_state',      'sync_state_claimed',        'sync_state_claimed'),
    ('sync_controller', 'sync_controller_stamp',     'sync_controller_stamp'),
    ('sync_controller', 'sync_controller_changed',   'sync_controller_changed'),
    ('sync_controller', 'sync_controller_truncated', 'sync_controller_changed')
  ) AS x(t, g, f);
SELECT matches(
    (SELECT pg_catalog.pg_get_triggerdef(oid) FROM pg_catalog.pg_trigger
      WHERE tgrelid = t::regclass AND tgname = g),
    '^CREATE TRIGGER ' || g || ' ' || d || ' ON \S*' || t || ' FOR EACH ' || l || ' ',
    format('trigger %s fires %s on %s for each %s', g, d, t, l))
  FROM (VALUES
    ('sync_state',      'sync_state_guard',          'BEFORE INSERT OR UPDATE',           'ROW'),
    ('sync_state',      'sync_state_deleted',        'AFTER DELETE',                      'ROW'),
    ('sync_state',      'sync_state_truncated',      'AFTER TRUNCATE',                    'STATEMENT'),
    ('sync_controller', 'sync_controller_stamp',     'BEFORE INSERT OR UPDATE',           'ROW'),
    ('sync_controller', 'sync_controller_changed',   'AFTER INSERT OR DELETE OR UPDATE',  'ROW'),
    ('sync_controller', 'sync_controller_truncated', 'AFTER TRUNCATE',                    'STATEMENT')
  ) AS x(t, g, d, l);
SELECT matches(
    (SELECT pg_catalog.pg_get_triggerdef(oid) FROM pg_catalog.pg_trigger
      WHERE tgrelid = 'sync_state'::regclass AND tgname = 'sync_state_claimed'),
    '^CREATE CONSTRAINT TRIGGER sync_state_claimed AFTER INSERT OR UPDATE ON \S*sync_state DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN \(\(new\.held AND \(new\.token IS NULL\)\)\) ',
    'trigger sync_state_claimed: AFTER INSERT OR UPDATE, deferred, for rows held without a token');
SELECT is((SELECT count(*)::int FROM pg_catalog.pg_trigger
            WHERE tgrelid IN ('sync_state'::regclass, 'sync_controller'::regclass)
              AND tgenabled <> 'O'),
          0, 'the triggers are enabled');

-- sync_request: one row; token iff held; queue_position iff pending and active ----
INSERT INTO tap_kc_r SELECT 'a1', * FROM sync_request('mtx/tap_kc/a', 'tap_kc/h1');
INSERT INTO tap_kc_r SELECT 'a2', * FROM sync_request('mtx/tap_kc/a', 'tap_kc/h2');
INSERT INTO tap_kc_r SELECT 'a3', * FROM sync_request('mtx/tap_kc/a', 'tap_kc/h3');
SELECT is((SELECT count(*)::int FROM sync_request('mtx/tap_kc/one', 'tap_kc/h1')), 1,
          'sync_request returns exactly one row');
SELECT results_eq(
    $$SELECT tag, status, token IS NOT NULL, queue_position FROM tap_kc_r ORDER BY tag$$,
    $$VALUES ('a1'::text, 'held'::text, true, NULL::integer),
             ('a2', 'pending', false, 1),
             ('a3', 'pending', false, 2)$$,
    'a free mutex is held (token, no position); later requests are pending (no token; positions 1, 2)');
SELECT is_empty($$SELECT * FROM tap_kc_r WHERE status NOT IN ('held', 'pending')$$,
                'status is held or pending');
SELECT ok((SELECT token > 0 FROM tap_kc_r WHERE tag = 'a1'), 'the token is positive');

SELECT is((SELECT token FROM sync_request('mtx/tap_kc/a', 'tap_kc/h1')),
          (SELECT token FROM tap_kc_r WHERE tag = 'a1'),
          'a repeated sync_request of a hold returns the same token');
SELECT results_eq(
    $$SELECT status, token, queue_position FROM sync_request('mtx/tap_kc/a', 'tap_kc/h1', 0)$$,
    $$SELECT status, token, queue_position FROM tap_kc_r WHERE tag = 'a1'$$,
    'a repeated sync_request of a hold reports the same state');
SELECT results_eq(
    $$SELECT status, token, queue_position FROM sync_request('mtx/tap_kc/a', 'tap_kc/h3')$$,
    $$VALUES ('pending'::text, NULL::bigint, 2)$$,
    'a repeated sync_request of a pending entry reports the same state and position');
SELECT is((SELECT count(*)::int FROM sync_state WHERE name = 'mtx/tap_kc/a'), 3,
          'repeated requests add no row to sync_state');
SELECT is((SELECT count(*)::int FROM sync_waiters WHERE lock_name = 'mtx/tap_kc/a'), 2,
          'repeated requests add no queue entry');

-- priority first, then queued_at
INSERT INTO tap_kc_r SELECT 'a4', * FROM sync_request('mtx/tap_kc/a', 'tap_kc/h4', 5);
INSERT INTO tap_kc_r SELECT 'a5', * FROM sync_request('mtx/tap_kc/a', 'tap_kc/h5', 0, NULL, NULL,
                                                      now() - interval '1 day');
SELECT results_eq(
    $$SELECT tag, status, queue_position FROM tap_kc_r WHERE tag IN ('a4', 'a5') ORDER BY tag$$,
    $$VALUES ('a4'::text, 'pending'::text, 1), ('a5', 'pending', 2)$$,
    'a higher priority goes first; an earlier queued_at goes ahead of earlier arrivals of equal priority');
SELECT results_eq(
    $$SELECT holder, position FROM sync_waiters WHERE lock_name = 'mtx/tap_kc/a' ORDER BY position$$,
    $$VALUES ('tap_kc/h4'::text, 1), ('tap_kc/h5', 2), ('tap_kc/h2', 3), ('tap_kc/h3', 4)$$,
    'sync_waiters shows the queue in that order');
SELECT is((SELECT queue_position FROM sync_request('mtx/tap_kc/a', 'tap_kc/h2')), 3,
          'a repeated sync_request reports the current position');
SELECT is((SELECT time FROM sync_state WHERE workflowkey = 'tap_kc/h5'), now() - interval '1 day',
          'sync_state.time is the queued_at given');
SELECT results_eq(
    $$SELECT status, token FROM sync_request('mtx/tap_kc/a', 'tap_kc/h3', 7)$$,
    $$VALUES ('pending'::text, NULL::bigint)$$,
    'sync_request of a pending entry with a new priority still reports it pending');
SELECT is((SELECT priority FROM sync_state WHERE workflowkey = 'tap_kc/h3'), 7,
          'the new priority is written to sync_state');
SELECT is((SELECT status FROM sync_request('mtx/tap_kc/a', 'tap_kc/h3', NULL)), 'pending',
          'sync_request with a NULL priority reports the pending entry');
SELECT is((SELECT priority FROM sync_state WHERE workflowkey = 'tap_kc/h3'), 7,
          'a NULL priority keeps the current one');
SELECT is((SELECT status FROM sync_request('mtx/tap_kc/a', 'tap_kc/h3')), 'pending',
          'sync_request without a priority reports the pending entry');
SELECT is((SELECT priority FROM sync_state WHERE workflowkey = 'tap_kc/h3'), 0,
          'without a priority the default, 0, is a new priority for it: written to sync_state');

-- what sync_state and the views say
SELECT results_eq(
    $$SELECT workflowkey, held, token FROM sync_state WHERE name = 'mtx/tap_kc/a' ORDER BY workflowkey$$,
    $$VALUES ('tap_kc/h1'::text, true, (SELECT token FROM tap_kc_r WHERE tag = 'a1')),
             ('tap_kc/h2', false, NULL::bigint), ('tap_kc/h3', false, NULL),
             ('tap_kc/h4', false, NULL), ('tap_kc/h5', false, NULL)$$,
    'sync_state: the hold has held = true and the token returned; pending rows have no token');
SELECT results_eq(
    $$SELECT lock_name, pid, scope, token, holder, controller FROM sync_holders WHERE lock_name = 'mtx/tap_kc/a'$$,
    $$SELECT 'mtx/tap_kc/a'::text, NULL::integer, 'keyed'::text, token, 'tap_kc/h1'::text, NULL::text
        FROM tap_kc_r WHERE tag = 'a1'$$,
    'sync_holders: scope keyed, no pid, the token returned, the holder key');
SELECT is((SELECT owner FROM sync_state WHERE name = 'mtx/tap_kc/a' AND workflowkey = 'tap_kc/h1'), current_user::regrole,
          'sync_state.owner is the requesting role');

-- inactive controller: pending without a position
SELECT results_eq(
    $$SELECT holder, controller, active, position FROM sync_waiters WHERE lock_name = 'mtx/tap_kc/dormant'$$,
    $$VALUES ('tap_kc/sleeper'::text, 'tap_kc/ctl'::text, false, NULL::integer)$$,
    'set-up: the entry of a deleted controller is inactive (sync_waiters: active = false, no position)');
SELECT results_eq(
    $$SELECT status, token, queue_position FROM sync_request('mtx/tap_kc/dormant', 'tap_kc/sleeper')$$,
    $$VALUES ('pending'::text, NULL::bigint, NULL::integer)$$,
    'sync_request of a pending entry of an inactive controller: pending, no token, no position');
SAVEPOINT beat;
SELECT results_eq(
    $$SELECT status, token IS NULL, queue_position FROM sync_request('mtx/tap_kc/dormant', 'tap_kc/sleeper', 0, 'tap_kc/ctl')$$,
    $$VALUES ('pending'::text, true, NULL::integer)$$,
    'sync_request naming the inactive controller reports the entry still passed over (its heartbeat applies at commit)');
SELECT isnt_empty($$SELECT * FROM sync_controller WHERE controller = 'tap_kc/ctl'$$,
                  '... and its sync_controller row is written');
ROLLBACK TO SAVEPOINT beat;
SELECT is_empty($$SELECT * FROM sync_controller WHERE controller = 'tap_kc/ctl'$$,
                'rolled back: the sync_controller row is gone');
-- Heartbeats apply at commit, so one that rolls back changes nothing.  (Some
-- tests print only their TAP line: scripts/test.sh wants "<file> .... ok" on
-- one line.)
SELECT split_part(
    is((SELECT active FROM sync_waiters WHERE holder = 'tap_kc/sleeper'), false,
       'rolled back: the entry of the controller is inactive again'), E'\n', 1);

-- The array form --------------------------------------------------------------------
INSERT INTO tap_kc_arr (tag, lock_name, status, token, queue_position)
    SELECT 'b', * FROM sync_request(ARRAY['mtx/tap_kc/b2', 'mtx/tap_kc/b1'], 'tap_kc/hb');
SELECT results_eq(
    $$SELECT lock_name, status, token IS NOT NULL, queue_position FROM tap_kc_arr WHERE tag = 'b' ORDER BY ord$$,
    $$VALUES ('mtx/tap_kc/b2'::text, 'held'::text, true, NULL::integer), ('mtx/tap_kc/b1', 'held', true, NULL)$$,
    'array form: one row per lock, in argument order, each held with a token');
SELECT is((SELECT count(DISTINCT token)::int FROM tap_kc_arr WHERE tag = 'b'), 2,
          'array form: each lock has its own token');
SELECT results_eq(
    $$SELECT lock_name, token FROM sync_request(ARRAY['mtx/tap_kc/b2', 'mtx/tap_kc/b1'], 'tap_kc/hb')$$,
    $$SELECT lock_name, token FROM tap_kc_arr WHERE tag = 'b' ORDER BY ord$$,
    'array form: a repeated request returns the same tokens');
INSERT INTO tap_kc_arr (tag, lock_name, status, token, queue_position)
    SELECT 'c', * FROM sync_request(ARRAY['mtx/tap_kc/c', 'mtx/tap_kc/a'], 'tap_kc/hc');
SELECT results_eq(
    $$SELECT lock_name, status, token, queue_position IS NOT NULL FROM tap_kc_arr WHERE tag = 'c' ORDER BY ord$$,
    $$VALUES ('mtx/tap_kc/c'::text, 'pending'::text, NULL::bigint, true), ('mtx/tap_kc/a', 'pending', NULL, true)$$,
    'array form: all or nothing -- a free lock with a busy one is pending too, with a position');
SELECT is_empty($$SELECT * FROM sync_holders WHERE lock_name = 'mtx/tap_kc/c'$$,
                'array form: the free lock is not held');
SELECT is((SELECT count(DISTINCT request_id)::int FROM sync_state WHERE workflowkey = 'tap_kc/hc'), 1,
          'array form: the rows of one request share a request_id');
SELECT throws_ok($$SELECT * FROM sync_request(ARRAY['mtx/tap_kc/c', 'mtx/tap_kc/a', 'mtx/tap_kc/d'], 'tap_kc/hc')$$,
                 '55000', NULL, 'array form: requesting more than an existing request raises 55000');
SELECT throws_ok($$SELECT * FROM sync_request(ARRAY['mtx/tap_kc/b1', 'mtx/tap_kc/a'], 'tap_kc/h1')$$,
                 '55000', NULL, 'array form: a set that overlaps one existing request partly raises 55000');
SELECT is(sync_release('mtx/tap_kc/c', 'tap_kc/hc'), true,
          'sync_release of one lock of a pending array request');
SELECT is_empty($$SELECT * FROM sync_state WHERE workflowkey = 'tap_kc/hc'$$,
                '... withdraws the whole request');
SELECT throws_ok($$SELECT * FROM sync_request(ARRAY[]::text[], 'tap_kc/hx')$$, '22023', NULL,
                 'array form: an empty array raises 22023');
SELECT throws_ok($$SELECT * FROM sync_request(ARRAY['mtx/tap_kc/x', 'mtx/tap_kc/x'], 'tap_kc/hx')$$, '22023', NULL,
                 'array form: a repeated name raises 22023');
SELECT throws_ok($$SELECT * FROM sync_request(ARRAY['mtx/tap_kc/x', NULL], 'tap_kc/hx')$$, '22004', NULL,
                 'array form: a NULL name raises 22004');
SELECT throws_ok($$SELECT * FROM sync_request(NULL::text[], 'tap_kc/hx')$$, '22004', NULL,
                 'array form: a NULL array raises 22004');
SELECT throws_ok($$SELECT * FROM sync_request(ARRAY(SELECT 'mtx/tap_kc/many' || g FROM generate_series(1, 65) g), 'tap_kc/hx')$$,
                 '54000', NULL, 'array form: 65 locks raise 54000');

-- sync_is_held ------------------------------------------------------------------------
SELECT is(sync_is_held('mtx/tap_kc/a', 'tap_kc/h1'), true, 'sync_is_held of a hold is true');
SELECT is(sync_is_held('mtx/tap_kc/a', 'tap_kc/h1', (SELECT token FROM tap_kc_r WHERE tag = 'a1')), true,
          'sync_is_held with the token of the current grant is true');
SELECT is(sync_is_held('mtx/tap_kc/a', 'tap_kc/h1', (SELECT token + 1 FROM tap_kc_r WHERE tag = 'a1')), false,
          'sync_is_held with another token is false');
SELECT is(sync_is_held('mtx/tap_kc/a', 'tap_kc/h1', NULL), true,
          'sync_is_held with a NULL token is sync_is_held without one');
SELECT is(sync_is_held('mtx/tap_kc/a', 'tap_kc/h2'), false, 'sync_is_held of a pending entry is false');
SELECT is(sync_is_held('mtx/tap_kc/a', 'tap_kc/nobody'), false, 'sync_is_held of an unknown holder is false');
SELECT is(sync_is_held('mtx/tap_kc/never', 'tap_kc/h1'), false, 'sync_is_held of an unknown lock is false');
SELECT is(sync_is_held('sem/tap_kc/nolimit', 'tap_kc/h1'), false,
          'sync_is_held of a semaphore without a limit is false');

-- sync_wait ---------------------------------------------------------------------------
SELECT is(sync_wait('mtx/tap_kc/a', 'tap_kc/h1'), (SELECT token FROM tap_kc_r WHERE tag = 'a1'),
          'sync_wait of a hold returns its token at once');
SELECT is(sync_wait(ARRAY['mtx/tap_kc/a'], 'tap_kc/h1', '0'),
          ARRAY[(SELECT token FROM tap_kc_r WHERE tag = 'a1')],
          'the array form of sync_wait returns the tokens as an array');
SELECT throws_ok($$SELECT sync_wait('mtx/tap_kc/a', 'tap_kc/h2', '0')$$, '55P03',
                 'could not obtain syncwf lock "mtx/tap_kc/a" for holder "tap_kc/h2" within 0 ms',
                 'sync_wait of a pending entry raises 55P03 when its timeout passes');
SELECT throws_ok($$SELECT sync_wait('mtx/tap_kc/a', 'tap_kc/nobody')$$, 'SW002',
                 'holder "tap_kc/nobody" has no request for syncwf lock "mtx/tap_kc/a"',
                 'sync_wait without a request raises SW002');
SELECT throws_ok($$SELECT sync_wait('mtx/tap_kc/a', 'tap_kc/h1', '-1 s')$$, '22023', NULL,
                 'sync_wait with a negative timeout raises 22023');

-- fencing: release and request again -> a new grant, the old token is stale
INSERT INTO tap_kc_r SELECT 's1', * FROM sync_request('sem/tap_kc/two', 'tap_kc/hs');
SELECT is((SELECT status FROM tap_kc_r WHERE tag = 's1'), 'held', 'a semaphore of limit 2 is held');
SELECT is(sync_release('sem/tap_kc/two', 'tap_kc/hs'), true, 'sync_release of a hold returns true');
SELECT is(sync_is_held('sem/tap_kc/two', 'tap_kc/hs'), false, 'after sync_release, sync_is_held is false');
SELECT is(sync_is_held('sem/tap_kc/two', 'tap_kc/hs', (SELECT token FROM tap_kc_r WHERE tag = 's1')), false,
          'after sync_release, sync_is_held with its token is false');
INSERT INTO tap_kc_r SELECT 's2', * FROM sync_request('sem/tap_kc/two', 'tap_kc/hs');
SELECT is((SELECT status FROM tap_kc_r WHERE tag = 's2'), 'held',
          'requested again: held (the second slot; the release takes effect at commit)');
SELECT cmp_ok((SELECT token FROM tap_kc_r WHERE tag = 's2'), '>', (SELECT token FROM tap_kc_r WHERE tag = 's1'),
              'the new grant has a larger token');
SELECT is(sync_is_held('sem/tap_kc/two', 'tap_kc/hs', (SELECT token FROM tap_kc_r WHERE tag = 's2')), true,
          'sync_is_held with the new token is true');
SELECT is(sync_is_held('sem/tap_kc/two', 'tap_kc/hs', (SELECT token FROM tap_kc_r WHERE tag = 's1')), false,
          'sync_is_held with the older token is false');
SELECT is((SELECT token FROM sync_state WHERE name = 'sem/tap_kc/two' AND workflowkey = 'tap_kc/hs'),
          (SELECT token FROM tap_kc_r WHERE tag = 's2'),
          'sync_state has the new token');
SELECT results_eq(
    $$SELECT status FROM sync_request('sem/tap_kc/two', 'tap_kc/hs2')$$,
    $$VALUES ('pending'::text)$$,
    'a release is not applied before commit: the released slot is still taken');

-- sync_release, sync_release_holder ------------------------------------------------------
SELECT is(sync_release('sem/tap_kc/two', 'tap_kc/hs'), true, 'sync_release of the new hold returns true');
SELECT is(sync_release('sem/tap_kc/two', 'tap_kc/hs'), false, 'sync_release of it again returns false');
SELECT is(sync_release('sem/tap_kc/two', 'tap_kc/hs2'), true, 'sync_release of a pending entry withdraws it');
SELECT is(sync_release('mtx/tap_kc/never', 'tap_kc/h1'), false, 'sync_release of an unknown lock returns false');
SELECT is(sync_release('mtx/tap_kc/a', 'tap_kc/nobody'), false, 'sync_release of an unknown holder returns false');
SELECT is_empty($$SELECT * FROM sync_state WHERE name = 'sem/tap_kc/two'$$,
                'the released and withdrawn rows are gone from sync_state');
INSERT INTO tap_kc_arr (tag, lock_name, status, token, queue_position)
    SELECT 'r', * FROM sync_request(ARRAY['mtx/tap_kc/r1', 'mtx/tap_kc/r2'], 'tap_kc/hr');
INSERT INTO tap_kc_r SELECT 'r3', * FROM sync_request('mtx/tap_kc/a', 'tap_kc/hr');
SELECT is(sync_release_holder('tap_kc/hr'), 3, 'sync_release_holder returns the number of entries released');
SELECT is(sync_release_holder('tap_kc/hr'), 0, 'sync_release_holder again returns 0');
SELECT is(sync_release_holder('tap_kc/nobody'), 0, 'sync_release_holder of an unknown holder returns 0');
SELECT is_empty($$SELECT * FROM sync_state WHERE workflowkey = 'tap_kc/hr'$$,
                'sync_release_holder deleted every row of the holder');

-- sync_refresh -------------------------------------------------------------------------------
INSERT INTO tap_kc_r SELECT 'l1', * FROM sync_request('mtx/tap_kc/lease', 'tap_kc/hl', 0, NULL, '1 min');
SELECT results_eq(
    $$SELECT held, lease, lease_expires - granted_at FROM sync_state WHERE workflowkey = 'tap_kc/hl'$$,
    $$VALUES (true, interval '1 min', interval '1 min')$$,
    'a hold with a lease: sync_state has the lease and its expiry, granted_at + lease');
CREATE TEMP TABLE tap_kc_exp AS
    SELECT 0 AS n, lease_expires AS at FROM sync_state WHERE workflowkey = 'tap_kc/hl';
INSERT INTO tap_kc_exp SELECT 1, sync_refresh('mtx/tap_kc/lease', 'tap_kc/hl');
SELECT cmp_ok((SELECT at FROM tap_kc_exp WHERE n = 1), '>', (SELECT at FROM tap_kc_exp WHERE n = 0),
              'sync_refresh returns an expiry later than the one before');
SELECT is((SELECT at FROM tap_kc_exp WHERE n = 1), (SELECT lease_expires FROM sync_state WHERE workflowkey = 'tap_kc/hl'),
          'sync_refresh writes the expiry it returns to sync_state');
SELECT ok((SELECT at BETWEEN clock_timestamp() + interval '50 s' AND clock_timestamp() + interval '1 min'
             FROM tap_kc_exp WHERE n = 1),
          'without a lease argument, sync_refresh extends by the hold''s lease, from the server clock');
INSERT INTO tap_kc_exp SELECT 2, sync_refresh('mtx/tap_kc/lease', 'tap_kc/hl', '10 min');
SELECT cmp_ok((SELECT at FROM tap_kc_exp WHERE n = 2), '>', (SELECT at FROM tap_kc_exp WHERE n = 1),
              'sync_refresh with a longer lease returns a later expiry');
SELECT results_eq(
    $$SELECT lease, lease_expires FROM sync_state WHERE workflowkey = 'tap_kc/hl'$$,
    $$SELECT interval '10 min', at FROM tap_kc_exp WHERE n = 2$$,
    'sync_refresh with a lease writes the new lease and expiry to sync_state');
-- Without a lease argument sync_refresh uses the row's lease, as this
-- transaction left it.
INSERT INTO tap_kc_exp SELECT 3, sync_refresh('mtx/tap_kc/lease', 'tap_kc/hl');
SELECT split_part(
    cmp_ok((SELECT at FROM tap_kc_exp WHERE n = 3), '>', (SELECT at FROM tap_kc_exp WHERE n = 2),
           'sync_refresh without a lease after a new lease extends by the new lease'), E'\n', 1);
SELECT split_part(
    is((SELECT lease FROM sync_state WHERE workflowkey = 'tap_kc/hl'), interval '10 min',
       '... and keeps the new lease in sync_state'), E'\n', 1);

INSERT INTO tap_kc_r SELECT 'l2', * FROM sync_request('mtx/tap_kc/nolease', 'tap_kc/hl');
SELECT is(sync_refresh('mtx/tap_kc/nolease', 'tap_kc/hl'), NULL,
          'sync_refresh of a hold without a lease, with no lease given, returns NULL');
SELECT is((SELECT lease_expires FROM sync_state WHERE name = 'mtx/tap_kc/nolease'), NULL,
          '... and leaves it without a lease');
SELECT ok((SELECT sync_refresh('mtx/tap_kc/nolease', 'tap_kc/hl', '1 min') > clock_timestamp()),
          'sync_refresh with a lease gives a hold without one a lease');
SELECT is((SELECT lease FROM sync_state WHERE name = 'mtx/tap_kc/nolease'), interval '1 min',
          '... recorded in sync_state');
SELECT split_part(
    isnt(sync_refresh('mtx/tap_kc/nolease', 'tap_kc/hl'), NULL,
         'sync_refresh without a lease then extends by the lease given before'), E'\n', 1);

SELECT throws_ok($$SELECT sync_refresh('mtx/tap_kc/lease', 'tap_kc/hl', '0')$$, '22023', NULL,
                 'sync_refresh with a zero lease raises 22023');
SELECT throws_ok($$SELECT sync_refresh('mtx/tap_kc/lease', 'tap_kc/hl', '-1 s')$$, '22023', NULL,
                 'sync_refresh with a negative lease raises 22023');
SELECT throws_ok($$SELECT sync_refresh('mtx/tap_kc/a', 'tap_kc/h2')$$, 'SW001',
                 'keyed hold "mtx/tap_kc/a" of holder "tap_kc/h2" is lost',
                 'sync_refresh of a pending entry raises SW001');
SELECT throws_ok($$SELECT sync_refresh('mtx/tap_kc/never', 'tap_kc/h1')$$, 'SW001', NULL,
                 'sync_refresh of a lock never requested raises SW001');
SELECT throws_ok($$SELECT sync_refresh('mtx/tap_kc/a', 'tap_kc/nobody', '1 min')$$, 'SW001', NULL,
                 'sync_refresh (with a lease) of an unknown holder raises SW001');
SELECT is(sync_release('mtx/tap_kc/lease', 'tap_kc/hl'), true, 'released the leased hold');
SELECT throws_ok($$SELECT sync_refresh('mtx/tap_kc/lease', 'tap_kc/hl')$$, 'SW001', NULL,
                 'sync_refresh of a released hold raises SW001');
SELECT throws_ok($$SELECT sync_refresh('mtx/tap_kc/lease', 'tap_kc/hl', '1 min')$$, 'SW001', NULL,
                 'sync_refresh (with a lease) of a released hold raises SW001');
SELECT is(sync_force_release('mtx/tap_kc/nolease', 'tap_kc/hl'), true, 'force-released the other hold');
SELECT throws_ok($$SELECT sync_refresh('mtx/tap_kc/nolease', 'tap_kc/hl', '1 min')$$, 'SW001', NULL,
                 'sync_refresh of a force-released hold raises SW001');
INSERT INTO tap_kc_r SELECT 'l3', * FROM sync_request('mtx/tap_kc/deleted', 'tap_kc/hl');
DELETE FROM sync_state WHERE name = 'mtx/tap_kc/deleted';
SELECT throws_ok($$SELECT sync_refresh('mtx/tap_kc/deleted', 'tap_kc/hl', '1 min')$$, 'SW001', NULL,
                 'sync_refresh of a hold whose row was deleted raises SW001');
SELECT is(sync_is_held('mtx/tap_kc/deleted', 'tap_kc/hl'), false,
          'a DELETE FROM sync_state releases the hold (sync_is_held is false)');

-- sync_heartbeat ----------------------------------------------------------------------------
CREATE TEMP TABLE tap_kc_hb AS SELECT 0 AS n, clock_timestamp() AS at;
INSERT INTO tap_kc_hb SELECT 1, sync_heartbeat('tap_kc/ctl2');
INSERT INTO tap_kc_hb SELECT 2, clock_timestamp();
SELECT ok((SELECT (SELECT at FROM tap_kc_hb WHERE n = 1) BETWEEN (SELECT at FROM tap_kc_hb WHERE n = 0)
                                                             AND (SELECT at FROM tap_kc_hb WHERE n = 2)),
          'sync_heartbeat returns the server clock');
SELECT is((SELECT time FROM sync_controller WHERE controller = 'tap_kc/ctl2'),
          (SELECT at FROM tap_kc_hb WHERE n = 1),
          'sync_heartbeat writes that time to sync_controller');
INSERT INTO tap_kc_hb SELECT 3, sync_heartbeat('tap_kc/ctl2');
SELECT cmp_ok((SELECT at FROM tap_kc_hb WHERE n = 3), '>', (SELECT at FROM tap_kc_hb WHERE n = 1),
              'a second sync_heartbeat returns a later time');
SELECT results_eq(
    $$SELECT time FROM sync_controller WHERE controller = 'tap_kc/ctl2'$$,
    $$SELECT at FROM tap_kc_hb WHERE n = 3$$,
    '... and updates the one row of the controller');
-- a controller name never used before (this file may run more than once)
CREATE TEMP TABLE tap_kc_new AS SELECT 'tap_kc/ctl-' || txid_current() AS ctl;
INSERT INTO tap_kc_r SELECT 'k1', * FROM sync_request('mtx/tap_kc/k', 'tap_kc/hk', 0, (SELECT ctl FROM tap_kc_new));
SELECT results_eq(
    $$SELECT held, controller FROM sync_state WHERE workflowkey = 'tap_kc/hk'$$,
    $$SELECT true, ctl FROM tap_kc_new$$,
    'sync_state.controller records the controller of a request');
SELECT isnt_empty($$SELECT * FROM sync_controller WHERE controller = (SELECT ctl FROM tap_kc_new)$$,
                  'a request naming a new controller writes its sync_controller row');

-- Manual edits of sync_controller: the time is the server's clock, whatever is written
CREATE TEMP TABLE tap_kc_stamp AS SELECT 0 AS n, clock_timestamp() AS at;
INSERT INTO sync_controller VALUES ('tap_kc/manual', '2000-01-01 00:00:00+00');
INSERT INTO tap_kc_stamp SELECT 1, time FROM sync_controller WHERE controller = 'tap_kc/manual';
UPDATE sync_controller SET time = '2100-01-01 00:00:00+00' WHERE controller = 'tap_kc/manual';
INSERT INTO tap_kc_stamp SELECT 2, time FROM sync_controller WHERE controller = 'tap_kc/manual';
INSERT INTO tap_kc_stamp SELECT 3, clock_timestamp();
SELECT ok((SELECT at FROM tap_kc_stamp WHERE n = 1) BETWEEN (SELECT at FROM tap_kc_stamp WHERE n = 0)
                                                        AND (SELECT at FROM tap_kc_stamp WHERE n = 3),
          'INSERT INTO sync_controller stores the server clock, not the time written');
SELECT ok((SELECT at FROM tap_kc_stamp WHERE n = 2) BETWEEN (SELECT at FROM tap_kc_stamp WHERE n = 1)
                                                        AND (SELECT at FROM tap_kc_stamp WHERE n = 3),
          'UPDATE sync_controller stores the server clock, not the time written');

-- Manual edits of sync_state ------------------------------------------------------------------
-- (docs/argo.md: an INSERT is a claim-only request, an UPDATE setting held
-- = true its claim, granted only if syncwf may grant it now)
-- (the claim that cannot be granted is tried again at commit: checked at
-- the end of each statement here)
SET CONSTRAINTS sync_state_claimed IMMEDIATE;
SELECT throws_ok(
    $$INSERT INTO sync_state (name, workflowkey, held, priority, time, owner, request_id, seq)
      VALUES ('mtx/tap_kc/a', 'tap_kc/forged', true, 0, now(), current_user::regrole, 1, 1)$$,
    '40001', NULL,
    'INSERT INTO sync_state of a held row for a held mutex raises 40001');
SELECT throws_ok($$UPDATE sync_state SET held = true WHERE workflowkey = 'tap_kc/h2'$$, '40001', NULL,
                 'UPDATE sync_state SET held = true behind a held mutex raises 40001');
SET CONSTRAINTS sync_state_claimed DEFERRED;
SELECT throws_ok($$UPDATE sync_state SET priority = 3 WHERE workflowkey = 'tap_kc/h2'$$, '0A000', NULL,
                 'UPDATE sync_state of another column raises 0A000');
SELECT is(sync_is_held('mtx/tap_kc/a', 'tap_kc/h2'), false, 'the refused UPDATE granted nothing');
SELECT lives_ok($$DELETE FROM sync_state WHERE workflowkey = 'tap_kc/h4'$$,
                'DELETE FROM sync_state of a pending row');
SELECT is_empty($$SELECT * FROM sync_request('mtx/tap_kc/a', 'tap_kc/h4') WHERE queue_position = 1$$,
                'the deleted pending row is a withdrawn request: requested again, it is no longer first');
INSERT INTO tap_kc_arr (tag, lock_name, status, token, queue_position)
    SELECT 'm', * FROM sync_request(ARRAY['mtx/tap_kc/m1', 'mtx/tap_kc/a'], 'tap_kc/hm');
DELETE FROM sync_state WHERE workflowkey = 'tap_kc/hm' AND name = 'mtx/tap_kc/a';
SELECT is_empty($$SELECT * FROM sync_state WHERE workflowkey = 'tap_kc/hm'$$,
                'DELETE of one row of a pending array request withdraws the whole request');

-- Errors ------------------------------------------------------------------------------------------
SELECT throws_ok(q, e, NULL, d)
  FROM (VALUES
    ($$SELECT * FROM sync_request(NULL::text, 'tap_kc/hx')$$,               '22004', 'sync_request with a NULL lock name raises 22004'),
    ($$SELECT * FROM sync_request('mtx/tap_kc/x', NULL)$$,                   '22004', 'sync_request with a NULL holder raises 22004'),
    ($$SELECT * FROM sync_request('mtx/tap_kc/x', 'tap_kc/hx', NULL, NULL, NULL, '-infinity')$$,  '22023', 'sync_request with queued_at -infinity raises 22023'),
    ($$SELECT * FROM sync_request('mtx/tap_kc/x', '')$$,                     '22023', 'sync_request with an empty holder raises 22023'),
    ($$SELECT * FROM sync_request('mtx/tap_kc/x', repeat('h', 257))$$,       '22023', 'sync_request with a 257-byte holder raises 22023'),
    ($$SELECT * FROM sync_request('mtx/tap_kc/x', E'tap_kc/a\nb')$$,         '22023', 'sync_request with a newline in the holder raises 22023'),
    ($$SELECT * FROM sync_request('mtx/tap_kc/x', E'tap_kc/a\x7fb')$$,       '22023', 'sync_request with DEL in the holder raises 22023'),
    ($$SELECT * FROM sync_request('mtx/tap_kc/x', 'tap_kc/hx', 0, '')$$,     '22023', 'sync_request with an empty controller raises 22023'),
    ($$SELECT * FROM sync_request('mtx/tap_kc/x', 'tap_kc/hx', 0, repeat('c', 257))$$, '22023', 'sync_request with a 257-byte controller raises 22023'),
    ($$SELECT * FROM sync_request('mtx/tap_kc/x', 'tap_kc/hx', 0, E'c\tc')$$, '22023', 'sync_request with a tab in the controller raises 22023'),
    ($$SELECT * FROM sync_request('mtx/tap_kc/x', 'tap_kc/hx', 0, NULL, '0')$$,    '22023', 'sync_request with a zero lease raises 22023'),
    ($$SELECT * FROM sync_request('mtx/tap_kc/x', 'tap_kc/hx', 0, NULL, '-1 min')$$, '22023', 'sync_request with a negative lease raises 22023'),
    ($$SELECT * FROM sync_request('mtx/tap_kc/x', 'tap_kc/hx', 0, NULL, NULL, 'infinity')$$,  '22023', 'sync_request with queued_at infinity raises 22023'),
    ($$SELECT * FROM sync_request('mtx/tap_kc/x', 'tap_kc/hx', 0, NULL, NULL, '-infinity')$$, '22023', 'sync_request with queued_at -infinity raises 22023'),
    ($$SELECT * FROM sync_request('foo', 'tap_kc/hx')$$,                     '22023', 'sync_request of an invalid lock name raises 22023'),
    ($$SELECT * FROM sync_request('sem/tap_kc/nolimit', 'tap_kc/hx')$$,      '42704', 'sync_request of a semaphore without a limit raises 42704'),
    ($$SELECT sync_release(NULL::text, 'tap_kc/hx')$$,                       '22004', 'sync_release with a NULL lock name raises 22004'),
    ($$SELECT sync_release('mtx/tap_kc/x', NULL::text)$$,                    '22004', 'sync_release with a NULL holder raises 22004'),
    ($$SELECT sync_release('mtx/tap_kc/x', '')$$,                            '22023', 'sync_release with an empty holder raises 22023'),
    ($$SELECT sync_release('bad', 'tap_kc/hx')$$,                            '22023', 'sync_release of an invalid lock name raises 22023'),
    ($$SELECT sync_release_holder(NULL)$$,                                   '22004', 'sync_release_holder(NULL) raises 22004'),
    ($$SELECT sync_release_holder('')$$,                                     '22023', 'sync_release_holder with an empty holder raises 22023'),
    ($$SELECT sync_heartbeat(NULL)$$,                                        '22004', 'sync_heartbeat(NULL) raises 22004'),
    ($$SELECT sync_heartbeat('')$$,                                          '22023', 'sync_heartbeat with an empty controller raises 22023'),
    ($$SELECT sync_heartbeat(repeat('c', 257))$$,                            '22023', 'sync_heartbeat with a 257-byte controller raises 22023'),
    ($$SELECT sync_refresh(NULL, 'tap_kc/hx')$$,                             '22004', 'sync_refresh with a NULL lock name raises 22004'),
    ($$SELECT sync_refresh('mtx/tap_kc/x', NULL)$$,                          '22004', 'sync_refresh with a NULL holder raises 22004'),
    ($$SELECT sync_is_held(NULL, 'tap_kc/hx')$$,                             '22004', 'sync_is_held with a NULL lock name raises 22004'),
    ($$SELECT sync_is_held('mtx/tap_kc/x', NULL)$$,                          '22004', 'sync_is_held with a NULL holder raises 22004'),
    ($$SELECT sync_is_held('bad', 'tap_kc/hx')$$,                            '22023', 'sync_is_held of an invalid lock name raises 22023'),
    ($$SELECT sync_force_release(NULL, 'tap_kc/hx')$$,                       '22004', 'sync_force_release with a NULL lock name raises 22004'),
    ($$SELECT sync_force_release('mtx/tap_kc/x', NULL)$$,                    '22004', 'sync_force_release with a NULL holder raises 22004'),
    ($$SELECT sync_forget_controller(NULL)$$,                                '22004', 'sync_forget_controller(NULL) raises 22004'),
    ($$SELECT sync_forget_controller('')$$,                                  '22023', 'sync_forget_controller with an empty controller raises 22023')
  ) AS x(q, e, d);
SELECT results_eq(
    $$SELECT status FROM sync_request('mtx/tap_kc/x', repeat('h', 256), 0, repeat('c', 256))$$,
    $$VALUES ('held'::text)$$,
    'a 256-byte holder and a 256-byte controller are accepted');
SELECT results_eq(
    $$SELECT status FROM sync_request('mtx/tap_kc/x', U&'tap_kc/wf with spaces \00FC')$$,
    $$VALUES ('pending'::text)$$,
    'a holder may contain spaces and non-ASCII characters');
SELECT results_eq(
    $$SELECT name, workflowkey FROM sync_state WHERE name = 'mtx/tap_kc/x' ORDER BY seq$$,
    $$VALUES ('mtx/tap_kc/x'::text, repeat('h', 256)), ('mtx/tap_kc/x', U&'tap_kc/wf with spaces \00FC')$$,
    'the failed requests left no row behind');

-- read-only transactions: 25006
SELECT throws_ok(q, '25006', NULL, d)
  FROM (VALUES
    ($$SET LOCAL transaction_read_only = on; SELECT * FROM sync_request('mtx/tap_kc/ro', 'tap_kc/hx')$$,
     'sync_request in a read-only transaction raises 25006'),
    ($$SET LOCAL transaction_read_only = on; SELECT sync_release('mtx/tap_kc/a', 'tap_kc/h1')$$,
     'sync_release in a read-only transaction raises 25006'),
    ($$SET LOCAL transaction_read_only = on; SELECT sync_release_holder('tap_kc/h1')$$,
     'sync_release_holder in a read-only transaction raises 25006'),
    ($$SET LOCAL transaction_read_only = on; SELECT sync_heartbeat('tap_kc/ctl2')$$,
     'sync_heartbeat in a read-only transaction raises 25006')
  ) AS x(q, d);
SELECT is(current_setting('transaction_read_only'), 'off', 'the read-only settings were rolled back with the errors');
SELECT is(sync_is_held('mtx/tap_kc/a', 'tap_kc/h1'), true, 'the read-only attempts released nothing');

-- Rollback leaves no trace ----------------------------------------------------------------------
SAVEPOINT req;
SELECT results_eq($$SELECT status FROM sync_request('mtx/tap_kc/sp', 'tap_kc/hsp')$$,
                  $$VALUES ('held'::text)$$, 'a request inside a savepoint');
SELECT is(sync_release('mtx/tap_kc/a', 'tap_kc/h1'), true, 'a release inside the savepoint');
ROLLBACK TO SAVEPOINT req;
SELECT is_empty($$SELECT * FROM sync_state WHERE name = 'mtx/tap_kc/sp'$$,
                'rolled back: the request left no row');
SELECT is_empty($$SELECT * FROM sync_locks WHERE lock_name = 'mtx/tap_kc/sp'$$,
                'rolled back: the request left no lock in shared memory');
SELECT is(sync_is_held('mtx/tap_kc/sp', 'tap_kc/hsp'), false, 'rolled back: the request is not held');
SELECT is(sync_is_held('mtx/tap_kc/a', 'tap_kc/h1', (SELECT token FROM tap_kc_r WHERE tag = 'a1')), true,
          'rolled back: the released hold is held again, with its token');
SELECT is((SELECT count(*)::int FROM sync_state WHERE name = 'mtx/tap_kc/a' AND workflowkey = 'tap_kc/h1'), 1,
          'rolled back: its row is back');
SELECT throws_ok($$SELECT 1 / (length(status) - 4) FROM sync_request('mtx/tap_kc/sp2', 'tap_kc/hsp')$$,
                 '22012', NULL, 'a statement that fails after its request was granted');
SELECT is_empty($$SELECT * FROM sync_locks WHERE lock_name = 'mtx/tap_kc/sp2'$$,
                '... leaves no lock in shared memory');

-- NOTIFY ------------------------------------------------------------------------------------------
SELECT skip('notifications go out only at commit: the channel "syncwf" and its JSON payload are tested '
            'by the isolation and TAP suites, not in this transaction that rolls back', 1);

SELECT * FROM finish();
ROLLBACK;

-- The committed set-up goes away again.
DO $$
BEGIN
    PERFORM sync_release_holder('tap_kc/sleeper');
    PERFORM sync_release_holder('tap_kc/blocker');
    DELETE FROM sync_controller WHERE controller = 'tap_kc/ctl';
    DELETE FROM sync_limit WHERE name LIKE 'tap_kc/%';
END
$$;
