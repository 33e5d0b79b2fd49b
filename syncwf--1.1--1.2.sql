/* syncwf--1.1--1.2.sql: update the syncwf extension from version 1.1 to 1.2 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION syncwf UPDATE TO '1.2'" to load this file. \quit

-- Each change below is also in the current full script (syncwf--1.6.sql);
-- test/t/012_upgrade.pl checks that 1.0 updated through this script and
-- the rest of the chain gives the same objects as that script.

-- Argo's controller writes sync_state itself (docs/argo.md): a row it
-- inserts is a claim-only request, granted when it sets held = true.
ALTER TABLE sync_state ADD COLUMN claim boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN sync_state.claim IS
    'true: inserted by its writer (Argo''s controller) and granted only when that writer sets held = true';
GRANT INSERT, UPDATE ON sync_state TO syncwf_admin;

-- A claim that could not be granted when its statement ran (docs/argo.md)
-- is tried again at commit.
CREATE FUNCTION sync_state_claimed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'sync_state_claimed'
LANGUAGE C;
CREATE CONSTRAINT TRIGGER sync_state_claimed
    AFTER INSERT OR UPDATE ON sync_state
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.held AND NEW.token IS NULL)
    EXECUTE FUNCTION sync_state_claimed();

-- What Argo's migration creates besides the tables above: its lock table,
-- and the record of its migration, at the last change of Argo 3.7 and 4.x,
-- so that the migration finds nothing to do.
CREATE TABLE sync_lock (
    name       varchar(256) PRIMARY KEY,
    controller varchar(64) NOT NULL,
    time       timestamp
);
COMMENT ON TABLE sync_lock IS
    'Argo''s lock table: its controllers serialize their own lock checks with it; syncwf does not use it';
CREATE TABLE sync_schema_history (
    schema_version integer PRIMARY KEY
);
INSERT INTO sync_schema_history VALUES (10);
COMMENT ON TABLE sync_schema_history IS
    'Argo''s record of its database-lock migration: all 11 changes are applied (syncwf''s tables stand for them)';
REVOKE ALL ON sync_lock, sync_schema_history FROM PUBLIC;
GRANT SELECT ON sync_lock, sync_schema_history TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON sync_lock TO syncwf_admin;
GRANT SELECT, UPDATE ON sync_schema_history TO syncwf_admin;

-- sync_wait: block until a keyed request is granted (one statement, no LISTEN).
CREATE FUNCTION sync_wait(lock_name text, holder text, timeout interval DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sync_wait'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_wait(lock_names text[], holder text, timeout interval DEFAULT NULL)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'sync_wait_array'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- sync_channel: the NOTIFY channel of one controller's keyed-hold events.
CREATE FUNCTION sync_channel(controller text)
RETURNS text
AS 'MODULE_PATHNAME', 'sync_channel'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- sync_launch_plan_metrics (and so sync_launch_plan_stats) leaves out of
-- its pending times the executions whose created_at and queued_at, written
-- by hand, give a negative, infinite or out-of-range pending time; before,
-- one such row made the function fail for everyone.
CREATE OR REPLACE FUNCTION sync_launch_plan_metrics(window_length interval DEFAULT interval '1 hour')
RETURNS TABLE (project text, domain text, name text, active bigint, pending bigint,
               skipped bigint, aborted bigint, replaced bigint, timed_out bigint,
               pending_p50 interval, pending_p95 interval, pending_max interval)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT p.project, p.domain, p.name,
           (SELECT count(*) FROM @extschema@.sync_execution e
             WHERE (e.project, e.domain, e.name) = (p.project, p.domain, p.name)
               AND e.phase IN ('QUEUED', 'RUNNING', 'SUCCEEDING', 'FAILING', 'ABORTING')),
           (SELECT count(*) FROM @extschema@.sync_execution e
             WHERE (e.project, e.domain, e.name) = (p.project, p.domain, p.name)
               AND e.phase = 'PENDING'),
           (SELECT count(*) FILTER (WHERE v.event = 'SKIPPED') FROM @extschema@.sync_launch_event v
             WHERE (v.project, v.domain, v.name) = (p.project, p.domain, p.name)
               AND v.at > now() - window_length),
           (SELECT count(*) FILTER (WHERE v.event = 'ABORTED') FROM @extschema@.sync_launch_event v
             WHERE (v.project, v.domain, v.name) = (p.project, p.domain, p.name)
               AND v.at > now() - window_length),
           (SELECT count(*) FILTER (WHERE v.event = 'REPLACED') FROM @extschema@.sync_launch_event v
             WHERE (v.project, v.domain, v.name) = (p.project, p.domain, p.name)
               AND v.at > now() - window_length),
           (SELECT count(*) FILTER (WHERE v.event = 'TIMED_OUT') FROM @extschema@.sync_launch_event v
             WHERE (v.project, v.domain, v.name) = (p.project, p.domain, p.name)
               AND v.at > now() - window_length),
           w.p50, w.p95, w.pmax
      FROM (SELECT DISTINCT l.project, l.domain, l.name FROM @extschema@.sync_launch_plan l) p
      LEFT JOIN LATERAL (
           SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY e.queued_at - e.created_at) AS p50,
                  percentile_cont(0.95) WITHIN GROUP (ORDER BY e.queued_at - e.created_at) AS p95,
                  max(e.queued_at - e.created_at) AS pmax
             FROM @extschema@.sync_execution e
            WHERE (e.project, e.domain, e.name) = (p.project, p.domain, p.name)
              AND e.created_at > now() - window_length
              -- a pending time written by hand that is negative, infinite
              -- or too long for an interval is left out
              AND extract(epoch FROM e.queued_at) - extract(epoch FROM e.created_at)
                  BETWEEN 0 AND 9000000000000) w ON true
$$;
