--
-- limits: the sync_limit table and how its changes reach semaphores.  A
-- change takes effect when its transaction commits (and not at all when it
-- rolls back); a live semaphore takes the new limit at once, lowering it
-- preempts nobody; deleting the row of a live semaphore keeps its holders
-- but refuses newcomers.  A second session, through dblink, plays the
-- newcomer; nothing here waits for it.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
-- Helpers regress_util.expect_error (reports a statement's error as a
-- NOTICE with SQLSTATE, DETAIL and HINT) and regress_util.error_of
-- (returns "SQLSTATE: message"), created by 00_setup.
CREATE EXTENSION IF NOT EXISTS dblink;
-- a second session of this database, over the server's unix socket
SELECT dblink_connect('other', format('host=%s port=%s dbname=%s',
           split_part(current_setting('unix_socket_directories'), ',', 1),
           current_setting('port'), current_database())) AS connected;
CREATE FUNCTION pg_temp.other(stmt text) RETURNS text
LANGUAGE sql AS $$ SELECT t FROM dblink('other', stmt) AS r(t text) $$;
CREATE VIEW pg_temp.sems AS
    SELECT lock_name, sizelimit, holders, waiters FROM sync_locks
     WHERE kind = 'semaphore' ORDER BY lock_name;

--
-- The table's own rules.
--
INSERT INTO sync_limit (name, sizelimit) VALUES ('lim/a', 2);
INSERT INTO sync_limit VALUES ('lim/with/slashes', 1), ('lim/ünï ✓', 0);
INSERT INTO sync_limit VALUES ('lim/' || repeat('k', 252), 5);   -- 256 bytes: the longest
SELECT left(name, 16) AS name_start, octet_length(name) AS bytes, sizelimit
  FROM sync_limit ORDER BY name;
-- name format: "<namespace>/<key>", no "sem/" prefix needed, no control
-- characters, at most 256 bytes, as long as Argo's (its semaphore's name,
-- "sem/" + name, is at most 260 bytes)
CALL regress_util.expect_error($$INSERT INTO sync_limit VALUES ('nokey', 1)$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit VALUES ('/key', 1)$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit VALUES ('ns/', 1)$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit VALUES ('', 1)$$);
-- (control characters: without the detail, which would show them raw)
\x on
SELECT regress_util.error_of($$INSERT INTO sync_limit VALUES (E'ns/a\nb', 1)$$) AS newline,
       regress_util.error_of($$INSERT INTO sync_limit VALUES (E'ns/a\tb', 1)$$) AS tab,
       regress_util.error_of($$INSERT INTO sync_limit VALUES (E'n\x7fs/key', 1)$$) AS del;
\x off
CALL regress_util.expect_error($$INSERT INTO sync_limit VALUES ('lim/' || repeat('k', 253), 1)$$);
-- sizelimit: not NULL, not negative; name: unique, not NULL
CALL regress_util.expect_error($$INSERT INTO sync_limit VALUES ('lim/neg', -1)$$);
CALL regress_util.expect_error($$UPDATE sync_limit SET sizelimit = -5 WHERE name = 'lim/a'$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit VALUES ('lim/null', NULL)$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit (name) VALUES ('lim/default')$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit VALUES (NULL, 1)$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit VALUES ('lim/a', 3)$$);
SELECT left(name, 16) AS name_start, sizelimit FROM sync_limit ORDER BY name;
-- every valid row works as a semaphore limit
SELECT sync_try_acquire('sem/lim/with/slashes') > 0 AS granted,
       sync_try_acquire('sem/lim/ünï ✓') IS NULL AS zero_not_granted,
       sync_try_acquire('sem/lim/' || repeat('k', 252)) > 0 AS granted;
SELECT left(lock_name, 24) AS lock_name_start, sizelimit, holders, waiters
  FROM pg_temp.sems;
SELECT sync_release_all() AS released;
-- the trigger function is only for the triggers
CALL regress_util.expect_error($$SELECT sync_limit_changed()$$);
SELECT sync_limit_changed();
\echo :LAST_ERROR_SQLSTATE
DELETE FROM sync_limit;

