--
-- default_limits: pattern rows of sync_limit ('<prefix>/*', the limit of
-- every semaphore under the prefix without a row of its own) and the queue
-- cap (max_waiters).  Each key counts its own holders; the longest pattern
-- wins and a semaphore's own row beats every pattern; a change acts at
-- commit on live and cached semaphores alike.  A request that would make a
-- capped queue longer fails with 53400 and leaves nothing behind; a try
-- never waits, so it is never refused for the cap.  Keyed requests of
-- several holders make the queues here, in one session.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
-- Helpers regress_util.expect_error (reports a statement's error as a
-- NOTICE with SQLSTATE, DETAIL and HINT) and regress_util.error_of
-- (returns "SQLSTATE: message"), created by 00_setup.
CREATE VIEW pg_temp.sems AS
    SELECT lock_name, sizelimit, holders, waiters, limit_row, max_waiters
      FROM sync_locks WHERE lock_name LIKE 'sem/dl/%' OR lock_name LIKE 'sem/dx/%'
     ORDER BY lock_name;

--
-- Patterns: the namespace's default, a deeper one, a semaphore's own row.
--
INSERT INTO sync_limit VALUES ('dl/*', 2, NULL), ('dl/eu/*', 3, NULL), ('dl/eu/fr', 1, NULL);
SELECT sync_acquire('sem/dl/a') > 0 AS a,           -- dl/*
       sync_acquire('sem/dl/eu/de') > 0 AS de,      -- dl/eu/*
       sync_acquire('sem/dl/eu/de/bayern') > 0 AS by,  -- dl/eu/* (deeper keys too)
       sync_acquire('sem/dl/eu/fr') > 0 AS fr;      -- its own row
SELECT * FROM pg_temp.sems;
-- each key counts its own holders: a default of 2 is 2 per key
SELECT r1.status, r2.status FROM sync_request('sem/dl/a', 'dl/k1') r1, sync_request('sem/dl/a', 'dl/k2') r2;
SELECT status FROM sync_request('sem/dl/b', 'dl/k1');
SELECT lock_name, holders, waiters FROM pg_temp.sems WHERE lock_name IN ('sem/dl/a', 'sem/dl/b');
SELECT sync_release('sem/dl/a', 'dl/k2'), sync_release('sem/dl/a', 'dl/k1'), sync_release('sem/dl/b', 'dl/k1');

-- a namespace without any row: the error names the pattern it could have
CALL regress_util.expect_error($$SELECT sync_acquire('sem/dx/none')$$);

--
-- Changes act at commit, on live and cached semaphores.
--
SELECT sync_release('sem/dl/eu/de/bayern');         -- now a cached semaphore
UPDATE sync_limit SET sizelimit = 4 WHERE name = 'dl/eu/*';
SELECT * FROM pg_temp.sems;
SELECT sync_acquire('sem/dl/eu/de/bayern') > 0 AS again;
SELECT lock_name, sizelimit FROM pg_temp.sems WHERE lock_name = 'sem/dl/eu/de/bayern';
-- a deleted own row falls back to the longest pattern
DELETE FROM sync_limit WHERE name = 'dl/eu/fr';
SELECT lock_name, sizelimit, limit_row FROM pg_temp.sems WHERE lock_name = 'sem/dl/eu/fr';
-- a new own row beats the pattern at once
INSERT INTO sync_limit VALUES ('dl/eu/de', 7);
SELECT lock_name, sizelimit, limit_row FROM pg_temp.sems WHERE lock_name LIKE 'sem/dl/eu/de%';
-- a rolled-back pattern change changes nothing
BEGIN;
UPDATE sync_limit SET sizelimit = 9 WHERE name = 'dl/*';
SELECT lock_name, sizelimit FROM pg_temp.sems WHERE lock_name = 'sem/dl/a';
ROLLBACK;
SELECT lock_name, sizelimit FROM pg_temp.sems WHERE lock_name = 'sem/dl/a';
-- a deleted pattern: the next longest takes over
DELETE FROM sync_limit WHERE name = 'dl/eu/*';
SELECT lock_name, sizelimit, holders, limit_row FROM pg_temp.sems WHERE lock_name LIKE 'sem/dl/eu/%';
INSERT INTO sync_limit VALUES ('dl/eu/x', 1);       -- an own row is not a pattern
SELECT sync_acquire('sem/dl/eu/x/y') > 0 AS by_dl;
SELECT lock_name, limit_row FROM pg_temp.sems WHERE lock_name = 'sem/dl/eu/x/y';
-- the last pattern deleted: holders keep their slots, newcomers are refused
INSERT INTO sync_limit VALUES ('dx/*', 1);
SELECT sync_acquire('sem/dx/a') > 0 AS a, sync_acquire('sem/dx/b') > 0 AS b;
SELECT sync_release('sem/dx/b');                    -- cached
DELETE FROM sync_limit WHERE name = 'dx/*';
SELECT lock_name, sizelimit, holders, limit_row FROM pg_temp.sems WHERE lock_name LIKE 'sem/dx/%';
CALL regress_util.expect_error($$SELECT status FROM sync_request('sem/dx/a', 'dl/k3')$$);
CALL regress_util.expect_error($$SELECT sync_acquire('sem/dx/b')$$);
SELECT sync_release_all();
SELECT count(*) AS live FROM pg_temp.sems;

--
-- Bad rows.
--
CALL regress_util.expect_error($$INSERT INTO sync_limit VALUES ('/*', 1)$$);       -- empty prefix
CALL regress_util.expect_error($$INSERT INTO sync_limit VALUES ('*', 1)$$);        -- no namespace
CALL regress_util.expect_error($$INSERT INTO sync_limit VALUES ('dl/c', 1, -1)$$); -- negative cap
SELECT count(*) FROM sync_limit WHERE name IN ('/*', '*', 'dl/c');

--
-- The queue cap.
--
INSERT INTO sync_limit VALUES ('dl/cap', 1, 2);
SELECT status FROM sync_request('sem/dl/cap', 'dl/h1');
SELECT status, queue_position FROM sync_request('sem/dl/cap', 'dl/h2');
SELECT status, queue_position FROM sync_request('sem/dl/cap', 'dl/h3');
SELECT * FROM pg_temp.sems WHERE lock_name = 'sem/dl/cap';
-- a third waiter: refused, and nothing of it is left
CALL regress_util.expect_error($$SELECT status FROM sync_request('sem/dl/cap', 'dl/h4')$$);
SELECT count(*) FROM sync_state WHERE workflowkey = 'dl/h4';
-- a session's blocking acquire too, at once, with no timeout
CALL regress_util.expect_error($$SELECT sync_acquire('sem/dl/cap')$$);
CALL regress_util.expect_error($$SELECT sync_acquire(ARRAY['mtx/dl/free', 'sem/dl/cap'])$$);
SELECT count(*) AS none_left FROM sync_locks WHERE lock_name = 'mtx/dl/free';
-- a try never waits, so it is never refused for the cap
SELECT sync_try_acquire('sem/dl/cap') IS NULL AS not_granted;
SELECT * FROM pg_temp.sems WHERE lock_name = 'sem/dl/cap';
-- a waiter leaves: room for one more
SELECT sync_release('sem/dl/cap', 'dl/h3');
SELECT status, queue_position FROM sync_request('sem/dl/cap', 'dl/h4');
-- a request granted at once does not wait, whatever the cap
UPDATE sync_limit SET sizelimit = 4, max_waiters = 0 WHERE name = 'dl/cap';
SELECT * FROM pg_temp.sems WHERE lock_name = 'sem/dl/cap';
SELECT sync_acquire('sem/dl/cap') > 0 AS granted;
-- full now, and with a cap of 0 nobody may wait
CALL regress_util.expect_error($$SELECT status FROM sync_request('sem/dl/cap', 'dl/h5')$$);
-- a lowered cap leaves the queue as it is, and refuses newcomers
UPDATE sync_limit SET max_waiters = 2 WHERE name = 'dl/cap';
SELECT status, queue_position FROM sync_request('sem/dl/cap', 'dl/h5');
SELECT status, queue_position FROM sync_request('sem/dl/cap', 'dl/h6');
UPDATE sync_limit SET max_waiters = 1 WHERE name = 'dl/cap';
SELECT * FROM pg_temp.sems WHERE lock_name = 'sem/dl/cap';
CALL regress_util.expect_error($$SELECT status FROM sync_request('sem/dl/cap', 'dl/h7')$$);
-- a cap on a pattern row is each key's
INSERT INTO sync_limit VALUES ('dx/*', 1, 0);
SELECT a.status, b.status FROM sync_request('sem/dx/a', 'dl/h1') a, sync_request('sem/dx/b', 'dl/h1') b;
SELECT * FROM pg_temp.sems WHERE lock_name LIKE 'sem/dx/%';
CALL regress_util.expect_error($$SELECT status FROM sync_request('sem/dx/a', 'dl/h2')$$);
-- clean up
SELECT sync_release_all();
SELECT sync_release(name, workflowkey) FROM sync_state
 WHERE workflowkey LIKE 'dl/%' ORDER BY held, name, workflowkey;
DELETE FROM sync_limit WHERE name LIKE 'dl/%' OR name LIKE 'dx/%';
SELECT count(*) AS live FROM pg_temp.sems;
