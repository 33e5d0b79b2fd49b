-- Comparison 18: one client of the guaranteed-shares workload, its only
-- transaction (bench_guarantee_client() in bench/guarantee_setup.sql).
SELECT bench_guarantee_client(:run, :client_id, :secs, :hold, :think, :phase);
