--
-- launch_errors: every bad input of the launch-plan functions, with its
-- SQLSTATE, and that a call that fails leaves nothing half-written (no row
-- in sync_launch_plan, sync_execution, sync_launch_event or sync_state,
-- nothing in the views, existing executions unchanged).
--
CREATE EXTENSION IF NOT EXISTS syncwf;
-- Helpers regress_util.expect_error (reports a statement's error as a
-- NOTICE with SQLSTATE, DETAIL and HINT) and regress_util.error_of
-- (returns "SQLSTATE: message"), created by 00_setup.

-- everything of this test (project 'lpe') but its plans, for the "nothing
-- left behind" checks; and its plans
CREATE VIEW pg_temp.everything AS
    SELECT 'execution' AS what, format('%s %s %s %s', execution_id, name, version, phase) AS item
      FROM sync_execution WHERE project = 'lpe'
    UNION ALL
    SELECT 'event', format('%s %s %s', event, name, execution_id)
      FROM sync_launch_event WHERE project = 'lpe'
    UNION ALL
    SELECT 'state', format('%s %s %s', name, workflowkey, held)
      FROM sync_state WHERE name LIKE 'sem/launchplan/lpe/%'
    UNION ALL
    SELECT 'lock', format('%s %s/%s', lock_name, holders, waiters)
      FROM sync_locks WHERE lock_name LIKE 'sem/launchplan/lpe/%'
    ORDER BY 1, 2;
CREATE VIEW pg_temp.plans AS
    SELECT domain, name, version, max_concurrency, behavior, scheduling
      FROM sync_launch_plan WHERE project = 'lpe'
     ORDER BY domain, name, version;
SELECT * FROM pg_temp.plans;
SELECT * FROM pg_temp.everything;

--
-- sync_launch_plan_register: identifiers not NULL (22004); project, domain
-- and name not empty, at most 63 bytes, no '/' and no control characters
-- (22023); the version may contain '/', at most 255 bytes.
--
\x on
SELECT regress_util.error_of($$SELECT sync_launch_plan_register(NULL, 'dev', 'p', 'v1', 1)$$) AS null_project,
       regress_util.error_of($$SELECT sync_launch_plan_register('lpe', NULL, 'p', 'v1', 1)$$) AS null_domain,
       regress_util.error_of($$SELECT sync_launch_plan_register('lpe', 'dev', NULL, 'v1', 1)$$) AS null_name,
       regress_util.error_of($$SELECT sync_launch_plan_register('lpe', 'dev', 'p', NULL, 1)$$) AS null_version;
SELECT regress_util.error_of($$SELECT sync_launch_plan_register('', 'dev', 'p', 'v1')$$) AS empty_project,
       regress_util.error_of($$SELECT sync_launch_plan_register('lpe', '', 'p', 'v1')$$) AS empty_domain,
       regress_util.error_of($$SELECT sync_launch_plan_register('lpe', 'dev', '', 'v1')$$) AS empty_name,
       regress_util.error_of($$SELECT sync_launch_plan_register('lpe', 'dev', 'p', '')$$) AS empty_version;
SELECT regress_util.error_of($$SELECT sync_launch_plan_register('lpe/x', 'dev', 'p', 'v1')$$) AS slash_project,
       regress_util.error_of($$SELECT sync_launch_plan_register('lpe', 'dev/x', 'p', 'v1')$$) AS slash_domain,
       regress_util.error_of($$SELECT sync_launch_plan_register('lpe', 'dev', 'p/x', 'v1')$$) AS slash_name,
       regress_util.error_of($$SELECT sync_launch_plan_register('lpe', 'dev', '/', 'v1')$$) AS only_slash;
