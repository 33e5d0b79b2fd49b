--
-- weighted: weighted slots of semaphores and shared holds of mutexes, for
-- session, transaction and keyed holds, single and array forms.  A request
-- takes all its slots at once or waits, in queue order: a big request at
-- the front is not passed by small ones.  Shared holders coexist; an
-- exclusive one excludes them all, and shared requests queued behind a
-- waiting exclusive one wait their turn.  A limit lowered under a waiting
-- request's slots makes it fail (a blocking caller) or withdraws it (keyed,
-- by the worker or sync_reconcile()).  Keyed requests of several holders
-- make the queues here, in one session.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
-- Helpers regress_util.expect_error (reports a statement's error as a
-- NOTICE with SQLSTATE, DETAIL and HINT), created by 00_setup.
CREATE VIEW pg_temp.locks AS
    SELECT lock_name, sizelimit, holders, slots_held, waiters
      FROM sync_locks WHERE lock_name LIKE '%/wt/%' ORDER BY lock_name;
CREATE VIEW pg_temp.entries AS
    SELECT lock_name, 'held' AS state, coalesce(holder, scope) AS who, slots, mode, NULL::int AS position
      FROM sync_holders WHERE lock_name LIKE '%/wt/%'
    UNION ALL
    SELECT lock_name, 'pending', coalesce(holder, scope), slots, mode, position
      FROM sync_waiters WHERE lock_name LIKE '%/wt/%'
     ORDER BY 1, 2, 6, 3;

INSERT INTO sync_limit VALUES ('wt/pool', 5), ('wt/small', 2), ('wt/*', 3);

--
-- Weighted slots.
--
-- a holder takes 3 of 5 slots; a request for 3 more waits
SELECT status FROM sync_request('sem/wt/pool', 'wt/first', slots => 3);
SELECT status, queue_position FROM sync_request('sem/wt/pool', 'wt/big', slots => 3);
-- two slots are still free, but a small request queues behind the big one,
-- and a try does not pass it either
SELECT status, queue_position FROM sync_request('sem/wt/pool', 'wt/small1');
SELECT sync_try_acquire_xact('sem/wt/pool') IS NULL AS try_not_granted;
SELECT * FROM pg_temp.locks;
SELECT * FROM pg_temp.entries;
-- the first holder's 3 slots come back: the big request at the front gets
-- them, and the small one a free slot
SELECT sync_release('sem/wt/pool', 'wt/first');
SELECT lock_name, state, who, slots FROM pg_temp.entries;
SELECT sync_reconcile() >= 0 AS grants_written;
SELECT name, workflowkey, held, slots, mode FROM sync_state
 WHERE workflowkey LIKE 'wt/%' ORDER BY name, workflowkey;
-- 4 of 5 slots are taken: a try for 2 returns NULL, one for 1 is granted
SELECT sync_try_acquire('sem/wt/pool', slots => 2) IS NULL AS not_granted;
SELECT sync_try_acquire('sem/wt/pool', slots => 1) > 0 AS granted;
SELECT * FROM pg_temp.locks;
SELECT sync_release('sem/wt/pool'), sync_release('sem/wt/pool', 'wt/big'),
       sync_release('sem/wt/pool', 'wt/small1');
-- transaction scope, and a pattern row's limit: all slots at once
BEGIN;
SELECT sync_acquire_xact('sem/wt/any', slots => 3) > 0 AS granted;
SELECT lock_name, sizelimit, holders, slots_held FROM pg_temp.locks WHERE lock_name = 'sem/wt/any';
COMMIT;
SELECT count(*) AS live FROM pg_temp.locks WHERE lock_name = 'sem/wt/any';
-- array forms: slots of every semaphore named
SELECT array_length(sync_acquire(ARRAY['sem/wt/pool', 'sem/wt/small'], slots => 2), 1) AS tokens;
SELECT lock_name, holders, slots_held FROM pg_temp.locks;
SELECT sync_release_all();
SELECT r.lock_name, r.status FROM sync_request(ARRAY['sem/wt/pool', 'sem/wt/small'], 'wt/arr', slots => 2) r ORDER BY 1;
SELECT lock_name, who, slots FROM pg_temp.entries;
SELECT sync_release('sem/wt/pool', 'wt/arr'), sync_release('sem/wt/small', 'wt/arr');

