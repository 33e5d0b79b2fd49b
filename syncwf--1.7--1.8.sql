/* syncwf--1.7--1.8.sql: update the syncwf extension from version 1.7 to 1.8 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION syncwf UPDATE TO '1.8'" to load this file. \quit

-- Each change below is also in syncwf--1.8.sql, which installs 1.8 from
-- scratch; test/t/012_upgrade.pl checks that both give the same objects.

-- Nested limits: a row may name a parent row, whose sizelimit every
-- semaphore under the row also counts against.  A nullable column without
-- a default rewrites nothing and fires no trigger; every existing row has
-- no parent, so the foreign key finds nothing to check.
ALTER TABLE sync_limit ADD COLUMN parent text
    CONSTRAINT sync_limit_parent_fkey REFERENCES sync_limit (name)
    ON UPDATE CASCADE DEFERRABLE INITIALLY DEFERRED;
COMMENT ON COLUMN sync_limit.parent IS
    'Nested limits: the row whose sizelimit every semaphore under this row also counts against, a grant taking a slot at both levels (NULL: none); two levels only, checked at commit';
CREATE INDEX sync_limit_parent_idx ON sync_limit (parent);
ALTER TABLE sync_limit ADD COLUMN guarantee integer
    CONSTRAINT sync_limit_guarantee_check CHECK (guarantee >= 0);
COMMENT ON COLUMN sync_limit.guarantee IS
    'Nested limits: slots of the parent this child gets first, before children above their guarantees (NULL: none); it borrows idle slots up to its sizelimit';

-- Priority aging: a waiter's effective priority rises by one for every
-- aging_interval it waits, up to aging_max_priority (both or neither).
ALTER TABLE sync_limit ADD COLUMN aging_interval interval
    CONSTRAINT sync_limit_aging_interval_check CHECK (aging_interval >= interval '1 second');
ALTER TABLE sync_limit ADD COLUMN aging_max_priority integer;
ALTER TABLE sync_limit ADD CONSTRAINT sync_limit_aging_check
    CHECK ((aging_interval IS NULL) = (aging_max_priority IS NULL));
COMMENT ON COLUMN sync_limit.aging_interval IS
    'Priority aging: a waiter''s effective priority rises by one for every interval it has waited, at least 1 second (NULL: no aging; set both or neither)';
COMMENT ON COLUMN sync_limit.aging_max_priority IS
    'Priority aging: the highest effective priority a waiter rises to (one that asked for more keeps its own)';

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

-- sync_locks shows each semaphore's parent row, its limit and the slots
-- held under it.  The view and its function are made again (a function's
-- result columns cannot be changed in place); the library fills as many
-- columns as the function has, so the view works with either definition
-- meanwhile.
DROP VIEW sync_locks;
DROP FUNCTION sync_lock_status();
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

CREATE VIEW sync_locks AS
    SELECT lock_name, kind, sizelimit, holders, waiters, limit_row, max_waiters,
           slots_held, rate_tokens, rate_next_refill,
           parent_row, parent_sizelimit, parent_slots_held, guarantee, borrowed
      FROM sync_lock_status();
COMMENT ON VIEW sync_locks IS 'One row per live syncwf lock of the current database';
GRANT SELECT ON sync_locks TO PUBLIC;

-- sync_waiters says why each waiter waits: for what (waiting_for), at
-- which sync_limit row, by whose holds, and an estimate of how long.  The
-- function and both views over it are made again, as above.
DROP VIEW sync_holders, sync_waiters;
DROP FUNCTION sync_entry_status();
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

GRANT SELECT ON sync_holders, sync_waiters TO PUBLIC;

-- Preemption: a keyed request may opt in to being preempted (a column of
-- its row and an argument of sync_request); a sync_limit row says after
-- what grace its holds are preempted; sync_lock_stats counts preemptions.
-- The new columns come last in both tables, as in syncwf--1.8.sql; a
-- column with a constant default rewrites no row.
ALTER TABLE sync_limit ADD COLUMN preempt_grace interval
    CONSTRAINT sync_limit_preempt_grace_check CHECK (preempt_grace >= interval '0');
COMMENT ON COLUMN sync_limit.preempt_grace IS
    'Preemption: a waiter that cannot be granted otherwise ends preemptible keyed holds of lower priority (on a parent row: borrowed ones) after this grace (NULL: never)';
ALTER TABLE sync_state ADD COLUMN preemptible boolean NOT NULL DEFAULT false;
ALTER TABLE sync_state ADD COLUMN preempt_deadline timestamptz;
COMMENT ON COLUMN sync_state.preemptible IS
    'true: a waiter that cannot be granted otherwise may end this hold after the grace of its sync_limit row (preempt_grace)';
COMMENT ON COLUMN sync_state.preempt_deadline IS
    'A preempted hold: when its grace ends and the hold with it (lease_expires is cut to it); NULL: not preempted';

DROP FUNCTION sync_request(text, text, integer, text, interval, timestamptz, integer, text, text);
DROP FUNCTION sync_request(text[], text, integer, text, interval, timestamptz, integer, text, text);
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

-- sync_lock_stats gains the column preemptions; made again as above.
DROP VIEW sync_lock_stats;
DROP FUNCTION sync_lock_stats_rows();
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
