/* syncwf--1.8.sql: objects of the syncwf extension, version 1.8 */

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
-- The row for 'foo/bar' is the limit of the lock 'sem/foo/bar'.  A row whose
-- name ends in '/*' is a pattern: 'foo/*' is the limit of every 'sem/foo/...'
-- without a row of its own, the longest matching pattern winning.
-- max_waiters caps the semaphore's queue; rate_limit and rate_period
-- limit its grants per period; queueing 'best_effort' lets a waiter that
-- fits pass one that does not, a bounded number of times.  parent names a
-- second row every semaphore under this one also counts against (nested
-- limits, two levels; the trigger sync_limit_tree checks the rules).
--
CREATE TABLE sync_limit (
    name      text PRIMARY KEY
              CONSTRAINT sync_limit_name_check
              CHECK (name ~ '^[^/[:cntrl:]]+/[^[:cntrl:]]+$' AND octet_length(name) <= 256),
    sizelimit integer NOT NULL
              CONSTRAINT sync_limit_sizelimit_check CHECK (sizelimit >= 0),
    max_waiters integer
              CONSTRAINT sync_limit_max_waiters_check CHECK (max_waiters >= 0),
    rate_limit integer
              CONSTRAINT sync_limit_rate_limit_check CHECK (rate_limit > 0),
    rate_period interval
              CONSTRAINT sync_limit_rate_period_check CHECK (rate_period > interval '0'),
    CONSTRAINT sync_limit_rate_check CHECK ((rate_limit IS NULL) = (rate_period IS NULL)),
    queueing text
              CONSTRAINT sync_limit_queueing_check CHECK (queueing IN ('strict', 'best_effort')),
    parent    text
              CONSTRAINT sync_limit_parent_fkey REFERENCES sync_limit (name)
              ON UPDATE CASCADE DEFERRABLE INITIALLY DEFERRED,
    guarantee integer
              CONSTRAINT sync_limit_guarantee_check CHECK (guarantee >= 0),
    aging_interval interval
              CONSTRAINT sync_limit_aging_interval_check
              CHECK (aging_interval >= interval '1 second'),
    aging_max_priority integer,
    CONSTRAINT sync_limit_aging_check
              CHECK ((aging_interval IS NULL) = (aging_max_priority IS NULL)),
    preempt_grace interval
              CONSTRAINT sync_limit_preempt_grace_check
              CHECK (preempt_grace >= interval '0')
);
COMMENT ON TABLE sync_limit IS
    'Semaphore limits: the row ''<namespace>/<key>'' sets the limit of lock ''sem/<namespace>/<key>''; a row ''<prefix>/*'' that of every semaphore under the prefix without a row of its own';
COMMENT ON COLUMN sync_limit.max_waiters IS
    'Longest the queue may be: a request that would wait behind that many fails with 53400 (NULL: no cap)';
COMMENT ON COLUMN sync_limit.rate_limit IS
    'Rate: at most this many slots granted per rate_period, a token bucket refilled evenly (NULL: no rate)';
COMMENT ON COLUMN sync_limit.rate_period IS
    'The period of rate_limit (set both or neither)';
