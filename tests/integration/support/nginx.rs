//! A real nginx (Debian's `nginx`) in front of the admin under test, configured as users write it: one
//! `location / { proxy_pass http://127.0.0.1:PORT; }` and nothing else, so nginx sends its default
//! proxy headers (`Host` is the upstream's address, no `X-Forwarded-*`). A second site on another port
//! serves pages of another origin.
//!
//! nginx runs as a private child process: its own prefix, configuration, pid and logs in a temporary
//! directory, `daemon off`, on loopback ports; the system's service and files are never touched.

use super::Context;
use libtest_mimic::Failed;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const NGINX: &str = "/usr/sbin/nginx";

/// Why the nginx tests cannot run here, if they cannot.
pub fn availability() -> Result<(), String> {
    match Command::new(NGINX).arg("-v").output() {
        Ok(output) if output.status.success() => Ok(()),
        Ok(output) => Err(format!("{NGINX} -v failed: {}", String::from_utf8_lossy(&output.stderr).trim())),
        Err(e) => Err(format!("{NGINX}: {e} (apt-get install nginx)")),
    }
}

pub struct Nginx {
    /// The console as users reach it through the proxy: `http://127.0.0.1:PORT/xxl-job-admin`.
    pub console: String,
    /// The other site: `127.0.0.1:PORT` (a sibling of the console's origin; as `localhost:PORT`, another site).
    pub other: SocketAddr,
    process: Child,
    dir: tempfile::TempDir,
}

/// A port nobody listens on now, for a proxy the admin's configuration must name before it starts.
pub fn free_port() -> Result<u16, Failed> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("free port")?;
    Ok(listener.local_addr().context("free port")?.port())
}

impl Nginx {
    /// Proxies `port` to the admin at `upstream`; the other site answers each `(path, html)` page, where
    /// `CONSOLE` stands for the console's URL through the proxy. The pages are written into the
    /// configuration, so they must not contain `'` or `$`.
    pub async fn start(port: u16, upstream: SocketAddr, pages: &[(&str, &str)]) -> Result<Nginx, Failed> {
        let dir = tempfile::tempdir().context("nginx dir")?;
        let other_port = free_port()?;
        let console = format!("http://127.0.0.1:{port}/xxl-job-admin");
        let root = dir.path().display().to_string();
        let mut locations = String::new();
        for (path, html) in pages {
            if html.contains(['\'', '$']) {
                return Err(format!("page {path} cannot be written into nginx.conf").into());
            }
            let html = html.replace("CONSOLE", &console);
            locations.push_str(&format!(
                "        location = {path} {{ default_type text/html; return 200 '{html}'; }}\n"
            ));
        }
        // One process (no master and workers), so stopping the child stops nginx. Temporary files in
        // the directory too, so nothing is written under the compiled-in /var/lib/nginx.
        let config = format!(
            "master_process off;\n\
             pid {root}/nginx.pid;\n\
             error_log {root}/error.log info;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n\
             \x20   access_log {root}/access.log;\n\
             \x20   client_body_temp_path {root}/body;\n\
             \x20   proxy_temp_path {root}/proxy;\n\
             \x20   fastcgi_temp_path {root}/fastcgi;\n\
             \x20   uwsgi_temp_path {root}/uwsgi;\n\
             \x20   scgi_temp_path {root}/scgi;\n\
             \x20   server {{\n\
             \x20       listen 127.0.0.1:{port};\n\
             \x20       location / {{ proxy_pass http://{upstream}; }}\n\
             \x20   }}\n\
             \x20   server {{\n\
             \x20       listen 127.0.0.1:{other_port};\n\
             {locations}\
             \x20   }}\n\
             }}\n"
        );
        let conf = dir.path().join("nginx.conf");
        std::fs::write(&conf, config).context("nginx.conf")?;
        let process = Command::new(NGINX)
            .arg("-p")
            .arg(dir.path())
            .arg("-e")
            .arg(dir.path().join("error.log"))
            .arg("-c")
            .arg(&conf)
            .args(["-g", "daemon off;"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("start nginx")?;
        let mut nginx =
            Nginx { console, other: SocketAddr::from(([127, 0, 0, 1], other_port)), process, dir };
        for _ in 0..100 {
            let up = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok()
                && tokio::net::TcpStream::connect(nginx.other).await.is_ok();
            if up {
                return Ok(nginx);
            }
            if let Ok(Some(status)) = nginx.process.try_wait() {
                return Err(format!("nginx exited with {status}: {}", nginx.error_log()).into());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(format!("nginx did not listen on {port} and {other_port}: {}", nginx.error_log()).into())
    }

    /// nginx's error log so far, for failure messages.
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default()
    }

    /// The requests nginx proxied so far (its access log).
    pub fn access_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("access.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}
