-- API contract: privileges.  PUBLIC may read sync_limit and the monitoring
-- views and call every function; only syncwf_admin (and its members) may
-- change sync_limit.  Checked both in the catalogs and by acting as roles
-- created (and rolled back) in this transaction.
-- Limits take effect when they commit, and this file is one transaction
-- that rolls back: the semaphores it uses get committed rows first, removed
-- again at the end.
-- Session holds can only be released from their own session, whatever the
-- role: a second session (through dblink) takes a hold that this session,
-- as the same role and as a superuser, must fail to release.  That session
-- logs in as a role committed here (a role created in the transaction below
-- would be invisible to it), dropped again at the end.
INSERT INTO sync_limit VALUES ('tap_priv/s', 2);
CREATE ROLE tap_syncwf_login LOGIN;

BEGIN;
SELECT plan(58);

CREATE ROLE tap_syncwf_user NOLOGIN;
CREATE ROLE tap_syncwf_admin NOLOGIN IN ROLE syncwf_admin;

-- Catalog view of the privileges ----------------------------------------------
SELECT table_privs_are('sync_limit', 'public', ARRAY['SELECT'],
    'PUBLIC may only SELECT sync_limit (no INSERT, UPDATE, DELETE, TRUNCATE)');
SELECT table_privs_are('sync_limit', 'syncwf_admin',
    ARRAY['DELETE', 'INSERT', 'SELECT', 'TRUNCATE', 'UPDATE'],
    'syncwf_admin may SELECT, INSERT, UPDATE, DELETE and TRUNCATE sync_limit');
SELECT table_privs_are('sync_limit', 'tap_syncwf_user', ARRAY['SELECT'],
    'an ordinary role may only SELECT sync_limit');
SELECT table_privs_are('sync_limit', 'tap_syncwf_admin',
    ARRAY['DELETE', 'INSERT', 'SELECT', 'TRUNCATE', 'UPDATE'],
    'a member of syncwf_admin inherits its privileges on sync_limit');
SELECT table_privs_are(v, 'public', ARRAY['SELECT'], format('PUBLIC may only SELECT %s', v))
  FROM (VALUES ('sync_locks'), ('sync_holders'), ('sync_waiters')) AS x(v);

SELECT function_privs_are(f, a, 'public', ARRAY['EXECUTE'],
                          format('PUBLIC may EXECUTE %s(%s)', f, array_to_string(a, ', ')))
  FROM (VALUES
    ('sync_acquire',          '{text,integer,interval,integer,text,text}'::name[]),
    ('sync_acquire',          '{text[],integer,interval,integer,text,text}'),
    ('sync_try_acquire',      '{text,integer,integer,text}'),
    ('sync_try_acquire',      '{text[],integer,integer,text}'),
    ('sync_acquire_xact',     '{text,integer,interval,integer,text,text}'),
    ('sync_acquire_xact',     '{text[],integer,interval,integer,text,text}'),
    ('sync_try_acquire_xact', '{text,integer,integer,text}'),
    ('sync_try_acquire_xact', '{text[],integer,integer,text}'),
    ('sync_release',          '{text}'),
    ('sync_release_all',      '{}'),
    ('sync_lock_status',      '{}'),
    ('sync_entry_status',     '{}')
  ) AS x(f, a);

-- Acting as an ordinary role ----------------------------------------------------

SET ROLE tap_syncwf_user;
SELECT is(current_user::text, 'tap_syncwf_user', 'now acting as an ordinary role');
SELECT lives_ok($$SELECT * FROM sync_limit$$, 'ordinary role: SELECT sync_limit');
SELECT lives_ok($$SELECT * FROM sync_locks$$, 'ordinary role: SELECT sync_locks');
SELECT lives_ok($$SELECT * FROM sync_holders$$, 'ordinary role: SELECT sync_holders');
SELECT lives_ok($$SELECT * FROM sync_waiters$$, 'ordinary role: SELECT sync_waiters');
SELECT throws_ok($$INSERT INTO sync_limit VALUES ('tap_priv/x', 1)$$, '42501', NULL,
                 'ordinary role: INSERT INTO sync_limit is denied (42501)');
SELECT throws_ok($$UPDATE sync_limit SET sizelimit = 10 WHERE name = 'tap_priv/s'$$, '42501', NULL,
                 'ordinary role: UPDATE sync_limit is denied (42501)');
SELECT throws_ok($$DELETE FROM sync_limit WHERE name = 'tap_priv/s'$$, '42501', NULL,
                 'ordinary role: DELETE FROM sync_limit is denied (42501)');
SELECT throws_ok($$TRUNCATE sync_limit$$, '42501', NULL,
                 'ordinary role: TRUNCATE sync_limit is denied (42501)');
SELECT is((SELECT sizelimit FROM sync_limit WHERE name = 'tap_priv/s'), 2,
          'ordinary role: the denied statements changed nothing');
-- ... but may use the locks, semaphores included (their limit is read as
-- the calling role).
SELECT isnt(sync_try_acquire('mtx/tap_priv/m'), NULL, 'ordinary role: sync_try_acquire a mutex');
SELECT isnt(sync_acquire('sem/tap_priv/s', 0, '1 s'), NULL, 'ordinary role: sync_acquire a semaphore');
SELECT isnt(sync_try_acquire_xact(ARRAY['mtx/tap_priv/x1', 'mtx/tap_priv/x2']), NULL,
            'ordinary role: sync_try_acquire_xact an array');
