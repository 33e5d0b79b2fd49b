-- Workload 5, syncwf contender: a keyed hold of a random semaphore among
-- 1000 ('sem/bench/k1'..'sem/bench/k1000', sync_limit rows of limit 2) for a
-- random holder key of this client, then its release.  Two statements, each
-- its own transaction and commit (sync_request writes the sync_state row,
-- sync_release deletes it).
\set n random(1, 1000)
\set h random(1, 1000000000)
SELECT status FROM sync_request('sem/bench/k' || :n, 'bench/c' || :client_id || '/' || :h);
SELECT sync_release('sem/bench/k' || :n, 'bench/c' || :client_id || '/' || :h);
