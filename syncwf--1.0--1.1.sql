/* syncwf--1.0--1.1.sql: update the syncwf extension from version 1.0 to 1.1 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION syncwf UPDATE TO '1.1'" to load this file. \quit

-- Version 1.1 has the same SQL objects as 1.0, so there is nothing to change
-- here.  It starts the upgrade chain: from 1.1 on, every change to the
-- extension's SQL objects comes as a script syncwf--A--B.sql, and
-- syncwf--B.sql installs the same objects from scratch.
-- test/t/012_upgrade.pl checks that an updated installation and a fresh one
-- have the same objects.
