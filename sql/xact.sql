--
-- xact: transaction-scope holds (sync_acquire_xact, sync_try_acquire_xact):
-- released at COMMIT and ROLLBACK, at the rollback of the savepoint that
-- took them, at the end of the statement outside a transaction block;
-- promotion to session scope; PREPARE TRANSACTION.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
-- Helpers regress_util.expect_error (reports a statement's error as a
-- NOTICE with SQLSTATE, DETAIL and HINT) and regress_util.error_of
-- (returns "SQLSTATE: message"), created by 00_setup.
-- what this session holds, without tokens
CREATE VIEW pg_temp.mine AS
    SELECT lock_name, scope FROM sync_holders
     WHERE pid = pg_backend_pid() ORDER BY lock_name;

-- released at COMMIT
BEGIN;
SELECT sync_acquire_xact('mtx/xact/a') > 0 AS granted;
SELECT sync_try_acquire_xact('mtx/xact/b') > 0 AS granted;
SELECT * FROM pg_temp.mine;
COMMIT;
SELECT * FROM pg_temp.mine;
SELECT count(*) AS locks FROM sync_locks;

-- released at ROLLBACK
BEGIN;
SELECT sync_acquire_xact('mtx/xact/a') > 0 AS granted;
SELECT * FROM pg_temp.mine;
ROLLBACK;
SELECT * FROM pg_temp.mine;

-- released at the ROLLBACK of a transaction that failed
BEGIN;
SELECT sync_acquire_xact('mtx/xact/a') > 0 AS granted;
SELECT 1 / 0;
ROLLBACK;
SELECT * FROM pg_temp.mine;

-- outside a transaction block a transaction-scope hold ends with its
-- statement: held during it, gone after it
DO $$
BEGIN
    PERFORM sync_acquire_xact('mtx/xact/stmt');
    RAISE NOTICE 'during the statement: % hold(s)',
        (SELECT count(*) FROM sync_holders
          WHERE pid = pg_backend_pid() AND lock_name = 'mtx/xact/stmt');
END
$$;
SELECT sync_acquire_xact('mtx/xact/stmt') > 0 AS granted;
SELECT * FROM pg_temp.mine;
SELECT count(*) AS locks FROM sync_locks;

-- the token of a transaction-scope hold increases like any other
SELECT sync_acquire_xact('mtx/xact/tok') AS x1 \gset
SELECT sync_acquire_xact('mtx/xact/tok') AS x2 \gset
SELECT :x2 > :x1 AS token_increased;
-- and it is the same for every call inside one transaction
BEGIN;
SELECT sync_acquire_xact('mtx/xact/tok') AS x3 \gset
SELECT sync_acquire_xact('mtx/xact/tok') = :x3 AS same_token,
       sync_try_acquire_xact('mtx/xact/tok') = :x3 AS same_token_try;
SELECT count(*) AS holds FROM sync_holders WHERE lock_name = 'mtx/xact/tok';
COMMIT;

--
-- Savepoints.
--
-- ROLLBACK TO SAVEPOINT releases what was taken after the savepoint, and
-- keeps what was taken before it
BEGIN;
SELECT sync_acquire_xact('mtx/xact/before') > 0 AS granted;
SAVEPOINT s1;
SELECT sync_acquire_xact('mtx/xact/inside') > 0 AS granted;
SELECT * FROM pg_temp.mine;
ROLLBACK TO SAVEPOINT s1;
SELECT * FROM pg_temp.mine;
COMMIT;
SELECT * FROM pg_temp.mine;

-- RELEASE SAVEPOINT hands the holds to the enclosing transaction: a later
-- rollback to another savepoint keeps them, they end at commit
BEGIN;
SAVEPOINT s1;
SELECT sync_acquire_xact('mtx/xact/released-sp') > 0 AS granted;
RELEASE SAVEPOINT s1;
SAVEPOINT s2;
ROLLBACK TO SAVEPOINT s2;
SELECT * FROM pg_temp.mine;
COMMIT;
SELECT * FROM pg_temp.mine;

-- nested: a hold taken in s2, s2 released into s1, then s1 rolled back
BEGIN;
SAVEPOINT s1;
SELECT sync_acquire_xact('mtx/xact/outer') > 0 AS granted;
SAVEPOINT s2;
SELECT sync_acquire_xact('mtx/xact/inner') > 0 AS granted;
RELEASE SAVEPOINT s2;
SELECT * FROM pg_temp.mine;
ROLLBACK TO SAVEPOINT s1;
SELECT * FROM pg_temp.mine;
SELECT sync_acquire_xact('mtx/xact/after') > 0 AS granted;
COMMIT;
SELECT * FROM pg_temp.mine;

-- nested: rolling back the outer savepoint also releases the inner one's
BEGIN;
SELECT sync_acquire_xact('mtx/xact/top') > 0 AS granted;
SAVEPOINT s1;
SELECT sync_acquire_xact('mtx/xact/s1') > 0 AS granted;
SAVEPOINT s2;
SELECT sync_acquire_xact('mtx/xact/s2') > 0 AS granted;
ROLLBACK TO SAVEPOINT s1;
SELECT * FROM pg_temp.mine;
ROLLBACK;
SELECT * FROM pg_temp.mine;

-- a savepoint that is rolled back does not release a lock that was taken
-- before it, even when acquired again inside it
BEGIN;
SELECT sync_acquire_xact('mtx/xact/again') AS a1 \gset
SAVEPOINT s1;
SELECT sync_acquire_xact('mtx/xact/again') = :a1 AS same_token;
ROLLBACK TO SAVEPOINT s1;
SELECT * FROM pg_temp.mine;
COMMIT;

