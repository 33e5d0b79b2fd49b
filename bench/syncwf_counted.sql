-- Comparison 13, counted contender: workload 1 (acquire and release a random
-- semaphore of limit 1 among 100000) with per-lock statistics counted.  The
-- set_config() rides in the acquire's statement, as in the uncounted
-- contender, so that both pay for it alike.
\set n random(1, 100000)
SELECT set_config('syncwf.track_stats', 'on', false), sync_acquire('sem/bench/' || :n);
SELECT sync_release('sem/bench/' || :n);
