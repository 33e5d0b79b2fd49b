/* syncwf--1.3--1.4.sql: update the syncwf extension from version 1.3 to 1.4 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION syncwf UPDATE TO '1.4'" to load this file. \quit

-- Each change below is also in the current full script (syncwf--1.6.sql);
-- test/t/012_upgrade.pl checks that 1.0 updated through this script and
-- the rest of the chain gives the same objects as that script.

-- finished_at is set exactly when the phase is final.  Rows written by
-- syncwf are so already; a row another system wrote by SQL may have a final
-- phase without finished_at (it gets the latest of its start, queue and
-- creation times that it has), or a live phase with one (cleared).  No phase changes, so
-- no slot does.  Only when some row needs it: an UPDATE fires the statement
-- trigger sync_execution_changed, which needs syncwf's shared memory.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM sync_execution
                WHERE (finished_at IS NULL) = (phase IN ('SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED_OUT'))) THEN
        UPDATE sync_execution
           SET finished_at = CASE WHEN phase IN ('SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED_OUT')
                                  THEN COALESCE(started_at, queued_at, created_at) END
         WHERE (finished_at IS NULL) = (phase IN ('SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED_OUT'));
    END IF;
END
$$;

-- and stays so, whoever writes the row
CREATE FUNCTION sync_execution_finished()
RETURNS trigger
AS 'MODULE_PATHNAME', 'sync_execution_finished'
LANGUAGE C;
CREATE TRIGGER sync_execution_finished
    BEFORE INSERT OR UPDATE OF phase, finished_at ON sync_execution
    FOR EACH ROW EXECUTE FUNCTION sync_execution_finished();

-- The live executions' index has its predicate on finished_at, not on
-- phase, so that a move between two live phases (PENDING to QUEUED, QUEUED
-- to RUNNING) changes no indexed column and needs no new index entry when
-- the page has room for the new version (a HOT update).
DROP INDEX sync_execution_live;
CREATE INDEX sync_execution_live ON sync_execution (project, domain, name, created_at)
    WHERE finished_at IS NULL;
-- room on each page for that new version (pages written from now on)
ALTER TABLE sync_execution SET (fillfactor = 90);

-- its live counts use that index
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
               AND e.finished_at IS NULL
               AND e.phase IN ('QUEUED', 'RUNNING', 'SUCCEEDING', 'FAILING', 'ABORTING')),
           (SELECT count(*) FROM @extschema@.sync_execution e
             WHERE (e.project, e.domain, e.name) = (p.project, p.domain, p.name)
               AND e.finished_at IS NULL AND e.phase = 'PENDING'),
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