COMMENT ON COLUMN sync_limit.queueing IS
    '''strict'' (NULL: the same): grants in queue order; ''best_effort'': a waiter that fits may pass one that cannot be granted yet, at most syncwf.max_passes times each';
COMMENT ON COLUMN sync_limit.parent IS
    'Nested limits: the row whose sizelimit every semaphore under this row also counts against, a grant taking a slot at both levels (NULL: none); two levels only, checked at commit';
COMMENT ON COLUMN sync_limit.preempt_grace IS
    'Preemption: a waiter that cannot be granted otherwise ends preemptible keyed holds of lower priority (on a parent row: borrowed ones) after this grace (NULL: never)';
COMMENT ON COLUMN sync_limit.guarantee IS
    'Nested limits: slots of the parent this child gets first, before children above their guarantees (NULL: none); it borrows idle slots up to its sizelimit';
COMMENT ON COLUMN sync_limit.aging_interval IS
    'Priority aging: a waiter''s effective priority rises by one for every interval it has waited, at least 1 second (NULL: no aging; set both or neither)';
COMMENT ON COLUMN sync_limit.aging_max_priority IS
    'Priority aging: the highest effective priority a waiter rises to (one that asked for more keeps its own)';
CREATE INDEX sync_limit_parent_idx ON sync_limit (parent);
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

-- Nested limits (1.8): the rules of parent, checked when the transaction
-- commits, so that it may insert a child before its parent, or change a
-- parent and its children together in any order.  Each event reads the row
-- again by name (it may have changed again, been renamed or been deleted
-- since; then its own event, or none, is the one that counts) and checks it
-- both as a child and as a parent.  A parent that does not exist is the
-- foreign key's (23503).  Renaming a parent cascades to its children, whose
-- rows, read again, name it under its new name.  The parent is locked
-- (FOR SHARE) until commit, so that a concurrent change of it waits for
-- this transaction, and sees its result, or this check waits for that one.
-- The guarantees of the rows of their own (not patterns, which stand for
-- any number of semaphores) under parent row 'parent' must fit in its
-- sizelimit: sync_limit_check_tree() calls it for a child and a parent.
CREATE FUNCTION sync_limit_check_guarantees(parent text, parent_sizelimit integer)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    total bigint;
    n integer;
BEGIN
    SELECT sum(l.guarantee), count(l.guarantee) INTO total, n
      FROM @extschema@.sync_limit l
     WHERE l.parent = sync_limit_check_guarantees.parent AND right(l.name, 2) <> '/*';
    IF total > parent_sizelimit THEN
        RAISE EXCEPTION 'the guarantees under sync_limit row "%" add up to %, above its sizelimit %',
                        parent, total, parent_sizelimit
            USING ERRCODE = 'check_violation', TABLE = 'sync_limit',
                  CONSTRAINT = 'sync_limit_tree',
                  DETAIL = format('%s rows of their own name "%s" as their parent with a guarantee; every one must be able to have its share at once.',
                                  n, parent),
                  HINT = format('Lower the guarantees of the children of "%s", or raise its sizelimit to at least %s.',
                                parent, total);
    END IF;
END
$$;

CREATE FUNCTION sync_limit_check_tree()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;   -- the row, as the transaction has it now
    p record;   -- its parent
    c record;   -- a child of it
BEGIN
    SELECT l.name, l.sizelimit, l.parent, l.guarantee INTO r
      FROM @extschema@.sync_limit l WHERE l.name = NEW.name;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;

    -- A guarantee: a share of a parent, within the row's own sizelimit.
    IF r.guarantee IS NOT NULL AND r.parent IS NULL THEN
        RAISE EXCEPTION 'sync_limit row "%" has a guarantee but no parent', r.name
            USING ERRCODE = 'check_violation', TABLE = 'sync_limit',
                  CONSTRAINT = 'sync_limit_tree',
                  DETAIL = 'A guarantee is the share of its parent''s slots a child gets first.',
                  HINT = format('Give "%s" a parent, or set its guarantee to NULL.', r.name);
    END IF;
    IF r.guarantee > r.sizelimit THEN
        RAISE EXCEPTION 'sync_limit row "%" has a guarantee above its ceiling: guarantee % > sizelimit %',
                        r.name, r.guarantee, r.sizelimit
            USING ERRCODE = 'check_violation', TABLE = 'sync_limit',
                  CONSTRAINT = 'sync_limit_tree',
                  DETAIL = 'A child''s sizelimit is the most it may borrow up to; its guarantee is the part of that it gets first.',
                  HINT = format('Lower the guarantee of "%s" to at most %s, or raise its sizelimit.',
                                r.name, r.sizelimit);
    END IF;

    -- The row as a child.
    IF r.parent IS NOT NULL THEN
        IF r.parent = r.name THEN
            RAISE EXCEPTION 'sync_limit row "%" cannot be its own parent', r.name
                USING ERRCODE = 'check_violation', TABLE = 'sync_limit',
                      CONSTRAINT = 'sync_limit_tree',
                      HINT = 'Set its parent to another row, or to NULL.';
        END IF;
        IF starts_with(r.name, 'launchplan/') THEN
            RAISE EXCEPTION 'launch plan row "%" cannot have a parent', r.name
                USING ERRCODE = 'check_violation', TABLE = 'sync_limit',
                      CONSTRAINT = 'sync_limit_tree',
                      DETAIL = 'The semaphores of launch plans take no part in nested limits.',
                      HINT = format('Set the parent of "%s" to NULL.', r.name);
        END IF;
        IF starts_with(r.parent, 'launchplan/') THEN
            RAISE EXCEPTION 'launch plan row "%" cannot be the parent of "%"', r.parent, r.name
                USING ERRCODE = 'check_violation', TABLE = 'sync_limit',
                      CONSTRAINT = 'sync_limit_tree',
                      DETAIL = 'The semaphores of launch plans take no part in nested limits.',
                      HINT = format('Name a row outside launchplan/ as the parent of "%s".', r.name);
        END IF;
        IF right(r.parent, 2) = '/*' THEN
            RAISE EXCEPTION 'pattern row "%" cannot be the parent of "%"', r.parent, r.name
                USING ERRCODE = 'check_violation', TABLE = 'sync_limit',
                      CONSTRAINT = 'sync_limit_tree',
                      DETAIL = 'A pattern row is the default limit of many semaphores, not one counter they could share.',
                      HINT = format('Name a row that does not end in "/*" as the parent of "%s".', r.name);
        END IF;
        SELECT l.name, l.sizelimit, l.parent INTO p
          FROM @extschema@.sync_limit l WHERE l.name = r.parent
           FOR SHARE;
        IF FOUND THEN
            IF p.parent IS NOT NULL THEN
                RAISE EXCEPTION 'sync_limit rows "%", "%" and "%" would nest three levels deep',
                                r.name, p.name, p.parent
                    USING ERRCODE = 'check_violation', TABLE = 'sync_limit',
                          CONSTRAINT = 'sync_limit_tree',
                          DETAIL = format('"%s" has the parent "%s", which has the parent "%s".',
                                          r.name, p.name, p.parent),
                          HINT = format('Nesting deeper than two levels is not supported in this release: '
                                        'set the parent of "%s" to NULL, or give "%s" the parent "%s" instead.',
                                        p.name, r.name, p.parent);
            END IF;
            IF r.sizelimit > p.sizelimit THEN
                RAISE EXCEPTION 'sync_limit row "%" has a ceiling above its parent "%": sizelimit % > %',
                                r.name, p.name, r.sizelimit, p.sizelimit
                    USING ERRCODE = 'check_violation', TABLE = 'sync_limit',
                          CONSTRAINT = 'sync_limit_tree',
                          DETAIL = 'A child''s sizelimit cannot be above its parent''s, which caps the child and its siblings together.',
                          HINT = format('Lower the sizelimit of "%s" to at most %s, or raise that of "%s" to at least %s.',
                                        r.name, p.sizelimit, p.name, r.sizelimit);
            END IF;
            PERFORM @extschema@.sync_limit_check_guarantees(p.name, p.sizelimit);
        END IF;
    END IF;

    -- The row as a parent: its child with the highest sizelimit.
    SELECT l.name, l.sizelimit INTO c
      FROM @extschema@.sync_limit l WHERE l.parent = r.name AND l.name <> r.name
     ORDER BY l.sizelimit DESC, l.name
     LIMIT 1;
    IF FOUND THEN
        IF starts_with(r.name, 'launchplan/') THEN
            RAISE EXCEPTION 'launch plan row "%" cannot be the parent of "%"', r.name, c.name
                USING ERRCODE = 'check_violation', TABLE = 'sync_limit',
                      CONSTRAINT = 'sync_limit_tree',
                      DETAIL = 'The semaphores of launch plans take no part in nested limits.',
                      HINT = format('Name a row outside launchplan/ as the parent of "%s".', c.name);
        END IF;
        IF right(r.name, 2) = '/*' THEN
            RAISE EXCEPTION 'pattern row "%" cannot be the parent of "%"', r.name, c.name
                USING ERRCODE = 'check_violation', TABLE = 'sync_limit',
                      CONSTRAINT = 'sync_limit_tree',
                      DETAIL = 'A pattern row is the default limit of many semaphores, not one counter they could share.',
                      HINT = format('Name a row that does not end in "/*" as the parent of "%s".', c.name);
        END IF;
        IF r.parent IS NOT NULL THEN
            RAISE EXCEPTION 'sync_limit rows "%", "%" and "%" would nest three levels deep',
                            c.name, r.name, r.parent
                USING ERRCODE = 'check_violation', TABLE = 'sync_limit',
                      CONSTRAINT = 'sync_limit_tree',
                      DETAIL = format('"%s" has the parent "%s", which has the parent "%s".',
                                      c.name, r.name, r.parent),
                      HINT = format('Nesting deeper than two levels is not supported in this release: '
                                    'set the parent of "%s" to NULL, or give "%s" the parent "%s" instead.',
                                    r.name, c.name, r.parent);
        END IF;
        IF c.sizelimit > r.sizelimit THEN
            RAISE EXCEPTION 'sync_limit row "%" has a ceiling above its parent "%": sizelimit % > %',
                            c.name, r.name, c.sizelimit, r.sizelimit
                USING ERRCODE = 'check_violation', TABLE = 'sync_limit',
                      CONSTRAINT = 'sync_limit_tree',
                      DETAIL = 'A child''s sizelimit cannot be above its parent''s, which caps the child and its siblings together.',
                      HINT = format('Lower the sizelimit of "%s" to at most %s, or raise that of "%s" to at least %s.',
                                    c.name, r.sizelimit, r.name, c.sizelimit);
        END IF;
        PERFORM @extschema@.sync_limit_check_guarantees(r.name, r.sizelimit);
    END IF;
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER sync_limit_tree
    AFTER INSERT OR UPDATE ON sync_limit
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION sync_limit_check_tree();

--
-- Weights of fair keys: within one priority, a queue is shared among fair
-- keys in proportion to their weights (docs/reference.md, fair queues).
--
CREATE TABLE sync_fair_weight (
    pattern  text NOT NULL
             CONSTRAINT sync_fair_weight_pattern_check
             CHECK (pattern ~ '^[^/[:cntrl:]]+/[^[:cntrl:]]+$' AND octet_length(pattern) <= 256),
    fair_key text NOT NULL
             CONSTRAINT sync_fair_weight_fair_key_check
             CHECK (fair_key ~ '^[^[:cntrl:]]+$' AND octet_length(fair_key) <= 63),
    weight   integer NOT NULL DEFAULT 1
             CONSTRAINT sync_fair_weight_weight_check CHECK (weight BETWEEN 1 AND 1000000),
    PRIMARY KEY (pattern, fair_key)
);
COMMENT ON TABLE sync_fair_weight IS
    'Weights of fair keys: the row (''<namespace>/<key>'', K) sets the weight of fair key K on locks ''mtx/<namespace>/<key>'' and ''sem/<namespace>/<key>''; a pattern ''<prefix>/*'' on every lock under the prefix without a row of its own; 1 where no row applies';
SELECT pg_catalog.pg_extension_config_dump('sync_fair_weight', '');

REVOKE ALL ON sync_fair_weight FROM PUBLIC;
GRANT SELECT ON sync_fair_weight TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON sync_fair_weight TO syncwf_admin;

-- Weight changes reach the queues when the changing transaction commits.
CREATE FUNCTION sync_fair_weight_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'sync_fair_weight_changed'
LANGUAGE C;

CREATE TRIGGER sync_fair_weight_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON sync_fair_weight
    FOR EACH STATEMENT EXECUTE FUNCTION sync_fair_weight_changed();

--
-- Acquire, session scope.
--
CREATE FUNCTION sync_acquire(lock_name text, priority integer DEFAULT 0,
                             timeout interval DEFAULT NULL,
                             slots integer DEFAULT 1,
                             mode text DEFAULT 'exclusive',
                             fair_key text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sync_acquire'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_try_acquire(lock_name text, priority integer DEFAULT 0,
                                 slots integer DEFAULT 1,
                                 mode text DEFAULT 'exclusive')
RETURNS bigint
AS 'MODULE_PATHNAME', 'sync_try_acquire'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_acquire(lock_names text[], priority integer DEFAULT 0,
                             timeout interval DEFAULT NULL,
                             slots integer DEFAULT 1,
                             mode text DEFAULT 'exclusive',
                             fair_key text DEFAULT NULL)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'sync_acquire_array'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_try_acquire(lock_names text[], priority integer DEFAULT 0,
                                 slots integer DEFAULT 1,
                                 mode text DEFAULT 'exclusive')
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'sync_try_acquire_array'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

--
-- Acquire, transaction scope.
--
CREATE FUNCTION sync_acquire_xact(lock_name text, priority integer DEFAULT 0,
                                  timeout interval DEFAULT NULL,
                                  slots integer DEFAULT 1,
                                  mode text DEFAULT 'exclusive',
                                  fair_key text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sync_acquire_xact'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_try_acquire_xact(lock_name text, priority integer DEFAULT 0,
                                      slots integer DEFAULT 1,
                                      mode text DEFAULT 'exclusive')
RETURNS bigint
AS 'MODULE_PATHNAME', 'sync_try_acquire_xact'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_acquire_xact(lock_names text[], priority integer DEFAULT 0,
                                  timeout interval DEFAULT NULL,
                                  slots integer DEFAULT 1,
                                  mode text DEFAULT 'exclusive',
                                  fair_key text DEFAULT NULL)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'sync_acquire_xact_array'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_try_acquire_xact(lock_names text[], priority integer DEFAULT 0,
                                      slots integer DEFAULT 1,
                                      mode text DEFAULT 'exclusive')
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
                                 OUT waiters integer, OUT limit_row text,
                                 OUT max_waiters integer, OUT slots_held integer,
                                 OUT rate_tokens integer,
                                 OUT rate_next_refill timestamptz,
                                 OUT parent_row text,
                                 OUT parent_sizelimit integer,
                                 OUT parent_slots_held integer,
                                 OUT guarantee integer, OUT borrowed integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'sync_lock_status'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_entry_status(OUT lock_name text, OUT state text,
                                  OUT pid integer, OUT scope text,
                                  OUT token bigint, OUT priority integer,
                                  OUT queue_position integer,
                                  OUT request_size integer,
                                  OUT since timestamptz,
                                  OUT holder text, OUT controller text,
                                  OUT lease_expires timestamptz,
                                  OUT active boolean, OUT slots integer,
                                  OUT mode text, OUT passes integer,
                                  OUT fair_key text, OUT fair_weight integer,
                                  OUT waiting_for text, OUT waiting_for_row text,
                                  OUT blocking_pids integer[],
                                  OUT blocking_holders text[],
                                  OUT estimated_wait interval,
                                  OUT effective_priority integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'sync_entry_status'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE VIEW sync_locks AS
    SELECT lock_name, kind, sizelimit, holders, waiters, limit_row, max_waiters,
           slots_held, rate_tokens, rate_next_refill,
           parent_row, parent_sizelimit, parent_slots_held, guarantee, borrowed
      FROM sync_lock_status();
COMMENT ON VIEW sync_locks IS 'One row per live syncwf lock of the current database';

CREATE VIEW sync_holders AS
    SELECT lock_name, pid, scope, token, priority, since,
           holder, controller, lease_expires, slots, mode, fair_key
      FROM sync_entry_status()
     WHERE state = 'held';
COMMENT ON VIEW sync_holders IS 'One row per granted hold of the current database';

CREATE VIEW sync_waiters AS
    SELECT lock_name, pid, scope, priority, effective_priority,
           queue_position AS position,
           request_size, since AS waiting_since, holder, controller, active,
           slots, mode, passes, fair_key, fair_weight,
           waiting_for, waiting_for_row, blocking_pids, blocking_holders,
           estimated_wait
      FROM sync_entry_status()
     WHERE state = 'pending';
COMMENT ON VIEW sync_waiters IS 'One row per queue entry of the current database, in queue order; entries of inactive controllers (active = false, no position) are passed over';

GRANT SELECT ON sync_locks, sync_holders, sync_waiters TO PUBLIC;

-- Per-lock statistics: grants, waits and how they ended (a timeout, a
-- cancel, a deadlock), wait times from a histogram, holds, the longest
-- queue (src/stats.c).
CREATE FUNCTION sync_lock_stats_rows(OUT lock_name text,
                                     OUT grants_immediate bigint,
                                     OUT grants_waited bigint,
                                     OUT timeouts bigint, OUT cancels bigint,
                                     OUT deadlocks bigint,
                                     OUT wait_count bigint,
                                     OUT wait_total interval,
                                     OUT wait_p50 interval, OUT wait_p99 interval,
                                     OUT wait_max interval,
                                     OUT hold_count bigint,
                                     OUT hold_total interval,
                                     OUT max_queue integer,
                                     OUT stats_reset timestamptz,
                                     OUT preemptions bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'sync_lock_stats_rows'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE VIEW sync_lock_stats AS
    SELECT lock_name, grants_immediate, grants_waited, timeouts, cancels,
           deadlocks, preemptions, wait_count, wait_total, wait_p50, wait_p99, wait_max,
           hold_count, hold_total, max_queue, stats_reset
      FROM sync_lock_stats_rows();
COMMENT ON VIEW sync_lock_stats IS 'Per-lock statistics of the current database since the last reset: one row per lock, per namespace (''<kind>/<namespace>/*'') for locks beyond syncwf.stats_max_locks, ''*'' beyond that';
GRANT SELECT ON sync_lock_stats TO PUBLIC;

CREATE FUNCTION sync_stats_reset(lock_name text DEFAULT NULL)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'sync_stats_reset_sql'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION sync_stats_reset(text) IS 'Reset the statistics of one row of sync_lock_stats, or of all rows of the current database (NULL)';

-- Administration only; the function checks it too.
REVOKE EXECUTE ON FUNCTION sync_stats_reset(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION sync_stats_reset(text) TO syncwf_admin;

--
-- Keyed holds: held or requested on behalf of a holder key (a workflow),
-- durable across disconnects, restarts, crashes and failover.  The tables
-- are the ones Argo's users know; syncwf keeps them in step with shared
-- memory.  Rows are written by syncwf; DELETE releases (at commit).
--
CREATE TABLE sync_controller (
    controller text PRIMARY KEY
               CONSTRAINT sync_controller_name_check
               CHECK (controller <> '' AND octet_length(controller) <= 256),
    time       timestamptz NOT NULL
);
COMMENT ON TABLE sync_controller IS
    'Controllers and their last heartbeat, always stamped with the server clock; DELETE a row to make that controller inactive';

CREATE TABLE sync_state (
    name          text NOT NULL,           -- lock: 'sem/<ns>/<key>' or 'mtx/<ns>/<key>'
    workflowkey   text NOT NULL,           -- holder key
    controller    text,                    -- controller that made the request, if any
    held          boolean NOT NULL,        -- true: held; false: pending
    priority      integer NOT NULL,
    time          timestamptz NOT NULL,    -- queue time (workflow creation time if given)
    token         bigint,                  -- fencing token of the current grant
    granted_at    timestamptz,
    lease         interval,
    lease_expires timestamptz,
    owner         regrole NOT NULL,        -- role that made the request
    request_id    bigint NOT NULL,         -- locks requested together share it
    seq           bigint NOT NULL,         -- arrival order
    admit_limit   integer,                 -- granted only while fewer hold the lock (launch plans)
    claim         boolean NOT NULL DEFAULT false,  -- inserted by its writer (Argo), granted on its claim
    slots         integer NOT NULL DEFAULT 1       -- slots of the semaphore it takes
                  CONSTRAINT sync_state_slots_check CHECK (slots >= 1),
    mode          text                             -- mutex: 'exclusive' or 'shared'; NULL for a semaphore
                  CONSTRAINT sync_state_mode_check CHECK (mode IN ('exclusive', 'shared')),
    fair_key      text                             -- tenant whose share of the queue it takes; NULL: none
                  CONSTRAINT sync_state_fair_key_check
                  CHECK (fair_key ~ '^[^[:cntrl:]]+$' AND octet_length(fair_key) <= 63),
    preemptible   boolean NOT NULL DEFAULT false,  -- a waiter may preempt the hold
    preempt_deadline timestamptz,                  -- preempted: the hold ends then
    PRIMARY KEY (name, workflowkey)
);
-- A queue table: every request inserts a row and every release deletes one.
-- Vacuum it as soon as a few hundred rows are dead (not at 20% of the
-- table), so that its primary key index does not fill with dead entries.
ALTER TABLE sync_state SET (autovacuum_vacuum_scale_factor = 0,
                            autovacuum_vacuum_threshold = 500,
                            autovacuum_vacuum_cost_delay = 0);
COMMENT ON TABLE sync_state IS
    'Keyed holds (held) and requests (pending); DELETE a row to release it (takes effect at commit)';

COMMENT ON COLUMN sync_state.slots IS
    'Slots of the semaphore the request takes (1 for a mutex)';
COMMENT ON COLUMN sync_state.mode IS
    '''exclusive'' or ''shared'' for a mutex, NULL for a semaphore';
