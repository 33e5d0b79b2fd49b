--
-- names: the lock name grammar (src/names.c) and argument checking
-- (src/sql_common.c) of every function that takes lock names.
--
--   lock-name = ("mtx" / "sem") "/" namespace "/" key, at most 260 bytes,
--   namespace without "/", no control characters (0x01-0x1F, 0x7F) anywhere.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
-- Helpers regress_util.expect_error (reports a statement's error as a
-- NOTICE with SQLSTATE, DETAIL and HINT) and regress_util.error_of
-- (returns "SQLSTATE: message"), created by 00_setup.

-- Valid names.  The key may contain "/" (even be just "/"), any non-control
-- character is allowed, and the kind prefix is case-sensitive.
SELECT sync_try_acquire('mtx/ns/key') IS NOT NULL AS plain_mutex;
SELECT sync_try_acquire('mtx/ns/a/b/c') IS NOT NULL AS key_with_slashes;
SELECT sync_try_acquire('mtx/ns//') IS NOT NULL AS key_is_a_slash;
SELECT sync_try_acquire('mtx/ns/ends-with-slash/') IS NOT NULL AS key_ending_in_slash;
SELECT sync_try_acquire('mtx/name space/key with spaces') IS NOT NULL AS spaces;
SELECT sync_try_acquire('mtx/ünï/ключ ✓') IS NOT NULL AS multibyte;
SELECT sync_try_acquire('mtx/a/b') IS NOT NULL AS one_char_parts;
SELECT lock_name, kind FROM sync_locks ORDER BY lock_name;
SELECT sync_release_all() AS released;

-- Exactly 260 bytes is accepted ("sem/" and the 256 of Argo's longest
-- names), counted in bytes not characters.
SELECT octet_length('mtx/ns/' || repeat('k', 253)) AS bytes,
       sync_try_acquire('mtx/ns/' || repeat('k', 253)) IS NOT NULL AS acquired;
SELECT octet_length('mtx/ns/k' || repeat('é', 126)) AS bytes,
       length('mtx/ns/k' || repeat('é', 126)) AS characters,
       sync_try_acquire('mtx/ns/k' || repeat('é', 126)) IS NOT NULL AS acquired;
SELECT octet_length(lock_name) AS bytes FROM sync_holders ORDER BY 1;
SELECT sync_release('mtx/ns/' || repeat('k', 253)) AS released,
       sync_release('mtx/ns/k' || repeat('é', 126)) AS released;

--
-- Every kind of invalid name, with its detail and hint.
--
-- unknown or missing kind prefix
CALL regress_util.expect_error($$SELECT sync_acquire('foo/ns/key')$$);
CALL regress_util.expect_error($$SELECT sync_acquire('MTX/ns/key')$$);
CALL regress_util.expect_error($$SELECT sync_acquire('mutex/ns/key')$$);
CALL regress_util.expect_error($$SELECT sync_acquire(' mtx/ns/key')$$);
CALL regress_util.expect_error($$SELECT sync_acquire('ns/key')$$);
CALL regress_util.expect_error($$SELECT sync_acquire('mtx')$$);
CALL regress_util.expect_error($$SELECT sync_acquire('')$$);
-- empty namespace
CALL regress_util.expect_error($$SELECT sync_acquire('mtx//key')$$);
CALL regress_util.expect_error($$SELECT sync_acquire('sem//key')$$);
CALL regress_util.expect_error($$SELECT sync_acquire('mtx///')$$);
-- no key: no "/" after the namespace (also when the namespace is empty too)
CALL regress_util.expect_error($$SELECT sync_acquire('mtx/ns')$$);
CALL regress_util.expect_error($$SELECT sync_acquire('sem/ns')$$);
CALL regress_util.expect_error($$SELECT sync_acquire('mtx/')$$);
-- empty key
CALL regress_util.expect_error($$SELECT sync_acquire('mtx/ns/')$$);
CALL regress_util.expect_error($$SELECT sync_acquire('sem/ns/')$$);
-- control characters: newline, tab, DEL, 0x01, 0x1F, wherever they are
CALL regress_util.expect_error($$SELECT sync_acquire(E'mtx/ns/a\nb')$$);
CALL regress_util.expect_error($$SELECT sync_acquire(E'mtx/ns/a\tb')$$);
CALL regress_util.expect_error($$SELECT sync_acquire(E'mtx/ns/a\x7fb')$$);
CALL regress_util.expect_error($$SELECT sync_acquire(E'mtx/n\x01s/key')$$);
CALL regress_util.expect_error($$SELECT sync_acquire(E'mtx/ns/key\x1f')$$);
CALL regress_util.expect_error($$SELECT sync_acquire(E'\rmtx/ns/key')$$);
-- a control character is reported before a bad prefix
CALL regress_util.expect_error($$SELECT sync_acquire(E'bad\n')$$);
-- 261 bytes: one too many (and the length is checked first of all)
CALL regress_util.expect_error($$SELECT sync_acquire('mtx/ns/' || repeat('k', 254))$$);
CALL regress_util.expect_error($$SELECT sync_acquire('mtx/ns/' || repeat('é', 127))$$);
CALL regress_util.expect_error($$SELECT sync_acquire(repeat(E'\n', 300))$$);
-- NULL name, NULL priority, negative timeout
CALL regress_util.expect_error($$SELECT sync_acquire(NULL::text)$$);
CALL regress_util.expect_error($$SELECT sync_acquire('mtx/ns/key', NULL)$$);
CALL regress_util.expect_error($$SELECT sync_acquire('mtx/ns/key', 0, '-1 ms')$$);
CALL regress_util.expect_error($$SELECT sync_acquire('mtx/ns/key', 0, '1 day -25 hours')$$);
-- the name is checked before the other arguments
CALL regress_util.expect_error($$SELECT sync_acquire('bad', NULL, '-1 s')$$);
-- none of these left anything behind
SELECT count(*) AS locks FROM sync_locks;

