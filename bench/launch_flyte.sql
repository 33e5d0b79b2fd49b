-- Workload 8, reference contenders: the same launch and terminal update done
-- the way flyteadmin checks a launch plan's concurrency (v1.16 and later),
-- on its own tables executions and launch_plans (bench/launch_setup.sql),
-- which hold the same 100,000 terminal executions.  scripts/bench.sh runs
-- this script once with search_path = flyte (Flyte's indexes, with the one
-- on phase) and once with search_path = flyte_nophase (without it).
--
-- The launch is one transaction: flyteadmin's count, as its comment in
-- checkLaunchPlanConcurrency writes it -- count(executions.id) of the
-- plan's executions in QUEUED or RUNNING (activeExecutionPhases), all
-- versions: executions joined to launch_plans by launch_plan_id, filtered
-- on the execution's project and domain and the plan's name -- compared
-- with the launched version's max_concurrency; then the execution is
-- inserted QUEUED when the count is below it (pgbench \gset / \if; a count
-- at the limit never happens with 8 clients and a limit of 1000, and would
-- stop the run with a division by zero); COMMIT.  (flyteadmin counts and
-- inserts in separate transactions; one transaction here costs it no extra
-- commit.)  Then the terminal update, a compare-and-swap on the phase (its
-- own transaction).  Two commits per pgbench transaction, like the syncwf
-- contender.  The id is new every time (h uniform in 1..10^15 per client).
\set h random(1, 1000000000000000)
BEGIN;
SELECT (SELECT count(executions.id)
          FROM executions INNER JOIN launch_plans ON executions.launch_plan_id = launch_plans.id
         WHERE executions.execution_project = 'bench' AND executions.execution_domain = 'dev'
           AND launch_plans.name = 'lp8' AND executions.phase IN ('QUEUED', 'RUNNING'))
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
