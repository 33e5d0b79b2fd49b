-- Comparison 18, preemption: one urgent client, its only transaction
-- (bench_preempt_urgent() in bench/preempt_setup.sql).
SELECT bench_preempt_urgent(:run, :client_id, :secs, :hold, :think);
