--
-- search_path: the statements syncwf runs on its tables never resolve an
-- operator or a function through the caller's search_path.  A plain role
-- that may create objects in a schema of its own puts it ahead of
-- pg_catalog, with look-alikes of = for text, of extract() and of
-- min(numeric) that record who ran them, and uses syncwf as any role may.
-- Before, syncwf's statements (IN lists, IS DISTINCT FROM, min(), the
-- lookup of a semaphore's limit) ran them, most of them as the owner of
-- the tables: the role ran its own code with the owner's privileges.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
CREATE ROLE regress_syncwf_evil;
CREATE SCHEMA regress_evil AUTHORIZATION regress_syncwf_evil;
CREATE TABLE regress_evil.ran (who name, what text);
ALTER TABLE regress_evil.ran OWNER TO regress_syncwf_evil;
GRANT INSERT ON regress_evil.ran TO PUBLIC;
INSERT INTO sync_limit VALUES ('sp/s', 1);
SELECT sync_launch_plan_register('sp', 'dev', 'r', 'v1', 1, 'REPLACE', max_pending => '1 hour');
SELECT sync_launch_plan_register('sp', 'dev', 'w', 'v1', 1, 'WAIT', max_pending => '1 hour');

SET ROLE regress_syncwf_evil;
CREATE FUNCTION regress_evil.eq(a text, b text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO regress_evil.ran VALUES (current_user, '=');
    RETURN a OPERATOR(pg_catalog.=) b;
END $$;
CREATE OPERATOR regress_evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = regress_evil.eq);
CREATE FUNCTION regress_evil.extract(f text, t timestamptz) RETURNS numeric LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO regress_evil.ran VALUES (current_user, 'extract');
    RETURN pg_catalog.extract(f, t);
END $$;
CREATE FUNCTION regress_evil.extract(f text, i interval) RETURNS numeric LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO regress_evil.ran VALUES (current_user, 'extract');
    RETURN pg_catalog.extract(f, i);
END $$;
CREATE FUNCTION regress_evil.least_sfunc(s numeric, v numeric) RETURNS numeric LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO regress_evil.ran VALUES (current_user, 'min');
    RETURN CASE WHEN s IS NULL OR v < s THEN v ELSE s END;
END $$;
CREATE AGGREGATE regress_evil.min(numeric) (SFUNC = regress_evil.least_sfunc, STYPE = numeric);
SET search_path = regress_evil, pg_catalog, public;

-- keyed holds: a request, a repeated one (its grant written), a refresh, a release
SELECT status FROM sync_request('mtx/sp/a', 'sp/wf', lease => '1 hour');
SELECT status FROM sync_request('sem/sp/s', 'sp/wf');
SELECT status FROM sync_request('sem/sp/s', 'sp/wf2');
SELECT sync_release('sem/sp/s', 'sp/wf');
SELECT sync_reconcile() >= 0 AS reconciled;
SELECT status FROM sync_request('sem/sp/s', 'sp/wf2');
SELECT sync_refresh('mtx/sp/a', 'sp/wf') > now() AS refreshed;
SELECT sync_heartbeat('sp-ctl') IS NOT NULL AS heartbeat;
SELECT sync_release_holder('sp/wf') AS released;
SELECT sync_release_holder('sp/wf2') AS released;
-- launch plans: a REPLACE, a WAIT with a pending execution, reconciliation
SELECT phase FROM sync_execution_create('sp', 'dev', 'r', 'v1', 'sp-r1');
SELECT phase, replaced_execution_id FROM sync_execution_create('sp', 'dev', 'r', 'v1', 'sp-r2');
SELECT phase FROM sync_execution_create('sp', 'dev', 'w', 'v1', 'sp-w1');
SELECT phase FROM sync_execution_create('sp', 'dev', 'w', 'v1', 'sp-w2');
SELECT sync_reconcile() >= 0 AS reconciled;
SELECT sync_execution_update('sp-w1', 'SUCCEEDED');
SELECT sync_reconcile() >= 0 AS reconciled;
SELECT count(*) AS stats FROM sync_launch_plan_stats WHERE project OPERATOR(pg_catalog.=) 'sp';
RESET search_path;
RESET ROLE;

-- what ran, and as whom: nothing
SELECT who, what, count(*) FROM regress_evil.ran GROUP BY 1, 2 ORDER BY 1, 2;

-- clean up
DELETE FROM sync_execution WHERE project = 'sp';
SELECT sync_reconcile() >= 0 AS reconciled;
DELETE FROM sync_launch_event WHERE project = 'sp';
DELETE FROM sync_launch_plan WHERE project = 'sp';
DELETE FROM sync_limit WHERE name = 'sp/s';
DELETE FROM sync_controller WHERE controller = 'sp-ctl';
DROP SCHEMA regress_evil CASCADE;
DROP ROLE regress_syncwf_evil;
SELECT count(*) AS left_behind FROM sync_state WHERE name LIKE '%/sp/%';
