-- The xxl-job 2.4 schema for MySQL 5.7+/8.x and MariaDB 10.x. Column types, defaults and indexes are the
-- compatibility contract with the Java admin, applied only to a database that has none of these tables.

CREATE TABLE `xxl_job_info`
(
    `id`                        int(11)      NOT NULL AUTO_INCREMENT,
    `job_group`                 int(11)      NOT NULL COMMENT 'executor group id',
    `job_desc`                  varchar(255) NOT NULL,
    `add_time`                  datetime              DEFAULT NULL,
    `update_time`               datetime              DEFAULT NULL,
    `author`                    varchar(64)           DEFAULT NULL COMMENT 'owner',
    `alarm_email`               varchar(255)          DEFAULT NULL COMMENT 'alarm e-mail addresses, comma separated',
    `schedule_type`             varchar(50)  NOT NULL DEFAULT 'NONE' COMMENT 'NONE, CRON or FIX_RATE',
    `schedule_conf`             varchar(128)          DEFAULT NULL COMMENT 'cron expression or seconds, per schedule_type',
    `misfire_strategy`          varchar(50)  NOT NULL DEFAULT 'DO_NOTHING' COMMENT 'what to do with a missed fire',
    `executor_route_strategy`   varchar(50)           DEFAULT NULL COMMENT 'how an executor address is chosen',
    `executor_handler`          varchar(255)          DEFAULT NULL COMMENT 'job handler name',
    `executor_param`            varchar(512)          DEFAULT NULL COMMENT 'job parameter',
    `executor_block_strategy`   varchar(50)           DEFAULT NULL COMMENT 'what the executor does when busy',
    `executor_timeout`          int(11)      NOT NULL DEFAULT '0' COMMENT 'execution timeout in seconds',
    `executor_fail_retry_count` int(11)      NOT NULL DEFAULT '0' COMMENT 'retries after a failure',
    `glue_type`                 varchar(50)  NOT NULL COMMENT 'BEAN or a GLUE type',
    `glue_source`               mediumtext COMMENT 'GLUE source code',
    `glue_remark`               varchar(128)          DEFAULT NULL COMMENT 'GLUE version remark',
    `glue_updatetime`           datetime              DEFAULT NULL COMMENT 'GLUE last change',
    `child_jobid`               varchar(255)          DEFAULT NULL COMMENT 'child job ids, comma separated',
    `trigger_status`            tinyint(4)   NOT NULL DEFAULT '0' COMMENT '0 stopped, 1 scheduled',
    `trigger_last_time`         bigint(13)   NOT NULL DEFAULT '0' COMMENT 'previous planned fire, epoch ms',
    `trigger_next_time`         bigint(13)   NOT NULL DEFAULT '0' COMMENT 'next planned fire, epoch ms',
    PRIMARY KEY (`id`)
) ENGINE = InnoDB
  DEFAULT CHARSET = utf8mb4;

CREATE TABLE `xxl_job_log`
(
    `id`                        bigint(20) NOT NULL AUTO_INCREMENT,
    `job_group`                 int(11)    NOT NULL COMMENT 'executor group id',
    `job_id`                    int(11)    NOT NULL COMMENT 'job id',
    `executor_address`          varchar(255)        DEFAULT NULL COMMENT 'executor address of this run',
    `executor_handler`          varchar(255)        DEFAULT NULL COMMENT 'job handler name',
    `executor_param`            varchar(512)        DEFAULT NULL COMMENT 'job parameter',
    `executor_sharding_param`   varchar(20)         DEFAULT NULL COMMENT 'shard as index/total',
    `executor_fail_retry_count` int(11)    NOT NULL DEFAULT '0' COMMENT 'retries left',
    `trigger_time`              datetime            DEFAULT NULL COMMENT 'trigger time',
    `trigger_code`              int(11)    NOT NULL COMMENT 'trigger result',
    `trigger_msg`               text COMMENT 'trigger report',
    `handle_time`               datetime            DEFAULT NULL COMMENT 'result time',
    `handle_code`               int(11)    NOT NULL COMMENT 'execution result',
    `handle_msg`                text COMMENT 'execution report',
    `alarm_status`              tinyint(4) NOT NULL DEFAULT '0' COMMENT '0 new, 1 no alarm, 2 alarm sent, 3 alarm failed',
    PRIMARY KEY (`id`),
    KEY `I_trigger_time` (`trigger_time`),
    KEY `I_handle_code` (`handle_code`),
    KEY `I_jobid_jobgroup` (`job_id`,`job_group`),
    KEY `I_job_id` (`job_id`)
) ENGINE = InnoDB
  DEFAULT CHARSET = utf8mb4;

