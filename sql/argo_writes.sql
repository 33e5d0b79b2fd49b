--
-- argo_writes: Argo's controller writes sync_state itself (docs/argo.md).
-- Its statements run here as its database library sends them (upper/db:
-- quoted identifiers, $n parameters), as a role in syncwf_admin that does
-- not own the extension:
--  - the migration finds everything applied and changes nothing;
--  - an INSERT of a pending row is a claim-only keyed request: queued in
--    syncwf's order, never granted by syncwf itself, granted when the
--    controller sets held = true (its claim) and the lock has a slot for
--    it with no request of syncwf's functions ahead of it;
--  - a claim that cannot be granted now is a serialization failure
--    (40001), which Argo retries; a rolled-back claim gives the slot back;
--  - an INSERT of a held row is granted now or refused the same way;
--  - Argo's release and queue-removal deletes release and withdraw;
--  - every other write is refused, with its own SQLSTATE.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
SET TimeZone = 'UTC';
-- what syncwf says about a lock
CREATE FUNCTION pg_temp.state(lock text)
RETURNS TABLE (workflowkey text, controller text, held boolean, priority int,
               "time" text, token boolean, claim boolean)
LANGUAGE sql AS $$
    SELECT workflowkey, controller, held, priority,
           CASE WHEN time > now() - interval '1 hour' THEN 'now' ELSE time::text END,
           token IS NOT NULL, claim
      FROM sync_state WHERE name = lock ORDER BY held DESC, priority DESC, time, seq
$$;
CREATE FUNCTION pg_temp.live(lock text)
RETURNS TABLE (holder text, state text, "position" int)
LANGUAGE sql AS $$
    SELECT holder, 'held', NULL::int FROM sync_holders WHERE lock_name = lock
    UNION ALL
    SELECT holder, 'waiting', position FROM sync_waiters WHERE lock_name = lock
    ORDER BY 2, 3, 1
$$;

CREATE ROLE regress_argo IN ROLE syncwf_admin;
GRANT CREATE ON SCHEMA public TO regress_argo;  -- only for the migration
SET ROLE regress_argo;

-- Argo's migration (util/sqldb/migrate.go), up to its first change
CREATE TABLE IF NOT EXISTS sync_schema_history(schema_version int not null, primary key(schema_version));
PREPARE pk_check(text) AS
    select 1 from information_schema.table_constraints where constraint_type = 'PRIMARY KEY' and table_name = 'sync_schema_history' and table_catalog = $1;
EXECUTE pk_check(current_database());
SELECT schema_version FROM sync_schema_history;
-- each of its 11 changes runs only if this UPDATE finds the version before it
PREPARE apply_change(int, int) AS
    UPDATE sync_schema_history SET schema_version = $1 WHERE schema_version = $2;
DO $$
DECLARE
    n bigint;
BEGIN
    FOR v IN 0..10 LOOP
        EXECUTE 'EXECUTE apply_change(' || v || ', ' || v - 1 || ')';
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n <> 0 THEN
            RAISE EXCEPTION 'change % would be applied', v;
        END IF;
    END LOOP;
END
$$;
SELECT schema_version FROM sync_schema_history;

-- the statements of Argo's util/sync/db/queries.go
PREPARE insert_limit(text, int) AS
    INSERT INTO "sync_limit" ("name", "sizelimit") VALUES ($1, $2) RETURNING "name";
PREPARE update_limit(int, text) AS
    UPDATE "sync_limit" SET "sizelimit" = $1 WHERE ("name" = $2);
PREPARE get_limit(text) AS
    SELECT "sizelimit" FROM "sync_limit" WHERE ("name" = $1);
PREPARE insert_controller(text, timestamp) AS
    INSERT INTO "sync_controller" ("controller", "time") VALUES ($1, $2) RETURNING "controller";
PREPARE update_controller(timestamp, text) AS
    UPDATE "sync_controller" SET "time" = $1 WHERE ("controller" = $2);
