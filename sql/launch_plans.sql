--
-- launch_plans: Flyte's launch-plan concurrency policies (WAIT / ABORT /
-- SKIP / REPLACE) over versioned launch plans and their executions.  Each
-- plan name (project/domain/name) is the semaphore
-- 'sem/launchplan/<project>/<domain>/<name>' whose keyed holders are
-- execution ids.  Counting is version-agnostic (every slot of the plan
-- name), enforcement version-specific (the policy of the version launched).
--
-- Times vary from run to run: they are compared, never printed.  A slot
-- freed by a terminal phase is granted in shared memory at commit; the
-- background worker (which may or may not be connected during this test)
-- or sync_reconcile() writes the grant and the promotion (phase QUEUED,
-- event PROMOTED).  So before it reads phases after a release this test
-- calls pg_temp.settle(): rounds of sync_reconcile(), each committed (a
-- slot the round itself frees is handed on at its commit), until every
-- keyed hold of a launch plan in the views is held in sync_state too, no
-- PENDING execution holds a slot, and the worker is not in the middle of a
-- round of its own (at most 10 s).
--
CREATE EXTENSION IF NOT EXISTS syncwf;

-- executions, events and slots of this test's plans (project 'lpt')
CREATE VIEW pg_temp.ex AS
    SELECT name, version, execution_id, phase, reason
      FROM sync_execution WHERE project = 'lpt'
     ORDER BY name, created_at, execution_id;
CREATE VIEW pg_temp.ev AS
    SELECT name, event, version, execution_id, replaced_execution_id, reason
      FROM sync_launch_event WHERE project = 'lpt'
     ORDER BY event_id;
CREATE VIEW pg_temp.slots AS
    SELECT lock_name, holder, scope, pid IS NULL AS no_pid
      FROM sync_holders WHERE lock_name LIKE 'sem/launchplan/lpt/%'
     ORDER BY lock_name, holder;
CREATE VIEW pg_temp.queue AS
    SELECT lock_name, holder, position, active
      FROM sync_waiters WHERE lock_name LIKE 'sem/launchplan/lpt/%'
     ORDER BY lock_name, position;
CREATE PROCEDURE pg_temp.settle(INOUT settled boolean DEFAULT NULL)
LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1..1000 LOOP
        PERFORM sync_reconcile();
        -- a slot released by the reconciliation itself is handed on when it
        -- commits; the next round writes that grant
        COMMIT;
        IF NOT EXISTS (SELECT FROM sync_holders h
                         JOIN sync_state s ON s.name = h.lock_name AND s.workflowkey = h.holder
                        WHERE h.scope = 'keyed' AND h.lock_name LIKE 'sem/launchplan/lpt/%'
                          AND NOT s.held)
           AND NOT EXISTS (SELECT FROM sync_execution e
                             JOIN sync_state s ON s.workflowkey = e.execution_id
                            WHERE e.project = 'lpt' AND e.phase = 'PENDING' AND s.held)
           -- and the worker is not in the middle of a round of its own
           AND NOT EXISTS (SELECT FROM pg_stat_activity
                            WHERE backend_type = 'syncwf worker' AND state <> 'idle') THEN
            settled := true;
            RETURN;
        END IF;
        PERFORM pg_sleep(0.01);
    END LOOP;
    settled := false;
END
$$;

