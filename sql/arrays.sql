--
-- arrays: all-or-nothing requests for several locks (the text[] forms).
-- Tokens come back in the order of the names; locks the session already
-- holds keep their token; a request that cannot be granted leaves nothing.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
-- Helpers regress_util.expect_error (reports a statement's error as a
-- NOTICE with SQLSTATE, DETAIL and HINT) and regress_util.error_of
-- (returns "SQLSTATE: message"), created by 00_setup.
CREATE VIEW pg_temp.mine AS
    SELECT lock_name, scope FROM sync_holders
     WHERE pid = pg_backend_pid() ORDER BY lock_name;
INSERT INTO sync_limit (name, sizelimit) VALUES ('arr/zero', 0), ('arr/three', 3);

-- tokens in input order: every token is the one sync_holders shows for the
-- name at the same position, and one request's tokens are distinct
CREATE TEMP TABLE req AS
SELECT n AS pos, name, tok
  FROM unnest(ARRAY['mtx/arr/c', 'sem/arr/three', 'mtx/arr/a', 'mtx/arr/b'],
              sync_acquire(ARRAY['mtx/arr/c', 'sem/arr/three', 'mtx/arr/a', 'mtx/arr/b']))
       WITH ORDINALITY AS u(name, tok, n);
SELECT r.pos, r.name, h.scope, r.tok = h.token AS token_matches
  FROM req r JOIN sync_holders h ON h.lock_name = r.name AND h.pid = pg_backend_pid()
 ORDER BY r.pos;
SELECT count(DISTINCT tok) AS distinct_tokens FROM req;
-- one request is granted at once: its tokens are consecutive grants, and
-- they increase in the order of the names
SELECT bool_and(a.tok < b.tok) AS increasing_in_input_order
  FROM req a JOIN req b ON b.pos = a.pos + 1;
SELECT lock_name, kind, sizelimit, holders, waiters FROM sync_locks ORDER BY lock_name;

-- acquiring an array again returns the same tokens
SELECT sync_acquire(ARRAY['mtx/arr/c', 'sem/arr/three', 'mtx/arr/a', 'mtx/arr/b'])
       = (SELECT array_agg(tok ORDER BY pos) FROM req) AS same_tokens;
SELECT sync_try_acquire(ARRAY['mtx/arr/b', 'mtx/arr/a'])
       = (SELECT array_agg(tok ORDER BY pos DESC) FROM req WHERE name IN ('mtx/arr/a', 'mtx/arr/b'))
       AS same_tokens_reordered;
SELECT count(*) AS holds FROM sync_holders WHERE pid = pg_backend_pid();

-- an array that includes held locks: those keep their tokens, the others
-- are granted new, larger ones
SELECT sync_acquire(ARRAY['mtx/arr/new1', 'mtx/arr/a', 'mtx/arr/new2']) AS mixed \gset
SELECT (:'mixed'::bigint[])[2] = (SELECT tok FROM req WHERE name = 'mtx/arr/a') AS held_token_kept,
       (:'mixed'::bigint[])[1] > (SELECT max(tok) FROM req) AS new_token_larger,
       (:'mixed'::bigint[])[3] > (:'mixed'::bigint[])[1] AS in_order;
SELECT count(*) AS holds FROM sync_holders WHERE pid = pg_backend_pid();
SELECT sync_release_all() AS released;

--
-- All or nothing.
--
-- try: one lock cannot be granted (sizelimit 0): NULL, and none of the
-- others is held, whatever its position
SELECT sync_try_acquire(ARRAY['mtx/arr/a', 'sem/arr/zero', 'mtx/arr/b']) IS NULL AS not_granted;
SELECT sync_try_acquire(ARRAY['sem/arr/zero', 'mtx/arr/a']) IS NULL AS not_granted;
SELECT sync_try_acquire(ARRAY['mtx/arr/a', 'sem/arr/three', 'sem/arr/zero']) IS NULL AS not_granted;
SELECT sync_try_acquire_xact(ARRAY['mtx/arr/a', 'sem/arr/zero']) IS NULL AS not_granted;
SELECT * FROM pg_temp.mine;
SELECT count(*) AS locks FROM sync_locks;
-- acquire with a timeout: 55P03 naming the first lock and how many more,
-- and nothing held or queued afterwards
CALL regress_util.expect_error($$SELECT sync_acquire(ARRAY['mtx/arr/a', 'sem/arr/zero', 'mtx/arr/b'], 0, '0')$$);
CALL regress_util.expect_error($$SELECT sync_acquire(ARRAY['sem/arr/zero', 'mtx/arr/a'], 0, '5 ms')$$);
CALL regress_util.expect_error($$SELECT sync_acquire_xact(ARRAY['mtx/arr/a', 'sem/arr/zero'], 0, '0')$$);
SELECT * FROM pg_temp.mine;
SELECT count(*) AS locks FROM sync_locks;
SELECT count(*) AS waiters FROM sync_waiters;
-- statement_timeout while waiting for several locks
SET statement_timeout = '250ms';
CALL regress_util.expect_error($$SELECT sync_acquire(ARRAY['mtx/arr/a', 'sem/arr/zero'])$$);
RESET statement_timeout;
SELECT count(*) AS locks FROM sync_locks;
-- an invalid name or a semaphore without a limit row anywhere in the array:
-- an error, and nothing held
CALL regress_util.expect_error($$SELECT sync_acquire(ARRAY['mtx/arr/a', 'mtx/arr/b', 'oops'])$$);
CALL regress_util.expect_error($$SELECT sync_acquire(ARRAY['mtx/arr/a', 'sem/arr/no-row', 'mtx/arr/b'])$$);
CALL regress_util.expect_error($$SELECT sync_try_acquire(ARRAY['mtx/arr/a', 'sem/arr/no-row'])$$);
SELECT * FROM pg_temp.mine;
SELECT count(*) AS locks FROM sync_locks;
-- the failed requests left nothing half-made: the same names are granted
-- normally now
SELECT cardinality(sync_try_acquire(ARRAY['mtx/arr/a', 'mtx/arr/b', 'sem/arr/three'])) AS tokens;
SELECT * FROM pg_temp.mine;
SELECT sync_release_all() AS released;

