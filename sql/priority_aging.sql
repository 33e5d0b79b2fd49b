--
-- priority_aging: the columns sync_limit.aging_interval and
-- aging_max_priority (1.8), their checks, and the effective priority a
-- waiter gets from them.  A keyed request's queue time (queued_at) counts
-- as the start of its wait, so a request queued in the past has aged at
-- once: the rise over time, with waiting backends, is the isolation spec
-- priority-aging's.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
-- Helpers regress_util.expect_error (reports a statement's error as a
-- NOTICE with SQLSTATE, DETAIL and HINT), created by 00_setup.

-- the columns and their constraints
SELECT attname, format_type(atttypid, atttypmod) AS type, attnotnull,
       col_description(attrelid, attnum) AS comment
  FROM pg_attribute
 WHERE attrelid = 'sync_limit'::regclass AND attname LIKE 'aging%'
 ORDER BY attnum;
SELECT conname, pg_get_constraintdef(oid) AS definition
  FROM pg_constraint
 WHERE conrelid = 'sync_limit'::regclass AND conname LIKE 'sync_limit_aging%'
 ORDER BY conname;
-- sync_waiters shows the priority asked for and the effective one
SELECT attname FROM pg_attribute
 WHERE attrelid = 'sync_waiters'::regclass AND attname LIKE '%priority'
 ORDER BY attnum;

--
-- Refusals (check_violation, 23514): an interval below 1 second, and one
-- of the two columns without the other.
--
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, aging_interval, aging_max_priority) VALUES ('age/a', 1, '500 ms', 3)$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, aging_interval, aging_max_priority) VALUES ('age/a', 1, '-1 s', 3)$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, aging_interval) VALUES ('age/a', 1, '1 s')$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, aging_max_priority) VALUES ('age/a', 1, 3)$$);
SELECT count(*) AS refused_rows_stored FROM sync_limit WHERE name LIKE 'age/%';

--
-- Accepted: one slot, a waiter rises by one every 10 seconds up to 3; a
-- pattern row ages its semaphores too.
--
INSERT INTO sync_limit (name, sizelimit, aging_interval, aging_max_priority)
     VALUES ('age/a', 1, '10 s', 3), ('age/*', 1, '1 hour', 1);
SELECT name, sizelimit, aging_interval, aging_max_priority
  FROM sync_limit WHERE name LIKE 'age/%' ORDER BY name COLLATE "C";

-- The slot taken; then, all keyed: 'now' (priority 2), 'old' (priority 0,
-- queued 25 s ago: two intervals, effective 2, and it came first),
-- 'older' (priority 0, queued a minute ago: at the ceiling 3), 'high'
-- (priority 7, above the ceiling: keeps 7).
SELECT status FROM sync_request('sem/age/a', 'holder');
SELECT status FROM sync_request('sem/age/a', 'now', priority => 2);
SELECT status FROM sync_request('sem/age/a', 'old', priority => 0, queued_at => now() - interval '25 s');
SELECT status FROM sync_request('sem/age/a', 'older', priority => 0, queued_at => now() - interval '1 minute');
SELECT status FROM sync_request('sem/age/a', 'high', priority => 7);
SELECT holder, priority, effective_priority, position
  FROM sync_waiters WHERE lock_name = 'sem/age/a' ORDER BY position;
-- asked again with its own priority, a request keeps its place (nothing is
-- re-sorted); a new priority re-sorts it, aged by its wait so far
SELECT status, queue_position FROM sync_request('sem/age/a', 'old', priority => 0);
SELECT status, queue_position FROM sync_request('sem/age/a', 'now', priority => 1);
SELECT holder, priority, effective_priority, position
  FROM sync_waiters WHERE lock_name = 'sem/age/a' ORDER BY position;
-- the slot goes by effective priority
SELECT sync_release('sem/age/a', 'holder');
SELECT holder FROM sync_holders WHERE lock_name = 'sem/age/a';
SELECT sync_release('sem/age/a', 'high');
SELECT holder FROM sync_holders WHERE lock_name = 'sem/age/a';

-- a pattern row's aging: queued two hours ago, priority 0 rises to 1 only
SELECT status FROM sync_request('sem/age/p', 'p-holder');
SELECT status FROM sync_request('sem/age/p', 'p-old', queued_at => now() - interval '2 hours');
SELECT holder, priority, effective_priority
  FROM sync_waiters WHERE lock_name = 'sem/age/p';

-- an interval beyond what microseconds can count (over 292,000 years): a
-- waiter never rises, however long ago it was queued
INSERT INTO sync_limit (name, sizelimit, aging_interval, aging_max_priority)
     VALUES ('age/huge', 1, '300000 years', 5);
SELECT status FROM sync_request('sem/age/huge', 'h-holder');
SELECT status FROM sync_request('sem/age/huge', 'h-old', queued_at => now() - interval '1 hour');
SELECT holder, priority, effective_priority
  FROM sync_waiters WHERE lock_name = 'sem/age/huge';

-- aging switched off: the waiters keep the priority they rose to
UPDATE sync_limit SET aging_interval = NULL, aging_max_priority = NULL WHERE name = 'age/a';
SELECT holder, priority, effective_priority, position
  FROM sync_waiters WHERE lock_name = 'sem/age/a' ORDER BY position;

-- clean up
DELETE FROM sync_state WHERE name LIKE 'sem/age/%';
DELETE FROM sync_limit WHERE name LIKE 'age/%';
