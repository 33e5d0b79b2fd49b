-- API contract: privileges of keyed holds.  PUBLIC may read sync_state and
-- sync_controller and use the keyed API for its own holds; only the owner
-- of a keyed entry (the role that requested it), that role's members and
-- members of syncwf_admin may release or refresh it; only syncwf_admin (and
-- the extension's owner) may force-release, forget controllers and edit the
-- tables by hand.  Checked in the catalogs and by acting as roles created
-- (and rolled back) in this transaction.  Keyed requests, releases and
-- heartbeats are transactional, so the final ROLLBACK leaves no trace of
-- them, in the tables or in shared memory.  A hostile search_path (a
-- temporary sync_state, a failing = and clock_timestamp() ahead of
-- pg_catalog) does not reach syncwf's own statements.
BEGIN;
SELECT plan(119);

CREATE ROLE tap_kp_user NOLOGIN;            -- an ordinary role
CREATE ROLE tap_kp_other NOLOGIN;           -- another ordinary role
CREATE ROLE tap_kp_member NOLOGIN IN ROLE tap_kp_user;   -- inherits tap_kp_user
CREATE ROLE tap_kp_admin NOLOGIN IN ROLE syncwf_admin;

-- Catalog view of the privileges ----------------------------------------------
SELECT table_privs_are(t, 'public', ARRAY['SELECT'],
                       format('PUBLIC may only SELECT %s (no INSERT, UPDATE, DELETE, TRUNCATE)', t))
  FROM (VALUES ('sync_state'), ('sync_controller'), ('sync_limit')) AS x(t);
SELECT table_privs_are(t, 'tap_kp_user', ARRAY['SELECT'],
                       format('an ordinary role may only SELECT %s', t))
  FROM (VALUES ('sync_state'), ('sync_controller'), ('sync_limit')) AS x(t);
SELECT table_privs_are('sync_state', 'syncwf_admin', ARRAY['DELETE', 'INSERT', 'SELECT', 'TRUNCATE', 'UPDATE'],
    'syncwf_admin may SELECT, INSERT, UPDATE, DELETE and TRUNCATE sync_state (writes as Argo makes them: docs/argo.md)');
SELECT table_privs_are('sync_controller', 'syncwf_admin',
    ARRAY['DELETE', 'INSERT', 'SELECT', 'TRUNCATE', 'UPDATE'],
    'syncwf_admin may SELECT, INSERT, UPDATE, DELETE and TRUNCATE sync_controller');
SELECT table_privs_are('sync_state', 'tap_kp_admin', ARRAY['DELETE', 'INSERT', 'SELECT', 'TRUNCATE', 'UPDATE'],
    'a member of syncwf_admin inherits its privileges on sync_state');

SELECT function_privs_are(f, a, 'public', ARRAY['EXECUTE'],
                          format('PUBLIC may EXECUTE %s(%s)', f, array_to_string(a, ', ')))
  FROM (VALUES
    ('sync_request',        '{text,text,integer,text,interval,"timestamp with time zone",integer,text,text,boolean}'::name[]),
    ('sync_request',        '{text[],text,integer,text,interval,"timestamp with time zone",integer,text,text,boolean}'),
    ('sync_release',        '{text,text}'),
    ('sync_release_holder', '{text}'),
    ('sync_heartbeat',      '{text}'),
    ('sync_refresh',        '{text,text,interval}'),
    ('sync_is_held',        '{text,text,bigint}'),
    ('sync_wait',           '{text,text,interval}'),
    ('sync_wait',           '{text[],text,interval}'),
    ('sync_channel',        '{text}')
  ) AS x(f, a);
SELECT function_privs_are(f, a, 'public', ARRAY[]::text[],
                          format('PUBLIC may not EXECUTE %s(%s)', f, array_to_string(a, ', ')))
  FROM (VALUES
    ('sync_force_release',     '{text,text}'::name[]),
    ('sync_forget_controller', '{text,boolean}')
  ) AS x(f, a);
SELECT function_privs_are(f, a, 'syncwf_admin', ARRAY['EXECUTE'],
                          format('syncwf_admin may EXECUTE %s(%s)', f, array_to_string(a, ', ')))
  FROM (VALUES
    ('sync_force_release',     '{text,text}'::name[]),
    ('sync_forget_controller', '{text,boolean}')
  ) AS x(f, a);

-- SECURITY DEFINER functions pin search_path -----------------------------------
CREATE TEMP VIEW tap_kp_ext_functions AS
    SELECT p.oid, p.oid::regprocedure::text AS signature, p.prosecdef, p.proconfig
      FROM pg_catalog.pg_proc p
      JOIN pg_catalog.pg_depend d
        ON d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = p.oid
       AND d.refclassid = 'pg_catalog.pg_extension'::regclass AND d.deptype = 'e'
      JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'syncwf';
SELECT cmp_ok((SELECT count(*)::int FROM tap_kp_ext_functions), '>=', 26,
              'the SECURITY DEFINER check sees the extension''s functions');
SELECT is_empty(
    $$SELECT signature FROM tap_kp_ext_functions
       WHERE prosecdef
         AND NOT EXISTS (SELECT 1 FROM unnest(proconfig) AS c(setting)
                          WHERE c.setting LIKE 'search\_path=%')$$,
    'no function of syncwf is SECURITY DEFINER without a pinned search_path');

-- Acting as an ordinary role ----------------------------------------------------
SET ROLE tap_kp_user;
SELECT is(current_user::text, 'tap_kp_user', 'now acting as an ordinary role');
SELECT lives_ok($$SELECT * FROM sync_state$$, 'ordinary role: SELECT sync_state');
SELECT lives_ok($$SELECT * FROM sync_controller$$, 'ordinary role: SELECT sync_controller');

-- the keyed API works for it
SELECT results_eq(
    $$SELECT status, token IS NOT NULL FROM sync_request('mtx/tap_kp/a', 'tap_kp/wf1', 0, 'tap_kp/ctl', '5 min')$$,
    $$VALUES ('held'::text, true)$$,
    'ordinary role: sync_request is granted a free mutex');
SELECT results_eq(
    $$SELECT status FROM sync_request('mtx/tap_kp/a', 'tap_kp/wf2')$$,
    $$VALUES ('pending'::text)$$,
    'ordinary role: a second sync_request for the mutex is pending');
SELECT results_eq(
    $$SELECT lock_name, status FROM sync_request(ARRAY['mtx/tap_kp/b', 'mtx/tap_kp/c'], 'tap_kp/wf3')$$,
    $$VALUES ('mtx/tap_kp/b'::text, 'held'::text), ('mtx/tap_kp/c', 'held')$$,
    'ordinary role: the array form of sync_request');
SELECT is(sync_is_held('mtx/tap_kp/a', 'tap_kp/wf1'), true, 'ordinary role: sync_is_held');
SELECT isnt(sync_heartbeat('tap_kp/ctl'), NULL, 'ordinary role: sync_heartbeat');
SELECT isnt(sync_refresh('mtx/tap_kp/a', 'tap_kp/wf1'), NULL, 'ordinary role: sync_refresh of its own hold');
SELECT isnt(sync_refresh('mtx/tap_kp/a', 'tap_kp/wf1', '10 min'), NULL,
            'ordinary role: sync_refresh of its own hold with a new lease');

-- the owner column records the requesting role
SELECT results_eq(
    $$SELECT workflowkey, owner::text FROM sync_state WHERE name LIKE '%/tap_kp/%' ORDER BY name, workflowkey$$,
    $$VALUES ('tap_kp/wf1'::text, 'tap_kp_user'::text), ('tap_kp/wf2', 'tap_kp_user'),
             ('tap_kp/wf3', 'tap_kp_user'), ('tap_kp/wf3', 'tap_kp_user')$$,
    'sync_state.owner records the requesting role');
SELECT is((SELECT pg_typeof(owner)::text FROM sync_state WHERE workflowkey = 'tap_kp/wf1'), 'regrole',
          'sync_state.owner is a regrole');

-- hand-written changes to the tables are denied
SELECT throws_ok(
    $$INSERT INTO sync_state (name, workflowkey, held, priority, time, owner, request_id, seq)
      VALUES ('mtx/tap_kp/x', 'tap_kp/forged', true, 0, now(), current_user::regrole, 1, 1)$$,
    '42501', NULL, 'ordinary role: INSERT INTO sync_state is denied (42501)');
SELECT throws_ok($$UPDATE sync_state SET priority = 9 WHERE workflowkey = 'tap_kp/wf2'$$, '42501', NULL,
                 'ordinary role: UPDATE sync_state is denied (42501)');
SELECT throws_ok($$DELETE FROM sync_state WHERE workflowkey = 'tap_kp/wf1'$$, '42501', NULL,
                 'ordinary role: DELETE FROM sync_state is denied (42501), even of its own rows');
SELECT throws_ok($$TRUNCATE sync_state$$, '42501', NULL,
                 'ordinary role: TRUNCATE sync_state is denied (42501)');
SELECT throws_ok($$INSERT INTO sync_controller VALUES ('tap_kp/forged', now())$$, '42501', NULL,
                 'ordinary role: INSERT INTO sync_controller is denied (42501)');
SELECT throws_ok($$UPDATE sync_controller SET time = now() WHERE controller = 'tap_kp/ctl'$$, '42501', NULL,
                 'ordinary role: UPDATE sync_controller is denied (42501)');
SELECT throws_ok($$DELETE FROM sync_controller WHERE controller = 'tap_kp/ctl'$$, '42501', NULL,
                 'ordinary role: DELETE FROM sync_controller is denied (42501)');
SELECT throws_ok($$TRUNCATE sync_controller$$, '42501', NULL,
                 'ordinary role: TRUNCATE sync_controller is denied (42501)');
SELECT throws_ok($$INSERT INTO sync_limit VALUES ('tap_kp/x', 1)$$, '42501', NULL,
                 'ordinary role: INSERT INTO sync_limit is denied (42501)');
SELECT throws_ok($$UPDATE sync_limit SET sizelimit = 10$$, '42501', NULL,
                 'ordinary role: UPDATE sync_limit is denied (42501)');
SELECT throws_ok($$DELETE FROM sync_limit$$, '42501', NULL,
                 'ordinary role: DELETE FROM sync_limit is denied (42501)');
SELECT throws_ok($$TRUNCATE sync_limit$$, '42501', NULL,
                 'ordinary role: TRUNCATE sync_limit is denied (42501)');

-- the administrative functions are denied
SELECT throws_ok($$SELECT sync_force_release('mtx/tap_kp/a', 'tap_kp/wf1')$$, '42501', NULL,
                 'ordinary role: sync_force_release is denied (42501), even of its own hold');
SELECT throws_ok($$SELECT sync_forget_controller('tap_kp/ctl')$$, '42501', NULL,
                 'ordinary role: sync_forget_controller is denied (42501)');
SELECT throws_ok($$SELECT sync_forget_controller('tap_kp/ctl', true)$$, '42501', NULL,
                 'ordinary role: sync_forget_controller(..., true) is denied (42501)');

SELECT results_eq(
    $$SELECT workflowkey, held FROM sync_state WHERE name LIKE '%/tap_kp/%' ORDER BY name, workflowkey$$,
    $$VALUES ('tap_kp/wf1'::text, true), ('tap_kp/wf2', false), ('tap_kp/wf3', true), ('tap_kp/wf3', true)$$,
    'ordinary role: the denied statements changed nothing in sync_state');
SELECT is((SELECT count(*)::int FROM sync_controller WHERE controller = 'tap_kp/ctl'), 1,
          'ordinary role: the denied statements changed nothing in sync_controller');
RESET ROLE;

-- Another ordinary role may look, not touch ----------------------------------------
SET ROLE tap_kp_other;
SELECT is(current_user::text, 'tap_kp_other', 'now acting as another ordinary role');
SELECT is(sync_is_held('mtx/tap_kp/a', 'tap_kp/wf1'), true,
          'another role: sync_is_held of someone else''s hold');
SELECT is(sync_wait('mtx/tap_kp/a', 'tap_kp/wf1', '0'),
          (SELECT token FROM sync_state WHERE name = 'mtx/tap_kp/a' AND workflowkey = 'tap_kp/wf1'),
          'another role: sync_wait for someone else''s hold returns its token');
SELECT is((SELECT count(*)::int FROM sync_state WHERE name LIKE '%/tap_kp/%'), 4,
          'another role: sees every row of sync_state');
SELECT throws_ok($$SELECT sync_release('mtx/tap_kp/a', 'tap_kp/wf1')$$, '42501',
                 'permission denied for keyed hold "mtx/tap_kp/a" of holder "tap_kp/wf1"',
                 'another role: sync_release of someone else''s hold is denied (42501)');
SELECT throws_ok($$SELECT sync_release('mtx/tap_kp/a', 'tap_kp/wf2')$$, '42501', NULL,
                 'another role: sync_release of someone else''s pending request is denied (42501)');
SELECT throws_ok($$SELECT sync_release('mtx/tap_kp/b', 'tap_kp/wf3')$$, '42501', NULL,
                 'another role: sync_release of one lock of someone else''s array request is denied (42501)');
SELECT throws_ok($$SELECT sync_release_holder('tap_kp/wf3')$$, '42501', NULL,
                 'another role: sync_release_holder of someone else''s holder is denied (42501)');
SELECT throws_ok($$SELECT sync_refresh('mtx/tap_kp/a', 'tap_kp/wf1')$$, '42501', NULL,
                 'another role: sync_refresh of someone else''s hold is denied (42501)');
SELECT throws_ok($$SELECT sync_refresh('mtx/tap_kp/a', 'tap_kp/wf1', '1 h')$$, '42501', NULL,
                 'another role: sync_refresh of someone else''s hold with a new lease is denied (42501)');
SELECT throws_ok($$SELECT sync_force_release('mtx/tap_kp/a', 'tap_kp/wf1')$$, '42501', NULL,
                 'another role: sync_force_release is denied (42501)');
SELECT throws_ok($$DELETE FROM sync_state WHERE workflowkey = 'tap_kp/wf1'$$, '42501', NULL,
                 'another role: DELETE FROM sync_state is denied (42501)');
SELECT is(sync_release('mtx/tap_kp/a', 'tap_kp/nobody'), false,
          'another role: sync_release of an entry that does not exist returns false');
-- its own holds are its own, and its hold on the same lock does not count as
-- someone else's
SELECT results_eq(
    $$SELECT status FROM sync_request('mtx/tap_kp/d', 'tap_kp/other1')$$,
    $$VALUES ('held'::text)$$,
    'another role: sync_request of its own');
SELECT is((SELECT owner::text FROM sync_state WHERE workflowkey = 'tap_kp/other1'), 'tap_kp_other',
          'another role: the owner column records it');
SELECT results_eq(
    $$SELECT workflowkey, held FROM sync_state WHERE name LIKE '%/tap_kp/%' AND workflowkey <> 'tap_kp/other1'
       ORDER BY name, workflowkey$$,
    $$VALUES ('tap_kp/wf1'::text, true), ('tap_kp/wf2', false), ('tap_kp/wf3', true), ('tap_kp/wf3', true)$$,
    'another role: the denied calls changed nothing');
SELECT is(sync_is_held('mtx/tap_kp/b', 'tap_kp/wf3'), true,
          'another role: the denied sync_release_holder released nothing');
RESET ROLE;

-- A member of the owning role may act for it ------------------------------------------
SET ROLE tap_kp_member;
SELECT is(current_user::text, 'tap_kp_member', 'now acting as a member of the owning role');
SELECT isnt(sync_refresh('mtx/tap_kp/a', 'tap_kp/wf1', '20 min'), NULL,
            'member of the owner: sync_refresh');
SELECT is(sync_release('mtx/tap_kp/a', 'tap_kp/wf2'), true,
          'member of the owner: sync_release withdraws the owner''s pending request');
SELECT is(sync_release('mtx/tap_kp/a', 'tap_kp/wf1'), true,
          'member of the owner: sync_release releases the owner''s hold');
SELECT is(sync_is_held('mtx/tap_kp/a', 'tap_kp/wf1'), false,
          'member of the owner: the hold is released');
SELECT is(sync_release_holder('tap_kp/wf3'), 2,
          'member of the owner: sync_release_holder releases both locks of the owner''s holder');
SELECT throws_ok($$SELECT sync_release('mtx/tap_kp/d', 'tap_kp/other1')$$, '42501', NULL,
                 'member of the owner: still may not release a third role''s hold (42501)');
SELECT throws_ok($$SELECT sync_force_release('mtx/tap_kp/d', 'tap_kp/other1')$$, '42501', NULL,
                 'member of the owner: sync_force_release is denied (42501)');
SELECT results_eq(
    $$SELECT status FROM sync_request('mtx/tap_kp/e', 'tap_kp/member1')$$,
    $$VALUES ('held'::text)$$,
    'member of the owner: sync_request of its own');
SELECT is((SELECT owner::text FROM sync_state WHERE workflowkey = 'tap_kp/member1'), 'tap_kp_member',
          'member of the owner: the owner column records the member, not the role it belongs to');
RESET ROLE;

-- ... but the owning role may not act for its member (membership is one way).
SET ROLE tap_kp_user;
SELECT throws_ok($$SELECT sync_release('mtx/tap_kp/e', 'tap_kp/member1')$$, '42501', NULL,
                 'the role a member belongs to may not release the member''s hold (42501)');
SELECT throws_ok($$SELECT sync_refresh('mtx/tap_kp/e', 'tap_kp/member1', '1 min')$$, '42501', NULL,
                 'the role a member belongs to may not refresh the member''s hold (42501)');
RESET ROLE;

-- A member of syncwf_admin --------------------------------------------------------------
SET ROLE tap_kp_user;
SELECT results_eq(
    $$SELECT status FROM sync_request('mtx/tap_kp/f', 'tap_kp/wf4', 0, 'tap_kp/ctl2')$$,
    $$VALUES ('held'::text)$$,
    'ordinary role: a hold for the admin to force-release');
SELECT results_eq(
    $$SELECT status FROM sync_request('mtx/tap_kp/g', 'tap_kp/wf5', 0, 'tap_kp/ctl2')$$,
    $$VALUES ('held'::text)$$,
    'ordinary role: a hold of controller tap_kp/ctl2');
SELECT results_eq(
    $$SELECT status FROM sync_request('mtx/tap_kp/g', 'tap_kp/wf6', 0, 'tap_kp/ctl2')$$,
    $$VALUES ('pending'::text)$$,
    'ordinary role: a pending request of controller tap_kp/ctl2');
SELECT results_eq(
    $$SELECT status FROM sync_request('mtx/tap_kp/h', 'tap_kp/wf7')$$,
    $$VALUES ('held'::text)$$,
    'ordinary role: a hold for the admin to DELETE');
SELECT results_eq(
    $$SELECT status FROM sync_request('mtx/tap_kp/i', 'tap_kp/wf8')$$,
    $$VALUES ('held'::text)$$,
    'ordinary role: a hold for the admin to release');
RESET ROLE;

SET ROLE tap_kp_admin;
SELECT is(current_user::text, 'tap_kp_admin', 'now acting as a member of syncwf_admin');
SELECT is(sync_force_release('mtx/tap_kp/f', 'tap_kp/wf4'), true,
          'syncwf_admin member: sync_force_release of another role''s hold');
SELECT is(sync_is_held('mtx/tap_kp/f', 'tap_kp/wf4'), false,
          'syncwf_admin member: the forced release took effect');
SELECT is_empty($$SELECT * FROM sync_state WHERE workflowkey = 'tap_kp/wf4'$$,
                'syncwf_admin member: the forced release deleted the row');
SELECT is(sync_force_release('mtx/tap_kp/f', 'tap_kp/wf4'), false,
          'syncwf_admin member: sync_force_release of what is not held returns false');
SELECT is(sync_forget_controller('tap_kp/ctl2'), 1,
          'syncwf_admin member: sync_forget_controller removes the controller''s pending entry');
SELECT results_eq(
    $$SELECT workflowkey, held FROM sync_state WHERE controller = 'tap_kp/ctl2'$$,
    $$VALUES ('tap_kp/wf5'::text, true)$$,
    'syncwf_admin member: ... and keeps its holds');
SELECT is_empty($$SELECT * FROM sync_controller WHERE controller = 'tap_kp/ctl2'$$,
                'syncwf_admin member: ... and deletes its sync_controller row');
SELECT is(sync_forget_controller('tap_kp/ctl2', true), 1,
          'syncwf_admin member: sync_forget_controller(..., true) releases its holds too');
SELECT is_empty($$SELECT * FROM sync_state WHERE controller = 'tap_kp/ctl2'$$,
                'syncwf_admin member: nothing of the forgotten controller is left');
SELECT lives_ok($$DELETE FROM sync_state WHERE workflowkey = 'tap_kp/wf7'$$,
                'syncwf_admin member: DELETE FROM sync_state');
SELECT is(sync_is_held('mtx/tap_kp/h', 'tap_kp/wf7'), false,
          'syncwf_admin member: the DELETE released the hold');
SELECT is(sync_release('mtx/tap_kp/i', 'tap_kp/wf8'), true,
          'syncwf_admin member: sync_release of another role''s hold');
SELECT isnt(sync_refresh('mtx/tap_kp/d', 'tap_kp/other1', '1 min'), NULL,
            'syncwf_admin member: sync_refresh of another role''s hold');
SELECT lives_ok($$INSERT INTO sync_controller VALUES ('tap_kp/ctl3', now())$$,
                'syncwf_admin member: INSERT INTO sync_controller');
SELECT lives_ok($$UPDATE sync_controller SET time = now() WHERE controller = 'tap_kp/ctl3'$$,
                'syncwf_admin member: UPDATE sync_controller');
SELECT lives_ok($$DELETE FROM sync_controller WHERE controller = 'tap_kp/ctl3'$$,
                'syncwf_admin member: DELETE FROM sync_controller');
-- a row written by hand is a claim-only request (docs/argo.md): syncwf fills
-- in the columns it owns, whatever the writer put there
SELECT lives_ok(
    $$INSERT INTO sync_state (name, workflowkey, held, priority, time, owner, request_id, seq)
      VALUES ('mtx/tap_kp/x', 'tap_kp/forged', true, 0, now(), 'postgres'::regrole, 1, 1)$$,
    'syncwf_admin member: INSERT INTO sync_state of a held row is a request, granted now');
SELECT results_eq(
    $$SELECT owner::text, request_id <> 1, claim, token IS NOT NULL FROM sync_state WHERE workflowkey = 'tap_kp/forged'$$,
    $$VALUES ('tap_kp_admin'::text, true, true, true)$$,
    'syncwf_admin member: the inserted row names its writer as owner, with syncwf''s own request id and token');
SELECT is(sync_is_held('mtx/tap_kp/x', 'tap_kp/forged'), true, 'syncwf_admin member: the inserted row is held');
SELECT lives_ok($$DELETE FROM sync_state WHERE workflowkey = 'tap_kp/forged'$$,
                'syncwf_admin member: DELETE of the inserted row releases it');
SELECT throws_ok($$UPDATE sync_state SET priority = 9 WHERE workflowkey = 'tap_kp/other1'$$, '0A000', NULL,
                 'syncwf_admin member: UPDATE of a column other than held is refused (0A000)');
SAVEPOINT truncate_state;
SELECT lives_ok($$TRUNCATE sync_state$$, 'syncwf_admin member: TRUNCATE sync_state');
SELECT is_empty($$SELECT * FROM sync_state$$, 'syncwf_admin member: the TRUNCATE emptied sync_state');
ROLLBACK TO SAVEPOINT truncate_state;
SELECT is(sync_is_held('mtx/tap_kp/d', 'tap_kp/other1'), true,
          'the TRUNCATE rolled back to its savepoint released nothing');
RESET ROLE;

-- Even the table owner cannot change what syncwf owns (0A000), nor insert
-- a row for an invalid lock (22023).
SELECT throws_ok(
    $$INSERT INTO sync_state (name, workflowkey, held, priority, time, owner, request_id, seq)
      VALUES ('xyz/tap_kp/x', 'tap_kp/forged', true, 0, now(), current_user::regrole, 1, 1)$$,
    '22023', NULL, 'the owner: INSERT INTO sync_state of an invalid lock name is refused (22023)');
SELECT throws_ok($$UPDATE sync_state SET priority = 9 WHERE workflowkey = 'tap_kp/other1'$$, '0A000', NULL,
                 'the owner: UPDATE sync_state of a column other than held is refused (0A000)');

-- A hostile search_path changes nothing ------------------------------------------
-- syncwf's own statements name their tables, functions and operators with
-- their schemas.  A temporary table sync_state (pg_temp is searched first),
-- and a clock_timestamp() and a text = operator that fail, in a schema
-- searched before pg_catalog, are never used by any keyed call.  The calls'
-- results are kept in a table and checked after the search_path is reset
-- (pgTAP's own functions would use the failing operator).
CREATE SCHEMA tap_kp_evil;
CREATE FUNCTION tap_kp_evil.clock_timestamp() RETURNS timestamptz LANGUAGE plpgsql
    AS $$BEGIN RAISE EXCEPTION 'tap_kp_evil.clock_timestamp() was called'; END$$;
CREATE FUNCTION tap_kp_evil.text_eq(text, text) RETURNS boolean LANGUAGE plpgsql
    AS $$BEGIN RAISE EXCEPTION 'tap_kp_evil.= was called'; END$$;
CREATE OPERATOR tap_kp_evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = tap_kp_evil.text_eq);
CREATE TEMP TABLE sync_state (name text, workflowkey text, held boolean);
CREATE TEMP TABLE tap_kp_sp (step int, result text);
SET LOCAL search_path = tap_kp_evil, pg_catalog, public;
-- the traps work: an unqualified = or clock_timestamp() here fails
DO $$
BEGIN
    BEGIN
        PERFORM 'a'::text = 'a'::text;
    EXCEPTION WHEN raise_exception THEN
        INSERT INTO pg_temp.tap_kp_sp VALUES (-1, 'trapped =');
    END;
    BEGIN
        PERFORM clock_timestamp();
    EXCEPTION WHEN raise_exception THEN
        INSERT INTO pg_temp.tap_kp_sp VALUES (0, 'trapped clock_timestamp()');
    END;
END $$;
INSERT INTO pg_temp.tap_kp_sp
    SELECT 1, status FROM public.sync_request('mtx/tap_kp/sp', 'tap_kp/sp1', 0, 'tap_kp_ctl', '1 hour');
INSERT INTO pg_temp.tap_kp_sp
    SELECT 2, status FROM public.sync_request('mtx/tap_kp/sp', 'tap_kp/sp2', 3);
INSERT INTO pg_temp.tap_kp_sp
    SELECT 3, status FROM public.sync_request('mtx/tap_kp/sp', 'tap_kp/sp2', 4);
INSERT INTO pg_temp.tap_kp_sp
    SELECT 4, (public.sync_refresh('mtx/tap_kp/sp', 'tap_kp/sp1') > pg_catalog.now())::text;
INSERT INTO pg_temp.tap_kp_sp
    SELECT 5, (public.sync_heartbeat('tap_kp_ctl') IS NOT NULL)::text;
INSERT INTO pg_temp.tap_kp_sp
    SELECT 6, public.sync_is_held('mtx/tap_kp/sp', 'tap_kp/sp1')::text;
INSERT INTO pg_temp.tap_kp_sp
    SELECT 7, public.sync_release('mtx/tap_kp/sp', 'tap_kp/sp1')::text;
INSERT INTO pg_temp.tap_kp_sp
    SELECT 8, public.sync_release_holder('tap_kp/sp2')::text;
RESET search_path;
SELECT results_eq(
    $$SELECT step, result FROM pg_temp.tap_kp_sp ORDER BY step$$,
    $$VALUES (-1, 'trapped ='), (0, 'trapped clock_timestamp()'),
             (1, 'held'), (2, 'pending'), (3, 'pending'), (4, 'true'), (5, 'true'),
             (6, 'true'), (7, 'true'), (8, '1')$$,
    'hostile search_path: request, re-sort, refresh, heartbeat, is_held, release and release_holder work as usual');
SELECT is_empty($$SELECT * FROM pg_temp.sync_state$$,
                'hostile search_path: the temporary sync_state was never written');
DROP TABLE pg_temp.sync_state;
SELECT is_empty($$SELECT * FROM sync_state WHERE workflowkey LIKE 'tap_kp/sp%'$$,
                'hostile search_path: the requests went to syncwf''s sync_state and were released from it');

-- What is left: other1 (tap_kp_other), member1 (tap_kp_member).
SELECT results_eq(
    $$SELECT name, workflowkey, owner::text FROM sync_state WHERE name LIKE '%/tap_kp/%' ORDER BY name$$,
    $$VALUES ('mtx/tap_kp/d'::text, 'tap_kp/other1'::text, 'tap_kp_other'::text),
             ('mtx/tap_kp/e', 'tap_kp/member1', 'tap_kp_member')$$,
    'sync_state holds exactly the entries this file did not release');

SELECT * FROM finish();
ROLLBACK;
