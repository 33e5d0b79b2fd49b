/* syncwf--1.7--1.8.sql: update the syncwf extension from version 1.7 to 1.8 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION syncwf UPDATE TO '1.8'" to load this file. \quit

-- Each change below is also in syncwf--1.8.sql, which installs 1.8 from
-- scratch; test/t/012_upgrade.pl checks that both give the same objects.