-- a failed request leaves the locks the session already held as they were
SELECT sync_acquire('mtx/arr/held') AS held \gset
SELECT sync_try_acquire(ARRAY['mtx/arr/held', 'sem/arr/zero']) IS NULL AS not_granted;
CALL regress_util.expect_error($$SELECT sync_acquire(ARRAY['mtx/arr/held', 'sem/arr/zero'], 0, '0')$$);
SELECT lock_name, scope, token = :held AS same_token FROM sync_holders
 WHERE pid = pg_backend_pid();
SELECT sync_release_all() AS released;
-- ... including their scope: a failed session-scope request does not turn a
-- transaction-scope hold into a session-scope one
BEGIN;
SELECT sync_acquire_xact('mtx/arr/xheld') > 0 AS granted;
SELECT sync_try_acquire(ARRAY['mtx/arr/xheld', 'sem/arr/zero']) IS NULL AS not_granted;
CALL regress_util.expect_error($$SELECT sync_acquire(ARRAY['mtx/arr/xheld', 'sem/arr/zero'], 0, '0')$$);
CALL regress_util.expect_error($$SELECT sync_acquire(ARRAY['mtx/arr/xheld', 'sem/arr/no-row'])$$);
SELECT * FROM pg_temp.mine;
COMMIT;
SELECT * FROM pg_temp.mine;
SELECT sync_release_all() AS released;

--
-- Scopes of array requests.
--
-- transaction scope: every lock of the request ends with the transaction
BEGIN;
SELECT cardinality(sync_acquire_xact(ARRAY['mtx/arr/x1', 'mtx/arr/x2', 'sem/arr/three'])) AS tokens;
SELECT cardinality(sync_try_acquire_xact(ARRAY['mtx/arr/x3', 'mtx/arr/x4'])) AS tokens;
SELECT * FROM pg_temp.mine;
COMMIT;
SELECT * FROM pg_temp.mine;
-- a session-scope array request promotes the transaction-scope holds it
-- names, and takes the rest in session scope
BEGIN;
SELECT sync_acquire_xact('mtx/arr/x1') AS x1 \gset
SELECT sync_acquire_xact('mtx/arr/x2') > 0 AS granted;
SELECT (sync_acquire(ARRAY['mtx/arr/x1', 'mtx/arr/x3']))[1] = :x1 AS same_token;
SELECT * FROM pg_temp.mine;
COMMIT;
SELECT * FROM pg_temp.mine;
SELECT sync_release_all() AS released;
-- a transaction-scope array request leaves session-scope holds alone
SELECT sync_acquire('mtx/arr/s1') > 0 AS granted;
BEGIN;
SELECT cardinality(sync_acquire_xact(ARRAY['mtx/arr/s1', 'mtx/arr/s2'])) AS tokens;
SELECT * FROM pg_temp.mine;
ROLLBACK;
SELECT * FROM pg_temp.mine;
SELECT sync_release_all() AS released;
-- an array whose locks are all held already is granted without a new token
SELECT sync_acquire(ARRAY['mtx/arr/h1', 'mtx/arr/h2']) AS hh \gset
SELECT sync_try_acquire(ARRAY['mtx/arr/h2', 'mtx/arr/h1']) = ARRAY[(:'hh'::bigint[])[2], (:'hh'::bigint[])[1]] AS same_tokens;
SELECT sync_release_all() AS released;

-- the priority of a request is recorded on each of its holds
SELECT cardinality(sync_acquire(ARRAY['mtx/arr/p1', 'mtx/arr/p2'], priority => 42)) AS tokens;
SELECT lock_name, priority FROM sync_holders WHERE pid = pg_backend_pid() ORDER BY lock_name;
SELECT sync_release_all() AS released;

DELETE FROM sync_limit WHERE name IN ('arr/zero', 'arr/three');
SELECT count(*) AS locks FROM sync_locks;
