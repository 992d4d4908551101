-- The workflow tables of this admin, beside the xxl-job 2.4 schema, in the current schema. The admin creates
-- them the first time a workflow is saved; an account without CREATE rights needs them made beforehand from
-- this script (`xxl-job-admin ddl` prints it). Every statement may run again. Times are epoch milliseconds.
-- The Java admin never reads these tables.

CREATE TABLE IF NOT EXISTS xxl_job_ext_workflow
(
    id                bigserial    NOT NULL,
    name              varchar(128) NOT NULL,
    job_group         integer      NOT NULL,
    current_version   integer      NOT NULL,
    trigger_status    smallint     NOT NULL DEFAULT 0,
    schedule_type     varchar(16)  NOT NULL DEFAULT 'NONE',
    schedule_conf     varchar(128),
    misfire_strategy  varchar(32)  NOT NULL DEFAULT 'DO_NOTHING',
    trigger_next_time bigint       NOT NULL DEFAULT 0,
    trigger_last_time bigint       NOT NULL DEFAULT 0,
    author            varchar(64),
    add_time          bigint       NOT NULL,
    update_time       bigint       NOT NULL,
    PRIMARY KEY (id),
    CONSTRAINT uk_xxl_job_ext_workflow_name UNIQUE (name)
);
CREATE INDEX IF NOT EXISTS i_xxl_job_ext_workflow_trigger ON xxl_job_ext_workflow (trigger_status, trigger_next_time);
CREATE INDEX IF NOT EXISTS i_xxl_job_ext_workflow_group ON xxl_job_ext_workflow (job_group);

CREATE TABLE IF NOT EXISTS xxl_job_ext_workflow_version
(
    workflow_id bigint      NOT NULL,
    version     integer     NOT NULL,
    definition  text        NOT NULL,
    author      varchar(64),
    add_time    bigint      NOT NULL,
    PRIMARY KEY (workflow_id, version)
);

CREATE TABLE IF NOT EXISTS xxl_job_ext_workflow_run
(
    id            bigserial   NOT NULL,
    workflow_id   bigint      NOT NULL,
    version       integer     NOT NULL,
    state         varchar(16) NOT NULL,
    seq           integer     NOT NULL DEFAULT 0,
    trigger_type  varchar(16) NOT NULL,
    logical_time  bigint      NOT NULL,
    params        text        NOT NULL,
    started_by    varchar(64),
    parent_run_id bigint,
    parent_node   varchar(64),
    backfill_id   bigint,
    add_time      bigint      NOT NULL,
    start_time    bigint,
    end_time      bigint,
    deadline_time bigint,
    message       text,
    PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS i_xxl_job_ext_workflow_run_workflow ON xxl_job_ext_workflow_run (workflow_id, id);
CREATE INDEX IF NOT EXISTS i_xxl_job_ext_workflow_run_state ON xxl_job_ext_workflow_run (state, workflow_id);

CREATE TABLE IF NOT EXISTS xxl_job_ext_workflow_node
(
    run_id     bigint      NOT NULL,
    node       varchar(64) NOT NULL,
    attempt    integer     NOT NULL,
    state      varchar(20) NOT NULL,
    seq        integer     NOT NULL DEFAULT 0,
    ready_time bigint,
    retry_time bigint,
    send_time  bigint,
    end_time   bigint,
    param      text,
    output     text,
    message    text,
    acted_by   varchar(64),
    PRIMARY KEY (run_id, node, attempt)
);
CREATE INDEX IF NOT EXISTS i_xxl_job_ext_workflow_node_state ON xxl_job_ext_workflow_node (state);

CREATE TABLE IF NOT EXISTS xxl_job_ext_workflow_trigger
(
    log_id      bigint      NOT NULL,
    run_id      bigint      NOT NULL,
    node        varchar(64) NOT NULL,
    attempt     integer     NOT NULL,
    shard_index integer     NOT NULL DEFAULT 0,
    shard_total integer     NOT NULL DEFAULT 1,
    PRIMARY KEY (log_id)
);
CREATE INDEX IF NOT EXISTS i_xxl_job_ext_workflow_trigger_attempt ON xxl_job_ext_workflow_trigger (run_id, node, attempt);

CREATE TABLE IF NOT EXISTS xxl_job_ext_workflow_backfill
(
    id          bigserial   NOT NULL,
    workflow_id bigint      NOT NULL,
    state       varchar(16) NOT NULL,
    from_time   bigint      NOT NULL,
    to_time     bigint      NOT NULL,
    parallel    integer     NOT NULL,
    total       integer     NOT NULL,
    author      varchar(64),
    add_time    bigint      NOT NULL,
    end_time    bigint,
    PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS i_xxl_job_ext_workflow_backfill_workflow ON xxl_job_ext_workflow_backfill (workflow_id, id);
