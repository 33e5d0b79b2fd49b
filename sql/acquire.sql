--
-- acquire: session-scope acquire, try-acquire and release of single locks;
-- fencing tokens; a semaphore with no free slot (sizelimit 0) for the
-- not-granted paths, which one session can reach on its own.  Contention
-- between sessions is covered by the isolation specs.
--
-- Tokens, pids and timestamps vary from run to run: tokens are kept in psql
-- variables and only compared with each other.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
-- Helpers regress_util.expect_error (reports a statement's error as a
-- NOTICE with SQLSTATE, DETAIL and HINT) and regress_util.error_of
-- (returns "SQLSTATE: message"), created by 00_setup.

-- a first grant
SELECT sync_acquire('mtx/acq/a') AS t1 \gset
SELECT :t1 > 0 AS token_positive;
SELECT lock_name, scope, token = :t1 AS token_matches, priority
  FROM sync_holders WHERE pid = pg_backend_pid();
SELECT * FROM sync_locks;

-- acquiring a lock this session holds returns the same token and counts once
SELECT sync_acquire('mtx/acq/a') = :t1 AS same_token;
SELECT sync_try_acquire('mtx/acq/a') = :t1 AS same_token_try;
SELECT sync_acquire('mtx/acq/a', 5, '0') = :t1 AS same_token_other_args;
SELECT count(*) AS holds, min(priority) AS priority_kept
  FROM sync_holders WHERE lock_name = 'mtx/acq/a';
SELECT holders FROM sync_locks WHERE lock_name = 'mtx/acq/a';

-- release: true once, then false with a WARNING; the lock is gone
SELECT sync_release('mtx/acq/a') AS released;
SELECT sync_release('mtx/acq/a') AS released_again;
SELECT count(*) AS locks FROM sync_locks;

-- the next grant of the same lock has a larger token
SELECT sync_acquire('mtx/acq/a') AS t2 \gset
SELECT :t2 > :t1 AS token_increased;
-- and a grant of another lock, larger again (one counter for every lock)
SELECT sync_try_acquire('mtx/acq/b') AS t3 \gset
SELECT :t3 > :t2 AS token_increased;
SELECT sync_release('mtx/acq/a') AS released, sync_release('mtx/acq/b') AS released;

-- tokens strictly increase over many successive grants of one lock, by
-- every acquire function
DO $$
DECLARE
    prev bigint := 0;
    t bigint;
    increasing boolean := true;
BEGIN
    FOR i IN 1..200 LOOP
        t := CASE i % 4
                 WHEN 0 THEN sync_acquire('mtx/acq/seq')
                 WHEN 1 THEN sync_try_acquire('mtx/acq/seq')
                 WHEN 2 THEN (sync_acquire(ARRAY['mtx/acq/seq']))[1]
                 ELSE (sync_try_acquire(ARRAY['mtx/acq/seq']))[1]
             END;
        IF t IS NULL OR t <= prev THEN
            increasing := false;
        END IF;
        prev := t;
        IF NOT sync_release('mtx/acq/seq') THEN
            RAISE EXCEPTION 'release % failed', i;
        END IF;
    END LOOP;
    RAISE NOTICE 'tokens strictly increasing over 200 grants: %', increasing;
END
$$;

-- named arguments, NULL timeout (wait without limit: granted at once here),
-- zero timeout on a free lock, any priority
SELECT sync_acquire(lock_name => 'mtx/acq/named', timeout => NULL) > 0 AS granted;
SELECT sync_acquire('mtx/acq/zero-timeout', 0, '0') > 0 AS granted;
SELECT sync_acquire('mtx/acq/neg-priority', -2147483648) > 0 AS granted;
SELECT sync_try_acquire('mtx/acq/max-priority', 2147483647) > 0 AS granted;
SELECT lock_name, scope, priority FROM sync_holders
 WHERE pid = pg_backend_pid() ORDER BY lock_name;

-- sync_release_all returns how many holds it released
SELECT sync_release_all() AS released;
SELECT sync_release_all() AS released_none;
SELECT count(*) AS locks FROM sync_locks;

-- a very long timeout is a valid timeout (the lock is free: granted at once)
SELECT sync_acquire('mtx/acq/long-timeout', 0, '100 years') > 0 AS granted;
SELECT sync_acquire('mtx/acq/longer-timeout', 0, '1000000 years') > 0 AS granted;
SELECT sync_release_all() AS released;

--
-- Not granted: a semaphore whose limit is 0 has no free slot.
--
INSERT INTO sync_limit (name, sizelimit) VALUES ('acq/zero', 0), ('acq/two', 2);
-- try: NULL, and nothing is left behind
SELECT sync_try_acquire('sem/acq/zero') IS NULL AS not_granted;
SELECT sync_try_acquire_xact('sem/acq/zero') IS NULL AS not_granted;
SELECT count(*) AS locks FROM sync_locks;
SELECT count(*) AS waiters FROM sync_waiters;
-- acquire with a timeout: 55P03, and the queue entry is gone
CALL regress_util.expect_error($$SELECT sync_acquire('sem/acq/zero', 0, '0')$$);
CALL regress_util.expect_error($$SELECT sync_acquire('sem/acq/zero', 0, '10 ms')$$);
CALL regress_util.expect_error($$SELECT sync_acquire('sem/acq/zero', 0, '1.9 ms')$$);
CALL regress_util.expect_error($$SELECT sync_acquire_xact('sem/acq/zero', 7, '0')$$);
SELECT count(*) AS locks FROM sync_locks;
SELECT count(*) AS waiters FROM sync_waiters;
-- the timeout error, as psql shows it
SELECT sync_acquire('sem/acq/zero', timeout => '20ms');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS locks FROM sync_locks;
-- statement_timeout ends an unlimited wait the usual way (57014), and the
-- queue entry is gone too
SET statement_timeout = '250ms';
CALL regress_util.expect_error($$SELECT sync_acquire('sem/acq/zero')$$);
RESET statement_timeout;
SELECT count(*) AS locks FROM sync_locks;
SELECT count(*) AS waiters FROM sync_waiters;
-- a wait that times out inside a transaction block aborts it, and leaves
-- nothing behind after ROLLBACK
BEGIN;
SELECT sync_acquire_xact('sem/acq/zero', 0, '1 ms');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SELECT count(*) AS locks FROM sync_locks;
-- a timed out request did not consume the lock names: they can be taken
-- afterwards (and sizelimit 2 is respected when the session holds one)
SELECT sync_acquire('sem/acq/two', 0, '0') > 0 AS granted;
SELECT lock_name, kind, sizelimit, holders, waiters FROM sync_locks;
SELECT sync_release('sem/acq/two') AS released;

-- a semaphore with no sync_limit row
CALL regress_util.expect_error($$SELECT sync_acquire('sem/acq/no-row')$$);
CALL regress_util.expect_error($$SELECT sync_try_acquire('sem/acq/no-row')$$);
SELECT count(*) AS locks FROM sync_locks;

DELETE FROM sync_limit WHERE name IN ('acq/zero', 'acq/two');
SELECT count(*) AS holders FROM sync_holders;