-- the same lock asked for again: the same slots return the token, others fail
SELECT sync_acquire('sem/wt/pool', slots => 2) = sync_acquire('sem/wt/pool', slots => 2) AS same;
CALL regress_util.expect_error($$SELECT sync_acquire('sem/wt/pool', slots => 3)$$);
CALL regress_util.expect_error($$SELECT sync_acquire('sem/wt/pool')$$);
SELECT sync_release('sem/wt/pool');
SELECT status FROM sync_request('sem/wt/pool', 'wt/k', slots => 2);
SELECT status FROM sync_request('sem/wt/pool', 'wt/k', slots => 2);
CALL regress_util.expect_error($$SELECT * FROM sync_request('sem/wt/pool', 'wt/k')$$);
SELECT sync_release('sem/wt/pool', 'wt/k');

--
-- Bad input: nothing is taken or queued.
--
CALL regress_util.expect_error($$SELECT sync_acquire('sem/wt/pool', slots => 0)$$);
CALL regress_util.expect_error($$SELECT sync_try_acquire('sem/wt/pool', slots => -1)$$);
CALL regress_util.expect_error($$SELECT sync_acquire('sem/wt/pool', slots => NULL)$$);
CALL regress_util.expect_error($$SELECT sync_acquire('sem/wt/pool', slots => 6)$$);
CALL regress_util.expect_error($$SELECT sync_try_acquire_xact('sem/wt/small', slots => 3)$$);
CALL regress_util.expect_error($$SELECT sync_acquire(ARRAY['sem/wt/pool', 'sem/wt/small'], slots => 3)$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request('sem/wt/small', 'wt/k', slots => 3)$$);
CALL regress_util.expect_error($$SELECT sync_acquire('mtx/wt/m', slots => 2)$$);
CALL regress_util.expect_error($$SELECT sync_acquire(ARRAY['sem/wt/pool', 'mtx/wt/m'], slots => 2)$$);
CALL regress_util.expect_error($$SELECT sync_acquire('sem/wt/pool', mode => 'shared')$$);
CALL regress_util.expect_error($$SELECT sync_acquire('mtx/wt/m', mode => 'read')$$);
CALL regress_util.expect_error($$SELECT sync_try_acquire('mtx/wt/m', mode => NULL)$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request('mtx/wt/m', 'wt/k', mode => 'Shared')$$);
SELECT * FROM pg_temp.entries;
SELECT count(*) AS rows FROM sync_state WHERE workflowkey LIKE 'wt/%';
-- a limit of 0 pauses a semaphore: requests of any size wait
UPDATE sync_limit SET sizelimit = 0 WHERE name = 'wt/small';
SELECT status FROM sync_request('sem/wt/small', 'wt/paused', slots => 2);
UPDATE sync_limit SET sizelimit = 2 WHERE name = 'wt/small';
SELECT lock_name, state, who, slots FROM pg_temp.entries WHERE who = 'wt/paused';
SELECT sync_release('sem/wt/small', 'wt/paused');

--
-- Shared and exclusive mutexes.
--
SELECT sync_acquire('mtx/wt/m', mode => 'shared') > 0 AS shared1;
SELECT status FROM sync_request('mtx/wt/m', 'wt/reader', mode => 'shared');
SELECT status FROM sync_request('mtx/wt/m', 'wt/writer');
-- a shared request behind a waiting exclusive one waits its turn
SELECT status, queue_position FROM sync_request('mtx/wt/m', 'wt/late-reader', mode => 'shared');
SELECT * FROM pg_temp.locks WHERE lock_name = 'mtx/wt/m';
SELECT * FROM pg_temp.entries WHERE lock_name = 'mtx/wt/m';
-- the same mutex in the other mode
CALL regress_util.expect_error($$SELECT sync_acquire('mtx/wt/m')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request('mtx/wt/m', 'wt/reader')$$);
-- the last reader leaves: the writer gets it, alone
SELECT sync_release('mtx/wt/m'), sync_release('mtx/wt/m', 'wt/reader');
SELECT * FROM pg_temp.entries WHERE lock_name = 'mtx/wt/m';
-- the writer leaves: every shared request at the front is granted at once
SELECT status FROM sync_request('mtx/wt/m', 'wt/late-reader2', mode => 'shared');
SELECT status FROM sync_request('mtx/wt/m', 'wt/writer2');
SELECT sync_release('mtx/wt/m', 'wt/writer');
SELECT * FROM pg_temp.entries WHERE lock_name = 'mtx/wt/m';
SELECT sync_reconcile() >= 0 AS grants_written;
SELECT name, workflowkey, held, slots, mode FROM sync_state
 WHERE name = 'mtx/wt/m' ORDER BY held DESC, workflowkey;
