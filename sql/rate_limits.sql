--
-- rate_limits: sync_limit's rate_limit and rate_period, a token bucket of
-- rate_limit tokens refilled evenly over rate_period.  Each grant of k
-- slots spends k tokens; the concurrency limit still applies; a try that
-- finds no token returns NULL; a waiter is granted when its tokens come,
-- in queue order, by the background worker (or, at the front of the
-- queue, by its own backend).  Long periods keep the bucket still while
-- the test looks at it; the one wait for tokens uses a short one.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
-- Helpers regress_util.expect_error (reports a statement's error as a
-- NOTICE with SQLSTATE, DETAIL and HINT), created by 00_setup.
CREATE VIEW pg_temp.locks AS
    SELECT lock_name, sizelimit, holders, slots_held, waiters, rate_tokens,
           rate_next_refill IS NOT NULL AS refilling
      FROM sync_locks WHERE lock_name LIKE 'sem/rt/%' ORDER BY lock_name;

--
-- The table: both columns or neither, positive; patterns too.
--
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, rate_limit) VALUES ('rt/bad', 1, 5)$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, rate_period) VALUES ('rt/bad', 1, '1 s')$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, rate_limit, rate_period) VALUES ('rt/bad', 1, 0, '1 s')$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, rate_limit, rate_period) VALUES ('rt/bad', 1, 5, '-1 s')$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, rate_limit, rate_period) VALUES ('rt/bad', 1, 5, '0')$$);
-- a pattern needs a prefix
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit) VALUES ('/*', 1)$$);
SELECT count(*) AS rows FROM sync_limit WHERE name LIKE 'rt/%';

INSERT INTO sync_limit (name, sizelimit, rate_limit, rate_period) VALUES
    ('rt/hour', 10, 3, '1 hour'),     -- 3 grants, then none during the test
    ('rt/*', 10, 2, '1 hour'),        -- every other rt/ semaphore: 2 each
    ('rt/fast', 10, 1, '200 ms');     -- 1 grant each 200 ms
INSERT INTO sync_limit (name, sizelimit) VALUES ('rt/plain', 10);

--
-- Tokens are spent by grants, slots by holds.
--
SELECT sync_try_acquire('sem/rt/hour') > 0 AS one,
       sync_try_acquire('sem/rt/plain', slots => 4) > 0 AS unrated;
SELECT * FROM pg_temp.locks;
-- released: the slot comes back, the token does not: two tokens left, so
-- a try for 3 slots returns NULL, one for 2 is granted
SELECT sync_release('sem/rt/hour');
SELECT sync_try_acquire('sem/rt/hour', slots => 3) IS NULL AS no_tokens;
SELECT sync_try_acquire('sem/rt/hour', slots => 2) > 0 AS two;
SELECT sync_release('sem/rt/hour');
-- free slots, no tokens: a try returns NULL, a keyed request waits
SELECT sync_try_acquire_xact('sem/rt/hour') IS NULL AS no_tokens;
SELECT status, queue_position FROM sync_request('sem/rt/hour', 'rt/k1');
SELECT lock_name, holders, waiters, rate_tokens, refilling FROM pg_temp.locks WHERE lock_name = 'sem/rt/hour';
-- each key of a pattern has a bucket of its own
SELECT sync_try_acquire('sem/rt/a', slots => 2) > 0 AS a, sync_try_acquire('sem/rt/b', slots => 2) > 0 AS b;
SELECT status FROM sync_request('sem/rt/a', 'rt/k2') AS a_empty;
SELECT lock_name, rate_tokens FROM pg_temp.locks WHERE lock_name IN ('sem/rt/a', 'sem/rt/b');
SELECT sync_release_all(), sync_release('sem/rt/a', 'rt/k2');

-- more slots than the bucket holds could never be granted
CALL regress_util.expect_error($$SELECT sync_acquire('sem/rt/a', slots => 3)$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request('sem/rt/a', 'rt/k2', slots => 3)$$);

--
-- A waiter is granted when its token comes, without polling.
--
SELECT sync_try_acquire_xact('sem/rt/fast') > 0 AS first;
SELECT clock_timestamp() AS t0 \gset
SELECT sync_acquire('sem/rt/fast', timeout => '10 s') > 0 AS second_after_refill;
SELECT clock_timestamp() - :'t0' >= interval '150 ms' AS waited,
       clock_timestamp() - :'t0' < interval '5 s' AS not_long;
-- a keyed waiter too, granted by the worker
SELECT status FROM sync_request('sem/rt/fast', 'rt/k3');
SELECT sync_wait('sem/rt/fast', 'rt/k3', '10 s') > 0 AS keyed_granted;
SELECT sync_release_all(), sync_release('sem/rt/fast', 'rt/k3');

--
-- Changing the rate acts at commit.  A bucket keeps the tokens it has
-- (none here: the waiter still waits, now for a quicker refill);
-- removing the rate removes the bucket, and the waiter goes in.
--
UPDATE sync_limit SET rate_limit = 4 WHERE name = 'rt/hour';
SELECT lock_name, holders, waiters, rate_tokens, refilling FROM pg_temp.locks WHERE lock_name = 'sem/rt/hour';
UPDATE sync_limit SET rate_limit = NULL, rate_period = NULL WHERE name = 'rt/hour';
SELECT sync_wait('sem/rt/hour', 'rt/k1', '10 s') > 0 AS k1_granted;
SELECT lock_name, holders, rate_tokens, refilling FROM pg_temp.locks WHERE lock_name = 'sem/rt/hour';
SELECT sync_release('sem/rt/hour', 'rt/k1');

--
-- A rate lowered under a waiting keyed request's slots: it is withdrawn.
--
UPDATE sync_limit SET rate_limit = 3, rate_period = '1 hour' WHERE name = 'rt/hour';
SELECT sync_try_acquire('sem/rt/hour', slots => 3) > 0 AS all_tokens;
SELECT status FROM sync_request('sem/rt/hour', 'rt/k4', slots => 3);
SELECT status FROM sync_request('sem/rt/hour', 'rt/k5', slots => 1);
UPDATE sync_limit SET rate_limit = 2 WHERE name = 'rt/hour';
SELECT sync_reconcile() >= 0 AS reconciled;
-- (unless the worker has its row locked, withdrawing it: then its commit
-- is waited for)
CALL regress_util.await_withdrawn('rt/k4');
SELECT workflowkey, held, slots FROM sync_state WHERE name = 'sem/rt/hour' ORDER BY workflowkey;
SELECT sync_release_all(), sync_release('sem/rt/hour', 'rt/k5');

-- clean up
DELETE FROM sync_limit WHERE name LIKE 'rt/%';
SELECT count(*) AS live FROM pg_temp.locks;
SELECT count(*) AS rows FROM sync_state WHERE workflowkey LIKE 'rt/%';
