-- API contract: a limit takes effect only when the change to sync_limit
-- commits -- for everyone, the changing transaction included.  The lock
-- table holds committed limits only, so a change that rolls back (to a
-- savepoint or entirely) can never leave a limit behind.  This file is one
-- transaction, so every row it writes is uncommitted: acquiring must behave
-- as if the rows were not there.  (Committed changes and their effect on
-- other sessions are covered by the regress and isolation suites.)
BEGIN;
SELECT plan(8);

INSERT INTO sync_limit VALUES ('tap_rb/a', 3);
SELECT throws_ok($$SELECT sync_try_acquire('sem/tap_rb/a')$$, '42704', NULL,
                 'an uncommitted row is not a limit, even for the transaction that inserted it');
SELECT is_empty($$SELECT * FROM sync_locks WHERE lock_name = 'sem/tap_rb/a'$$,
                'and nothing of it reached the lock table');

SAVEPOINT a;
UPDATE sync_limit SET sizelimit = 0 WHERE name = 'tap_rb/a';
SELECT throws_ok($$SELECT sync_try_acquire('sem/tap_rb/a')$$, '42704', NULL,
                 'an uncommitted update of an uncommitted row is not a limit either');
ROLLBACK TO SAVEPOINT a;

SAVEPOINT b;
-- (the checks of sync_limit_parent_fkey and sync_limit_tree, deferred to
-- commit, run now: a table with pending trigger events cannot be
-- truncated, 55006)
SET CONSTRAINTS sync_limit_parent_fkey, sync_limit_tree IMMEDIATE;
TRUNCATE sync_limit;
SELECT isnt(sync_try_acquire('mtx/tap_rb/m'), NULL,
            'mutexes are never affected by limit changes');
ROLLBACK TO SAVEPOINT b;

SELECT is((SELECT sizelimit FROM sync_limit WHERE name = 'tap_rb/a'), 3,
          'the transaction itself still reads its own row from the table');
SELECT throws_ok($$SELECT sync_try_acquire(ARRAY['mtx/tap_rb/n', 'sem/tap_rb/a'])$$, '42704', NULL,
                 'an array naming the semaphore fails as a whole');
SELECT is((SELECT count(*)::int FROM sync_holders WHERE lock_name = 'mtx/tap_rb/n'), 0,
          'and holds nothing');
SELECT is(sync_release_all(), 1, 'only the mutex was held');

SELECT * FROM finish();
ROLLBACK;
