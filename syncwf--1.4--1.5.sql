/* syncwf--1.4--1.5.sql: update the syncwf extension from version 1.4 to 1.5 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION syncwf UPDATE TO '1.5'" to load this file. \quit

-- Each change below is also in syncwf--1.5.sql, which installs 1.5 from
-- scratch; test/t/012_upgrade.pl checks that both give the same objects.

-- A cap on each semaphore's queue.  NULL (every existing row): no cap.
-- Adding a nullable column without a default rewrites nothing, and the
-- trigger sync_limit_changed does not fire: no limit changes.
ALTER TABLE sync_limit ADD COLUMN max_waiters integer
    CONSTRAINT sync_limit_max_waiters_check CHECK (max_waiters >= 0);
COMMENT ON COLUMN sync_limit.max_waiters IS
    'Longest the queue may be: a request that would wait behind that many fails with 53400 (NULL: no cap)';

-- Rows named '<prefix>/*' are patterns: the limit of every semaphore under
-- the prefix without a row of its own (the library reads them so from the
-- moment it is loaded).
COMMENT ON TABLE sync_limit IS
    'Semaphore limits: the row ''<namespace>/<key>'' sets the limit of lock ''sem/<namespace>/<key>''; a row ''<prefix>/*'' that of every semaphore under the prefix without a row of its own';

-- sync_locks shows which row applies, and the cap.  The view and its
-- function are made again (a function's result columns cannot be changed
-- in place); the library fills as many columns as the function has, so
-- the view worked with either definition meanwhile.
DROP VIEW sync_locks;
DROP FUNCTION sync_lock_status();
CREATE FUNCTION sync_lock_status(OUT lock_name text, OUT kind text,
                                 OUT sizelimit integer, OUT holders integer,
                                 OUT waiters integer, OUT limit_row text,
                                 OUT max_waiters integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'sync_lock_status'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE VIEW sync_locks AS
    SELECT lock_name, kind, sizelimit, holders, waiters, limit_row, max_waiters
      FROM sync_lock_status();
COMMENT ON VIEW sync_locks IS 'One row per live syncwf lock of the current database';
GRANT SELECT ON sync_locks TO PUBLIC;