SELECT regress_util.error_of($$SELECT sync_launch_plan_register(E'lpe\n', 'dev', 'p', 'v1')$$) AS control_project,
       regress_util.error_of($$SELECT sync_launch_plan_register('lpe', E'd\tev', 'p', 'v1')$$) AS control_domain,
       regress_util.error_of($$SELECT sync_launch_plan_register('lpe', 'dev', E'p\x7f', 'v1')$$) AS control_name,
       regress_util.error_of($$SELECT sync_launch_plan_register('lpe', 'dev', 'p', E'v\r1')$$) AS control_version;
SELECT regress_util.error_of($$SELECT sync_launch_plan_register(repeat('p', 64), 'dev', 'p', 'v1')$$) AS long_project,
       regress_util.error_of($$SELECT sync_launch_plan_register('lpe', repeat('d', 64), 'p', 'v1')$$) AS long_domain,
       regress_util.error_of($$SELECT sync_launch_plan_register('lpe', 'dev', repeat('é', 32), 'v1')$$) AS long_name_64_bytes,
       regress_util.error_of($$SELECT sync_launch_plan_register('lpe', 'dev', 'p', repeat('v', 256))$$) AS long_version;
\x off
CALL regress_util.expect_error($$SELECT sync_launch_plan_register('lpe', 'dev', repeat('n', 64), 'v1')$$);
CALL regress_util.expect_error($$SELECT sync_launch_plan_register('lpe', 'dev', 'p/x', 'v1')$$);
-- the longest identifiers, and a version with '/': accepted
SELECT sync_launch_plan_register('lpe', 'dev', repeat('n', 63), repeat('v', 255), 1);
SELECT sync_launch_plan_register('lpe', 'dev', 'p', 'release/2024-01', 1);
SELECT name = repeat('n', 63) AS long_name, octet_length(version) AS version_bytes
  FROM sync_launch_plan WHERE project = 'lpe' ORDER BY name;
DELETE FROM sync_launch_plan WHERE project = 'lpe';

--
-- The policy: max_concurrency >= 0 or NULL (none); a behavior needs a
-- max_concurrency; behavior WAIT / ABORT / REPLACE / SKIP and scheduling
-- FIFO / LIFO / PRIORITY, in any case (22023); max_pending positive or NULL
-- (22023).
--
CALL regress_util.expect_error($$SELECT sync_launch_plan_register('lpe', 'dev', 'p', 'v1', -1)$$);
CALL regress_util.expect_error($$SELECT sync_launch_plan_register('lpe', 'dev', 'p', 'v1', -1, 'WAIT')$$);
CALL regress_util.expect_error($$SELECT sync_launch_plan_register('lpe', 'dev', 'p', 'v1', 1, 'QUEUE')$$);
CALL regress_util.expect_error($$SELECT sync_launch_plan_register('lpe', 'dev', 'p', 'v1', 1, '')$$);
CALL regress_util.expect_error($$SELECT sync_launch_plan_register('lpe', 'dev', 'p', 'v1', NULL, 'WAIT')$$);
CALL regress_util.expect_error($$SELECT sync_launch_plan_register('lpe', 'dev', 'p', 'v1', 1, 'WAIT', 'RANDOM')$$);
CALL regress_util.expect_error($$SELECT sync_launch_plan_register('lpe', 'dev', 'p', 'v1', 1, 'WAIT', '')$$);
CALL regress_util.expect_error($$SELECT sync_launch_plan_register('lpe', 'dev', 'p', 'v1', 1, 'WAIT', max_pending => '0')$$);
CALL regress_util.expect_error($$SELECT sync_launch_plan_register('lpe', 'dev', 'p', 'v1', 1, 'WAIT', max_pending => '-1 second')$$);
CALL regress_util.expect_error($$SELECT sync_launch_plan_register('lpe', 'dev', 'p', 'v1', 1, 'WAIT', max_pending => '1 day -24 hours')$$);
SELECT * FROM pg_temp.plans;
-- accepted: upper-cased; a max without a behavior is SKIP (Flyte's
-- default); a NULL scheduling is FIFO; a limit of 0
SELECT sync_launch_plan_register('lpe', 'dev', 'p', 'v1', 1, 'wait', 'lifo', '1 minute');
SELECT sync_launch_plan_register('lpe', 'dev', 'p', 'v2', 2);
SELECT sync_launch_plan_register('lpe', 'dev', 'p', 'v3', 0, 'Abort', NULL);
SELECT version, max_concurrency, behavior, scheduling, max_pending = interval '1 minute' AS one_minute
  FROM sync_launch_plan WHERE project = 'lpe' ORDER BY version;
