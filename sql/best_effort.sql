--
-- best_effort: sync_limit's queueing column.  'strict' (or NULL) grants in
-- queue order: a front request that does not fit stops everyone behind it.
-- 'best_effort' lets a request that fits the free slots now pass a waiter
-- that cannot be granted yet -- a weighted request, or a request of several
-- locks that another of its locks holds back -- but each waiter is passed
-- at most syncwf.max_passes times (default 10); then strict order resumes
-- for it.  Keyed requests of several holders make the queues here, in one
-- session.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
CREATE VIEW pg_temp.entries AS
    SELECT lock_name, 'held' AS state, holder AS who, slots, NULL::int AS position,
           NULL::int AS passes
      FROM sync_holders WHERE lock_name LIKE '%/be/%'
    UNION ALL
    SELECT lock_name, 'pending', holder, slots, position, passes
      FROM sync_waiters WHERE lock_name LIKE '%/be/%'
     ORDER BY 1, 2, 5, 3;

-- bad values
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, queueing) VALUES ('be/bad', 1, 'fifo')$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, queueing) VALUES ('be/bad', 1, '')$$);
SELECT count(*) AS bad_rows FROM sync_limit WHERE name = 'be/bad';
-- the bound is the server's, changed with a reload
SHOW syncwf.max_passes;
CALL regress_util.expect_error($$SET syncwf.max_passes = 3$$);

INSERT INTO sync_limit (name, sizelimit, queueing) VALUES
    ('be/strict', 4, 'strict'), ('be/null', 4, NULL), ('be/pool', 4, 'best_effort');

--
-- Strict (and NULL): a small request waits behind a big one that does not fit.
--
SELECT status FROM sync_request('sem/be/strict', 'be/a', slots => 2);
SELECT status FROM sync_request('sem/be/strict', 'be/big', slots => 3);
SELECT status, queue_position FROM sync_request('sem/be/strict', 'be/small');
SELECT sync_try_acquire('sem/be/strict') IS NULL AS try_not_granted;
SELECT status FROM sync_request('sem/be/null', 'be/a', slots => 2);
SELECT status FROM sync_request('sem/be/null', 'be/big', slots => 3);
SELECT status, queue_position FROM sync_request('sem/be/null', 'be/small');
SELECT * FROM pg_temp.entries WHERE lock_name IN ('sem/be/strict', 'sem/be/null');

--
-- Best effort: the small one passes the big one, as a keyed request, a try
-- and a session hold.
--
SELECT status FROM sync_request('sem/be/pool', 'be/a', slots => 2);
SELECT status, queue_position FROM sync_request('sem/be/pool', 'be/big', slots => 3);
SELECT status FROM sync_request('sem/be/pool', 'be/p1');
SELECT sync_try_acquire('sem/be/pool') > 0 AS try_granted;
SELECT * FROM pg_temp.entries WHERE lock_name = 'sem/be/pool';
-- the pool is full now: a request that does not fit waits, behind big
SELECT status, queue_position FROM sync_request('sem/be/pool', 'be/p2');
SELECT sync_release('sem/be/pool') AS released_try;
-- the freed slot goes to p2 (it fits; big does not): three passes of big
SELECT * FROM pg_temp.entries WHERE lock_name = 'sem/be/pool';
SELECT sync_release('sem/be/pool', 'be/p1'), sync_release('sem/be/pool', 'be/p2');
-- seven more passes (ten in all): each small request is granted at once
-- (each statement its own transaction: a keyed release frees its slot when
-- its transaction commits)
SELECT format($$SELECT r.status AS p%s FROM sync_request('sem/be/pool', 'be/p%s') r, sync_release('sem/be/pool', 'be/p%s')$$, g, g, g)
  FROM generate_series(3, 9) g
\gexec
-- big has been passed ten times (syncwf.max_passes): strict order resumes
-- for it, and the next small request waits behind it although two slots
-- are free; so does a try
SELECT status, queue_position FROM sync_request('sem/be/pool', 'be/p10');
SELECT sync_try_acquire('sem/be/pool') IS NULL AS try_not_granted;
SELECT * FROM pg_temp.entries WHERE lock_name = 'sem/be/pool';
-- a's two slots come back: big, then p10
SELECT sync_release('sem/be/pool', 'be/a');
SELECT * FROM pg_temp.entries WHERE lock_name = 'sem/be/pool';
SELECT sync_release('sem/be/pool', 'be/big'), sync_release('sem/be/pool', 'be/p10');

--
-- Switching a row live: at commit, the waiters that may pass are granted.
--
SELECT * FROM pg_temp.entries WHERE lock_name = 'sem/be/strict';
UPDATE sync_limit SET queueing = 'best_effort' WHERE name = 'be/strict';
SELECT * FROM pg_temp.entries WHERE lock_name = 'sem/be/strict';
-- and back: strict again for newcomers
UPDATE sync_limit SET queueing = 'strict' WHERE name = 'be/strict';
SELECT status, queue_position FROM sync_request('sem/be/strict', 'be/small2');
SELECT sync_release('sem/be/strict', h) FROM unnest(ARRAY['be/a', 'be/big', 'be/small', 'be/small2']) h;
SELECT * FROM pg_temp.entries WHERE lock_name = 'sem/be/strict';
SELECT sync_release('sem/be/null', h) FROM unnest(ARRAY['be/a', 'be/big', 'be/small']) h;

--
-- A pattern row's queueing applies to every semaphore under it.
--
INSERT INTO sync_limit (name, sizelimit, queueing) VALUES ('be/pat/*', 2, 'best_effort');
SELECT status FROM sync_request('sem/be/pat/k', 'be/a');
SELECT status FROM sync_request('sem/be/pat/k', 'be/big', slots => 2);
SELECT status FROM sync_request('sem/be/pat/k', 'be/small');
SELECT lock_name, limit_row, holders, slots_held, waiters FROM sync_locks WHERE lock_name = 'sem/be/pat/k';
SELECT sync_release('sem/be/pat/k', h) FROM unnest(ARRAY['be/a', 'be/big', 'be/small']) h;

--
-- A request of several locks at the front that another of its locks holds
-- back: on a best-effort semaphore, a request for that semaphore alone
-- passes it; on a strict one it waits.
--
SELECT status FROM sync_request('mtx/be/gate', 'be/gatekeeper');
SELECT status FROM sync_request(ARRAY['sem/be/pool', 'mtx/be/gate'], 'be/both1');
-- (the request returns 'pending', and is granted a moment later, when the
-- pass finds the request ahead held back by the gate)
SELECT status FROM sync_request('sem/be/pool', 'be/alone');
SELECT status FROM sync_request(ARRAY['sem/be/strict', 'mtx/be/gate'], 'be/both2');
SELECT status, queue_position FROM sync_request('sem/be/strict', 'be/alone');
SELECT * FROM pg_temp.entries;
-- the gate opens: the first request of several locks is granted; the
-- second then waits for the gate, and the strict semaphore's waiter still
-- waits behind it
SELECT sync_release('mtx/be/gate', 'be/gatekeeper');
SELECT * FROM pg_temp.entries;
-- then the second, and the waiter behind it
SELECT sync_release_holder('be/both1');
SELECT * FROM pg_temp.entries;
SELECT sync_release_holder('be/both2'), sync_release_holder('be/alone');

-- every grant above reached sync_state, and nothing is left
SELECT sync_reconcile() >= 0 AS reconciled;
SELECT count(*) AS rows_left FROM sync_state WHERE workflowkey LIKE 'be/%';
SELECT * FROM pg_temp.entries;
DELETE FROM sync_limit WHERE name LIKE 'be/%';
