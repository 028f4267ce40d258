//! The OpenMage REST client: every call to `{url}/api/rest/...`, signed, guarded, counted.
//!
//! Built in the client shell every back end shares (`crate::backend::shell`): one
//! [`Transport`] (the pooled client, or the recorder or cassette player put in its place),
//! the request's deadline, reads retried once on a connection error or a 502/503/504, writes
//! never, a circuit breaker, a bound on calls in flight, the request id and trace context
//! passed on. What is the store's own is here: OAuth 1.0a on every call, creates answered
//! with a `Location` (and a 302 behind nginx and php-fpm), and its error body. The decisions and their reasons are in
//! docs/decisions/openmage-client.md.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode};
use percent_encoding::percent_decode_str;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::endpoint::{self, PREFIX};
use super::signing::{Keys, authorization, nonce, signing_base, timestamp};
use crate::backend::port::{BackendError, CircuitProbe, ON_BEHALF_OF, StoreMessage, StoreSession};
use crate::backend::shell::{self, Shell};
use crate::backend::transport::{HttpTransport, Outgoing};
use crate::config::{Secret, Upstream};

/// The OAuth 1.0a credentials the gateway signs its calls with: a consumer registered in
/// the store, and an admin user's access token for it. Held as [`Secret`]s: `Debug` shows
/// none of them.
#[derive(Debug, Clone)]
pub struct Credentials {
    pub consumer_key: Secret,
    pub consumer_secret: Secret,
    pub token: Secret,
    pub token_secret: Secret,
}

impl Credentials {
    /// The configured ones (`STOREGATE_UPSTREAM_TOKEN` and the three `STOREGATE_UPSTREAM_*`
    /// OAuth keys). None without them: a Magento 2 upstream, or OpenMage cassettes replayed
    /// with no store behind (then sign with [`Credentials::none`]: nothing checks it).
    pub fn from_backend(upstream: &Upstream) -> Option<Credentials> {
        let oauth = upstream.oauth.as_ref()?;
        Some(Credentials {
            consumer_key: oauth.consumer_key.clone(),
            consumer_secret: oauth.consumer_secret.clone(),
            token: upstream.token.clone(),
            token_secret: oauth.token_secret.clone(),
        })
    }

    /// Empty credentials, for replaying cassettes (their `Authorization` is scrubbed and
    /// never matched).
    pub fn none() -> Credentials {
        Credentials {
            consumer_key: Secret::new(""),
            consumer_secret: Secret::new(""),
            token: Secret::new(""),
            token_secret: Secret::new(""),
        }
    }
}

/// What the store answered to a write.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    /// 200 for most; 302 for a create behind nginx + php-fpm; 207 for a collection's
    /// update, delete or multi-create.
    pub status: u16,
    /// The created record's address as the store sent it (`/api/rest/products/6`).
    pub location: Option<String>,
    /// Empty for one record's create, update or delete; a 207's
    /// `{"messages": {"success": [...], "error": [...]}}`.
    pub body: Bytes,
}

impl Written {
    /// The created record's id: the last segment of the `Location`'s path, decoded.
    pub fn created_id(&self) -> Option<String> {
        self.location.as_deref().and_then(id_of_location)
    }
}

/// Who a call is made as.
#[derive(Clone, Copy)]
enum Caller<'a> {
    /// The configured admin token.
    Admin,
    /// Unsigned: the store answers as its Guest role.
    Guest,
    /// Another access token of the same consumer (a customer's).
    Token { token: &'a str, secret: &'a str },
    /// A customer's kept session (their own consumer's token, or one the gateway's sign-in
    /// got): the store answers as that customer.
    Session(&'a StoreSession),
}

/// One answer the client accepts: a success, or a write's redirect with a `Location`.
struct Reply {
    status: StatusCode,
    location: Option<String>,
    body: Bytes,
}

#[derive(Debug, Clone)]
pub struct OpenMage {
    pub(super) shell: Shell,
    /// `scheme://host[/base path]`: what the store rebuilds from the request to check a
    /// signature, without the port ([`signing_base`]).
    pub(super) signing_base: String,
    pub(super) credentials: Credentials,
    default_store: String,
}

shell::client_builders!(OpenMage);

impl OpenMage {
    /// `base` is the store's URL without trailing slash (calls go to `{base}/api/rest/...`);
    /// `default_store` the store (id or code) for reads that name none.
    pub fn new(
        base: &str,
        credentials: Credentials,
        timeout: Duration,
        default_store: &str,
    ) -> Result<OpenMage, String> {
        let transport = Arc::new(HttpTransport::without_redirects(base, timeout)?);
        Ok(OpenMage {
            shell: Shell::new(transport, timeout),
            signing_base: signing_base(base),
            credentials,
            default_store: default_store.to_owned(),
        })
    }