SELECT is((SELECT count(*)::int FROM sync_holders
            WHERE lock_name LIKE '%/tap_priv/%' AND pid = pg_backend_pid()),
          4, 'ordinary role: sees its four holds in sync_holders');
SELECT is(sync_release('mtx/tap_priv/m'), true, 'ordinary role: sync_release');
SELECT is(sync_release_all(), 3, 'ordinary role: sync_release_all releases the other three');
RESET ROLE;

-- Acting as a member of syncwf_admin --------------------------------------------
SET ROLE tap_syncwf_admin;
SELECT is(current_user::text, 'tap_syncwf_admin', 'now acting as a member of syncwf_admin');
SELECT lives_ok($$INSERT INTO sync_limit VALUES ('tap_priv/y', 1)$$,
                'syncwf_admin member: INSERT INTO sync_limit');
SELECT lives_ok($$UPDATE sync_limit SET sizelimit = 3 WHERE name = 'tap_priv/y'$$,
                'syncwf_admin member: UPDATE sync_limit');
SELECT is((SELECT sizelimit FROM sync_limit WHERE name = 'tap_priv/y'), 3,
          'syncwf_admin member: the UPDATE took effect');
SELECT lives_ok($$DELETE FROM sync_limit WHERE name = 'tap_priv/y'$$,
                'syncwf_admin member: DELETE FROM sync_limit');
-- The rows written above have checks pending until commit (the foreign
-- key sync_limit_parent_fkey and the trigger sync_limit_tree are deferred),
-- and a table with pending trigger events cannot be truncated (55006):
-- they run now.
SET CONSTRAINTS sync_limit_parent_fkey, sync_limit_tree IMMEDIATE;
SELECT lives_ok($$TRUNCATE sync_limit$$, 'syncwf_admin member: TRUNCATE sync_limit');
SELECT is_empty($$SELECT * FROM sync_limit$$, 'syncwf_admin member: the TRUNCATE took effect');
RESET ROLE;

-- Another session's hold -------------------------------------------------------
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT is(dblink_connect('tap_priv_peer',
              format('host=''%s'' port=%s dbname=''%s'' user=tap_syncwf_login application_name=tap_priv_peer',
                     split_part(current_setting('unix_socket_directories'), ',', 1),
                     current_setting('port'), current_database())),
          'OK', 'a second session connects through dblink');
SELECT is((SELECT u FROM dblink('tap_priv_peer', 'SELECT current_user::text') AS r(u text)),
          'tap_syncwf_login', 'the second session runs as the login role tap_syncwf_login');
CREATE TEMP TABLE tap_priv_peer AS
    SELECT pid, token
      FROM dblink('tap_priv_peer', $$SELECT pg_backend_pid(), sync_acquire('mtx/tap_priv/peer')$$)
           AS r(pid integer, token bigint);
GRANT SELECT ON tap_priv_peer TO tap_syncwf_login;
SELECT isnt((SELECT token FROM tap_priv_peer), NULL,
            'the second session takes a session hold of mtx/tap_priv/peer with sync_acquire');
SELECT results_eq(
    $$SELECT pid, scope, token FROM sync_holders WHERE lock_name = 'mtx/tap_priv/peer'$$,
    $$SELECT pid, 'session'::text, token FROM tap_priv_peer$$,
    'sync_holders shows the second session''s pid holding mtx/tap_priv/peer in session scope');

SET LOCAL client_min_messages = error;   -- sync_release warns about what is not held
SET ROLE tap_syncwf_login;
SELECT is(current_user::text, 'tap_syncwf_login', 'now acting as the role of the second session');
SELECT is(sync_release('mtx/tap_priv/peer'), false,
          'same role, another session: sync_release of the other session''s hold returns false');
SELECT is(sync_release_all(), 0,
          'same role, another session: sync_release_all releases none of the other session''s holds');
SELECT results_eq(
    $$SELECT pid, scope, token FROM sync_holders WHERE lock_name = 'mtx/tap_priv/peer'$$,
    $$SELECT pid, 'session'::text, token FROM tap_priv_peer$$,
    'same role, another session: the second session still holds mtx/tap_priv/peer with its token');
RESET ROLE;

SELECT is((SELECT rolsuper FROM pg_roles WHERE rolname = current_user), true,
          'now acting as a superuser');
SELECT is(sync_release('mtx/tap_priv/peer'), false,
          'superuser: sync_release of another session''s hold returns false');
SELECT is(sync_release_all(), 0,
          'superuser: sync_release_all releases none of another session''s holds');
SELECT results_eq(
    $$SELECT pid, scope, token FROM sync_holders WHERE lock_name = 'mtx/tap_priv/peer'$$,
    $$SELECT pid, 'session'::text, token FROM tap_priv_peer$$,
    'superuser: the second session still holds mtx/tap_priv/peer with its token');
RESET client_min_messages;

SELECT is((SELECT released FROM dblink('tap_priv_peer', $$SELECT sync_release('mtx/tap_priv/peer')$$)
                                 AS r(released boolean)),
          true, 'the second session releases its own hold with sync_release');
SELECT is_empty($$SELECT * FROM sync_holders WHERE lock_name = 'mtx/tap_priv/peer'$$,
                'once its own session released it, nobody holds mtx/tap_priv/peer');
SELECT is(dblink_disconnect('tap_priv_peer'), 'OK', 'the second session disconnects');

SELECT is(sync_release_all(), 0, 'nothing of this file is still held');
SELECT * FROM finish();
ROLLBACK;

DELETE FROM sync_limit WHERE name LIKE 'tap_priv/%';
DROP ROLE tap_syncwf_login;