--
-- A semaphore without a row.
--
CALL regress_util.expect_error($$SELECT sync_acquire('sem/lim/missing')$$);
-- the "sem/" prefix is not part of the row's name
INSERT INTO sync_limit VALUES ('sem/lim/missing', 1);
CALL regress_util.expect_error($$SELECT sync_acquire('sem/lim/missing')$$);
DELETE FROM sync_limit;

--
-- Changes are seen by new acquires right after they commit.
--
INSERT INTO sync_limit VALUES ('lim/a', 0);
SELECT sync_try_acquire('sem/lim/a') IS NULL AS not_granted;
UPDATE sync_limit SET sizelimit = 1 WHERE name = 'lim/a';
SELECT sync_try_acquire('sem/lim/a') > 0 AS granted;
SELECT * FROM pg_temp.sems;
SELECT sync_release('sem/lim/a') AS released;
UPDATE sync_limit SET sizelimit = 0 WHERE name = 'lim/a';
SELECT sync_try_acquire('sem/lim/a') IS NULL AS not_granted;
DELETE FROM sync_limit WHERE name = 'lim/a';
CALL regress_util.expect_error($$SELECT sync_try_acquire('sem/lim/a')$$);
INSERT INTO sync_limit VALUES ('lim/a', 1);
SELECT sync_try_acquire('sem/lim/a') > 0 AS granted;
SELECT sync_release('sem/lim/a') AS released;
-- ... also changes committed by another session
SELECT pg_temp.other($$UPDATE sync_limit SET sizelimit = 0 WHERE name = 'lim/a' RETURNING 'updated'$$);
SELECT sync_try_acquire('sem/lim/a') IS NULL AS not_granted;
SELECT pg_temp.other($$UPDATE sync_limit SET sizelimit = 1 WHERE name = 'lim/a' RETURNING 'updated'$$);
SELECT sync_try_acquire('sem/lim/a') > 0 AS granted;
SELECT sync_release('sem/lim/a') AS released;
-- a change committed by another session during this session's REPEATABLE
-- READ transaction: the limit of a semaphore not used before is read with a
-- fresh snapshot, not the transaction's
INSERT INTO sync_limit VALUES ('lim/rr', 1);
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT sizelimit FROM sync_limit WHERE name = 'lim/rr';
SELECT pg_temp.other($$UPDATE sync_limit SET sizelimit = 0 WHERE name = 'lim/rr' RETURNING 'updated'$$);
SELECT sizelimit AS snapshot_sizelimit FROM sync_limit WHERE name = 'lim/rr';
SELECT sync_try_acquire_xact('sem/lim/rr') IS NULL AS not_granted;
COMMIT;
-- ... and of a semaphore used before: the committed change reached it
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT sizelimit FROM sync_limit WHERE name = 'lim/a';
SELECT pg_temp.other($$UPDATE sync_limit SET sizelimit = 0 WHERE name = 'lim/a' RETURNING 'updated'$$);
SELECT sync_try_acquire_xact('sem/lim/a') IS NULL AS not_granted;
COMMIT;
UPDATE sync_limit SET sizelimit = 1 WHERE name = 'lim/a';
DELETE FROM sync_limit WHERE name = 'lim/rr';

--
-- A live semaphore takes a committed change at once.
--
UPDATE sync_limit SET sizelimit = 2 WHERE name = 'lim/a';
SELECT sync_acquire('sem/lim/a') AS mine \gset
SELECT pg_temp.other($$SELECT sync_try_acquire('sem/lim/a') > 0$$) AS other_granted;
SELECT * FROM pg_temp.sems;
-- raised
UPDATE sync_limit SET sizelimit = 5 WHERE name = 'lim/a';
SELECT * FROM pg_temp.sems;
-- lowered below the number of holders: nobody is preempted, sync_locks
-- shows the new limit, and no new holder is admitted
UPDATE sync_limit SET sizelimit = 1 WHERE name = 'lim/a';
SELECT * FROM pg_temp.sems;
SELECT count(*) AS holders FROM sync_holders WHERE lock_name = 'sem/lim/a';
SELECT pg_temp.other($$SELECT sync_release('sem/lim/a')$$) AS other_released;
SELECT pg_temp.other($$SELECT sync_try_acquire('sem/lim/a') IS NULL$$) AS other_not_granted;
SELECT * FROM pg_temp.sems;
UPDATE sync_limit SET sizelimit = 0 WHERE name = 'lim/a';
SELECT * FROM pg_temp.sems;
-- this session's hold is untouched throughout
SELECT token = :mine AS same_token, scope FROM sync_holders
 WHERE lock_name = 'sem/lim/a' AND pid = pg_backend_pid();
