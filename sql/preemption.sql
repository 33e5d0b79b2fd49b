--
-- preemption: the column sync_limit.preempt_grace and the argument and
-- columns of a preemptible keyed request (1.8), their checks, and what a
-- preemption looks like while its grace runs: the row's preempt_deadline
-- and lease, sync_waiters' 'preemption', a refresh that cannot go past the
-- grace, the count in sync_lock_stats, the hand-over when the holder lets
-- go.  The grace ending by itself, with waiting backends and events, is
-- the isolation spec preemption's.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
-- Helpers regress_util.expect_error (reports a statement's error as a
-- NOTICE with SQLSTATE, DETAIL and HINT), created by 00_setup.

-- the columns and their constraints
SELECT attname, format_type(atttypid, atttypmod) AS type, attnotnull,
       col_description(attrelid, attnum) AS comment
  FROM pg_attribute
 WHERE attrelid IN ('sync_limit'::regclass, 'sync_state'::regclass)
   AND attname LIKE 'preempt%'
 ORDER BY attrelid::regclass::text, attnum;
SELECT conname, pg_get_constraintdef(oid) AS definition
  FROM pg_constraint
 WHERE conrelid = 'sync_limit'::regclass AND conname LIKE 'sync_limit_preempt%';

--
-- Refusals: a negative grace (check_violation, 23514); a request of
-- several locks that would be preemptible (22023), which leaves no row.
--
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, preempt_grace) VALUES ('prm/a', 1, '-1 s')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request(ARRAY['sem/prm/a', 'sem/prm/b'], 'prm-h', preemptible => true)$$);
SELECT count(*) AS rows_stored FROM sync_state WHERE workflowkey LIKE 'prm-%';
SELECT count(*) AS limit_rows_stored FROM sync_limit WHERE name LIKE 'prm/%';

--
-- Accepted: one slot, a grace of an hour (it will not end by itself
-- here); a pattern row preempts for its semaphores too.  preemptible NULL
-- is false.
--
INSERT INTO sync_limit (name, sizelimit, preempt_grace) VALUES ('prm/a', 1, '1 hour'),
       ('prmp/*', 1, '1 hour');
SELECT status FROM sync_request('sem/prm/a', 'prm-v', priority => 1, preemptible => true,
                                lease => '2 hours');
SELECT status FROM sync_request('sem/prmp/k', 'prm-n', priority => 1, preemptible => true);
SELECT status FROM sync_request('sem/prmp/other', 'prm-null', preemptible => NULL);
SELECT name, workflowkey, held, preemptible, preempt_deadline FROM sync_state
 WHERE workflowkey LIKE 'prm-%' ORDER BY name;

-- Wait (at most 30 s) until the worker has preempted holder h's hold of
-- lock l (or report that it has not).
CREATE FUNCTION prm_await(l text, h text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE deadline timestamptz := clock_timestamp() + interval '30 s';
BEGIN
  WHILE NOT EXISTS (SELECT 1 FROM sync_state WHERE name = l AND workflowkey = h
                       AND preempt_deadline IS NOT NULL) LOOP
    IF clock_timestamp() > deadline THEN RETURN false; END IF;
    PERFORM pg_sleep(0.01);
  END LOOP;
  RETURN true;
END $$;

-- A waiter of the same priority preempts nobody: it waits for the limit.
SELECT status FROM sync_request('sem/prm/a', 'prm-eq', priority => 1);
SELECT pg_sleep(0.3) IS NOT NULL AS slept, sync_reconcile() >= 0 AS reconciled;
SELECT holder, waiting_for, blocking_holders FROM sync_waiters WHERE lock_name = 'sem/prm/a';
SELECT preempt_deadline FROM sync_state WHERE workflowkey = 'prm-v';
SELECT sync_release('sem/prm/a', 'prm-eq');

-- A waiter of higher priority: the holder is preempted, its grace ends in
-- an hour, and its lease with it; the waiter waits for that preemption.
SELECT status FROM sync_request('sem/prm/a', 'prm-hi', priority => 5);
SELECT prm_await('sem/prm/a', 'prm-v') AS preempted;
SELECT preempt_deadline BETWEEN now() + interval '59 min' AND clock_timestamp() + interval '1 hour' AS deadline_in_an_hour,
       lease_expires = preempt_deadline AS lease_cut
  FROM sync_state WHERE workflowkey = 'prm-v';
SELECT holder, waiting_for, waiting_for_row, blocking_holders,
       estimated_wait BETWEEN interval '59 min' AND interval '1 hour' AS estimate_is_the_grace
  FROM sync_waiters WHERE lock_name = 'sem/prm/a';
-- a refresh keeps the hold, but not past its grace
SELECT sync_refresh('sem/prm/a', 'prm-v', '5 hours') = preempt_deadline AS refresh_capped
  FROM sync_state WHERE workflowkey = 'prm-v';
SELECT lease_expires = preempt_deadline AS still_capped FROM sync_state WHERE workflowkey = 'prm-v';
SELECT lock_name, preemptions FROM sync_lock_stats WHERE lock_name = 'sem/prm/a';
-- a pattern row's grace applies to each of its semaphores
SELECT status FROM sync_request('sem/prmp/k', 'prm-hi', priority => 5);
SELECT prm_await('sem/prmp/k', 'prm-n') AS pattern_preempted;

-- The holder lets go during its grace: the slot goes to the waiter in the
-- same transaction (the hand-off), and the hold is gone.
SELECT sync_release('sem/prm/a', 'prm-v');
SELECT workflowkey, held, preempt_deadline IS NOT NULL AS preempted FROM sync_state
 WHERE name = 'sem/prm/a' ORDER BY workflowkey;
SELECT sync_is_held('sem/prm/a', 'prm-v') AS victim_held;
CALL regress_util.expect_error($$SELECT sync_refresh('sem/prm/a', 'prm-v')$$);

-- A session hold is never preempted.
DELETE FROM sync_state WHERE workflowkey LIKE 'prm-%';
SELECT sync_acquire('sem/prm/a', priority => 0) > 0 AS session_acquired;
SELECT status FROM sync_request('sem/prm/a', 'prm-hi', priority => 5);
SELECT pg_sleep(0.3) IS NOT NULL AS slept, sync_reconcile() >= 0 AS reconciled;
SELECT holder, waiting_for FROM sync_waiters WHERE lock_name = 'sem/prm/a';
SELECT sync_release('sem/prm/a');

DELETE FROM sync_state WHERE workflowkey LIKE 'prm-%';
DELETE FROM sync_limit WHERE name LIKE 'prm/%' OR name LIKE 'prmp/%';
DROP FUNCTION prm_await(text, text);
