-- The xxl-job 2.4 schema in PostgreSQL types, applied only to a database (schema) that has none of these tables.
-- Same tables, columns, defaults and indexes as the MySQL schema, laid out as the community's PostgreSQL ports
-- of xxl-job do: lower-case unquoted names, serial ids (bigserial for the log), smallint for TINYINT, timestamp
-- (without time zone: wall-clock values in the configured zone, as MySQL's DATETIME) and text for
-- TEXT/MEDIUMTEXT. Index names are per schema in PostgreSQL; the seven here do not collide.

CREATE TABLE xxl_job_info
(
    id                        serial       NOT NULL,
    job_group                 integer      NOT NULL,
    job_desc                  varchar(255) NOT NULL,
    add_time                  timestamp,
    update_time               timestamp,
    author                    varchar(64),
    alarm_email               varchar(255),
    schedule_type             varchar(50)  NOT NULL DEFAULT 'NONE',
    schedule_conf             varchar(128),
    misfire_strategy          varchar(50)  NOT NULL DEFAULT 'DO_NOTHING',
    executor_route_strategy   varchar(50),
    executor_handler          varchar(255),
    executor_param            varchar(512),
    executor_block_strategy   varchar(50),
    executor_timeout          integer      NOT NULL DEFAULT 0,
    executor_fail_retry_count integer      NOT NULL DEFAULT 0,
    glue_type                 varchar(50)  NOT NULL,
    glue_source               text,
    glue_remark               varchar(128),
    glue_updatetime           timestamp,
    child_jobid               varchar(255),
    trigger_status            smallint     NOT NULL DEFAULT 0,
    trigger_last_time         bigint       NOT NULL DEFAULT 0,
    trigger_next_time         bigint       NOT NULL DEFAULT 0,
    PRIMARY KEY (id)
);

CREATE TABLE xxl_job_log
(
    id                        bigserial    NOT NULL,
    job_group                 integer      NOT NULL,
    job_id                    integer      NOT NULL,
    executor_address          varchar(255),
    executor_handler          varchar(255),
    executor_param            varchar(512),
    executor_sharding_param   varchar(20),
    executor_fail_retry_count integer      NOT NULL DEFAULT 0,
    trigger_time              timestamp,
    trigger_code              integer      NOT NULL,
    trigger_msg               text,
    handle_time               timestamp,
    handle_code               integer      NOT NULL,
    handle_msg                text,
    alarm_status              smallint     NOT NULL DEFAULT 0,
    PRIMARY KEY (id)
);
CREATE INDEX i_trigger_time ON xxl_job_log (trigger_time);
CREATE INDEX i_handle_code ON xxl_job_log (handle_code);
CREATE INDEX i_jobid_jobgroup ON xxl_job_log (job_id, job_group);
CREATE INDEX i_job_id ON xxl_job_log (job_id);

CREATE TABLE xxl_job_log_report
(
    id            serial    NOT NULL,
    trigger_day   timestamp,
    running_count integer   NOT NULL DEFAULT 0,
    suc_count     integer   NOT NULL DEFAULT 0,
    fail_count    integer   NOT NULL DEFAULT 0,
    update_time   timestamp,
    PRIMARY KEY (id)
);
CREATE UNIQUE INDEX i_trigger_day ON xxl_job_log_report (trigger_day);

CREATE TABLE xxl_job_logglue
(
    id          serial       NOT NULL,
    job_id      integer      NOT NULL,
    glue_type   varchar(50),
    glue_source text,
    glue_remark varchar(128) NOT NULL,
    add_time    timestamp,
    update_time timestamp,
    PRIMARY KEY (id)
);

CREATE TABLE xxl_job_registry
(
    id             serial       NOT NULL,
    registry_group varchar(50)  NOT NULL,
    registry_key   varchar(255) NOT NULL,
    registry_value varchar(255) NOT NULL,
    update_time    timestamp,
    PRIMARY KEY (id)
);
CREATE UNIQUE INDEX i_g_k_v ON xxl_job_registry (registry_group, registry_key, registry_value);

CREATE TABLE xxl_job_group
(
    id           serial      NOT NULL,
    app_name     varchar(64) NOT NULL,
    title        varchar(12) NOT NULL,
    address_type smallint    NOT NULL DEFAULT 0,
    address_list text,
    update_time  timestamp,
    PRIMARY KEY (id)
);

CREATE TABLE xxl_job_user
(
    id         serial       NOT NULL,
    username   varchar(50)  NOT NULL,
    password   varchar(50)  NOT NULL,
    role       smallint     NOT NULL,
    permission varchar(255),
    PRIMARY KEY (id)
);
CREATE UNIQUE INDEX i_username ON xxl_job_user (username);

CREATE TABLE xxl_job_lock
(
    lock_name varchar(50) NOT NULL,
    PRIMARY KEY (lock_name)
);

-- The initial rows (seed.sql) take id 1 explicitly, which a sequence does not notice: start past them.
ALTER SEQUENCE xxl_job_group_id_seq RESTART WITH 2;
ALTER SEQUENCE xxl_job_info_id_seq RESTART WITH 2;
ALTER SEQUENCE xxl_job_user_id_seq RESTART WITH 2;
