-- Comparison 8 of scripts/bench.sh, reference contenders: launch-plan
-- concurrency the way flyteadmin checks it since v1.16 (PR 6475,
-- checkLaunchPlanConcurrency in pkg/manager/impl/execution_manager.go):
-- executions and launch plans are rows of two tables, and a launch counts
-- the plan's active executions by joining them, then creates the new
-- execution if the count is below the limit of the version being launched
-- (bench/launch_flyte.sql).
--
-- The shape is flyteadmin's (pkg/repositories/models, v1.16.8): an
-- execution is keyed by (execution_project, execution_domain,
-- execution_name), has a numeric id (its BaseModel, indexed), and points at
-- the launch plan version it was launched from (launch_plan_id, indexed); a
-- launch plan version is keyed by (project, domain, name, version) and has
-- a numeric id.  Two reference schemas, the same but for one index:
--   flyte          as Flyte ships it: with idx_executions_phase, which its
--                  migration 2025-05-29-add-index-executions-phase adds and
--                  which serves the count;
--   flyte_nophase  without it, as before v1.16 (for information only).
-- The other indexed columns of flyteadmin's executions (workflow id, task
-- id, created at, error kind, user, state, deleted at) and its other
-- columns (spec, closure, ...) are left out: that only makes the
-- references' inserts and updates cheaper.  The concurrency policy, in
-- Flyte part of the launch plan's spec, is a column.  No lock serializes
-- concurrent launches (Flyte has none either).
CREATE FUNCTION bench_flyte_schema(s name, phase_index boolean, max_concurrency integer)
RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    EXECUTE format('CREATE SCHEMA %I', s);
    EXECUTE format($ddl$
        CREATE TABLE %1$I.launch_plans (
            id              serial  NOT NULL UNIQUE,
            project         text    NOT NULL,
            domain          text    NOT NULL,
            name            text    NOT NULL,
            version         text    NOT NULL,
            max_concurrency integer,              -- the version's policy (NULL: none)
            behavior        text,
            PRIMARY KEY (project, domain, name, version)
        );
        CREATE TABLE %1$I.executions (
            id                bigserial   NOT NULL,
            execution_project text        NOT NULL,
            execution_domain  text        NOT NULL,
            execution_name    text        NOT NULL,
            launch_plan_id    integer     NOT NULL,
            phase             text        NOT NULL,
            created_at        timestamptz NOT NULL,
            updated_at        timestamptz,
            PRIMARY KEY (execution_project, execution_domain, execution_name)
        );
        CREATE INDEX idx_executions_id ON %1$I.executions (id);
        CREATE INDEX idx_executions_launch_plan_id ON %1$I.executions (launch_plan_id);
        INSERT INTO %1$I.launch_plans (project, domain, name, version, max_concurrency, behavior)
        VALUES ('bench', 'dev', 'lp8', 'v1', %2$s, 'WAIT');
        $ddl$, s, max_concurrency);
    IF phase_index THEN
        EXECUTE format('CREATE INDEX idx_executions_phase ON %I.executions (phase)', s);
    END IF;
END
$$;

-- The history every contender of comparison 8 starts every round with: n
-- terminal executions of launch plan bench/dev/lp8 version v1, the same ids,
-- phases and timestamps in every table (one every 10 s up to now; 3 in 6
-- SUCCEEDED, then FAILED, ABORTED, TIMED_OUT).  s: a reference schema, or
-- NULL for syncwf's sync_execution (plain rows: terminal executions hold no
-- slot).
CREATE FUNCTION bench_launch_history(s name, n integer)
RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    IF s IS NOT NULL THEN
        EXECUTE format($sql$
            INSERT INTO %1$I.executions (execution_project, execution_domain, execution_name,
                                         launch_plan_id, phase, created_at, updated_at)
            SELECT 'bench', 'dev', 'h8/' || g,
                   (SELECT id FROM %1$I.launch_plans
                     WHERE (project, domain, name, version) = ('bench', 'dev', 'lp8', 'v1')),
                   (ARRAY['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED_OUT'])[g %% 6 + 1],
                   now() - ($1 - g + 1) * interval '10 seconds',
                   now() - ($1 - g + 1) * interval '10 seconds' + interval '5 seconds'
              FROM generate_series(1, $1) g
            $sql$, s) USING n;
    ELSE
        EXECUTE $sql$
            INSERT INTO sync_execution (execution_id, project, domain, name, version, phase,
                                        created_at, queued_at, started_at, finished_at)
            SELECT 'h8/' || g, 'bench', 'dev', 'lp8', 'v1',
                   (ARRAY['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED_OUT'])[g % 6 + 1],
                   now() - ($1 - g + 1) * interval '10 seconds',
                   now() - ($1 - g + 1) * interval '10 seconds' + interval '1 second',
                   now() - ($1 - g + 1) * interval '10 seconds' + interval '2 seconds',
                   now() - ($1 - g + 1) * interval '10 seconds' + interval '5 seconds'
              FROM generate_series(1, $1) g
            $sql$ USING n;
    END IF;
END
$$;
