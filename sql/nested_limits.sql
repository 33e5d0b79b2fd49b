--
-- nested_limits: the column sync_limit.parent (1.8) and the rules the
-- constraint trigger sync_limit_tree checks when a transaction commits:
-- no row its own parent, no pattern row and no launch plan row as a
-- parent, no launch plan row with a parent, two levels only, and no child
-- whose sizelimit is above its parent's.  A parent that does not exist, or
-- is deleted while it has children, fails the foreign key at commit
-- (23503).  Declarations only: what the engine does with a parent is
-- tested with the engine.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
-- Helpers regress_util.expect_error (reports a statement's error as a
-- NOTICE with SQLSTATE, DETAIL and HINT) and regress_util.error_of
-- (returns "SQLSTATE: message"), created by 00_setup.

-- Errors raised by the trigger function would show its line numbers as
-- CONTEXT: left out.  The SQLSTATE is echoed after each error.
\set SHOW_CONTEXT never
CREATE VIEW pg_temp.tree AS
    SELECT name, sizelimit, parent FROM sync_limit
     WHERE name LIKE 'nest/%' OR name LIKE 'other/%' OR name LIKE 'launchplan/%'
     ORDER BY name COLLATE "C";

-- the column, its foreign key, its index and the trigger
SELECT attnum, format_type(atttypid, atttypmod) AS type, attnotnull,
       col_description(attrelid, attnum) AS comment
  FROM pg_attribute WHERE attrelid = 'sync_limit'::regclass AND attname = 'parent';
SELECT conname, contype, condeferrable, condeferred, pg_get_constraintdef(oid) AS definition
  FROM pg_constraint
 WHERE conrelid = 'sync_limit'::regclass AND contype IN ('f', 't')
 ORDER BY conname;
SELECT pg_get_indexdef('sync_limit_parent_idx'::regclass) AS index;
SELECT pg_get_triggerdef(oid) AS trigger FROM pg_trigger WHERE tgname = 'sync_limit_tree';
SELECT p.oid::regprocedure AS function, l.lanname, p.prosecdef, p.proconfig
  FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
 WHERE p.proname = 'sync_limit_check_tree';

