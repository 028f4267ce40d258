//! A real browser at a phone's size: Debian's `chromium`, headless, driven through
//! `chromedriver` with the W3C WebDriver protocol (plain JSON over HTTP, spoken here with
//! `reqwest`: a few calls, no client crate), emulating a 375 x 667 phone at 2x with an
//! iPhone's user agent, as an app's in-app browser shows the authorize page.
//!
//! `PHONE_DEBUG=1` prints each WebDriver call. `.ci/run` installs `chromium` and
//! `chromium-driver`; without them the tests that need a
//! browser fail when `CI` is set and skip with a loud line otherwise.

use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::common::process::{free_port, required};
use serde_json::{Value, json};

/// The phone: an iPhone SE's CSS pixels.
pub const WIDTH: u32 = 375;
pub const HEIGHT: u32 = 667;

/// Whether chromium and chromedriver are installed; a missing one fails under CI.
pub fn available() -> bool {
    let ok = ["chromium", "chromedriver"].iter().all(|program| {
        Command::new(program)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    let what = "chromium or chromedriver";
    required(ok, what, "see .ci/run", "the phone-size browser test")
}

/// A chromedriver process of this test and one browser session on it.
pub struct Phone {
    driver: Child,
    base: String,
    session: String,
    http: reqwest::Client,
    profile_dir: std::path::PathBuf,
}

impl Phone {
    pub async fn start() -> Phone {
        let port = free_port();
        // A process group of its own, which the browser it starts joins: the drop ends
        // the whole group, so a failed or hung test leaves no browser behind.
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("chromedriver starts");
        let base = format!("http://127.0.0.1:{port}");
        // No step waits long: a hung browser fails the test (and its drop closes the
        // browser) rather than stalling the suite.
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let ready = http
                .get(format!("{base}/status"))
                .send()
                .await
                .ok()
                .map(|r| r.status().is_success())
                .unwrap_or(false);
            if ready {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "chromedriver did not answer"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let profile_dir = super::temp_dir("chromium");
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "timeouts": {"pageLoad": 10_000, "script": 10_000},
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu",
                    "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", "--no-first-run", "--disable-crash-reporter",
                    format!("--user-data-dir={}", profile_dir.display()),
                ],
                "mobileEmulation": {
                    "deviceMetrics": {"width": WIDTH, "height": HEIGHT, "pixelRatio": 2.0},
                    "userAgent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148",
                },
            },
            // The network events, where a redirect to the app's own scheme shows.
            "goog:loggingPrefs": {"performance": "ALL"},
        }}});
        let mut phone = Phone {
            driver,
            base,
            session: String::new(),
            http,
            profile_dir,
        };
        let created = phone.call("POST", "/session", Some(capabilities)).await;
        phone.session = created["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {created}"))
            .to_owned();
        phone
    }

    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        if std::env::var_os("PHONE_DEBUG").is_some() {
            eprintln!("phone: {method} {path} {body:?}");
        }
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer: Value = request
            .send()
            .await
            .unwrap_or_else(|e| panic!("WebDriver {path}: {e}"))
            .json()
            .await
            .expect("chromedriver answers JSON");
        if let Some(error) = answer["value"].get("error") {
            panic!("WebDriver {path}: {error}: {}", answer["value"]["message"]);
        }
        answer["value"].clone()
    }

    fn at(&self, path: &str) -> String {
        format!("/session/{}{path}", self.session)
    }

    pub async fn open(&self, url: &str) {
        self.call("POST", &self.at("/url"), Some(json!({ "url": url })))
            .await;
    }

    /// A script's value (`return ...`).
    pub async fn script(&self, script: &str) -> Value {
        self.call(
            "POST",
            &self.at("/execute/sync"),
            Some(json!({"script": script, "args": []})),
        )
        .await
    }

    /// The value of `expression` once it is truthy (a page still loading after a click),
    /// within ten seconds.
    pub async fn wait_for(&self, expression: &str) -> Value {
        let script = format!("return ({expression}) || null;");
        for _ in 0..100 {
            let value = self.script(&script).await;
            if !value.is_null() {
                return value;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("never true on the phone: {expression}");
    }

    async fn element(&self, css: &str) -> String {
        let found = self
            .call(
                "POST",
                &self.at("/element"),
                Some(json!({"using": "css selector", "value": css})),
            )
            .await;
        found
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no element {css}"))
            .to_owned()
    }

    /// Types into a field, as a user taps it and types.
    pub async fn type_into(&self, css: &str, text: &str) {
        let id = self.element(css).await;
        self.call(
            "POST",
            &self.at(&format!("/element/{id}/value")),
            Some(json!({ "text": text })),
        )
        .await;
    }

    pub async fn click(&self, css: &str) {
        let id = self.element(css).await;
        self.call(
            "POST",
            &self.at(&format!("/element/{id}/click")),
            Some(json!({})),
        )
        .await;
    }

    /// The URLs the page's frame was sent to since the last call (each navigation, the
    /// target of each redirect included, whatever its scheme), from the network log.
    pub async fn navigations(&self) -> Vec<String> {
        let entries = self
            .call(
                "POST",
                &self.at("/se/log"),
                Some(json!({"type": "performance"})),
            )
            .await;
        entries
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|entry| serde_json::from_str::<Value>(entry["message"].as_str()?).ok())
            .filter(|m| m["message"]["method"] == "Network.requestWillBeSent")
            .filter(|m| m["message"]["params"]["type"] == "Document")
            .filter_map(|m| {
                m["message"]["params"]["request"]["url"]
                    .as_str()
                    .map(str::to_owned)
            })
            .collect()
    }

    /// The navigations until one goes to a URL starting with `prefix` (the app's scheme),
    /// within five seconds; all of them, for the test to look into.
    pub async fn sent_to(&self, prefix: &str) -> Vec<String> {
        let mut seen = Vec::new();
        for _ in 0..50 {
            seen.extend(self.navigations().await);
            if seen.iter().any(|u| u.starts_with(prefix)) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        seen
    }

    /// What makes a page hard to use on a phone, in words (empty: nothing): a page wider
    /// than the screen (sideways scrolling), a field or button cut off at its edge, a tap
    /// target under 44 CSS pixels tall (Apple's and Google's guidance), a text field under
    /// 16 px (iOS zooms the page into it), text under 12 px.
    pub async fn phone_problems(&self) -> Vec<String> {
        let report = self
            .script(
                "const out = [];
                 const width = window.innerWidth;
                 if (document.documentElement.scrollWidth > width) {
                   out.push('the page is ' + document.documentElement.scrollWidth + ' px wide on a ' + width + ' px screen');
                 }
                 for (const el of document.querySelectorAll('input:not([type=hidden]), button, a')) {
                   const r = el.getBoundingClientRect();
                   const name = el.tagName + '[' + (el.name || el.textContent.trim()) + ']';
                   if (r.left < 0 || r.right > width) out.push(name + ' runs off the screen (' + r.left + '..' + r.right + ')');
                   if (r.height < 44) out.push(name + ' is ' + r.height + ' px tall');
                   const size = parseFloat(getComputedStyle(el).fontSize);
                   if (el.tagName === 'INPUT' && size < 16) out.push(name + ' has ' + size + ' px text (iOS zooms in)');
                 }
                 for (const el of document.querySelectorAll('p, label, h1, footer, .error')) {
                   const size = parseFloat(getComputedStyle(el).fontSize);
                   if (size < 12) out.push(el.tagName + ' text is ' + size + ' px');
                   const r = el.getBoundingClientRect();
                   if (r.right > width + 0.5) out.push(el.tagName + ' runs off the screen');
                 }
                 if (!document.querySelector('meta[name=viewport]')) out.push('no viewport meta');
                 return out;",
            )
            .await;
        report
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    }

    pub async fn stop(self) {
        let _ = self
            .http
            .delete(format!("{}{}", self.base, self.at("")))
            .send()
            .await;
        let profile_dir = self.profile_dir.clone();
        // The drop ends chromedriver (its session is gone already).
        drop(self);
        let _ = std::fs::remove_dir_all(&profile_dir);
    }
}

impl Drop for Phone {
    fn drop(&mut self) {
        // A failed test still ends its browser (the session's end closes it) and its own
        // chromedriver: a blocking DELETE, as nothing asynchronous runs in a drop.
        use std::io::{Read as _, Write as _};
        if let Some(address) = self.base.strip_prefix("http://")
            && let Ok(mut stream) = std::net::TcpStream::connect(address)
        {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let _ = write!(
                stream,
                "DELETE /session/{} HTTP/1.1\r\nHost: {address}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                self.session
            );
            let _ = stream.read_to_end(&mut Vec::new());
        }
        // The group chromedriver leads (its id is chromedriver's): chromedriver and every
        // browser process it started.
        if let Ok(group) = i32::try_from(self.driver.id()) {
            // SAFETY: kill(2) with a negative id signals that process group; it touches
            // no memory of ours.
            unsafe {
                libc::kill(-group, libc::SIGKILL);
            }
        }
        let _ = self.driver.wait();
    }
}