COMMENT ON COLUMN sync_state.fair_key IS
    'Fair key (a tenant, user or project) whose share of each queue the request takes; NULL: the implicit key of requests without one';
COMMENT ON COLUMN sync_state.claim IS
    'true: inserted by its writer (Argo''s controller) and granted only when that writer sets held = true';
COMMENT ON COLUMN sync_state.preemptible IS
    'true: a waiter that cannot be granted otherwise may end this hold after the grace of its sync_limit row (preempt_grace)';
COMMENT ON COLUMN sync_state.preempt_deadline IS
    'A preempted hold: when its grace ends and the hold with it (lease_expires is cut to it); NULL: not preempted';

REVOKE ALL ON sync_state, sync_controller FROM PUBLIC;
GRANT SELECT ON sync_state, sync_controller TO PUBLIC;
GRANT SELECT, DELETE, TRUNCATE ON sync_state TO syncwf_admin;
GRANT INSERT, UPDATE ON sync_state TO syncwf_admin;
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON sync_controller TO syncwf_admin;

-- What Argo's migration creates besides the tables above: its lock table,
-- and the record of its migration, at the last change of Argo 3.7 and 4.x,
-- so that the migration finds nothing to do (docs/argo.md).
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

CREATE FUNCTION sync_state_guard()
RETURNS trigger
AS 'MODULE_PATHNAME', 'sync_state_guard'
LANGUAGE C;

