//! Loading as a whole: sources and precedence, typed values, messages.

use super::*;
use std::fs;
use tempfile::TempDir;

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn vars(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn dir() -> TempDir {
    tempfile::tempdir().unwrap()
}

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let path = dir.join(name);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, content).unwrap();
    path
}

fn load(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<Loaded, ConfigError> {
    Config::load(&strings(args), vars(env), dir)
}

fn config(args: &[&str]) -> Config {
    let d = dir();
    load(d.path(), args, &[]).unwrap_or_else(|e| panic!("{args:?}: {e}")).config
}

fn error(args: &[&str]) -> String {
    let d = dir();
    load(d.path(), args, &[]).map(|l| format!("{:?}", l.config)).expect_err(&format!("{args:?}")).to_string()
}

fn warnings(args: &[&str]) -> Vec<String> {
    let d = dir();
    load(d.path(), args, &[]).unwrap().warnings
}

#[test]
fn defaults() {
    let d = dir();
    let loaded = load(d.path(), &[], &[]).unwrap();
    assert_eq!(loaded.source_file, None);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let c = loaded.config;
    assert_eq!(c.server.port, 8080);
    assert_eq!(c.server.address.to_string(), "0.0.0.0");
    assert_eq!(c.server.context_path, "/xxl-job-admin");
    assert_eq!(c.server.management_context_path, "/actuator");
    assert!(c.server.prometheus);
    assert_eq!(
        c.datasource.target,
        DbTarget::Sqlite { path: SqlitePath::File(d.path().join("xxl-job-admin.db")) }
    );
    assert_eq!((c.datasource.username, c.datasource.password, c.datasource.time_zone), (None, None, None));
    assert_eq!(
        c.datasource.pool,
        PoolConfig {
            max_size: 30,
            min_idle: 10,
            connection_timeout_ms: 10_000,
            idle_timeout_ms: Some(30_000),
            max_lifetime_ms: Some(900_000),
            validation_timeout_ms: 1000,
        }
    );
    assert_eq!(
        c.mail,
        MailConfig {
            host: None,
            port: 25,
            username: None,
            password: None,
            from: None,
            auth: false,
            starttls_enable: false,
            starttls_required: false,
            implicit_tls: false,
            ssl_trust: None,
            timeout_ms: None,
        }
    );
    assert_eq!(c.access_token.expose(), "default_token");
    assert_eq!(c.i18n, Lang::ZhCn);
    assert_eq!(
        c.trigger_pool,
        TriggerPoolConfig {
            fast_max: 200,
            slow_max: 100,
            fast_max_configured: 200,
            slow_max_configured: 100
        }
    );
    assert_eq!(c.log_retention_days, Some(30));
    assert_eq!(c.log_filter, "info");
    assert_eq!(
        (c.server.forward_headers, c.session_secret, c.registry_max_per_app),
        (ForwardHeaders::None, None, 4000)
    );
}

#[test]
fn precedence_default_file_env_args() {
    let d = dir();
    write(
        d.path(),
        "application.properties",
        "server.port=1001\nxxl.job.i18n=en\nxxl.job.logretentiondays=11\nxxl.job.triggerpool.fast.max=301\n",
    );
    let env = [("SERVER_PORT", "1002"), ("XXL_JOB_I18N", "zh_TC"), ("XXL_JOB_LOGRETENTIONDAYS", "12")];
    let loaded = load(d.path(), &["--server.port=1003"], &env).unwrap();
    let c = loaded.config;
    assert_eq!(c.server.port, 1003, "args beat env and file");
    assert_eq!(c.i18n, Lang::ZhTc, "env beats file");
    assert_eq!(c.log_retention_days, Some(12), "env beats file");
    assert_eq!(c.trigger_pool.fast_max, 301, "file beats default");
    assert_eq!(c.trigger_pool.slow_max, 100, "default");
    assert_eq!(loaded.source_file, Some(d.path().join("application.properties")));
}

#[test]
fn relaxed_key_names_in_file_and_args() {
    let d = dir();
    write(
        d.path(),
        "application.properties",
        "XXL.JOB.ACCESS-TOKEN=from-file\nserver.servlet.contextPath=/jobs\nspring.datasource.hikari.maximumPoolSize=5\n",
    );
    let loaded = load(d.path(), &["--xxl.job.access_token=from-args", "--SERVER.PORT=9"], &[]).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.config.access_token.expose(), "from-args");
    assert_eq!(loaded.config.server.context_path, "/jobs");
    assert_eq!(loaded.config.server.port, 9);
    assert_eq!(loaded.config.datasource.pool.max_size, 5);
}

