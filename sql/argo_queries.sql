--
-- argo_queries: every monitoring and troubleshooting statement of Argo's
-- "Synchronization" document (../shared/seeds/argo-synchronization.md) runs
-- verbatim against keyed holds and shows what the document says it shows;
-- "Permanent controller removal" (DELETE FROM sync_controller / sync_state)
-- takes effect when its transaction commits: the slots are freed and the
-- next waiters, of another controller, are granted.
--
-- Statements whose output varies (tokens, heartbeat times, sequence numbers)
-- run verbatim through pg_temp.verbatim(), which prints each row as JSON in
-- the query's own order, with those columns shown as "<set>" (not null) or
-- null.  Every workflow is queued with an explicit creation time (queued_at,
-- Argo's sync_state.time), so the time column is printed as it is.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
-- Helpers regress_util.expect_error (reports a statement's error as a
-- NOTICE with SQLSTATE, DETAIL and HINT) and regress_util.error_of
-- (returns "SQLSTATE: message"), created by 00_setup.
SET TimeZone = 'UTC';

CREATE FUNCTION pg_temp.verbatim(query text, unordered boolean DEFAULT false,
    masked text[] DEFAULT ARRAY['token', 'granted_at', 'lease_expires', 'owner',
                                'request_id', 'seq', 'last_heartbeat'])
RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    r record;
    j jsonb;
    k text;
    rows text[] := '{}';
BEGIN
    FOR r IN EXECUTE query LOOP
        j := to_jsonb(r);
        FOREACH k IN ARRAY masked LOOP
            IF j ? k AND j->k <> 'null'::jsonb THEN
                j := jsonb_set(j, ARRAY[k], '"<set>"');
            END IF;
        END LOOP;
        rows := rows || j::text;
    END LOOP;
    IF unordered THEN
        -- the query has no ORDER BY: sort its rows here
        RETURN QUERY SELECT x FROM unnest(rows) x ORDER BY x COLLATE "C";
    ELSE
        RETURN QUERY SELECT x FROM unnest(rows) WITH ORDINALITY u(x, n) ORDER BY n;
    END IF;
END
$$;
-- sync_reconcile(), then wait (at most 10 s) until every keyed hold of the
-- views is held in sync_state too (the background worker, which may or may
-- not be connected during this test, may be writing one at that moment)
CREATE FUNCTION pg_temp.settle() RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1..1000 LOOP
        PERFORM sync_reconcile();
        IF NOT EXISTS (SELECT FROM sync_holders h
                         JOIN sync_state s ON s.name = h.lock_name AND s.workflowkey = h.holder
                        WHERE h.scope = 'keyed' AND NOT s.held) THEN
            RETURN true;
        END IF;
        PERFORM pg_sleep(0.01);
    END LOOP;
    RETURN false;
END
$$;

--
-- The state: two controllers.  'inactive-controller' holds both slots of
-- the semaphore namespace/lock-name and the mutex namespace/mutex;
-- workflows of 'other-controller' (and one more of 'inactive-controller')
-- wait for them.
--
-- (the limit of namespace/lock-name, as in "Configuring limits")
INSERT INTO sync_limit (name, sizelimit) VALUES ('namespace/lock-name', 2);
SELECT sync_heartbeat('inactive-controller') IS NOT NULL AS beat,
       sync_heartbeat('other-controller') IS NOT NULL AS beat;
SELECT status FROM sync_request('sem/namespace/lock-name', 'namespace/wf-1', 0,
                                'inactive-controller', queued_at => '2024-05-01 08:00:00+00');
SELECT status FROM sync_request('sem/namespace/lock-name', 'namespace/wf-2', 0,
                                'inactive-controller', queued_at => '2024-05-01 08:05:00+00');
SELECT status FROM sync_request('mtx/namespace/mutex', 'namespace/wf-1', 0,
                                'inactive-controller', queued_at => '2024-05-01 08:00:00+00');
-- waiting: by priority, then creation time (not arrival order)
SELECT status, queue_position
  FROM sync_request('sem/namespace/lock-name', 'namespace/wf-3', 0,
                    'other-controller', queued_at => '2024-05-01 09:00:00+00');
SELECT status, queue_position
  FROM sync_request('sem/namespace/lock-name', 'namespace/wf-4', 0,
                    'other-controller', queued_at => '2024-05-01 08:30:00+00');
SELECT status, queue_position
  FROM sync_request('sem/namespace/lock-name', 'namespace/wf-5', 2,
                    'inactive-controller', queued_at => '2024-05-01 10:00:00+00');
SELECT status, queue_position
  FROM sync_request('sem/namespace/lock-name', 'namespace/wf-6', 1,
                    'other-controller', queued_at => '2024-05-01 11:00:00+00');
SELECT status, queue_position
  FROM sync_request('mtx/namespace/mutex', 'namespace/wf-7', 0,
                    'other-controller', queued_at => '2024-05-01 08:10:00+00');

--
-- "Monitoring Lock Status", verbatim.
--
-- View all defined semaphore limits
SELECT * FROM sync_limit;
-- See which workflows are currently holding locks
SELECT * FROM pg_temp.verbatim($q$SELECT * FROM sync_state WHERE held = true;$q$, true);
-- See which workflows are waiting for locks: in queue order (wf-5, priority
-- 2; wf-6, priority 1; then wf-4 and wf-3 by creation time)
SELECT * FROM pg_temp.verbatim($q$SELECT * FROM sync_state WHERE held = false ORDER BY priority DESC, time ASC;$q$);
-- the same order as the live queue
SELECT lock_name, holder, controller, priority, position
  FROM sync_waiters ORDER BY lock_name, position;
-- Check controller health (time: the last heartbeat, server clock)
SELECT * FROM pg_temp.verbatim($q$SELECT * FROM sync_controller;$q$, true, ARRAY['time']);
SELECT controller, time BETWEEN now() - interval '1 minute' AND clock_timestamp() AS recent
  FROM sync_controller ORDER BY controller;

--
-- "Troubleshooting Database Lock Issues", verbatim.
--
-- 1. Check if a lock is being held by an inactive controller
SELECT * FROM pg_temp.verbatim($q$
   SELECT s.name, s.workflowkey, s.controller, c.time as last_heartbeat
   FROM sync_state s
   LEFT JOIN sync_controller c ON s.controller = c.controller
   WHERE s.held = true;
$q$, true);
-- 2. Verify semaphore limits are correctly set
SELECT * FROM sync_limit WHERE name = 'namespace/lock-name';
-- 3. If a workflow seems stuck waiting for a lock, check its position in
-- the queue
SELECT workflowkey, priority, time
   FROM sync_state
   WHERE name = 'sem/namespace/lock-name' AND held = false
   ORDER BY priority DESC, time ASC;

--
-- "Permanent controller removal", verbatim.
--
-- In a transaction that rolls back: nothing changes.  Until the commit the
-- slots stay taken.
BEGIN;
DELETE FROM sync_controller WHERE controller = 'inactive-controller';
DELETE FROM sync_state WHERE controller = 'inactive-controller';
SELECT count(*) AS rows_in_transaction FROM sync_state;
SELECT lock_name, holders, waiters FROM sync_locks ORDER BY lock_name;
ROLLBACK;
SELECT pg_temp.settle() AS settled;
SELECT name, workflowkey, controller, held, priority FROM sync_state
 ORDER BY name, held DESC, priority DESC, time;
SELECT controller FROM sync_controller ORDER BY controller;
SELECT lock_name, holders, waiters FROM sync_locks ORDER BY lock_name;
SELECT lock_name, holder, position, active FROM sync_waiters ORDER BY lock_name, position;

-- As pasted into psql: each statement commits on its own.
SELECT max(token) AS old_max FROM sync_state WHERE held \gset
DELETE FROM sync_controller WHERE controller = 'inactive-controller';
SELECT pg_temp.settle() AS settled;
-- The controller is inactive now: troubleshooting query 1 shows its holds
-- without a heartbeat; they are kept (Argo's promise) ...
SELECT * FROM pg_temp.verbatim($q$
   SELECT s.name, s.workflowkey, s.controller, c.time as last_heartbeat
   FROM sync_state s
   LEFT JOIN sync_controller c ON s.controller = c.controller
   WHERE s.held = true;
$q$, true);
SELECT lock_name, holders, waiters FROM sync_locks ORDER BY lock_name;
-- ... and its pending workflow wf-5 is passed over (no position), not deleted
SELECT lock_name, holder, controller, position, active
  FROM sync_waiters ORDER BY lock_name, position;
SELECT count(*) AS wf5_rows FROM sync_state WHERE workflowkey = 'namespace/wf-5';
DELETE FROM sync_state WHERE controller = 'inactive-controller';
-- committed: the holds and requests of inactive-controller are gone, and
-- the front waiters are granted: wf-6 (priority 1), then wf-4 (older than
-- wf-3) on the semaphore, wf-7 on the mutex; all of other-controller
SELECT pg_temp.settle() AS settled;
SELECT lock_name, holders, waiters FROM sync_locks ORDER BY lock_name;
SELECT lock_name, holder, controller FROM sync_holders ORDER BY lock_name, holder;
SELECT lock_name, holder, controller, position FROM sync_waiters ORDER BY lock_name, position;
-- the monitoring queries agree
SELECT * FROM pg_temp.verbatim($q$SELECT * FROM sync_state WHERE held = true;$q$, true);
SELECT * FROM pg_temp.verbatim($q$SELECT * FROM sync_state WHERE held = false ORDER BY priority DESC, time ASC;$q$);
SELECT * FROM pg_temp.verbatim($q$SELECT * FROM sync_controller;$q$, true, ARRAY['time']);
SELECT * FROM pg_temp.verbatim($q$
   SELECT s.name, s.workflowkey, s.controller, c.time as last_heartbeat
   FROM sync_state s
   LEFT JOIN sync_controller c ON s.controller = c.controller
   WHERE s.held = true;
$q$, true);
-- the new holds have tokens larger than any of the removed ones (fencing)
SELECT count(*) AS holds, bool_and(token > :old_max) AS tokens_larger FROM sync_state WHERE held;

--
-- "Configuring limits", verbatim: a semaphore namespace/semaphore with
-- limit 3, raised to 4, which grants the waiting workflow.
--
INSERT INTO sync_limit (name, sizelimit) VALUES ('namespace/semaphore', 3);
SELECT w AS workflowkey, (SELECT status FROM sync_request('sem/namespace/semaphore', w, 0, 'other-controller')) AS status
  FROM unnest(ARRAY['namespace/s-1', 'namespace/s-2', 'namespace/s-3', 'namespace/s-4']) AS w;
UPDATE sync_limit SET sizelimit = 4 WHERE name = 'namespace/semaphore';
SELECT pg_temp.settle() AS settled;
SELECT workflowkey, held FROM sync_state WHERE name = 'sem/namespace/semaphore' ORDER BY workflowkey;
SELECT * FROM sync_limit WHERE name = 'namespace/semaphore';

--
-- Clean up.
--
DELETE FROM sync_state WHERE controller = 'other-controller';
DELETE FROM sync_controller WHERE controller = 'other-controller';
DELETE FROM sync_limit WHERE name IN ('namespace/lock-name', 'namespace/semaphore');
SELECT pg_temp.settle() AS settled;
SELECT count(*) AS rows FROM sync_state;
SELECT count(*) AS controllers FROM sync_controller;
SELECT * FROM sync_locks;
RESET TimeZone;
