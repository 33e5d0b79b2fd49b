-- API contract: sync_limit is the truth, and a rolled-back change to it
-- must not outlive its (sub)transaction.  Whatever a session may see of its
-- own uncommitted sync_limit rows, a limit that only a rolled-back change
-- provided must not keep applying afterwards -- neither to this session nor,
-- through shared memory, to anyone else.  (Whether an uncommitted row is
-- honoured inside its own transaction is not asserted here.)
BEGIN;
SELECT plan(5);

-- A row inserted, used, and rolled back: afterwards the semaphore has no
-- limit.
SAVEPOINT a;
INSERT INTO sync_limit VALUES ('tap_rb/a', 3);
DO $$
BEGIN
    IF sync_try_acquire('sem/tap_rb/a') IS NOT NULL THEN
        PERFORM sync_release('sem/tap_rb/a');
    END IF;
EXCEPTION WHEN undefined_object THEN
    NULL;   -- an engine may also ignore the uncommitted row
END
$$;
ROLLBACK TO SAVEPOINT a;
SELECT is_empty($$SELECT * FROM sync_limit WHERE name = 'tap_rb/a'$$,
                'the row tap_rb/a is rolled back');
SELECT throws_ok($$SELECT sync_try_acquire('sem/tap_rb/a')$$, '42704', NULL,
                 'after the rollback sem/tap_rb/a has no limit (42704), as before the insert');

-- An update, used, and rolled back: afterwards the previous limit applies.
INSERT INTO sync_limit VALUES ('tap_rb/b', 1);
SAVEPOINT b;
UPDATE sync_limit SET sizelimit = 0 WHERE name = 'tap_rb/b';
DO $$
BEGIN
    IF sync_try_acquire('sem/tap_rb/b') IS NOT NULL THEN
        PERFORM sync_release('sem/tap_rb/b');
    END IF;
END
$$;
ROLLBACK TO SAVEPOINT b;
SELECT is((SELECT sizelimit FROM sync_limit WHERE name = 'tap_rb/b'), 1,
          'the row tap_rb/b has its limit of 1 again');
SELECT isnt(sync_try_acquire('sem/tap_rb/b'), NULL,
            'after the rollback the limit of 1 applies: sem/tap_rb/b can be taken');
SELECT is((SELECT sizelimit FROM sync_locks WHERE lock_name = 'sem/tap_rb/b'), 1,
          'sync_locks shows the limit of 1');

SELECT diag('cleanup: released ' || sync_release_all() || ' hold(s)');
SELECT * FROM finish();
ROLLBACK;