--
-- The same checks in every function that takes one lock name.
--
SELECT c.case_name, f.fn, regress_util.error_of(format(f.tmpl, c.arg)) AS result
  FROM (VALUES (1, 'unknown prefix', quote_literal('foo/ns/key')),
               (2, 'empty namespace', quote_literal('mtx//key')),
               (3, 'no key', quote_literal('sem/ns')),
               (4, 'empty key', quote_literal('mtx/ns/')),
               (5, 'newline', quote_literal(E'mtx/ns/a\nb')),
               (6, 'tab', quote_literal(E'mtx/ns/a\tb')),
               (7, 'DEL', quote_literal(E'mtx/ns/a\x7fb')),
               (8, '261 bytes', quote_literal('mtx/ns/' || repeat('k', 254))),
               (9, 'NULL', 'NULL')) AS c(n, case_name, arg)
 CROSS JOIN
       (VALUES (1, 'sync_acquire', 'SELECT sync_acquire(%s::text)'),
               (2, 'sync_try_acquire', 'SELECT sync_try_acquire(%s::text)'),
               (3, 'sync_acquire_xact', 'SELECT sync_acquire_xact(%s::text)'),
               (4, 'sync_try_acquire_xact', 'SELECT sync_try_acquire_xact(%s::text)'),
               (5, 'sync_release', 'SELECT sync_release(%s::text)')) AS f(n, fn, tmpl)
 ORDER BY c.n, f.n;

-- ... and in every array form, for an invalid element
SELECT c.case_name, f.fn, regress_util.error_of(format(f.tmpl, c.arg)) AS result
  FROM (VALUES (1, 'unknown prefix', quote_literal('foo/ns/key')),
               (2, 'empty namespace', quote_literal('mtx//key')),
               (3, 'no key', quote_literal('sem/ns')),
               (4, 'empty key', quote_literal('mtx/ns/')),
               (5, 'newline', quote_literal(E'mtx/ns/a\nb')),
               (6, '261 bytes', quote_literal('mtx/ns/' || repeat('k', 254))),
               (7, 'NULL', 'NULL')) AS c(n, case_name, arg)
 CROSS JOIN
       (VALUES (1, 'sync_acquire[]', 'SELECT sync_acquire(ARRAY[''mtx/ns/ok'', %s])'),
               (2, 'sync_try_acquire[]', 'SELECT sync_try_acquire(ARRAY[''mtx/ns/ok'', %s])'),
               (3, 'sync_acquire_xact[]', 'SELECT sync_acquire_xact(ARRAY[''mtx/ns/ok'', %s])'),
               (4, 'sync_try_acquire_xact[]', 'SELECT sync_try_acquire_xact(ARRAY[''mtx/ns/ok'', %s])')) AS f(n, fn, tmpl)
 ORDER BY c.n, f.n;
-- the valid element of those arrays was not taken either
SELECT count(*) AS locks FROM sync_locks;

-- NULL priority and negative timeout, in every form that has them
SELECT f.fn, regress_util.error_of(f.stmt) AS result
  FROM (VALUES (1, 'sync_acquire', 'SELECT sync_acquire(''mtx/ns/k'', NULL)'),
               (2, 'sync_try_acquire', 'SELECT sync_try_acquire(''mtx/ns/k'', NULL)'),
               (3, 'sync_acquire_xact', 'SELECT sync_acquire_xact(''mtx/ns/k'', NULL)'),
               (4, 'sync_try_acquire_xact', 'SELECT sync_try_acquire_xact(''mtx/ns/k'', NULL)'),
               (5, 'sync_acquire[]', 'SELECT sync_acquire(ARRAY[''mtx/ns/k''], NULL)'),
               (6, 'sync_try_acquire[]', 'SELECT sync_try_acquire(ARRAY[''mtx/ns/k''], NULL)'),
               (7, 'sync_acquire_xact[]', 'SELECT sync_acquire_xact(ARRAY[''mtx/ns/k''], NULL)'),
               (8, 'sync_try_acquire_xact[]', 'SELECT sync_try_acquire_xact(ARRAY[''mtx/ns/k''], NULL)'),
               (9, 'sync_acquire', 'SELECT sync_acquire(''mtx/ns/k'', 0, ''-1 s'')'),
               (10, 'sync_acquire_xact', 'SELECT sync_acquire_xact(''mtx/ns/k'', 0, ''-1 s'')'),
               (11, 'sync_acquire[]', 'SELECT sync_acquire(ARRAY[''mtx/ns/k''], 0, ''-1 s'')'),
               (12, 'sync_acquire_xact[]', 'SELECT sync_acquire_xact(ARRAY[''mtx/ns/k''], 0, ''-1 s'')'),
               (13, 'sync_acquire', 'SELECT sync_acquire(''mtx/ns/k'', 0, ''-1 mon'')'),
               (14, 'sync_acquire', 'SELECT sync_acquire(''mtx/ns/k'', 0, ''-00:00:00.000001'')'))
       AS f(n, fn, stmt)
 ORDER BY f.n;
