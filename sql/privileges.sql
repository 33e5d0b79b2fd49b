--
-- privileges: every role may take and release locks and read sync_limit
-- and the views; changing sync_limit takes the extension owner or a member
-- of syncwf_admin.  The roles are created here and dropped at the end.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
-- Helpers regress_util.expect_error (reports a statement's error as a
-- NOTICE with SQLSTATE, DETAIL and HINT) and regress_util.error_of
-- (returns "SQLSTATE: message"), created by 00_setup.
CREATE ROLE regress_syncwf_user;
CREATE ROLE regress_syncwf_limit_admin IN ROLE syncwf_admin;
INSERT INTO sync_limit VALUES ('priv/sem', 2);

-- every function is executable by a role with no grants
SELECT p.oid::regprocedure AS function,
       has_function_privilege('regress_syncwf_user', p.oid, 'EXECUTE') AS can_execute
  FROM pg_proc p
  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
   AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
 WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'syncwf')
 ORDER BY p.oid::regprocedure::text;

--
-- An ordinary role.
--
SET ROLE regress_syncwf_user;
-- may read the table and the views
SELECT name, sizelimit FROM sync_limit ORDER BY name;
SELECT count(*) AS locks FROM sync_locks;
SELECT count(*) AS holders FROM sync_holders;
SELECT count(*) AS waiters FROM sync_waiters;
SELECT count(*) >= 0 AS reads_stats FROM sync_lock_stats;
-- may not reset statistics, nor stop counting them
CALL regress_util.expect_error($$SELECT sync_stats_reset()$$);
CALL regress_util.expect_error($$SET syncwf.track_stats = off$$);
-- may not change limits
CALL regress_util.expect_error($$INSERT INTO sync_limit VALUES ('priv/new', 1)$$);
CALL regress_util.expect_error($$UPDATE sync_limit SET sizelimit = 5 WHERE name = 'priv/sem'$$);
CALL regress_util.expect_error($$DELETE FROM sync_limit WHERE name = 'priv/sem'$$);
CALL regress_util.expect_error($$TRUNCATE sync_limit$$);
INSERT INTO sync_limit VALUES ('priv/new', 1);
\echo :LAST_ERROR_SQLSTATE
-- ... nor call the trigger function usefully
CALL regress_util.expect_error($$SELECT sync_limit_changed()$$);
-- may take and release mutexes and semaphores, in both scopes
SELECT sync_acquire('mtx/priv/a') > 0 AS granted;
SELECT sync_try_acquire('sem/priv/sem') > 0 AS granted;
SELECT cardinality(sync_acquire(ARRAY['mtx/priv/b', 'mtx/priv/c'])) AS tokens;
BEGIN;
SELECT sync_acquire_xact('mtx/priv/x') > 0 AS granted;
SELECT cardinality(sync_try_acquire_xact(ARRAY['mtx/priv/y'])) AS tokens;
SELECT lock_name, scope, pid = pg_backend_pid() AS my_pid FROM sync_holders ORDER BY lock_name;
COMMIT;
SELECT * FROM sync_locks ORDER BY lock_name;
SELECT sync_release('mtx/priv/a') AS released;
SELECT sync_release('mtx/priv/a') AS released_again;
RESET ROLE;
-- holds belong to the session, not to the role that took them
SELECT sync_release('mtx/priv/b') AS released_by_another_role;
-- the function checks too: EXECUTE granted by hand is not enough
GRANT EXECUTE ON FUNCTION sync_stats_reset(text) TO regress_syncwf_user;
SET ROLE regress_syncwf_user;
CALL regress_util.expect_error($$SELECT sync_stats_reset()$$);
RESET ROLE;
REVOKE EXECUTE ON FUNCTION sync_stats_reset(text) FROM regress_syncwf_user;
SET ROLE regress_syncwf_user;
SELECT sync_release_all() AS released;
RESET ROLE;

--
-- A member of syncwf_admin.
--
SET ROLE regress_syncwf_limit_admin;
INSERT INTO sync_limit VALUES ('priv/new', 1);
UPDATE sync_limit SET sizelimit = 0 WHERE name = 'priv/sem';
-- the change reached the semaphore
SELECT sync_try_acquire('sem/priv/sem') IS NULL AS not_granted;
DELETE FROM sync_limit WHERE name = 'priv/new';
TRUNCATE sync_limit;
SELECT count(*) AS limits FROM sync_limit;
CALL regress_util.expect_error($$SELECT sync_try_acquire('sem/priv/sem')$$);
INSERT INTO sync_limit VALUES ('priv/sem', 1);
SELECT sync_try_acquire('sem/priv/sem') > 0 AS granted;
SELECT sync_release_all() AS released;
-- may reset statistics
SELECT sync_stats_reset('sem/priv/sem') IS NOT NULL AS stats_reset;
-- membership gives the table privileges, not ownership
CALL regress_util.expect_error($$ALTER TABLE sync_limit ADD COLUMN note text$$);
RESET ROLE;

-- the role is a member, and the grant can be taken back
SELECT pg_has_role('regress_syncwf_limit_admin', 'syncwf_admin', 'MEMBER') AS admin_member,
       pg_has_role('regress_syncwf_user', 'syncwf_admin', 'MEMBER') AS user_member;
REVOKE syncwf_admin FROM regress_syncwf_limit_admin;
SET ROLE regress_syncwf_limit_admin;
CALL regress_util.expect_error($$DELETE FROM sync_limit$$);
RESET ROLE;

DELETE FROM sync_limit WHERE name = 'priv/sem';
DROP ROLE regress_syncwf_user;
DROP ROLE regress_syncwf_limit_admin;
SELECT count(*) AS locks FROM sync_locks;
