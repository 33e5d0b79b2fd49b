-- API contract: basic behaviour of one session.  Errors and their SQLSTATEs
-- (NULL 22004, bad name 22023, missing limit 42704, timeout 55P03, too many
-- names 54000), tokens, re-acquire, release, scopes.  Failed requests must
-- leave nothing behind.
-- Limits take effect when they commit, and this file is one transaction
-- that rolls back: the semaphores it uses get committed rows first, removed
-- again at the end.
INSERT INTO sync_limit VALUES ('tap_beh/zero', 0), ('tap_beh/two', 2);

BEGIN;
SELECT plan(70);

-- NULL arguments: 22004 ---------------------------------------------------------
SELECT throws_ok($$SELECT sync_acquire(NULL::text)$$, '22004', 'lock name must not be null',
                 'sync_acquire(NULL) raises 22004');
SELECT throws_ok($$SELECT sync_try_acquire(NULL::text)$$, '22004', NULL,
                 'sync_try_acquire(NULL) raises 22004');
SELECT throws_ok($$SELECT sync_acquire_xact(NULL::text)$$, '22004', NULL,
                 'sync_acquire_xact(NULL) raises 22004');
SELECT throws_ok($$SELECT sync_try_acquire_xact(NULL::text)$$, '22004', NULL,
                 'sync_try_acquire_xact(NULL) raises 22004');
SELECT throws_ok($$SELECT sync_release(NULL)$$, '22004', NULL,
                 'sync_release(NULL) raises 22004');
SELECT throws_ok($$SELECT sync_acquire(NULL::text[])$$, '22004', NULL,
                 'sync_acquire(NULL::text[]) raises 22004');
SELECT throws_ok($$SELECT sync_try_acquire(ARRAY['mtx/tap_beh/a', NULL])$$, '22004', NULL,
                 'a NULL element in the array raises 22004');
SELECT throws_ok($$SELECT sync_acquire('mtx/tap_beh/a', NULL)$$, '22004', NULL,
                 'a NULL priority raises 22004');
SELECT throws_ok($$SELECT sync_try_acquire_xact(ARRAY['mtx/tap_beh/a'], NULL)$$, '22004', NULL,
                 'a NULL priority (array form) raises 22004');

-- Bad names: 22023 --------------------------------------------------------------
SELECT throws_ok(format('SELECT sync_try_acquire(%L)', n), '22023', NULL,
                 format('name %s raises 22023', d))
  FROM (VALUES
    ('foo',                           'without kind'),
    ('mtx',                           'of only a kind'),
    ('mtx/',                          'with an empty namespace and no key'),
    ('mtx//key',                      'with an empty namespace'),
    ('mtx/ns',                        'without key'),
    ('mtx/ns/',                       'with an empty key'),
    ('lck/ns/key',                    'with an unknown kind'),
    ('MTX/ns/key',                    'with an upper-case kind'),
    (E'mtx/ns/a\tb',                  'with a tab'),
    (E'mtx/ns/a\nb',                  'with a newline'),
    ('mtx/ns/' || repeat('k', 254),   'of 261 bytes'),
    ('',                              'that is empty')
  ) AS x(n, d);
SELECT throws_ok($$SELECT sync_try_acquire('foo')$$, '22023',
                 'invalid syncwf lock name "foo"',
                 'the error names the invalid lock name');
SELECT throws_ok($$SELECT sync_release('sem/ns')$$, '22023', NULL,
                 'sync_release of an invalid name raises 22023');
SELECT throws_ok($$SELECT sync_try_acquire(ARRAY['mtx/tap_beh/a', 'bad'])$$, '22023', NULL,
                 'an invalid name in an array raises 22023');
SELECT is_empty($$SELECT * FROM sync_locks WHERE lock_name = 'mtx/tap_beh/a'$$,
                'a request refused for a bad name holds nothing');
SELECT isnt(sync_try_acquire('mtx/ns/' || repeat('k', 253)), NULL,
            'a 260-byte name is accepted');
SELECT isnt(sync_try_acquire(U&'mtx/ns/key/with/slashes and spaces \00FC'), NULL,
            'a key may contain "/", spaces and non-ASCII characters');
SELECT throws_ok($$SELECT sync_try_acquire(ARRAY[]::text[])$$, '22023', NULL,
                 'an empty array raises 22023');
SELECT throws_ok($$SELECT sync_try_acquire(ARRAY['mtx/tap_beh/d', 'mtx/tap_beh/d'])$$, '22023', NULL,
                 'a name repeated in one request raises 22023');
SELECT throws_ok($$SELECT sync_acquire('mtx/tap_beh/a', 0, interval '-1 s')$$, '22023', NULL,
                 'a negative timeout raises 22023');

