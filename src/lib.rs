//! xxl-job-admin: a drop-in replacement for the xxl-job 2.4.x scheduling centre.
//!
//! Layers, in the direction data flows: [`config`] → [`storage`] → [`domain`] (pure rules) →
//! [`scheduler`] and [`executor`] (services) → [`service`] (the rules the console and the REST API
//! share) → [`workers`] and [`http`] (the edges), wired by [`app`].

pub mod alarm;
pub mod app;
pub mod cli;
pub mod config;
pub mod cron;
pub mod domain;
pub mod executor;
pub mod host;
pub mod http;
pub mod i18n;
pub mod ldap;
pub mod logging;
pub mod memory;
pub mod metrics;
pub mod scheduler;
pub mod service;
pub mod storage;
pub mod time;
pub mod workers;