-- a failed register of an existing version leaves it as it was
CALL regress_util.expect_error($$SELECT sync_launch_plan_register('lpe', 'dev', 'p', 'v1', 5, 'NEVER')$$);
SELECT version, max_concurrency, behavior, scheduling
  FROM sync_launch_plan WHERE project = 'lpe' AND version = 'v1';

-- Plans are plain rows: direct writes are checked by the table's
-- constraints (23514).
SELECT left(regress_util.error_of($$INSERT INTO sync_launch_plan (project, domain, name, version, max_concurrency, behavior)
                                     VALUES ('lpe', 'dev', 'q', 'v1', -1, 'WAIT')$$), 5) AS negative_max,
       left(regress_util.error_of($$INSERT INTO sync_launch_plan (project, domain, name, version, max_concurrency, behavior)
                                     VALUES ('lpe', 'dev', 'q', 'v1', 1, 'wait')$$), 5) AS lower_case_behavior,
       left(regress_util.error_of($$INSERT INTO sync_launch_plan (project, domain, name, version, behavior)
                                     VALUES ('lpe', 'dev', 'q', 'v1', 'WAIT')$$), 5) AS behavior_without_max,
       left(regress_util.error_of($$INSERT INTO sync_launch_plan (project, domain, name, version, max_concurrency)
                                     VALUES ('lpe', 'dev', 'q', 'v1', 1)$$), 5) AS max_without_behavior,
       left(regress_util.error_of($$INSERT INTO sync_launch_plan (project, domain, name, version)
                                     VALUES ('lpe', 'dev', 'q/r', 'v1')$$), 5) AS slash_name,
       left(regress_util.error_of($$UPDATE sync_launch_plan SET scheduling = 'RANDOM' WHERE project = 'lpe'$$), 5) AS bad_scheduling,
       left(regress_util.error_of($$UPDATE sync_launch_plan SET max_pending = '0' WHERE project = 'lpe'$$), 5) AS zero_max_pending;
SELECT * FROM pg_temp.plans;

--
-- sync_execution_create: identifiers and the id not NULL, nor the priority
-- (22004); the same rules for project, domain and name; the id may contain
-- '/', at most 255 bytes, no control characters (22023).
--
\x on
SELECT regress_util.error_of($$SELECT * FROM sync_execution_create(NULL, 'dev', 'p', 'v2', 'e')$$) AS null_project,
       regress_util.error_of($$SELECT * FROM sync_execution_create('lpe', NULL, 'p', 'v2', 'e')$$) AS null_domain,
       regress_util.error_of($$SELECT * FROM sync_execution_create('lpe', 'dev', NULL, 'v2', 'e')$$) AS null_name,
       regress_util.error_of($$SELECT * FROM sync_execution_create('lpe', 'dev', 'p', NULL, 'e')$$) AS null_version,
       regress_util.error_of($$SELECT * FROM sync_execution_create('lpe', 'dev', 'p', 'v2', NULL)$$) AS null_id,
       regress_util.error_of($$SELECT * FROM sync_execution_create('lpe', 'dev', 'p', 'v2', 'e', NULL)$$) AS null_priority;
