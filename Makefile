# syncwf: PGXS build.
#
#   make                 build the module (warnings are errors)
#   make install         install into the PostgreSQL found by $(PG_CONFIG)
#   make test            every suite, from scratch (scripts/test.sh)
#   make bench           pgbench comparison, writes docs/benchmarks.md
#   make test-valgrind   the SQL suites against a server under valgrind memcheck

EXTENSION    = syncwf
MODULE_big   = syncwf
OBJS         = src/syncwf.o src/guc.o src/lock_table.o src/wait_queue.o \
               src/holds.o src/limits.o src/names.o src/tokens.o src/sql_api.o \
               src/keyed.o src/state_table.o src/controllers.o src/worker.o \
               src/launch_plans.o
DATA         = syncwf--1.0.sql
PGFILEDESC   = "syncwf - in-database mutexes and semaphores with wait queues"

PG_CONFIG   ?= pg_config
PG_CPPFLAGS  = -I$(srcdir)/src
# Warnings are errors.  -Wextra's unused-parameter, missing-field-initializers
# and sign-compare fire inside PostgreSQL's own headers, so they stay off.
PG_CFLAGS    = -Wall -Wextra -Werror -Wno-unused-parameter \
               -Wno-missing-field-initializers -Wno-sign-compare

# No LLVM bitcode (JIT inlining) for this module: Debian's PGXS sets
# with_llvm = yes and would then need clang at build and install time.
# `override` beats the plain assignment in Makefile.global.
override with_llvm = no

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

.PHONY: test bench test-valgrind
test:
	bash scripts/test.sh

bench:
	bash scripts/bench.sh

test-valgrind:
	SYNCWF_VALGRIND=1 bash scripts/test.sh