CREATE FUNCTION sync_state_deleted()
RETURNS trigger
AS 'MODULE_PATHNAME', 'sync_state_deleted'
LANGUAGE C;

CREATE FUNCTION sync_controller_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'sync_controller_changed'
LANGUAGE C;

CREATE FUNCTION sync_controller_stamp()
RETURNS trigger
AS 'MODULE_PATHNAME', 'sync_controller_stamp'
LANGUAGE C;

CREATE TRIGGER sync_controller_stamp
    BEFORE INSERT OR UPDATE ON sync_controller
    FOR EACH ROW EXECUTE FUNCTION sync_controller_stamp();
CREATE TRIGGER sync_state_guard
    BEFORE INSERT OR UPDATE ON sync_state
    FOR EACH ROW EXECUTE FUNCTION sync_state_guard();
CREATE TRIGGER sync_state_deleted
    AFTER DELETE ON sync_state
    FOR EACH ROW EXECUTE FUNCTION sync_state_deleted();
CREATE TRIGGER sync_state_truncated
    AFTER TRUNCATE ON sync_state
    FOR EACH STATEMENT EXECUTE FUNCTION sync_state_deleted();
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
CREATE TRIGGER sync_controller_changed
    AFTER INSERT OR UPDATE OR DELETE ON sync_controller
    FOR EACH ROW EXECUTE FUNCTION sync_controller_changed();