PREPARE check_queue(text, text, text) AS
    SELECT "workflowkey" FROM "sync_state" WHERE ("name" = $1 AND "workflowkey" = $2 AND "controller" = $3);
PREPARE add_to_queue(text, text, text, boolean, int, timestamp) AS
    INSERT INTO "sync_state" ("name", "workflowkey", "controller", "held", "priority", "time")
    VALUES ($1, $2, $3, $4, $5, $6) RETURNING "name", "workflowkey";
PREPARE current_state(boolean, text) AS
    SELECT "workflowkey" FROM "sync_state" WHERE ("held" = $1 AND "name" = $2);
PREPARE ordered_queue(text, boolean, timestamptz) AS
    SELECT "workflowkey", "controller" FROM "sync_state"
     WHERE ("name" = $1 AND "held" = $2
            AND "controller" IN (SELECT "controller" FROM "sync_controller" WHERE ("time" > $3)))
     ORDER BY "priority" DESC, "time" ASC;
PREPARE pending_in_queue(text, text, text, boolean) AS
    SELECT "workflowkey" FROM "sync_state"
     WHERE ("name" = $1 AND "workflowkey" = $2 AND "controller" = $3 AND "held" = $4);
PREPARE update_to_held(boolean, text, text, text, boolean) AS
    UPDATE "sync_state" SET "held" = $1
     WHERE ("name" = $2 AND "workflowkey" = $3 AND "controller" = $4 AND "held" = $5);
PREPARE insert_held(text, text, text, boolean, int, timestamp) AS
    INSERT INTO "sync_state" ("name", "workflowkey", "controller", "held", "priority", "time")
    VALUES ($1, $2, $3, $4, $5, $6) RETURNING "name", "workflowkey";
PREPARE release_held(boolean, text, text, text) AS
    DELETE FROM "sync_state" WHERE ("held" = $1 AND "name" = $2 AND "workflowkey" = $3 AND "controller" = $4);
PREPARE remove_from_queue(text, text, boolean) AS
    DELETE FROM "sync_state" WHERE ("name" = $1 AND "workflowkey" = $2 AND "held" = $3);
PREPARE insert_lock(text, text, timestamp) AS
    INSERT INTO "sync_lock" ("name", "controller", "time") VALUES ($1, $2, $3) RETURNING "name";
PREPARE existing_locks(text, text) AS
    SELECT "name" FROM "sync_lock" WHERE ("name" = $1 AND "controller" = $2);
PREPARE delete_lock(text) AS
    DELETE FROM "sync_lock" WHERE ("name" = $1);

-- two controllers start: heartbeat rows, and Argo's CLI creates a limit
EXECUTE insert_controller('ctl-a', '2001-01-01 00:00:00');
EXECUTE insert_controller('ctl-b', '2001-01-01 00:00:00');
SELECT controller, time > now() - interval '1 minute' AS server_clock FROM sync_controller ORDER BY 1;
EXECUTE update_controller('2001-01-01 00:00:00', 'ctl-a');
EXECUTE insert_limit('argo/one', 1);
EXECUTE get_limit('argo/one');

-- both queue a workflow: pending rows, claim-only requests
EXECUTE check_queue('sem/argo/one', 'ns/wf-1', 'ctl-a');
EXECUTE add_to_queue('sem/argo/one', 'ns/wf-1', 'ctl-a', false, 0, '2020-01-01 10:00:00');
EXECUTE add_to_queue('sem/argo/one', 'ns/wf-2', 'ctl-b', false, 0, '2020-01-01 10:00:01');
SELECT * FROM pg_temp.state('sem/argo/one');
SELECT * FROM pg_temp.live('sem/argo/one');   -- a free slot, but nobody is granted

