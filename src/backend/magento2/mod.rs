//! Magento 2 as a back end: its REST API (`{url}/rest/{scope}/V1/...`) with an integration
//! token.
//!
//! The only code that knows Magento 2's paths, store scopes, shapes and error bodies; it
//! knows nothing of the client-facing protocol (no XML, no spec messages). [`Magento`] is
//! the client: the integration token attached here and nowhere else (marked sensitive,
//! never logged), every call through the shared client shell (`backend::shell`: deadline,
//! retries, breaker, bound, metrics, the transport where recording and replay sit). The
//! port's areas are implemented in this folder's other files, one per area (`catalog`,
//! `media`, `stock`, `people`, `orders`, `links`, `setup`), the paths beside the calls.

mod addresses;
mod catalog;
pub mod endpoint;
mod failures;
mod links;
mod media;
mod orders;
mod people;
pub mod search;
mod setup;
mod stock;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method};
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use crate::backend::port::{BackendError, Scope, SearchCriteria, StoreMessage};
pub use endpoint::WIRE;

use crate::backend::kind::{Settings, Wiring};
use crate::backend::port::Backend;
use crate::backend::recording::Wires;
use crate::backend::shell::{self, Shell, paths};
use crate::backend::transport::{HttpTransport, Outgoing};

/// Encodes one path segment (a SKU may hold `/`, spaces, anything). `.` and `..` would be
/// dot segments, which URL parsers and web servers remove (the path would name another
/// resource): they are sent as `%2E` and `%2E%2E`, which Magento's router decodes back,
/// and through a transport that keeps them ([`needs_exact_path`]).
pub fn segment(value: &str) -> String {
    match value {
        "." => "%2E".to_owned(),
        ".." => "%2E%2E".to_owned(),
        _ => paths::segment(value),
    }
}

/// Does this path (its segments encoded by [`segment`]) hold a dot segment, which only a
/// transport that sends the path exactly as written gets to Magento intact?
pub fn needs_exact_path(path: &str) -> bool {
    path.split('/').any(|segment| {
        segment.eq_ignore_ascii_case("%2E") || segment.eq_ignore_ascii_case("%2E%2E")
    })
}

/// Magento 2 behind the port.
#[derive(Debug, Clone)]
pub struct Magento {
    shell: Shell,
    authorization: HeaderValue,
    default_store: String,
}

shell::client_builders!(Magento);

impl Magento {
    /// `base` is the store's URL without trailing slash; `token` an integration token.
    pub fn new(
        base: &str,
        token: &str,
        timeout: Duration,
        default_store: &str,
    ) -> Result<Magento, String> {
        let transport = Arc::new(HttpTransport::new(base, timeout)?);
        let mut authorization =
            HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
                "STOREGATE_UPSTREAM_TOKEN holds characters not allowed in a header".to_owned()
            })?;
        authorization.set_sensitive(true);
        Ok(Magento {
            shell: Shell::new(transport, timeout),
            authorization,
            default_store: default_store.to_owned(),
        })
    }

    fn scoped_path(&self, scope: Scope<'_>, path: &str) -> String {
        // Store codes come from Magento or the checked configuration; encoded all the same,
        // like every other segment.
        let scope = match scope {
            Scope::Default => segment(&self.default_store),
            Scope::Store(code) => segment(code),
            Scope::All => "all".to_owned(),
        };
        format!("/rest/{scope}{path}")
    }

    /// One call. `path` starts with `/V1/` and has its segments already encoded.
    pub async fn call(
        &self,
        method: Method,
        scope: Scope<'_>,
        path: &str,
        query: &[(String, String)],
        body: Option<&Value>,
    ) -> Result<Bytes, BackendError> {
        let attempt = || self.attempt(&method, scope, path, query, body, &self.authorization);
        if method == Method::GET || method == Method::HEAD {
            return self.shell.read(attempt).await;
        }
        self.shell.write(attempt()).await
    }

    /// A write whose answer nobody reads (a delete, a link, a stock change): [`Magento::call`]
    /// without a query, its body dropped.
    pub async fn command(
        &self,
        method: Method,
        scope: Scope<'_>,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(), BackendError> {
        self.call(method, scope, path, &[], body).await.map(|_| ())
    }

    /// `DELETE` of `path`, its answer dropped.
    pub async fn delete(&self, scope: Scope<'_>, path: &str) -> Result<(), BackendError> {
        self.command(Method::DELETE, scope, path, None).await
    }

    /// A call made with someone else's credentials (a customer's Magento token), never
    /// retried.
    pub async fn call_as(
        &self,
        method: Method,
        scope: Scope<'_>,
        path: &str,
        authorization: HeaderValue,
    ) -> Result<Bytes, BackendError> {
        self.shell
            .write(self.attempt(&method, scope, path, &[], None, &authorization))
            .await
    }

    /// One try through the shell, named by its path's template.
    async fn attempt(
        &self,
        method: &Method,
        scope: Scope<'_>,
        path: &str,
        query: &[(String, String)],
        body: Option<&Value>,
        authorization: &HeaderValue,
    ) -> Result<Bytes, BackendError> {
        let endpoint = endpoint::template(path);
        self.shell
            .attempt(method, &endpoint, |timeout| async move {
                let mut headers = shell::common_headers();
                headers.insert(http::header::AUTHORIZATION, authorization.clone());
                let body = match body {
                    Some(body) => Some(shell::json_body(&mut headers, body)?),
                    None => None,
                };
                let path = self.scoped_path(scope, path);
                let answer = self
                    .shell
                    .transport()
                    .send(Outgoing {
                        method: method.clone(),
                        exact_path: needs_exact_path(&path),
                        path,
                        query: query.to_vec(),
                        headers,
                        body,
                        timeout,
                    })
                    .await?;
                if answer.status.is_success() {
                    Ok(answer.body)
                } else {
                    Err(BackendError::Status {
                        status: answer.status.as_u16(),
                        error: StoreMessage::parse(&answer.body),
                    })
                }
            })
            .await
    }

    pub async fn get(
        &self,
        scope: Scope<'_>,
        path: &str,
        query: &[(String, String)],
    ) -> Result<Bytes, BackendError> {
        self.call(Method::GET, scope, path, query, None).await
    }

    pub async fn get_json<T: DeserializeOwned>(
        &self,
        scope: Scope<'_>,
        path: &str,
        query: &[(String, String)],
    ) -> Result<T, BackendError> {
        parse(&self.get(scope, path, query).await?)
    }

    /// A search endpoint's page (`searchCriteria[...]` in the query), in the default store.
    pub async fn search<T: DeserializeOwned>(
        &self,
        path: &str,
        criteria: &SearchCriteria,
    ) -> Result<T, BackendError> {
        let query = search::to_query(criteria);
        self.get_json(Scope::Default, path, &query).await
    }

    pub async fn send_json<T: DeserializeOwned>(
        &self,
        method: Method,
        scope: Scope<'_>,
        path: &str,
        body: Option<&Value>,
    ) -> Result<T, BackendError> {
        parse(&self.call(method, scope, path, &[], body).await?)
    }
}