CREATE TRIGGER sync_controller_truncated
    AFTER TRUNCATE ON sync_controller
    FOR EACH STATEMENT EXECUTE FUNCTION sync_controller_changed();

CREATE FUNCTION sync_request(lock_name text, holder text,
                             priority integer DEFAULT 0,
                             controller text DEFAULT NULL,
                             lease interval DEFAULT NULL,
                             queued_at timestamptz DEFAULT NULL,
                             slots integer DEFAULT 1,
                             mode text DEFAULT 'exclusive',
                             fair_key text DEFAULT NULL,
                             preemptible boolean DEFAULT false)
RETURNS TABLE (status text, token bigint, queue_position integer)
AS 'MODULE_PATHNAME', 'sync_request'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;

CREATE FUNCTION sync_request(lock_names text[], holder text,
                             priority integer DEFAULT 0,
                             controller text DEFAULT NULL,
                             lease interval DEFAULT NULL,
                             queued_at timestamptz DEFAULT NULL,
                             slots integer DEFAULT 1,
                             mode text DEFAULT 'exclusive',
                             fair_key text DEFAULT NULL,
                             preemptible boolean DEFAULT false)
RETURNS TABLE (lock_name text, status text, token bigint, queue_position integer)
AS 'MODULE_PATHNAME', 'sync_request_array'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 4;