-- ctl-a: its lock row, then its SERIALIZABLE transaction; it claims
EXECUTE existing_locks('sem/argo/one', 'ctl-a');
EXECUTE insert_lock('sem/argo/one', 'ctl-a', '2020-01-01 10:00:02');
BEGIN ISOLATION LEVEL SERIALIZABLE;
EXECUTE current_state(true, 'sem/argo/one');
EXECUTE ordered_queue('sem/argo/one', false, now() - interval '600 seconds');
EXECUTE pending_in_queue('sem/argo/one', 'ns/wf-1', 'ctl-a', false);
EXECUTE update_to_held(true, 'sem/argo/one', 'ns/wf-1', 'ctl-a', false);
COMMIT;
EXECUTE delete_lock('sem/argo/one');
SELECT * FROM pg_temp.state('sem/argo/one');
SELECT * FROM pg_temp.live('sem/argo/one');

-- ctl-b claims too, as if its reads had shown a free slot: the row says
-- held, without a token, and the claim is tried again at commit, where it
-- fails (40001) as a serialization failure would
BEGIN ISOLATION LEVEL SERIALIZABLE;
EXECUTE update_to_held(true, 'sem/argo/one', 'ns/wf-2', 'ctl-b', false);
SELECT workflowkey, held, token FROM sync_state WHERE name = 'sem/argo/one' AND workflowkey = 'ns/wf-2';
COMMIT;
SELECT * FROM pg_temp.state('sem/argo/one');

-- ctl-a releases; wf-2 is first but waits for its claim
EXECUTE release_held(true, 'sem/argo/one', 'ns/wf-1', 'ctl-a');
SELECT * FROM pg_temp.live('sem/argo/one');
-- a claim rolled back gives the slot back
BEGIN ISOLATION LEVEL SERIALIZABLE;
EXECUTE update_to_held(true, 'sem/argo/one', 'ns/wf-2', 'ctl-b', false);
SELECT * FROM pg_temp.live('sem/argo/one');
ROLLBACK;
SELECT * FROM pg_temp.live('sem/argo/one');
BEGIN ISOLATION LEVEL SERIALIZABLE;
EXECUTE update_to_held(true, 'sem/argo/one', 'ns/wf-2', 'ctl-b', false);
COMMIT;
SELECT * FROM pg_temp.state('sem/argo/one');

-- a caller of the functions, with an earlier queue time, is ahead of
-- Argo's next workflow: syncwf grants it as soon as the slot frees; then the
-- claim-only request is first, and waits for its claim, ahead of a caller
-- that comes later
SELECT status FROM sync_request('sem/argo/one', 'api/1', controller => 'api',
                                queued_at => '2019-01-01 00:00:00');
