--
-- channels: sync_channel(controller), the NOTIFY channel on which the
-- events of one controller's keyed entries go out besides "syncwf" (what
-- is sent there is in the isolation spec keyed-channels and in
-- test/t/019_channels.pl).  A controller name of at most 56 bytes without
-- "#" gives "syncwf/<name>"; any other gives "syncwf/", the longest
-- beginning of at most 39 bytes that ends on a character boundary, "#" and
-- the first 16 hex digits of the name's SHA-256: at most 63 bytes, the
-- longest channel name there is.
--
CREATE EXTENSION IF NOT EXISTS syncwf;
-- Helpers regress_util.expect_error (reports a statement's error as a
-- NOTICE with SQLSTATE, DETAIL and HINT) and regress_util.error_of
-- (returns "SQLSTATE: message"), created by 00_setup.

-- the formula, in SQL, for names of one-byte characters
CREATE FUNCTION pg_temp.channel_of(c text) RETURNS text LANGUAGE sql AS $$
    SELECT CASE WHEN octet_length(c) <= 56 AND strpos(c, '#') = 0
                THEN 'syncwf/' || c
                ELSE 'syncwf/' || left(c, 39) || '#' ||
                     left(encode(sha256(convert_to(c, 'UTF8')), 'hex'), 16) END $$;

SELECT CASE WHEN octet_length(c) > 60 THEN left(c, 8) || '... (' || octet_length(c) || ' bytes)'
            ELSE c END AS controller,
       sync_channel(c) AS channel, octet_length(sync_channel(c)) AS bytes,
       sync_channel(c) = pg_temp.channel_of(c) AS as_documented
  FROM (VALUES ('controller-eu-1'), ('Controller EU "1"'), ('a'), ('ns/ctl'),
               (repeat('x', 56)), (repeat('x', 57)), ('ctl#1'), ('#'),
               (repeat('y', 255)), (repeat('y', 256))) AS v(c);
-- names that begin alike get different channels
SELECT sync_channel(repeat('z', 60) || '-1') <> sync_channel(repeat('z', 60) || '-2') AS distinct_channels,
       left(sync_channel(repeat('z', 60) || '-1'), 47) = left(sync_channel(repeat('z', 60) || '-2'), 47) AS same_beginning;
-- the beginning ends on a character boundary: 'é' is two bytes in UTF-8
SELECT current_setting('server_encoding') = 'UTF8' AS utf8,
       octet_length(sync_channel(repeat('é', 28))) AS plain_56_bytes,
       sync_channel(repeat('é', 29)) = 'syncwf/' || repeat('é', 19) || '#' ||
           left(encode(sha256(convert_to(repeat('é', 29), 'UTF8')), 'hex'), 16) AS cut_at_38_bytes;
-- immutable and parallel safe, unlike every other function of syncwf
SELECT provolatile, proparallel, proisstrict FROM pg_proc WHERE oid = 'sync_channel(text)'::regprocedure;

-- a channel LISTEN takes as it is (quoted)
DO $$ BEGIN EXECUTE format('LISTEN %I', sync_channel(repeat('c', 100))); END $$;
DO $$ BEGIN EXECUTE format('LISTEN %I', sync_channel('Controller EU "1"')); END $$;
SELECT pg_listening_channels() AS listening ORDER BY 1;
UNLISTEN *;

-- the rules of controller names
SELECT regress_util.error_of($$SELECT sync_channel(NULL)$$) AS null_name,
       regress_util.error_of($$SELECT sync_channel('')$$) AS empty_name,
       regress_util.error_of($$SELECT sync_channel(repeat('c', 257))$$) AS too_long,
       regress_util.error_of($$SELECT sync_channel(E'ctl\n')$$) AS control_character;
CALL regress_util.expect_error($$SELECT sync_channel(repeat('c', 257))$$);
