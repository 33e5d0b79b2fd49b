-- Comparison 10, calibration contender: the plain acquire of
-- bench/syncwf_random.sql plus a fixed amount of extra work in the same
-- statement (an md5 over ~1.5 kB that depends on n, so that it is not folded
-- into the prepared plan).  It shows how large a cost difference the mixed
-- run reports: a method that saw no difference here could not be trusted to
-- find none between the real contenders.
\set n random(1, 100000)
SELECT sync_acquire('sem/bench/' || :n), length(md5(repeat(:n::text, 300)));
SELECT sync_release('sem/bench/' || :n);