SELECT count(*) AS locks FROM sync_locks;

--
-- Array arguments.
--
CALL regress_util.expect_error($$SELECT sync_acquire(NULL::text[])$$);
CALL regress_util.expect_error($$SELECT sync_acquire(ARRAY[NULL]::text[])$$);
CALL regress_util.expect_error($$SELECT sync_acquire(ARRAY['mtx/ns/a', NULL, 'mtx/ns/b'])$$);
CALL regress_util.expect_error($$SELECT sync_acquire('{}'::text[])$$);
CALL regress_util.expect_error($$SELECT sync_acquire(ARRAY['mtx/ns/a', 'mtx/ns/b', 'mtx/ns/a'])$$);
CALL regress_util.expect_error($$SELECT sync_acquire(ARRAY[['mtx/ns/a', 'mtx/ns/b'], ['mtx/ns/c', 'mtx/ns/d']])$$);
CALL regress_util.expect_error($$SELECT sync_acquire(ARRAY[['mtx/ns/a']])$$);
-- 65 names: too many (checked before the names themselves)
CALL regress_util.expect_error($$SELECT sync_acquire(array(SELECT 'mtx/many/' || g FROM generate_series(1, 65) g))$$);
CALL regress_util.expect_error($$SELECT sync_acquire(array(SELECT 'bad' || g FROM generate_series(1, 65) g))$$);
-- duplicates are exact byte matches: case and a trailing "/" make
-- different locks
SELECT cardinality(sync_try_acquire(ARRAY['mtx/dup/a', 'mtx/dup/A', 'mtx/dup/a/'])) AS tokens;
SELECT sync_release_all() AS released;
-- an array with a non-default lower bound is still one-dimensional
SELECT cardinality(sync_try_acquire('[5:6]={mtx/lb/a,mtx/lb/b}'::text[])) AS tokens;
SELECT sync_release_all() AS released;

-- The same array checks in all four array forms.
SELECT c.case_name, f.fn, regress_util.error_of(format(f.tmpl, c.arg)) AS result
  FROM (VALUES (1, 'NULL array', 'NULL::text[]'),
               (2, 'NULL element', 'ARRAY[''mtx/ns/a'', NULL]'),
               (3, 'empty array', '''{}''::text[]'),
               (4, 'duplicate', 'ARRAY[''mtx/ns/a'', ''mtx/ns/a'']'),
               (5, 'two dimensions', 'ARRAY[[''mtx/ns/a''], [''mtx/ns/b'']]'),
               (6, '65 names', 'array(SELECT ''mtx/many/'' || g FROM generate_series(1, 65) g)'))
       AS c(n, case_name, arg)
 CROSS JOIN
       (VALUES (1, 'sync_acquire[]', 'SELECT sync_acquire(%s)'),
               (2, 'sync_try_acquire[]', 'SELECT sync_try_acquire(%s)'),
               (3, 'sync_acquire_xact[]', 'SELECT sync_acquire_xact(%s)'),
               (4, 'sync_try_acquire_xact[]', 'SELECT sync_try_acquire_xact(%s)')) AS f(n, fn, tmpl)
 ORDER BY c.n, f.n;
SELECT count(*) AS locks FROM sync_locks;

-- 64 names is the maximum, and fine
SELECT cardinality(sync_acquire(array(SELECT 'mtx/many/' || g FROM generate_series(1, 64) g))) AS tokens;
SELECT count(*) AS holders FROM sync_holders WHERE pid = pg_backend_pid();
SELECT sync_release_all() AS released;

--
-- sync_release checks the name the same way; a valid name this session
-- does not hold is a WARNING (SQLSTATE 01000) and false.
--
CALL regress_util.expect_error($$SELECT sync_release(NULL)$$);
CALL regress_util.expect_error($$SELECT sync_release('mtx/ns')$$);
SELECT sync_release('mtx/never/held') AS released;
-- a semaphore name needs no sync_limit row to be released (or not)
SELECT sync_release('sem/no/row') AS released;
\set VERBOSITY sqlstate
SELECT sync_release('mtx/never/held') AS released;
\set VERBOSITY default
