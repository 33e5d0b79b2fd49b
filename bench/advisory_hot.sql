-- Workload 2, reference contender: every client takes turns on one advisory lock.
SELECT pg_advisory_lock(42);
SELECT pg_advisory_unlock(42);