SELECT regress_util.error_of($$SELECT * FROM sync_execution_create('lpe', 'dev', 'p', 'v2', '')$$) AS empty_id,
       regress_util.error_of($$SELECT * FROM sync_execution_create('lpe', 'dev', 'p', 'v2', repeat('e', 256))$$) AS long_id,
       regress_util.error_of($$SELECT * FROM sync_execution_create('lpe', 'dev', 'p', 'v2', E'e\n1')$$) AS control_id,
       regress_util.error_of($$SELECT * FROM sync_execution_create('lpe/x', 'dev', 'p', 'v2', 'e')$$) AS slash_project,
       regress_util.error_of($$SELECT * FROM sync_execution_create('lpe', 'dev', 'p/x', 'v2', 'e')$$) AS slash_name,
       regress_util.error_of($$SELECT * FROM sync_execution_create(repeat('p', 64), 'dev', 'p', 'v2', 'e')$$) AS long_project;
\x off
CALL regress_util.expect_error($$SELECT * FROM sync_execution_create('lpe', 'dev', 'p', 'v2', NULL)$$);
CALL regress_util.expect_error($$SELECT * FROM sync_execution_create('lpe', 'dev', 'p', 'v2', 'e', NULL)$$);
-- an unregistered version, or plan (42704)
CALL regress_util.expect_error($$SELECT * FROM sync_execution_create('lpe', 'dev', 'p', 'v9', 'e')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_execution_create('lpe', 'dev', 'nothere', 'v1', 'e')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_execution_create('lpe', 'prod', 'p', 'v1', 'e')$$);
SELECT * FROM pg_temp.everything;
-- the longest id, with '/': accepted
SELECT * FROM sync_execution_create('lpe', 'dev', 'p', 'v2', 'run/' || repeat('e', 251));
SELECT sync_execution_update('run/' || repeat('e', 251), 'SUCCEEDED') AS phase;
DELETE FROM sync_execution WHERE project = 'lpe';

--
-- An execution id is unique across launch plans: reusing one for another
-- plan (name, domain or project) is 23505, and changes nothing.  (For a
-- version of the same plan it is an idempotent repeat.)
--
SELECT sync_launch_plan_register('lpe', 'dev', 'other', 'v1', 1, 'WAIT');
SELECT * FROM sync_execution_create('lpe', 'dev', 'p', 'v2', 'dup-1');
CALL regress_util.expect_error($$SELECT * FROM sync_execution_create('lpe', 'dev', 'other', 'v1', 'dup-1')$$);
SELECT sync_launch_plan_register('lpe', 'prod', 'p', 'v2', 1);
SELECT left(regress_util.error_of($$SELECT * FROM sync_execution_create('lpe', 'prod', 'p', 'v2', 'dup-1')$$), 5) AS other_domain;
SELECT * FROM sync_execution_create('lpe', 'dev', 'p', 'v1', 'dup-1');
SELECT * FROM pg_temp.everything;

--
-- raise_on_limit => true: a refusal (ABORT, SKIP, REPLACE with nothing to
-- replace) is SQLSTATE 53400 with the reason the row would carry, and
-- nothing is recorded.  Without a refusal it changes nothing.
--
SELECT sync_launch_plan_register('lpe', 'dev', 'abort', 'v1', 1, 'ABORT');
SELECT sync_launch_plan_register('lpe', 'dev', 'skip', 'v1', 1, 'SKIP');
SELECT sync_launch_plan_register('lpe', 'dev', 'replace', 'v1', 1, 'REPLACE');
SELECT sync_launch_plan_register('lpe', 'dev', 'replace0', 'v1', 0, 'REPLACE');
SELECT sync_launch_plan_register('lpe', 'dev', 'wait', 'v1', 1, 'WAIT');
-- a free slot: QUEUED as usual
SELECT * FROM sync_execution_create('lpe', 'dev', 'abort', 'v1', 'abort-1', raise_on_limit => true);
SELECT * FROM sync_execution_create('lpe', 'dev', 'skip', 'v1', 'skip-1', raise_on_limit => true);
SELECT * FROM sync_execution_create('lpe', 'dev', 'replace', 'v1', 'replace-1', raise_on_limit => true);
SELECT * FROM sync_execution_create('lpe', 'dev', 'wait', 'v1', 'wait-1', raise_on_limit => true);
SELECT * FROM pg_temp.everything;
-- full: ABORT and SKIP raise
CALL regress_util.expect_error($$SELECT * FROM sync_execution_create('lpe', 'dev', 'abort', 'v1', 'abort-2', raise_on_limit => true)$$);
CALL regress_util.expect_error($$SELECT * FROM sync_execution_create('lpe', 'dev', 'skip', 'v1', 'skip-2', raise_on_limit => true)$$);
-- REPLACE with nothing to replace (limit 0) raises
CALL regress_util.expect_error($$SELECT * FROM sync_execution_create('lpe', 'dev', 'replace0', 'v1', 'replace0-1', raise_on_limit => true)$$);
SELECT * FROM pg_temp.everything;
-- the message is the reason of the row a call without raise_on_limit gets
SELECT r.reason = substr(regress_util.error_of($$SELECT * FROM sync_execution_create('lpe', 'dev', 'abort', 'v1', 'abort-3', raise_on_limit => true)$$), 8)
           AS same_message_abort
  FROM sync_execution_create('lpe', 'dev', 'abort', 'v1', 'abort-4') AS r;
