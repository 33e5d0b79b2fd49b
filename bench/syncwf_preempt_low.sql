-- Comparison 18, preemption: one hold of a low client (bench/preempt_setup.sql):
-- request (preemptible), wait for the grant, keep it until it is preempted.
SELECT 'low-' || :client_id AS holder \gset
SELECT status FROM sync_request('sem/b18p/x', :'holder', priority => 0, preemptible => true) \gset
SELECT sync_wait('sem/b18p/x', :'holder') AS token \gset
SELECT bench_preempt_hold('sem/b18p/x', :'holder', :token, :secs);
