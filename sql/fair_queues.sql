--
-- fair_queues: within one priority, a queue is shared among fair keys in
-- proportion to their weights (sync_fair_weight), and in queue-time order
-- within each key.  Keyed requests of many holders make the queues here,
-- in one session; a procedure passes a semaphore of limit 1 on, one grant
-- per transaction, and records who got it.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
CREATE TEMP TABLE grants (n serial, holder text, fair_key text);
CREATE PROCEDURE pg_temp.pass_on(lock text, n int) LANGUAGE plpgsql AS $$
DECLARE
    h text;
    k text;
BEGIN
    FOR i IN 1 .. n LOOP
        SELECT holder INTO h FROM sync_holders WHERE lock_name = lock;
        EXIT WHEN h IS NULL;
        PERFORM sync_release(lock, h);
        COMMIT;                     -- a keyed release takes effect at commit
        SELECT holder, fair_key INTO h, k FROM sync_holders WHERE lock_name = lock;
        IF h IS NOT NULL THEN
            INSERT INTO grants (holder, fair_key) VALUES (h, k);
        END IF;
        COMMIT;
    END LOOP;
END $$;
CREATE VIEW pg_temp.queue AS
    SELECT lock_name, string_agg(coalesce(fair_key, '-'), '' ORDER BY position) AS keys
      FROM sync_waiters WHERE lock_name LIKE 'sem/fq/%' GROUP BY lock_name
     ORDER BY lock_name;

-- 1,000 requests of key A, then 10 of key B: B's are granted within the
-- first 20 grants, turn about with A's
INSERT INTO sync_limit VALUES ('fq/one', 1);
SELECT status FROM sync_request('sem/fq/one', 'fq/h0');
SELECT count(*) FROM generate_series(1, 1000) i,
       sync_request('sem/fq/one', 'fq/a' || i, fair_key => 'A');
SELECT count(*) FROM generate_series(1, 10) i,
       sync_request('sem/fq/one', 'fq/b' || i, fair_key => 'B');
SELECT max(position) FILTER (WHERE fair_key = 'B') AS last_b, count(*) AS waiting,
       min(fair_weight) AS min_weight, max(fair_weight) AS max_weight
  FROM sync_waiters WHERE lock_name = 'sem/fq/one';
CALL pg_temp.pass_on('sem/fq/one', 24);
SELECT string_agg(fair_key, '' ORDER BY n) AS grant_order FROM grants;
SELECT max(n) FILTER (WHERE fair_key = 'B') AS last_b_grant FROM grants;
-- within a key, arrival order holds
SELECT string_agg(holder, ' ' ORDER BY n) AS b_grants FROM grants WHERE fair_key = 'B';
-- the fair key is kept in sync_state, and shown in the views
SELECT fair_key, count(*) FROM sync_state WHERE name = 'sem/fq/one' GROUP BY 1 ORDER BY 1;
SELECT holder, fair_key FROM sync_holders WHERE lock_name = 'sem/fq/one';
DELETE FROM sync_state WHERE name = 'sem/fq/one';
TRUNCATE grants;

-- weights 3:1 (a pattern row, for both kinds of lock): over 400 grants,
-- A gets three quarters
INSERT INTO sync_limit VALUES ('fq/w', 1);
INSERT INTO sync_fair_weight VALUES ('fq/*', 'A', 3);
SELECT status FROM sync_request('sem/fq/w', 'fq/h0');
SELECT count(*) FROM generate_series(1, 400) i,
       sync_request('sem/fq/w', 'fq/wa' || i, fair_key => 'A');
SELECT count(*) FROM generate_series(1, 400) i,
       sync_request('sem/fq/w', 'fq/wb' || i, fair_key => 'B');
SELECT DISTINCT fair_key, fair_weight FROM sync_waiters
 WHERE lock_name = 'sem/fq/w' ORDER BY 1;
CALL pg_temp.pass_on('sem/fq/w', 400);
SELECT fair_key, count(*) FROM grants GROUP BY 1 ORDER BY 1;
SELECT string_agg(fair_key, '' ORDER BY n) AS first_grants
  FROM (SELECT * FROM grants ORDER BY n LIMIT 16) g;

-- a weight changed live: the queue is tagged again when the change commits
SELECT substr(keys, 1, 12) AS keys FROM pg_temp.queue WHERE lock_name = 'sem/fq/w';
UPDATE sync_fair_weight SET weight = 1 WHERE fair_key = 'A';
SELECT DISTINCT fair_key, fair_weight FROM sync_waiters
 WHERE lock_name = 'sem/fq/w' ORDER BY 1;
SELECT substr(keys, 1, 12) AS keys FROM pg_temp.queue WHERE lock_name = 'sem/fq/w';
-- ... and a change that rolls back changes nothing
BEGIN;
UPDATE sync_fair_weight SET weight = 5 WHERE fair_key = 'A';
ROLLBACK;
SELECT DISTINCT fair_key, fair_weight FROM sync_waiters
 WHERE lock_name = 'sem/fq/w' ORDER BY 1;