-- PL/pgSQL exception blocks are savepoints too
DO $$
BEGIN
    PERFORM sync_acquire_xact('mtx/xact/before-block');
    BEGIN
        PERFORM sync_acquire_xact('mtx/xact/in-block');
        PERFORM sync_acquire('mtx/xact/session-in-block');
        RAISE EXCEPTION 'fail';
    EXCEPTION WHEN raise_exception THEN
        NULL;
    END;
    RAISE NOTICE 'after the failed block: %',
        (SELECT string_agg(lock_name || ' ' || scope, ', ' ORDER BY lock_name)
           FROM sync_holders WHERE pid = pg_backend_pid());
END
$$;
-- session-scope holds are not transactional: the one taken in the failed
-- block survives (like pg_advisory_lock)
SELECT * FROM pg_temp.mine;
SELECT sync_release_all() AS released;

-- a session-scope hold taken in a rolled-back transaction survives it
BEGIN;
SELECT sync_acquire('mtx/xact/session') > 0 AS granted;
ROLLBACK;
SELECT * FROM pg_temp.mine;
SELECT sync_release('mtx/xact/session') AS released;

--
-- Promotion: the longer scope wins.
--
-- a session-scope acquire of a transaction-scope hold makes it session
-- scope, keeping its token: it survives COMMIT
BEGIN;
SELECT sync_acquire_xact('mtx/xact/promote') AS p1 \gset
SELECT sync_acquire('mtx/xact/promote') = :p1 AS same_token;
SELECT * FROM pg_temp.mine;
COMMIT;
SELECT * FROM pg_temp.mine;
SELECT token = :p1 AS same_token FROM sync_holders WHERE lock_name = 'mtx/xact/promote';
SELECT sync_release('mtx/xact/promote') AS released;
-- ... and ROLLBACK
BEGIN;
SELECT sync_try_acquire_xact('mtx/xact/promote') > 0 AS granted;
SELECT sync_try_acquire('mtx/xact/promote') > 0 AS granted;
ROLLBACK;
SELECT * FROM pg_temp.mine;
SELECT sync_release('mtx/xact/promote') AS released;
-- ... and the rollback of the savepoint that took it
BEGIN;
SAVEPOINT s1;
SELECT sync_acquire_xact('mtx/xact/promote') > 0 AS granted;
SELECT sync_acquire('mtx/xact/promote') > 0 AS granted;
ROLLBACK TO SAVEPOINT s1;
COMMIT;
SELECT * FROM pg_temp.mine;
SELECT sync_release('mtx/xact/promote') AS released;
-- a transaction-scope acquire of a session-scope hold changes nothing
SELECT sync_acquire('mtx/xact/session') AS s1 \gset
BEGIN;
SELECT sync_acquire_xact('mtx/xact/session') = :s1 AS same_token;
SELECT sync_try_acquire_xact('mtx/xact/session') = :s1 AS same_token;
SELECT * FROM pg_temp.mine;
ROLLBACK;
SELECT * FROM pg_temp.mine;
SELECT sync_release('mtx/xact/session') AS released;

--
-- Explicit release of transaction-scope holds.
--
BEGIN;
SELECT sync_acquire_xact('mtx/xact/r1') > 0 AS granted;
SELECT sync_acquire_xact('mtx/xact/r2') > 0 AS granted;
SELECT sync_acquire_xact('mtx/xact/r3') > 0 AS granted;
SELECT sync_acquire('mtx/xact/r4') > 0 AS granted;
SELECT sync_release('mtx/xact/r1') AS released;
SELECT sync_release('mtx/xact/r1') AS released_again;
SELECT * FROM pg_temp.mine;
-- sync_release_all releases both scopes
SELECT sync_release_all() AS released;
SELECT * FROM pg_temp.mine;
-- a release is not undone by a rollback
SAVEPOINT s1;
SELECT sync_acquire_xact('mtx/xact/r5') > 0 AS granted;
RELEASE SAVEPOINT s1;
SAVEPOINT s2;
SELECT sync_release('mtx/xact/r5') AS released;
ROLLBACK TO SAVEPOINT s2;
SELECT * FROM pg_temp.mine;
COMMIT;
SELECT count(*) AS locks FROM sync_locks;

--
-- PREPARE TRANSACTION with a transaction-scope hold is refused (0A000);
-- syncwf refuses before PostgreSQL even looks at max_prepared_transactions,
-- so this does not depend on that setting.  The failed PREPARE rolls the
-- transaction back, which releases the hold.
--
BEGIN;
SELECT sync_acquire_xact('mtx/xact/prepared') > 0 AS granted;
PREPARE TRANSACTION 'syncwf_regress_xact';
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM pg_temp.mine;
SELECT count(*) AS prepared FROM pg_prepared_xacts;
-- the same for a hold taken inside a (released) savepoint
BEGIN;
SAVEPOINT s1;
SELECT sync_try_acquire_xact('mtx/xact/prepared') > 0 AS granted;
RELEASE SAVEPOINT s1;
PREPARE TRANSACTION 'syncwf_regress_xact';
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM pg_temp.mine;
-- a session-scope hold is not affected by the failed PREPARE
SELECT sync_acquire('mtx/xact/session-kept') > 0 AS granted;
BEGIN;
SELECT sync_acquire_xact(ARRAY['mtx/xact/p1', 'mtx/xact/p2']) IS NOT NULL AS granted;
PREPARE TRANSACTION 'syncwf_regress_xact';
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM pg_temp.mine;
SELECT sync_release_all() AS released;
SELECT count(*) AS prepared FROM pg_prepared_xacts;
SELECT count(*) AS locks FROM sync_locks;