SELECT r.reason = substr(regress_util.error_of($$SELECT * FROM sync_execution_create('lpe', 'dev', 'skip', 'v1', 'skip-3', raise_on_limit => true)$$), 8)
           AS same_message_skip
  FROM sync_execution_create('lpe', 'dev', 'skip', 'v1', 'skip-4') AS r;
SELECT * FROM pg_temp.everything;
-- a failed call in a transaction aborts it: nothing it did is kept
BEGIN;
SELECT * FROM sync_execution_create('lpe', 'dev', 'other', 'v1', 'tx-1');
SELECT * FROM sync_execution_create('lpe', 'dev', 'skip', 'v1', 'tx-2', raise_on_limit => true);
ROLLBACK;
SELECT * FROM pg_temp.everything;
-- WAIT is no refusal: PENDING; REPLACE with a slot holder replaces it
SELECT * FROM sync_execution_create('lpe', 'dev', 'wait', 'v1', 'wait-2', raise_on_limit => true);
SELECT * FROM sync_execution_create('lpe', 'dev', 'replace', 'v1', 'replace-2', raise_on_limit => true);
-- a repeated id reports its state, even a refused one, without raising
SELECT * FROM sync_execution_create('lpe', 'dev', 'abort', 'v1', 'abort-4', raise_on_limit => true);
SELECT * FROM pg_temp.everything;

--
-- sync_execution_update: the id and the phase not NULL (22004); a known
-- phase (22023); a known execution (42704).
--
SELECT sync_launch_plan_register('lpe', 'dev', 'upd', 'v1', 10, 'WAIT');
SELECT * FROM sync_execution_create('lpe', 'dev', 'upd', 'v1', 'upd-1');
SELECT * FROM sync_execution_create('lpe', 'dev', 'upd', 'v1', 'upd-2');
SELECT * FROM sync_execution_create('lpe', 'dev', 'upd', 'v1', 'upd-3');
SELECT sync_execution_update('upd-1', 'RUNNING') AS phase;
CALL regress_util.expect_error($$SELECT sync_execution_update(NULL, 'RUNNING')$$);
CALL regress_util.expect_error($$SELECT sync_execution_update('upd-1', NULL)$$);
CALL regress_util.expect_error($$SELECT sync_execution_update('', 'RUNNING')$$);
CALL regress_util.expect_error($$SELECT sync_execution_update('upd-1', 'DONE')$$);
-- SKIPPED is an outcome of sync_execution_create, not a phase
SELECT regress_util.error_of($$SELECT sync_execution_update('upd-1', 'SKIPPED')$$) AS skipped,
       regress_util.error_of($$SELECT sync_execution_update('upd-1', '')$$) AS empty,
       regress_util.error_of($$SELECT sync_execution_update('upd-1', 'RUNNING ')$$) AS trailing_space;
