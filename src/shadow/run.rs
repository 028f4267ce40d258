//! One comparison: the app's answer (or a fresh read of its back end), the other back end's
//! answer, a second read of the serving back end for noise; the engine's verdict; and for
//! what differed, the recheck that tells lag from a real difference.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use http::header::{ACCEPT, CONTENT_ENCODING, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Method, Uri};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tokio::sync::OwnedSemaphorePermit;

use super::tally::{Outcome, PathKind, field};
use super::{Role, Shadow, Side};
use crate::auth::{Authenticated, Principal};
use crate::compare::{Answer, Comparison, Difference, Noise, Shown, compare};
use crate::config::shadow::RouteClass;
use crate::http::Format;
use crate::http::format::Negotiated;

/// The largest answer read for a comparison; a larger one is an `error`.
const MAX_BODY: usize = 16 * 1024 * 1024;
/// The largest app answer taken as it is; a larger one is read again fresh.
const MAX_CAPTURED: u64 = 1024 * 1024;
/// An example value longer than this (as JSON text) is shown cut, with its length.
const MAX_EXAMPLE: usize = 512;

/// Headers a comparison's read does not carry: the caller's credential (the caller rides
/// in the request's extensions), what asks for another format or encoding, and what makes
/// an answer conditional.
const DROPPED: [http::HeaderName; 8] = [
    http::header::AUTHORIZATION,
    http::header::ACCEPT,
    http::header::ACCEPT_ENCODING,
    http::header::COOKIE,
    http::header::IF_NONE_MATCH,
    http::header::IF_MODIFIED_SINCE,
    http::header::RANGE,
    http::header::CONTENT_LENGTH,
];

/// A sampled read, as the sides are asked it again.
pub(super) struct Read {
    /// The path and query, OAuth parameters left out (the caller is carried over).
    target: String,
    headers: HeaderMap,
    class: RouteClass,
}

impl Read {
    pub(super) fn of(uri: &Uri, headers: &HeaderMap, class: RouteClass) -> Read {
        let mut kept = HeaderMap::with_capacity(headers.len());
        for (name, value) in headers {
            if !DROPPED.contains(name) {
                kept.append(name.clone(), value.clone());
            }
        }
        kept.insert(ACCEPT, HeaderValue::from_static("application/json"));
        let target = match uri.query() {
            Some(query) if query.split('&').any(|p| p.starts_with("oauth_")) => {
                let kept: Vec<&str> = query
                    .split('&')
                    .filter(|p| !p.starts_with("oauth_") && !p.is_empty())
                    .collect();
                if kept.is_empty() {
                    uri.path().to_owned()
                } else {
                    format!("{}?{}", uri.path(), kept.join("&"))
                }
            }
            Some(query) => format!("{}?{query}", uri.path()),
            None => uri.path().to_owned(),
        };
        Read {
            target,
            headers: kept,
            class,
        }
    }

    /// The request a side answers: a GET in JSON, for `principal`.
    fn request(&self, principal: Principal) -> Request {
        let mut request = Request::new(Body::empty());
        *request.method_mut() = Method::GET;
        if let Ok(uri) = self.target.parse() {
            *request.uri_mut() = uri;
        }
        *request.headers_mut() = self.headers.clone();
        let extensions = request.extensions_mut();
        extensions.insert(Negotiated(Ok(Format::Json)));
        extensions.insert(Authenticated(Ok(principal)));
        request
    }
}

/// An answer as the engine reads it.
#[derive(Debug, Clone)]
pub(super) struct Got {
    status: u16,
    body: Value,
}

impl Got {
    fn answer(&self) -> Answer<'_> {
        Answer::new(self.status, &self.body)
    }
}

/// Why a side's answer could not be compared.
#[derive(Debug)]
enum Failed {
    Error(String),
    Timeout,
}

