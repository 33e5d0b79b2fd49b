# syncwf: PGXS build.
#
#   make                 build the module (warnings are errors)
#   make install         install into the PostgreSQL found by $(PG_CONFIG)
#   make installcheck    the pg_regress (sql/) and isolation suites against a
#                        running server configured as test/regress.conf says
#                        (syncwf preloaded, syncwf.database = 'regression');
#                        PGHOST/PGPORT/PGUSER choose the server
#   make test            every suite on PostgreSQL 15, 17 and 18, from scratch
#                        (scripts/test.sh; PG=17 for one major)
#   make bench           pgbench comparison, writes docs/benchmarks.md
#   make test-valgrind   the SQL suites against a server under valgrind memcheck
#   make dist            dist/syncwf-VERSION.zip for PGXN (scripts/package.sh)
#   make deb             Debian packages for 15, 17 and 18 in dist/debian/

EXTENSION    = syncwf
MODULE_big   = syncwf
# One folder a subsystem, bottom to top; each calls only those above it in
# this list (src/README.md).
OBJS         = src/core/client_wait.o src/core/guc.o src/core/holder_wakeups.o \
               src/core/names.o src/core/notify_payloads.o \
               src/core/owner_statements.o src/core/privileges.o \
               src/core/table_lookup.o src/core/table_rows.o \
               src/core/shared_pool.o src/core/tokens.o \
               src/engine/backend_holds.o src/engine/backend_wait.o \
               src/engine/deadlock.o \
               src/engine/fair_weights.o src/engine/grant_rules.o \
               src/engine/group_ready.o \
               src/engine/entry_pool.o src/engine/limit_groups.o \
               src/engine/limit_rows.o \
               src/engine/lock_table.o \
               src/engine/outbox.o src/engine/preemption.o \
               src/engine/priority_aging.o \
               src/engine/queue_order.o src/engine/queue_rank.o \
               src/engine/rate_limits.o src/engine/request.o \
               src/engine/sem_limits.o src/engine/stats.o \
               src/engine/stats_persist.o src/engine/wait_queue.o \
               src/engine/wait_reasons.o \
               src/engine/worker_deadlines.o \
               src/keyed/controllers.o src/keyed/holder_table.o \
               src/keyed/keyed_load.o src/keyed/keyed_ops.o \
               src/keyed/keyed_preempt.o \
               src/keyed/keyed_request.o src/keyed/keyed_wait.o \
               src/keyed/keyed_xact.o src/keyed/keyed_xact_record.o \
               src/keyed/state_heap.o src/keyed/state_spi.o \
               src/keyed/view_snapshots.o \
               src/launch/launch_heap.o src/launch/launch_policy.o \
               src/launch/launch_spi.o src/launch/reconcile.o \
               src/entry/sql_common.o src/entry/sql_keyed.o \
               src/entry/sql_launch.o src/entry/sql_session.o \
               src/entry/sql_views.o src/entry/syncwf.o src/entry/triggers.o \
               src/entry/worker.o
# One full install script per release line, as contrib does: the first
# (1.0) and the current one; every other version installs as 1.0 plus the
# update scripts (CREATE EXTENSION syncwf VERSION '1.3' follows the chain).
DATA         = syncwf--1.0.sql syncwf--1.8.sql \
               syncwf--1.0--1.1.sql syncwf--1.1--1.2.sql syncwf--1.2--1.3.sql \
               syncwf--1.3--1.4.sql syncwf--1.4--1.5.sql syncwf--1.5--1.6.sql \
               syncwf--1.6--1.7.sql syncwf--1.7--1.8.sql
PGFILEDESC   = "syncwf - in-database mutexes and semaphores with wait queues"

# The directory of this Makefile, also in an out-of-tree (VPATH) build:
#   make -C build/ -f /path/to/syncwf/Makefile
SYNCWF_SRC  := $(dir $(abspath $(lastword $(MAKEFILE_LIST))))

PG_CONFIG   ?= pg_config
PG_CPPFLAGS  = -I$(srcdir)/src
# SYNCWF_ASSERT=1 compiles every Assert() in, against a stock server too
# (the test command builds this way).
ifeq ($(SYNCWF_ASSERT),1)
PG_CPPFLAGS += -DUSE_ASSERT_CHECKING
endif
# Warnings are errors.  -Wextra's unused-parameter, missing-field-initializers
# and sign-compare fire inside PostgreSQL's own headers, so they stay off.
PG_CFLAGS    = -Wall -Wextra -Werror -Wno-unused-parameter \
               -Wno-missing-field-initializers -Wno-sign-compare

# No LLVM bitcode (JIT inlining) for this module: Debian's PGXS sets
# with_llvm = yes and would then need clang at build and install time.
# `override` beats the plain assignment in Makefile.global.
override with_llvm = no

# An out-of-tree (VPATH) build needs the object folders of src/.
$(shell mkdir -p $(sort $(dir $(OBJS))))

# Test suites for installcheck.  sql/ and expected/ sit at the top, as PGXS
# expects; the isolation specs live in test/isolation/{specs,expected}.
# Both suites use database "regression" (syncwf.database in
# test/regress.conf): pg_regress creates it, the isolation run reuses it,
# since the syncwf worker stays connected to it and pg_regress could not
# drop it.
REGRESS      = $(sort $(patsubst $(SYNCWF_SRC)sql/%.sql,%,$(wildcard $(SYNCWF_SRC)sql/*.sql)))
ISOLATION    = $(sort $(patsubst $(SYNCWF_SRC)test/isolation/specs/%.spec,%,$(wildcard $(SYNCWF_SRC)test/isolation/specs/*.spec)))
ISOLATION_OPTS = --inputdir=$(SYNCWF_SRC)test/isolation --use-existing

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# After Makefile.global, which sets them; used when installcheck runs.
CONTRIB_TESTDB   = regression
ISOLATION_TESTDB = regression

.PHONY: test bench test-valgrind dist deb
test:
	bash scripts/test.sh

bench:
	bash scripts/bench.sh

test-valgrind:
	SYNCWF_VALGRIND=1 bash scripts/test.sh

# dist/syncwf-VERSION.zip, the PGXN release (git archive of the tracked files)
dist:
	@bash scripts/package.sh dist

# Debian packages postgresql-NN-syncwf for 15, 17 and 18, in dist/debian/
deb:
	bash scripts/package.sh deb
