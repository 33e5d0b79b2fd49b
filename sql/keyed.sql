--
-- keyed: holds and requests owned by a holder key (Argo's workflow key), not
-- by a connection.  sync_request never blocks: 'held' or 'pending'.  The
-- durable copy is the table sync_state; the views show shared memory.
--
-- Tokens and times vary from run to run: they are kept in psql variables and
-- compared, never printed.  A grant to a pending entry happens in shared
-- memory when the release commits; the background worker (which may or may
-- not be connected during this test) or sync_reconcile() writes it to
-- sync_state.  So before it reads held flags from sync_state this test calls
-- pg_temp.settle(): sync_reconcile(), then wait (at most 10 s) until every
-- keyed hold of the views is held in the table too (the worker may be
-- writing one at that moment).
--
CREATE EXTENSION IF NOT EXISTS syncwf;
-- Helpers regress_util.expect_error (reports a statement's error as a
-- NOTICE with SQLSTATE, DETAIL and HINT) and regress_util.error_of
-- (returns "SQLSTATE: message"), created by 00_setup.

-- sync_state in queue order per lock: holds first, then pending entries by
-- priority (higher first), then queue time
CREATE VIEW pg_temp.st AS
    SELECT name, workflowkey, controller, held, priority
      FROM sync_state
     ORDER BY name, held DESC, priority DESC, time, seq;
CREATE VIEW pg_temp.holders AS
    SELECT lock_name, scope, holder, controller, priority
      FROM sync_holders ORDER BY lock_name, scope, holder;
CREATE VIEW pg_temp.waiters AS
    SELECT lock_name, scope, holder, priority, position, request_size, active
      FROM sync_waiters ORDER BY lock_name, position;
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

INSERT INTO sync_limit (name, sizelimit)
VALUES ('kd/sem', 2), ('kd/queue', 1), ('kd/shared', 2);

--
-- A mutex: the first request is held, the next ones pending in arrival order.
--
SELECT status, token > 0 AS token_positive, queue_position
  FROM sync_request('mtx/kd/m', 'ns/wf-a');
SELECT status, token IS NULL AS no_token, queue_position
  FROM sync_request('mtx/kd/m', 'ns/wf-b');
SELECT status, token IS NULL AS no_token, queue_position
  FROM sync_request('mtx/kd/m', 'ns/wf-c', controller => 'kd-ctl');
SELECT token AS t_a FROM sync_state WHERE name = 'mtx/kd/m' AND workflowkey = 'ns/wf-a' \gset
-- one row per (lock, holder) in sync_state; a hold has a token, a pending
-- entry none; the table's owner column is the role that asked
SELECT name, workflowkey, controller, held, priority, token IS NOT NULL AS has_token,
       owner = current_user::regrole AS owner_is_me
  FROM sync_state ORDER BY name, seq;
SELECT * FROM pg_temp.holders;
SELECT * FROM pg_temp.waiters;
SELECT * FROM sync_locks WHERE lock_name = 'mtx/kd/m';
-- the views agree with the table: same token, no pid for keyed entries
SELECT token = :t_a AS same_token, pid IS NULL AS no_pid
  FROM sync_holders WHERE lock_name = 'mtx/kd/m';
-- a controller that requests is counted as heartbeating
SELECT controller, time IS NOT NULL AS has_time
  FROM sync_controller WHERE controller = 'kd-ctl';

-- Idempotent: asking again reports the current state and changes nothing.
SELECT status, token = :t_a AS same_token, queue_position
  FROM sync_request('mtx/kd/m', 'ns/wf-a');
SELECT status, token IS NULL AS no_token, queue_position
  FROM sync_request('mtx/kd/m', 'ns/wf-b');
SELECT status, queue_position
  FROM sync_request('mtx/kd/m', 'ns/wf-c', controller => 'kd-ctl');
SELECT count(*) AS rows FROM sync_state WHERE name = 'mtx/kd/m';
SELECT holders, waiters FROM sync_locks WHERE lock_name = 'mtx/kd/m';

-- A new priority re-sorts a pending entry; the new order shows once the
-- call's transaction has committed (here: the next statement).
SELECT status FROM sync_request('mtx/kd/m', 'ns/wf-c', 5, 'kd-ctl');
SELECT * FROM pg_temp.waiters;
SELECT * FROM pg_temp.st WHERE name = 'mtx/kd/m';
-- asking again with that priority reports the new position
SELECT status, queue_position FROM sync_request('mtx/kd/m', 'ns/wf-c', 5, 'kd-ctl');
SELECT status, queue_position FROM sync_request('mtx/kd/m', 'ns/wf-b');

--
-- Release of a hold hands the slot to the front of the queue (ns/wf-c,
-- priority 5), with a new, larger token.
--
SELECT sync_release('mtx/kd/m', 'ns/wf-a') AS released;
SELECT pg_temp.settle() AS settled;
SELECT * FROM pg_temp.st WHERE name = 'mtx/kd/m';
SELECT * FROM pg_temp.holders;
SELECT * FROM pg_temp.waiters;
SELECT token AS t_c FROM sync_state WHERE name = 'mtx/kd/m' AND workflowkey = 'ns/wf-c' \gset
SELECT :t_c > :t_a AS token_increased,
       (SELECT token FROM sync_holders WHERE lock_name = 'mtx/kd/m') = :t_c AS view_agrees;
-- the new holder asking again sees its hold
SELECT status, token = :t_c AS same_token, queue_position
  FROM sync_request('mtx/kd/m', 'ns/wf-c', 5, 'kd-ctl');
-- the released holder asking again is a new request: it queues
SELECT status, queue_position FROM sync_request('mtx/kd/m', 'ns/wf-a');

-- Withdraw a pending entry: gone from the table and the queue; the one
-- behind it moves up.  Releasing what is not there returns false.
SELECT sync_release('mtx/kd/m', 'ns/wf-b') AS withdrawn;
SELECT * FROM pg_temp.st WHERE name = 'mtx/kd/m';
SELECT * FROM pg_temp.waiters;
SELECT sync_release('mtx/kd/m', 'ns/wf-b') AS withdrawn_again;
SELECT sync_release('mtx/kd/m', 'ns/nobody') AS unknown_holder;
SELECT sync_release('mtx/kd/never', 'ns/wf-a') AS unknown_lock;
SELECT sync_release('mtx/kd/m', 'ns/wf-c') AS released,
       sync_release('mtx/kd/m', 'ns/wf-a') AS withdrawn;
SELECT count(*) AS rows FROM sync_state WHERE name = 'mtx/kd/m';
SELECT count(*) AS live FROM sync_locks WHERE lock_name = 'mtx/kd/m';

--
-- A semaphore (kd/sem, limit 2): two holds, then the queue.
--
SELECT status, queue_position FROM sync_request('sem/kd/sem', 'ns/s1');
SELECT status, queue_position FROM sync_request('sem/kd/sem', 'ns/s2');
SELECT status, queue_position FROM sync_request('sem/kd/sem', 'ns/s3');
SELECT status, queue_position FROM sync_request('sem/kd/sem', 'ns/s4');
SELECT * FROM sync_locks WHERE lock_name = 'sem/kd/sem';
SELECT * FROM pg_temp.st WHERE name = 'sem/kd/sem';
-- a release grants the first pending entry only
SELECT sync_release('sem/kd/sem', 'ns/s2') AS released;
SELECT pg_temp.settle() AS settled;
SELECT * FROM pg_temp.st WHERE name = 'sem/kd/sem';
SELECT * FROM pg_temp.holders WHERE lock_name = 'sem/kd/sem';
SELECT * FROM pg_temp.waiters WHERE lock_name = 'sem/kd/sem';

--
-- queued_at (the workflow's creation time) orders the queue after priority:
-- at equal priority the older workflow goes first, whatever the arrival
-- order; a request without queued_at is queued at the current time.
--
SELECT status FROM sync_request('sem/kd/queue', 'ns/q-holder');
SELECT status, queue_position
  FROM sync_request('sem/kd/queue', 'ns/q-new', queued_at => '2024-03-02 10:00:00+00');
SELECT status, queue_position
  FROM sync_request('sem/kd/queue', 'ns/q-old', queued_at => '2024-03-01 10:00:00+00');
SELECT status, queue_position
  FROM sync_request('sem/kd/queue', 'ns/q-now');
-- higher priority first, even if newer
SELECT status, queue_position
  FROM sync_request('sem/kd/queue', 'ns/q-urgent', 1, queued_at => '2024-03-03 10:00:00+00');
SELECT * FROM pg_temp.waiters WHERE lock_name = 'sem/kd/queue';
-- sync_state.time is the given queued_at
SELECT workflowkey, priority, time AT TIME ZONE 'UTC' AS time_utc
  FROM sync_state WHERE name = 'sem/kd/queue' AND workflowkey LIKE 'ns/q-%'
   AND workflowkey NOT IN ('ns/q-holder', 'ns/q-now')
 ORDER BY priority DESC, time;
SELECT time BETWEEN now() - interval '1 hour' AND clock_timestamp() AS time_is_recent
  FROM sync_state WHERE name = 'sem/kd/queue' AND workflowkey = 'ns/q-now';
-- the slot goes to the urgent one, then to the oldest
SELECT sync_release('sem/kd/queue', 'ns/q-holder') AS released;
SELECT pg_temp.settle() AS settled;
SELECT * FROM pg_temp.st WHERE name = 'sem/kd/queue';
SELECT sync_release('sem/kd/queue', 'ns/q-urgent') AS released;
SELECT pg_temp.settle() AS settled;
SELECT * FROM pg_temp.st WHERE name = 'sem/kd/queue';
SELECT * FROM pg_temp.waiters WHERE lock_name = 'sem/kd/queue';

--
-- sync_is_held: any current grant, or (with a token) that exact grant.
--
SELECT token AS t_s1 FROM sync_state WHERE name = 'sem/kd/sem' AND workflowkey = 'ns/s1' \gset
SELECT sync_is_held('sem/kd/sem', 'ns/s1') AS held,
       sync_is_held('sem/kd/sem', 'ns/s1', :t_s1) AS right_token,
       sync_is_held('sem/kd/sem', 'ns/s1', :t_s1 + 1) AS wrong_token,
       sync_is_held('sem/kd/sem', 'ns/s1', NULL) AS null_token;
-- a pending entry, an unknown holder, an unknown lock: not held
SELECT sync_is_held('sem/kd/sem', 'ns/s4') AS pending,
       sync_is_held('sem/kd/sem', 'ns/nobody') AS unknown_holder,
       sync_is_held('mtx/kd/never', 'ns/s1') AS unknown_lock;
-- a new grant of the same lock to the same holder has a new token: the old
-- one no longer fences
SELECT sync_release('sem/kd/sem', 'ns/s1') AS released;
SELECT sync_is_held('sem/kd/sem', 'ns/s1') AS held_after_release,
       sync_is_held('sem/kd/sem', 'ns/s1', :t_s1) AS old_token;
-- (the freed slot went to ns/s4; ns/s1 queues, and gets in when ns/s4 goes)
SELECT status, queue_position FROM sync_request('sem/kd/sem', 'ns/s1');
SELECT sync_is_held('sem/kd/sem', 'ns/s1') AS held_while_pending;
SELECT sync_release('sem/kd/sem', 'ns/s4') AS released;
SELECT pg_temp.settle() AS settled;
SELECT * FROM pg_temp.st WHERE name = 'sem/kd/sem';
SELECT token AS t_s1_new FROM sync_state WHERE name = 'sem/kd/sem' AND workflowkey = 'ns/s1' \gset
SELECT :t_s1_new > :t_s1 AS token_increased,
       sync_is_held('sem/kd/sem', 'ns/s1') AS held,
       sync_is_held('sem/kd/sem', 'ns/s1', :t_s1) AS old_token,
       sync_is_held('sem/kd/sem', 'ns/s1', :t_s1_new) AS new_token;

--
-- sync_release_holder: everything of one holder, held or pending; it
-- returns how many entries it released.
--
SELECT status FROM sync_request('mtx/kd/h1', 'ns/multi-holder');
SELECT status FROM sync_request('mtx/kd/h2', 'ns/multi-holder');
SELECT status FROM sync_request('mtx/kd/h1', 'ns/h-waiter');
SELECT status FROM sync_request('mtx/kd/h3', 'ns/h-waiter');
SELECT status FROM sync_request('mtx/kd/h3', 'ns/multi-holder');
SELECT name, held FROM sync_state WHERE workflowkey = 'ns/multi-holder' ORDER BY name;
SELECT sync_release_holder('ns/multi-holder') AS released;
SELECT count(*) AS rows FROM sync_state WHERE workflowkey = 'ns/multi-holder';
SELECT pg_temp.settle() AS settled;
-- mtx/kd/h1 went to the waiter
SELECT * FROM pg_temp.st WHERE name LIKE 'mtx/kd/h_';
SELECT sync_release_holder('ns/multi-holder') AS released_again;
SELECT sync_release_holder('ns/h-waiter') AS released;
SELECT count(*) AS rows FROM sync_state WHERE name LIKE 'mtx/kd/h_';

--
-- Several locks in one request: all or nothing.  mtx/kd/x1 is free but
-- mtx/kd/x2 is held, so the request is pending on both until both can be
-- granted together.
--
SELECT status FROM sync_request('mtx/kd/x2', 'ns/blocker');
SELECT * FROM sync_request(ARRAY['mtx/kd/x1', 'mtx/kd/x2'], 'ns/multi');
SELECT * FROM pg_temp.st WHERE name LIKE 'mtx/kd/x_';
SELECT * FROM pg_temp.waiters WHERE lock_name LIKE 'mtx/kd/x_';
SELECT lock_name, holders, waiters FROM sync_locks
 WHERE lock_name LIKE 'mtx/kd/x_' ORDER BY lock_name;
-- the request's rows share one request_id
SELECT count(DISTINCT request_id) AS requests FROM sync_state WHERE workflowkey = 'ns/multi';
-- asking again with the same set (in any order) reports the state of each
SELECT * FROM sync_request(ARRAY['mtx/kd/x2', 'mtx/kd/x1'], 'ns/multi');
-- the free lock is not held by anyone meanwhile
SELECT sync_is_held('mtx/kd/x1', 'ns/multi') AS x1_held;
-- the blocker goes: both are granted together
SELECT sync_release('mtx/kd/x2', 'ns/blocker') AS released;
SELECT pg_temp.settle() AS settled;
SELECT * FROM pg_temp.st WHERE name LIKE 'mtx/kd/x_';
SELECT * FROM pg_temp.holders WHERE lock_name LIKE 'mtx/kd/x_';
SELECT lock_name, status, token IS NOT NULL AS has_token, queue_position
  FROM sync_request(ARRAY['mtx/kd/x1', 'mtx/kd/x2'], 'ns/multi');
SELECT sync_is_held('mtx/kd/x1', 'ns/multi') AS x1_held,
       sync_is_held('mtx/kd/x2', 'ns/multi') AS x2_held;

-- Withdrawing one lock of a pending multi-lock request withdraws the whole
-- request.
SELECT lock_name, status, queue_position
  FROM sync_request(ARRAY['mtx/kd/x1', 'mtx/kd/x2'], 'ns/multi2');
SELECT * FROM pg_temp.waiters WHERE lock_name LIKE 'mtx/kd/x_';
SELECT sync_release('mtx/kd/x2', 'ns/multi2') AS withdrawn;
SELECT count(*) AS rows FROM sync_state WHERE workflowkey = 'ns/multi2';
SELECT count(*) AS waiters FROM sync_waiters WHERE holder = 'ns/multi2';
SELECT sync_release('mtx/kd/x1', 'ns/multi2') AS withdrawn_again;
-- sync_release_holder counts every entry of a pending multi-lock request
SELECT lock_name, status FROM sync_request(ARRAY['mtx/kd/x1', 'mtx/kd/x2'], 'ns/multi3');
SELECT sync_release_holder('ns/multi3') AS released;
SELECT count(*) AS rows FROM sync_state WHERE workflowkey = 'ns/multi3';
SELECT count(*) AS waiters FROM sync_waiters WHERE holder = 'ns/multi3';
SELECT sync_release_holder('ns/multi') AS released;
SELECT count(*) AS rows FROM sync_state WHERE name LIKE 'mtx/kd/x_';

--
-- sync_refresh extends a lease from now; without a lease argument it uses
-- the hold's own; a hold without a lease has nothing to extend (NULL)
-- unless one is given.
--
SELECT status FROM sync_request('mtx/kd/lease', 'ns/leased', lease => '1 hour');
SELECT lease, lease_expires AS exp0 FROM sync_state
 WHERE name = 'mtx/kd/lease' AND workflowkey = 'ns/leased' \gset
SELECT :'lease' AS lease,
       :'exp0'::timestamptz BETWEEN now() + interval '59 minutes' AND clock_timestamp() + interval '1 hour'
           AS expires_in_an_hour,
       (SELECT lease_expires FROM sync_holders WHERE lock_name = 'mtx/kd/lease') = :'exp0'
           AS view_agrees;
SELECT pg_sleep(0.01);
SELECT sync_refresh('mtx/kd/lease', 'ns/leased') AS exp1 \gset
SELECT :'exp1'::timestamptz > :'exp0'::timestamptz AS moved_forward,
       (SELECT lease_expires FROM sync_state WHERE name = 'mtx/kd/lease') = :'exp1' AS table_agrees,
       (SELECT lease_expires FROM sync_holders WHERE lock_name = 'mtx/kd/lease') = :'exp1' AS view_agrees;
-- a new lease replaces the old one
SELECT sync_refresh('mtx/kd/lease', 'ns/leased', '2 hours') AS exp2 \gset
SELECT :'exp2'::timestamptz BETWEEN now() + interval '119 minutes' AND clock_timestamp() + interval '2 hours'
           AS expires_in_two_hours,
       (SELECT lease FROM sync_state WHERE name = 'mtx/kd/lease') AS lease,
       (SELECT lease_expires FROM sync_holders WHERE lock_name = 'mtx/kd/lease') = :'exp2' AS view_agrees;
SELECT sync_refresh('mtx/kd/lease', 'ns/leased') >= :'exp2'::timestamptz AS kept_two_hours;
-- no lease: NULL, nothing changes; given one, the hold gets it
SELECT status FROM sync_request('mtx/kd/nolease', 'ns/leased');
SELECT sync_refresh('mtx/kd/nolease', 'ns/leased') IS NULL AS no_lease;
SELECT lease, lease_expires FROM sync_state WHERE name = 'mtx/kd/nolease';
SELECT sync_refresh('mtx/kd/nolease', 'ns/leased', '10 minutes') > now() AS leased_now;
SELECT lease, lease_expires > now() AS expires_later FROM sync_state WHERE name = 'mtx/kd/nolease';
SELECT sync_release_holder('ns/leased') AS released;

--
-- Session holds and keyed holds share one limit and one queue
-- (kd/shared, limit 2).
--
SELECT status FROM sync_request('sem/kd/shared', 'ns/k1');
SELECT status FROM sync_request('sem/kd/shared', 'ns/k2');
-- full: a session cannot get in
SELECT sync_try_acquire('sem/kd/shared') IS NULL AS session_not_granted;
SELECT * FROM sync_locks WHERE lock_name = 'sem/kd/shared';
-- one slot freed: the session takes it
SELECT sync_release('sem/kd/shared', 'ns/k2') AS released;
SELECT sync_try_acquire('sem/kd/shared') > 0 AS session_granted;
-- full again: a keyed request queues behind the session's hold
SELECT status, queue_position FROM sync_request('sem/kd/shared', 'ns/k3');
SELECT lock_name, pid = pg_backend_pid() AS my_pid, scope, holder
  FROM sync_holders WHERE lock_name = 'sem/kd/shared' ORDER BY scope, holder;
SELECT * FROM pg_temp.waiters WHERE lock_name = 'sem/kd/shared';
-- the session's release hands its slot to the keyed request
SELECT sync_release('sem/kd/shared') AS session_released;
SELECT pg_temp.settle() AS settled;
SELECT * FROM pg_temp.st WHERE name = 'sem/kd/shared';
SELECT * FROM pg_temp.holders WHERE lock_name = 'sem/kd/shared';
SELECT sync_try_acquire('sem/kd/shared') IS NULL AS session_not_granted;
SELECT sync_release_holder('ns/k1') + sync_release_holder('ns/k3') AS released;
SELECT count(*) AS live FROM sync_locks WHERE lock_name = 'sem/kd/shared';
-- so do transaction-scope holds: with a keyed hold and a transaction's hold
-- the semaphore is full, a keyed request queues behind them, and the end of
-- the transaction hands its slot to that request
SELECT status FROM sync_request('sem/kd/shared', 'ns/k4');
BEGIN;
SELECT sync_try_acquire_xact('sem/kd/shared') > 0 AS xact_granted;
SELECT status, queue_position FROM sync_request('sem/kd/shared', 'ns/k5');
SELECT scope, holder FROM sync_holders WHERE lock_name = 'sem/kd/shared' ORDER BY scope, holder;
COMMIT;
SELECT pg_temp.settle() AS settled;
SELECT scope, holder FROM sync_holders WHERE lock_name = 'sem/kd/shared' ORDER BY scope, holder;
SELECT workflowkey, held FROM sync_state WHERE name = 'sem/kd/shared' ORDER BY workflowkey;
SELECT sync_release_holder('ns/k4') + sync_release_holder('ns/k5') AS released;

--
-- Transactions: a request or release that rolls back leaves no trace.
--
-- a held request and a pending one, rolled back
SELECT status FROM sync_request('mtx/kd/tx', 'ns/tx-holder');
BEGIN;
SELECT status FROM sync_request('mtx/kd/tx2', 'ns/tx-new');
SELECT status, queue_position FROM sync_request('mtx/kd/tx', 'ns/tx-new');
SELECT name, workflowkey, held FROM sync_state WHERE workflowkey = 'ns/tx-new' ORDER BY name;
ROLLBACK;
SELECT count(*) AS rows FROM sync_state WHERE workflowkey = 'ns/tx-new';
SELECT count(*) AS holds FROM sync_holders WHERE holder = 'ns/tx-new';
SELECT count(*) AS waiters FROM sync_waiters WHERE lock_name = 'mtx/kd/tx';
SELECT count(*) AS live FROM sync_locks WHERE lock_name = 'mtx/kd/tx2';
-- the rolled-back request is not there: asking is a new request
SELECT sync_is_held('mtx/kd/tx2', 'ns/tx-new') AS held;

-- a release rolled back: the hold is kept with its token, and the entry
-- behind it stays pending
SELECT token AS t_tx FROM sync_state WHERE name = 'mtx/kd/tx' \gset
SELECT status, queue_position FROM sync_request('mtx/kd/tx', 'ns/tx-waiter');
BEGIN;
SELECT sync_release('mtx/kd/tx', 'ns/tx-holder') AS released;
SELECT count(*) AS rows_in_transaction FROM sync_state WHERE workflowkey = 'ns/tx-holder';
ROLLBACK;
SELECT pg_temp.settle() AS settled;
SELECT * FROM pg_temp.st WHERE name = 'mtx/kd/tx';
SELECT holder, token = :t_tx AS same_token FROM sync_holders WHERE lock_name = 'mtx/kd/tx';
SELECT * FROM pg_temp.waiters WHERE lock_name = 'mtx/kd/tx';
SELECT sync_is_held('mtx/kd/tx', 'ns/tx-holder', :t_tx) AS still_held;

-- savepoints: a request and a release rolled back to a savepoint leave no
-- trace; what the transaction did outside them commits
BEGIN;
SAVEPOINT s1;
SELECT status FROM sync_request('mtx/kd/sp', 'ns/sp-gone');
ROLLBACK TO SAVEPOINT s1;
SELECT status FROM sync_request('mtx/kd/sp', 'ns/sp-kept');
SAVEPOINT s2;
SELECT sync_release('mtx/kd/tx', 'ns/tx-holder') AS released;
ROLLBACK TO SAVEPOINT s2;
COMMIT;
SELECT pg_temp.settle() AS settled;
SELECT * FROM pg_temp.st WHERE name IN ('mtx/kd/sp', 'mtx/kd/tx');
SELECT * FROM pg_temp.holders WHERE lock_name IN ('mtx/kd/sp', 'mtx/kd/tx');
SELECT * FROM pg_temp.waiters WHERE lock_name IN ('mtx/kd/sp', 'mtx/kd/tx');

-- a request and its release in one transaction: nothing remains
BEGIN;
SELECT status FROM sync_request('mtx/kd/once', 'ns/once');
SELECT sync_release('mtx/kd/once', 'ns/once') AS released;
SELECT count(*) AS rows_in_transaction FROM sync_state WHERE name = 'mtx/kd/once';
COMMIT;
SELECT count(*) AS rows FROM sync_state WHERE name = 'mtx/kd/once';
SELECT count(*) AS live FROM sync_locks WHERE lock_name = 'mtx/kd/once';
-- likewise a pending request withdrawn in its own transaction
BEGIN;
SELECT status, queue_position FROM sync_request('mtx/kd/tx', 'ns/once');
SELECT sync_release('mtx/kd/tx', 'ns/once') AS withdrawn;
COMMIT;
SELECT * FROM pg_temp.waiters WHERE lock_name = 'mtx/kd/tx';

--
-- Clean up: release everything, delete what this test created.
--
SELECT h AS holder, sync_release_holder(h) AS released
  FROM unnest(ARRAY['ns/s1', 'ns/s3', 'ns/q-old', 'ns/q-new', 'ns/q-now',
                    'ns/tx-holder', 'ns/tx-waiter', 'ns/sp-kept']) AS h;
SELECT pg_temp.settle() AS settled;
SELECT count(*) AS rows FROM sync_state;
DELETE FROM sync_limit WHERE name LIKE 'kd/%';
DELETE FROM sync_controller WHERE controller = 'kd-ctl';
SELECT * FROM sync_locks;
SELECT * FROM sync_holders;
SELECT * FROM sync_waiters;
