-- API contract: privileges.  PUBLIC may read sync_limit and the monitoring
-- views and call every function; only syncwf_admin (and its members) may
-- change sync_limit.  Checked both in the catalogs and by acting as roles
-- created (and rolled back) in this transaction.
-- Limits take effect when they commit, and this file is one transaction
-- that rolls back: the semaphores it uses get committed rows first, removed
-- again at the end.
INSERT INTO sync_limit VALUES ('tap_priv/s', 2);

BEGIN;
SELECT plan(43);

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
    ('sync_acquire',          '{text,integer,interval}'::name[]),
    ('sync_acquire',          '{text[],integer,interval}'),
    ('sync_try_acquire',      '{text,integer}'),
    ('sync_try_acquire',      '{text[],integer}'),
    ('sync_acquire_xact',     '{text,integer,interval}'),
    ('sync_acquire_xact',     '{text[],integer,interval}'),
    ('sync_try_acquire_xact', '{text,integer}'),
    ('sync_try_acquire_xact', '{text[],integer}'),
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
SELECT lives_ok($$TRUNCATE sync_limit$$, 'syncwf_admin member: TRUNCATE sync_limit');
SELECT is_empty($$SELECT * FROM sync_limit$$, 'syncwf_admin member: the TRUNCATE took effect');
RESET ROLE;

SELECT is(sync_release_all(), 0, 'nothing of this file is still held');
SELECT * FROM finish();
ROLLBACK;

DELETE FROM sync_limit WHERE name LIKE 'tap_priv/%';
