-- Comparison 10, pattern contender: acquire and release a random semaphore
-- among 100000 whose limit (1) comes from the pattern row 'benchp/*', not
-- from a row of its own.
\set n random(1, 100000)
SELECT sync_acquire('sem/benchp/' || :n);
SELECT sync_release('sem/benchp/' || :n);
