--
-- views: sync_locks, sync_holders, sync_waiters (and the functions behind
-- them).  Pids, tokens and timestamps are compared, not printed.  Waiters
-- need a second, blocked session: see the isolation specs.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
-- Helpers regress_util.expect_error (reports a statement's error as a
-- NOTICE with SQLSTATE, DETAIL and HINT) and regress_util.error_of
-- (returns "SQLSTATE: message"), created by 00_setup.

-- the columns
\d sync_locks
\d sync_holders
\d sync_waiters
-- the view definitions (15 qualifies each column with the function's
-- alias, 16 and later do not: the qualifier is taken out)
SELECT regexp_replace(pg_get_viewdef(v), '\m(sync_lock_status|sync_entry_status)\.', '', 'g') AS definition
  FROM unnest(ARRAY['sync_locks', 'sync_holders', 'sync_waiters']::regclass[]) WITH ORDINALITY AS u(v, n)
 ORDER BY n \gx

-- empty when nothing is held
SELECT * FROM sync_locks;
SELECT * FROM sync_holders;
SELECT * FROM sync_waiters;

INSERT INTO sync_limit VALUES ('view/three', 3), ('view/zero', 0);
SELECT clock_timestamp() AS t0 \gset
SELECT sync_acquire('mtx/view/session', priority => 3) AS tok_session \gset
SELECT sync_acquire(ARRAY['mtx/view/arr1', 'sem/view/three'], priority => -7) AS tok_arr \gset
BEGIN;
SELECT sync_acquire_xact('mtx/view/xact') AS tok_xact \gset

-- one row per live lock: kind, limit (1 for a mutex), holders, waiters
SELECT * FROM sync_locks ORDER BY lock_name;
-- one row per hold
SELECT lock_name, pid = pg_backend_pid() AS my_pid, scope, priority,
       since BETWEEN :'t0' AND clock_timestamp() AS since_ok
  FROM sync_holders ORDER BY lock_name;
-- the tokens are the ones the calls returned
SELECT bool_and(h.token = t.token) AS tokens_match, count(*) AS holds
  FROM sync_holders h
  JOIN (VALUES ('mtx/view/session', :tok_session::bigint),
               ('mtx/view/arr1', (:'tok_arr'::bigint[])[1]),
               ('sem/view/three', (:'tok_arr'::bigint[])[2]),
               ('mtx/view/xact', :tok_xact::bigint)) AS t(lock_name, token)
    USING (lock_name);
-- the grant time of a hold is when it was granted: earlier grants, earlier
-- (or equal) times
SELECT (SELECT since FROM sync_holders WHERE lock_name = 'mtx/view/session')
       <= (SELECT since FROM sync_holders WHERE lock_name = 'mtx/view/xact') AS ordered;
-- both locks of one request were granted at the same moment
SELECT count(DISTINCT since) AS distinct_times FROM sync_holders
 WHERE lock_name IN ('mtx/view/arr1', 'sem/view/three');
-- the function behind the views: a hold has no queue position; request_size
-- is the number of locks the request asked for
SELECT lock_name, state, scope, priority, queue_position, request_size
  FROM sync_entry_status() ORDER BY lock_name;
SELECT * FROM sync_lock_status() ORDER BY lock_name;
-- no waiters
SELECT * FROM sync_waiters;
-- re-acquiring changes nothing in the views
SELECT sync_acquire('mtx/view/session', priority => 100) = :tok_session AS same_token;
SELECT lock_name, scope, priority FROM sync_holders
 WHERE lock_name = 'mtx/view/session';
-- promotion shows in the scope column
SELECT sync_acquire('mtx/view/xact') = :tok_xact AS same_token;
SELECT lock_name, scope FROM sync_holders WHERE lock_name = 'mtx/view/xact';
COMMIT;
SELECT lock_name, scope FROM sync_holders ORDER BY lock_name;

-- a semaphore: one row per lock whatever the number of holders (one per
-- session); its sizelimit follows sync_limit
UPDATE sync_limit SET sizelimit = 10 WHERE name = 'view/three';
SELECT * FROM sync_locks WHERE kind = 'semaphore';
-- a semaphore whose row was deleted while held: sizelimit NULL
DELETE FROM sync_limit WHERE name = 'view/three';
SELECT * FROM sync_locks WHERE kind = 'semaphore';

-- released locks disappear from the views (also semaphores, which the
-- engine may keep in the lock table, idle, to remember their limit)
INSERT INTO sync_limit VALUES ('view/three', 3);
SELECT sync_release_all() AS released;
SELECT sync_try_acquire('sem/view/three') > 0 AS granted;
SELECT sync_release('sem/view/three') AS released;
SELECT * FROM sync_locks;
SELECT * FROM sync_holders;
-- a semaphore that is never granted does not show either
SELECT sync_try_acquire('sem/view/zero') IS NULL AS not_granted;
SELECT * FROM sync_locks;

-- every role may read the views
SELECT has_table_privilege('public', 'sync_locks', 'SELECT') AS locks,
       has_table_privilege('public', 'sync_holders', 'SELECT') AS holders,
       has_table_privilege('public', 'sync_waiters', 'SELECT') AS waiters;

DELETE FROM sync_limit WHERE name IN ('view/three', 'view/zero');