SELECT sync_acquire('sem/lim/a', 0, '0') = :mine AS same_token;
UPDATE sync_limit SET sizelimit = 2 WHERE name = 'lim/a';

--
-- A limit change in a transaction that rolls back has no effect.
--
BEGIN;
UPDATE sync_limit SET sizelimit = 9 WHERE name = 'lim/a';
ROLLBACK;
SELECT * FROM pg_temp.sems;
INSERT INTO sync_limit VALUES ('lim/b', 1);
BEGIN;
DELETE FROM sync_limit WHERE name = 'lim/b';
ROLLBACK;
SELECT sync_try_acquire('sem/lim/b') > 0 AS granted;
SELECT sync_release('sem/lim/b') AS released;
BEGIN;
INSERT INTO sync_limit VALUES ('lim/rolled-back', 1);
ROLLBACK;
CALL regress_util.expect_error($$SELECT sync_try_acquire('sem/lim/rolled-back')$$);

--
-- A change in a savepoint that is rolled back has no effect after COMMIT;
-- the rest of the transaction's changes do.
--
BEGIN;
UPDATE sync_limit SET sizelimit = 3 WHERE name = 'lim/a';
SAVEPOINT s1;
UPDATE sync_limit SET sizelimit = 7 WHERE name = 'lim/a';
DELETE FROM sync_limit WHERE name = 'lim/b';
ROLLBACK TO SAVEPOINT s1;
COMMIT;
SELECT name, sizelimit FROM sync_limit ORDER BY name;
SELECT * FROM pg_temp.sems;
SELECT sync_try_acquire('sem/lim/b') > 0 AS granted;
SELECT sync_release('sem/lim/b') AS released;
-- a savepoint that is released keeps its change
BEGIN;
SAVEPOINT s1;
UPDATE sync_limit SET sizelimit = 4 WHERE name = 'lim/a';
RELEASE SAVEPOINT s1;
COMMIT;
SELECT * FROM pg_temp.sems;
-- several changes of one row in one transaction: the last one counts
BEGIN;
UPDATE sync_limit SET sizelimit = 10 WHERE name = 'lim/a';
DELETE FROM sync_limit WHERE name = 'lim/a';
INSERT INTO sync_limit VALUES ('lim/a', 6);
COMMIT;
SELECT * FROM pg_temp.sems;
-- renaming a row moves the limit: the old name has none any more
UPDATE sync_limit SET name = 'lim/renamed' WHERE name = 'lim/a';
SELECT * FROM pg_temp.sems;
UPDATE sync_limit SET name = 'lim/a' WHERE name = 'lim/renamed';
SELECT * FROM pg_temp.sems;

--
-- Deleting the row of a live semaphore: its holders keep it (sync_locks
-- shows no limit); this session, which holds it, gets its hold back when it
-- asks again; newcomers are refused until the row is back.
--
DELETE FROM sync_limit WHERE name = 'lim/a';
SELECT * FROM pg_temp.sems;
SELECT sync_acquire('sem/lim/a') = :mine AS same_token;
SELECT pg_temp.other($$SELECT sync_try_acquire('sem/lim/a')::text$$);
\echo :LAST_ERROR_SQLSTATE
CALL regress_util.expect_error($$SELECT pg_temp.other('SELECT sync_acquire(''sem/lim/a'', 0, ''0'')::text')$$);
CALL regress_util.expect_error($$SELECT pg_temp.other('SELECT sync_acquire_xact(ARRAY[''mtx/lim/x'', ''sem/lim/a''])::text')$$);
-- the refused array request took nothing
SELECT count(*) AS locks FROM sync_locks WHERE lock_name = 'mtx/lim/x';
-- the row is back: newcomers are admitted again, under the new limit
INSERT INTO sync_limit VALUES ('lim/a', 2);
SELECT * FROM pg_temp.sems;
SELECT pg_temp.other($$SELECT sync_try_acquire('sem/lim/a') > 0$$) AS other_granted;
SELECT * FROM pg_temp.sems;
SELECT pg_temp.other($$SELECT sync_release_all()$$) AS other_released;
-- once the semaphore is idle it is gone, and with no row it cannot be
-- created again
DELETE FROM sync_limit WHERE name = 'lim/a';
SELECT sync_release('sem/lim/a') AS released;
SELECT * FROM pg_temp.sems;
CALL regress_util.expect_error($$SELECT sync_acquire('sem/lim/a')$$);