-- Missing limit: 42704 ----------------------------------------------------------
SELECT throws_ok($$SELECT sync_acquire('sem/tap_beh/nolimit')$$, '42704',
                 'semaphore "sem/tap_beh/nolimit" has no limit',
                 'sync_acquire of a semaphore without a sync_limit row raises 42704');
SELECT throws_ok($$SELECT sync_try_acquire('sem/tap_beh/nolimit')$$, '42704', NULL,
                 'sync_try_acquire of a semaphore without limit raises 42704');
SELECT throws_ok($$SELECT sync_acquire(ARRAY['mtx/tap_beh/b', 'sem/tap_beh/nolimit'])$$, '42704', NULL,
                 'an array naming a semaphore without limit raises 42704');
SELECT is_empty($$SELECT * FROM sync_locks WHERE lock_name LIKE '%/tap_beh/b' OR lock_name LIKE '%/nolimit'$$,
                'the refused requests left no lock behind');

-- Timeout: 55P03 ------------------------------------------------------------------
SELECT is(sync_try_acquire('sem/tap_beh/zero'), NULL,
          'sync_try_acquire of a sizelimit-0 semaphore returns NULL');
SELECT throws_ok($$SELECT sync_acquire('sem/tap_beh/zero', 0, interval '20 ms')$$, '55P03', NULL,
                 'sync_acquire of a sizelimit-0 semaphore times out with 55P03');
SELECT throws_ok($$SELECT sync_acquire('sem/tap_beh/zero', 0, interval '0')$$, '55P03', NULL,
                 'a zero timeout fails at once with 55P03');
SELECT throws_ok($$SELECT sync_acquire_xact('sem/tap_beh/zero', 5, interval '10 ms')$$, '55P03', NULL,
                 'sync_acquire_xact times out with 55P03');
SELECT throws_ok($$SELECT sync_acquire(ARRAY['mtx/tap_beh/c', 'sem/tap_beh/zero'], 0, interval '10 ms')$$,
                 '55P03', NULL,
                 'an array request that cannot be granted times out with 55P03');
SELECT is(sync_try_acquire(ARRAY['mtx/tap_beh/c', 'sem/tap_beh/zero']), NULL,
          'sync_try_acquire of an array that cannot be granted returns NULL');
SELECT is_empty($$SELECT * FROM sync_locks WHERE lock_name IN ('mtx/tap_beh/c', 'sem/tap_beh/zero')$$,
                'timed-out and refused requests left no hold and no queue entry');

-- Too many names: 54000 -------------------------------------------------------------
SELECT throws_ok($$SELECT sync_try_acquire(ARRAY(SELECT 'mtx/tap_beh/many' || g FROM generate_series(1, 65) g))$$,
                 '54000', NULL, 'a request naming 65 locks raises 54000');
SELECT throws_ok($$SELECT sync_acquire(ARRAY(SELECT 'mtx/tap_beh/many' || g FROM generate_series(1, 100) g))$$,
                 '54000', NULL, 'sync_acquire naming 100 locks raises 54000');
SELECT is(cardinality(sync_try_acquire(ARRAY(SELECT 'mtx/tap_beh/many' || g FROM generate_series(1, 64) g))),
          64, 'a request naming 64 locks is granted with 64 tokens');
SELECT is((SELECT count(*)::int FROM sync_holders WHERE lock_name LIKE 'mtx/tap_beh/many%'),
          64, 'the 64 locks are held');
SELECT is(sync_release_all(), 66, 'sync_release_all releases the 64 and the two long names');
SELECT is_empty($$SELECT * FROM sync_holders WHERE pid = pg_backend_pid()$$,
                'nothing is held after sync_release_all');

-- Tokens ------------------------------------------------------------------------------
CREATE TEMP TABLE tap_tokens (n int, token bigint);
DO $$
BEGIN
    FOR i IN 1..10 LOOP
        INSERT INTO tap_tokens VALUES (i, sync_acquire('mtx/tap_beh/tok'));
        PERFORM sync_release('mtx/tap_beh/tok');
    END LOOP;
    FOR i IN 11..15 LOOP
        INSERT INTO tap_tokens VALUES (i, sync_acquire('mtx/tap_beh/tok' || i));
    END LOOP;
    INSERT INTO tap_tokens VALUES (16, sync_try_acquire('sem/tap_beh/two'));
    INSERT INTO tap_tokens VALUES (17, sync_acquire_xact('mtx/tap_beh/tokx'));
