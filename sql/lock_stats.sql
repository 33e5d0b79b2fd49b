--
-- lock_stats: the view sync_lock_stats and sync_stats_reset().  A lock
-- gets its row at its first count and keeps it after it leaves the lock
-- table; grants are counted as immediate or waited, waits by how they
-- ended (granted, timed out, cancelled; a deadlock's victim in the
-- isolation spec deadlock), holds when they are released.
-- Keyed requests of several holders make the queues here, in one session.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
CREATE VIEW pg_temp.st AS
    SELECT lock_name, grants_immediate AS imm, grants_waited AS waited,
           timeouts, cancels, deadlocks, wait_count AS waits, hold_count AS holds,
           max_queue
      FROM sync_lock_stats WHERE lock_name LIKE '%/st/%' ORDER BY lock_name;

-- Start from empty rows: the tests before this one may have filled the
-- syncwf.stats_max_locks rows locks get of their own (a reset removes the
-- rows of locks that have left the lock table).
SELECT sync_stats_reset() IS NOT NULL AS reset;
SELECT count(*) < current_setting('syncwf.stats_max_locks')::int AS room
  FROM sync_lock_stats;
-- nothing counted yet
SELECT * FROM pg_temp.st;

-- immediate grants: session, transaction and try; a refused try counts nothing
SELECT sync_acquire('mtx/st/a') > 0 AS granted;
SELECT sync_release('mtx/st/a');
BEGIN;
SELECT sync_acquire_xact('mtx/st/a') > 0 AS granted;
COMMIT;
SELECT sync_try_acquire('mtx/st/a') > 0 AS granted;
SELECT sync_release('mtx/st/a');
SELECT status FROM sync_request('mtx/st/a', 'st/other');
SELECT * FROM pg_temp.st;
SELECT sync_try_acquire('mtx/st/a') IS NULL AS refused;
SELECT sync_release('mtx/st/a', 'st/other');
-- three session holds and one keyed hold released; no wait, so no wait times
SELECT * FROM pg_temp.st;
SELECT wait_total, wait_p50, wait_p99, wait_max, hold_total > '0' AS held_a_while
  FROM sync_lock_stats WHERE lock_name = 'mtx/st/a';

-- a waited grant: a keyed request queues behind another and is granted
-- when it is released; the queue was one long
SELECT status FROM sync_request('mtx/st/k', 'st/h1');
SELECT status, queue_position FROM sync_request('mtx/st/k', 'st/h2');
SELECT pg_sleep(0.02);
SELECT sync_release('mtx/st/k', 'st/h1');
SELECT lock_name, holder FROM sync_holders WHERE lock_name = 'mtx/st/k';
SELECT * FROM pg_temp.st WHERE lock_name = 'mtx/st/k';
-- (a percentile is the middle of its histogram bucket, at most 12.5% off,
-- and never above the longest wait)
SELECT wait_max >= '20 ms' AS waited_20ms, wait_p50 = wait_p99 AS one_wait,
       wait_p50 BETWEEN wait_max * 0.8 AND wait_max AS p50_within_bucket,
       wait_total = wait_max AS total_is_the_one_wait
  FROM sync_lock_stats WHERE lock_name = 'mtx/st/k';

-- a timeout: the wait ends without a grant after 30 ms
CALL regress_util.expect_error($$SELECT sync_acquire('mtx/st/k', timeout => '30 ms')$$);
-- a cancel: statement_timeout ends the wait
SET statement_timeout = '40ms';
CALL regress_util.expect_error($$SELECT sync_acquire('mtx/st/k')$$);
RESET statement_timeout;
-- a keyed request withdrawn while it waits is a cancel too
SELECT status FROM sync_request('mtx/st/k', 'st/h3');
SELECT sync_release('mtx/st/k', 'st/h3');
SELECT * FROM pg_temp.st WHERE lock_name = 'mtx/st/k';
-- (statement_timeout counts from the statement's start, so the cancelled
-- wait itself may be a little under 40 ms: the bounds leave 10 ms for it)
SELECT wait_max >= '30 ms' AS longest_at_least_the_timeout,
       wait_total >= '80 ms' AS all_waits_summed,
       wait_p99 >= wait_p50 AS ordered
  FROM sync_lock_stats WHERE lock_name = 'mtx/st/k';

-- a semaphore: the longest queue, and grants by slots
INSERT INTO sync_limit (name, sizelimit) VALUES ('st/pool', 2);
SELECT status FROM sync_request('sem/st/pool', 'st/p1', slots => 2);
SELECT status FROM sync_request('sem/st/pool', 'st/p2');
SELECT status FROM sync_request('sem/st/pool', 'st/p3');
SELECT status FROM sync_request('sem/st/pool', 'st/p4');
SELECT sync_release('sem/st/pool', 'st/p1');
SELECT sync_release_holder(h) FROM unnest(ARRAY['st/p2', 'st/p3', 'st/p4']) AS h;
SELECT * FROM pg_temp.st WHERE lock_name = 'sem/st/pool';

-- counting off: nothing changes
SET syncwf.track_stats = off;
SELECT sync_acquire('mtx/st/a') > 0 AS granted;
SELECT sync_release('mtx/st/a');
SELECT imm FROM pg_temp.st WHERE lock_name = 'mtx/st/a';
RESET syncwf.track_stats;

-- reset one row: a lock that nobody holds or waits for loses its row
-- (mtx/st/a, sem/st/pool), one in use keeps a zeroed row with a new reset
-- time
SELECT sync_stats_reset('mtx/st/a') <= now() + '1 s' AS reset;
SELECT * FROM pg_temp.st;
SELECT sync_acquire('sem/st/pool') > 0 AS granted;
SELECT sync_stats_reset('sem/st/pool') IS NOT NULL AS reset;
SELECT * FROM pg_temp.st WHERE lock_name = 'sem/st/pool';
SELECT stats_reset > now() - interval '1 min' AS reset_time_is_new
  FROM sync_lock_stats WHERE lock_name = 'sem/st/pool';
SELECT sync_release('sem/st/pool');
-- ... and once nobody uses it, a reset removes it
SELECT sync_stats_reset('sem/st/pool') IS NOT NULL AS reset;
SELECT count(*) FROM pg_temp.st WHERE lock_name = 'sem/st/pool';
-- a name that has no row: nothing to do
SELECT sync_stats_reset('mtx/st/never') IS NOT NULL AS reset;
-- bad names
CALL regress_util.expect_error($$SELECT sync_stats_reset('st/a')$$);
CALL regress_util.expect_error($$SELECT sync_stats_reset('')$$);
-- reset everything of this database
SELECT sync_stats_reset() IS NOT NULL AS reset;
SELECT count(*) AS rows_with_counts FROM sync_lock_stats
 WHERE grants_immediate + grants_waited + wait_count + hold_count > 0;
SELECT syncwf.stats_max_locks FROM (SELECT current_setting('syncwf.stats_max_locks') AS stats_max_locks) AS syncwf;
CALL regress_util.expect_error($$SET syncwf.stats_max_locks = 5$$);

-- clean up
SELECT sync_release_holder('st/h2');
DELETE FROM sync_limit WHERE name = 'st/pool';