--
-- TRUNCATE sync_limit.
--
INSERT INTO sync_limit VALUES ('lim/a', 2), ('lim/c', 3);
SELECT sync_acquire('sem/lim/a') > 0 AS granted, sync_acquire('sem/lim/c') > 0 AS granted;
-- rolled back: nothing changes
BEGIN;
TRUNCATE sync_limit;
ROLLBACK;
SELECT * FROM pg_temp.sems;
SELECT pg_temp.other($$SELECT sync_try_acquire('sem/lim/a') > 0$$) AS other_granted;
SELECT pg_temp.other($$SELECT sync_release_all()$$) AS other_released;
-- committed: every live semaphore loses its limit, but keeps its holders
TRUNCATE sync_limit;
SELECT * FROM pg_temp.sems;
CALL regress_util.expect_error($$SELECT pg_temp.other('SELECT sync_try_acquire(''sem/lim/c'')::text')$$);
CALL regress_util.expect_error($$SELECT sync_acquire('sem/lim/d')$$);
-- TRUNCATE and re-INSERT in one transaction: the rows present at commit
BEGIN;
TRUNCATE sync_limit;
INSERT INTO sync_limit VALUES ('lim/c', 4);
COMMIT;
SELECT * FROM pg_temp.sems;
-- a TRUNCATE in a savepoint that is rolled back changes nothing
BEGIN;
SAVEPOINT s1;
TRUNCATE sync_limit;
ROLLBACK TO SAVEPOINT s1;
COMMIT;
SELECT * FROM pg_temp.sems;
SELECT sync_release_all() AS released;
TRUNCATE sync_limit;

--
-- PREPARE TRANSACTION after changing sync_limit is refused (0A000), before
-- PostgreSQL looks at max_prepared_transactions; the change is rolled back.
--
BEGIN;
INSERT INTO sync_limit VALUES ('lim/prepared', 1);
PREPARE TRANSACTION 'syncwf_regress_limits';
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS rows FROM sync_limit;
SELECT count(*) AS prepared FROM pg_prepared_xacts;
BEGIN;
TRUNCATE sync_limit;
PREPARE TRANSACTION 'syncwf_regress_limits';
\echo :LAST_ERROR_SQLSTATE

--
-- The sync_limit table of the extension must exist under its name: renamed
-- (here in a transaction that rolls back), semaphores cannot be used.
--
INSERT INTO sync_limit VALUES ('lim/a', 1);
BEGIN;
ALTER TABLE sync_limit RENAME TO sync_limit_renamed;
CALL regress_util.expect_error($$SELECT sync_acquire('sem/lim/a')$$);
CALL regress_util.expect_error($$SELECT sync_try_acquire(ARRAY['mtx/lim/m', 'sem/lim/a'])$$);
-- mutexes do not need it
SELECT sync_try_acquire_xact('mtx/lim/m') > 0 AS granted;
ROLLBACK;
SELECT sync_try_acquire('sem/lim/a') > 0 AS granted;
SELECT sync_release('sem/lim/a') AS released;
DELETE FROM sync_limit;

