--
-- name_rules: the tables' CHECK constraints on names against the checks of
-- the C functions, so that the two cannot drift apart unnoticed.
--
--   C (src/names.c): a control character
--   is a byte 0x01-0x1F or 0x7F; lengths are counted in bytes.
--     lock name        sem/<namespace>/<key>, at most 260 bytes, namespace
--                      without "/", no control characters
--     controller       not empty, at most 256 bytes, no control characters
--     project, domain, name
--                      not empty, at most 63 bytes, no "/", no controls
--     version, execution_id
--                      not empty, at most 255 bytes, no control characters
--   SQL (syncwf--1.6.sql): sync_limit.name, sync_controller.controller,
--   sync_launch_plan's identifiers, sync_execution.execution_id.  Their
--   [:cntrl:] is PostgreSQL's, whatever the locale: U+0000-U+001F and
--   U+007F-U+009F.
--
-- Every case is a value tried on both sides: each ASCII character 1..127
-- and some multi-byte ones (U+0080-U+00A0 whole, 'é', a soft hyphen, a
-- zero-width space, the line and paragraph separators, a byte order mark,
-- U+FFFD, an emoji) alone and inside a name, in each part of it; then
-- lengths at and just past each limit in one-, two- and four-byte
-- characters, the empty string and NULL.  The C side calls the function;
-- the SQL side INSERTs the row directly.  Both run in a subtransaction that
-- is rolled back, and give 'ok' or the error's SQLSTATE:
--   22023, 22004   the C check rejects the value
--   23514, 23502   a CHECK or NOT NULL constraint refuses the row (from a C
--                  function: its check passed, its own INSERT was refused)
--   42704          the C check passed, but what the value names does not
--                  exist (a semaphore without a sync_limit row, a launch
--                  plan that is not registered)
-- The output is one line of counts per rule, then the cases where C and SQL
-- disagree, each list with a comment that says which side is stricter.
-- The lists record the differences as they are, not that each is intended;
-- a change to either side shows up as a diff.
--
CREATE EXTENSION IF NOT EXISTS syncwf;

-- what is there before, to show that nothing is left behind
CREATE TEMP TABLE nr_before AS
    SELECT (SELECT count(*) FROM sync_limit) AS limits,
           (SELECT count(*) FROM sync_controller) AS controllers,
           (SELECT count(*) FROM sync_state) AS state_rows,
           (SELECT count(*) FROM sync_launch_plan) AS plans,
           (SELECT count(*) FROM sync_execution) AS executions,
           (SELECT count(*) FROM sync_launch_event) AS events,
           (SELECT count(*) FROM sync_locks) AS locks;