SELECT sync_release('mtx/wt/m', 'wt/late-reader'), sync_release('mtx/wt/m', 'wt/late-reader2');
SELECT * FROM pg_temp.entries WHERE lock_name = 'mtx/wt/m';
SELECT sync_release('mtx/wt/m', 'wt/writer2');

-- a row written as Argo writes them (no slots or mode) is one exclusive
-- slot; a row may ask for slots and a mode too
INSERT INTO sync_state (name, workflowkey, controller, held, priority, time, owner, request_id, seq)
VALUES ('mtx/wt/argo', 'wt/argo', NULL, false, 0, now(), current_user::regrole, 0, 0);
INSERT INTO sync_state (name, workflowkey, controller, held, priority, time, owner, request_id, seq, slots)
VALUES ('sem/wt/pool', 'wt/argo', NULL, false, 0, now(), current_user::regrole, 0, 0, 4);
SELECT name, held, slots, mode FROM sync_state WHERE workflowkey = 'wt/argo' ORDER BY name;
SELECT lock_name, who, slots, mode FROM pg_temp.entries WHERE who = 'wt/argo';
CALL regress_util.expect_error($$INSERT INTO sync_state (name, workflowkey, controller, held, priority, time, owner, request_id, seq, mode)
VALUES ('mtx/wt/argo2', 'wt/argo', NULL, false, 0, now(), current_user::regrole, 0, 0, 'read')$$);
CALL regress_util.expect_error($$INSERT INTO sync_state (name, workflowkey, controller, held, priority, time, owner, request_id, seq, mode)
VALUES ('sem/wt/small', 'wt/argo', NULL, false, 0, now(), current_user::regrole, 0, 0, 'shared')$$);
CALL regress_util.expect_error($$UPDATE sync_state SET slots = 2 WHERE workflowkey = 'wt/argo' AND name = 'mtx/wt/argo'$$);
DELETE FROM sync_state WHERE workflowkey = 'wt/argo';

--
-- A limit lowered under a waiting keyed request's slots: nobody is
-- preempted, the request is passed over and withdrawn, those behind move.
--
SELECT status FROM sync_request('sem/wt/pool', 'wt/h1', slots => 4);
SELECT status FROM sync_request('sem/wt/pool', 'wt/w5', slots => 5);
SELECT status FROM sync_request('sem/wt/pool', 'wt/w1', slots => 1);
UPDATE sync_limit SET sizelimit = 3 WHERE name = 'wt/pool';
-- the worker withdraws it; sync_reconcile() does the same at once
SELECT sync_reconcile() >= 0 AS reconciled;
-- (unless the worker has its row locked, withdrawing it: then its commit
-- is waited for)
CALL regress_util.await_withdrawn('wt/w5');
SELECT * FROM pg_temp.locks WHERE lock_name = 'sem/wt/pool';
SELECT lock_name, state, who, slots FROM pg_temp.entries WHERE lock_name = 'sem/wt/pool';
SELECT workflowkey, held, slots FROM sync_state WHERE name = 'sem/wt/pool' ORDER BY workflowkey;
-- the holder above the new limit keeps its slots; a new request waits
SELECT status FROM sync_request('sem/wt/pool', 'wt/w2', slots => 1);
SELECT sync_release('sem/wt/pool', 'wt/h1');
SELECT sync_reconcile() >= 0 AS grants_written;
SELECT workflowkey, held, slots FROM sync_state WHERE name = 'sem/wt/pool' ORDER BY workflowkey;
SELECT sync_release('sem/wt/pool', 'wt/w1'), sync_release('sem/wt/pool', 'wt/w2');

-- clean up
SELECT sync_release_all();
DELETE FROM sync_limit WHERE name LIKE 'wt/%';
SELECT count(*) AS live FROM pg_temp.locks;
SELECT count(*) AS rows FROM sync_state WHERE workflowkey LIKE 'wt/%';
