--
-- discard: DISCARD ALL ends the session's holds, as it releases advisory
-- locks, so that a pooler's next client of this server connection does not
-- inherit them; the other forms of DISCARD leave them.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
INSERT INTO sync_limit VALUES ('discard/s', 2);

SELECT sync_acquire('mtx/discard/a') > 0 AS a,
       sync_acquire('sem/discard/s') > 0 AS s;
SELECT pg_advisory_lock(4242);
SELECT lock_name, scope FROM sync_holders WHERE pid = pg_backend_pid() ORDER BY 1;

-- the other forms keep them
DISCARD PLANS;
DISCARD SEQUENCES;
DISCARD TEMP;
SELECT count(*) AS held_after_other_discards FROM sync_holders WHERE pid = pg_backend_pid();

-- DISCARD ALL cannot run in a transaction block; the holds stay
BEGIN;
SELECT sync_acquire_xact('mtx/discard/x') > 0 AS x;
DISCARD ALL;
ROLLBACK;
SELECT count(*) AS held_after_failed_discard FROM sync_holders WHERE pid = pg_backend_pid();

-- DISCARD ALL: the holds go with the advisory lock
DISCARD ALL;
SELECT count(*) AS held_after_discard_all FROM sync_holders WHERE pid = pg_backend_pid();
SELECT count(*) AS advisory_after_discard_all FROM pg_locks
 WHERE locktype = 'advisory' AND pid = pg_backend_pid();
SELECT lock_name FROM sync_locks WHERE lock_name LIKE '%discard%';
-- and they can be taken again
SELECT sync_try_acquire('mtx/discard/a') > 0 AS again;
SELECT sync_release_all() AS released;

-- clean up
DELETE FROM sync_limit WHERE name = 'discard/s';
