-- Comparison 12, the small request of the mixed workload: 1 of the 8 slots
-- of sem/benchq/pool for 10 ms.
SELECT sync_acquire('sem/benchq/pool');
SELECT pg_sleep(0.01);
SELECT sync_release('sem/benchq/pool');
