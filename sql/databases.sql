--
-- databases: locks belong to the database they are taken in.  The same
-- name in two databases is two locks; each database's views show only its
-- own locks; a semaphore's limit comes from its own database's sync_limit.
-- The other database is reached through dblink.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
-- Helpers regress_util.expect_error (reports a statement's error as a
-- NOTICE with SQLSTATE, DETAIL and HINT) and regress_util.error_of
-- (returns "SQLSTATE: message"), created by 00_setup.
CREATE EXTENSION IF NOT EXISTS dblink;
CREATE DATABASE regress_syncwf_other;
SELECT dblink_connect('otherdb', format('host=%s port=%s dbname=regress_syncwf_other',
           split_part(current_setting('unix_socket_directories'), ',', 1),
           current_setting('port'))) AS connected;
CREATE FUNCTION pg_temp.otherdb(stmt text) RETURNS text
LANGUAGE sql AS $$ SELECT t FROM dblink('otherdb', stmt) AS r(t text) $$;
SELECT pg_temp.otherdb('CREATE EXTENSION syncwf; SELECT ''created''') AS other_db;

-- the same mutex, held in both databases at once
SELECT sync_acquire('mtx/db/shared-name') > 0 AS granted_here;
SELECT pg_temp.otherdb($$SELECT sync_try_acquire('mtx/db/shared-name') > 0$$) AS granted_there;
SELECT lock_name, holders FROM sync_locks;
SELECT pg_temp.otherdb($$SELECT string_agg(lock_name || ' ' || holders, ', ') FROM sync_locks$$) AS there;
-- each database's sync_holders shows its own session only
SELECT count(*) AS holders_here, bool_and(pid = pg_backend_pid()) AS all_mine FROM sync_holders;
SELECT pg_temp.otherdb($$SELECT count(*) || ' ' || bool_and(pid = pg_backend_pid()) FROM sync_holders$$) AS holders_there;

-- a semaphore takes its limit from its own database
INSERT INTO sync_limit VALUES ('db/sem', 0);
SELECT pg_temp.otherdb($$INSERT INTO sync_limit VALUES ('db/sem', 2) RETURNING 'inserted'$$);
SELECT sync_try_acquire('sem/db/sem') IS NULL AS not_granted_here;
SELECT pg_temp.otherdb($$SELECT sync_try_acquire('sem/db/sem') > 0$$) AS granted_there;
SELECT pg_temp.otherdb($$SELECT string_agg(lock_name || ' ' || sizelimit, ', ' ORDER BY lock_name) FROM sync_locks$$) AS there;
-- a limit change commits into its own database only
UPDATE sync_limit SET sizelimit = 1 WHERE name = 'db/sem';
SELECT pg_temp.otherdb($$SELECT string_agg(lock_name || ' ' || sizelimit, ', ' ORDER BY lock_name) FROM sync_locks WHERE kind = 'semaphore'$$) AS there;
SELECT sync_try_acquire('sem/db/sem') > 0 AS granted_here;
SELECT lock_name, sizelimit FROM sync_locks WHERE kind = 'semaphore';
-- without a row in this database, a semaphore defined in the other one is
-- unknown here
SELECT pg_temp.otherdb($$INSERT INTO sync_limit VALUES ('db/there-only', 1) RETURNING 'inserted'$$);
CALL regress_util.expect_error($$SELECT sync_acquire('sem/db/there-only')$$);
-- releasing here does not release there
SELECT sync_release_all() AS released_here;
SELECT pg_temp.otherdb($$SELECT count(*) FROM sync_holders$$) AS holders_there;
SELECT pg_temp.otherdb($$SELECT sync_release_all()$$) AS released_there;

SELECT dblink_disconnect('otherdb');
DROP DATABASE regress_syncwf_other WITH (FORCE);
DROP EXTENSION dblink;
DELETE FROM sync_limit WHERE name = 'db/sem';
SELECT count(*) AS locks FROM sync_locks;
