--
-- input_limits: durations added to the current time (a lease, a launch
-- plan's max_pending) must give a time a timestamptz can hold.  A longer
-- one is refused at the call with 22008 and leaves nothing behind; before,
-- it was stored and every later read of sync_state failed.
--
CREATE EXTENSION IF NOT EXISTS syncwf;

-- sync_request: a lease past the end of timestamptz
CALL regress_util.expect_error($$SELECT * FROM sync_request('mtx/il/a', 'ns/wf', lease => '178000000 years')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request('mtx/il/a', 'ns/wf', lease => '2147483647 days 2147483647 months')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request(ARRAY['mtx/il/a', 'mtx/il/b'], 'ns/wf', lease => '300000 years')$$);
-- nothing was stored, and the tables and views can be read
SELECT count(*) AS rows FROM sync_state WHERE workflowkey = 'ns/wf';
SELECT count(*) AS holders FROM sync_holders WHERE lock_name LIKE 'mtx/il/%';

-- a long lease that fits is accepted, stored and readable
SELECT status FROM sync_request('mtx/il/a', 'ns/wf', lease => '200000 years');
SELECT lease_expires > now() + interval '190000 years' AS far, held
  FROM sync_state WHERE name = 'mtx/il/a';
SELECT lease_expires IS NOT NULL AS has_expiry FROM sync_holders WHERE lock_name = 'mtx/il/a';

-- sync_refresh: refused the same way; the hold keeps its lease
CALL regress_util.expect_error($$SELECT sync_refresh('mtx/il/a', 'ns/wf', '178000000 years')$$);
SELECT lease_expires > now() + interval '190000 years' AS unchanged FROM sync_state WHERE name = 'mtx/il/a';
SELECT sync_release('mtx/il/a', 'ns/wf') AS released;

-- sync_launch_plan_register: max_pending past the end of timestamptz
CALL regress_util.expect_error($$SELECT sync_launch_plan_register('il', 'dev', 'lp', 'v1', 1, 'WAIT', max_pending => '178000000 years')$$);
CALL regress_util.expect_error($$SELECT sync_launch_plan_register('il', 'dev', 'lp', 'v1', 1, 'WAIT', max_pending => '2147483647 days 2147483647 months')$$);
SELECT count(*) AS plans FROM sync_launch_plan WHERE project = 'il';
-- one that fits: executions of its version can be created
SELECT sync_launch_plan_register('il', 'dev', 'lp', 'v1', 1, 'WAIT', max_pending => '200000 years');
SELECT phase FROM sync_execution_create('il', 'dev', 'lp', 'v1', 'il-1');
SELECT sync_execution_update('il-1', 'SUCCEEDED');

-- clean up
DELETE FROM sync_launch_event WHERE project = 'il';
DELETE FROM sync_execution WHERE project = 'il';
DELETE FROM sync_launch_plan WHERE project = 'il';
SELECT count(*) AS left_behind FROM sync_state WHERE name LIKE 'mtx/il/%' OR name LIKE 'sem/launchplan/il/%';
