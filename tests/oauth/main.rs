//! OAuth 1.0a, black-box through HTTP: the gateway on port 0 in front of the sandbox.
//!
//! - `flow`: the dance and every refusal, signed by a small signer of our own (below), so
//!   each case can bend one thing (a port, a nonce, a timestamp, a secret).
//! - `cli`: `storegate oauth consumer add` and `storegate oauth import`, while a gateway runs.
//! - `clients`: real client libraries apps use (Python requests-oauthlib, PHP pecl oauth)
//!   through the whole dance and signed calls, as Customer and as Admin; a Magento 1.9 app's
//!   natural-order signatures (`natural_order` too).
//! - `mobile_apps`: callbacks of an app's own scheme against its registered callback, the
//!   CLI's checks, and the authorize page in a real browser at a phone's size (`phone`).

mod cli;
mod clients;
#[allow(dead_code)]
#[path = "../common/mod.rs"]
mod common;
mod flow;
mod mobile_apps;
mod natural_order;
mod phone;
mod query_signed;
mod store_lock;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use storegate::auth::oauth::signature::{self, Method};
use storegate_sandbox::{Sandbox, SandboxOptions};

pub use common::files::temp_dir;
pub use common::http::Reply;

pub const ADMIN_KEY: &str = "oauth-test-admin-key";
pub const EMAIL: &str = storegate_sandbox::DEMO_CUSTOMER_EMAIL;
pub const PASSWORD: &str = storegate_sandbox::DEMO_CUSTOMER_PASSWORD;
pub const CALLBACK: &str = "http://127.0.0.1:9/app/callback";

/// A gateway with its own data folder, in front of its own sandbox.
pub struct Stack {
    pub gateway: storegate::Running,
    pub _sandbox: Sandbox,
    pub data_dir: PathBuf,
    pub http: reqwest::Client,
}

impl Stack {
    pub async fn start() -> Stack {
        Stack::with(|_| {}).await
    }

    pub async fn with(adjust: impl FnOnce(&mut storegate::Config)) -> Stack {
        storegate::backend::transport::install_crypto();
        let sandbox = common::gateway::start_sandbox(SandboxOptions::default()).await;
        let data_dir = temp_dir("data");
        let mut config = storegate::Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            data_dir: data_dir.clone(),
            ..storegate::Config::default()
        };
        adjust(&mut config);
        let gateway =
            common::gateway::start_on_sandbox(config, &sandbox, ADMIN_KEY, b"oauth-test-secret")
                .await;
        Stack {
            gateway,
            _sandbox: sandbox,
            data_dir,
            http: common::http::client_without_redirects(),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn origin(&self) -> String {
        format!("http://{}", self.gateway.addr)
    }

    /// Sends `verb url` with `headers` (an `Authorization` among them, usually) and `body`;
    /// what came back. The one place the tests build a request by hand.
    pub async fn send(
        &self,
        verb: &str,
        url: &str,
        headers: &[(&str, &str)],
        body: Option<String>,
    ) -> Reply {
        let method = reqwest::Method::from_bytes(verb.as_bytes()).unwrap();
        let mut request = self.http.request(method, url);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.body(body);
        }
        Reply::read(request.send().await.unwrap()).await
    }

    /// `GET url` signed with `authorization`, asking for JSON.
    pub async fn get_signed(&self, url: &str, authorization: &str) -> Reply {
        let headers = [
            ("Authorization", authorization),
            ("Accept", "application/json"),
        ];
        self.send("GET", url, &headers, None).await
    }

    /// Registers a consumer straight in the store (the CLI has its own tests).
    pub fn consumer(&self, name: &str) -> Consumer {
        self.consumer_in(name, None)
    }

