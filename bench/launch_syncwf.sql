-- Workload 8, syncwf contender: launch an execution of launch plan
-- bench/dev/lp8 version v1 (policy WAIT, max_concurrency 1000, so with 8
-- clients it always gets a slot at once), then report it SUCCEEDED.  Two
-- statements, each its own transaction and commit.  sync_execution_create
-- reads the version's policy, takes a slot of the plan's semaphore (a keyed
-- hold: its sync_state row) and inserts the QUEUED execution; a phase other
-- than QUEUED is a division by zero, which stops the run.  The terminal
-- update is a compare-and-swap on the execution's row that releases its slot
-- at commit.  The id is new every time (h uniform in 1..10^15 per client).
\set h random(1, 1000000000000000)
SELECT 1 / (phase = 'QUEUED')::integer
  FROM sync_execution_create('bench', 'dev', 'lp8', 'v1', 'b8/c' || :client_id || '/' || :h);
SELECT sync_execution_update('b8/c' || :client_id || '/' || :h, 'SUCCEEDED');
