--
-- keyed_errors: every error of the keyed-hold functions, with its SQLSTATE,
-- and that a call that fails leaves nothing behind (no row in sync_state or
-- sync_controller, nothing in the views, existing requests unchanged).
--
CREATE EXTENSION IF NOT EXISTS syncwf;
-- Helpers regress_util.expect_error (reports a statement's error as a
-- NOTICE with SQLSTATE, DETAIL and HINT) and regress_util.error_of
-- (returns "SQLSTATE: message"), created by 00_setup.

-- everything there is, for the "nothing left behind" checks
CREATE VIEW pg_temp.everything AS
    SELECT 'state' AS what, name || ' ' || workflowkey || ' ' || held AS item
      FROM sync_state
    UNION ALL
    SELECT 'controller', controller FROM sync_controller
    UNION ALL
    SELECT 'lock', lock_name || ' ' || holders || '/' || waiters FROM sync_locks
    ORDER BY 1, 2;
SELECT * FROM pg_temp.everything;

--
-- The holder key: not NULL (22004), not empty, at most 256 bytes, no
-- control characters (22023).  The same rules hold for every function that
-- takes one.
--
CALL regress_util.expect_error($$SELECT * FROM sync_request('mtx/ke/a', NULL)$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request('mtx/ke/a', '')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request('mtx/ke/a', repeat('k', 257))$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request('mtx/ke/a', 'k' || repeat('é', 128))$$);  -- 257 bytes
CALL regress_util.expect_error($$SELECT * FROM sync_request('mtx/ke/a', E'ns/wf\n')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request('mtx/ke/a', E'ns/\twf')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request('mtx/ke/a', E'ns/wf\x7f')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request(ARRAY['mtx/ke/a'], NULL)$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request(ARRAY['mtx/ke/a'], '')$$);
-- 256 bytes is the longest holder key (Argo's varchar(256)): accepted, and
-- kept whole in sync_state and the views
SELECT status FROM sync_request('mtx/ke/a', repeat('k', 256));
SELECT octet_length(s.workflowkey) AS in_sync_state, octet_length(h.holder) AS in_sync_holders
  FROM sync_state s JOIN sync_holders h ON h.lock_name = s.name AND h.holder = s.workflowkey
 WHERE s.name = 'mtx/ke/a';
SELECT sync_release('mtx/ke/a', repeat('k', 256)) AS released;
-- the other functions
SELECT regress_util.error_of($$SELECT sync_release('mtx/ke/a', NULL)$$) AS release_null,
       regress_util.error_of($$SELECT sync_release('mtx/ke/a', '')$$) AS release_empty;
SELECT regress_util.error_of($$SELECT sync_release_holder(NULL)$$) AS release_holder_null,
       regress_util.error_of($$SELECT sync_release_holder(E'a\nb')$$) AS release_holder_control;
SELECT regress_util.error_of($$SELECT sync_is_held('mtx/ke/a', NULL)$$) AS is_held_null,
       regress_util.error_of($$SELECT sync_is_held('mtx/ke/a', repeat('k', 257))$$) AS is_held_long;
SELECT regress_util.error_of($$SELECT sync_refresh('mtx/ke/a', NULL)$$) AS refresh_null,
       regress_util.error_of($$SELECT sync_refresh('mtx/ke/a', '')$$) AS refresh_empty;

--
-- The controller: NULL means none; otherwise the same rules (22023), for
-- sync_request and sync_heartbeat (where NULL is an error, 22004).
--
\x on
SELECT regress_util.error_of($$SELECT * FROM sync_request('mtx/ke/a', 'ns/wf', 0, '')$$) AS empty,
       regress_util.error_of($$SELECT * FROM sync_request('mtx/ke/a', 'ns/wf', controller => repeat('c', 257))$$) AS too_long,
       regress_util.error_of($$SELECT * FROM sync_request('mtx/ke/a', 'ns/wf', controller => E'ctl\r')$$) AS control,
       regress_util.error_of($$SELECT * FROM sync_request(ARRAY['mtx/ke/a'], 'ns/wf', controller => '')$$) AS array_empty;
SELECT regress_util.error_of($$SELECT sync_heartbeat(NULL)$$) AS heartbeat_null,
       regress_util.error_of($$SELECT sync_heartbeat('')$$) AS heartbeat_empty,
       regress_util.error_of($$SELECT sync_heartbeat(repeat('c', 257))$$) AS heartbeat_too_long,
       regress_util.error_of($$SELECT sync_heartbeat(E'c\x01')$$) AS heartbeat_control;
\x off

--
-- Lock names: not NULL (22004), well formed (22023).
--
CALL regress_util.expect_error($$SELECT * FROM sync_request(NULL::text, 'ns/wf')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request('lock', 'ns/wf')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request('mtx/nokey', 'ns/wf')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request('mtx//key', 'ns/wf')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request('sem/ns/', 'ns/wf')$$);
SELECT regress_util.error_of($$SELECT * FROM sync_request(E'mtx/ke/a\n', 'ns/wf')$$) AS control,
       regress_util.error_of($$SELECT * FROM sync_request('mtx/ke/' || repeat('k', 254), 'ns/wf')$$) AS too_long;
SELECT regress_util.error_of($$SELECT sync_release(NULL::text, 'ns/wf')$$) AS release_null,
       regress_util.error_of($$SELECT sync_release('bad', 'ns/wf')$$) AS release_bad;
SELECT regress_util.error_of($$SELECT sync_is_held(NULL, 'ns/wf')$$) AS is_held_null,
       regress_util.error_of($$SELECT sync_refresh('bad', 'ns/wf')$$) AS refresh_bad;

--
-- Priority: NULL is no error (0 for a new request, unchanged for a repeated
-- one).  Lease: NULL (none) or positive (22023).  queued_at: NULL (now) or
-- finite (22023).
--
SELECT status FROM sync_request('mtx/ke/np', 'ns/np', NULL);
SELECT priority FROM sync_state WHERE workflowkey = 'ns/np';
SELECT sync_release('mtx/ke/np', 'ns/np');
CALL regress_util.expect_error($$SELECT * FROM sync_request('mtx/ke/a', 'ns/wf', lease => '0')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request('mtx/ke/a', 'ns/wf', lease => '-1 second')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request('mtx/ke/a', 'ns/wf', lease => '1 day -24 hours')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request('mtx/ke/a', 'ns/wf', queued_at => 'infinity')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request('mtx/ke/a', 'ns/wf', queued_at => '-infinity')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request(ARRAY['mtx/ke/a'], 'ns/wf', queued_at => 'infinity')$$);

--
-- Arrays: not NULL, no NULL element (22004), not empty, no duplicates
-- (22023), one dimension (2202E), at most 64 locks (54000).
--
CALL regress_util.expect_error($$SELECT * FROM sync_request(NULL::text[], 'ns/wf')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request(ARRAY['mtx/ke/a', NULL], 'ns/wf')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request('{}'::text[], 'ns/wf')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request(ARRAY['mtx/ke/a', 'mtx/ke/b', 'mtx/ke/a'], 'ns/wf')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request(ARRAY[['mtx/ke/a'], ['mtx/ke/b']], 'ns/wf')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request(ARRAY['mtx/ke/a', 'bad'], 'ns/wf')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request(
    (SELECT array_agg('mtx/ke/many' || i) FROM generate_series(1, 65) i), 'ns/wf')$$);
-- 64 locks is the most: accepted
SELECT count(*) AS held
  FROM sync_request((SELECT array_agg('mtx/ke/many' || i) FROM generate_series(1, 64) i), 'ns/wf')
 WHERE status = 'held';
SELECT sync_release_holder('ns/wf') AS released;

--
-- A semaphore needs a committed sync_limit row (42704), also in an array;
-- the other locks of the array are not taken.
--
CALL regress_util.expect_error($$SELECT * FROM sync_request('sem/ke/nolimit', 'ns/wf')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request(ARRAY['mtx/ke/a', 'sem/ke/nolimit'], 'ns/wf', controller => 'ke-ctl')$$);
SELECT * FROM pg_temp.everything;
-- a row inserted by the same, uncommitted transaction does not count
BEGIN;
INSERT INTO sync_limit VALUES ('ke/nolimit', 1);
CALL regress_util.expect_error($$SELECT * FROM sync_request('sem/ke/nolimit', 'ns/wf')$$);
ROLLBACK;

--
-- A request that names some, but not all, of the locks of the holder's
-- existing request(s) (55000); the existing request is unchanged.
--
SELECT lock_name, status FROM sync_request(ARRAY['mtx/ke/a', 'mtx/ke/b'], 'ns/wf');
SELECT status FROM sync_request('mtx/ke/c', 'ns/wf');
-- a superset, one of them with another
CALL regress_util.expect_error($$SELECT * FROM sync_request(ARRAY['mtx/ke/a', 'mtx/ke/b', 'mtx/ke/d'], 'ns/wf')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request(ARRAY['mtx/ke/a', 'mtx/ke/d'], 'ns/wf')$$);
-- a subset (one lock alone, in either form), and the locks of two different
-- requests together, are not the same set either (SQLSTATE only)
SELECT left(regress_util.error_of($$SELECT * FROM sync_request('mtx/ke/a', 'ns/wf')$$), 5) AS subset,
       left(regress_util.error_of($$SELECT * FROM sync_request(ARRAY['mtx/ke/b'], 'ns/wf', 3)$$), 5) AS subset_array,
       left(regress_util.error_of($$SELECT * FROM sync_request(ARRAY['mtx/ke/a', 'mtx/ke/b', 'mtx/ke/c'], 'ns/wf')$$), 5) AS two_requests,
       left(regress_util.error_of($$SELECT * FROM sync_request(ARRAY['mtx/ke/c', 'mtx/ke/a'], 'ns/wf')$$), 5) AS parts_of_two;
SELECT name, workflowkey, held, priority FROM sync_state ORDER BY name;
SELECT count(DISTINCT request_id) AS requests FROM sync_state WHERE workflowkey = 'ns/wf';
SELECT count(*) AS live FROM sync_locks WHERE lock_name = 'mtx/ke/d';
-- the same set again is fine
SELECT lock_name, status FROM sync_request(ARRAY['mtx/ke/b', 'mtx/ke/a'], 'ns/wf');
-- another holder is not affected
SELECT status, queue_position FROM sync_request('mtx/ke/a', 'ns/other');
SELECT sync_release('mtx/ke/a', 'ns/other') AS withdrawn;

--
-- sync_refresh of a hold that is not held: SW001 ("hold lost"), whether it
-- was never requested, is pending, or was released.
--
CALL regress_util.expect_error($$SELECT sync_refresh('mtx/ke/never', 'ns/wf', '1 minute')$$);
SELECT status, queue_position FROM sync_request('mtx/ke/c', 'ns/pending');
CALL regress_util.expect_error($$SELECT sync_refresh('mtx/ke/c', 'ns/pending', '1 minute')$$);
SELECT status FROM sync_request('mtx/ke/lease', 'ns/leased', lease => '1 hour');
SELECT sync_release('mtx/ke/lease', 'ns/leased') AS released;
CALL regress_util.expect_error($$SELECT sync_refresh('mtx/ke/lease', 'ns/leased')$$);
-- the lease of a refresh must be positive too (22023)
SELECT status FROM sync_request('mtx/ke/lease', 'ns/leased', lease => '1 hour');
CALL regress_util.expect_error($$SELECT sync_refresh('mtx/ke/lease', 'ns/leased', '0')$$);
CALL regress_util.expect_error($$SELECT sync_refresh('mtx/ke/lease', 'ns/leased', '-5 minutes')$$);
SELECT lease FROM sync_state WHERE name = 'mtx/ke/lease';
-- a transaction that refreshed, then failed: the refresh is rolled back
SELECT lease_expires AS exp0 FROM sync_state WHERE name = 'mtx/ke/lease' \gset
BEGIN;
SELECT sync_refresh('mtx/ke/lease', 'ns/leased', '3 hours') > :'exp0' AS extended;
SELECT sync_refresh('mtx/ke/lease', 'ns/gone');
ROLLBACK;
SELECT lease, lease_expires = :'exp0' AS expiry_unchanged FROM sync_state WHERE name = 'mtx/ke/lease';
SELECT lease_expires = :'exp0' AS view_unchanged FROM sync_holders WHERE lock_name = 'mtx/ke/lease';
SELECT sync_release_holder('ns/leased') AS released;

--
-- sync_state written by hand (docs/argo.md): an INSERT is a claim-only
-- request (syncwf fills in what it owns), an UPDATE setting held = true its
-- claim (40001 at commit if it cannot be granted); any other UPDATE is refused
-- (0A000), even for a superuser.
--
CALL regress_util.expect_error($$INSERT INTO sync_state (name, workflowkey, held, priority, time, owner, request_id, seq)
    VALUES ('mtx/ke/x', 'ns/x', true, 0, now(), current_user::regrole, 1, 1)$$);
UPDATE sync_state SET held = true WHERE workflowkey = 'ns/pending';  -- 40001 at commit
CALL regress_util.expect_error($$UPDATE sync_state SET priority = 10 WHERE name = 'mtx/ke/a'$$);
CALL regress_util.expect_error($$INSERT INTO sync_state SELECT * FROM sync_state$$);
SELECT name, workflowkey, held, priority FROM sync_state ORDER BY name, workflowkey;
SELECT lock_name, holder, priority FROM sync_waiters ORDER BY lock_name;
SELECT sync_release('mtx/ke/x', 'ns/x');

--
-- Read-only transactions cannot change keyed holds (25006); they can look.
--
BEGIN READ ONLY;
CALL regress_util.expect_error($$SELECT * FROM sync_request('mtx/ke/ro', 'ns/ro')$$);
SELECT left(regress_util.error_of($$SELECT sync_release('mtx/ke/a', 'ns/wf')$$), 5) AS release,
       left(regress_util.error_of($$SELECT sync_release_holder('ns/wf')$$), 5) AS release_holder,
       left(regress_util.error_of($$SELECT sync_refresh('mtx/ke/a', 'ns/wf', '1 hour')$$), 5) AS refresh;
SELECT sync_is_held('mtx/ke/a', 'ns/wf') AS held;
COMMIT;

--
-- After all these failures: only what succeeded is there.  (ke-ctl, named
-- by a request that failed, was not recorded.)
--
SELECT * FROM pg_temp.everything;
SELECT sync_release_holder('ns/wf') AS released,
       sync_release_holder('ns/pending') AS released_pending;
SELECT * FROM pg_temp.everything;
SELECT * FROM sync_holders;
SELECT * FROM sync_waiters;