CREATE FUNCTION sync_release(lock_name text, holder text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'sync_release_keyed'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_release_holder(holder text)
RETURNS integer
AS 'MODULE_PATHNAME', 'sync_release_holder'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_heartbeat(controller text)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'sync_heartbeat'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_refresh(lock_name text, holder text, lease interval DEFAULT NULL)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'sync_refresh'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_is_held(lock_name text, holder text, token bigint DEFAULT NULL)
RETURNS boolean
AS 'MODULE_PATHNAME', 'sync_is_held'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_wait(lock_name text, holder text, timeout interval DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'sync_wait'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_wait(lock_names text[], holder text, timeout interval DEFAULT NULL)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'sync_wait_array'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_channel(controller text)
RETURNS text
AS 'MODULE_PATHNAME', 'sync_channel'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION sync_force_release(lock_name text, holder text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'sync_force_release'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_forget_controller(controller text, release_holds boolean DEFAULT false)
RETURNS integer
AS 'MODULE_PATHNAME', 'sync_forget_controller'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_reconcile()
RETURNS integer
AS 'MODULE_PATHNAME', 'sync_reconcile'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Administration only; the functions check it too.
REVOKE EXECUTE ON FUNCTION sync_force_release(text, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION sync_forget_controller(text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION sync_force_release(text, text) TO syncwf_admin;
GRANT EXECUTE ON FUNCTION sync_forget_controller(text, boolean) TO syncwf_admin;

--
-- Launch-plan concurrency policies (Flyte's WAIT / ABORT / REPLACE / SKIP).
-- Plans, versions and executions are plain rows; each plan name is the
-- semaphore 'sem/launchplan/<project>/<domain>/<name>' whose keyed holders
-- are execution ids.
--
CREATE TABLE sync_launch_plan (
    project         text NOT NULL,
    domain          text NOT NULL,
    name            text NOT NULL,
    version         text NOT NULL,
    max_concurrency integer
                    CONSTRAINT sync_launch_plan_max_check CHECK (max_concurrency >= 0),
    behavior        text
                    CONSTRAINT sync_launch_plan_behavior_check
                    CHECK (behavior IN ('WAIT', 'ABORT', 'REPLACE', 'SKIP')),
    scheduling      text NOT NULL DEFAULT 'FIFO'
                    CONSTRAINT sync_launch_plan_scheduling_check
                    CHECK (scheduling IN ('FIFO', 'LIFO', 'PRIORITY')),
    max_pending     interval
                    CONSTRAINT sync_launch_plan_max_pending_check CHECK (max_pending > interval '0'),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project, domain, name, version),
    CONSTRAINT sync_launch_plan_policy_check
        CHECK ((max_concurrency IS NULL) = (behavior IS NULL)),
    CONSTRAINT sync_launch_plan_ident_check
        CHECK (project ~ '^[^/[:cntrl:]]{1,63}$' AND domain ~ '^[^/[:cntrl:]]{1,63}$'
               AND name ~ '^[^/[:cntrl:]]{1,63}$' AND version ~ '^[^[:cntrl:]]+$'
               AND octet_length(project) <= 63 AND octet_length(domain) <= 63
               AND octet_length(name) <= 63 AND octet_length(version) <= 255)
);
COMMENT ON TABLE sync_launch_plan IS
    'Launch plan versions and their concurrency policy (NULL max_concurrency: none); edits act at commit';
SELECT pg_catalog.pg_extension_config_dump('sync_launch_plan', '');

CREATE TABLE sync_execution (
    execution_id text PRIMARY KEY
                 CONSTRAINT sync_execution_id_check
                 CHECK (execution_id ~ '^[^[:cntrl:]]+$' AND octet_length(execution_id) <= 255),
    project      text NOT NULL,
    domain       text NOT NULL,
    name         text NOT NULL,
    version      text NOT NULL,
    phase        text NOT NULL
                 CONSTRAINT sync_execution_phase_check
                 CHECK (phase IN ('PENDING', 'QUEUED', 'RUNNING', 'SUCCEEDING', 'SUCCEEDED',
                                  'FAILING', 'FAILED', 'ABORTING', 'ABORTED', 'TIMED_OUT')),
    reason       text,
    priority     integer NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    queued_at    timestamptz,              -- when it got its slot (QUEUED)
    started_at   timestamptz,              -- first RUNNING
    finished_at  timestamptz,              -- terminal phase reached
    owner        regrole NOT NULL DEFAULT current_user::regrole  -- role that created it
)
-- room on each page for the new version of a row moved to QUEUED or RUNNING,
-- which then needs no new index entry (a HOT update)
WITH (fillfactor = 90);
SELECT pg_catalog.pg_extension_config_dump('sync_execution', '');
COMMENT ON TABLE sync_execution IS
    'Executions of launch plans; active phases hold a slot of the plan''s semaphore';
-- Only live executions are indexed by plan: history does not slow counting.
-- The predicate is on finished_at, not on phase, so that a move between two
-- live phases changes no indexed column; the trigger sync_execution_finished
-- keeps finished_at set exactly when the phase is final.
CREATE INDEX sync_execution_live ON sync_execution (project, domain, name, created_at)
    WHERE finished_at IS NULL;
CREATE INDEX sync_execution_created ON sync_execution (project, domain, name, created_at);

CREATE TABLE sync_launch_event (
    event_id              bigserial PRIMARY KEY,
    at                    timestamptz NOT NULL DEFAULT clock_timestamp(),
    event                 text NOT NULL
                          CHECK (event IN ('SKIPPED', 'ABORTED', 'REPLACED', 'PROMOTED', 'TIMED_OUT')),
    project               text NOT NULL,
    domain                text NOT NULL,
    name                  text NOT NULL,
    version               text NOT NULL,
    execution_id          text NOT NULL,
    replaced_execution_id text,
    reason                text
);
SELECT pg_catalog.pg_extension_config_dump('sync_launch_event', '');
SELECT pg_catalog.pg_extension_config_dump('sync_launch_event_event_id_seq', '');
COMMENT ON TABLE sync_launch_event IS
    'Every skip, abort, replacement, promotion and time-out of a launch plan execution';
CREATE INDEX sync_launch_event_plan ON sync_launch_event (project, domain, name, at);

REVOKE ALL ON sync_launch_plan, sync_execution, sync_launch_event FROM PUBLIC;
GRANT SELECT ON sync_launch_plan, sync_execution, sync_launch_event TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON sync_launch_plan, sync_execution TO syncwf_admin;
GRANT SELECT, DELETE ON sync_launch_event TO syncwf_admin;

CREATE FUNCTION sync_launch_plan_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'sync_launch_plan_changed'
LANGUAGE C;

CREATE FUNCTION sync_execution_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'sync_execution_changed'
LANGUAGE C;

CREATE TRIGGER sync_launch_plan_changed
    AFTER INSERT OR UPDATE OR DELETE ON sync_launch_plan
    FOR EACH STATEMENT EXECUTE FUNCTION sync_launch_plan_changed();
CREATE TRIGGER sync_execution_changed
    AFTER UPDATE OR DELETE ON sync_execution
    FOR EACH STATEMENT EXECUTE FUNCTION sync_execution_changed();

-- finished_at is set exactly when the phase is final, whoever writes the row
CREATE FUNCTION sync_execution_finished()
RETURNS trigger
AS 'MODULE_PATHNAME', 'sync_execution_finished'
LANGUAGE C;
CREATE TRIGGER sync_execution_finished
    BEFORE INSERT OR UPDATE OF phase, finished_at ON sync_execution
    FOR EACH ROW EXECUTE FUNCTION sync_execution_finished();

CREATE FUNCTION sync_launch_plan_register(project text, domain text, name text, version text,
                                          max_concurrency integer DEFAULT NULL,
                                          behavior text DEFAULT NULL,
                                          scheduling text DEFAULT 'FIFO',
                                          max_pending interval DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'sync_launch_plan_register'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION sync_execution_create(project text, domain text, name text, version text,
                                      execution_id text, priority integer DEFAULT 0,
                                      raise_on_limit boolean DEFAULT false)
RETURNS TABLE (phase text, reason text, replaced_execution_id text)
AS 'MODULE_PATHNAME', 'sync_execution_create'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;

CREATE FUNCTION sync_execution_update(execution_id text, phase text)
RETURNS text
AS 'MODULE_PATHNAME', 'sync_execution_update'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

--
-- Metrics per plan name (the RFC's metrics): live counts, skips and aborts
-- in a window, and time spent pending by executions created in it.
--
CREATE FUNCTION sync_launch_plan_metrics(window_length interval DEFAULT interval '1 hour')
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

CREATE VIEW sync_launch_plan_stats AS
    SELECT * FROM sync_launch_plan_metrics(interval '1 hour');
COMMENT ON VIEW sync_launch_plan_stats IS
    'Per launch plan: active and pending executions, events and time spent pending over the last hour';
GRANT SELECT ON sync_launch_plan_stats TO PUBLIC;

-- syncwf's shared memory, which grows with use up to syncwf.max_memory
-- (src/core/shared_pool.c): what it has taken, what is in use, and the
-- locks, entries and holder keys in it.
CREATE FUNCTION sync_memory_status(OUT allocated_bytes bigint,
                                   OUT used_bytes bigint,
                                   OUT max_bytes bigint,
                                   OUT locks bigint, OUT cached_locks bigint,
                                   OUT entries bigint, OUT holders bigint,
                                   OUT lock_slots bigint,
                                   OUT entry_slots bigint,
                                   OUT holder_slots bigint,
                                   OUT grows_refused bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'sync_memory_status'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE VIEW sync_memory AS
    SELECT allocated_bytes, used_bytes, max_bytes,
           round(100.0 * allocated_bytes / max_bytes, 1) AS pct_of_max,
           locks, cached_locks, entries, holders,
           lock_slots, entry_slots, holder_slots, grows_refused
      FROM sync_memory_status();
COMMENT ON VIEW sync_memory IS
    'syncwf''s shared memory, over all databases: bytes taken, in use and allowed (syncwf.max_memory), and the locks, entries and holder keys in it';
GRANT SELECT ON sync_memory TO PUBLIC;
