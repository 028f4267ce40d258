//! What a test got back from an HTTP call, read the same way by every test binary, and the
//! plain call most of them make (a verb, a URL, what to accept, a bearer, a JSON body).

use std::collections::HashMap;

use reqwest::header::HeaderMap;
use serde_json::Value;

/// What the gateway (or a store) answered.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: String,
}

impl Reply {
    /// The whole of `response`.
    pub async fn read(response: reqwest::Response) -> Reply {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.text().await.unwrap();
        Reply {
            status,
            headers,
            body,
        }
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}), status {}: {}", self.status, self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The `Content-Type` header, empty when there is none.
    pub fn content_type(&self) -> String {
        self.header("content-type").unwrap_or_default().to_owned()
    }

    /// The messages of an error body in JSON.
    pub fn messages(&self) -> Vec<String> {
        self.json()["messages"]["error"]
            .as_array()
            .unwrap_or_else(|| panic!("no error body: {}", self.body))
            .iter()
            .map(|e| e["message"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    /// Asserts the answer is `status` with one error, `message`, in a JSON error tree.
    #[track_caller]
    pub fn assert_error(&self, status: u16, message: &str) {
        assert_eq!(
            (self.status, self.messages()),
            (status, vec![message.to_owned()]),
            "{}",
            self.body
        );
    }

    /// Asserts the answer is `status` whose JSON error tree's first message is `message`.
    #[track_caller]
    pub fn assert_first_error(&self, status: u16, message: &str) {
        assert_eq!(
            (self.status, self.messages()[0].as_str()),
            (status, message),
            "{}",
            self.body
        );
    }

    /// Asserts the body holds `text`.
    #[track_caller]
    pub fn assert_contains(&self, text: &str) {
        assert!(self.body.contains(text), "{}", self.body);
    }

    /// The `form_key` of the HTML form in the body (an authorize page's).
    pub fn form_key(&self) -> String {
        let re = regex::Regex::new(r#"name="form_key" value="([0-9a-f]+)""#).unwrap();
        re.captures(&self.body)
            .unwrap_or_else(|| panic!("no form_key in {}", self.body))[1]
            .to_owned()
    }

    /// The `Location` header, empty when there is none.
    pub fn location(&self) -> String {
        self.header("location").unwrap_or_default().to_owned()
    }

    /// The id a create's `Location` names: its last segment.
    pub fn created_id(&self) -> String {
        let location = self.header("location");
        let location = location.unwrap_or_else(|| panic!("no Location: {}", self.body));
        location.rsplit('/').next().unwrap().to_owned()
    }

    /// The first error message of a JSON error body.
    pub fn message(&self) -> String {
        self.json()["messages"]["error"][0]["message"]
            .as_str()
            .unwrap_or_else(|| panic!("no error message in {}", self.body))
            .to_owned()
    }
}

/// `verb url` asking for `accept`, with `bearer` and a JSON `body` when given.
pub async fn call(
    http: &reqwest::Client,
    verb: &str,
    url: &str,
    accept: &str,
    bearer: Option<&str>,
    body: Option<&Value>,
) -> Reply {
    let method = reqwest::Method::from_bytes(verb.as_bytes()).unwrap();
    let mut request = http.request(method, url).header("Accept", accept);
    if let Some(token) = bearer {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(body);
    }
    Reply::read(request.send().await.expect("the gateway answers")).await
}

/// `request` carrying a browser's `cookies` (kept by hand: reqwest is built without its
/// cookie store).
pub fn with_cookies(
    request: reqwest::RequestBuilder,
    cookies: &HashMap<String, String>,
) -> reqwest::RequestBuilder {
    if cookies.is_empty() {
        return request;
    }
    let cookie: Vec<String> = cookies.iter().map(|(k, v)| format!("{k}={v}")).collect();
    request.header("Cookie", cookie.join("; "))
}

/// Keeps in `cookies` what the `Set-Cookie` fields of `headers` set; an empty value removes
/// the cookie, as a browser does.
pub fn keep_cookies(cookies: &mut HashMap<String, String>, headers: &HeaderMap) {
    for value in headers.get_all("set-cookie") {
        let pair = value.to_str().unwrap().split(';').next().unwrap();
        let (name, value) = pair.split_once('=').unwrap();
        if value.is_empty() {
            cookies.remove(name);
        } else {
            cookies.insert(name.to_owned(), value.to_owned());
        }
    }
}

/// Sends `request` and reads its answer as JSON.
pub async fn json_of(request: reqwest::RequestBuilder) -> Value {
    request.send().await.unwrap().json().await.unwrap()
}

/// Sends `request` and reads its answer as text.
pub async fn text_of(request: reqwest::RequestBuilder) -> String {
    request.send().await.unwrap().text().await.unwrap()
}

/// A client that shows redirects to the test instead of following them.
pub fn client_without_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// `GET url` read as JSON.
pub async fn get_json(url: impl reqwest::IntoUrl) -> Value {
    reqwest::get(url).await.unwrap().json().await.unwrap()
}

/// The `/metrics` page of the gateway at `addr`.
pub async fn metrics_of(http: &reqwest::Client, addr: std::net::SocketAddr) -> String {
    text_of(http.get(format!("http://{addr}/metrics"))).await
}

/// The value of `series` (its name and labels as `/metrics` prints them) in the metrics page
/// `page`, None when the page has no such line.
pub fn metric_in<T: std::str::FromStr>(page: &str, series: &str) -> Option<T> {
    page.lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
}

/// Sends `request` (a connection failure panics); the answer, its body not yet read.
pub async fn sent(request: reqwest::RequestBuilder) -> reqwest::Response {
    request.send().await.unwrap()
}
