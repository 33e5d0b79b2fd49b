/* syncwf--1.4--1.5.sql: update the syncwf extension from version 1.4 to 1.5 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION syncwf UPDATE TO '1.5'" to load this file. \quit

-- Each change below is also in the current full script (syncwf--1.6.sql);
-- test/t/012_upgrade.pl checks that 1.0 updated through this script and
-- the rest of the chain gives the same objects as that script.

-- A cap on each semaphore's queue.  NULL (every existing row): no cap.
-- Adding a nullable column without a default rewrites nothing, and the
-- trigger sync_limit_changed does not fire: no limit changes.
ALTER TABLE sync_limit ADD COLUMN max_waiters integer
    CONSTRAINT sync_limit_max_waiters_check CHECK (max_waiters >= 0);
COMMENT ON COLUMN sync_limit.max_waiters IS
    'Longest the queue may be: a request that would wait behind that many fails with 53400 (NULL: no cap)';

-- A rate for each semaphore: NULL in every existing row (no rate), so
-- nothing is rewritten and no limit changes.
ALTER TABLE sync_limit ADD COLUMN rate_limit integer
    CONSTRAINT sync_limit_rate_limit_check CHECK (rate_limit > 0);
ALTER TABLE sync_limit ADD COLUMN rate_period interval
    CONSTRAINT sync_limit_rate_period_check CHECK (rate_period > interval '0');
ALTER TABLE sync_limit ADD CONSTRAINT sync_limit_rate_check
    CHECK ((rate_limit IS NULL) = (rate_period IS NULL));
COMMENT ON COLUMN sync_limit.rate_limit IS
    'Rate: at most this many slots granted per rate_period, a token bucket refilled evenly (NULL: no rate)';
COMMENT ON COLUMN sync_limit.rate_period IS
    'The period of rate_limit (set both or neither)';

-- Rows named '<prefix>/*' are patterns: the limit of every semaphore under
-- the prefix without a row of its own (the library reads them so from the
-- moment it is loaded).
COMMENT ON TABLE sync_limit IS
    'Semaphore limits: the row ''<namespace>/<key>'' sets the limit of lock ''sem/<namespace>/<key>''; a row ''<prefix>/*'' that of every semaphore under the prefix without a row of its own';

-- Weighted slots and shared mutexes: the acquire functions and
-- sync_request take slots and mode.  A function's arguments cannot be
-- changed in place, and a second function with two more defaulted
-- arguments would make every existing call ambiguous, so each is made
-- again (the library reads as many arguments as the definition has, so
-- calls worked with either definition meanwhile).
DROP FUNCTION sync_acquire(text, integer, interval);
DROP FUNCTION sync_try_acquire(text, integer);
DROP FUNCTION sync_acquire(text[], integer, interval);
DROP FUNCTION sync_try_acquire(text[], integer);
DROP FUNCTION sync_acquire_xact(text, integer, interval);
DROP FUNCTION sync_try_acquire_xact(text, integer);
DROP FUNCTION sync_acquire_xact(text[], integer, interval);
DROP FUNCTION sync_try_acquire_xact(text[], integer);
DROP FUNCTION sync_request(text, text, integer, text, interval, timestamptz);
DROP FUNCTION sync_request(text[], text, integer, text, interval, timestamptz);

CREATE FUNCTION sync_acquire(lock_name text, priority integer DEFAULT 0,
                             timeout interval DEFAULT NULL,
                             slots integer DEFAULT 1,
                             mode text DEFAULT 'exclusive')
RETURNS bigint
AS 'MODULE_PATHNAME', 'sync_acquire'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_try_acquire(lock_name text, priority integer DEFAULT 0,
                                 slots integer DEFAULT 1,
                                 mode text DEFAULT 'exclusive')
RETURNS bigint
AS 'MODULE_PATHNAME', 'sync_try_acquire'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_acquire(lock_names text[], priority integer DEFAULT 0,
                             timeout interval DEFAULT NULL,
                             slots integer DEFAULT 1,
                             mode text DEFAULT 'exclusive')
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'sync_acquire_array'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_try_acquire(lock_names text[], priority integer DEFAULT 0,
                                 slots integer DEFAULT 1,
                                 mode text DEFAULT 'exclusive')
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'sync_try_acquire_array'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_acquire_xact(lock_name text, priority integer DEFAULT 0,
                                  timeout interval DEFAULT NULL,
                                  slots integer DEFAULT 1,
                                  mode text DEFAULT 'exclusive')
RETURNS bigint
AS 'MODULE_PATHNAME', 'sync_acquire_xact'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_try_acquire_xact(lock_name text, priority integer DEFAULT 0,
                                      slots integer DEFAULT 1,
                                      mode text DEFAULT 'exclusive')
RETURNS bigint
AS 'MODULE_PATHNAME', 'sync_try_acquire_xact'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_acquire_xact(lock_names text[], priority integer DEFAULT 0,
                                  timeout interval DEFAULT NULL,
                                  slots integer DEFAULT 1,
                                  mode text DEFAULT 'exclusive')
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'sync_acquire_xact_array'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_try_acquire_xact(lock_names text[], priority integer DEFAULT 0,
                                      slots integer DEFAULT 1,
                                      mode text DEFAULT 'exclusive')
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'sync_try_acquire_xact_array'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_request(lock_name text, holder text,
                             priority integer DEFAULT 0,
                             controller text DEFAULT NULL,
                             lease interval DEFAULT NULL,
                             queued_at timestamptz DEFAULT NULL,
                             slots integer DEFAULT 1,
                             mode text DEFAULT 'exclusive')
RETURNS TABLE (status text, token bigint, queue_position integer)
AS 'MODULE_PATHNAME', 'sync_request'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;

CREATE FUNCTION sync_request(lock_names text[], holder text,
                             priority integer DEFAULT 0,
                             controller text DEFAULT NULL,
                             lease interval DEFAULT NULL,
                             queued_at timestamptz DEFAULT NULL,
                             slots integer DEFAULT 1,
                             mode text DEFAULT 'exclusive')
RETURNS TABLE (lock_name text, status text, token bigint, queue_position integer)
AS 'MODULE_PATHNAME', 'sync_request_array'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 4;

-- What each keyed request takes: its slots, and a mutex's mode.  Adding a
-- column with a constant default rewrites nothing.  Existing rows were
-- all exclusive; the mutexes' rows say so, as new ones do (the guard
-- trigger, which lets only syncwf write these columns, and the claim
-- trigger are off for that one statement).
ALTER TABLE sync_state ADD COLUMN slots integer NOT NULL DEFAULT 1
    CONSTRAINT sync_state_slots_check CHECK (slots >= 1);
ALTER TABLE sync_state ADD COLUMN mode text
    CONSTRAINT sync_state_mode_check CHECK (mode IN ('exclusive', 'shared'));
COMMENT ON COLUMN sync_state.slots IS
    'Slots of the semaphore the request takes (1 for a mutex)';
COMMENT ON COLUMN sync_state.mode IS
    '''exclusive'' or ''shared'' for a mutex, NULL for a semaphore';
ALTER TABLE sync_state DISABLE TRIGGER sync_state_guard;
ALTER TABLE sync_state DISABLE TRIGGER sync_state_claimed;
UPDATE sync_state SET mode = 'exclusive' WHERE name LIKE 'mtx/%';
ALTER TABLE sync_state ENABLE TRIGGER sync_state_guard;
ALTER TABLE sync_state ENABLE TRIGGER sync_state_claimed;

-- The views show which sync_limit row applies, the queue cap, and the
-- slots and modes.  The views and their functions are made again (a
-- function's result columns cannot be changed in place); the library
-- fills as many columns as the function has, so the views worked with
-- either definition meanwhile.
DROP VIEW sync_locks, sync_holders, sync_waiters;
DROP FUNCTION sync_lock_status();
DROP FUNCTION sync_entry_status();
CREATE FUNCTION sync_lock_status(OUT lock_name text, OUT kind text,
                                 OUT sizelimit integer, OUT holders integer,
                                 OUT waiters integer, OUT limit_row text,
                                 OUT max_waiters integer, OUT slots_held integer,
                                 OUT rate_tokens integer,
                                 OUT rate_next_refill timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'sync_lock_status'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_entry_status(OUT lock_name text, OUT state text,
                                  OUT pid integer, OUT scope text,
                                  OUT token bigint, OUT priority integer,
                                  OUT queue_position integer,
                                  OUT request_size integer,
                                  OUT since timestamptz,
                                  OUT holder text, OUT controller text,
                                  OUT lease_expires timestamptz,
                                  OUT active boolean, OUT slots integer,
                                  OUT mode text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'sync_entry_status'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE VIEW sync_locks AS
    SELECT lock_name, kind, sizelimit, holders, waiters, limit_row, max_waiters,
           slots_held, rate_tokens, rate_next_refill
      FROM sync_lock_status();
COMMENT ON VIEW sync_locks IS 'One row per live syncwf lock of the current database';

CREATE VIEW sync_holders AS
    SELECT lock_name, pid, scope, token, priority, since,
           holder, controller, lease_expires, slots, mode
      FROM sync_entry_status()
     WHERE state = 'held';
COMMENT ON VIEW sync_holders IS 'One row per granted hold of the current database';

CREATE VIEW sync_waiters AS
    SELECT lock_name, pid, scope, priority, queue_position AS position,
           request_size, since AS waiting_since, holder, controller, active,
           slots, mode
      FROM sync_entry_status()
     WHERE state = 'pending';
COMMENT ON VIEW sync_waiters IS 'One row per queue entry of the current database, in queue order; entries of inactive controllers (active = false, no position) are passed over';

GRANT SELECT ON sync_locks, sync_holders, sync_waiters TO PUBLIC;
