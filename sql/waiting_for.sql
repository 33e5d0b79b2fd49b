--
-- waiting_for: why each waiter of sync_waiters waits (waiting_for), at
-- which sync_limit row (waiting_for_row), whose holds it needs gone
-- (blocking_pids, blocking_holders) and an estimate of how long
-- (estimated_wait).  Keyed requests of several holders, a claim-only row
-- and launch-plan executions make the holds and the queues here, in one
-- session; the reasons only other sessions can produce (reserved, unfit)
-- are in the isolation spec waiting-for.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
CREATE VIEW pg_temp.why AS
    SELECT lock_name, holder, position, active, waiting_for, waiting_for_row,
           blocking_pids, blocking_holders, estimated_wait IS NOT NULL AS has_estimate
      FROM sync_waiters WHERE lock_name LIKE '%/wf/%'
     ORDER BY lock_name, position NULLS LAST, holder;

SELECT sync_stats_reset() IS NOT NULL AS reset;
INSERT INTO sync_limit (name, sizelimit) VALUES ('wf/lim', 2), ('wf/est', 1);
INSERT INTO sync_limit (name, sizelimit, rate_limit, rate_period)
VALUES ('wf/rate', 5, 1, '1 hour');
INSERT INTO sync_limit (name, sizelimit) VALUES ('wf/par', 2);
INSERT INTO sync_limit (name, sizelimit, parent)
VALUES ('wf/c1', 2, 'wf/par'), ('wf/c2', 2, 'wf/par');

--
-- limit: the holders take the slots; queue: a waiter ahead goes first.
-- No hold of the lock has ended yet: no estimate.
--
SELECT status FROM sync_request('sem/wf/lim', 'wf/h1', slots => 2);
SELECT status FROM sync_request('sem/wf/lim', 'wf/h2');
SELECT status FROM sync_request('sem/wf/lim', 'wf/h3');
SELECT * FROM pg_temp.why WHERE lock_name = 'sem/wf/lim';
-- a mutex: the holder is in the way of its front waiter, a session's hold
-- shows as its pid
SELECT sync_acquire('mtx/wf/m') > 0 AS acquired;
SELECT status FROM sync_request('mtx/wf/m', 'wf/m1');
SELECT lock_name, holder, waiting_for, waiting_for_row,
       blocking_pids = ARRAY[pg_backend_pid()] AS my_pid, blocking_holders
  FROM sync_waiters WHERE lock_name = 'mtx/wf/m';
SELECT sync_release('mtx/wf/m');
SELECT * FROM pg_temp.why WHERE lock_name = 'mtx/wf/m';

--
-- fair_share: fair keys put f3 (key b) before f2 (key a), which came
-- earlier; f3 itself only waits behind f1, which came before it.
--
SELECT status FROM sync_request('mtx/wf/fair', 'wf/f0');
SELECT status FROM sync_request('mtx/wf/fair', 'wf/f1', fair_key => 'a');
SELECT status FROM sync_request('mtx/wf/fair', 'wf/f2', fair_key => 'a');
SELECT status FROM sync_request('mtx/wf/fair', 'wf/f3', fair_key => 'b');
SELECT * FROM pg_temp.why WHERE lock_name = 'mtx/wf/fair';

--
-- rate: the slots are free, the tokens are not (one an hour); the estimate
-- is the time until the token comes, with no statistics needed.
--
SELECT status FROM sync_request('sem/wf/rate', 'wf/r1');
SELECT status FROM sync_request('sem/wf/rate', 'wf/r2');
SELECT holder, waiting_for, waiting_for_row, blocking_pids, blocking_holders,
       estimated_wait BETWEEN '55 min' AND '1 hour' AS about_an_hour
  FROM sync_waiters WHERE lock_name = 'sem/wf/rate';

--
-- parent: sem/wf/c2 has room, its parent wf/par does not: the holders of
-- every child of the parent are in the way.
--
SELECT status FROM sync_request('sem/wf/c1', 'wf/p1', slots => 2);
SELECT status FROM sync_request('sem/wf/c2', 'wf/p2');
SELECT * FROM pg_temp.why WHERE lock_name LIKE 'sem/wf/c_';

--
-- other_lock: a request of two mutexes fronts mtx/wf/x, which is free, but
-- mtx/wf/y is held.
--
SELECT status FROM sync_request('mtx/wf/y', 'wf/o1');
SELECT lock_name, status FROM sync_request(ARRAY['mtx/wf/x', 'mtx/wf/y'], 'wf/o2');
SELECT * FROM pg_temp.why WHERE lock_name IN ('mtx/wf/x', 'mtx/wf/y');

--
-- controller: the entry of an inactive controller is passed over.
--
SELECT status FROM sync_request('mtx/wf/y', 'wf/o3', controller => 'wf-ctl');
DELETE FROM sync_controller WHERE controller = 'wf-ctl';
SELECT * FROM pg_temp.why WHERE lock_name = 'mtx/wf/y';