--
-- Declarations that are accepted.
--
-- every sem/nest/<key> at most 3 at a time (pattern row), all of them
-- together at most 10 (row nest/all); two keys with rows of their own under
-- the same parent, one of them as high as the parent
INSERT INTO sync_limit (name, sizelimit) VALUES ('nest/all', 10);
INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nest/*', 3, 'nest/all');
INSERT INTO sync_limit (name, sizelimit, parent) VALUES
    ('nest/big', 10, 'nest/all'),
    ('nest/small', 1, 'nest/all');
SELECT * FROM pg_temp.tree;
-- a child before its parent, in one transaction: both are checked at commit
BEGIN;
INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('other/*', 2, 'other/all');
INSERT INTO sync_limit (name, sizelimit) VALUES ('other/all', 4);
COMMIT;
SELECT * FROM pg_temp.tree;
-- a parent and its child lowered together, the parent first (for a moment
-- below its child), then raised together, the child first
BEGIN;
UPDATE sync_limit SET sizelimit = 1 WHERE name = 'other/all';
UPDATE sync_limit SET sizelimit = 1 WHERE name = 'other/*';
COMMIT;
BEGIN;
UPDATE sync_limit SET sizelimit = 6 WHERE name = 'other/*';
UPDATE sync_limit SET sizelimit = 6 WHERE name = 'other/all';
COMMIT;
SELECT * FROM pg_temp.tree WHERE name LIKE 'other/%';
-- what counts is the row at commit: a refused value changed again, or a
-- row deleted, before the transaction ends is not refused
BEGIN;
INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nest/later', 50, 'nest/all');
UPDATE sync_limit SET sizelimit = 5 WHERE name = 'nest/later';
INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nest/gone', 1, 'nest/gone');
DELETE FROM sync_limit WHERE name = 'nest/gone';
COMMIT;
SELECT * FROM pg_temp.tree WHERE name IN ('nest/later', 'nest/gone');
DELETE FROM sync_limit WHERE name = 'nest/later';
-- a child may move to another parent, and leave its parent
UPDATE sync_limit SET parent = 'other/all' WHERE name = 'nest/small';
UPDATE sync_limit SET parent = NULL WHERE name = 'nest/small';
UPDATE sync_limit SET parent = 'nest/all' WHERE name = 'nest/small';
SELECT * FROM pg_temp.tree WHERE name = 'nest/small';

--
-- Renaming a parent renames it in its children (ON UPDATE CASCADE); the
-- children, checked at commit under the new name, are accepted.
--
UPDATE sync_limit SET name = 'nest/total' WHERE name = 'nest/all';
SELECT * FROM pg_temp.tree;
-- also together with another change of the family in the same transaction
BEGIN;
UPDATE sync_limit SET name = 'nest/all', sizelimit = 12 WHERE name = 'nest/total';
UPDATE sync_limit SET sizelimit = 12 WHERE name = 'nest/big';
COMMIT;
SELECT * FROM pg_temp.tree WHERE name LIKE 'nest/%';
UPDATE sync_limit SET sizelimit = 10 WHERE name = 'nest/big';
UPDATE sync_limit SET sizelimit = 10 WHERE name = 'nest/all';
-- renaming a child changes nothing for its parent
UPDATE sync_limit SET name = 'nest/tiny' WHERE name = 'nest/small';
UPDATE sync_limit SET name = 'nest/small' WHERE name = 'nest/tiny';
SELECT * FROM pg_temp.tree WHERE name LIKE 'nest/%';

--
-- Refusals (check_violation, 23514), each when its transaction commits;
-- each refused transaction leaves the rows as they were.
--
-- 1. a row its own parent
INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nest/self', 1, 'nest/self');
\echo :LAST_ERROR_SQLSTATE
UPDATE sync_limit SET parent = 'nest/all' WHERE name = 'nest/all';
\echo :LAST_ERROR_SQLSTATE
-- 2. a pattern row as the parent
INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nest/eu', 1, 'nest/*');
\echo :LAST_ERROR_SQLSTATE
-- ... also when the parent is renamed into a pattern (its children follow)
UPDATE sync_limit SET name = 'other/all/*' WHERE name = 'other/all';
\echo :LAST_ERROR_SQLSTATE
-- 3. three levels: a child as the parent of another row ...
INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nest/deep', 1, 'nest/small');
\echo :LAST_ERROR_SQLSTATE
-- ... or a parent given a parent of its own
INSERT INTO sync_limit (name, sizelimit) VALUES ('top/all', 100);
UPDATE sync_limit SET parent = 'top/all' WHERE name = 'nest/all';
\echo :LAST_ERROR_SQLSTATE
-- (a row without children may have a parent without a parent)
UPDATE sync_limit SET parent = 'top/all' WHERE name = 'nest/small';
SELECT * FROM pg_temp.tree WHERE name = 'nest/small';
UPDATE sync_limit SET parent = 'nest/all' WHERE name = 'nest/small';
DELETE FROM sync_limit WHERE name = 'top/all';
-- 4. a child's sizelimit above its parent's: inserted, raised, or the
-- parent lowered below it (the highest child is named)
INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nest/huge', 11, 'nest/all');
\echo :LAST_ERROR_SQLSTATE
UPDATE sync_limit SET sizelimit = 20 WHERE name = 'nest/small';
\echo :LAST_ERROR_SQLSTATE
UPDATE sync_limit SET sizelimit = 2 WHERE name = 'nest/all';
\echo :LAST_ERROR_SQLSTATE
UPDATE sync_limit SET parent = 'other/all' WHERE name = 'nest/big';
\echo :LAST_ERROR_SQLSTATE
-- 5. launch plan rows: none has a parent ...
INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('launchplan/p/d/n', 1, 'nest/all');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('launchplan/*', 1, 'nest/all');
\echo :LAST_ERROR_SQLSTATE
-- ... or is one
INSERT INTO sync_limit (name, sizelimit) VALUES ('launchplan/p/d/cap', 5);
INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nest/lp', 1, 'launchplan/p/d/cap');
\echo :LAST_ERROR_SQLSTATE
UPDATE sync_limit SET name = 'launchplan/p/d/other' WHERE name = 'other/all';
\echo :LAST_ERROR_SQLSTATE
DELETE FROM sync_limit WHERE name = 'launchplan/p/d/cap';
-- a refusal rolls the whole transaction back
BEGIN;
INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nest/fine', 1, 'nest/all');
UPDATE sync_limit SET sizelimit = 0 WHERE name = 'nest/all';
COMMIT;
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM pg_temp.tree;

--
-- The foreign key (23503, at commit): a parent that does not exist, and a
-- parent deleted while it has children.
--
INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nest/orphan', 1, 'nest/missing');
\echo :LAST_ERROR_SQLSTATE
BEGIN;
INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nest/orphan', 1, 'nest/missing');
INSERT INTO sync_limit (name, sizelimit) VALUES ('nest/missing', 1);
DELETE FROM sync_limit WHERE name = 'nest/missing';
COMMIT;
\echo :LAST_ERROR_SQLSTATE
DELETE FROM sync_limit WHERE name = 'nest/all';
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS rows FROM pg_temp.tree;
-- with its children, or after them in one transaction, it may go
BEGIN;
DELETE FROM sync_limit WHERE parent = 'other/all';
DELETE FROM sync_limit WHERE name = 'other/all';
COMMIT;
DELETE FROM sync_limit WHERE name LIKE 'nest/%';
SELECT count(*) AS rows FROM pg_temp.tree;

--
-- SET CONSTRAINTS ... IMMEDIATE checks at the end of each statement
-- instead, here with the DETAIL and HINT of each refusal.
--
INSERT INTO sync_limit (name, sizelimit) VALUES ('nest/all', 10);
INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nest/*', 3, 'nest/all');
BEGIN;
SET CONSTRAINTS sync_limit_tree, sync_limit_parent_fkey IMMEDIATE;
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nest/a', 4, 'nest/all')$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nest/b', 20, 'nest/all')$$);
CALL regress_util.expect_error($$UPDATE sync_limit SET sizelimit = 3 WHERE name = 'nest/all'$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nest/c', 1, 'nest/c')$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nest/c', 1, 'nest/*')$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nest/c', 1, 'nest/a')$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('launchplan/p/d/n', 1, 'nest/all')$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nest/c', 1, 'nest/none')$$);
CALL regress_util.expect_error($$DELETE FROM sync_limit WHERE name = 'nest/all'$$);
COMMIT;
SELECT * FROM pg_temp.tree;

-- PostgreSQL does not truncate a table with trigger events pending
-- (55006): a transaction that wrote sync_limit runs the deferred checks
-- first (here rolled back: the table is the whole database's)
BEGIN;
INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nest/t', 1, 'nest/all');
TRUNCATE sync_limit;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nest/t', 1, 'nest/all');
SET CONSTRAINTS sync_limit_parent_fkey, sync_limit_tree IMMEDIATE;
TRUNCATE sync_limit;
SELECT count(*) AS rows FROM sync_limit;
ROLLBACK;

--
-- Guarantees (nest/all at 10): a share of a parent, within the child's
-- ceiling, the guarantees of rows of their own adding up to at most the
-- parent's sizelimit
--
BEGIN;
SET CONSTRAINTS sync_limit_tree, sync_limit_parent_fkey IMMEDIATE;
INSERT INTO sync_limit (name, sizelimit, parent, guarantee) VALUES ('nest/g1', 6, 'nest/all', 4);
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, guarantee) VALUES ('nest/g2', 6, 1)$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, parent, guarantee) VALUES ('nest/g2', 3, 'nest/all', 4)$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, parent, guarantee) VALUES ('nest/g2', 8, 'nest/all', 7)$$);
CALL regress_util.expect_error($$INSERT INTO sync_limit (name, sizelimit, parent, guarantee) VALUES ('nest/g2', 3, 'nest/all', -1)$$);
-- a pattern's guarantee is each semaphore's, not counted in the sum
INSERT INTO sync_limit (name, sizelimit, parent, guarantee) VALUES ('nest/p/*', 8, 'nest/all', 8);
INSERT INTO sync_limit (name, sizelimit, parent, guarantee) VALUES ('nest/g2', 6, 'nest/all', 6);
-- the parent lowered below the sum
CALL regress_util.expect_error($$UPDATE sync_limit SET sizelimit = 9 WHERE name = 'nest/all'$$);
ROLLBACK;

--
-- Counting at both levels (nest/* at 3 under nest/all at 10)
--
SELECT sync_acquire('sem/nest/x', slots => 2) > 0 AS x2,
       sync_acquire('sem/nest/y', slots => 3) > 0 AS y3;
SELECT lock_name, limit_row, sizelimit, slots_held, parent_row, parent_sizelimit,
       parent_slots_held
  FROM sync_locks WHERE lock_name LIKE 'sem/nest/%' ORDER BY lock_name;
-- a child with room, but not the parent: 5 of 10 held, 6 asked of z
SELECT sync_try_acquire('sem/nest/z', slots => 3) > 0 AS z3,
       sync_try_acquire('sem/nest/w', slots => 3) IS NULL AS w3_refused;
SELECT sync_release('sem/nest/z');
SELECT sync_try_acquire('sem/nest/w', slots => 3) > 0 AS w3_after_release;
SELECT sync_release_all() AS released;

-- the parent row is not a semaphore of its own: 55000, in every form
CALL regress_util.expect_error($$SELECT sync_acquire('sem/nest/all')$$);
CALL regress_util.expect_error($$SELECT sync_try_acquire('sem/nest/all')$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request('sem/nest/all', 'nest-holder')$$);

-- a request of several children takes the sum of their slots under the
-- parent: more than its sizelimit could never be granted (22023, in every
-- form, and nothing is left behind); as much as it is granted
CALL regress_util.expect_error($$SELECT sync_acquire(ARRAY['sem/nest/p', 'sem/nest/q', 'sem/nest/r', 'sem/nest/s'], slots => 3)$$);
CALL regress_util.expect_error($$SELECT sync_try_acquire(ARRAY['sem/nest/p', 'sem/nest/q', 'sem/nest/r', 'sem/nest/s'], slots => 3)$$);
CALL regress_util.expect_error($$SELECT * FROM sync_request(ARRAY['sem/nest/p', 'sem/nest/q', 'sem/nest/r', 'sem/nest/s'], 'nest-holder', slots => 3)$$);
SELECT count(*) AS left_behind FROM sync_state WHERE workflowkey = 'nest-holder';
SELECT array_length(sync_acquire(ARRAY['sem/nest/p', 'sem/nest/q', 'sem/nest/r'], slots => 3), 1) AS granted_9_of_10;
SELECT sync_release_all() AS released;

-- a row that becomes a parent while its semaphore is held: the hold
-- stays, newcomers are refused
INSERT INTO sync_limit (name, sizelimit) VALUES ('nest2/top', 4);
SELECT sync_acquire('sem/nest2/top') > 0 AS held_as_semaphore;
INSERT INTO sync_limit (name, sizelimit, parent) VALUES ('nest2/kid', 2, 'nest2/top');
SELECT lock_name, holders FROM sync_locks WHERE lock_name = 'sem/nest2/top';
CALL regress_util.expect_error($$SELECT * FROM sync_request('sem/nest2/top', 'nest-holder')$$);
SELECT sync_release('sem/nest2/top');
CALL regress_util.expect_error($$SELECT sync_try_acquire('sem/nest2/top')$$);
-- and back: no longer a parent, a semaphore again
DELETE FROM sync_limit WHERE name = 'nest2/kid';
SELECT sync_try_acquire('sem/nest2/top') > 0 AS semaphore_again;
SELECT sync_release_all() AS released;
DELETE FROM sync_limit WHERE name LIKE 'nest2/%';

-- clean up
DELETE FROM sync_limit WHERE name LIKE 'nest/%';
SELECT count(*) AS rows FROM pg_temp.tree;
