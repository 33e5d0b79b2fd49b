/* syncwf--1.0.sql: objects of the syncwf extension, version 1.0 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION syncwf" to load this file. \quit

-- Role allowed to change limits (and, in later versions, other shared state).
-- Roles are cluster-wide and outlive the extension, so create it only once.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'syncwf_admin') THEN
        CREATE ROLE syncwf_admin NOLOGIN;
    END IF;
END
$$;

--
-- Semaphore limits, in the form Argo's users write them: '<namespace>/<key>'.
-- The row for 'foo/bar' is the limit of the lock 'sem/foo/bar'.
--
CREATE TABLE sync_limit (
    name      text PRIMARY KEY
              CONSTRAINT sync_limit_name_check
              CHECK (name ~ '^[^/[:cntrl:]]+/[^[:cntrl:]]+$' AND octet_length(name) <= 251),
    sizelimit integer NOT NULL
              CONSTRAINT sync_limit_sizelimit_check CHECK (sizelimit >= 0)
);
COMMENT ON TABLE sync_limit IS
    'Semaphore limits: the row ''<namespace>/<key>'' sets the limit of lock ''sem/<namespace>/<key>''';
SELECT pg_catalog.pg_extension_config_dump('sync_limit', '');

REVOKE ALL ON sync_limit FROM PUBLIC;
GRANT SELECT ON sync_limit TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON sync_limit TO syncwf_admin;

-- Limit changes reach shared memory when the changing transaction commits.
CREATE FUNCTION sync_limit_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'sync_limit_changed'
LANGUAGE C;

CREATE TRIGGER sync_limit_changed
    AFTER INSERT OR UPDATE OR DELETE ON sync_limit
    FOR EACH ROW EXECUTE FUNCTION sync_limit_changed();
CREATE TRIGGER sync_limit_truncated
    AFTER TRUNCATE ON sync_limit
    FOR EACH STATEMENT EXECUTE FUNCTION sync_limit_changed();

--
-- Acquire, session scope.
--
CREATE FUNCTION sync_acquire(lock_name text, priority integer DEFAULT 0,
                             timeout interval DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sync_acquire'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_try_acquire(lock_name text, priority integer DEFAULT 0)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sync_try_acquire'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_acquire(lock_names text[], priority integer DEFAULT 0,
                             timeout interval DEFAULT NULL)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'sync_acquire_array'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_try_acquire(lock_names text[], priority integer DEFAULT 0)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'sync_try_acquire_array'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

--
-- Acquire, transaction scope.
--
CREATE FUNCTION sync_acquire_xact(lock_name text, priority integer DEFAULT 0,
                                  timeout interval DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sync_acquire_xact'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_try_acquire_xact(lock_name text, priority integer DEFAULT 0)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sync_try_acquire_xact'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_acquire_xact(lock_names text[], priority integer DEFAULT 0,
                                  timeout interval DEFAULT NULL)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'sync_acquire_xact_array'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_try_acquire_xact(lock_names text[], priority integer DEFAULT 0)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'sync_try_acquire_xact_array'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

--
-- Release.
--
CREATE FUNCTION sync_release(lock_name text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'sync_release'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_release_all()
RETURNS integer
AS 'MODULE_PATHNAME', 'sync_release_all'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

--
-- Monitoring.  The functions read shared memory; the views are the interface.
--
CREATE FUNCTION sync_lock_status(OUT lock_name text, OUT kind text,
                                 OUT sizelimit integer, OUT holders integer,
                                 OUT waiters integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'sync_lock_status'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_entry_status(OUT lock_name text, OUT state text,
                                  OUT pid integer, OUT scope text,
                                  OUT token bigint, OUT priority integer,
                                  OUT queue_position integer,
                                  OUT request_size integer,
                                  OUT since timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'sync_entry_status'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE VIEW sync_locks AS
    SELECT lock_name, kind, sizelimit, holders, waiters
      FROM sync_lock_status();
COMMENT ON VIEW sync_locks IS 'One row per live syncwf lock of the current database';

CREATE VIEW sync_holders AS
    SELECT lock_name, pid, scope, token, priority, since
      FROM sync_entry_status()
     WHERE state = 'held';
COMMENT ON VIEW sync_holders IS 'One row per granted hold of the current database';

CREATE VIEW sync_waiters AS
    SELECT lock_name, pid, scope, priority, queue_position AS position,
           request_size, since AS waiting_since
      FROM sync_entry_status()
     WHERE state = 'pending';
COMMENT ON VIEW sync_waiters IS 'One row per queue entry of the current database, in queue order';

GRANT SELECT ON sync_locks, sync_holders, sync_waiters TO PUBLIC;