pub use shell::parse;

/// Magento 2's wire, for its recordings.
const OWN_WIRE: Wires = Wires(&[&WIRE]);

/// The client for `settings`, its calls through the recorder or the cassettes when the
/// settings ask for them.
pub fn build(settings: &Settings, wiring: &Wiring) -> Result<Arc<dyn Backend>, String> {
    let magento = Magento::new(
        &settings.url,
        settings.token.expose(),
        settings.timeout,
        &settings.default_store,
    )?
    .with_resilience(&settings.resilience, wiring.metrics.clone());
    let transport = settings.recorded(magento.transport(), OWN_WIRE)?;
    Ok(Arc::new(magento.with_transport(transport)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_codes_are_one_segment() {
        let magento =
            Magento::new("http://m2.test", "t", Duration::from_secs(1), "default").unwrap();
        assert_eq!(
            magento.scoped_path(Scope::Store("fr/../x"), "/V1/a"),
            "/rest/fr%2F..%2Fx/V1/a"
        );
        assert_eq!(
            magento.scoped_path(Scope::Default, "/V1/a"),
            "/rest/default/V1/a"
        );
    }

    #[test]
    fn dot_segments_need_the_exact_path() {
        for (path, exact) in [
            ("/V1/products/%2E%2E", true),
            ("/V1/products/%2E/media", true),
            ("/V1/products/%2e%2e/stockItems/1", true),
            ("/V1/products/%2E%2E%2E", false),
            ("/V1/products/a.b", false),
        ] {
            assert_eq!(needs_exact_path(path), exact, "{path}");
        }
    }

    #[test]
    fn segments_are_encoded() {
        assert_eq!(segment("24-MB01"), "24-MB01");
        assert_eq!(segment("a/b c?d"), "a%2Fb%20c%3Fd");
        for (hostile, sent) in [
            (".", "%2E"),
            ("..", "%2E%2E"),
            ("...", "..."),
            ("/", "%2F"),
            ("%2F", "%252F"),
            ("?", "%3F"),
            ("#", "%23"),
            (" a b ", "%20a%20b%20"),
            ("é/ü", "%C3%A9%2F%C3%BC"),
            ("../x", "..%2Fx"),
        ] {
            assert_eq!(segment(hostile), sent, "{hostile:?}");
            let decoded = percent_encoding::percent_decode_str(sent)
                .decode_utf8()
                .unwrap();
            assert_eq!(decoded, hostile, "Magento decodes it back");
        }
    }
}
