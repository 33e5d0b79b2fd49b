-- Workload 1 (and 4), syncwf contender: acquire and release a random
-- semaphore of limit 1 among 100000 (sync_limit rows 'bench/1'..'bench/100000').
\set n random(1, 100000)
SELECT sync_acquire('sem/bench/' || :n);
SELECT sync_release('sem/bench/' || :n);
