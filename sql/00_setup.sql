--
-- 00_setup: create the extension (the only test that does; the others use
-- CREATE EXTENSION IF NOT EXISTS) and check what it installs.
--
CREATE EXTENSION syncwf;
SELECT extname, extversion, extrelocatable FROM pg_extension WHERE extname = 'syncwf';
-- the preloaded module
SHOW shared_preload_libraries;
-- every member object of the extension (17 and later also record the row
-- type of each table and view, and its array type, as members; they come
-- with their relation, so they are left out here)
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS member
  FROM pg_depend d
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'syncwf')
   AND d.deptype = 'e'
   AND NOT EXISTS (SELECT 1
                     FROM pg_type t
                     LEFT JOIN pg_type elem ON elem.oid = t.typelem AND elem.typarray = t.oid
                     JOIN pg_class c ON c.oid IN (t.typrelid, elem.typrelid)
                    WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid
                      AND c.relkind <> 'c')
 ORDER BY 1;
-- function signatures, defaults, volatility, strictness
SELECT p.oid::regprocedure AS function,
       pg_get_function_arguments(p.oid) AS arguments,
       pg_get_function_result(p.oid) AS result,
       p.provolatile, p.proparallel, p.proisstrict
  FROM pg_proc p
 WHERE p.pronamespace = 'public'::regnamespace
 ORDER BY p.proname, p.oid::regprocedure::text;
-- sync_limit: columns, constraints, triggers
\d sync_limit
-- (18 also lists each NOT NULL as a constraint; \d above shows the same
-- columns as "not null" on every version)
SELECT conname, pg_get_constraintdef(oid)
  FROM pg_constraint WHERE conrelid = 'sync_limit'::regclass AND contype <> 'n'
 ORDER BY conname;
SELECT tgname, pg_get_triggerdef(oid)
  FROM pg_trigger WHERE tgrelid = 'sync_limit'::regclass AND NOT tgisinternal
 ORDER BY tgname;
-- its contents are dumped with the database
SELECT extconfig::regclass[], extcondition FROM pg_extension WHERE extname = 'syncwf';
-- the limit-admin role, and who may do what to sync_limit and the views
SELECT rolname, rolcanlogin, rolsuper FROM pg_roles WHERE rolname = 'syncwf_admin';
SELECT table_name, grantee, string_agg(privilege_type, ', ' ORDER BY privilege_type) AS privileges
  FROM information_schema.role_table_grants
 WHERE table_schema = 'public' AND grantee IN ('PUBLIC', 'syncwf_admin')
 GROUP BY table_name, grantee
 ORDER BY table_name, grantee;
SELECT has_table_privilege('public', 'sync_limit', 'TRUNCATE') AS public_can_truncate;
-- nothing is held or defined yet
SELECT count(*) AS limits FROM sync_limit;
SELECT count(*) AS locks FROM sync_locks;
SELECT count(*) AS holders FROM sync_holders;
SELECT count(*) AS waiters FROM sync_waiters;
-- the GUCs: type, unit, built-in default (boot_val, whatever this instance's
-- configuration sets), range, and whether a restart (postmaster) or a
-- reload (sighup) applies them; README's Configuration table documents each
SELECT name, vartype, unit, boot_val, min_val, max_val, context
  FROM pg_settings WHERE name LIKE 'syncwf.%' ORDER BY name;
-- Errors show message, detail and hint; the SQLSTATE is echoed after each
-- (VERBOSITY verbose would add LOCATION lines with source line numbers).
SET syncwf.max_locks = 100;
\echo :LAST_ERROR_SQLSTATE
-- the prefix is reserved: a misspelt parameter is an error, not a new variable
SET syncwf.max_lock = 100;
\echo :LAST_ERROR_SQLSTATE
-- a second CREATE EXTENSION
CREATE EXTENSION syncwf;
\echo :LAST_ERROR_SQLSTATE
CREATE EXTENSION IF NOT EXISTS syncwf;
-- dropping the extension keeps the cluster-wide role; creating it again
-- does not fail on the existing role
DROP EXTENSION syncwf;
SELECT count(*) AS syncwf_admin_roles FROM pg_roles WHERE rolname = 'syncwf_admin';
CREATE EXTENSION syncwf;
SELECT count(*) AS syncwf_admin_roles FROM pg_roles WHERE rolname = 'syncwf_admin';
SELECT sync_acquire('mtx/setup/smoke') > 0 AS smoke_acquire;
SELECT sync_release('mtx/setup/smoke') AS smoke_release;
-- a transaction that releases a keyed hold (whose slot it would hand on,
-- writing the next request's grant, before it commits) and then drops the
-- extension commits: there is nothing left to write
SELECT status FROM sync_request('mtx/setup/drop', 'h1');
SELECT status FROM sync_request('mtx/setup/drop', 'h2');
BEGIN;
SELECT sync_release('mtx/setup/drop', 'h1');
DROP EXTENSION syncwf;
COMMIT;
CREATE EXTENSION syncwf;
SELECT count(*) AS rows_after_drop FROM sync_state;
SELECT count(*) AS entries_after_drop FROM sync_entry_status() WHERE lock_name = 'mtx/setup/drop';

CREATE SCHEMA regress_util;
-- Helpers for the other tests: expect_error runs a statement and reports its
-- error as a NOTICE "error SQLSTATE: message" with the error's DETAIL and
-- HINT, or "no error"; error_of returns "SQLSTATE: message" or "no error".
-- Both run the statement in a subtransaction.
CREATE PROCEDURE regress_util.expect_error(stmt text)
LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text; hnt text;
BEGIN
    EXECUTE stmt;
    RAISE NOTICE 'no error';
EXCEPTION WHEN OTHERS OR query_canceled THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                            det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
    msg := format('error %s: %s', st, msg);
    IF det <> '' AND hnt <> '' THEN
        RAISE NOTICE '%', msg USING DETAIL = det, HINT = hnt;
    ELSIF det <> '' THEN
        RAISE NOTICE '%', msg USING DETAIL = det;
    ELSIF hnt <> '' THEN
        RAISE NOTICE '%', msg USING HINT = hnt;
    ELSE
        RAISE NOTICE '%', msg;
    END IF;
END
$$;
CREATE FUNCTION regress_util.error_of(stmt text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text;
BEGIN
    EXECUTE stmt;
    RETURN 'no error';
EXCEPTION WHEN OTHERS OR query_canceled THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
    RETURN st || ': ' || msg;
END
$$;
-- await_withdrawn waits (at most 30 s) until the keyed request of holder h
-- has neither a row in sync_state nor a queue entry: the background worker
-- withdraws a request left unfit, and sync_reconcile() skips a row the
-- worker has locked while it does.
CREATE PROCEDURE regress_util.await_withdrawn(h text)
LANGUAGE plpgsql AS $$
DECLARE
    deadline timestamptz := clock_timestamp() + interval '30 s';
BEGIN
    WHILE (EXISTS (SELECT 1 FROM sync_state WHERE workflowkey = h)
           OR EXISTS (SELECT 1 FROM sync_waiters WHERE holder = h))
          AND clock_timestamp() < deadline LOOP
        PERFORM pg_sleep(0.01);
    END LOOP;
END
$$;
GRANT USAGE ON SCHEMA regress_util TO PUBLIC;