-- the lock's own row beats the pattern; B weighs 2 there
INSERT INTO sync_fair_weight VALUES ('fq/w', 'B', 2);
SELECT DISTINCT fair_key, fair_weight FROM sync_waiters
 WHERE lock_name = 'sem/fq/w' ORDER BY 1;
SELECT substr(keys, 1, 12) AS keys FROM pg_temp.queue WHERE lock_name = 'sem/fq/w';
-- a TRUNCATE weighs every key 1 again
TRUNCATE sync_fair_weight;
SELECT DISTINCT fair_key, fair_weight FROM sync_waiters
 WHERE lock_name = 'sem/fq/w' ORDER BY 1;
DELETE FROM sync_state WHERE name = 'sem/fq/w';
TRUNCATE grants;

-- within a key, queue time first: an older request of X goes before the
-- X's already queued, which are tagged again after it; requests without a
-- fair key share one implicit key ('-')
INSERT INTO sync_limit VALUES ('fq/q', 1);
SELECT status FROM sync_request('sem/fq/q', 'fq/h0');
SELECT count(*) FROM generate_series(1, 4) i,
       sync_request('sem/fq/q', 'fq/x' || i, fair_key => 'X',
                    queued_at => timestamptz '2026-01-01 00:00:10' + i * interval '1 s');
SELECT count(*) FROM generate_series(1, 3) i, sync_request('sem/fq/q', 'fq/n' || i);
SELECT status FROM sync_request('sem/fq/q', 'fq/x0', fair_key => 'X',
                                queued_at => timestamptz '2026-01-01');
SELECT string_agg(holder, ' ' ORDER BY position) AS queue
  FROM sync_waiters WHERE lock_name = 'sem/fq/q';
-- a higher priority still goes first, whatever the key
SELECT status FROM sync_request('sem/fq/q', 'fq/urgent', priority => 5, fair_key => 'X');
SELECT string_agg(holder, ' ' ORDER BY position) AS queue
  FROM sync_waiters WHERE lock_name = 'sem/fq/q';
-- a row written by hand (as Argo's controller writes them) may name a key
INSERT INTO sync_state (name, workflowkey, held, priority, time, owner,
                        request_id, seq, fair_key)
VALUES ('sem/fq/q', 'fq/argo', false, 0, now(), current_user::regrole, 0, 0, 'Y');
SELECT holder, fair_key FROM sync_waiters WHERE holder = 'fq/argo';
DELETE FROM sync_state WHERE name = 'sem/fq/q';

-- session holds take a fair key too
SELECT sync_acquire('mtx/fq/m', fair_key => 'K') > 0 AS granted;
SELECT fair_key FROM sync_holders WHERE lock_name = 'mtx/fq/m';
SELECT sync_release('mtx/fq/m');

-- errors
CALL regress_util.expect_error($$SELECT sync_acquire('mtx/fq/m', fair_key => '')$$);
CALL regress_util.expect_error($$SELECT sync_acquire('mtx/fq/m', fair_key => repeat('k', 64))$$);
CALL regress_util.expect_error($$SELECT sync_acquire_xact('mtx/fq/m', fair_key => E'a\nb')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request('mtx/fq/m', 'fq/e', fair_key => '')$$);
-- a fair key is for a request of one lock (an array of one is one lock)
CALL regress_util.expect_error($$SELECT sync_acquire(ARRAY['mtx/fq/m', 'mtx/fq/n'], fair_key => 'K')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request(ARRAY['mtx/fq/m', 'mtx/fq/n'], 'fq/e', fair_key => 'K')$$);
SELECT array_length(sync_acquire(ARRAY['mtx/fq/m'], fair_key => 'K'), 1) AS tokens;
SELECT sync_release('mtx/fq/m');
CALL regress_util.expect_error($$INSERT INTO sync_fair_weight VALUES ('fq/*', 'Z', 0)$$);
CALL regress_util.expect_error($$INSERT INTO sync_fair_weight VALUES ('nonamespace', 'Z', 1)$$);
CALL regress_util.expect_error($$INSERT INTO sync_fair_weight VALUES ('fq/*', '', 1)$$);
CALL regress_util.expect_error($$INSERT INTO sync_state (name, workflowkey, held, priority, time, owner, request_id, seq, fair_key) VALUES ('sem/fq/q', 'fq/bad', false, 0, now(), current_user::regrole, 0, 0, repeat('k', 64))$$);
BEGIN;
INSERT INTO sync_fair_weight VALUES ('fq/*', 'Q', 2);
PREPARE TRANSACTION 'fq';

-- nothing is left
SELECT count(*) AS rows_left FROM sync_state WHERE workflowkey LIKE 'fq/%';
SELECT count(*) AS waiters_left FROM sync_waiters WHERE lock_name LIKE '%/fq/%';
DELETE FROM sync_limit WHERE name LIKE 'fq/%';
