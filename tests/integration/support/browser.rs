//! A real headless Chromium driven over WebDriver (Debian's `chromium` + `chromium-driver`).
//!
//! One chromedriver process serves every browser test of the run; each test gets its own browser session
//! and, when it fails, leaves a screenshot in `target/browser-screenshots/`.

use super::{error_chain, Context};
use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use libtest_mimic::Failed;
use serde_json::{json, Value};
use std::future::Future;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const CHROMIUM: &str = "/usr/bin/chromium";

/// Why browser tests cannot run here, if they cannot.
pub fn browser_availability() -> Result<(), String> {
    for path in [CHROMEDRIVER, CHROMIUM] {
        if !std::path::Path::new(path).exists() {
            return Err(format!("{path} not found (apt-get install chromium chromium-driver)"));
        }
    }
    Ok(())
}

struct Driver {
    url: String,
    _process: Child,
}

/// The shared chromedriver, started on first use; it dies with the test process.
fn driver() -> Result<&'static str, Failed> {
    static DRIVER: OnceLock<Result<Driver, String>> = OnceLock::new();
    let driver = DRIVER.get_or_init(|| {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("free port: {e}"))?
            .port();
        let process = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("start {CHROMEDRIVER}: {e}"))?;
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(Driver { url: format!("http://127.0.0.1:{port}"), _process: process });
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err("chromedriver did not start listening".to_string())
    });
    driver.as_ref().map(|d| d.url.as_str()).map_err(|e| Failed::from(e.clone()))
}

/// A browser session on the admin under test.
pub struct Browser {
    pub client: Client,
    base: String,
}

impl Browser {
    pub async fn open(base: &str) -> Result<Browser, Failed> {
        let capabilities = json!({
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                         "--window-size=1400,900", "--lang=en-US"],
            },
        });
        let Value::Object(capabilities) = capabilities else { unreachable!() };
        let client = ClientBuilder::new(HttpConnector::new())
            .capabilities(capabilities)
            .connect(driver()?)
            .await
            .map_err(|e| Failed::from(format!("browser session: {}", error_chain(&e))))?;
        Ok(Browser { client, base: base.to_string() })
    }

    /// Runs `scenario`; on failure keeps a screenshot named after the test, then closes the session.
    pub async fn run<F, Fut>(base: &str, name: &str, scenario: F) -> Result<(), Failed>
    where
        F: FnOnce(Browser) -> Fut,
        Fut: Future<Output = (Browser, Result<(), Failed>)>,
    {
        let browser = Browser::open(base).await?;
        let (browser, result) = scenario(browser).await;
        if let Err(failure) = &result {
            let path = browser.screenshot(name).await;
            eprintln!("{name} failed: {}; screenshot: {path}", failure.message().unwrap_or("?"));
        }
        let _ = browser.client.close().await;
        result
    }

    /// Saves the current page as `target/browser-screenshots/NAME.png`; returns where (or why not).
    pub async fn screenshot(&self, name: &str) -> String {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/browser-screenshots");
        let path = dir.join(format!("{}.png", name.replace("::", "-")));
        match self.client.screenshot().await {
            Ok(png) => match std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&path, png)) {
                Ok(()) => path.display().to_string(),
                Err(e) => format!("not saved: {e}"),
            },
            Err(e) => format!("not taken: {e}"),
        }
    }

    /// Opens a page of the admin, with its animations off: a click must not land on a dialog that is
    /// still sliding in, nor the next step start while the last dialog fades out, on a loaded machine.
    pub async fn goto(&self, path: &str) -> Result<(), Failed> {
        self.client.goto(&format!("{}{path}", self.base)).await.context(&format!("open {path}"))?;
        self.script(
            "if (window.jQuery) { jQuery.support.transition = false; jQuery.fx.off = true; } \
             var style = document.createElement('style'); \
             style.textContent = '*, *::before, *::after { transition: none !important; animation: none !important; }'; \
             document.head.appendChild(style); return true;",
            vec![],
        )
        .await
        .map(drop)
    }

    /// The element, once it is present and displayed.
    pub async fn visible(&self, css: &str) -> Result<Element, Failed> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        loop {
            if let Ok(element) = self.client.find(Locator::Css(css)).await {
                if element.is_displayed().await.unwrap_or(false) {
                    return Ok(element);
                }
            }
            if tokio::time::Instant::now() > deadline {
                return Err(format!("{css} never became visible").into());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub async fn click(&self, css: &str) -> Result<(), Failed> {
        self.visible(css).await?.click().await.context(&format!("click {css}"))
    }

    /// Replaces the value of a text input or textarea.
    pub async fn fill(&self, css: &str, text: &str) -> Result<(), Failed> {
        let element = self.visible(css).await?;
        element.clear().await.context(&format!("clear {css}"))?;
        element.send_keys(text).await.context(&format!("type into {css}"))
    }

    /// Runs a script in the page and returns its value.
    pub async fn script(&self, js: &str, args: Vec<Value>) -> Result<Value, Failed> {
        self.client.execute(js, args).await.context("script")
    }

    /// Polls `js` (a function body returning a value) until it returns something truthy.
    pub async fn until(&self, what: &str, js: &str) -> Result<Value, Failed> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let value = self.script(js, vec![]).await?;
            let truthy = !matches!(&value, Value::Null | Value::Bool(false))
                && value != json!("")
                && value != json!(0);
            if truthy {
                return Ok(value);
            }
            if tokio::time::Instant::now() > deadline {
                return Err(format!("timed out waiting for {what}").into());
            }
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    }

    pub async fn text(&self, css: &str) -> Result<String, Failed> {
        self.visible(css).await?.text().await.context(&format!("text of {css}"))
    }
}