    /// A consumer whose signed calls are answered in `profile` (None: the gateway's).
    pub fn consumer_in(
        &self,
        name: &str,
        profile: Option<storegate::context::profile::Profile>,
    ) -> Consumer {
        let store = storegate::auth::oauth::sqlite::SqliteStore::open(&self.data_dir).unwrap();
        let key = storegate::auth::oauth::store::random_hex32();
        let secret = storegate::auth::oauth::store::random_hex32();
        storegate::auth::oauth::sqlite::SqliteStore::upsert_consumer(
            &store,
            &storegate::auth::oauth::store::NewConsumer {
                name: name.to_owned(),
                key: key.clone(),
                secret: secret.clone(),
                callback_url: None,
                rejected_callback_url: None,
                profile,
            },
        )
        .unwrap();
        Consumer { key, secret }
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}

#[derive(Debug, Clone)]
pub struct Consumer {
    pub key: String,
    pub secret: String,
}

/// What one signed request is made of; each field can be bent by a test.
#[derive(Debug, Clone)]
pub struct Signer {
    pub consumer_key: String,
    pub consumer_secret: String,
    pub token: Option<(String, String)>,
    pub method: &'static str,
    pub timestamp: i64,
    pub nonce: String,
    pub extra: Vec<(String, String)>,
    /// The URL the signature covers (None: the one requested).
    pub signed_url: Option<String>,
    /// How the parameters are sorted: RFC 5849's byte order, or Magento 1.9's natural one.
    pub order: signature::Order,
}

pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

impl Signer {
    pub fn new(consumer: &Consumer) -> Signer {
        Signer {
            consumer_key: consumer.key.clone(),
            consumer_secret: consumer.secret.clone(),
            token: None,
            method: "HMAC-SHA1",
            timestamp: now(),
            nonce: storegate::auth::oauth::store::random_hex32(),
            extra: Vec::new(),
            signed_url: None,
            order: signature::Order::Bytes,
        }
    }

    pub fn token(mut self, token: &str, secret: &str) -> Signer {
        self.token = Some((token.to_owned(), secret.to_owned()));
        self
    }

    pub fn param(mut self, name: &str, value: &str) -> Signer {
        self.extra.push((name.to_owned(), value.to_owned()));
        self
    }