--
-- Until it commits, a change is invisible to the engine, for the changing
-- transaction too: a row it inserted does not exist yet, a limit it updated
-- or a row it deleted still has the committed value.
--
INSERT INTO sync_limit VALUES ('lim/in-xact', 1);
BEGIN;
INSERT INTO sync_limit VALUES ('lim/new-in-xact', 3);
CALL regress_util.expect_error($$SELECT sync_try_acquire('sem/lim/new-in-xact')$$);
UPDATE sync_limit SET sizelimit = 0 WHERE name = 'lim/in-xact';
SELECT sync_try_acquire_xact('sem/lim/in-xact') > 0 AS granted_at_committed_limit;
SELECT lock_name, sizelimit FROM sync_locks WHERE lock_name = 'sem/lim/in-xact';
COMMIT;
-- committed: both changes apply now
SELECT sync_try_acquire('sem/lim/in-xact') IS NULL AS not_granted;
SELECT sync_try_acquire('sem/lim/new-in-xact') > 0 AS granted;
SELECT lock_name, sizelimit FROM sync_locks ORDER BY lock_name;
SELECT sync_release_all() AS released;
BEGIN;
DELETE FROM sync_limit WHERE name = 'lim/new-in-xact';
SELECT sync_try_acquire_xact('sem/lim/new-in-xact') > 0 AS granted_row_still_committed;
COMMIT;
CALL regress_util.expect_error($$SELECT sync_try_acquire('sem/lim/new-in-xact')$$);
DELETE FROM sync_limit;

--
-- A rolled-back change has no effect, also when the transaction tried to
-- use the semaphore while its uncommitted row was in place: neither this
-- session nor any other may see the rolled-back limit afterwards.  (Whether
-- the transaction itself may use the semaphore is not checked here: the
-- attempts inside it ignore their outcome.)
--
INSERT INTO sync_limit VALUES ('lim/ru', 2), ('lim/rs', 1);
-- rolled-back UPDATE
BEGIN;
UPDATE sync_limit SET sizelimit = 0 WHERE name = 'lim/ru';
DO $$ BEGIN PERFORM regress_util.error_of($q$SELECT sync_try_acquire_xact('sem/lim/ru')$q$); END $$;
ROLLBACK;
SELECT sizelimit FROM sync_limit WHERE name = 'lim/ru';
SELECT sync_try_acquire('sem/lim/ru') IS NOT NULL AS granted;
SELECT pg_temp.other($$SELECT sync_try_acquire('sem/lim/ru') IS NOT NULL$$) AS other_granted;
DO $$ BEGIN PERFORM sync_release_all(), pg_temp.other('SELECT sync_release_all()'); END $$;
-- rolled-back INSERT
BEGIN;
INSERT INTO sync_limit VALUES ('lim/ri', 1);
DO $$ BEGIN PERFORM regress_util.error_of($q$SELECT sync_try_acquire_xact('sem/lim/ri')$q$); END $$;
ROLLBACK;
CALL regress_util.expect_error($$SELECT sync_try_acquire('sem/lim/ri')$$);
CALL regress_util.expect_error($$SELECT pg_temp.other('SELECT sync_try_acquire(''sem/lim/ri'')::text')$$);
DO $$ BEGIN PERFORM sync_release_all(), pg_temp.other('SELECT sync_release_all()'); END $$;
-- rolled-back UPDATE, with a session-scope acquire inside the transaction
-- (a hold that would outlive it): afterwards the semaphore has the
-- committed limit
BEGIN;
UPDATE sync_limit SET sizelimit = 5 WHERE name = 'lim/rs';
DO $$ BEGIN PERFORM regress_util.error_of($q$SELECT sync_acquire('sem/lim/rs')$q$); END $$;
ROLLBACK;
SELECT sync_acquire('sem/lim/rs') > 0 AS held;
SELECT lock_name, sizelimit, holders FROM sync_locks WHERE lock_name = 'sem/lim/rs';
SELECT pg_temp.other($$SELECT sync_try_acquire('sem/lim/rs') IS NULL$$) AS other_not_granted;
DO $$ BEGIN PERFORM sync_release_all(), pg_temp.other('SELECT sync_release_all()'); END $$;
DELETE FROM sync_limit;

-- clean up
SELECT pg_temp.other($$SELECT sync_release_all()$$) AS other_released;
SELECT dblink_disconnect('other');
DROP EXTENSION dblink;
SELECT count(*) AS rows FROM sync_limit;
SELECT count(*) AS locks FROM sync_locks;
