-- Comparison 10, weighted contender: acquire 3 of the 4 slots of a random
-- semaphore among 100000 (sync_limit rows 'benchw/1'..'benchw/100000',
-- sizelimit 4) and release them.
\set n random(1, 100000)
SELECT sync_acquire('sem/benchw/' || :n, slots => 3);
SELECT sync_release('sem/benchw/' || :n);
