--
-- keyed_wait: sync_wait(), which blocks until a keyed request is held and
-- returns its token, and its array form: an entry already held comes back
-- at once with its token; a pending one waits (here: until a timeout,
-- 55P03, leaving the request queued); every error with its SQLSTATE, and
-- that a failed call leaves nothing behind.  Waking on a grant, on a
-- withdrawal or loss, a cancel and the array form waiting for all are in
-- the isolation spec keyed-wait; a client that goes away while its backend
-- waits in test/t/017_dead_clients.pl; another database in
-- test/t/008_worker.pl.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
-- Helpers regress_util.expect_error (reports a statement's error as a
-- NOTICE with SQLSTATE, DETAIL and HINT) and regress_util.error_of
-- (returns "SQLSTATE: message"), created by 00_setup.
CREATE VIEW pg_temp.kw_state AS
    SELECT name, workflowkey, held FROM sync_state
     WHERE name LIKE '%/kw/%' ORDER BY name, workflowkey;

--
-- Held: the token at once, also with a zero timeout.
--
SELECT token AS t1 FROM sync_request('mtx/kw/a', 'ns/wf-1') \gset
SELECT sync_wait('mtx/kw/a', 'ns/wf-1') = :t1 AS same_token,
       sync_wait('mtx/kw/a', 'ns/wf-1', '0') = :t1 AS zero_timeout,
       sync_wait('mtx/kw/a', 'ns/wf-1', NULL) = :t1 AS null_timeout;
SELECT sync_is_held('mtx/kw/a', 'ns/wf-1', sync_wait('mtx/kw/a', 'ns/wf-1')) AS is_held;

--
-- Pending: 55P03 when the timeout passes; the request stays queued.
--
SELECT status, queue_position FROM sync_request('mtx/kw/a', 'ns/wf-2');
CALL regress_util.expect_error($$SELECT sync_wait('mtx/kw/a', 'ns/wf-2', '0')$$);
SELECT clock_timestamp() AS before \gset
CALL regress_util.expect_error($$SELECT sync_wait('mtx/kw/a', 'ns/wf-2', '200 ms')$$);
SELECT clock_timestamp() - :'before' >= interval '200 ms' AS waited_200ms;
SELECT * FROM pg_temp.kw_state;
SELECT lock_name, holder, position FROM sync_waiters WHERE lock_name = 'mtx/kw/a';
-- statement_timeout ends the wait like any statement; nothing changes
SET statement_timeout = '100ms';
SELECT regress_util.error_of($$SELECT sync_wait('mtx/kw/a', 'ns/wf-2')$$) AS statement_timeout;
RESET statement_timeout;
SELECT * FROM pg_temp.kw_state;

--
-- Granted: wf-1 lets go, the slot goes to wf-2 when that commits, and
-- sync_wait returns its token at once.  The grant is in sync_state when
-- sync_wait returns (written by sync_wait or, a moment earlier, by the
-- worker).
--
SELECT sync_release('mtx/kw/a', 'ns/wf-1') AS released;
SELECT sync_wait('mtx/kw/a', 'ns/wf-2', '10 s') AS t2 \gset
SELECT :t2 > :t1 AS larger_token;
SELECT name, workflowkey, held, token = :t2 AS same_token FROM sync_state WHERE name = 'mtx/kw/a';
SELECT sync_is_held('mtx/kw/a', 'ns/wf-2', :t2) AS is_held;

--
-- Array form: every lock of the holder held, tokens in the order of the
-- names; 55P03 names the first that is not held and counts the others.
--
SELECT lock_name, status FROM sync_request(ARRAY['mtx/kw/b', 'mtx/kw/c'], 'ns/wf-3');
SELECT status FROM sync_request('mtx/kw/d', 'ns/wf-3');
SELECT sync_wait(ARRAY['mtx/kw/d', 'mtx/kw/b', 'mtx/kw/c'], 'ns/wf-3') =
       ARRAY[(SELECT token FROM sync_state WHERE name = 'mtx/kw/d'),
             (SELECT token FROM sync_state WHERE name = 'mtx/kw/b'),
             (SELECT token FROM sync_state WHERE name = 'mtx/kw/c')] AS tokens_in_order;
