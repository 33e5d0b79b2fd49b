-- Comparison 12, the big request of the mixed workload: 5 of the 8 slots
-- of sem/benchq/pool for 10 ms.
SELECT sync_acquire('sem/benchq/pool', slots => 5);
SELECT pg_sleep(0.01);
SELECT sync_release('sem/benchq/pool');