--
-- The seed page's scenario ("Version-Agnostic Check, Version-Specific
-- Enforcement", flyte-concurrency-control.md), step by step.  Flyte ships
-- only SKIP, its default behaviour: a version registered with a
-- max_concurrency and no behaviour gets SKIP here too.
--
-- "1. Launch Plan `MyLP` version `v1` has a `ConcurrencyPolicy` with
--     `max_concurrency = 3`."
SELECT sync_launch_plan_register('lpt', 'dev', 'MyLP', 'v1', 3);
-- (v2's policy, used in step 3: "`v2`, which has a `ConcurrencyPolicy`
--  with `max_concurrency = 10`")
SELECT sync_launch_plan_register('lpt', 'dev', 'MyLP', 'v2', 10);
SELECT version, max_concurrency, behavior, scheduling, max_pending
  FROM sync_launch_plan WHERE project = 'lpt' AND name = 'MyLP' ORDER BY version;
-- the plan name's semaphore needs no sync_limit row: each execution is
-- admitted against its own version's limit
SELECT count(*) AS limit_rows FROM sync_limit WHERE name LIKE 'launchplan/lpt/%';

-- "2. Three executions of `MyLP` (they could be `v1` or any other version)
--     are currently running."
SELECT * FROM sync_execution_create('lpt', 'dev', 'MyLP', 'v1', 'mylp-1');
SELECT * FROM sync_execution_create('lpt', 'dev', 'MyLP', 'v2', 'mylp-2');
SELECT * FROM sync_execution_create('lpt', 'dev', 'MyLP', 'v1', 'mylp-3');
SELECT sync_execution_update(id, 'RUNNING') AS phase
  FROM unnest(ARRAY['mylp-1', 'mylp-2', 'mylp-3']) AS id;
SELECT * FROM pg_temp.ex WHERE name = 'MyLP';
SELECT * FROM pg_temp.slots WHERE lock_name = 'sem/launchplan/lpt/dev/MyLP';

-- "3. You try to launch `MyLP` version `v2`, which has a
--     `ConcurrencyPolicy` with `max_concurrency = 10`.
--     - **Result**: This `v2` execution will launch successfully because its
--       own limit (10) is not breached by the current 3 active executions."
SELECT * FROM sync_execution_create('lpt', 'dev', 'MyLP', 'v2', 'mylp-4');
SELECT * FROM pg_temp.ex WHERE name = 'MyLP';

-- "4. Now, with 4 total active executions (3 original + the new `v2`), you
--     try to launch `MyLP` version `v1` again.
--     - **Result**: This `v1` execution will **fail**. The check sees 4
--       active executions, and `v1`'s policy only allows a maximum of 3."
SELECT lock_name, kind, sizelimit, holders, waiters
  FROM sync_locks WHERE lock_name = 'sem/launchplan/lpt/dev/MyLP';
SELECT * FROM sync_execution_create('lpt', 'dev', 'MyLP', 'v1', 'mylp-5');
-- SKIP: no execution is created; the skip is an event
SELECT count(*) AS mylp_5_rows FROM sync_execution WHERE execution_id = 'mylp-5';
SELECT * FROM pg_temp.ev WHERE name = 'MyLP';
-- a caller that wants Flyte's error (RESOURCE_EXHAUSTED) asks for one: SQLSTATE
-- class 53, the same message, and nothing is recorded
SELECT regress_util.error_of($$SELECT * FROM sync_execution_create('lpt', 'dev', 'MyLP', 'v1', 'mylp-6', raise_on_limit => true)$$)
       AS v1_launch;
SELECT count(*) AS events FROM sync_launch_event WHERE execution_id = 'mylp-6';
-- v2 still launches: 4 active executions are below its own limit of 10
SELECT * FROM sync_execution_create('lpt', 'dev', 'MyLP', 'v2', 'mylp-7');
SELECT * FROM pg_temp.ex WHERE name = 'MyLP';
SELECT * FROM pg_temp.slots WHERE lock_name = 'sem/launchplan/lpt/dev/MyLP';

--
-- A free slot: QUEUED, holding a slot.  A plan without any policy: QUEUED,
-- no slot, no semaphore.
--
SELECT sync_launch_plan_register('lpt', 'dev', 'free', 'v1', 2, 'WAIT');
SELECT * FROM sync_execution_create('lpt', 'dev', 'free', 'v1', 'free-1');
SELECT * FROM sync_execution_create('lpt', 'dev', 'free', 'v1', 'free-2');
SELECT * FROM pg_temp.slots WHERE lock_name = 'sem/launchplan/lpt/dev/free';
SELECT sync_launch_plan_register('lpt', 'dev', 'nopolicy', 'v1');
SELECT version, max_concurrency, behavior, scheduling
  FROM sync_launch_plan WHERE project = 'lpt' AND name = 'nopolicy';
SELECT * FROM sync_execution_create('lpt', 'dev', 'nopolicy', 'v1', 'nop-1');
SELECT * FROM sync_execution_create('lpt', 'dev', 'nopolicy', 'v1', 'nop-2');
SELECT * FROM sync_execution_create('lpt', 'dev', 'nopolicy', 'v1', 'nop-3');
SELECT * FROM pg_temp.ex WHERE name = 'nopolicy';
SELECT count(*) AS slots FROM sync_holders WHERE lock_name = 'sem/launchplan/lpt/dev/nopolicy';
SELECT count(*) AS state_rows FROM sync_state WHERE name = 'sem/launchplan/lpt/dev/nopolicy';

--
-- A version without a policy, of a plan whose other version has one: it
-- takes a slot (so it counts for that version), but it is never refused.
--
SELECT sync_launch_plan_register('lpt', 'dev', 'mixed', 'limited', 1, 'SKIP');
SELECT sync_launch_plan_register('lpt', 'dev', 'mixed', 'open');
SELECT * FROM sync_execution_create('lpt', 'dev', 'mixed', 'open', 'mixed-1');
SELECT * FROM pg_temp.slots WHERE lock_name = 'sem/launchplan/lpt/dev/mixed';
-- the open execution counts: the limited version is full
SELECT * FROM sync_execution_create('lpt', 'dev', 'mixed', 'limited', 'mixed-2');
-- the open version is never refused, even beyond every limit
SELECT * FROM sync_execution_create('lpt', 'dev', 'mixed', 'open', 'mixed-3');
SELECT * FROM pg_temp.ex WHERE name = 'mixed';
SELECT * FROM pg_temp.slots WHERE lock_name = 'sem/launchplan/lpt/dev/mixed';
SELECT * FROM pg_temp.ev WHERE name = 'mixed';
-- both open executions end: the limited version gets in
SELECT sync_execution_update('mixed-1', 'SUCCEEDED') AS phase,
       sync_execution_update('mixed-3', 'FAILED') AS phase;
SELECT * FROM sync_execution_create('lpt', 'dev', 'mixed', 'limited', 'mixed-4');
SELECT * FROM pg_temp.slots WHERE lock_name = 'sem/launchplan/lpt/dev/mixed';

--
-- WAIT: when full, PENDING with a reason, in the plan's queue; a terminal
-- phase hands the slot to the first one (FIFO by default).
--
SELECT sync_launch_plan_register('lpt', 'dev', 'wait', 'v1', 1, 'WAIT');
SELECT * FROM sync_execution_create('lpt', 'dev', 'wait', 'v1', 'wait-1');
SELECT * FROM sync_execution_create('lpt', 'dev', 'wait', 'v1', 'wait-2');
SELECT * FROM sync_execution_create('lpt', 'dev', 'wait', 'v1', 'wait-3');
SELECT * FROM pg_temp.ex WHERE name = 'wait';
SELECT * FROM pg_temp.slots WHERE lock_name = 'sem/launchplan/lpt/dev/wait';
SELECT * FROM pg_temp.queue WHERE lock_name = 'sem/launchplan/lpt/dev/wait';
-- a pending execution has no queued_at, no slot; waiting is not an event
SELECT execution_id, queued_at IS NULL AS not_queued_yet
  FROM sync_execution WHERE name = 'wait' AND project = 'lpt' ORDER BY created_at;
SELECT count(*) AS events FROM sync_launch_event WHERE project = 'lpt' AND name = 'wait';
-- the holder moves on and finishes: wait-2 is promoted
SELECT sync_execution_update('wait-1', 'RUNNING') AS phase;
SELECT sync_execution_update('wait-1', 'SUCCEEDING') AS phase;
SELECT sync_execution_update('wait-1', 'SUCCEEDED') AS phase;
CALL pg_temp.settle();
SELECT * FROM pg_temp.ex WHERE name = 'wait';
SELECT * FROM pg_temp.slots WHERE lock_name = 'sem/launchplan/lpt/dev/wait';
SELECT * FROM pg_temp.queue WHERE lock_name = 'sem/launchplan/lpt/dev/wait';
SELECT * FROM pg_temp.ev WHERE name = 'wait';
SELECT execution_id, queued_at >= created_at AS queued_after_created
  FROM sync_execution WHERE execution_id = 'wait-2';
-- a pending execution given up (ABORTED) leaves the queue; the slot is
-- untouched
SELECT sync_execution_update('wait-3', 'ABORTED') AS phase;
CALL pg_temp.settle();
SELECT * FROM pg_temp.ex WHERE name = 'wait';
SELECT * FROM pg_temp.slots WHERE lock_name = 'sem/launchplan/lpt/dev/wait';
SELECT * FROM pg_temp.queue WHERE lock_name = 'sem/launchplan/lpt/dev/wait';

--
-- ABORT: when full, the execution is recorded FAILED with the reason, and
-- an ABORTED event; it takes no slot.
--
SELECT sync_launch_plan_register('lpt', 'dev', 'abort', 'v1', 1, 'ABORT');
SELECT * FROM sync_execution_create('lpt', 'dev', 'abort', 'v1', 'abort-1');
SELECT * FROM sync_execution_create('lpt', 'dev', 'abort', 'v1', 'abort-2');
SELECT * FROM pg_temp.ex WHERE name = 'abort';
SELECT execution_id, finished_at IS NOT NULL AS finished, queued_at IS NULL AS never_queued
  FROM sync_execution WHERE execution_id = 'abort-2';
SELECT * FROM pg_temp.ev WHERE name = 'abort';
SELECT * FROM pg_temp.slots WHERE lock_name = 'sem/launchplan/lpt/dev/abort';
SELECT count(*) AS waiters FROM sync_waiters WHERE lock_name = 'sem/launchplan/lpt/dev/abort';

--
-- SKIP: when full, no execution is created; a SKIPPED event is recorded and
-- returned.
--
SELECT sync_launch_plan_register('lpt', 'dev', 'skip', 'v1', 1, 'SKIP');
SELECT * FROM sync_execution_create('lpt', 'dev', 'skip', 'v1', 'skip-1');
SELECT * FROM sync_execution_create('lpt', 'dev', 'skip', 'v1', 'skip-2');
SELECT * FROM pg_temp.ex WHERE name = 'skip';
SELECT * FROM pg_temp.ev WHERE name = 'skip';
SELECT * FROM pg_temp.slots WHERE lock_name = 'sem/launchplan/lpt/dev/skip';
SELECT count(*) AS waiters FROM sync_waiters WHERE lock_name = 'sem/launchplan/lpt/dev/skip';

--
-- REPLACE: when full, the oldest slot-holding execution goes to ABORTING
-- (its reason names the replacement) and loses its slot; the new one is
-- QUEUED at once.
--
SELECT sync_launch_plan_register('lpt', 'dev', 'replace', 'v1', 2, 'REPLACE');
SELECT * FROM sync_execution_create('lpt', 'dev', 'replace', 'v1', 'replace-1');
SELECT * FROM sync_execution_create('lpt', 'dev', 'replace', 'v1', 'replace-2');
SELECT sync_execution_update('replace-1', 'RUNNING') AS phase;
SELECT * FROM sync_execution_create('lpt', 'dev', 'replace', 'v1', 'replace-3');
SELECT * FROM pg_temp.ex WHERE name = 'replace';
SELECT * FROM pg_temp.slots WHERE lock_name = 'sem/launchplan/lpt/dev/replace';
SELECT * FROM pg_temp.ev WHERE name = 'replace';
-- the replaced execution finishes aborting: no slot changes hands
SELECT sync_execution_update('replace-1', 'ABORTED') AS phase;
CALL pg_temp.settle();
SELECT * FROM pg_temp.slots WHERE lock_name = 'sem/launchplan/lpt/dev/replace';
-- the next one replaces the oldest remaining slot holder (replace-2)
SELECT * FROM sync_execution_create('lpt', 'dev', 'replace', 'v1', 'replace-4');
SELECT * FROM pg_temp.ex WHERE name = 'replace';
SELECT * FROM pg_temp.slots WHERE lock_name = 'sem/launchplan/lpt/dev/replace';
-- a replaced execution stays without a slot while it is ABORTING: a
-- reconciliation does not give it one back
CALL pg_temp.settle();
SELECT * FROM pg_temp.slots WHERE lock_name = 'sem/launchplan/lpt/dev/replace';
SELECT lock_name, holders, waiters FROM sync_locks WHERE lock_name = 'sem/launchplan/lpt/dev/replace';
-- with a limit of 0 there is nothing to replace: refused like ABORT
SELECT sync_launch_plan_register('lpt', 'dev', 'replace0', 'v1', 0, 'REPLACE');
SELECT * FROM sync_execution_create('lpt', 'dev', 'replace0', 'v1', 'replace0-1');
SELECT * FROM pg_temp.ex WHERE name = 'replace0';
SELECT * FROM pg_temp.ev WHERE name = 'replace0';
SELECT count(*) AS slots FROM sync_holders WHERE lock_name = 'sem/launchplan/lpt/dev/replace0';

--
-- Idempotent: creating an id that exists returns its current state and
-- changes nothing (whatever version or priority is passed).
--
SELECT count(*) AS executions FROM sync_execution WHERE project = 'lpt' \gset
SELECT count(*) AS events FROM sync_launch_event WHERE project = 'lpt' \gset
SELECT count(*) AS state_rows FROM sync_state WHERE name LIKE 'sem/launchplan/lpt/%' \gset
SELECT * FROM sync_execution_create('lpt', 'dev', 'MyLP', 'v1', 'mylp-1');
SELECT * FROM sync_execution_create('lpt', 'dev', 'free', 'v1', 'free-1');
SELECT * FROM sync_execution_create('lpt', 'dev', 'nopolicy', 'v1', 'nop-1');
SELECT * FROM sync_execution_create('lpt', 'dev', 'wait', 'v1', 'wait-2');
SELECT * FROM sync_execution_create('lpt', 'dev', 'wait', 'v1', 'wait-1');
SELECT * FROM sync_execution_create('lpt', 'dev', 'abort', 'v1', 'abort-2');
SELECT * FROM sync_execution_create('lpt', 'dev', 'replace', 'v1', 'replace-2');
SELECT * FROM sync_execution_create('lpt', 'dev', 'replace', 'v1', 'replace-1', 7);
SELECT * FROM sync_execution_create('lpt', 'dev', 'MyLP', 'v2', 'mylp-3', 5);
SELECT (SELECT count(*) FROM sync_execution WHERE project = 'lpt') = :executions AS same_executions,
       (SELECT count(*) FROM sync_launch_event WHERE project = 'lpt') = :events AS same_events,
       (SELECT count(*) FROM sync_state WHERE name LIKE 'sem/launchplan/lpt/%') = :state_rows AS same_slots;
SELECT execution_id, version, priority FROM sync_execution
 WHERE execution_id IN ('mylp-3', 'replace-1') ORDER BY execution_id;
-- a pending execution asked again is still pending, in the same place
SELECT sync_launch_plan_register('lpt', 'dev', 'again', 'v1', 1, 'WAIT');
SELECT * FROM sync_execution_create('lpt', 'dev', 'again', 'v1', 'again-1');
SELECT * FROM sync_execution_create('lpt', 'dev', 'again', 'v1', 'again-2');
SELECT * FROM sync_execution_create('lpt', 'dev', 'again', 'v1', 'again-3');
SELECT * FROM sync_execution_create('lpt', 'dev', 'again', 'v1', 'again-2');
SELECT * FROM pg_temp.queue WHERE lock_name = 'sem/launchplan/lpt/dev/again';
-- a skipped id was never created: asking again is a new launch (skipped
-- again while the plan is full, launched once it has room)
SELECT * FROM sync_execution_create('lpt', 'dev', 'skip', 'v1', 'skip-2');
SELECT sync_execution_update('skip-1', 'SUCCEEDED') AS phase;
SELECT * FROM sync_execution_create('lpt', 'dev', 'skip', 'v1', 'skip-2');
SELECT * FROM sync_execution_create('lpt', 'dev', 'skip', 'v1', 'skip-2');
SELECT * FROM pg_temp.ex WHERE name = 'skip';
SELECT * FROM pg_temp.ev WHERE name = 'skip';

--
-- sync_execution_update: compare-and-swap.  Forward moves return the new
-- phase (input is case-insensitive); the same phase is a no-op that
-- returns it; started_at and finished_at are set once.
--
SELECT sync_launch_plan_register('lpt', 'dev', 'cas', 'v1', 1, 'WAIT');
SELECT * FROM sync_execution_create('lpt', 'dev', 'cas', 'v1', 'cas-1');
SELECT sync_execution_update('cas-1', 'QUEUED') AS same_phase;
SELECT sync_execution_update('cas-1', 'running') AS phase;
SELECT started_at AS started FROM sync_execution WHERE execution_id = 'cas-1' \gset
SELECT sync_execution_update('cas-1', 'RUNNING') AS same_phase;
SELECT started_at = :'started' AS started_unchanged, finished_at IS NULL AS not_finished
  FROM sync_execution WHERE execution_id = 'cas-1';
SELECT * FROM pg_temp.slots WHERE lock_name = 'sem/launchplan/lpt/dev/cas';
SELECT sync_execution_update('cas-1', 'FAILING') AS phase;
SELECT sync_execution_update('cas-1', 'FAILED') AS phase;
SELECT sync_execution_update('cas-1', 'FAILED') AS same_phase;
SELECT phase, started_at = :'started' AS started_unchanged,
       finished_at >= started_at AS finished_after_start
  FROM sync_execution WHERE execution_id = 'cas-1';
-- the terminal phase released the slot
SELECT count(*) AS slots FROM sync_holders WHERE lock_name = 'sem/launchplan/lpt/dev/cas';
SELECT count(*) AS state_rows FROM sync_state WHERE name = 'sem/launchplan/lpt/dev/cas';
-- QUEUED straight to a terminal phase is a forward move too
SELECT * FROM sync_execution_create('lpt', 'dev', 'cas', 'v1', 'cas-2');
SELECT sync_execution_update('cas-2', 'ABORTED') AS phase;
SELECT count(*) AS slots FROM sync_holders WHERE lock_name = 'sem/launchplan/lpt/dev/cas';
-- a pending execution stays pending when asked to: a no-op
SELECT * FROM sync_execution_create('lpt', 'dev', 'cas', 'v1', 'cas-3');
SELECT * FROM sync_execution_create('lpt', 'dev', 'cas', 'v1', 'cas-4');
SELECT sync_execution_update('cas-4', 'PENDING') AS same_phase;
SELECT * FROM pg_temp.ex WHERE name = 'cas';

--
-- The scheduling order of waiting executions: FIFO (creation order), LIFO
-- (newest first), PRIORITY (higher priority first, then creation order).
-- Each plan has one slot, held; three executions wait, created in the order
-- p1 (priority 0), p2 (priority 5), p3 (priority 1).
--
SELECT sync_launch_plan_register('lpt', 'dev', 'fifo', 'v1', 1, 'WAIT', 'FIFO');
SELECT sync_launch_plan_register('lpt', 'dev', 'lifo', 'v1', 1, 'WAIT', 'lifo');
SELECT sync_launch_plan_register('lpt', 'dev', 'prio', 'v1', 1, 'WAIT', 'Priority');
SELECT name, scheduling FROM sync_launch_plan
 WHERE project = 'lpt' AND name IN ('fifo', 'lifo', 'prio') ORDER BY name;
SELECT n AS plan, c.phase
  FROM unnest(ARRAY['fifo', 'lifo', 'prio']) AS n,
       LATERAL sync_execution_create('lpt', 'dev', n, 'v1', n || '-h') AS c;
SELECT n AS plan, c.phase
  FROM unnest(ARRAY['fifo', 'lifo', 'prio']) AS n,
       LATERAL sync_execution_create('lpt', 'dev', n, 'v1', n || '-p1', 0) AS c;
SELECT n AS plan, c.phase
  FROM unnest(ARRAY['fifo', 'lifo', 'prio']) AS n,
       LATERAL sync_execution_create('lpt', 'dev', n, 'v1', n || '-p2', 5) AS c;
SELECT n AS plan, c.phase
  FROM unnest(ARRAY['fifo', 'lifo', 'prio']) AS n,
       LATERAL sync_execution_create('lpt', 'dev', n, 'v1', n || '-p3', 1) AS c;
SELECT * FROM pg_temp.queue WHERE lock_name ~ '/(fifo|lifo|prio)$';
-- the holders finish: FIFO promotes p1, LIFO p3, PRIORITY p2
SELECT sync_execution_update(n || '-h', 'SUCCEEDED') AS phase
  FROM unnest(ARRAY['fifo', 'lifo', 'prio']) AS n;
CALL pg_temp.settle();
SELECT name, execution_id, phase FROM pg_temp.ex
 WHERE name IN ('fifo', 'lifo', 'prio') AND phase = 'QUEUED';
SELECT * FROM pg_temp.slots WHERE lock_name ~ '/(fifo|lifo|prio)$';
-- and again: FIFO p2, LIFO p2, PRIORITY p3
SELECT e.execution_id, sync_execution_update(e.execution_id, 'SUCCEEDED') AS phase
  FROM sync_execution e
 WHERE e.project = 'lpt' AND e.name IN ('fifo', 'lifo', 'prio') AND e.phase = 'QUEUED'
 ORDER BY e.name;
CALL pg_temp.settle();
SELECT name, execution_id, phase FROM pg_temp.ex
 WHERE name IN ('fifo', 'lifo', 'prio') AND phase = 'QUEUED';
SELECT * FROM pg_temp.queue WHERE lock_name ~ '/(fifo|lifo|prio)$';
SELECT name, execution_id, reason FROM pg_temp.ev
 WHERE name IN ('fifo', 'lifo', 'prio') ORDER BY name, execution_id;

--
-- A WAIT plan whose version loses its policy: its pending executions are
-- promoted at the next reconciliation (QUEUED, no longer a waiting reason;
-- event PROMOTED with a reason), and the plan's semaphore goes once its
-- last slot is given back.
--
SELECT sync_launch_plan_register('lpt', 'dev', 'lose', 'v1', 1, 'WAIT');
SELECT * FROM sync_execution_create('lpt', 'dev', 'lose', 'v1', 'lose-1');
SELECT * FROM sync_execution_create('lpt', 'dev', 'lose', 'v1', 'lose-2');
SELECT * FROM sync_execution_create('lpt', 'dev', 'lose', 'v1', 'lose-3');
SELECT sync_launch_plan_register('lpt', 'dev', 'lose', 'v1', NULL);
SELECT max_concurrency, behavior FROM sync_launch_plan WHERE project = 'lpt' AND name = 'lose';
CALL pg_temp.settle();
SELECT * FROM pg_temp.ex WHERE name = 'lose';
SELECT * FROM pg_temp.ev WHERE name = 'lose' ORDER BY execution_id;
SELECT count(*) AS waiters FROM sync_waiters WHERE lock_name = 'sem/launchplan/lpt/dev/lose';
-- new executions are QUEUED at once, without a slot
SELECT * FROM sync_execution_create('lpt', 'dev', 'lose', 'v1', 'lose-4');
SELECT sync_execution_update(id, 'SUCCEEDED') AS phase
  FROM unnest(ARRAY['lose-1', 'lose-2', 'lose-3', 'lose-4']) AS id;
CALL pg_temp.settle();
SELECT count(*) AS state_rows FROM sync_state WHERE name = 'sem/launchplan/lpt/dev/lose';
SELECT count(*) AS live FROM sync_locks WHERE lock_name = 'sem/launchplan/lpt/dev/lose';

--
-- A raised limit promotes pending executions at once (in queue order).
--
SELECT sync_launch_plan_register('lpt', 'dev', 'raise', 'v1', 1, 'WAIT');
SELECT * FROM sync_execution_create('lpt', 'dev', 'raise', 'v1', 'raise-1');
SELECT * FROM sync_execution_create('lpt', 'dev', 'raise', 'v1', 'raise-2');
SELECT * FROM sync_execution_create('lpt', 'dev', 'raise', 'v1', 'raise-3');
SELECT * FROM sync_execution_create('lpt', 'dev', 'raise', 'v1', 'raise-4');
SELECT sync_launch_plan_register('lpt', 'dev', 'raise', 'v1', 3, 'WAIT');
CALL pg_temp.settle();
SELECT * FROM pg_temp.ex WHERE name = 'raise';
SELECT * FROM pg_temp.slots WHERE lock_name = 'sem/launchplan/lpt/dev/raise';
SELECT * FROM pg_temp.queue WHERE lock_name = 'sem/launchplan/lpt/dev/raise';
SELECT * FROM pg_temp.ev WHERE name = 'raise' ORDER BY execution_id;
-- a plain UPDATE of the plan's row acts too: raised to 4, raise-4 is in
UPDATE sync_launch_plan SET max_concurrency = 4
 WHERE project = 'lpt' AND name = 'raise' AND version = 'v1';
CALL pg_temp.settle();
SELECT * FROM pg_temp.ex WHERE name = 'raise';
SELECT * FROM pg_temp.slots WHERE lock_name = 'sem/launchplan/lpt/dev/raise';

--
-- max_pending: an execution pending longer is TIMED_OUT (event), and leaves
-- the queue.  (The reason shows max_pending; the worker, which may be the
-- one to time it out, writes it in the server's default IntervalStyle.)
--
SET IntervalStyle = postgres;
SELECT sync_launch_plan_register('lpt', 'dev', 'timeout', 'v1', 1, 'WAIT',
                                 max_pending => '10 ms');
SELECT max_pending = interval '10 ms' AS max_pending_10ms
  FROM sync_launch_plan WHERE project = 'lpt' AND name = 'timeout';
SELECT * FROM sync_execution_create('lpt', 'dev', 'timeout', 'v1', 'timeout-1');
SELECT * FROM sync_execution_create('lpt', 'dev', 'timeout', 'v1', 'timeout-2');
SELECT pg_sleep(0.05);
CALL pg_temp.settle();
SELECT * FROM pg_temp.ex WHERE name = 'timeout';
SELECT execution_id, finished_at - created_at >= interval '10 ms' AS waited_10ms
  FROM sync_execution WHERE execution_id = 'timeout-2';
SELECT * FROM pg_temp.ev WHERE name = 'timeout';
SELECT * FROM pg_temp.slots WHERE lock_name = 'sem/launchplan/lpt/dev/timeout';
SELECT count(*) AS waiters FROM sync_waiters WHERE lock_name = 'sem/launchplan/lpt/dev/timeout';
-- the slot holder is never timed out
SELECT phase FROM sync_execution WHERE execution_id = 'timeout-1';
RESET IntervalStyle;

--
-- Another system moves an execution by a direct UPDATE: a terminal phase
-- gives the slot back at the next reconciliation, and the next pending
-- execution is promoted.
--
SELECT sync_launch_plan_register('lpt', 'dev', 'direct', 'v1', 1, 'WAIT');
SELECT * FROM sync_execution_create('lpt', 'dev', 'direct', 'v1', 'direct-1');
SELECT * FROM sync_execution_create('lpt', 'dev', 'direct', 'v1', 'direct-2');
UPDATE sync_execution SET phase = 'SUCCEEDED', finished_at = clock_timestamp()
 WHERE execution_id = 'direct-1';
CALL pg_temp.settle();
SELECT * FROM pg_temp.ex WHERE name = 'direct';
SELECT * FROM pg_temp.slots WHERE lock_name = 'sem/launchplan/lpt/dev/direct';
SELECT count(*) AS waiters FROM sync_waiters WHERE lock_name = 'sem/launchplan/lpt/dev/direct';
SELECT * FROM pg_temp.ev WHERE name = 'direct';
-- an execution moved by hand from PENDING to RUNNING takes a slot (beyond
-- the limit: it runs already)
SELECT * FROM sync_execution_create('lpt', 'dev', 'direct', 'v1', 'direct-3');
UPDATE sync_execution SET phase = 'RUNNING', reason = NULL, started_at = clock_timestamp()
 WHERE execution_id = 'direct-3';
CALL pg_temp.settle();
SELECT * FROM pg_temp.ex WHERE name = 'direct';
SELECT * FROM pg_temp.slots WHERE lock_name = 'sem/launchplan/lpt/dev/direct';
SELECT count(*) AS waiters FROM sync_waiters WHERE lock_name = 'sem/launchplan/lpt/dev/direct';

--
-- sync_launch_plan_stats: per plan name, active and pending executions,
-- events in the last hour, time spent pending (compared, not printed).
--
SELECT name, active, pending, skipped, aborted, replaced, timed_out
  FROM sync_launch_plan_stats WHERE project = 'lpt' ORDER BY name;
SELECT name, pending_p50 >= interval '0' AS p50_ok,
       pending_p95 >= pending_p50 AS p95_ge_p50,
       pending_max >= pending_p95 AS max_ge_p95
  FROM sync_launch_plan_stats WHERE project = 'lpt' AND name IN ('wait', 'fifo', 'raise')
 ORDER BY name;
-- wait-2 waited for its slot: the longest wait is above zero
SELECT pending_max > interval '0' AS waited
  FROM sync_launch_plan_stats WHERE project = 'lpt' AND name = 'wait';
-- sync_launch_plan_metrics with a window: an empty window counts no events
SELECT name, active, pending, skipped, aborted, replaced, timed_out
  FROM sync_launch_plan_metrics('1 microsecond') WHERE project = 'lpt' AND name = 'MyLP';

--
-- Enforcement is version-specific and work-conserving: an execution of v1
-- waiting for v1's limit (1) does not stop launches of versions whose own
-- limit (10) is not reached, neither SKIP (v2) nor WAIT (v3).
--
SELECT sync_launch_plan_register('lpt', 'dev', 'hol', 'v1', 1, 'WAIT');
SELECT sync_launch_plan_register('lpt', 'dev', 'hol', 'v2', 10, 'SKIP');
SELECT sync_launch_plan_register('lpt', 'dev', 'hol', 'v3', 10, 'WAIT');
SELECT phase FROM sync_execution_create('lpt', 'dev', 'hol', 'v1', 'hol-1');
SELECT phase FROM sync_execution_create('lpt', 'dev', 'hol', 'v1', 'hol-2');
SELECT phase FROM sync_execution_create('lpt', 'dev', 'hol', 'v2', 'hol-3');
SELECT phase FROM sync_execution_create('lpt', 'dev', 'hol', 'v3', 'hol-4');
-- hol-2 still waits: v1 allows 1 running execution and 3 run, while
-- hol-3 and hol-4 were admitted; a freed slot does not go to hol-2 either
SELECT sync_execution_update('hol-3', 'SUCCEEDED');
CALL pg_temp.settle();
SELECT execution_id, phase FROM sync_execution WHERE project = 'lpt' AND name = 'hol'
 ORDER BY execution_id;

--
-- Clean up: end every live execution (releasing its slot), then delete this
-- test's rows.  Nothing of it is left in the tables or the views.
--
SELECT count(*) AS ended
  FROM (SELECT sync_execution_update(execution_id, 'ABORTED')
          FROM sync_execution
         WHERE project = 'lpt' AND phase NOT IN ('SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED_OUT')
         ORDER BY created_at) s;
CALL pg_temp.settle();
SELECT count(*) AS live_executions FROM sync_execution
 WHERE project = 'lpt' AND phase NOT IN ('SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED_OUT');
DELETE FROM sync_state WHERE name LIKE 'sem/launchplan/lpt/%';
DELETE FROM sync_launch_plan WHERE project = 'lpt';
DELETE FROM sync_execution WHERE project = 'lpt';
DELETE FROM sync_launch_event WHERE project = 'lpt';
SELECT count(*) AS limits FROM sync_limit WHERE name LIKE 'launchplan/lpt/%';
SELECT count(*) AS state_rows FROM sync_state WHERE name LIKE 'sem/launchplan/lpt/%';
SELECT * FROM sync_locks WHERE lock_name LIKE 'sem/launchplan/%';
SELECT * FROM sync_holders WHERE lock_name LIKE 'sem/launchplan/%';
SELECT * FROM sync_waiters WHERE lock_name LIKE 'sem/launchplan/%';