CREATE TABLE `xxl_job_log_report`
(
    `id`            int(11) NOT NULL AUTO_INCREMENT,
    `trigger_day`   datetime         DEFAULT NULL COMMENT 'local midnight of the day',
    `running_count` int(11) NOT NULL DEFAULT '0' COMMENT 'runs without a result',
    `suc_count`     int(11) NOT NULL DEFAULT '0' COMMENT 'successful runs',
    `fail_count`    int(11) NOT NULL DEFAULT '0' COMMENT 'failed runs',
    `update_time`   datetime         DEFAULT NULL,
    PRIMARY KEY (`id`),
    UNIQUE KEY `i_trigger_day` (`trigger_day`) USING BTREE
) ENGINE = InnoDB
  DEFAULT CHARSET = utf8mb4;

CREATE TABLE `xxl_job_logglue`
(
    `id`          int(11)      NOT NULL AUTO_INCREMENT,
    `job_id`      int(11)      NOT NULL COMMENT 'job id',
    `glue_type`   varchar(50) DEFAULT NULL COMMENT 'GLUE type',
    `glue_source` mediumtext COMMENT 'GLUE source code',
    `glue_remark` varchar(128) NOT NULL COMMENT 'version remark',
    `add_time`    datetime    DEFAULT NULL,
    `update_time` datetime    DEFAULT NULL,
    PRIMARY KEY (`id`)
) ENGINE = InnoDB
  DEFAULT CHARSET = utf8mb4;

CREATE TABLE `xxl_job_registry`
(
    `id`             int(11)      NOT NULL AUTO_INCREMENT,
    `registry_group` varchar(50)  NOT NULL,
    `registry_key`   varchar(255) NOT NULL,
    `registry_value` varchar(255) NOT NULL,
    `update_time`    datetime DEFAULT NULL,
    PRIMARY KEY (`id`),
    UNIQUE KEY `i_g_k_v` (`registry_group`, `registry_key`, `registry_value`) USING BTREE
) ENGINE = InnoDB
  DEFAULT CHARSET = utf8mb4;

CREATE TABLE `xxl_job_group`
(
    `id`           int(11)     NOT NULL AUTO_INCREMENT,
    `app_name`     varchar(64) NOT NULL COMMENT 'executor AppName',
    `title`        varchar(12) NOT NULL COMMENT 'display name',
    `address_type` tinyint(4)  NOT NULL DEFAULT '0' COMMENT '0 registered automatically, 1 entered by hand',
    `address_list` text COMMENT 'executor addresses, comma separated',
    `update_time`  datetime             DEFAULT NULL,
    PRIMARY KEY (`id`)
) ENGINE = InnoDB
  DEFAULT CHARSET = utf8mb4;

CREATE TABLE `xxl_job_user`
(
    `id`         int(11)     NOT NULL AUTO_INCREMENT,
    `username`   varchar(50) NOT NULL COMMENT 'login name',
    `password`   varchar(50) NOT NULL COMMENT 'md5 of the password, lowercase hex',
    `role`       tinyint(4)  NOT NULL COMMENT '0 user, 1 administrator',
    `permission` varchar(255) DEFAULT NULL COMMENT 'permitted executor group ids, comma separated',
    PRIMARY KEY (`id`),
    UNIQUE KEY `i_username` (`username`) USING BTREE
) ENGINE = InnoDB
  DEFAULT CHARSET = utf8mb4;

CREATE TABLE `xxl_job_lock`
(
    `lock_name` varchar(50) NOT NULL COMMENT 'lock name',
    PRIMARY KEY (`lock_name`)
) ENGINE = InnoDB
  DEFAULT CHARSET = utf8mb4;
