//! The report's page in a real headless browser (Debian's `chromium` driven through
//! `chromedriver`, spoken to in the W3C WebDriver protocol with the HTTP client the tests
//! already have): the admin key typed on the page, the report shown, the key never in the
//! URL, a wrong key refused. Without chromium and chromedriver the test fails under `CI`
//! (`.ci/run` installs them) and skips loudly elsewhere.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::files::DataDir;
use crate::common::process::{installed, required};
use crate::harness::{ADMIN_KEY, As, Dual, change_product};

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

struct Driver {
    child: Child,
    base: String,
    session: String,
    http: reqwest::Client,
    _profile: DataDir,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Driver {
    async fn start() -> Option<Driver> {
        let found = installed("chromedriver") && installed("chromium");
        let install = "apt-get install -y chromium chromium-driver";
        let skipped = "the report page's browser test";
        if !required(found, "chromium or chromedriver", install, skipped) {
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let base = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        let start = Instant::now();
        while http.get(format!("{base}/status")).send().await.is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "chromedriver did not start"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let profile = DataDir(
            std::env::temp_dir().join(format!("storegate-chromium-{}-{port}", std::process::id())),
        );
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu",
                    "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", "--no-first-run",
                    format!("--user-data-dir={}", profile.0.display()),
                ]
            }
        }}});
        let created: Value =
            crate::common::http::json_of(http.post(format!("{base}/session")).json(&capabilities))
                .await;
        let session = created["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {created}"))
            .to_owned();
        Some(Driver {
            child,
            base,
            session,
            http,
            _profile: profile,
        })
    }

    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}/session/{}{path}", self.base, self.session);
        let mut request = self.http.request(method, url);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer: Value = request.send().await.unwrap().json().await.unwrap();
        answer["value"].clone()
    }

    async fn go(&self, url: &str) {
        self.call(reqwest::Method::POST, "/url", Some(json!({ "url": url })))
            .await;
    }

    async fn url(&self) -> String {
        self.call(reqwest::Method::GET, "/url", None)
            .await
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// The elements matching a CSS selector.
    async fn all(&self, css: &str) -> Vec<String> {
        let found = self
            .call(
                reqwest::Method::POST,
                "/elements",
                Some(json!({"using": "css selector", "value": css})),
            )
            .await;
        found
            .as_array()
            .map(|list| {
                list.iter()
                    .filter_map(|e| e[ELEMENT].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    async fn one(&self, css: &str) -> String {
        self.all(css)
            .await
            .into_iter()
            .next()
            .unwrap_or_else(|| panic!("no {css} on the page"))
    }

    async fn text(&self, element: &str) -> String {
        self.call(
            reqwest::Method::GET,
            &format!("/element/{element}/text"),
            None,
        )
        .await
        .as_str()
        .unwrap_or_default()
        .to_owned()
    }

    /// Posts `body` to the element's `action` (`clear`, `value`, `click`).
    async fn on_element(&self, element: &str, action: &str, body: Value) {
        let path = format!("/element/{element}/{action}");
        self.call(reqwest::Method::POST, &path, Some(body)).await;
    }

    async fn type_in(&self, css: &str, text: &str) {
        let element = self.one(css).await;
        self.on_element(&element, "clear", json!({})).await;
        self.on_element(&element, "value", json!({ "text": text }))
            .await;
    }

    async fn click(&self, css: &str) {
        let element = self.one(css).await;
        self.on_element(&element, "click", json!({})).await;
    }

    /// The text of the first element matching `css` once it is there and `ok` holds.
    async fn wait_for(&self, css: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            if let Some(element) = self.all(css).await.into_iter().next() {
                let text = self.text(&element).await;
                if ok(&text) {
                    return text;
                }
            }
            assert!(
                start.elapsed() < Duration::from_secs(15),
                "{css} never showed"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

#[tokio::test]
async fn the_report_page_in_a_headless_browser() {
    let Some(driver) = Driver::start().await else {
        return;
    };
    let dual = Dual::start(Duration::ZERO, |_, _| {}).await;
    change_product(
        dual.candidate(),
        "24-MB01",
        serde_json::json!({"name": "Other Bag"}),
    )
    .await;
    assert_eq!(dual.get("/products/1", As::Guest).await.status, 200);
    dual.report_when(Duration::from_secs(15), |report| {
        !report["routes"].as_array().unwrap().is_empty()
    })
    .await;
    let page = format!("{}/shadow", dual.gateway.base_url());
    driver.go(&page).await;
    // A wrong key: refused, said on the page.
    driver.type_in("#key", "not-the-admin-key").await;
    driver.click("#load").await;
    let said = driver.wait_for("#status", |t| !t.is_empty()).await;
    assert!(said.contains("401"), "{said}");
    // The admin key: the report.
    driver.type_in("#key", ADMIN_KEY).await;
    driver.click("#load").await;
    let row = "tr.route[data-route='GET /products/:id'][data-user-type='guest']";
    let verdict = driver
        .wait_for(&format!("{row} .verdict"), |t| !t.is_empty())
        .await;
    assert_eq!(verdict, "not ready");
    let path = driver
        .wait_for("tr.difference[data-path='name'] .path", |t| !t.is_empty())
        .await;
    assert_eq!(path, "name");
    let candidate = driver
        .wait_for("tr.difference[data-path='name'] .candidate", |t| {
            !t.is_empty()
        })
        .await;
    assert_eq!(candidate, "\"Other Bag\"");
    // The key went in a header, never in the URL.
    let url = driver.url().await;
    assert!(
        !url.contains(ADMIN_KEY) && url.ends_with("/api/rest/shadow"),
        "{url}"
    );
    driver.call(reqwest::Method::DELETE, "", None).await;
}