--
-- claim: a row inserted into sync_state by hand, as Argo's controller
-- writes one, is a claim-only request: it waits for its writer's claim,
-- before anything else (here the mutex is held, yet not 'limit'), with no
-- row, no blockers and no estimate.  k2, a request of the functions
-- behind it, waits for the queue, blocked by it.  Once k0 lets go, the
-- mutex is free and still nobody is granted: k1 waits for its claim, k2
-- behind it (now with an estimate: k0's hold has ended).
--
SELECT status FROM sync_request('mtx/wf/claim', 'wf/k0');
INSERT INTO sync_state (name, workflowkey, controller, held, priority, time)
VALUES ('mtx/wf/claim', 'wf/k1', NULL, false, 0, NULL);
SELECT status FROM sync_request('mtx/wf/claim', 'wf/k2');
SELECT * FROM pg_temp.why WHERE lock_name = 'mtx/wf/claim';
SELECT sync_release('mtx/wf/claim', 'wf/k0') AS released;
SELECT holder FROM sync_holders WHERE lock_name = 'mtx/wf/claim';
SELECT * FROM pg_temp.why WHERE lock_name = 'mtx/wf/claim';

--
-- admit_limit: a launch plan's execution waits for its own version's
-- limit (v1: 1 execution), though the plan's semaphore has no limit of its
-- own, blocked by every execution that holds a slot of the plan: ad1, then
-- ad3 too, of v2, admitted under v2's own limit (3) while ad2 waits.  No
-- hold of the plan has ended yet: no estimate.
--
SELECT sync_launch_plan_register('wf', 'd', 'adm', 'v1', 1, 'WAIT');
SELECT sync_launch_plan_register('wf', 'd', 'adm', 'v2', 3, 'WAIT');
SELECT phase FROM sync_execution_create('wf', 'd', 'adm', 'v1', 'wf-ad1');
SELECT phase FROM sync_execution_create('wf', 'd', 'adm', 'v1', 'wf-ad2');
SELECT * FROM pg_temp.why WHERE lock_name = 'sem/launchplan/wf/d/adm';
SELECT phase FROM sync_execution_create('wf', 'd', 'adm', 'v2', 'wf-ad3');
SELECT * FROM pg_temp.why WHERE lock_name = 'sem/launchplan/wf/d/adm';

--
-- The estimate: the lock's mean hold (sync_lock_stats: hold_total /
-- hold_count) times the rounds of holds it waits for.  Before any hold of
-- sem/wf/est ended there is none; after one, e3 (the front, one slot
-- short of a limit of 1) waits one mean hold, e4 behind it two.
--
SELECT status FROM sync_request('sem/wf/est', 'wf/e1');
SELECT status FROM sync_request('sem/wf/est', 'wf/e2');
SELECT holder, waiting_for, estimated_wait FROM sync_waiters WHERE lock_name = 'sem/wf/est';
SELECT pg_sleep(0.02);
SELECT sync_release('sem/wf/est', 'wf/e1') AS released;
SELECT status FROM sync_request('sem/wf/est', 'wf/e3');
SELECT status FROM sync_request('sem/wf/est', 'wf/e4');
SELECT hold_count, hold_total > '0' AS held_a_while
  FROM sync_lock_stats WHERE lock_name = 'sem/wf/est';
SELECT w.holder, w.waiting_for, w.blocking_holders,
       w.estimated_wait > '0' AS positive,
       abs(extract(epoch FROM w.estimated_wait - s.hold_total / s.hold_count *
           CASE w.holder WHEN 'wf/e3' THEN 1 ELSE 2 END)) < 0.000002 AS as_computed
  FROM sync_waiters w JOIN sync_lock_stats s USING (lock_name)
 WHERE w.lock_name = 'sem/wf/est' ORDER BY w.position;
-- with syncwf.track_stats off there is no estimate
SET syncwf.track_stats = off;
SELECT holder, estimated_wait FROM sync_waiters WHERE lock_name = 'sem/wf/est';
RESET syncwf.track_stats;
-- holds show no reason
SELECT count(*) AS reasons FROM sync_entry_status()
 WHERE state = 'held' AND (waiting_for IS NOT NULL OR estimated_wait IS NOT NULL);

--
-- Clean up.
--
SELECT sum(sync_release_holder(h)) > 0 AS released
  FROM unnest(ARRAY['wf/h1', 'wf/h2', 'wf/h3', 'wf/m1', 'wf/f0', 'wf/f1', 'wf/f2',
                    'wf/f3', 'wf/r1', 'wf/r2', 'wf/p1', 'wf/p2', 'wf/o1', 'wf/o2',
                    'wf/o3', 'wf/k1', 'wf/k2', 'wf/e2', 'wf/e3', 'wf/e4']) AS h;
-- the waiting execution first, so that no slot freed here promotes it
SELECT sync_execution_update('wf-ad2', 'ABORTED') AS ad2;
SELECT sync_execution_update(id, 'ABORTED') AS ended
  FROM unnest(ARRAY['wf-ad1', 'wf-ad3']) AS id;
DELETE FROM sync_execution WHERE project = 'wf';
DELETE FROM sync_launch_event WHERE project = 'wf';
DELETE FROM sync_launch_plan WHERE project = 'wf';
SELECT count(*) AS state_rows FROM sync_state WHERE name LIKE '%/wf/%';
DELETE FROM sync_controller WHERE controller = 'wf-ctl';
DELETE FROM sync_limit WHERE parent = 'wf/par';
DELETE FROM sync_limit WHERE name LIKE 'wf/%';
SELECT * FROM sync_waiters WHERE lock_name LIKE '%/wf/%';
