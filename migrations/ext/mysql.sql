-- The workflow tables of this admin, beside the xxl-job 2.4 schema (MySQL 5.7+/8.x, MariaDB 10.x). The admin
-- creates them the first time a workflow is saved; an account without CREATE rights needs them made
-- beforehand from this script (`xxl-job-admin ddl` prints it). Every statement may run again. Times are
-- epoch milliseconds. The Java admin never reads these tables.

CREATE TABLE IF NOT EXISTS `xxl_job_ext_workflow`
(
    `id`                bigint       NOT NULL AUTO_INCREMENT,
    `name`              varchar(128) NOT NULL COMMENT 'unique (ignoring case, as the collation compares)',
    `job_group`         int          NOT NULL COMMENT 'executor group id',
    `current_version`   int          NOT NULL COMMENT 'the version runs start from',
    `trigger_status`    smallint     NOT NULL DEFAULT 0 COMMENT '0 stopped, 1 scheduled',
    `schedule_type`     varchar(16)  NOT NULL DEFAULT 'NONE' COMMENT 'NONE, CRON or FIX_RATE',
    `schedule_conf`     varchar(128) NULL COMMENT 'cron expression or seconds, per schedule_type',
    `misfire_strategy`  varchar(32)  NOT NULL DEFAULT 'DO_NOTHING',
    `trigger_next_time` bigint       NOT NULL DEFAULT 0,
    `trigger_last_time` bigint       NOT NULL DEFAULT 0,
    `author`            varchar(64)  NULL,
    `add_time`          bigint       NOT NULL,
    `update_time`       bigint       NOT NULL,
    PRIMARY KEY (`id`),
    UNIQUE KEY `uk_xxl_job_ext_workflow_name` (`name`),
    KEY `i_xxl_job_ext_workflow_trigger` (`trigger_status`, `trigger_next_time`),
    KEY `i_xxl_job_ext_workflow_group` (`job_group`)
) ENGINE = InnoDB
  DEFAULT CHARSET = utf8mb4;

CREATE TABLE IF NOT EXISTS `xxl_job_ext_workflow_version`
(
    `workflow_id` bigint      NOT NULL,
    `version`     int         NOT NULL,
    `definition`  mediumtext  NOT NULL COMMENT 'the definition document, JSON',
    `author`      varchar(64) NULL,
    `add_time`    bigint      NOT NULL,
    PRIMARY KEY (`workflow_id`, `version`)
) ENGINE = InnoDB
  DEFAULT CHARSET = utf8mb4;

CREATE TABLE IF NOT EXISTS `xxl_job_ext_workflow_run`
(
    `id`            bigint      NOT NULL AUTO_INCREMENT,
    `workflow_id`   bigint      NOT NULL,
    `version`       int         NOT NULL,
    `state`         varchar(16) NOT NULL,
    `seq`           int         NOT NULL DEFAULT 0 COMMENT 'compare-and-set counter of state changes',
    `trigger_type`  varchar(16) NOT NULL,
    `logical_time`  bigint      NOT NULL,
    `params`        mediumtext  NOT NULL COMMENT 'the run parameters, a JSON object',
    `started_by`    varchar(64) NULL,
    `parent_run_id` bigint      NULL,
    `parent_node`   varchar(64) NULL,
    `backfill_id`   bigint      NULL,
    `add_time`      bigint      NOT NULL,
    `start_time`    bigint      NULL,
    `end_time`      bigint      NULL,
    `deadline_time` bigint      NULL,
    `message`       text        NULL,
    PRIMARY KEY (`id`),
    KEY `i_xxl_job_ext_workflow_run_workflow` (`workflow_id`, `id`),
    KEY `i_xxl_job_ext_workflow_run_state` (`state`, `workflow_id`)
) ENGINE = InnoDB
  DEFAULT CHARSET = utf8mb4;

CREATE TABLE IF NOT EXISTS `xxl_job_ext_workflow_node`
(
    `run_id`     bigint      NOT NULL,
    `node`       varchar(64) NOT NULL,
    `attempt`    int         NOT NULL,
    `state`      varchar(20) NOT NULL,
    `seq`        int         NOT NULL DEFAULT 0 COMMENT 'compare-and-set counter of state changes',
    `ready_time` bigint      NULL,
    `retry_time` bigint      NULL,
    `send_time`  bigint      NULL,
    `end_time`   bigint      NULL,
    `param`      mediumtext  NULL,
    `output`     mediumtext  NULL,
    `message`    text        NULL,
    `acted_by`   varchar(64) NULL,
    PRIMARY KEY (`run_id`, `node`, `attempt`),
    KEY `i_xxl_job_ext_workflow_node_state` (`state`)
) ENGINE = InnoDB
  DEFAULT CHARSET = utf8mb4;

CREATE TABLE IF NOT EXISTS `xxl_job_ext_workflow_trigger`
(
    `log_id`      bigint      NOT NULL COMMENT 'an xxl_job_log id',
    `run_id`      bigint      NOT NULL,
    `node`        varchar(64) NOT NULL,
    `attempt`     int         NOT NULL,
    `shard_index` int         NOT NULL DEFAULT 0,
    `shard_total` int         NOT NULL DEFAULT 1,
    PRIMARY KEY (`log_id`),
    KEY `i_xxl_job_ext_workflow_trigger_attempt` (`run_id`, `node`, `attempt`)
) ENGINE = InnoDB
  DEFAULT CHARSET = utf8mb4;

CREATE TABLE IF NOT EXISTS `xxl_job_ext_workflow_backfill`
(
    `id`          bigint      NOT NULL AUTO_INCREMENT,
    `workflow_id` bigint      NOT NULL,
    `state`       varchar(16) NOT NULL COMMENT 'running, finished or stopped',
    `from_time`   bigint      NOT NULL COMMENT 'the range of logical times, inclusive',
    `to_time`     bigint      NOT NULL,
    `parallel`    int         NOT NULL COMMENT 'runs of the backfill going at once',
    `total`       int         NOT NULL COMMENT 'runs it made, one per schedule instant of the range',
    `author`      varchar(64) NULL,
    `add_time`    bigint      NOT NULL,
    `end_time`    bigint      NULL,
    PRIMARY KEY (`id`),
    KEY `i_xxl_job_ext_workflow_backfill_workflow` (`workflow_id`, `id`)
) ENGINE = InnoDB
  DEFAULT CHARSET = utf8mb4;
