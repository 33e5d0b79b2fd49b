-- Workload 1, reference contender: session-level advisory lock on a random key.
\set n random(1, 100000)
SELECT pg_advisory_lock(:n);
SELECT pg_advisory_unlock(:n);
