-- Workload 8, reference contenders: the same launch and terminal update done
-- the way Flyte's admin checks a launch plan's concurrency, on its own
-- tables executions and launch_plans (bench/launch_setup.sql), which hold
-- the same 100,000 terminal executions.  scripts/bench.sh runs this script
-- once with search_path = flyte (flyteadmin's indexes: no index on phase)
-- and once with search_path = flyte_phase (plus an index on phase).
--
-- The launch is one transaction, as an application does it: count the
-- plan's active executions (all versions: executions joined to launch plans
-- by launch_plan_id, on the plan's project, domain and name) and compare the
-- count with the launched version's max_concurrency; insert the execution
-- QUEUED when it is below (pgbench \gset / \if; a count at the limit never
-- happens with 8 clients and a limit of 1000, and would stop the run with a
-- division by zero); COMMIT.  Then the terminal update, a compare-and-swap
-- on the phase (its own transaction).  Two commits per pgbench transaction,
-- like the syncwf contender.  The id is new every time (h uniform in
-- 1..10^15 per client).
\set h random(1, 1000000000000000)
BEGIN;
SELECT (SELECT count(*)
          FROM executions e JOIN launch_plans l ON l.id = e.launch_plan_id
         WHERE l.project = 'bench' AND l.domain = 'dev' AND l.name = 'lp8'
           AND e.phase IN ('QUEUED', 'RUNNING', 'SUCCEEDING', 'FAILING', 'ABORTING'))
     < (SELECT max_concurrency FROM launch_plans
         WHERE project = 'bench' AND domain = 'dev' AND name = 'lp8' AND version = 'v1') AS free \gset
\if :free
INSERT INTO executions (execution_project, execution_domain, execution_name,
                        launch_plan_id, phase, created_at)
SELECT 'bench', 'dev', 'b8/c' || :client_id || '/' || :h, id, 'QUEUED', clock_timestamp()
  FROM launch_plans
 WHERE project = 'bench' AND domain = 'dev' AND name = 'lp8' AND version = 'v1';
\else
SELECT 1 / 0;
\endif
COMMIT;
UPDATE executions SET phase = 'SUCCEEDED', updated_at = clock_timestamp()
 WHERE execution_project = 'bench' AND execution_domain = 'dev'
   AND execution_name = 'b8/c' || :client_id || '/' || :h AND phase = 'QUEUED';
