-- Workload 6: a keyed request + release on semaphore 'sem/bench/deep'
-- (limit 8, one slot per client), priority 0, with a new holder key each
-- time.  Whether or not 100,000 lower-priority requests are queued on the
-- same semaphore (scripts/bench.sh, comparison 6), the request is at the
-- front of the queue and must be granted at once: a 'pending' status is a
-- division by zero, which aborts the run; so is a release that finds
-- nothing to release.
\set h random(1, 1000000000)
SELECT 1 / (status = 'held')::integer FROM sync_request('sem/bench/deep', 'bench/deep/c' || :client_id || '/' || :h);
SELECT 1 / sync_release('sem/bench/deep', 'bench/deep/c' || :client_id || '/' || :h)::integer;
