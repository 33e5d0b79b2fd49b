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
-- waiter, and both views each entry's fair key (and a waiter's weight).  The two views of entries and their function are made again (a
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
                                  OUT mode text, OUT passes integer,
                                  OUT fair_key text, OUT fair_weight integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'sync_entry_status'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE VIEW sync_holders AS
    SELECT lock_name, pid, scope, token, priority, since,
           holder, controller, lease_expires, slots, mode, fair_key
      FROM sync_entry_status()
     WHERE state = 'held';
COMMENT ON VIEW sync_holders IS 'One row per granted hold of the current database';

CREATE VIEW sync_waiters AS
    SELECT lock_name, pid, scope, priority, queue_position AS position,
           request_size, since AS waiting_since, holder, controller, active,
           slots, mode, passes, fair_key, fair_weight
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

--
-- Weights of fair keys: within one priority, a queue is shared among fair
-- keys in proportion to their weights (docs/reference.md, fair queues).
--
CREATE TABLE sync_fair_weight (
    pattern  text NOT NULL
             CONSTRAINT sync_fair_weight_pattern_check
             CHECK (pattern ~ '^[^/[:cntrl:]]+/[^[:cntrl:]]+$' AND octet_length(pattern) <= 256),
    fair_key text NOT NULL
             CONSTRAINT sync_fair_weight_fair_key_check
             CHECK (fair_key ~ '^[^[:cntrl:]]+$' AND octet_length(fair_key) <= 63),
    weight   integer NOT NULL DEFAULT 1
             CONSTRAINT sync_fair_weight_weight_check CHECK (weight BETWEEN 1 AND 1000000),
    PRIMARY KEY (pattern, fair_key)
);
COMMENT ON TABLE sync_fair_weight IS
    'Weights of fair keys: the row (''<namespace>/<key>'', K) sets the weight of fair key K on locks ''mtx/<namespace>/<key>'' and ''sem/<namespace>/<key>''; a pattern ''<prefix>/*'' on every lock under the prefix without a row of its own; 1 where no row applies';
SELECT pg_catalog.pg_extension_config_dump('sync_fair_weight', '');

REVOKE ALL ON sync_fair_weight FROM PUBLIC;
GRANT SELECT ON sync_fair_weight TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON sync_fair_weight TO syncwf_admin;

-- Weight changes reach the queues when the changing transaction commits.
CREATE FUNCTION sync_fair_weight_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'sync_fair_weight_changed'
LANGUAGE C;

CREATE TRIGGER sync_fair_weight_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON sync_fair_weight
    FOR EACH STATEMENT EXECUTE FUNCTION sync_fair_weight_changed();

-- The fair key of a keyed request: a nullable column without a default
-- rewrites nothing; every existing row has none.
ALTER TABLE sync_state ADD COLUMN fair_key text
    CONSTRAINT sync_state_fair_key_check
    CHECK (fair_key ~ '^[^[:cntrl:]]+$' AND octet_length(fair_key) <= 63);
COMMENT ON COLUMN sync_state.fair_key IS
    'Fair key (a tenant, user or project) whose share of each queue the request takes; NULL: the implicit key of requests without one';

-- The waiting acquire functions and sync_request take a fair key.  A new
-- argument makes a new function: the old ones are dropped first (nothing
-- depends on them; the library reads as many arguments as a definition
-- has, so calls through either definition work meanwhile).
DROP FUNCTION sync_acquire(text, integer, interval, integer, text);
DROP FUNCTION sync_acquire(text[], integer, interval, integer, text);
DROP FUNCTION sync_acquire_xact(text, integer, interval, integer, text);
DROP FUNCTION sync_acquire_xact(text[], integer, interval, integer, text);
DROP FUNCTION sync_request(text, text, integer, text, interval, timestamptz, integer, text);
DROP FUNCTION sync_request(text[], text, integer, text, interval, timestamptz, integer, text);

CREATE FUNCTION sync_acquire(lock_name text, priority integer DEFAULT 0,
                             timeout interval DEFAULT NULL,
                             slots integer DEFAULT 1,
                             mode text DEFAULT 'exclusive',
                             fair_key text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sync_acquire'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_acquire(lock_names text[], priority integer DEFAULT 0,
                             timeout interval DEFAULT NULL,
                             slots integer DEFAULT 1,
                             mode text DEFAULT 'exclusive',
                             fair_key text DEFAULT NULL)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'sync_acquire_array'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_acquire_xact(lock_name text, priority integer DEFAULT 0,
                                  timeout interval DEFAULT NULL,
                                  slots integer DEFAULT 1,
                                  mode text DEFAULT 'exclusive',
                                  fair_key text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sync_acquire_xact'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_acquire_xact(lock_names text[], priority integer DEFAULT 0,
                                  timeout interval DEFAULT NULL,
                                  slots integer DEFAULT 1,
                                  mode text DEFAULT 'exclusive',
                                  fair_key text DEFAULT NULL)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'sync_acquire_xact_array'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_request(lock_name text, holder text,
                             priority integer DEFAULT 0,
                             controller text DEFAULT NULL,
                             lease interval DEFAULT NULL,
                             queued_at timestamptz DEFAULT NULL,
                             slots integer DEFAULT 1,
                             mode text DEFAULT 'exclusive',
                             fair_key text DEFAULT NULL)
RETURNS TABLE (status text, token bigint, queue_position integer)
AS 'MODULE_PATHNAME', 'sync_request'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;

CREATE FUNCTION sync_request(lock_names text[], holder text,
                             priority integer DEFAULT 0,
                             controller text DEFAULT NULL,
                             lease interval DEFAULT NULL,
                             queued_at timestamptz DEFAULT NULL,
                             slots integer DEFAULT 1,
                             mode text DEFAULT 'exclusive',
                             fair_key text DEFAULT NULL)
RETURNS TABLE (lock_name text, status text, token bigint, queue_position integer)
AS 'MODULE_PATHNAME', 'sync_request_array'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 4;
