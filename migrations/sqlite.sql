-- The xxl-job 2.4 schema in SQLite types, for the embedded database. Same tables, columns, defaults and
-- index names as the MySQL schema; DATETIME values are stored as 'YYYY-MM-DD HH:MM:SS' text.

CREATE TABLE xxl_job_info
(
    id                        INTEGER PRIMARY KEY AUTOINCREMENT,
    job_group                 INTEGER      NOT NULL,
    job_desc                  VARCHAR(255) NOT NULL,
    add_time                  DATETIME DEFAULT NULL,
    update_time               DATETIME DEFAULT NULL,
    author                    VARCHAR(64)  DEFAULT NULL,
    alarm_email               VARCHAR(255) DEFAULT NULL,
    schedule_type             VARCHAR(50)  NOT NULL DEFAULT 'NONE',
    schedule_conf             VARCHAR(128) DEFAULT NULL,
    misfire_strategy          VARCHAR(50)  NOT NULL DEFAULT 'DO_NOTHING',
    executor_route_strategy   VARCHAR(50)  DEFAULT NULL,
    executor_handler          VARCHAR(255) DEFAULT NULL,
    executor_param            VARCHAR(512) DEFAULT NULL,
    executor_block_strategy   VARCHAR(50)  DEFAULT NULL,
    executor_timeout          INTEGER      NOT NULL DEFAULT 0,
    executor_fail_retry_count INTEGER      NOT NULL DEFAULT 0,
    glue_type                 VARCHAR(50)  NOT NULL,
    glue_source               TEXT,
    glue_remark               VARCHAR(128) DEFAULT NULL,
    glue_updatetime           DATETIME DEFAULT NULL,
    child_jobid               VARCHAR(255) DEFAULT NULL,
    trigger_status            INTEGER      NOT NULL DEFAULT 0,
    trigger_last_time         INTEGER      NOT NULL DEFAULT 0,
    trigger_next_time         INTEGER      NOT NULL DEFAULT 0
);

CREATE TABLE xxl_job_log
(
    id                        INTEGER PRIMARY KEY AUTOINCREMENT,
    job_group                 INTEGER NOT NULL,
    job_id                    INTEGER NOT NULL,
    executor_address          VARCHAR(255) DEFAULT NULL,
    executor_handler          VARCHAR(255) DEFAULT NULL,
    executor_param            VARCHAR(512) DEFAULT NULL,
    executor_sharding_param   VARCHAR(20)  DEFAULT NULL,
    executor_fail_retry_count INTEGER NOT NULL DEFAULT 0,
    trigger_time              DATETIME DEFAULT NULL,
    trigger_code              INTEGER NOT NULL,
    trigger_msg               TEXT,
    handle_time               DATETIME DEFAULT NULL,
    handle_code               INTEGER NOT NULL,
    handle_msg                TEXT,
    alarm_status              INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX I_trigger_time ON xxl_job_log (trigger_time);
CREATE INDEX I_handle_code ON xxl_job_log (handle_code);
CREATE INDEX I_jobid_jobgroup ON xxl_job_log (job_id, job_group);
CREATE INDEX I_job_id ON xxl_job_log (job_id);

CREATE TABLE xxl_job_log_report
(
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    trigger_day   DATETIME DEFAULT NULL,
    running_count INTEGER NOT NULL DEFAULT 0,
    suc_count     INTEGER NOT NULL DEFAULT 0,
    fail_count    INTEGER NOT NULL DEFAULT 0,
    update_time   DATETIME DEFAULT NULL
);
CREATE UNIQUE INDEX i_trigger_day ON xxl_job_log_report (trigger_day);

CREATE TABLE xxl_job_logglue
(
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id      INTEGER      NOT NULL,
    glue_type   VARCHAR(50)  DEFAULT NULL,
    glue_source TEXT,
    glue_remark VARCHAR(128) NOT NULL,
    add_time    DATETIME DEFAULT NULL,
    update_time DATETIME DEFAULT NULL
);

CREATE TABLE xxl_job_registry
(
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    registry_group VARCHAR(50)  NOT NULL,
    registry_key   VARCHAR(255) NOT NULL,
    registry_value VARCHAR(255) NOT NULL,
    update_time    DATETIME DEFAULT NULL
);
CREATE UNIQUE INDEX i_g_k_v ON xxl_job_registry (registry_group, registry_key, registry_value);

CREATE TABLE xxl_job_group
(
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    app_name     VARCHAR(64) NOT NULL,
    title        VARCHAR(12) NOT NULL,
    address_type INTEGER     NOT NULL DEFAULT 0,
    address_list TEXT,
    update_time  DATETIME DEFAULT NULL
);

CREATE TABLE xxl_job_user
(
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    username   VARCHAR(50)  NOT NULL,
    password   VARCHAR(50)  NOT NULL,
    role       INTEGER      NOT NULL,
    permission VARCHAR(255) DEFAULT NULL
);
CREATE UNIQUE INDEX i_username ON xxl_job_user (username);

CREATE TABLE xxl_job_lock
(
    lock_name VARCHAR(50) NOT NULL PRIMARY KEY
);