END
$$;
SELECT results_eq($$SELECT n FROM tap_tokens ORDER BY token$$,
                  $$SELECT generate_series(1, 17)$$,
                  'tokens increase with every grant, over releases, locks, kinds and scopes');
SELECT is((SELECT count(DISTINCT token)::int FROM tap_tokens WHERE token IS NOT NULL), 17,
          'every grant got a distinct, non-NULL token');
SELECT ok((SELECT min(token) > 0 FROM tap_tokens), 'tokens are positive');
SELECT is(sync_acquire('mtx/tap_beh/tok11'), (SELECT token FROM tap_tokens WHERE n = 11),
          'sync_acquire of a lock the session holds returns its existing token');
SELECT is(sync_try_acquire('mtx/tap_beh/tok12'), (SELECT token FROM tap_tokens WHERE n = 12),
          'sync_try_acquire of a lock the session holds returns its existing token');
SELECT is(sync_try_acquire(ARRAY['mtx/tap_beh/tok13', 'mtx/tap_beh/tok14']),
          ARRAY[(SELECT token FROM tap_tokens WHERE n = 13), (SELECT token FROM tap_tokens WHERE n = 14)],
          'an array of held locks returns their existing tokens, in argument order');
SELECT results_eq(
    $$SELECT lock_name, token FROM sync_holders WHERE pid = pg_backend_pid() ORDER BY token$$,
    $$SELECT CASE WHEN n = 16 THEN 'sem/tap_beh/two'
                  WHEN n = 17 THEN 'mtx/tap_beh/tokx'
                  ELSE 'mtx/tap_beh/tok' || n END, token
        FROM tap_tokens WHERE n > 10 ORDER BY token$$,
    'sync_holders reports the tokens the functions returned');
SELECT cmp_ok(sync_acquire('mtx/tap_beh/later'), '>', (SELECT max(token) FROM tap_tokens),
              'a later grant gets a larger token');

-- Semaphore capacity seen from one session.
SELECT results_eq($$SELECT kind, sizelimit, holders, waiters FROM sync_locks WHERE lock_name = 'sem/tap_beh/two'$$,
                  $$VALUES ('semaphore'::text, 2, 1, 0)$$,
                  'sync_locks: the semaphore shows its sizelimit and one holder');

-- Scopes ------------------------------------------------------------------------------
SELECT is((SELECT scope FROM sync_holders WHERE lock_name = 'mtx/tap_beh/tokx'), 'transaction',
          'sync_acquire_xact holds with transaction scope');
SAVEPOINT sp;
SELECT isnt(sync_acquire_xact('mtx/tap_beh/sub'), NULL, 'sync_acquire_xact inside a savepoint');
SELECT isnt(sync_acquire('mtx/tap_beh/subsession'), NULL, 'sync_acquire inside a savepoint');
ROLLBACK TO SAVEPOINT sp;
SELECT is_empty($$SELECT * FROM sync_holders WHERE lock_name = 'mtx/tap_beh/sub'$$,
                'ROLLBACK TO SAVEPOINT releases the transaction-scope hold taken after it');
SELECT is((SELECT scope FROM sync_holders WHERE lock_name = 'mtx/tap_beh/subsession'), 'session',
          'ROLLBACK TO SAVEPOINT keeps a session-scope hold');
SELECT is(sync_acquire('mtx/tap_beh/tokx'), (SELECT token FROM tap_tokens WHERE n = 17),
          'sync_acquire of a transaction-scope hold keeps its token');
SELECT is((SELECT scope FROM sync_holders WHERE lock_name = 'mtx/tap_beh/tokx'), 'session',
          '... and extends it to the session');

-- Release ------------------------------------------------------------------------------
SET LOCAL client_min_messages = error;   -- sync_release warns about what is not held
SELECT is(sync_release('mtx/tap_beh/tok15'), true, 'sync_release of a held lock returns true');
SELECT is(sync_release('mtx/tap_beh/tok15'), false, 'sync_release of a lock no longer held returns false');
SELECT is(sync_release('mtx/tap_beh/never'), false, 'sync_release of a lock never held returns false');
SELECT is(sync_release('sem/tap_beh/nolimit'), false, 'sync_release of a semaphore without limit returns false');
RESET client_min_messages;
SELECT is(sync_release_all(), 8, 'sync_release_all returns the number of holds it released');
SELECT is(sync_release_all(), 0, 'a second sync_release_all releases nothing');
SELECT is_empty($$SELECT * FROM sync_locks WHERE lock_name LIKE '%/tap_beh/%'$$,
                'no lock of this file is left');

SELECT * FROM finish();
ROLLBACK;

DELETE FROM sync_limit WHERE name LIKE 'tap_beh/%';