    /// The protocol parameters, signed for `verb url` (query parameters of the URL and
    /// `form` included).
    pub fn params(&self, verb: &str, url: &str, form: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut protocol = vec![
            ("oauth_consumer_key".to_owned(), self.consumer_key.clone()),
            ("oauth_signature_method".to_owned(), self.method.to_owned()),
            ("oauth_timestamp".to_owned(), self.timestamp.to_string()),
            ("oauth_nonce".to_owned(), self.nonce.clone()),
            ("oauth_version".to_owned(), "1.0".to_owned()),
        ];
        if let Some((token, _)) = &self.token {
            protocol.push(("oauth_token".to_owned(), token.clone()));
        }
        protocol.extend(self.extra.iter().cloned());
        let signed_url = self.signed_url.as_deref().unwrap_or(url);
        let parsed = reqwest::Url::parse(signed_url).unwrap();
        let mut all = protocol.clone();
        all.extend(
            parsed
                .query_pairs()
                .map(|(k, v)| (k.into_owned(), v.into_owned())),
        );
        all.extend(form.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        let base_uri = format!(
            "{}://{}{}",
            parsed.scheme(),
            match parsed.port() {
                Some(port) => format!("{}:{port}", parsed.host_str().unwrap()),
                None => parsed.host_str().unwrap().to_owned(),
            },
            parsed.path()
        );
        let base =
            signature::base_string_of(verb, &base_uri, &signature::normalized(&all, self.order));
        let method = match self.method {
            "HMAC-SHA1" => Method::HmacSha1,
            "HMAC-SHA256" => Method::HmacSha256,
            "PLAINTEXT" => Method::Plaintext,
            _ => Method::HmacSha1,
        };
        let token_secret = self.token.as_ref().map_or("", |(_, s)| s.as_str());
        protocol.push((
            "oauth_signature".to_owned(),
            signature::sign(method, &base, &self.consumer_secret, token_secret),
        ));
        protocol
    }

    /// `OAuth k="v", ...` for `verb url`.
    pub fn header(&self, verb: &str, url: &str, form: &[(&str, &str)]) -> String {
        let pairs = self.params(verb, url, form);
        let items: Vec<String> = pairs
            .iter()
            .map(|(k, v)| format!("{}=\"{}\"", signature::encode(k), signature::encode(v)))
            .collect();
        format!("OAuth realm=\"storegate\", {}", items.join(", "))
    }
}

/// Pairs as a form-urlencoded text (a body, or a query string).
pub fn form_text<K: AsRef<str>, V: AsRef<str>>(pairs: &[(K, V)]) -> String {
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs.iter().map(|(k, v)| (k.as_ref(), v.as_ref())))
        .finish()
}

/// A form-urlencoded answer as a map.
pub fn form_map(body: &str) -> HashMap<String, String> {
    form_urlencoded::parse(body.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// A browser: keeps cookies by hand (reqwest is built without its cookie store).
#[derive(Default)]
pub struct Browser {
    pub cookies: HashMap<String, String>,
}

/// What the browser got: a page, or a redirect.
pub type Page = Reply;

impl Browser {
    pub async fn send(
        &mut self,
        stack: &Stack,
        verb: &str,
        path: &str,
        form: &[(&str, &str)],
    ) -> Page {
        let method = reqwest::Method::from_bytes(verb.as_bytes()).unwrap();
        let mut request = common::http::with_cookies(
            stack
                .http
                .request(method, format!("{}{path}", stack.origin())),
            &self.cookies,
        );
        if verb == "POST" {
            let body = form_text(form);
            request = request
                .header("Content-Type", "application/x-www-form-urlencoded")
                .body(body);
        }
        let page = Page::read(request.send().await.unwrap()).await;
        common::http::keep_cookies(&mut self.cookies, &page.headers);
        page
    }
}

/// The whole dance with our signer: the access token and its secret.
/// Opens the authorize page at `path` for the request `token` in `browser` and signs in with
/// `login`: the form key of the confirm page that follows.
pub async fn sign_in(
    browser: &mut Browser,
    stack: &Stack,
    path: &str,
    token: &str,
    login: (&str, &str),
) -> String {
    let page = browser
        .send(stack, "GET", &format!("{path}?oauth_token={token}"), &[])
        .await;
    assert_eq!(page.status, 200, "{}", page.body);
    let key = page.form_key();
    let page = browser
        .send(
            stack,
            "POST",
            path,
            &[
                ("oauth_token", token),
                ("form_key", &key),
                ("login[username]", login.0),
                ("login[password]", login.1),
            ],
        )
        .await;
    assert_eq!(page.status, 200, "{}", page.body);
    page.form_key()
}

/// `POST url` signed with `header`: a 200 whose form body is returned.
async fn signed_post(stack: &Stack, url: &str, header: &str) -> HashMap<String, String> {
    let reply = stack
        .send("POST", url, &[("Authorization", header)], None)
        .await;
    assert_eq!(reply.status, 200);
    form_map(&reply.body)
}

pub async fn dance(
    stack: &Stack,
    consumer: &Consumer,
    admin: bool,
    login: (&str, &str),
) -> (String, String) {
    let initiate = format!("{}/oauth/initiate", stack.origin());
    let header = Signer::new(consumer)
        .param("oauth_callback", CALLBACK)
        .header("POST", &initiate, &[]);
    let request = signed_post(stack, &initiate, &header).await;
    let token = request["oauth_token"].clone();
    let path = if admin {
        "/admin/oauth_authorize"
    } else {
        "/oauth/authorize"
    };
    let mut browser = Browser::default();
    let key = sign_in(&mut browser, stack, path, &token, login).await;
    let page = browser
        .send(
            stack,
            "POST",
            &format!("{path}/confirm"),
            &[("oauth_token", &token), ("form_key", &key)],
        )
        .await;
    assert_eq!(page.status, 302, "{}", page.body);
    let location = reqwest::Url::parse(&page.location()).unwrap();
    let verifier = location
        .query_pairs()
        .find(|(k, _)| k == "oauth_verifier")
        .unwrap()
        .1
        .into_owned();
    let exchange = format!("{}/oauth/token", stack.origin());
    let header = Signer::new(consumer)
        .token(&token, &request["oauth_token_secret"])
        .param("oauth_verifier", &verifier)
        .header("POST", &exchange, &[]);
    let access = signed_post(stack, &exchange, &header).await;
    (
        access["oauth_token"].clone(),
        access["oauth_token_secret"].clone(),
    )
}