CALL regress_util.expect_error($$SELECT sync_execution_update('nobody', 'RUNNING')$$);
CALL regress_util.expect_error($$SELECT sync_execution_update('nobody', 'SUCCEEDED')$$);

--
-- Compare-and-swap (55000): never backwards (nor sideways within a rank),
-- a terminal phase is final, a PENDING execution becomes QUEUED only by
-- getting a slot.  A refused move changes nothing.
--
-- backwards from RUNNING
CALL regress_util.expect_error($$SELECT sync_execution_update('upd-1', 'QUEUED')$$);
SELECT left(regress_util.error_of($$SELECT sync_execution_update('upd-1', 'PENDING')$$), 5) AS running_to_pending;
-- QUEUED back to PENDING
SELECT left(regress_util.error_of($$SELECT sync_execution_update('upd-2', 'PENDING')$$), 5) AS queued_to_pending;
-- SUCCEEDING back to RUNNING, and sideways to FAILING or ABORTING
SELECT sync_execution_update('upd-1', 'SUCCEEDING') AS phase;
CALL regress_util.expect_error($$SELECT sync_execution_update('upd-1', 'RUNNING')$$);
SELECT left(regress_util.error_of($$SELECT sync_execution_update('upd-1', 'FAILING')$$), 5) AS succeeding_to_failing,
       left(regress_util.error_of($$SELECT sync_execution_update('upd-1', 'ABORTING')$$), 5) AS succeeding_to_aborting;
-- ABORTING sideways to FAILING or SUCCEEDING
SELECT sync_execution_update('upd-3', 'ABORTING') AS phase;
SELECT left(regress_util.error_of($$SELECT sync_execution_update('upd-3', 'FAILING')$$), 5) AS aborting_to_failing,
       left(regress_util.error_of($$SELECT sync_execution_update('upd-3', 'SUCCEEDING')$$), 5) AS aborting_to_succeeding,
       left(regress_util.error_of($$SELECT sync_execution_update('upd-3', 'QUEUED')$$), 5) AS aborting_to_queued;
-- terminal, then anything else
SELECT sync_execution_update('upd-1', 'SUCCEEDED') AS phase;
CALL regress_util.expect_error($$SELECT sync_execution_update('upd-1', 'FAILED')$$);
SELECT left(regress_util.error_of($$SELECT sync_execution_update('upd-1', 'RUNNING')$$), 5) AS to_running,
       left(regress_util.error_of($$SELECT sync_execution_update('upd-1', 'PENDING')$$), 5) AS to_pending,
       left(regress_util.error_of($$SELECT sync_execution_update('upd-1', 'ABORTING')$$), 5) AS to_aborting,
       left(regress_util.error_of($$SELECT sync_execution_update('upd-1', 'TIMED_OUT')$$), 5) AS to_timed_out;
-- an execution recorded FAILED by ABORT is terminal too
SELECT left(regress_util.error_of($$SELECT sync_execution_update('abort-4', 'QUEUED')$$), 5) AS aborted_to_queued,
       left(regress_util.error_of($$SELECT sync_execution_update('abort-4', 'SUCCEEDED')$$), 5) AS aborted_to_succeeded;
-- PENDING to an active phase
CALL regress_util.expect_error($$SELECT sync_execution_update('wait-2', 'RUNNING')$$);
SELECT left(regress_util.error_of($$SELECT sync_execution_update('wait-2', 'QUEUED')$$), 5) AS pending_to_queued,
       left(regress_util.error_of($$SELECT sync_execution_update('wait-2', 'SUCCEEDING')$$), 5) AS pending_to_succeeding,
       left(regress_util.error_of($$SELECT sync_execution_update('wait-2', 'ABORTING')$$), 5) AS pending_to_aborting;
