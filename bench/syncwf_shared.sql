-- Comparison 10, shared contender: a shared hold of a random mutex among
-- 100000, and its release.
\set n random(1, 100000)
SELECT sync_acquire('mtx/bench/' || :n, mode => 'shared');
SELECT sync_release('mtx/bench/' || :n);
