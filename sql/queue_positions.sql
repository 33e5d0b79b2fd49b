--
-- queue_positions: the position a request reports (sync_request's
-- queue_position, from the queue's order-statistic tree) is its place in
-- the queue (sync_waiters, in queue order), whatever the order requests
-- arrive in, their priorities, fair keys and queue times, and after
-- withdrawals from the middle, grants at the front and changes of
-- priority.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
SELECT status FROM sync_request('mtx/qp/a', 'qp/holder');
-- where a repeated request says each waiter is, against the view
CREATE FUNCTION pg_temp.mismatches() RETURNS TABLE (waiters bigint, wrong bigint)
LANGUAGE sql AS $$
    SELECT count(*), count(*) FILTER (WHERE r.queue_position IS DISTINCT FROM w.position)
      FROM sync_waiters w,
           LATERAL sync_request('mtx/qp/a', w.holder, priority => w.priority,
                                fair_key => w.fair_key) r
     WHERE w.lock_name = 'mtx/qp/a' $$;
-- is the queue in priority order, its positions 1..n?
CREATE FUNCTION pg_temp.in_order() RETURNS boolean LANGUAGE sql AS $$
    SELECT coalesce(bool_and(position = n AND priority <= prev), true)
      FROM (SELECT position, priority,
                   row_number() OVER (ORDER BY position) AS n,
                   lag(priority, 1, 2147483647) OVER (ORDER BY position) AS prev
              FROM sync_waiters WHERE lock_name = 'mtx/qp/a') q $$;

-- 400 requests: five priorities in a scrambled order, three fair keys and
-- none, some with a queue time older than those queued before them (they
-- go before their key's later entries, which are tagged again)
CREATE TEMP TABLE asked AS
SELECT g, r.status, r.queue_position
  FROM generate_series(1, 400) g,
       LATERAL sync_request('mtx/qp/a', 'qp/w' || g,
                            priority => (g * 7) % 5,
                            queued_at => CASE WHEN g % 11 = 0
                                              THEN now() - interval '1 hour' END,
                            fair_key => CASE WHEN g % 3 = 0 THEN 'k' || (g % 4) END) r;
SELECT count(*) FILTER (WHERE status = 'pending') AS pending,
       min(queue_position), max(queue_position) FROM asked;
-- the first of the highest priority went to the front
SELECT queue_position FROM asked WHERE g = 2;
SELECT * FROM pg_temp.mismatches();
SELECT pg_temp.in_order();

-- withdrawals from the middle (a keyed release takes effect at commit)
SELECT count(*) FROM asked, LATERAL sync_release('mtx/qp/a', 'qp/w' || g) r
 WHERE g % 7 = 0 AND r;
SELECT * FROM pg_temp.mismatches();
SELECT pg_temp.in_order();

-- grants at the front: the holder goes, the front waiter holds, and so on
SELECT sync_release('mtx/qp/a', 'qp/holder');
SELECT sync_release('mtx/qp/a', holder) FROM sync_holders WHERE lock_name = 'mtx/qp/a';
SELECT sync_release('mtx/qp/a', holder) FROM sync_holders WHERE lock_name = 'mtx/qp/a';
SELECT count(*) AS holders FROM sync_holders WHERE lock_name = 'mtx/qp/a';
SELECT * FROM pg_temp.mismatches();

-- new priorities re-sort waiters at commit: some to the front, some back
SELECT count(*) FROM asked, LATERAL sync_request('mtx/qp/a', 'qp/w' || g,
                                                 priority => CASE WHEN g % 2 = 0 THEN 9 ELSE -1 END,
                                                 fair_key => CASE WHEN g % 3 = 0 THEN 'k' || (g % 4) END) r
 WHERE g % 13 = 0 AND g % 7 <> 0 AND r.status = 'pending';
SELECT * FROM pg_temp.mismatches();
SELECT pg_temp.in_order();
SELECT min(w.position), max(w.position)
  FROM sync_waiters w WHERE w.lock_name = 'mtx/qp/a' AND w.priority = 9;

-- a short queue, where an assert-enabled build also checks the whole tree
-- after every change
SELECT count(*) FROM sync_state WHERE workflowkey LIKE 'qp/%';
DELETE FROM sync_state WHERE workflowkey LIKE 'qp/%';
SELECT status FROM sync_request('mtx/qp/a', 'qp/holder');
SELECT string_agg(r.queue_position::text, ' ' ORDER BY g)
  FROM generate_series(1, 12) g,
       LATERAL sync_request('mtx/qp/a', 'qp/s' || g, priority => g % 3) r;
SELECT string_agg(holder, ' ' ORDER BY position)
  FROM sync_waiters WHERE lock_name = 'mtx/qp/a';
SELECT sync_release('mtx/qp/a', 'qp/s5');
SELECT * FROM pg_temp.mismatches();
DELETE FROM sync_state WHERE workflowkey LIKE 'qp/%';
SELECT count(*) FROM sync_waiters WHERE lock_name = 'mtx/qp/a';
