--
-- hand_edits: rows an administrator writes into the launch-plan tables by
-- hand may hold any value their types and CHECK constraints allow, times
-- and durations at the ends of their ranges included.  None of them may
-- break the reconciliation round (the worker's, or sync_reconcile()), the
-- launches of that plan, or sync_launch_plan_stats.  Before, a max_pending
-- of '178000000 years' written with UPDATE made every round fail with
-- 22008 (the worker exited and started again, and no pending execution was
-- promoted or timed out any more) and every launch of that version fail
-- with 22003; so did a pending execution created at the last microsecond a
-- timestamptz holds; and an execution created and queued at 'infinity' made
-- sync_launch_plan_stats fail for everyone.
--
CREATE EXTENSION IF NOT EXISTS syncwf;

SELECT sync_launch_plan_register('he', 'dev', 'w', 'v1', 1, 'WAIT', max_pending => '1 hour');
SELECT phase FROM sync_execution_create('he', 'dev', 'w', 'v1', 'he-1');
SELECT phase FROM sync_execution_create('he', 'dev', 'w', 'v1', 'he-2');

-- a max_pending far past the end of timestamptz, written by hand
UPDATE sync_launch_plan SET max_pending = '178000000 years' WHERE project = 'he';
SELECT sync_reconcile() >= 0 AS reconciled;
SELECT phase FROM sync_execution_create('he', 'dev', 'w', 'v1', 'he-3');
SELECT execution_id, phase FROM sync_execution WHERE project = 'he' ORDER BY 1;
-- the running one ends: the first pending one is promoted
SELECT sync_execution_update('he-1', 'SUCCEEDED');
SELECT sync_reconcile() >= 0 AS reconciled;
SELECT execution_id, phase FROM sync_execution WHERE project = 'he' ORDER BY 1;
UPDATE sync_launch_plan SET max_pending = '2147483647 days 2147483647 months' WHERE project = 'he';
SELECT sync_reconcile() >= 0 AS reconciled;
SELECT execution_id, phase FROM sync_execution WHERE project = 'he' ORDER BY 1;

-- pending executions written by hand, created at the last microsecond a
-- timestamptz holds (its deadline is past the end of time: it waits), at
-- 'infinity' (waits) and at '-infinity' (pending forever: times out)
UPDATE sync_launch_plan SET max_pending = '1 hour' WHERE project = 'he';
INSERT INTO sync_execution (execution_id, project, domain, name, version, phase, created_at)
VALUES ('he-end', 'he', 'dev', 'w', 'v1', 'PENDING', '294276-12-31 23:59:59.999999+00'),
       ('he-inf', 'he', 'dev', 'w', 'v1', 'PENDING', 'infinity'),
       ('he-past', 'he', 'dev', 'w', 'v1', 'PENDING', '-infinity');
SELECT sync_reconcile() >= 0 AS reconciled;
SELECT execution_id, phase, reason FROM sync_execution WHERE project = 'he' ORDER BY 1;
SELECT phase FROM sync_execution_create('he', 'dev', 'w', 'v1', 'he-4');

-- pending times written by hand: infinite, negative, and too long for an
-- interval (they made sync_launch_plan_stats fail for everyone) are left
-- out of its percentiles; the one of 5 minutes is what they show
UPDATE sync_execution SET created_at = now() - interval '10 min', queued_at = now() - interval '5 min'
 WHERE execution_id = 'he-1';
UPDATE sync_execution SET created_at = 'infinity', queued_at = 'infinity' WHERE execution_id = 'he-2';
UPDATE sync_execution SET queued_at = '-infinity' WHERE execution_id = 'he-inf';
UPDATE sync_execution SET queued_at = '4714-11-24 00:00:00+00 BC' WHERE execution_id = 'he-end';
UPDATE sync_execution SET queued_at = '294276-12-31 23:59:59+00' WHERE execution_id = 'he-3';
SELECT name, active, pending, pending_p50, pending_p95, pending_max
  FROM sync_launch_plan_stats WHERE project = 'he';
SELECT name, pending_max FROM sync_launch_plan_metrics('100 years') WHERE project = 'he';

-- clean up
DELETE FROM sync_execution WHERE project = 'he';
SELECT sync_reconcile() >= 0 AS reconciled;
DELETE FROM sync_launch_event WHERE project = 'he';
DELETE FROM sync_launch_plan WHERE project = 'he';
SELECT count(*) AS left_behind FROM sync_state WHERE name LIKE 'sem/launchplan/he/%';
