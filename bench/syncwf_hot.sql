-- Workload 2, syncwf contender: every client takes turns on one mutex.
SELECT sync_acquire('mtx/bench/hot');
SELECT sync_release('mtx/bench/hot');