SELECT lock_name, status FROM sync_request(ARRAY['mtx/kw/b', 'mtx/kw/c'], 'ns/wf-4');
SELECT status FROM sync_request('mtx/kw/e', 'ns/wf-4');
CALL regress_util.expect_error($$SELECT sync_wait(ARRAY['mtx/kw/e', 'mtx/kw/b', 'mtx/kw/c'], 'ns/wf-4', '0')$$);
CALL regress_util.expect_error($$SELECT sync_wait(ARRAY['mtx/kw/e', 'mtx/kw/c'], 'ns/wf-4', '0')$$);
SELECT sync_wait(ARRAY['mtx/kw/e'], 'ns/wf-4') = ARRAY[token] AS one_name
  FROM sync_state WHERE name = 'mtx/kw/e' AND workflowkey = 'ns/wf-4';

--
-- No such entry: SW002, for an unknown holder, an unknown lock, one name of
-- an array, and an entry this transaction has released.
--
CALL regress_util.expect_error($$SELECT sync_wait('mtx/kw/a', 'ns/nobody')$$);
CALL regress_util.expect_error($$SELECT sync_wait('mtx/kw/never', 'ns/wf-2')$$);
CALL regress_util.expect_error($$SELECT sync_wait(ARRAY['mtx/kw/d', 'mtx/kw/never'], 'ns/wf-3')$$);
BEGIN;
SELECT sync_release('mtx/kw/a', 'ns/wf-2') AS released_in_this_transaction;
SELECT regress_util.error_of($$SELECT sync_wait('mtx/kw/a', 'ns/wf-2', '0')$$) AS released_here;
ROLLBACK;
-- a request made in this transaction is found: granted at once here
BEGIN;
SELECT token AS t5 FROM sync_request('mtx/kw/f', 'ns/wf-5') \gset
SELECT sync_wait('mtx/kw/f', 'ns/wf-5') = :t5 AS same_transaction;
COMMIT;

--
-- Any role may wait for any holder's entry, as it may ask sync_is_held.
--
CREATE ROLE regress_kw_other;
SET ROLE regress_kw_other;
SELECT sync_wait('mtx/kw/a', 'ns/wf-2') = :t2 AS other_role;
RESET ROLE;
DROP ROLE regress_kw_other;

--
-- Arguments: the rules of the other keyed functions.
--
SELECT regress_util.error_of($$SELECT sync_wait(NULL::text, 'ns/wf-2')$$) AS null_name,
       regress_util.error_of($$SELECT sync_wait('lock', 'ns/wf-2')$$) AS bad_name,
       regress_util.error_of($$SELECT sync_wait('mtx/kw/a', NULL)$$) AS null_holder,
       regress_util.error_of($$SELECT sync_wait('mtx/kw/a', '')$$) AS empty_holder,
       regress_util.error_of($$SELECT sync_wait('mtx/kw/a', repeat('k', 257))$$) AS long_holder;
CALL regress_util.expect_error($$SELECT sync_wait('mtx/kw/a', 'ns/wf-2', '-1 s')$$);
SELECT regress_util.error_of($$SELECT sync_wait(NULL::text[], 'ns/wf-3')$$) AS null_array,
       regress_util.error_of($$SELECT sync_wait('{}'::text[], 'ns/wf-3')$$) AS empty_array,
       regress_util.error_of($$SELECT sync_wait(ARRAY['mtx/kw/b', NULL], 'ns/wf-3')$$) AS null_element,
       regress_util.error_of($$SELECT sync_wait(ARRAY['mtx/kw/b', 'mtx/kw/b'], 'ns/wf-3')$$) AS duplicate,
       regress_util.error_of($$SELECT sync_wait(ARRAY[['mtx/kw/b'], ['mtx/kw/c']], 'ns/wf-3')$$) AS two_dimensions,
       regress_util.error_of($$SELECT sync_wait(ARRAY(SELECT 'mtx/kw/n' || i FROM generate_series(1, 65) i), 'ns/wf-3')$$) AS too_many,
       regress_util.error_of($$SELECT sync_wait(ARRAY['mtx/kw/b'], NULL)$$) AS array_null_holder;
-- it may write a grant: not in a read-only transaction
BEGIN READ ONLY;
SELECT regress_util.error_of($$SELECT sync_wait('mtx/kw/a', 'ns/wf-2')$$) AS read_only;
ROLLBACK;

-- nothing changed by the failed calls
SELECT * FROM pg_temp.kw_state;

-- clean up
SELECT sync_release_holder(h) FROM unnest(ARRAY['ns/wf-2', 'ns/wf-3', 'ns/wf-4', 'ns/wf-5']) h;
SELECT count(*) AS left_over FROM sync_state WHERE name LIKE '%/kw/%';