/// The app's answer, read if it can be taken as it is (JSON, not compressed, of a known
/// and modest size: what the gateway and its cache give for a JSON read), and given back
/// to go to the app byte for byte; otherwise untouched, and None.
pub(super) async fn capture(response: Response) -> (Response, Option<Got>) {
    let readable = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json"))
        && !response.headers().contains_key(CONTENT_ENCODING)
        && response.status() != http::StatusCode::NOT_MODIFIED
        && axum::body::HttpBody::size_hint(response.body())
            .exact()
            .is_some_and(|n| n <= MAX_CAPTURED);
    if !readable {
        return (response, None);
    }
    let (parts, body) = response.into_parts();
    let status = parts.status.as_u16();
    match body.collect().await {
        Ok(collected) => {
            let bytes = collected.to_bytes();
            let got = parse(status, &bytes).ok();
            (Response::from_parts(parts, Body::from(bytes)), got)
        }
        // A body of a known size that fails to be read: the app would have seen the same
        // failure; it gets an empty one.
        Err(_) => (Response::from_parts(parts, Body::empty()), None),
    }
}

fn parse(status: u16, bytes: &[u8]) -> Result<Got, Failed> {
    let body = if bytes.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        serde_json::from_slice(bytes)
            .map_err(|_| Failed::Error("an answer that is not JSON".into()))?
    };
    Ok(Got { status, body })
}

/// `read` answered by `side`, for `principal`.
async fn fetch(side: &Arc<dyn Side>, read: &Read, principal: Principal) -> Result<Got, Failed> {
    let response = side.answer(read.request(principal)).await;
    let status = response.status();
    if status == http::StatusCode::GATEWAY_TIMEOUT {
        return Err(Failed::Timeout);
    }
    if status.is_server_error() {
        return Err(Failed::Error(format!("status {}", status.as_u16())));
    }
    let body = axum::body::to_bytes(response.into_body(), MAX_BODY)
        .await
        .map_err(|_| Failed::Error("an answer too large or cut".into()))?;
    parse(status.as_u16(), &body)
}

/// A comparison under way.
pub(super) struct Job {
    pub(super) shadow: Shadow,
    pub(super) route: String,
    pub(super) principal: Principal,
    pub(super) read: Read,
    /// The app's own answer, when it could be read.
    pub(super) seen: Option<Got>,
}