-- nothing changed: phases, slots, queue
SELECT execution_id, phase FROM sync_execution
 WHERE project = 'lpe' AND execution_id IN ('upd-1', 'upd-2', 'upd-3', 'abort-4', 'wait-1', 'wait-2')
 ORDER BY execution_id;
SELECT lock_name, holder FROM sync_holders WHERE lock_name LIKE 'sem/launchplan/lpe/%'
 ORDER BY lock_name, holder;
SELECT lock_name, holder, position FROM sync_waiters WHERE lock_name LIKE 'sem/launchplan/lpe/%'
 ORDER BY lock_name, position;
-- a terminal update rolled back: the slot is kept, the pending execution
-- stays pending
BEGIN;
SELECT sync_execution_update('wait-1', 'SUCCEEDED') AS phase;
SELECT sync_execution_update('wait-1', 'QUEUED') AS phase;
ROLLBACK;
SELECT sync_reconcile() IS NOT NULL AS reconciled;
SELECT execution_id, phase FROM sync_execution WHERE execution_id IN ('wait-1', 'wait-2') ORDER BY 1;
SELECT lock_name, holder FROM sync_holders WHERE lock_name = 'sem/launchplan/lpe/dev/wait';
SELECT lock_name, holder, position FROM sync_waiters WHERE lock_name = 'sem/launchplan/lpe/dev/wait';

-- syncwf writes executions and events through the table access method: a
-- NOT NULL column it does not know (added by hand) is refused with 55000,
-- never filled with NULL; nothing is written
BEGIN;
ALTER TABLE sync_launch_event ADD COLUMN extra integer NOT NULL DEFAULT 0;
CALL regress_util.expect_error($$SELECT * FROM sync_execution_create('lpe', 'dev', 'skip', 'v1', 'skip-x')$$);
ROLLBACK;
BEGIN;
ALTER TABLE sync_execution ADD COLUMN extra integer NOT NULL DEFAULT 0;
CALL regress_util.expect_error($$SELECT * FROM sync_execution_create('lpe', 'dev', 'p', 'v1', 'extra-1')$$);
ROLLBACK;
SELECT count(*) AS extra_rows FROM sync_execution WHERE execution_id IN ('skip-x', 'extra-1');

-- executions are plain rows too: a direct write of an unknown phase is
-- refused by the table (23514)
SELECT left(regress_util.error_of($$UPDATE sync_execution SET phase = 'DONE' WHERE execution_id = 'upd-2'$$), 5) AS unknown_phase,
       left(regress_util.error_of($$INSERT INTO sync_execution (execution_id, project, domain, name, version, phase)
                                     VALUES ('raw-1', 'lpe', 'dev', 'p', 'v1', 'queued')$$), 5) AS lower_case_phase;

--
-- After all these failures: only what succeeded is there.  (replace-1,
-- replaced and ABORTING, has no slot: the reconciliations since have not
-- given it one back.)
--
SELECT * FROM pg_temp.everything;

--
-- Clean up: end every live execution (releasing its slot), then delete this
-- test's rows.
--
SELECT execution_id, sync_execution_update(execution_id, 'ABORTED') AS phase
  FROM sync_execution
 WHERE project = 'lpe' AND phase NOT IN ('SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED_OUT')
 ORDER BY execution_id;
SELECT sync_reconcile() IS NOT NULL AS reconciled;
DELETE FROM sync_state WHERE name LIKE 'sem/launchplan/lpe/%';
DELETE FROM sync_launch_plan WHERE project = 'lpe';
DELETE FROM sync_execution WHERE project = 'lpe';
DELETE FROM sync_launch_event WHERE project = 'lpe';
SELECT * FROM pg_temp.everything;
SELECT * FROM pg_temp.plans;
SELECT count(*) AS limits FROM sync_limit WHERE name LIKE 'launchplan/%';
SELECT * FROM sync_holders WHERE lock_name LIKE 'sem/launchplan/%';
SELECT * FROM sync_waiters WHERE lock_name LIKE 'sem/launchplan/%';
