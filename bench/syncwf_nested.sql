-- Comparison 10, nested contender: acquire and release a random semaphore
-- among 100000 whose limit (1) comes from the pattern row 'benchn/*', which
-- names the parent row 'benchnp/all' (sizelimit 1000000): every grant also
-- counts against the parent, which never refuses.
\set n random(1, 100000)
SELECT sync_acquire('sem/benchn/' || :n);
SELECT sync_release('sem/benchn/' || :n);
