/* syncwf--1.5--1.6.sql: update the syncwf extension from version 1.5 to 1.6 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION syncwf UPDATE TO '1.6'" to load this file. \quit

-- Each change below is also in syncwf--1.6.sql, which installs 1.6 from
-- scratch; test/t/012_upgrade.pl checks that both give the same objects.

-- How each semaphore's queue grants: NULL in every existing row, which is
-- 'strict', today's order; a nullable column without a default rewrites
-- nothing, and the trigger sync_limit_changed does not fire.
ALTER TABLE sync_limit ADD COLUMN queueing text
    CONSTRAINT sync_limit_queueing_check CHECK (queueing IN ('strict', 'best_effort'));
COMMENT ON COLUMN sync_limit.queueing IS
    '''strict'' (NULL: the same): grants in queue order; ''best_effort'': a waiter that fits may pass one that cannot be granted yet, at most syncwf.max_passes times each';

-- sync_waiters shows how many times best-effort queueing passed each
-- waiter.  The two views of entries and their function are made again (a
-- function's result columns cannot be changed in place); the library fills
-- as many columns as the function has, so the views worked with either
-- definition meanwhile.
DROP VIEW sync_holders, sync_waiters;
DROP FUNCTION sync_entry_status();
CREATE FUNCTION sync_entry_status(OUT lock_name text, OUT state text,
                                  OUT pid integer, OUT scope text,
                                  OUT token bigint, OUT priority integer,
                                  OUT queue_position integer,
                                  OUT request_size integer,
                                  OUT since timestamptz,
                                  OUT holder text, OUT controller text,
                                  OUT lease_expires timestamptz,
                                  OUT active boolean, OUT slots integer,
                                  OUT mode text, OUT passes integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'sync_entry_status'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE VIEW sync_holders AS
    SELECT lock_name, pid, scope, token, priority, since,
           holder, controller, lease_expires, slots, mode
      FROM sync_entry_status()
     WHERE state = 'held';
COMMENT ON VIEW sync_holders IS 'One row per granted hold of the current database';

CREATE VIEW sync_waiters AS
    SELECT lock_name, pid, scope, priority, queue_position AS position,
           request_size, since AS waiting_since, holder, controller, active,
           slots, mode, passes
      FROM sync_entry_status()
     WHERE state = 'pending';
COMMENT ON VIEW sync_waiters IS 'One row per queue entry of the current database, in queue order; entries of inactive controllers (active = false, no position) are passed over';

GRANT SELECT ON sync_holders, sync_waiters TO PUBLIC;

-- Per-lock statistics: grants, waits and how they ended (a timeout, a
-- cancel, a deadlock), wait times from a histogram, holds, the longest
-- queue (src/stats.c).
CREATE FUNCTION sync_lock_stats_rows(OUT lock_name text,
                                     OUT grants_immediate bigint,
                                     OUT grants_waited bigint,
                                     OUT timeouts bigint, OUT cancels bigint,
                                     OUT deadlocks bigint,
                                     OUT wait_count bigint,
                                     OUT wait_total interval,
                                     OUT wait_p50 interval, OUT wait_p99 interval,
                                     OUT wait_max interval,
                                     OUT hold_count bigint,
                                     OUT hold_total interval,
                                     OUT max_queue integer,
                                     OUT stats_reset timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'sync_lock_stats_rows'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE VIEW sync_lock_stats AS
    SELECT lock_name, grants_immediate, grants_waited, timeouts, cancels,
           deadlocks, wait_count, wait_total, wait_p50, wait_p99, wait_max,
           hold_count, hold_total, max_queue, stats_reset
      FROM sync_lock_stats_rows();
COMMENT ON VIEW sync_lock_stats IS 'Per-lock statistics of the current database since the last reset: one row per lock, per namespace (''<kind>/<namespace>/*'') for locks beyond syncwf.stats_max_locks, ''*'' beyond that';
GRANT SELECT ON sync_lock_stats TO PUBLIC;

CREATE FUNCTION sync_stats_reset(lock_name text DEFAULT NULL)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'sync_stats_reset_sql'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION sync_stats_reset(text) IS 'Reset the statistics of one row of sync_lock_stats, or of all rows of the current database (NULL)';

-- Administration only; the function checks it too.
REVOKE EXECUTE ON FUNCTION sync_stats_reset(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION sync_stats_reset(text) TO syncwf_admin;