-- Run one statement with the value as $1 and roll back what it did: 'ok',
-- 'null' (it returned NULL: e.g. a lock that was not available) or the
-- SQLSTATE of its error.
CREATE FUNCTION pg_temp.outcome(stmt text, val text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    r text;
BEGIN
    EXECUTE stmt INTO r USING val;
    RAISE SQLSTATE 'NRRBK' USING MESSAGE = CASE WHEN r IS NULL THEN 'null' ELSE 'ok' END;
EXCEPTION WHEN OTHERS THEN
    IF SQLSTATE = 'NRRBK' THEN
        RETURN SQLERRM;
    END IF;
    RETURN SQLSTATE;
END
$$;

-- Code points as ranges: '{1,2,3,127}' -> 'U+0001-U+0003 U+007F'.
CREATE FUNCTION pg_temp.code_ranges(codes int[]) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg(CASE WHEN lo = hi THEN u_lo ELSE u_lo || '-' || u_hi END, ' ' ORDER BY lo)
      FROM (SELECT lo, hi,
                   'U+' || lpad(upper(to_hex(lo)), 4, '0') AS u_lo,
                   'U+' || lpad(upper(to_hex(hi)), 4, '0') AS u_hi
              FROM (SELECT min(c) AS lo, max(c) AS hi
                      FROM (SELECT c, c - row_number() OVER (ORDER BY c) AS grp
                              FROM unnest(codes) AS c) s
                     GROUP BY grp) g) r
$$;

-- The rules: kind 'lock' (a sync_limit row <x> is the limit of sem/<x>),
-- 'key' (at most L bytes, "/" allowed) or 'ident' (at most 63 bytes, no
-- "/"), and the statement of each side.  The launch-plan statements use the
-- plan nrp/nrd/nrn version v1 (registered below, without a policy, so an
-- execution of it is QUEUED at once and takes no slot).
CREATE TEMP TABLE nr_rule (rule text PRIMARY KEY, ord int, kind text, maxlen int,
                           c_stmt text, sql_stmt text);
INSERT INTO nr_rule VALUES
    ('sync_limit', 1, 'lock', 256,
     $$SELECT sync_try_acquire_xact('sem/' || $1)$$,
     $$INSERT INTO sync_limit (name, sizelimit) VALUES ($1, 1) RETURNING 1$$),
    ('sync_controller', 2, 'key', 256,
     $$SELECT sync_heartbeat($1)$$,
     $$INSERT INTO sync_controller (controller, time) VALUES ($1, now()) RETURNING 1$$),
    ('sync_launch_plan.project', 3, 'ident', 63,
     $$SELECT 1 FROM sync_launch_plan_register($1, 'nrd', 'nrn', 'v1')$$,
     $$INSERT INTO sync_launch_plan (project, domain, name, version) VALUES ($1, 'nrd', 'nrn', 'v1') RETURNING 1$$),
    ('sync_launch_plan.domain', 4, 'ident', 63,
     $$SELECT 1 FROM sync_launch_plan_register('nrp', $1, 'nrn', 'v1')$$,
     $$INSERT INTO sync_launch_plan (project, domain, name, version) VALUES ('nrp', $1, 'nrn', 'v1') RETURNING 1$$),
    ('sync_launch_plan.name', 5, 'ident', 63,
     $$SELECT 1 FROM sync_launch_plan_register('nrp', 'nrd', $1, 'v1')$$,
     $$INSERT INTO sync_launch_plan (project, domain, name, version) VALUES ('nrp', 'nrd', $1, 'v1') RETURNING 1$$),
    ('sync_launch_plan.version', 6, 'key', 255,
     $$SELECT 1 FROM sync_launch_plan_register('nrp', 'nrd', 'nrn', $1)$$,
     $$INSERT INTO sync_launch_plan (project, domain, name, version) VALUES ('nrp', 'nrd', 'nrn', $1) RETURNING 1$$),
    ('sync_execution.execution_id', 7, 'key', 255,
     $$SELECT phase FROM sync_execution_create('nrp', 'nrd', 'nrn', 'v1', $1)$$,
     $$INSERT INTO sync_execution (execution_id, project, domain, name, version, phase)
       VALUES ($1, 'nrp', 'nrd', 'nrn', 'v1', 'QUEUED') RETURNING 1$$),
    ('sync_execution.project', 8, 'ident', 63,
     $$SELECT phase FROM sync_execution_create($1, 'nrd', 'nrn', 'v1', 'nr-exec')$$,
     $$INSERT INTO sync_execution (execution_id, project, domain, name, version, phase)
       VALUES ('nr-exec', $1, 'nrd', 'nrn', 'v1', 'QUEUED') RETURNING 1$$),
    ('sync_execution.domain', 9, 'ident', 63,
     $$SELECT phase FROM sync_execution_create('nrp', $1, 'nrn', 'v1', 'nr-exec')$$,
     $$INSERT INTO sync_execution (execution_id, project, domain, name, version, phase)
       VALUES ('nr-exec', 'nrp', $1, 'nrn', 'v1', 'QUEUED') RETURNING 1$$),
    ('sync_execution.name', 10, 'ident', 63,
     $$SELECT phase FROM sync_execution_create('nrp', 'nrd', $1, 'v1', 'nr-exec')$$,
     $$INSERT INTO sync_execution (execution_id, project, domain, name, version, phase)
       VALUES ('nr-exec', 'nrp', 'nrd', $1, 'v1', 'QUEUED') RETURNING 1$$),
    ('sync_execution.version', 11, 'key', 255,
     $$SELECT phase FROM sync_execution_create('nrp', 'nrd', 'nrn', $1, 'nr-exec')$$,
     $$INSERT INTO sync_execution (execution_id, project, domain, name, version, phase)
       VALUES ('nr-exec', 'nrp', 'nrd', 'nrn', $1, 'QUEUED') RETURNING 1$$);

-- the characters: U+0001-U+00A0, then U+00AD, U+00E9, U+200B, U+2028,
-- U+2029, U+FEFF, U+FFFD and U+1F600
CREATE TEMP TABLE nr_char (code int PRIMARY KEY, ch text NOT NULL);
INSERT INTO nr_char
    SELECT c, chr(c)
      FROM (SELECT generate_series(1, 160) AS c
            UNION ALL
            SELECT unnest(ARRAY[173, 233, 8203, 8232, 8233, 65279, 65533, 128512])) s;

-- where a character goes: <pre> || character || <post>
CREATE TEMP TABLE nr_position (kind text, position text, pre text, post text);
INSERT INTO nr_position VALUES
    ('lock', 'namespace alone', '', '/k'),
    ('lock', 'namespace inside', 'n', 's/k'),
    ('lock', 'key alone', 'ns/', ''),
    ('lock', 'key inside', 'ns/k', 'y'),
    ('key', 'alone', '', ''),
    ('key', 'inside', 'a', 'b'),
    ('ident', 'alone', '', ''),
    ('ident', 'inside', 'a', 'b');

CREATE TEMP TABLE nr_case (rule text NOT NULL, position text, code int, label text,
                           val text, c_result text, sql_result text);
INSERT INTO nr_case (rule, position, code, val)
    SELECT r.rule, p.position, c.code, p.pre || c.ch || p.post
      FROM nr_rule r JOIN nr_position p USING (kind) CROSS JOIN nr_char c;
-- shapes and lengths of lock names (sync_limit rows: at most 256 bytes)
INSERT INTO nr_case (rule, label, val)
    SELECT 'sync_limit', label, val
      FROM (VALUES ('empty', ''),
                   ('NULL', NULL),
                   ('no "/"', 'ns'),
                   ('empty namespace', '/k'),
                   ('empty key', 'ns/'),
                   ('"/"', '/'),
                   ('key with "/"', 'ns/a/b/'),
                   ('256 bytes, long namespace', repeat('n', 254) || '/k'),
                   ('257 bytes, long namespace', repeat('n', 255) || '/k'),
                   ('256 bytes, long key', 'n/' || repeat('k', 254)),
                   ('257 bytes, long key', 'n/' || repeat('k', 255)),
                   ('256 bytes, namespace of é', repeat('é', 127) || '/k'),
                   ('257 bytes, namespace of é', 'n' || repeat('é', 127) || '/k'),
                   ('256 bytes, key of é', 'n/' || repeat('é', 127)),
                   ('257 bytes, key of é', 'n/k' || repeat('é', 127)),
                   ('257 bytes in 256 characters, namespace', repeat('n', 253) || 'é/k'),
                   ('257 bytes in 256 characters, key', 'n/' || repeat('k', 253) || 'é'),
                   ('256 bytes, key of 4-byte characters', 'n/kk' || repeat(chr(128512), 63)),
                   ('257 bytes, key of 4-byte characters', 'n/kkk' || repeat(chr(128512), 63)),
                   ('1000 bytes', 'n/' || repeat('k', 998))) AS v(label, val);
-- shapes and lengths of the other rules (at most L bytes)
INSERT INTO nr_case (rule, label, val)
    SELECT r.rule, v.label, v.val
      FROM nr_rule r
     CROSS JOIN LATERAL
           (VALUES ('empty', ''),
                   ('NULL', NULL),
                   (format('%s bytes', r.maxlen), repeat('a', r.maxlen)),
                   (format('%s bytes', r.maxlen + 1), repeat('a', r.maxlen + 1)),
                   (format('%s bytes of é', r.maxlen),
                    repeat('a', r.maxlen % 2) || repeat('é', r.maxlen / 2)),
                   (format('%s bytes of é', r.maxlen + 1),
                    repeat('a', (r.maxlen + 1) % 2) || repeat('é', (r.maxlen + 1) / 2)),
                   (format('%s bytes in %s characters', r.maxlen + 1, r.maxlen),
                    repeat('a', r.maxlen - 1) || 'é'),
                   (format('%s bytes of 4-byte characters', r.maxlen),
                    repeat('a', r.maxlen % 4) || repeat(chr(128512), r.maxlen / 4)),
                   (format('%s bytes of 4-byte characters', r.maxlen + 1),
                    repeat('a', (r.maxlen + 1) % 4) || repeat(chr(128512), (r.maxlen + 1) / 4)),
                   ('1000 bytes', repeat('a', 1000))) AS v(label, val)
     WHERE r.kind <> 'lock';
-- every value once per rule
SELECT rule, val, count(*) FROM nr_case GROUP BY rule, val HAVING count(*) > 1;
-- the byte and character counts the labels claim
SELECT rule, label, octet_length(val) AS bytes, length(val) AS characters
  FROM nr_case
 WHERE (label ~ '^[0-9]+ bytes'
        AND octet_length(val) <> substring(label FROM '^([0-9]+) bytes')::int)
    OR (label ~ ' in [0-9]+ characters'
        AND length(val) <> substring(label FROM ' in ([0-9]+) characters')::int);

-- the launch plan the execution rules create executions of
SELECT sync_launch_plan_register('nrp', 'nrd', 'nrn', 'v1');

--
-- Run both sides.  sync_limit first: the SQL side (rolled back), then the
-- rows it accepts are committed, so that the C side finds the limit of
-- every sem/<x> whose row the table takes, then they are deleted again.
--
UPDATE nr_case c SET sql_result = pg_temp.outcome(r.sql_stmt, c.val)
  FROM nr_rule r WHERE r.rule = c.rule;
INSERT INTO sync_limit (name, sizelimit)
    SELECT val, 1 FROM nr_case WHERE rule = 'sync_limit' AND sql_result = 'ok';
UPDATE nr_case c SET c_result = pg_temp.outcome(r.c_stmt, c.val)
  FROM nr_rule r WHERE r.rule = c.rule;
DELETE FROM sync_limit
 WHERE name IN (SELECT val FROM nr_case WHERE rule = 'sync_limit' AND sql_result = 'ok');

-- the verdicts: NULL where the outcome is not one of the expected ones
CREATE VIEW pg_temp.nr_verdict AS
    SELECT c.*, r.ord,
           CASE WHEN c.c_result IN ('ok', '23514', '42704') THEN true
                WHEN c.c_result IN ('22023', '22004') THEN false END AS c_accepts,
           CASE WHEN c.sql_result = 'ok' THEN true
                WHEN c.sql_result IN ('23514', '23502') THEN false END AS sql_accepts
      FROM nr_case c JOIN nr_rule r USING (rule);

-- The disagreements: characters grouped by rule, outcome and the set of
-- characters (the positions with the same set on one line), then the other
-- cases one by one.
CREATE VIEW pg_temp.nr_disagreement AS
    SELECT rule, ord, 1 AS part, chars || ' (' || string_agg(position, ', ' ORDER BY position) || ')' AS case_,
           c_result, sql_result
      FROM (SELECT rule, ord, position, c_result, sql_result,
                   pg_temp.code_ranges(array_agg(code)) AS chars
              FROM pg_temp.nr_verdict
             WHERE code IS NOT NULL AND c_accepts IS DISTINCT FROM sql_accepts
             GROUP BY rule, ord, position, c_result, sql_result) g
     GROUP BY rule, ord, chars, c_result, sql_result
    UNION ALL
    SELECT rule, ord, 2, label, c_result, sql_result
      FROM pg_temp.nr_verdict
     WHERE code IS NULL AND c_accepts IS DISTINCT FROM sql_accepts;

-- Counts per rule: cases, both accept, both reject, only C accepts, only
-- SQL accepts, and every pair of outcomes (C/SQL) with its count.
SELECT rule, count(*) AS cases,
       count(*) FILTER (WHERE c_accepts AND sql_accepts) AS both_accept,
       count(*) FILTER (WHERE NOT c_accepts AND NOT sql_accepts) AS both_reject,
       count(*) FILTER (WHERE c_accepts AND NOT sql_accepts) AS only_c,
       count(*) FILTER (WHERE NOT c_accepts AND sql_accepts) AS only_sql
  FROM pg_temp.nr_verdict GROUP BY rule, ord ORDER BY ord;
SELECT rule, string_agg(c_result || '/' || sql_result || ' ' || n, ', '
                        ORDER BY c_result, sql_result) AS outcomes
  FROM (SELECT rule, ord, c_result, sql_result, count(*) AS n
          FROM nr_case JOIN nr_rule USING (rule)
         GROUP BY rule, ord, c_result, sql_result) s
 GROUP BY rule, ord ORDER BY ord;

--
-- sync_limit against the lock names sem/<x>.  SQL is stricter: its
-- [:cntrl:] also takes in U+0080-U+009F (the C1 controls), which the C
-- check, looking at bytes, lets through.  So sem/<x> with such a character
-- is a valid lock name that can have no limit: acquiring it fails with
-- "semaphore has no limit" (42704).  Nothing else differs.
--
SELECT case_ AS "case", c_result AS c, sql_result AS sql
  FROM pg_temp.nr_disagreement WHERE rule = 'sync_limit' ORDER BY part, case_;

--
-- sync_controller against sync_heartbeat().  C is stricter: the table's
-- constraint (not empty, at most 256 bytes) has no control-character test,
-- so a row written directly may name a controller that no function can
-- name.  U+0080-U+009F pass both.
--
SELECT case_ AS "case", c_result AS c, sql_result AS sql
  FROM pg_temp.nr_disagreement WHERE rule = 'sync_controller' ORDER BY part, case_;

--
-- sync_launch_plan against sync_launch_plan_register(), sync_execution's
-- execution_id against sync_execution_create().  SQL is stricter, on
-- U+0080-U+009F only (as for sync_limit): the C check passes and then the
-- function's own INSERT is refused by the CHECK constraint (23514).
--
SELECT rule, case_ AS "case", c_result AS c, sql_result AS sql
  FROM pg_temp.nr_disagreement
 WHERE rule LIKE 'sync_launch_plan.%' OR rule = 'sync_execution.execution_id'
 ORDER BY ord, part, case_;

--
-- sync_execution's project, domain, name and version against
-- sync_execution_create().  C is stricter: those columns have no
-- constraint at all (nor a foreign key to sync_launch_plan), so a row
-- written directly may name a plan that could never be registered (the C
-- side answers 42704 for every value its check passes: no plan of that
-- name is registered).
--
SELECT rule, case_ AS "case", c_result AS c, sql_result AS sql
  FROM pg_temp.nr_disagreement
 WHERE rule IN ('sync_execution.project', 'sync_execution.domain',
                'sync_execution.name', 'sync_execution.version')
 ORDER BY ord, part, case_;

--
-- Clean up: the plan registered above.  Everything else was rolled back or
-- deleted; the tables and the views are as they were.
--
DELETE FROM sync_launch_plan WHERE (project, domain, name) = ('nrp', 'nrd', 'nrn');
SELECT (SELECT count(*) FROM sync_limit) = limits AS limits_unchanged,
       (SELECT count(*) FROM sync_controller) = controllers AS controllers_unchanged,
       (SELECT count(*) FROM sync_state) = state_rows AS state_unchanged,
       (SELECT count(*) FROM sync_launch_plan) = plans AS plans_unchanged,
       (SELECT count(*) FROM sync_execution) = executions AS executions_unchanged,
       (SELECT count(*) FROM sync_launch_event) = events AS events_unchanged,
       (SELECT count(*) FROM sync_locks) = locks AS locks_unchanged
  FROM nr_before;
DROP VIEW pg_temp.nr_disagreement, pg_temp.nr_verdict;
DROP TABLE nr_case, nr_position, nr_char, nr_rule, nr_before;
DROP FUNCTION pg_temp.outcome(text, text), pg_temp.code_ranges(int[]);
