--
-- capacity: when syncwf's shared memory has grown to syncwf.max_memory
-- (64MB in test/regress.conf) and every lock and entry in it is live, a
-- request for one more lock fails with 53200 and leaves nothing half-done.
-- Idle cached semaphores give their room up when needed, so this test
-- takes mutexes until memory is full.  The caps on counts
-- (syncwf.max_locks, max_entries, max_holders) are covered by the Perl TAP
-- capacity test, and growth, reloads and concurrency by 036_memory.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
-- Helpers regress_util.expect_error (reports a statement's error as a
-- NOTICE with SQLSTATE, DETAIL and HINT) and regress_util.error_of
-- (returns "SQLSTATE: message"), created by 00_setup.
-- the error with its detail and hint; the numbers in the detail depend on
-- what earlier tests left in memory, and are shown as N, as is whether the
-- locks or the entries ran out first
CREATE PROCEDURE pg_temp.expect_full(stmt text)
LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text; hnt text;
BEGIN
    EXECUTE stmt;
    RAISE NOTICE 'no error';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                            det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
    RAISE NOTICE 'error %: %', st, msg
        USING DETAIL = regexp_replace(regexp_replace(det, '[0-9]+', 'N', 'g'),
                                      '(locks|entries) made', 'locks or entries made'),
              HINT = hnt;
END
$$;

-- a parent row's group first: groups have a pool of their own, which,
-- like every pool, cannot grow once memory is full (later files use them)
INSERT INTO sync_limit (name, sizelimit) VALUES ('capgrp/all', 1);
INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('capgrp/one', 1, 'capgrp/all');
SELECT sync_acquire('sem/capgrp/one') > 0 AS group_made;
SELECT sync_release('sem/capgrp/one');
DELETE FROM sync_limit WHERE name LIKE 'capgrp/%' AND parent IS NOT NULL;
DELETE FROM sync_limit WHERE name LIKE 'capgrp/%';

-- fill the table: 64 locks per call while they fit, then one at a time
DO $$
DECLARE
    n integer := 0;
    full_at_64 boolean := false;
BEGIN
    WHILE NOT full_at_64 LOOP
        BEGIN
            PERFORM sync_acquire(array(SELECT 'mtx/cap/' || (n + i)
                                         FROM generate_series(1, 64) i));
            n := n + 64;
        EXCEPTION WHEN out_of_memory THEN
            full_at_64 := true;
        END;
    END LOOP;
    LOOP
        BEGIN
            PERFORM sync_acquire('mtx/cap/' || (n + 1));
            n := n + 1;
        EXCEPTION WHEN out_of_memory THEN
            EXIT;
        END;
    END LOOP;
    RAISE NOTICE 'more than 50,000 holds taken: %', n > 50000;
    CREATE TEMP TABLE cap_full AS SELECT n;
END
$$;
SELECT n AS n_full FROM cap_full \gset
SELECT count(*) = :n_full AS table_full,
       bool_and(pid = pg_backend_pid()) AS all_mine
  FROM sync_holders;

-- one more lock, in every form: 53200
CALL pg_temp.expect_full($$SELECT sync_acquire('mtx/cap/one-more')$$);
CALL pg_temp.expect_full($$SELECT sync_try_acquire('mtx/cap/one-more')$$);
CALL pg_temp.expect_full($$SELECT sync_acquire_xact('mtx/cap/one-more', 0, '0')$$);
CALL pg_temp.expect_full($$SELECT sync_try_acquire_xact('mtx/cap/one-more')$$);
CALL pg_temp.expect_full($$SELECT sync_acquire(ARRAY['mtx/cap/1', 'mtx/cap/one-more'])$$);
INSERT INTO sync_limit VALUES ('cap/sem', 5);
CALL pg_temp.expect_full($$SELECT sync_acquire('sem/cap/sem')$$);
-- nothing half-done: still exactly the locks taken above
SELECT count(*) = :n_full AS unchanged
  FROM sync_locks;
SELECT count(*) AS one_more FROM sync_locks WHERE lock_name = 'mtx/cap/one-more';
-- locks already held are still granted (same token, no new slot)
SELECT sync_acquire('mtx/cap/1') = token AS same_token
  FROM sync_holders WHERE lock_name = 'mtx/cap/1';
-- a released slot can be used again, once
SELECT sync_release('mtx/cap/1') AS released;
SELECT sync_try_acquire('sem/cap/sem') > 0 AS granted;
CALL pg_temp.expect_full($$SELECT sync_acquire('mtx/cap/1')$$);

-- everything is released at once
SELECT sync_release_all() = :n_full AS released_all;
SELECT count(*) AS locks FROM sync_locks;
SELECT sync_acquire('mtx/cap/one-more') > 0 AS granted;
SELECT sync_release('mtx/cap/one-more') AS released;
DELETE FROM sync_limit WHERE name = 'cap/sem';