impl Job {
    fn user_type(&self) -> &'static str {
        self.principal.user_type().as_str()
    }

    pub(super) async fn run(self, permit: OwnedSemaphorePermit) {
        let inner = &self.shadow.inner;
        let Some(sides) = inner.sides.get() else {
            return;
        };
        let role = self.shadow.role;
        let (serving, candidate) = (&sides.serving_fresh, &sides.candidate_fresh);
        let principal = self.principal;
        let first = async {
            let good = async {
                match (&self.seen, role) {
                    (Some(seen), Role::Serving) => Ok(seen.clone()),
                    _ => fetch(serving, &self.read, principal).await,
                }
            };
            let other = async {
                match (&self.seen, role) {
                    (Some(seen), Role::Candidate) => Ok(seen.clone()),
                    _ => fetch(candidate, &self.read, principal).await,
                }
            };
            let again = fetch(serving, &self.read, principal);
            tokio::join!(good, other, again)
        };
        let (good, other, again) = match tokio::time::timeout(inner.deadline, first).await {
            Ok((Ok(good), Ok(other), Ok(again))) => (good, other, again),
            Ok((good, other, again)) => {
                let failure = [good.err(), other.err(), again.err()]
                    .into_iter()
                    .flatten()
                    .next();
                self.failed(failure.unwrap_or(Failed::Timeout));
                return;
            }
            Err(_) => {
                self.failed(Failed::Timeout);
                return;
            }
        };
        let options = self.shadow.options(self.read.class);
        let noise = Noise::between(good.answer(), again.answer(), options);
        let (real, noisy) = noise.split(compare(good.answer(), other.answer(), options));
        for difference in &noisy.differences {
            self.path(difference, PathKind::Noise);
        }
        if real.is_match() {
            let outcome = if noisy.is_match() {
                Outcome::Matched
            } else {
                Outcome::Noise
            };
            self.shadow.count(&self.route, self.user_type(), outcome);
            return;
        }
        drop(permit);
        let still = self.recheck(&noise).await;
        let mut differed = false;
        for difference in &real.differences {
            let stayed = still
                .as_ref()
                .is_none_or(|later| later.find(&difference.path, difference.class).is_some());
            differed |= stayed;
            let kind = if stayed {
                PathKind::Differed
            } else {
                PathKind::Lag
            };
            self.path(difference, kind);
        }
        let outcome = if differed {
            Outcome::Differed
        } else {
            Outcome::Lag
        };
        self.shadow.count(&self.route, self.user_type(), outcome);
    }

    /// Both back ends read again after the recheck interval, compared, noise set aside:
    /// what is still different. None when that could not be found out (too many waiting,
    /// a side failing): every difference then stays one.
    async fn recheck(&self, noise: &Noise) -> Option<Comparison> {
        let inner = &self.shadow.inner;
        let waiting = inner.waiting.fetch_add(1, Ordering::Relaxed);
        let tally_field = field(&["o", &self.route, self.user_type(), "pending"]);
        if waiting >= inner.max_waiting {
            inner.waiting.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        inner.tally.add(tally_field.clone(), 1);
        tokio::time::sleep(inner.settings.recheck).await;
        let later = async {
            let _permit = inner.in_flight.clone().acquire_owned().await.ok()?;
            let sides = inner.sides.get()?;
            let pass = async {
                tokio::join!(
                    fetch(&sides.serving_fresh, &self.read, self.principal),
                    fetch(&sides.candidate_fresh, &self.read, self.principal)
                )
            };
            match tokio::time::timeout(inner.deadline, pass).await {
                Ok((Ok(good), Ok(other))) => {
                    let options = self.shadow.options(self.read.class);
                    Some(
                        noise
                            .split(compare(good.answer(), other.answer(), options))
                            .0,
                    )
                }
                _ => None,
            }
        }
        .await;
        inner.waiting.fetch_sub(1, Ordering::Relaxed);
        inner.tally.add(tally_field, -1);
        later
    }

    fn failed(&self, failure: Failed) {
        let outcome = match &failure {
            Failed::Timeout => Outcome::Timeout,
            Failed::Error(_) => Outcome::Error,
        };
        if let Failed::Error(why) = &failure {
            crate::observe::log_limit::warn(
                "shadow comparison failed",
                format_args!(
                    "shadow: a read of {} could not be compared: {why}",
                    self.route
                ),
            );
        }
        self.shadow.count(&self.route, self.user_type(), outcome);
    }

    /// One field path's count of `kind`, and its first example.
    fn path(&self, difference: &Difference, kind: PathKind) {
        let tally = &self.shadow.inner.tally;
        let (route, user) = (self.route.as_str(), self.user_type());
        let class = difference.class.name();
        tally.add(
            field(&["p", route, user, &difference.path, class, kind.name()]),
            1,
        );
        tally.first(field(&["e", route, user, &difference.path, class]), || {
            let mut example = serde_json::Map::new();
            example.insert("request".into(), json!(self.read.target));
            if let Some(value) = shown(&difference.good) {
                example.insert("serving".into(), value);
            }
            if let Some(value) = shown(&difference.other) {
                example.insert("candidate".into(), value);
            }
            Value::Object(example).to_string()
        });
    }
}

/// A value as the report shows it: itself (cut when long), a digest, `[masked]`; None
/// when the side had none.
fn shown(value: &Shown) -> Option<Value> {
    match value {
        Shown::Absent => None,
        Shown::Value(value) => {
            let text = value.to_string();
            if text.len() <= MAX_EXAMPLE {
                Some(value.clone())
            } else {
                let cut: String = text.chars().take(MAX_EXAMPLE / 2).collect();
                Some(json!(format!("{cut}... ({} bytes)", text.len())))
            }
        }
        Shown::Digest(digest) => Some(json!({ "digest": digest })),
        Shown::Masked => Some(json!("[masked]")),
    }
}
