-- The workflow tables of this admin, beside the xxl-job 2.4 schema, in SQLite types. The admin creates them
-- the first time a workflow is saved (`xxl-job-admin ddl` prints this script). Every statement may run
-- again. Times are epoch milliseconds. The Java admin never reads these tables.

CREATE TABLE IF NOT EXISTS xxl_job_ext_workflow
(
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    name              VARCHAR(128) NOT NULL UNIQUE,
    job_group         INTEGER      NOT NULL,
    current_version   INTEGER      NOT NULL,
    trigger_status    INTEGER      NOT NULL DEFAULT 0,
    schedule_type     VARCHAR(16)  NOT NULL DEFAULT 'NONE',
    schedule_conf     VARCHAR(128) DEFAULT NULL,
    misfire_strategy  VARCHAR(32)  NOT NULL DEFAULT 'DO_NOTHING',
    trigger_next_time INTEGER      NOT NULL DEFAULT 0,
    trigger_last_time INTEGER      NOT NULL DEFAULT 0,
    author            VARCHAR(64)  DEFAULT NULL,
    add_time          INTEGER      NOT NULL,
    update_time       INTEGER      NOT NULL
);
CREATE INDEX IF NOT EXISTS i_xxl_job_ext_workflow_trigger ON xxl_job_ext_workflow (trigger_status, trigger_next_time);
CREATE INDEX IF NOT EXISTS i_xxl_job_ext_workflow_group ON xxl_job_ext_workflow (job_group);

CREATE TABLE IF NOT EXISTS xxl_job_ext_workflow_version
(
    workflow_id INTEGER     NOT NULL,
    version     INTEGER     NOT NULL,
    definition  TEXT        NOT NULL,
    author      VARCHAR(64) DEFAULT NULL,
    add_time    INTEGER     NOT NULL,
    PRIMARY KEY (workflow_id, version)
);

CREATE TABLE IF NOT EXISTS xxl_job_ext_workflow_run
(
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    workflow_id   INTEGER     NOT NULL,
    version       INTEGER     NOT NULL,
    state         VARCHAR(16) NOT NULL,
    seq           INTEGER     NOT NULL DEFAULT 0,
    trigger_type  VARCHAR(16) NOT NULL,
    logical_time  INTEGER     NOT NULL,
    params        TEXT        NOT NULL,
    started_by    VARCHAR(64) DEFAULT NULL,
    parent_run_id INTEGER     DEFAULT NULL,
    parent_node   VARCHAR(64) DEFAULT NULL,
    backfill_id   INTEGER     DEFAULT NULL,
    add_time      INTEGER     NOT NULL,
    start_time    INTEGER     DEFAULT NULL,
    end_time      INTEGER     DEFAULT NULL,
    deadline_time INTEGER     DEFAULT NULL,
    message       TEXT        DEFAULT NULL
);
CREATE INDEX IF NOT EXISTS i_xxl_job_ext_workflow_run_workflow ON xxl_job_ext_workflow_run (workflow_id, id);
CREATE INDEX IF NOT EXISTS i_xxl_job_ext_workflow_run_state ON xxl_job_ext_workflow_run (state, workflow_id);

CREATE TABLE IF NOT EXISTS xxl_job_ext_workflow_node
(
    run_id     INTEGER     NOT NULL,
    node       VARCHAR(64) NOT NULL,
    attempt    INTEGER     NOT NULL,
    state      VARCHAR(20) NOT NULL,
    seq        INTEGER     NOT NULL DEFAULT 0,
    ready_time INTEGER     DEFAULT NULL,
    retry_time INTEGER     DEFAULT NULL,
    send_time  INTEGER     DEFAULT NULL,
    end_time   INTEGER     DEFAULT NULL,
    param      TEXT        DEFAULT NULL,
    output     TEXT        DEFAULT NULL,
    message    TEXT        DEFAULT NULL,
    acted_by   VARCHAR(64) DEFAULT NULL,
    PRIMARY KEY (run_id, node, attempt)
);
CREATE INDEX IF NOT EXISTS i_xxl_job_ext_workflow_node_state ON xxl_job_ext_workflow_node (state);

CREATE TABLE IF NOT EXISTS xxl_job_ext_workflow_trigger
(
    log_id      INTEGER     NOT NULL PRIMARY KEY,
    run_id      INTEGER     NOT NULL,
    node        VARCHAR(64) NOT NULL,
    attempt     INTEGER     NOT NULL,
    shard_index INTEGER     NOT NULL DEFAULT 0,
    shard_total INTEGER     NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS i_xxl_job_ext_workflow_trigger_attempt ON xxl_job_ext_workflow_trigger (run_id, node, attempt);

CREATE TABLE IF NOT EXISTS xxl_job_ext_workflow_backfill
(
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    workflow_id INTEGER     NOT NULL,
    state       VARCHAR(16) NOT NULL,
    from_time   INTEGER     NOT NULL,
    to_time     INTEGER     NOT NULL,
    parallel    INTEGER     NOT NULL,
    total       INTEGER     NOT NULL,
    author      VARCHAR(64) DEFAULT NULL,
    add_time    INTEGER     NOT NULL,
    end_time    INTEGER     DEFAULT NULL
);
CREATE INDEX IF NOT EXISTS i_xxl_job_ext_workflow_backfill_workflow ON xxl_job_ext_workflow_backfill (workflow_id, id);
