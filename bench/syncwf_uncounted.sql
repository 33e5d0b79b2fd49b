-- Comparison 13, uncounted contender: workload 1 with syncwf.track_stats
-- off for this transaction's acquire and release (see syncwf_counted.sql).
\set n random(1, 100000)
SELECT set_config('syncwf.track_stats', 'off', false), sync_acquire('sem/bench/' || :n);
SELECT sync_release('sem/bench/' || :n);