    /// A reader of the breaker's state.
    pub fn circuit(&self) -> CircuitProbe {
        self.shell.circuit()
    }

    pub fn default_store(&self) -> &str {
        &self.default_store
    }

    /// The URI a call to `path` (under `/api/rest`, segments encoded) is signed for.
    pub fn signature_base_uri(&self, path: &str) -> String {
        format!("{}{PREFIX}{path}", self.signing_base)
    }

    /// A read as the admin token. `path` is under `/api/rest` (`/products/1`), its
    /// segments encoded with [`super::segment`]; `query` decoded pairs.
    pub async fn get(&self, path: &str, query: &[(String, String)]) -> Result<Bytes, BackendError> {
        self.read(path, query, Caller::Admin).await
    }

    pub async fn get_json<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(String, String)],
    ) -> Result<T, BackendError> {
        shell::parse(&self.get(path, query).await?)
    }

    /// A read with no credentials: the store answers as its Guest role (its guest
    /// attribute lists, its guest permissions).
    pub async fn get_as_guest(
        &self,
        path: &str,
        query: &[(String, String)],
    ) -> Result<Bytes, BackendError> {
        self.read(path, query, Caller::Guest).await
    }

    /// A read signed with another access token of the gateway's consumer (a customer's):
    /// the store answers as that user.
    pub async fn get_signed_as(
        &self,
        path: &str,
        query: &[(String, String)],
        token: &str,
        token_secret: &str,
    ) -> Result<Bytes, BackendError> {
        self.read(
            path,
            query,
            Caller::Token {
                token,
                secret: token_secret,
            },
        )
        .await
    }

    /// A read signed with a customer's kept session: the store answers as that customer
    /// (their group's prices, their tax).
    pub async fn get_for(
        &self,
        path: &str,
        query: &[(String, String)],
        session: &StoreSession,
    ) -> Result<Bytes, BackendError> {
        self.read(path, query, Caller::Session(session)).await
    }

    /// A create (or a collection's multi-create, answered 207). Never retried.
    pub async fn post(&self, path: &str, body: &Value) -> Result<Written, BackendError> {
        self.write(Method::POST, path, Some(body)).await
    }

    /// A create of one record: its id, from the answer's `Location` (200 or 302).
    pub async fn create(&self, path: &str, body: &Value) -> Result<String, BackendError> {
        let written = self.post(path, body).await?;
        written.created_id().ok_or_else(|| {
            BackendError::Protocol(format!(
                "the store answered a create with {} and no Location",
                written.status
            ))
        })
    }

    /// An update (a collection's answers 207 with its items' outcomes). Never retried.
    pub async fn put(&self, path: &str, body: &Value) -> Result<Written, BackendError> {
        self.write(Method::PUT, path, Some(body)).await
    }

    /// A delete: of one record without a body, of a collection's items with one. Never
    /// retried.
    pub async fn delete(&self, path: &str, body: Option<&Value>) -> Result<Written, BackendError> {
        self.write(Method::DELETE, path, body).await
    }

    async fn read(
        &self,
        path: &str,
        query: &[(String, String)],
        caller: Caller<'_>,
    ) -> Result<Bytes, BackendError> {
        // Signed again on a retry: a fresh nonce and timestamp (the store refuses a nonce
        // it has seen).
        let reply = self
            .shell
            .read(|| self.attempt(&Method::GET, path, query, None, caller))
            .await?;
        Ok(reply.body)
    }

    async fn write(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Written, BackendError> {
        let reply = self
            .shell
            .write(self.attempt(&method, path, &[], body, Caller::Admin))
            .await?;
        Ok(Written {
            status: reply.status.as_u16(),
            location: reply.location,
            body: reply.body,
        })
    }

    /// One try through the shell, named by its path's template.
    async fn attempt(
        &self,
        method: &Method,
        path: &str,
        query: &[(String, String)],
        body: Option<&Value>,
        caller: Caller<'_>,
    ) -> Result<Reply, BackendError> {
        let full_path = format!("{PREFIX}{path}");
        // The path's template names the call in metrics and logs: a path can hold a
        // customer's id.
        let endpoint = endpoint::template(&full_path);
        self.shell
            .attempt(method, &endpoint, |timeout| {
                self.call_once(method.clone(), full_path, query, body, caller, timeout)
            })
            .await
    }

    async fn call_once(
        &self,
        method: Method,
        path: String,
        query: &[(String, String)],
        body: Option<&Value>,
        caller: Caller<'_>,
        timeout: Duration,
    ) -> Result<Reply, BackendError> {
        let mut headers = shell::common_headers();
        let keys = match caller {
            Caller::Admin => Some(Keys {
                consumer_key: self.credentials.consumer_key.expose(),
                consumer_secret: self.credentials.consumer_secret.expose(),
                token: self.credentials.token.expose(),
                token_secret: self.credentials.token_secret.expose(),
            }),
            Caller::Token { token, secret } => Some(Keys {
                consumer_key: self.credentials.consumer_key.expose(),
                consumer_secret: self.credentials.consumer_secret.expose(),
                token,
                token_secret: secret,
            }),
            Caller::Session(session) => {
                let (consumer_key, consumer_secret) = match &session.consumer {
                    Some((key, secret)) => (key.as_str(), secret.as_str()),
                    None => (
                        self.credentials.consumer_key.expose(),
                        self.credentials.consumer_secret.expose(),
                    ),
                };
                headers.insert(ON_BEHALF_OF, HeaderValue::from(session.customer_id));
                Some(Keys {
                    consumer_key,
                    consumer_secret,
                    token: &session.token,
                    token_secret: &session.secret,
                })
            }
            Caller::Guest => None,
        };
        if let Some(keys) = keys {
            let uri = format!("{}{path}", self.signing_base);
            let value = authorization(&method, &uri, query, &keys, &nonce(), timestamp());
            let mut value = HeaderValue::from_str(&value).map_err(|_| {
                // Every part is percent-encoded: only a broken build gets here.
                BackendError::Protocol("cannot write the OAuth header".to_owned())
            })?;
            value.set_sensitive(true);
            headers.insert(http::header::AUTHORIZATION, value);
        }
        let write = method != Method::GET && method != Method::HEAD;
        let body = match body {
            Some(body) => Some(shell::json_body(&mut headers, body)?),
            None => None,
        };
        let answer = self
            .shell
            .transport()
            .send(Outgoing {
                method,
                path,
                query: query.to_vec(),
                headers,
                body,
                timeout,
                exact_path: false,
            })
            .await?;
        let status = answer.status;
        let location = answer
            .headers
            .get(http::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if status.is_success() || (write && status.is_redirection() && location.is_some()) {
            return Ok(Reply {
                status,
                location,
                body: answer.body,
            });
        }
        if status.is_redirection() {
            // Never followed (a write's would become a GET signed for another request). A
            // read that is redirected went to something other than the store's API.
            return Err(BackendError::Protocol(format!(
                "the store answered a {} with a redirect ({}); STOREGATE_UPSTREAM_URL must be \
                 the URL the store serves its API at",
                if write { "write" } else { "read" },
                status.as_u16()
            )));
        }
        Err(BackendError::Status {
            status: status.as_u16(),
            error: store_message(&answer.body),
        })
    }
}

/// The id in a `Location` (`/api/rest/products/6`, or absolute): its path's last segment.
fn id_of_location(location: &str) -> Option<String> {
    let path = match location.find("://") {
        Some(at) => {
            let rest = &location[at + 3..];
            rest.find('/').map_or("", |slash| &rest[slash..])
        }
        None => location,
    };
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let last = path.split('/').rfind(|s| !s.is_empty())?;
    Some(percent_decode_str(last).decode_utf8_lossy().into_owned())
}

/// OpenMage's error body, `{"messages":{"error":[{"code":404,"message":"Resource not
/// found."}]}}`, as a [`StoreMessage`]: the first error's message, and every error in
/// `errors` when there are several (a validation failure lists each field's, then
/// `Resource data pre-validation error.`). Anything else (an HTML page from a proxy, PHP's
/// fatal error) is an empty message: the status alone tells the caller.
pub fn store_message(body: &[u8]) -> StoreMessage {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return StoreMessage::default();
    };
    let list: Vec<StoreMessage> = value
        .pointer("/messages/error")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|item| item.get("message").and_then(Value::as_str))
                .map(|message| StoreMessage {
                    message: message.to_owned(),
                    ..StoreMessage::default()
                })
                .collect()
        })
        .unwrap_or_default();
    match list.as_slice() {
        [] => StoreMessage::default(),
        [one] => one.clone(),
        [first, ..] => StoreMessage {
            message: first.message.clone(),
            parameters: Value::Null,
            errors: list.clone(),
        },
    }
}

#[cfg(test)]
mod tests;
