-- Comparison 18, preemption: one hold of a low client (bench/preempt_setup.sql):
-- request (preemptible), wait for the grant, keep it until it is preempted.
SELECT status FROM sync_request('sem/b18p/x', 'low-' || :client_id, priority => 0, preemptible => true) \gset
SELECT sync_wait('sem/b18p/x', 'low-' || :client_id) AS token \gset
SELECT bench_preempt_hold('sem/b18p/x', 'low-' || :client_id, :token, :secs);