#[test]
fn environment_names() {
    let d = dir();
    let c = |env: &[(&str, &str)]| load(d.path(), &[], env).unwrap().config;
    assert_eq!(c(&[("SERVER_SERVLET_CONTEXTPATH", "/a")]).server.context_path, "/a");
    assert_eq!(c(&[("SERVER_SERVLET_CONTEXT_PATH", "/b")]).server.context_path, "/b");
    // The Spring spelling wins over the guessed one, whatever the iteration order.
    assert_eq!(
        c(&[("SERVER_SERVLET_CONTEXT_PATH", "/b"), ("SERVER_SERVLET_CONTEXTPATH", "/a")]).server.context_path,
        "/a"
    );
    assert_eq!(c(&[("XXL_JOB_ACCESSTOKEN", "t")]).access_token.expose(), "t");
    assert_eq!(c(&[("SPRING_DATASOURCE_HIKARI_MAXIMUMPOOLSIZE", "7")]).datasource.pool.max_size, 7);
    assert!(c(&[("SPRING_MAIL_PROPERTIES_MAIL_SMTP_SSL_ENABLE", "true")]).mail.implicit_tls);
    // Not Spring names, or not ours: ignored without a word.
    let loaded =
        load(d.path(), &[], &[("server_port", "1"), ("SERVERPORT", "2"), ("FOO_BAR", "x"), ("PATH", "/bin")])
            .unwrap();
    assert_eq!(loaded.config.server.port, 8080);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[test]
fn command_line_forms() {
    assert_eq!(config(&["--xxl.job.accessToken"]).access_token.expose(), "");
    assert_eq!(config(&["--xxl.job.accessToken=a=b"]).access_token.expose(), "a=b");
    // A bare typed key is blank, i.e. its default.
    assert_eq!(config(&["--server.port"]).server.port, 8080);
    let e = error(&["server.port=1"]);
    assert!(e.contains("server.port=1") && e.contains("--KEY=VALUE"), "{e}");
    let e = error(&["--server.port", "9090"]);
    assert!(e.contains("--server.port=VALUE"), "{e}");
    assert!(error(&["--=x"]).contains("no key"));
    assert!(error(&["--config"]).contains("--config"));
}

#[test]
fn secrets_split_from_their_key_are_not_repeated() {
    for args in [
        &["--spring.datasource.password", "hunter2"][..],
        &["--xxl.job.accessToken=abc", "hunter2"][..],
        &["--spring.mail.password=a", "hunter2"][..],
    ] {
        let e = error(args);
        assert!(!e.contains("hunter2"), "{e}");
    }
}

#[test]
fn named_config_file() {
    let d = dir();
    let file = write(d.path(), "conf/admin.properties", "server.port=7001\n");
    write(d.path(), "application.properties", "server.port=1\n");
    for args in [
        vec!["--config", "conf/admin.properties"],
        vec!["--config=conf/admin.properties"],
        vec!["--spring.config.location=conf/admin.properties"],
        vec!["--spring.config.location=file:conf/admin.properties"],
        vec!["--spring.config.location=optional:file:conf/admin.properties"],
    ] {
        let loaded = load(d.path(), &args, &[]).unwrap();
        assert_eq!(loaded.config.server.port, 7001, "{args:?}");
        assert_eq!(loaded.source_file.as_deref(), Some(file.as_path()), "{args:?}");
    }
    let absolute = format!("--config={}", file.display());
    assert_eq!(load(Path::new("/"), &[&absolute], &[]).unwrap().config.server.port, 7001);
    let loaded = load(d.path(), &[], &[("SPRING_CONFIG_LOCATION", "conf/admin.properties")]).unwrap();
    assert_eq!(loaded.config.server.port, 7001);
}

#[test]
fn directory_location_means_its_application_properties() {
    let d = dir();
    write(d.path(), "etc/application.properties", "server.port=7002\n");
    assert_eq!(
        load(d.path(), &["--spring.config.location=file:etc/"], &[]).unwrap().config.server.port,
        7002
    );
    assert_eq!(load(d.path(), &["--config", "etc"], &[]).unwrap().config.server.port, 7002);
}

#[test]
fn missing_or_unusable_locations() {
    let d = dir();
    let e = load(d.path(), &["--config=nope.properties"], &[]).unwrap_err();
    assert!(matches!(&e, ConfigError::FileNotFound(p) if p == &d.path().join("nope.properties")), "{e}");
    assert!(e.to_string().contains("nope.properties"));
    let loaded = load(d.path(), &["--spring.config.location=optional:nope.properties"], &[]).unwrap();
    assert_eq!((loaded.source_file, loaded.config.server.port), (None, 8080));
    for (location, reason) in [
        ("classpath:application.properties", "classpath"),
        ("a.properties,b.properties", "one location"),
        ("application.yml", "YAML"),
        ("", "empty"),
    ] {
        let e =
            load(d.path(), &[&format!("--spring.config.location={location}")], &[]).unwrap_err().to_string();
        assert!(e.contains(reason), "{location}: {e}");
    }
}

#[test]
fn default_file_locations() {
    let d = dir();
    write(d.path(), "config/application.properties", "server.port=2002\nxxl.job.i18n=en\n");
    let loaded = load(d.path(), &[], &[]).unwrap();
    assert_eq!(loaded.config.server.port, 2002);
    assert!(loaded.warnings.is_empty());
    write(d.path(), "application.properties", "server.port=2001\nxxl.job.logretentiondays=9\n");
    let loaded = load(d.path(), &[], &[]).unwrap();
    assert_eq!(loaded.config.server.port, 2002, "config/ wins, as in Spring Boot");
    assert_eq!(
        loaded.config.log_retention_days,
        Some(9),
        "keys only in ./application.properties still apply"
    );
    assert_eq!(loaded.config.i18n, Lang::En);
    assert_eq!(loaded.source_file, Some(d.path().join("config/application.properties")));
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
}

#[test]
fn yaml_files_are_reported_not_read() {
    let d = dir();
    write(d.path(), "application.yml", "server:\n  port: 1\n");
    let loaded = load(d.path(), &[], &[]).unwrap();
    assert_eq!(loaded.config.server.port, 8080);
    assert!(loaded.warnings.iter().any(|w| w.contains("application.yml")), "{:?}", loaded.warnings);
}

#[test]
fn file_encoding_and_syntax_errors() {
    let d = dir();
    write(d.path(), "application.properties", "\u{feff}xxl.job.accessToken=\\u4e2d\u{6587}\n");
    assert_eq!(load(d.path(), &[], &[]).unwrap().config.access_token.expose(), "中文");
    fs::write(d.path().join("application.properties"), b"spring.mail.from=caf\xe9@x.org\n").unwrap();
    let loaded = load(d.path(), &[], &[]).unwrap();
    assert_eq!(loaded.config.mail.from.as_deref(), Some("café@x.org"));
    assert!(loaded.warnings.iter().any(|w| w.contains("ISO-8859-1")), "{:?}", loaded.warnings);
    write(d.path(), "application.properties", "a=1\nb=\\uZZZZ\n");
    let e = load(d.path(), &[], &[]).unwrap_err().to_string();
    assert!(e.contains("application.properties:2"), "{e}");
}

/// The `application.properties` the Java admin 2.4 ships, as it ships.
const JAVA_ADMIN_PROPERTIES: &str = r"### web
server.port=8080
server.servlet.context-path=/xxl-job-admin

### actuator
management.server.servlet.context-path=/actuator
management.health.mail.enabled=false

### resources
spring.mvc.servlet.load-on-startup=0
spring.mvc.static-path-pattern=/static/**
spring.resources.static-locations=classpath:/static/

### freemarker
spring.freemarker.templateLoaderPath=classpath:/templates/
spring.freemarker.suffix=.ftl
spring.freemarker.charset=UTF-8
spring.freemarker.request-context-attribute=request
spring.freemarker.settings.number_format=0.##########
spring.freemarker.settings.new_builtin_class_resolver=safer

### mybatis
mybatis.mapper-locations=classpath:/mybatis-mapper/*Mapper.xml

### datasource-pool
spring.datasource.type=com.zaxxer.hikari.HikariDataSource
spring.datasource.hikari.minimum-idle=10
spring.datasource.hikari.maximum-pool-size=30
spring.datasource.hikari.auto-commit=true
spring.datasource.hikari.idle-timeout=30000
spring.datasource.hikari.pool-name=HikariCP
spring.datasource.hikari.max-lifetime=900000
spring.datasource.hikari.connection-timeout=10000
spring.datasource.hikari.connection-test-query=SELECT 1
spring.datasource.hikari.validation-timeout=1000

### xxl-job, datasource
spring.datasource.url=jdbc:mysql://127.0.0.1:3306/xxl_job?useUnicode=true&characterEncoding=UTF-8&autoReconnect=true&serverTimezone=Asia/Shanghai
spring.datasource.username=root
spring.datasource.password=root_pwd
spring.datasource.driver-class-name=com.mysql.cj.jdbc.Driver

### xxl-job, email
spring.mail.host=smtp.qq.com
spring.mail.port=25
spring.mail.username=xxx@qq.com
spring.mail.from=xxx@qq.com
spring.mail.password=xxx
spring.mail.properties.mail.smtp.auth=true
spring.mail.properties.mail.smtp.starttls.enable=true
spring.mail.properties.mail.smtp.starttls.required=true
spring.mail.properties.mail.smtp.socketFactory.class=javax.net.ssl.SSLSocketFactory

### xxl-job, access token
xxl.job.accessToken=default_token

### xxl-job, i18n (default is zh_CN, and you can choose 'zh_CN', 'zh_TC' and 'en')
xxl.job.i18n=zh_CN

## xxl-job, triggerpool max size
xxl.job.triggerpool.fast.max=200
xxl.job.triggerpool.slow.max=100

### xxl-job, log retention days
xxl.job.logretentiondays=30
";

#[test]
fn the_java_admins_shipped_file_loads_cleanly() {
    let d = dir();
    write(d.path(), "application.properties", JAVA_ADMIN_PROPERTIES);
    let loaded = load(d.path(), &[], &[]).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let c = loaded.config;
    assert_eq!(
        c.datasource.target,
        DbTarget::MySql {
            servers: Servers::single("127.0.0.1", 3306),
            database: "xxl_job".into(),
            ssl_mode: SslMode::Preferred,
            connect_timeout_ms: None,
            socket_timeout_ms: None,
        }
    );
    assert_eq!(c.datasource.time_zone, Some(chrono_tz::Asia::Shanghai));
    assert_eq!(c.datasource.username.as_deref(), Some("root"));
    assert_eq!(c.datasource.password.as_ref().map(Secret::expose), Some("root_pwd"));
    assert_eq!(c.mail.host.as_deref(), Some("smtp.qq.com"));
    assert_eq!(c.mail.from.as_deref(), Some("xxx@qq.com"));
    assert!(c.mail.auth && c.mail.starttls_enable && c.mail.starttls_required && c.mail.implicit_tls);
    assert_eq!(c.mail.port, 25);
}

#[test]
fn unknown_keys_warn_once_without_their_values() {
    let d = dir();
    write(
        d.path(),
        "application.properties",
        "xxl.job.acessToken=hunter2\nxxl.job.acessToken=x\nspring.datasource.hikari.pool-name=p\n",
    );
    let loaded = load(d.path(), &["--sever.port=1", "--logging.file.name=x.log"], &[]).unwrap();
    assert_eq!(loaded.warnings.len(), 2, "{:?}", loaded.warnings);
    assert!(
        loaded.warnings[0].contains("xxl.job.acessToken")
            && loaded.warnings[0].contains("application.properties:1")
    );
    assert!(loaded.warnings[1].contains("sever.port") && loaded.warnings[1].contains("command line"));
    assert!(loaded.warnings.iter().all(|w| !w.contains("hunter2")));
}

#[test]
fn placeholders() {
    let d = dir();
    write(
        d.path(),
        "application.properties",
        "db.host=mysql.internal\n\
         spring.datasource.url=jdbc:mysql://${db.host}:${DB_PORT:3306}/${DB_NAME:xxl_job}\n\
         spring.datasource.password=${DB_PASSWORD}\n\
         server.port=${PORT:${FALLBACK_PORT:8081}}\n\
         xxl.job.accessToken=${xxl.job.token.from.env}\n\
         spring.mail.host=${UNCLOSED\n",
    );
    let env = [("DB_PORT", "3307"), ("DB_PASSWORD", "pw"), ("XXL_JOB_TOKEN_FROM_ENV", "tok")];
    let loaded = load(d.path(), &[], &env).unwrap();
    // `db.host` is used by a placeholder, so it is not an unknown key.
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let c = loaded.config;
    assert!(
        matches!(&c.datasource.target, DbTarget::MySql { servers, database, .. } if *servers == Servers::single("mysql.internal", 3307) && database == "xxl_job")
    );
    assert_eq!(c.datasource.password.as_ref().map(Secret::expose), Some("pw"));
    assert_eq!(c.server.port, 8081);
    assert_eq!(c.access_token.expose(), "tok");
    assert_eq!(c.mail.host.as_deref(), Some("${UNCLOSED"));
}

#[test]
fn placeholder_errors_name_the_key() {
    let e = error(&["--spring.datasource.password=${NOT_SET}"]);
    assert!(e.contains("spring.datasource.password") && e.contains("NOT_SET"), "{e}");
    let e = error(&["--a=${b}", "--b=${a}", "--server.port=${a}"]);
    assert!(e.contains("server.port") && e.contains("cycle"), "{e}");
}

#[test]
fn invalid_values_name_key_value_and_origin() {
    for (arg, key, value) in [
        ("--server.port=http", "server.port", "http"),
        ("--server.port=70000", "server.port", "70000"),
        ("--server.address=my-host", "server.address", "my-host"),
        ("--server.servlet.context-path=/a b", "server.servlet.context-path", "/a b"),
        ("--server.servlet.context-path=/{id}", "server.servlet.context-path", "/{id}"),
        ("--management.server.servlet.context-path=/a//b", "management.server.servlet.context-path", "/a//b"),
        (
            "--spring.datasource.url=jdbc:oracle:thin:@db:1521/x",
            "spring.datasource.url",
            "jdbc:oracle:thin:@db:1521/x",
        ),
        ("--spring.datasource.url= ", "spring.datasource.url", " "),
        (
            "--spring.datasource.url=jdbc:mysql://db/x?serverTimezone=Moon/Base",
            "spring.datasource.url",
            "Moon/Base",
        ),
        ("--spring.datasource.hikari.maximum-pool-size=0", "spring.datasource.hikari.maximum-pool-size", "0"),
        ("--spring.datasource.hikari.minimum-idle=-1", "spring.datasource.hikari.minimum-idle", "-1"),
        (
            "--spring.datasource.hikari.connection-timeout=100",
            "spring.datasource.hikari.connection-timeout",
            "100",
        ),
        (
            "--spring.datasource.hikari.validation-timeout=0",
            "spring.datasource.hikari.validation-timeout",
            "0",
        ),
        ("--spring.mail.port=0", "spring.mail.port", "0"),
        ("--spring.mail.protocol=imap", "spring.mail.protocol", "imap"),
        ("--spring.mail.properties.mail.smtp.auth=maybe", "spring.mail.properties.mail.smtp.auth", "maybe"),
        ("--xxl.job.triggerpool.fast.max=lots", "xxl.job.triggerpool.fast.max", "lots"),
        ("--xxl.job.logretentiondays=30d", "xxl.job.logretentiondays", "30d"),
        ("--logging.level.root=verbose", "logging.level.root", "verbose"),
    ] {
        let e = error(&[arg]);
        assert!(e.starts_with(key), "{arg}: {e}");
        assert!(e.contains(&format!("`{value}`")) || e.contains(value), "{arg}: {e}");
        assert!(e.contains("command line"), "{arg}: {e}");
    }
}

#[test]
fn invalid_values_from_files_and_env_name_their_origin() {
    let d = dir();
    write(d.path(), "application.properties", "# x\nserver.port=abc\n");
    let e = load(d.path(), &[], &[]).unwrap_err().to_string();
    assert!(e.contains("application.properties:2"), "{e}");
    let e = load(d.path(), &["--config=/dev/null"], &[("SERVER_PORT", "abc")]).unwrap_err().to_string();
    assert!(e.contains("environment variable SERVER_PORT"), "{e}");
}

#[test]
fn credentials_in_urls_are_masked_in_errors() {
    let e = error(&["--spring.datasource.url=mysql://app:hunter2@db:xx/x"]);
    assert!(e.contains("spring.datasource.url") && e.contains("app:******@db"), "{e}");
    assert!(!e.contains("hunter2"), "{e}");
    let e = error(&["--spring.datasource.url=jdbc:mysql://db/x?password=hunter2&sslMode=no"]);
    assert!(!e.contains("hunter2"), "{e}");
}

#[test]
fn url_credentials_override_the_username_and_password_keys() {
    let c = config(&[
        "--spring.datasource.url=mysql://app:p%40ss@db/x",
        "--spring.datasource.username=root",
        "--spring.datasource.password=root_pwd",
    ]);
    assert_eq!(c.datasource.username.as_deref(), Some("app"));
    assert_eq!(c.datasource.password.as_ref().map(Secret::expose), Some("p@ss"));
    let c = config(&[
        "--spring.datasource.url=mysql://db/x",
        "--spring.datasource.username=root",
        "--spring.datasource.password=",
    ]);
    assert_eq!(c.datasource.username.as_deref(), Some("root"));
    assert_eq!(c.datasource.password, None);
}

#[test]
fn datasource_url_forms_reach_the_config() {
    let c = config(&["--spring.datasource.url=sqlite::memory:"]);
    assert_eq!(c.datasource.target, DbTarget::Sqlite { path: SqlitePath::Memory });
    let c = config(&["--spring.datasource.url=sqlite:///var/lib/xxl.db"]);
    assert_eq!(c.datasource.target, DbTarget::Sqlite { path: SqlitePath::File("/var/lib/xxl.db".into()) });
    let c = config(&[
        "--spring.datasource.url=jdbc:mysql://db/x?serverTimezone=GMT%2B8&useSSL=false&connectTimeout=3000",
    ]);
    assert_eq!(c.datasource.time_zone, Some(chrono_tz::Etc::GMTMinus8));
    assert!(matches!(
        c.datasource.target,
        DbTarget::MySql { ssl_mode: SslMode::Disabled, connect_timeout_ms: Some(3000), .. }
    ));
    let w = warnings(&["--spring.datasource.url=jdbc:mysql://a,b/x?foo=1"]);
    assert_eq!(w.len(), 1, "{w:?}");
}

#[test]
fn context_paths_are_normalised() {
    let path = |p: &str| config(&[&format!("--server.servlet.context-path={p}")]).server.context_path;
    assert_eq!(path("/"), "");
    assert_eq!(path(""), "");
    assert_eq!(path("  /jobs/ "), "/jobs");
    assert_eq!(path("jobs"), "/jobs");
    assert_eq!(path("/a/b-c_d.e~"), "/a/b-c_d.e~");
    let management = |p: &str| {
        config(&[&format!("--management.server.servlet.context-path={p}")]).server.management_context_path
    };
    assert_eq!(management("/"), "");
    assert_eq!(management("/manage/"), "/manage");
}

#[test]
fn server_addresses() {
    let address = |a: &str| config(&[&format!("--server.address={a}")]).server.address.to_string();
    assert_eq!(address("127.0.0.1"), "127.0.0.1");
    assert_eq!(address("localhost"), "127.0.0.1");
    assert_eq!(address("::"), "::");
    assert_eq!(address("[::1]"), "::1");
    assert_eq!(config(&["--server.port=0"]).server.port, 0);
}

#[test]
fn pool_rules_follow_hikari() {
    let pool = |args: &[&str]| config(args).datasource.pool;
    assert_eq!(pool(&["--spring.datasource.hikari.minimum-idle=50"]).min_idle, 30);
    assert_eq!(
        pool(&["--spring.datasource.hikari.connection-timeout=0"]).connection_timeout_ms,
        i32::MAX as u64
    );
    assert_eq!(pool(&["--spring.datasource.hikari.max-lifetime=0"]).max_lifetime_ms, None);
    assert_eq!(pool(&["--spring.datasource.hikari.idle-timeout=0"]).idle_timeout_ms, None);
    assert_eq!(pool(&["--spring.datasource.hikari.minimum-idle=30"]).idle_timeout_ms, None);
    let w = warnings(&["--spring.datasource.hikari.max-lifetime=1000"]);
    assert_eq!(pool(&["--spring.datasource.hikari.max-lifetime=1000"]).max_lifetime_ms, Some(1_800_000));
    assert!(w.iter().any(|w| w.contains("max-lifetime")), "{w:?}");
    let args = ["--spring.datasource.hikari.idle-timeout=5000"];
    assert_eq!(pool(&args).idle_timeout_ms, Some(600_000));
    assert!(warnings(&args).iter().any(|w| w.contains("idle-timeout")));
    let args = ["--spring.datasource.hikari.idle-timeout=900000"];
    assert_eq!(pool(&args).idle_timeout_ms, None);
    assert!(warnings(&args).iter().any(|w| w.contains("idle-timeout")));
}

#[test]
fn trigger_pools_and_log_retention_are_clamped_like_java() {
    let c = config(&["--xxl.job.triggerpool.fast.max=50", "--xxl.job.triggerpool.slow.max=-3"]);
    assert_eq!(
        c.trigger_pool,
        TriggerPoolConfig { fast_max: 200, slow_max: 100, fast_max_configured: 50, slow_max_configured: -3 }
    );
    let c = config(&["--xxl.job.triggerpool.fast.max=500", "--xxl.job.triggerpool.slow.max=101"]);
    assert_eq!((c.trigger_pool.fast_max, c.trigger_pool.slow_max), (500, 101));
    assert_eq!(config(&["--xxl.job.logretentiondays=6"]).log_retention_days, None);
    assert_eq!(config(&["--xxl.job.logretentiondays=-1"]).log_retention_days, None);
    assert_eq!(config(&["--xxl.job.logretentiondays=7"]).log_retention_days, Some(7));
}

#[test]
fn languages() {
    let lang = |v: &str| config(&[&format!("--xxl.job.i18n={v}")]).i18n;
    assert_eq!(lang("en"), Lang::En);
    assert_eq!(lang("zh_TC"), Lang::ZhTc);
    assert_eq!(lang("zh-tc"), Lang::ZhTc);
    assert_eq!(lang("EN"), Lang::En);
    assert_eq!(lang(""), Lang::ZhCn);
    assert_eq!(lang("fr"), Lang::ZhCn);
    let w = warnings(&["--xxl.job.i18n=fr"]);
    assert!(w.len() == 1 && w[0].contains("fr"), "{w:?}");
    assert_eq!([Lang::ZhCn, Lang::ZhTc, Lang::En].map(|l| l.code()), ["zh_CN", "zh_TC", "en"]);
}

#[test]
fn log_levels() {
    let filter = |args: &[&str]| config(args).log_filter;
    assert_eq!(filter(&["--logging.level.root=WARN"]), "warn");
    assert_eq!(filter(&["--logging.level.root=Fatal"]), "error");
    assert_eq!(filter(&["--logging.level.root=off"]), "off");
    assert_eq!(
        filter(&["--logging.level.com.xxl.job=debug"]),
        format!("info,{}=debug", env!("CARGO_CRATE_NAME"))
    );
}

#[test]
fn booleans_parse_like_spring() {
    for yes in ["true", "TRUE", "yes", "On", "1", " true "] {
        assert!(
            config(&[&format!("--spring.mail.properties.mail.smtp.starttls.enable={yes}")])
                .mail
                .starttls_enable,
            "{yes}"
        );
    }
    for no in ["false", "No", "off", "0", ""] {
        assert!(
            !config(&[&format!("--spring.mail.properties.mail.smtp.starttls.enable={no}")])
                .mail
                .starttls_enable,
            "{no}"
        );
    }
}

#[test]
fn mail_tls_auth_port_and_timeouts() {
    let mail = |args: &[&str]| config(args).mail;
    let m = mail(&["--spring.mail.properties.mail.smtp.socketFactory.class=javax.net.ssl.SSLSocketFactory"]);
    assert!(m.implicit_tls);
    assert!(mail(&["--spring.mail.properties.mail.smtp.ssl.enable=true"]).implicit_tls);
    let m = mail(&["--spring.mail.protocol=smtps"]);
    assert!(m.implicit_tls);
    assert_eq!(m.port, 465);
    assert_eq!(mail(&["--spring.mail.protocol=SMTPS", "--spring.mail.port=2465"]).port, 2465);
    let w = warnings(&["--spring.mail.properties.mail.smtp.socketFactory.class=com.example.Plain"]);
    assert!(w.iter().any(|w| w.contains("com.example.Plain")), "{w:?}");
    assert!(
        !mail(&["--spring.mail.properties.mail.smtp.socketFactory.class=com.example.Plain"]).implicit_tls
    );
    // JavaMail authenticates whenever it has both credentials.
    assert!(mail(&["--spring.mail.username=u", "--spring.mail.password=p"]).auth);
    assert!(!mail(&["--spring.mail.username=u"]).auth);
    let m = mail(&["--spring.mail.username=alarm@x.org", "--spring.mail.host= smtp.x.org "]);
    assert_eq!((m.host.as_deref(), m.from.as_deref()), (Some("smtp.x.org"), Some("alarm@x.org")));
    assert_eq!(
        mail(&["--spring.mail.username=u", "--spring.mail.from=f@x.org"]).from.as_deref(),
        Some("f@x.org")
    );
    assert_eq!(
        mail(&[
            "--spring.mail.properties.mail.smtp.timeout=3000",
            "--spring.mail.properties.mail.smtp.connectiontimeout=5000"
        ])
        .timeout_ms,
        Some(5000)
    );
    assert_eq!(mail(&["--spring.mail.properties.mail.smtp.timeout=0"]).timeout_ms, None);
    assert_eq!(mail(&["--spring.mail.properties.mail.smtp.ssl.trust=*"]).ssl_trust.as_deref(), Some("*"));
}

#[test]
fn security_settings() {
    let forward =
        |value: &str| config(&[&format!("--server.forward-headers-strategy={value}")]).server.forward_headers;
    assert_eq!(forward("NATIVE"), ForwardHeaders::Native);
    assert_eq!(forward("framework"), ForwardHeaders::Framework);
    assert_eq!(forward("none"), ForwardHeaders::None);
    assert_eq!(forward(""), ForwardHeaders::None, "blank is the default");
    let e = error(&["--server.forward-headers-strategy=auto"]);
    assert!(e.contains("server.forward-headers-strategy") && e.contains("none, native or framework"), "{e}");
    let env = [("SERVER_FORWARDHEADERSSTRATEGY", "native")];
    assert_eq!(load(dir().path(), &[], &env).unwrap().config.server.forward_headers, ForwardHeaders::Native);

    let long = "k".repeat(32);
    assert_eq!(
        config(&[&format!("--xxl.job.session.secret= {long} ")])
            .session_secret
            .map(|s| s.expose().to_string()),
        Some(long)
    );
    assert_eq!(config(&["--xxl.job.session.secret="]).session_secret, None, "blank means not set");
    let e = error(&["--xxl.job.session.secret=short-secret"]);
    assert!(
        e.contains("xxl.job.session.secret") && e.contains("at least 32") && !e.contains("short-secret"),
        "{e}"
    );

    assert_eq!(config(&["--xxl.job.registry.max-per-app=5"]).registry_max_per_app, 5);
    assert_eq!(
        (config(&[]).registry_max_apps, config(&["--xxl.job.registry.max-apps=7"]).registry_max_apps),
        (1000, 7)
    );
    assert!(error(&["--xxl.job.registry.max-apps=0"]).contains("at least 1"));
    assert_eq!(
        (
            config(&[]).registry_max_apps_per_address,
            config(&["--xxl.job.registry.max-apps-per-address=3"]).registry_max_apps_per_address
        ),
        (100, 3)
    );
    assert!(error(&["--xxl.job.registry.max-apps-per-address=0"]).contains("at least 1"));
    assert!(error(&["--xxl.job.registry.max-per-app=0"]).contains("at least 1"));
    assert!(error(&["--xxl.job.registry.max-per-app=-1"]).contains("xxl.job.registry.max-per-app"));
}

#[test]
fn secrets_stay_masked() {
    let secret = Secret::new("hunter2");
    assert_eq!(format!("{secret} {secret:?}"), "****** ******");
    assert_eq!(secret.expose(), "hunter2");
    assert!(Secret::new(" \t").is_blank() && !secret.is_blank());
    let c = config(&[
        "--spring.datasource.url=mysql://u:urlpw@db/x",
        "--spring.mail.password=mailpw",
        "--xxl.job.accessToken=tokenpw",
        "--xxl.job.session.secret=sessionpw-sessionpw-sessionpw-sessionpw",
    ]);
    let text = format!("{c:?}\n{}", c.redacted_summary());
    for secret in ["urlpw", "mailpw", "tokenpw", "sessionpw"] {
        assert!(!text.contains(secret), "{secret} leaked:\n{text}");
    }
}

#[test]
fn summary_shows_the_effective_values() {
    let c = config(&[
        "--xxl.job.triggerpool.fast.max=50",
        "--xxl.job.accessToken=",
        "--server.servlet.context-path=/",
    ]);
    let summary = c.redacted_summary();
    assert!(summary.contains("server.port = 8080\n"), "{summary}");
    assert!(summary.contains("server.servlet.context-path = /\n"), "{summary}");
    assert!(summary.contains("xxl.job.triggerpool.fast.max = 200 (configured 50)"), "{summary}");
    assert!(summary.contains("xxl.job.accessToken = (empty: no token check)"), "{summary}");
    assert!(summary.contains("spring.datasource.url = sqlite:"), "{summary}");
    let summary =
        config(&["--spring.datasource.url=jdbc:mysql://[::1]/x?serverTimezone=UTC"]).redacted_summary();
    assert!(summary.contains("mysql://[::1]:3306/x"), "{summary}");
    assert!(summary.contains("database time zone = UTC"), "{summary}");
}

#[test]
fn help_names_every_key_with_its_environment_variable_default_and_meaning() {
    let help = help_text(80);
    assert!(help.starts_with("Usage: xxl-job-admin"));
    // Whitespace-insensitive: wrapping may break any line between words.
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    for spec in keys::KEYS {
        let default = spec.default.map_or(String::new(), |d| format!(", default {d}"));
        assert!(
            flat.contains(&format!("{} ({}{default})", spec.name, spec.env_name())),
            "{} missing from help",
            spec.name
        );
        assert!(
            flat.contains(&spec.help.split_whitespace().collect::<Vec<_>>().join(" ")),
            "{}: meaning missing",
            spec.name
        );
    }
    assert!(help.contains("SERVER_SERVLET_CONTEXTPATH") && help.contains("mybatis.*"));
}

#[test]
fn postgres_datasource_with_credentials_from_keys_or_url() {
    let c = config(&[
        "--spring.datasource.url=jdbc:postgresql://pg.internal:5433/xxl_job?sslmode=require&options=-c%20TimeZone%3DAsia/Shanghai",
        "--spring.datasource.username=xxl",
        "--spring.datasource.password=keypw",
    ]);
    assert!(
        matches!(&c.datasource.target, DbTarget::Postgres { servers, database, ssl_mode: SslMode::Required, .. } if *servers == Servers::single("pg.internal", 5433) && database == "xxl_job")
    );
    assert_eq!(
        (c.datasource.username.as_deref(), c.datasource.password.as_ref().map(Secret::expose)),
        (Some("xxl"), Some("keypw"))
    );
    assert_eq!(c.datasource.time_zone, Some("Asia/Shanghai".parse().unwrap()));
    let summary = c.redacted_summary();
    assert!(summary.contains("postgres://pg.internal:5433/xxl_job (sslmode Required"), "{summary}");
    assert!(!summary.contains("keypw"), "{summary}");
    // Credentials in the URL win over the keys and stay masked.
    let c =
        config(&["--spring.datasource.url=postgres://app:urlpw@pg/x", "--spring.datasource.username=xxl"]);
    assert_eq!(
        (c.datasource.username.as_deref(), c.datasource.password.as_ref().map(Secret::expose)),
        (Some("app"), Some("urlpw"))
    );
    assert!(!format!("{c:?}\n{}", c.redacted_summary()).contains("urlpw"));
}

#[test]
fn webhook_channels_from_arguments_file_and_environment() {
    let d = dir();
    write(
        d.path(),
        "application.properties",
        "xxl.job.alarm.webhook.ops-team.type=DingTalk\n\
         xxl.job.alarm.webhook.ops-team.url=https://oapi.dingtalk.com/robot/send?access_token=T0K3N\n\
         xxl.job.alarm.webhook.ops-team.secret=SECabc\n\
         xxl.job.alarm.webhook.ops-team.groups=app-a, app-b ,\n",
    );
    let env = [
        ("XXL_JOB_ALARM_WEBHOOK_CHAT_TYPE", "slack"),
        ("XXL_JOB_ALARM_WEBHOOK_CHAT_URL", "https://hooks.slack.com/services/X"),
        ("XXL_JOB_ALARM_WEBHOOK_CHAT_TIMEOUT", "1500"),
    ];
    let args = [
        "--xxl.job.alarm.webhook.hook.type=json",
        "--xxl.job.alarm.webhook.hook.url=http://10.0.0.1/alarm",
        "--xxl.job.alarm.webhook.hook.groups=*",
    ];
    let loaded = load(d.path(), &args, &env).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let webhooks = &loaded.config.alarm.webhooks;
    let names: Vec<&str> = webhooks.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["chat", "hook", "opsteam"]);
    let ops = &webhooks[2];
    assert_eq!(
        (ops.kind, ops.url.expose()),
        (WebhookKind::DingTalk, "https://oapi.dingtalk.com/robot/send?access_token=T0K3N")
    );
    assert_eq!(ops.secret.as_ref().map(Secret::expose), Some("SECabc"));
    assert_eq!((ops.groups.clone(), ops.timeout_ms), (vec!["app-a".to_string(), "app-b".to_string()], 5000));
    assert!(ops.covers("app-b") && !ops.covers("app-c"));
    assert!(webhooks[1].covers("anything"), "* covers every group");
    assert_eq!(
        (webhooks[0].kind, webhooks[0].timeout_ms, webhooks[0].groups.len()),
        (WebhookKind::Slack, 1500, 0)
    );
    let summary = loaded.config.redacted_summary();
    assert!(
        summary.contains(
            "xxl.job.alarm.webhook.opsteam = dingtalk to oapi.dingtalk.com, signed, groups: app-a,app-b"
        ),
        "{summary}"
    );
    assert!(!summary.contains("T0K3N") && !summary.contains("SECabc"), "{summary}");
}

#[test]
fn webhook_urls_are_shown_without_their_tokens() {
    let shown = |url: &str| {
        let c =
            config(&["--xxl.job.alarm.webhook.a.type=json", &format!("--xxl.job.alarm.webhook.a.url={url}")]);
        c.alarm.webhooks[0].redacted_url()
    };
    assert_eq!(
        shown("https://oapi.dingtalk.com/robot/send?access_token=T0K3N"),
        "https://oapi.dingtalk.com/robot/send?access_token=***"
    );
    assert_eq!(
        shown("https://open.feishu.cn/open-apis/bot/v2/hook/4f1c-88ab"),
        "https://open.feishu.cn/open-apis/bot/v2/hook/***"
    );
    assert_eq!(
        shown("https://hooks.slack.com/services/T000/B000/XXXX"),
        "https://hooks.slack.com/services/***/***/***"
    );
    assert_eq!(
        shown("http://ops:pa55@10.0.0.1:8080/alarm?k=v&t=1"),
        "http://ops:***@10.0.0.1:8080/alarm?k=***&t=***"
    );
    assert_eq!(shown("https://alerts.example.com/xxl-job/"), "https://alerts.example.com/xxl-job/");
}

#[test]
fn webhook_mistakes_are_named() {
    let missing = error(&["--xxl.job.alarm.webhook.ops.type=wecom"]);
    assert!(missing.contains("xxl.job.alarm.webhook.ops.url") && missing.contains("missing"), "{missing}");
    let kind =
        error(&["--xxl.job.alarm.webhook.ops.type=teams", "--xxl.job.alarm.webhook.ops.url=https://x.test/"]);
    assert!(kind.contains("xxl.job.alarm.webhook.ops.type: invalid value `teams`"), "{kind}");
    let url = error(&[
        "--xxl.job.alarm.webhook.ops.type=json",
        "--xxl.job.alarm.webhook.ops.url=ftp://x.test/s3cret",
    ]);
    assert!(
        url.contains("xxl.job.alarm.webhook.ops.url") && !url.contains("s3cret"),
        "the URL is never shown: {url}"
    );
    let timeout = error(&[
        "--xxl.job.alarm.webhook.ops.type=json",
        "--xxl.job.alarm.webhook.ops.url=https://x.test/",
        "--xxl.job.alarm.webhook.ops.timeout=10",
    ]);
    assert!(timeout.contains("at least 100"), "{timeout}");
    let console = error(&["--xxl.job.alarm.console-url=jobs.example.com"]);
    assert!(console.contains("xxl.job.alarm.console-url"), "{console}");
    let ignored = warnings(&[
        "--xxl.job.alarm.webhook.ops.type=slack",
        "--xxl.job.alarm.webhook.ops.url=https://x.test/",
        "--xxl.job.alarm.webhook.ops.secret=s",
    ]);
    assert!(ignored.iter().any(|w| w.contains("secret is ignored")), "{ignored:?}");
    let unknown = warnings(&["--xxl.job.alarm.webhook.ops.colour=red"]);
    assert!(
        unknown.iter().any(|w| w.contains("unknown key `xxl.job.alarm.webhook.ops.colour`")),
        "{unknown:?}"
    );
    assert_eq!(
        config(&["--xxl.job.alarm.console-url=https://jobs.example.com/xxl-job-admin/"])
            .alarm
            .console_url
            .as_deref(),
        Some("https://jobs.example.com/xxl-job-admin")
    );
}

#[test]
fn help_lists_the_webhook_fields() {
    let help = help_text(200);
    for field in ["type", "url", "secret", "groups", "timeout"] {
        let key = format!("xxl.job.alarm.webhook.<name>.{field}");
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with(&key))
            .unwrap_or_else(|| panic!("{key} missing from help"));
        assert!(line.contains(&format!("XXL_JOB_ALARM_WEBHOOK_<NAME>_{}", field.to_uppercase())), "{line}");
    }
}

#[test]
fn help_fits_the_width_and_lists_every_command_on_one_line() {
    for width in [80, 60, 120] {
        let help = help_text(width);
        for line in help.lines() {
            assert!(line.chars().count() <= width || !line.trim().contains(' '), "{width}: {line:?}");
        }
    }
    let help = help_text(80);
    for command in ["serve", "cron", "help", "version"] {
        let line = help
            .lines()
            .find(|l| l.split_whitespace().next() == Some(command))
            .unwrap_or_else(|| panic!("{command} missing"));
        assert!(line.split_whitespace().count() > 2, "{command} has a meaning on its line: {line}");
    }
}

#[test]
fn trusted_origins_are_kept_as_browsers_write_origins() {
    assert!(config(&[]).trusted_origins.is_empty());
    let c =
        config(&["--xxl.job.console.trusted-origins=https://Jobs.Example.com:443/, http://10.0.0.5:8081 ,,"]);
    assert_eq!(c.trusted_origins, ["https://jobs.example.com", "http://10.0.0.5:8081"]);
    for bad in [
        "https://jobs.example.com/ui",
        "jobs.example.com",
        "ftp://jobs.example.com",
        "https://u:p@jobs.example.com",
        "*",
    ] {
        let message = error(&[&format!("--xxl.job.console.trusted-origins={bad}")]);
        assert!(message.contains("xxl.job.console.trusted-origins"), "{bad}: {message}");
    }
}

#[test]
fn help_names_the_bench_program_and_no_bench_command() {
    let help = help_text(200);
    assert!(help.lines().all(|l| l.split_whitespace().next() != Some("bench")), "no bench command listed");
    assert!(help.contains("target/release/xxl-job-bench"), "{help}");
    assert!(help.contains("xxl.job.console.trusted-origins (XXL_JOB_CONSOLE_TRUSTEDORIGINS)"), "{help}");
}

#[test]
fn ldap_is_off_until_a_url_is_set_and_its_password_never_shows() {
    assert_eq!(config(&[]).ldap, None);
    assert_eq!(config(&["--xxl.job.auth.ldap.bind-dn=cn=reader"]).ldap, None, "no url, no LDAP");
    let d = dir();
    let env =
        [("XXL_JOB_AUTH_LDAP_BINDPASSWORD", "ldappw"), ("XXL_JOB_AUTH_LDAP_URL", "ldap://dir.example.com")];
    let args = [
        "--xxl.job.auth.ldap.bind-dn=cn=reader,dc=example,dc=com",
        "--xxl.job.auth.ldap.user-search-base=ou=people,dc=example,dc=com",
        "--xxl.job.auth.ldap.ca-file=ca.pem",
    ];
    let loaded = load(d.path(), &args, &env).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let c = loaded.config;
    let ldap = c.ldap.clone().unwrap();
    assert_eq!(
        (ldap.url.as_str(), ldap.tls, ldap.fallback_to_local, ldap.timeout_ms),
        ("ldap://dir.example.com", LdapTls::StartTls, false, 5000)
    );
    assert_eq!(
        (ldap.user_filter.as_str(), ldap.group_filter.as_str(), ldap.group_attribute.as_str()),
        ("(uid={0})", "(member={dn})", "memberOf")
    );
    assert_eq!(ldap.ca_file, Some(d.path().join("ca.pem")));
    assert_eq!(
        ldap.bind.as_ref().map(|(dn, pw)| (dn.as_str(), pw.expose())),
        Some(("cn=reader,dc=example,dc=com", "ldappw"))
    );
    let text = format!("{c:?}\n{}", c.redacted_summary());
    assert!(!text.contains("ldappw"), "{text}");
    assert!(text.contains("xxl.job.auth.ldap = ldap://dir.example.com (StartTLS, CAs from"), "{text}");

    let base = "--xxl.job.auth.ldap.user-search-base=dc=x";
    let ldaps = config(&["--xxl.job.auth.ldap.url=ldaps://dir:636", base]).ldap.unwrap();
    assert_eq!((ldaps.tls, ldaps.bind), (LdapTls::Ldaps, None), "anonymous search");
    let plain = ["--xxl.job.auth.ldap.url=ldap://dir", base, "--xxl.job.auth.ldap.starttls=false"];
    assert!(warnings(&plain).iter().any(|w| w.contains("clear text")));
    assert!(error(&["--xxl.job.auth.ldap.url=ldap://dir"]).contains("user-search-base"));
    assert!(error(&["--xxl.job.auth.ldap.url=http://dir", base]).contains("ldap://"));
    assert!(error(&["--xxl.job.auth.ldap.url=ldap://dir", base, "--xxl.job.auth.ldap.bind-dn=cn=r"])
        .contains("without xxl.job.auth.ldap.bind-password"));
    let e = error(&["--xxl.job.auth.ldap.url=ldap://dir", base, "--xxl.job.auth.ldap.bind-password=ldappw"]);
    assert!(e.contains("without xxl.job.auth.ldap.bind-dn") && !e.contains("ldappw"), "{e}");
    assert!(
        error(&["--xxl.job.auth.ldap.user-search-filter=(uid=alice)"]).contains("{0}"),
        "checked even while LDAP is off"
    );
    assert!(error(&["--xxl.job.auth.ldap.group-executors=ops"]).contains("GROUP=APPNAME"));
    assert!(error(&["--xxl.job.auth.ldap.timeout=5"]).contains("100 to 120000"));
}

#[test]
fn audit_keys_take_a_file_and_a_secret_webhook() {
    let d = dir();
    let loaded = load(
        d.path(),
        &[
            "--xxl.job.audit.file=logs/audit.jsonl",
            "--xxl.job.audit.webhook.url=https://siem.example.com/hook/T0KEN123?key=s3cr3t",
        ],
        &[],
    )
    .unwrap();
    let audit = &loaded.config.audit;
    assert_eq!(audit.file.as_deref(), Some(d.path().join("logs/audit.jsonl").as_path()));
    let text = format!("{:?}\n{}\n{}", loaded.config, loaded.config.redacted_summary(), help_text(100));
    assert!(!text.contains("T0KEN123") && !text.contains("s3cr3t"), "{text}");
    assert!(text.contains("xxl.job.audit.webhook.url = https://siem.example.com/hook/***?key=***"), "{text}");
    assert!(text.contains("xxl.job.audit.file (XXL_JOB_AUDIT_FILE)"), "documented in --help: {text}");
    assert_eq!(config(&[]).audit, AuditConfig::default());
    let refused = error(&["--xxl.job.audit.webhook.url=ftp://host/x?token=s3cr3t"]);
    assert!(refused.contains("xxl.job.audit.webhook.url") && !refused.contains("s3cr3t"), "{refused}");
}

#[test]
fn openid_connect_from_keys_and_environment_with_the_secret_masked() {
    let c = config(&[]);
    assert_eq!(c.auth, AuthConfig { password_enabled: true, oidc: None });
    let d = dir();
    let env = [("XXL_JOB_AUTH_OIDC_CLIENT_SECRET", "oidcpw-1"), ("XXL_JOB_AUTH_OIDC_GROUPS_CLAIM", "groups")];
    let args = [
        "--xxl.job.auth.oidc.issuer=https://sso.example.com/realms/ops",
        "--xxl.job.auth.oidc.client-id=xxl-job",
        "--xxl.job.auth.oidc.scopes=profile,groups",
        "--xxl.job.auth.oidc.admin-groups=ops, xxl-admins",
        "--xxl.job.auth.password.enabled=false",
    ];
    let loaded = load(d.path(), &args, &env).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let c = loaded.config;
    let oidc = c.auth.oidc.as_ref().expect("configured");
    assert!(!c.auth.password_enabled);
    assert_eq!(
        (oidc.issuer.as_str(), oidc.client_id.as_str()),
        ("https://sso.example.com/realms/ops", "xxl-job")
    );
    assert_eq!(oidc.client_secret.as_ref().map(Secret::expose), Some("oidcpw-1"));
    assert_eq!(oidc.scopes, ["openid", "profile", "groups"]);
    assert_eq!(
        (oidc.provider_name.as_str(), oidc.username_claim.as_str(), oidc.redirect_uri.as_deref()),
        ("OpenID Connect", "preferred_username", None)
    );
    assert_eq!(
        (oidc.groups_claim.as_deref(), oidc.admin_groups.clone()),
        (Some("groups"), vec!["ops".to_string(), "xxl-admins".to_string()])
    );
    let text = format!("{c:?}\n{}", c.redacted_summary());
    assert!(!text.contains("oidcpw"), "the client secret leaked:\n{text}");
    assert!(text.contains("xxl.job.auth.oidc.client-secret = ******"), "{text}");
    let help = help_text(200);
    assert!(
        help.contains("XXL_JOB_AUTH_OIDC_CLIENTSECRET") && help.contains("xxl.job.auth.password.enabled"),
        "{help}"
    );
}

#[test]
fn openid_connect_settings_that_cannot_work_stop_the_start() {
    assert!(error(&["--xxl.job.auth.password.enabled=false"]).contains("nobody could sign in"));
    assert!(error(&["--xxl.job.auth.oidc.issuer=https://sso.example.com"]).contains("client-id is needed"));
    assert!(error(&["--xxl.job.auth.oidc.client-id=x"]).contains("issuer is needed"));
    assert!(error(&["--xxl.job.auth.oidc.issuer=sso.example.com", "--xxl.job.auth.oidc.client-id=x"])
        .contains("xxl.job.auth.oidc.issuer"));
    let no_claim = error(&[
        "--xxl.job.auth.oidc.issuer=https://sso",
        "--xxl.job.auth.oidc.client-id=x",
        "--xxl.job.auth.oidc.admin-groups=ops",
    ]);
    assert!(no_claim.contains("groups-claim"), "{no_claim}");
    let secret = error(&["--xxl.job.auth.oidc.client-secret=oidcpw-2"]);
    assert!(!secret.contains("oidcpw"), "{secret}");
}