EXECUTE add_to_queue('sem/argo/one', 'ns/wf-3', 'ctl-a', false, 0, '2020-01-01 10:00:03');
SELECT * FROM pg_temp.live('sem/argo/one');
EXECUTE release_held(true, 'sem/argo/one', 'ns/wf-2', 'ctl-b');
SELECT * FROM pg_temp.live('sem/argo/one');   -- api/1 is granted by syncwf at once
-- ctl-a's claim of wf-3 now, outside a transaction block: no free slot
-- (40001 when the statement's own transaction commits)
EXECUTE update_to_held(true, 'sem/argo/one', 'ns/wf-3', 'ctl-a', false);
SELECT sync_release('sem/argo/one', 'api/1');
SELECT * FROM pg_temp.live('sem/argo/one');   -- wf-3 waits for its claim
SELECT status FROM sync_request('sem/argo/one', 'api/2');
SELECT * FROM pg_temp.live('sem/argo/one');   -- and api/2 waits behind it
EXECUTE update_to_held(true, 'sem/argo/one', 'ns/wf-3', 'ctl-a', false);
SELECT * FROM pg_temp.live('sem/argo/one');

-- Argo's queue removal withdraws a pending row; its release hands on
EXECUTE add_to_queue('sem/argo/one', 'ns/wf-4', 'ctl-b', false, 0, '2020-01-01 10:00:04');
EXECUTE remove_from_queue('sem/argo/one', 'ns/wf-4', false);
EXECUTE release_held(true, 'sem/argo/one', 'ns/wf-3', 'ctl-a');
SELECT * FROM pg_temp.live('sem/argo/one');   -- api/2 is granted
SELECT sync_release('sem/argo/one', 'api/2');

-- a held row inserted directly (Argo's InsertHeldState, no time): granted
-- now when it may be, refused (40001, at commit) when not
EXECUTE insert_held('mtx/argo/m', 'ns/wf-4', 'ctl-a', true, 0, NULL);
EXECUTE insert_held('mtx/argo/m', 'ns/wf-5', 'ctl-b', true, 0, NULL);
SELECT * FROM pg_temp.state('mtx/argo/m');
EXECUTE release_held(true, 'mtx/argo/m', 'ns/wf-4', 'ctl-a');

-- a workflow with two locks: its pending rows are never granted one by one
EXECUTE add_to_queue('mtx/argo/x', 'ns/wf-6', 'ctl-a', false, 0, '2020-01-01 11:00:00');
EXECUTE add_to_queue('mtx/argo/y', 'ns/wf-6', 'ctl-a', false, 0, '2020-01-01 11:00:00');
SELECT * FROM pg_temp.live('mtx/argo/x') UNION ALL SELECT * FROM pg_temp.live('mtx/argo/y');
BEGIN ISOLATION LEVEL SERIALIZABLE;
EXECUTE update_to_held(true, 'mtx/argo/x', 'ns/wf-6', 'ctl-a', false);
EXECUTE update_to_held(true, 'mtx/argo/y', 'ns/wf-6', 'ctl-a', false);
COMMIT;
SELECT lock_name, holder FROM sync_holders WHERE holder = 'ns/wf-6' ORDER BY 1;
SELECT sync_release_holder('ns/wf-6');

-- two workflows created in the same second, each with two locks, queued in
-- opposite orders: each keeps one fraction of a second in both rows, so
-- that they are in the same order in both queues (Argo's and syncwf's),
-- and neither waits for the other forever
EXECUTE add_to_queue('mtx/argo/t1', 'ns/wf-t1', 'ctl-a', false, 0, '2020-01-01 12:00:00');
EXECUTE add_to_queue('mtx/argo/t2', 'ns/wf-t2', 'ctl-b', false, 0, '2020-01-01 12:00:00');
EXECUTE add_to_queue('mtx/argo/t2', 'ns/wf-t1', 'ctl-a', false, 0, '2020-01-01 12:00:00');
EXECUTE add_to_queue('mtx/argo/t1', 'ns/wf-t2', 'ctl-b', false, 0, '2020-01-01 12:00:00');
SELECT workflowkey, count(DISTINCT time) AS times,
       bool_and(date_trunc('second', time) = '2020-01-01 12:00:00') AS same_second
  FROM sync_state WHERE name IN ('mtx/argo/t1', 'mtx/argo/t2') GROUP BY 1 ORDER BY 1;
SELECT (SELECT string_agg(holder, ',' ORDER BY position) FROM sync_waiters WHERE lock_name = 'mtx/argo/t1') =
       (SELECT string_agg(holder, ',' ORDER BY position) FROM sync_waiters WHERE lock_name = 'mtx/argo/t2')
       AS same_order_in_both,
       (SELECT string_agg(workflowkey, ',') FROM (SELECT workflowkey FROM sync_state WHERE name = 'mtx/argo/t1'
         ORDER BY priority DESC, time ASC) q) =
       (SELECT string_agg(workflowkey, ',') FROM (SELECT workflowkey FROM sync_state WHERE name = 'mtx/argo/t2'
         ORDER BY priority DESC, time ASC) q) AS same_order_for_argo;
SELECT sync_release_holder('ns/wf-t1'), sync_release_holder('ns/wf-t2');

-- two clusters run a workflow of the same namespace and name on one lock
-- (a CronWorkflow deployed to both).  Argo's primary key includes the
-- controller, but its code takes the workflow key for the holder whoever
-- wrote the row, so with its own tables the second would run beside the
-- first.  Here the other controller's INSERT is a serialization failure,
-- which Argo 4.x retries, until the first row is gone; the same
-- controller's second INSERT is a duplicate key, as in Argo's table.
EXECUTE add_to_queue('mtx/argo/c', 'ns/cron-1', 'ctl-a', false, 0, '2020-01-01 13:00:00');
CALL regress_util.expect_error($$EXECUTE add_to_queue('mtx/argo/c', 'ns/cron-1', 'ctl-b', false, 0, '2020-01-01 13:00:00')$$);
CALL regress_util.expect_error($$EXECUTE add_to_queue('mtx/argo/c', 'ns/cron-1', 'ctl-a', false, 0, '2020-01-01 13:00:00')$$);
BEGIN ISOLATION LEVEL SERIALIZABLE;
CALL regress_util.expect_error($$EXECUTE insert_held('mtx/argo/c', 'ns/cron-1', 'ctl-b', true, 0, NULL)$$);
ROLLBACK;
EXECUTE update_to_held(true, 'mtx/argo/c', 'ns/cron-1', 'ctl-a', false);
CALL regress_util.expect_error($$EXECUTE add_to_queue('mtx/argo/c', 'ns/cron-1', 'ctl-b', false, 0, '2020-01-01 13:00:00')$$);
SELECT * FROM pg_temp.state('mtx/argo/c');
EXECUTE release_held(true, 'mtx/argo/c', 'ns/cron-1', 'ctl-a');
-- ctl-b's retry now queues, and its claim is granted
EXECUTE add_to_queue('mtx/argo/c', 'ns/cron-1', 'ctl-b', false, 0, '2020-01-01 13:00:00');
EXECUTE update_to_held(true, 'mtx/argo/c', 'ns/cron-1', 'ctl-b', false);
SELECT * FROM pg_temp.state('mtx/argo/c');
EXECUTE release_held(true, 'mtx/argo/c', 'ns/cron-1', 'ctl-b');
-- an entry made through the functions, without a controller, likewise,
-- also when it is part of a request of several locks
SELECT status FROM sync_request('mtx/argo/c', 'ns/cron-1');
CALL regress_util.expect_error($$EXECUTE add_to_queue('mtx/argo/c', 'ns/cron-1', 'ctl-a', false, 0, NULL)$$);
SELECT sync_release('mtx/argo/c', 'ns/cron-1');
SELECT status FROM sync_request(ARRAY['mtx/argo/c', 'mtx/argo/d'], 'ns/cron-2', controller => 'ctl-b');
CALL regress_util.expect_error($$EXECUTE add_to_queue('mtx/argo/d', 'ns/cron-2', 'ctl-a', false, 0, NULL)$$);
CALL regress_util.expect_error($$EXECUTE add_to_queue('mtx/argo/d', 'ns/cron-2', 'ctl-b', false, 0, NULL)$$);
SELECT sync_release_holder('ns/cron-2');

-- names as long as Argo's columns allow (varchar(256), controller
-- varchar(64)): a limit of 256 bytes from Argo's CLI, a lock of 256 in
-- sync_state (its limit is 252), a workflow key of 256, a controller of 64
-- (the long values RETURNING would print are not shown; an error would be)
\o /dev/null
EXECUTE insert_limit('argo/' || repeat('l', 251), 1);
EXECUTE insert_limit('argo/' || repeat('m', 247), 1);
EXECUTE insert_controller(repeat('c', 64), now()::timestamp);
EXECUTE add_to_queue('sem/argo/' || repeat('m', 247), repeat('w', 256), repeat('c', 64), false, 0, '2020-01-01 14:00:00');
\o
EXECUTE update_to_held(true, 'sem/argo/' || repeat('m', 247), repeat('w', 256), repeat('c', 64), false);
SELECT octet_length(name) AS name, octet_length(workflowkey) AS workflowkey,
       octet_length(controller) AS controller, held, token IS NOT NULL AS token
  FROM sync_state WHERE workflowkey = repeat('w', 256);
SELECT octet_length(lock_name) AS lock_name, octet_length(holder) AS holder, sizelimit
  FROM sync_holders JOIN sync_locks USING (lock_name) WHERE holder = repeat('w', 256);
EXECUTE release_held(true, 'sem/argo/' || repeat('m', 247), repeat('w', 256), repeat('c', 64));
-- one byte more than syncwf keeps: refused (Argo's table would refuse 257
-- characters too)
CALL regress_util.expect_error($$EXECUTE insert_limit('argo/' || repeat('l', 252), 1)$$);
CALL regress_util.expect_error($$EXECUTE add_to_queue('sem/argo/' || repeat('m', 247), repeat('w', 257), repeat('c', 64), false, 0, NULL)$$);
DELETE FROM sync_limit WHERE name LIKE 'argo/%' AND octet_length(name) > 250;
DELETE FROM sync_controller WHERE controller = repeat('c', 64);

-- refused writes
EXECUTE add_to_queue('mtx/argo/m', 'ns/wf-7', 'ctl-a', false, 0, NULL);
CALL regress_util.expect_error($$EXECUTE add_to_queue('mtx/argo/m', 'ns/wf-7', 'ctl-b', false, 0, NULL)$$);
CALL regress_util.expect_error($$UPDATE sync_state SET priority = 5 WHERE workflowkey = 'ns/wf-7'$$);
CALL regress_util.expect_error($$UPDATE sync_state SET held = true, priority = 5 WHERE workflowkey = 'ns/wf-7'$$);
UPDATE sync_state SET held = true WHERE workflowkey = 'ns/wf-7';
CALL regress_util.expect_error($$UPDATE sync_state SET held = false WHERE workflowkey = 'ns/wf-7'$$);
UPDATE sync_state SET held = true WHERE workflowkey = 'ns/wf-7';  -- nothing changes
CALL regress_util.expect_error($$EXECUTE add_to_queue('xyz/argo/m', 'ns/wf-8', 'ctl-a', false, 0, NULL)$$);
CALL regress_util.expect_error($$EXECUTE add_to_queue('sem/launchplan/p/d/n', 'ns/wf-8', 'ctl-a', false, 0, NULL)$$);
CALL regress_util.expect_error($$EXECUTE add_to_queue('mtx/argo/m', NULL, 'ctl-a', false, 0, NULL)$$);
CALL regress_util.expect_error($$EXECUTE add_to_queue('mtx/argo/m', '', 'ctl-a', false, 0, NULL)$$);
CALL regress_util.expect_error($$EXECUTE add_to_queue('mtx/argo/m', 'ns/wf-8', 'ctl-a', false, 0, 'infinity')$$);
SELECT sync_release('mtx/argo/m', 'ns/wf-7');

-- a role outside syncwf_admin may not write at all
RESET ROLE;
CREATE ROLE regress_argo_reader;
SET ROLE regress_argo_reader;
CALL regress_util.expect_error($$EXECUTE add_to_queue('mtx/argo/m', 'ns/wf-9', 'ctl-a', false, 0, NULL)$$);
RESET ROLE;

-- nothing is left
SELECT count(*) FROM sync_state WHERE name LIKE '%/argo/%';
SELECT count(*) FROM sync_holders WHERE lock_name LIKE '%/argo/%';
DELETE FROM sync_limit WHERE name = 'argo/one';
DELETE FROM sync_controller WHERE controller IN ('ctl-a', 'ctl-b', 'api');
REVOKE CREATE ON SCHEMA public FROM regress_argo;
DROP ROLE regress_argo, regress_argo_reader;
