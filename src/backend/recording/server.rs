//! `storegate replay DIR --listen ADDR`: a cassette folder served as a Magento 2 (or
//! OpenMage) REST server, for another gateway or any tool that speaks the store's API.
//!
//! Every request goes through the same [`Replay`] the gateway's own replay uses, so the
//! matching, the modes, the scrubbing, the latency and the faults are the same; here the
//! faults happen on the wire (a reset, a hang, a body cut short or dribbled). A miss answers
//! 502 with a Magento-shaped error body whose message names the request and the closest
//! recorded one. Credentials are not checked: a cassette holds none to check against.
//! `/__storegate/` is the control API ([`super::control`]).

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use bytes::Bytes;
use http::StatusCode;

use super::replay::{Outcome, Played, Replay};
use crate::backend::port::BackendError;
use crate::backend::transport::{Answer, Outgoing};

/// Largest request body accepted (image uploads travel base64 in JSON).
const BODY_LIMIT: usize = 64 * 1024 * 1024;

/// Longest a `hang` holds a connection: clients give up long before.
const HANG_AT_MOST: Duration = Duration::from_secs(600);

/// What the connection must do instead of answering (the accept loop carries it out: the
/// router has no hold of the socket). Put in a response's extensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// Close with a TCP reset.
    Reset,
    /// Close without a byte.
    Close,
}

/// The router answering every path from `replay`, with the control API under
/// `/__storegate/` (for loopback callers only unless `control_open`).
pub fn router(replay: Arc<Replay>, control_open: bool) -> Router {
    super::control::router(replay.clone(), control_open)
        .fallback(answer)
        .with_state(replay)
}

async fn answer(State(replay): State<Arc<Replay>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = match axum::body::to_bytes(body, BODY_LIMIT).await {
        Ok(body) => body,
        Err(error) => return error_response(StatusCode::BAD_REQUEST, &error.to_string()),
    };
    // Whatever sits before a store's API is the store's base URL, not part of the call.
    let path = replay
        .wires()
        .api_path(parts.uri.path())
        .unwrap_or(parts.uri.path())
        .to_owned();
    let query = parts
        .uri
        .query()
        .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    let outgoing = Outgoing {
        method: parts.method,
        path,
        query,
        headers: parts.headers,
        body: (!body.is_empty()).then_some(body),
        timeout: Duration::from_secs(30),
        exact_path: false,
    };
    let Played { delay, outcome } = replay.play(outgoing).await;
    tokio::time::sleep(delay).await;
    match outcome {
        Outcome::Answer(answer) => response_of(answer, Body::from),
        Outcome::Failed(BackendError::Protocol(message)) => {
            error_response(StatusCode::BAD_GATEWAY, &message)
        }
        Outcome::Failed(BackendError::Timeout) => error_response(
            StatusCode::GATEWAY_TIMEOUT,
            "the store did not answer in time",
        ),
        Outcome::Failed(error) => error_response(StatusCode::BAD_GATEWAY, &error.to_string()),
        Outcome::Reset => cut(Cut::Reset),
        Outcome::Empty => cut(Cut::Close),
        Outcome::Hang => {
            tokio::time::sleep(HANG_AT_MOST).await;
            cut(Cut::Close)
        }
        Outcome::Truncate(answer) => {
            // The head promises the whole body; half of it comes, then the connection ends.
            let full = answer.body.len();
            let half = answer.body.slice(..full / 2);
            let mut response = response_of(answer, |_| {
                // The half goes out on its own (hyper would drop it with the connection if the
                // error came in the same write), then the connection ends.
                let pieces = futures_util::stream::unfold(0u8, move |step| {
                    let half = half.clone();
                    async move {
                        match step {
                            0 => Some((Ok::<Bytes, std::io::Error>(half), 1)),
                            1 => {
                                tokio::time::sleep(Duration::from_millis(50)).await;
                                Some((Err(std::io::Error::other("replay fault: truncate")), 2))
                            }
                            _ => None,
                        }
                    }
                });
                Body::from_stream(pieces)
            });
            response
                .headers_mut()
                .insert(http::header::CONTENT_LENGTH, full.into());
            response
        }
        Outcome::Dribble(answer, over) => {
            let body = answer.body.clone();
            let mut response = response_of(answer, |_| dribble(body, over));
            response.headers_mut().remove(http::header::CONTENT_LENGTH);
            response
        }
    }
}

/// The body in about twenty pieces spread evenly over `over`.
fn dribble(body: Bytes, over: Duration) -> Body {
    let pieces = 20usize.min(body.len().max(1));
    let size = body.len().div_ceil(pieces).max(1);
    let chunks: Vec<Bytes> = (0..body.len())
        .step_by(size)
        .map(|at| body.slice(at..(at + size).min(body.len())))
        .collect();
    let pause = over / chunks.len().max(1) as u32;
    let stream = futures_util::stream::unfold(chunks.into_iter(), move |mut rest| async move {
        let next = rest.next()?;
        tokio::time::sleep(pause).await;
        Some((Ok::<Bytes, std::io::Error>(next), rest))
    });
    Body::from_stream(stream)
}

fn response_of(answer: Answer, body: impl FnOnce(Bytes) -> Body) -> Response {
    let mut response = Response::new(body(answer.body));
    *response.status_mut() = answer.status;
    for (name, value) in &answer.headers {
        response.headers_mut().append(name, value.clone());
    }
    response
}

fn cut(how: Cut) -> Response {
    let mut response = Response::new(Body::empty());
    response.extensions_mut().insert(how);
    response
}

/// Magento's error shape, so a client reads it as it reads Magento's own errors.
pub fn error_response(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({ "message": message, "parameters": [] });
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json; charset=utf-8"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::recording::cassette::tests::WIRES;
    use crate::backend::recording::library::Library;
    use crate::backend::recording::matching::Ignore;
    use crate::backend::recording::scrub::{Rules, Scrubber};
    use axum::extract::ConnectInfo;

    async fn call(router: &Router, method: &str, path: &str, peer: &str) -> (StatusCode, String) {
        let mut request = http::Request::builder()
            .method(method)
            .uri(path)
            .body(Body::empty())
            .unwrap();
        request
            .extensions_mut()
            .insert(ConnectInfo(peer.parse::<std::net::SocketAddr>().unwrap()));
        let response = tower::Service::call(&mut router.clone(), request)
            .await
            .unwrap();
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    #[tokio::test]
    async fn the_control_api_sits_beside_the_store_for_loopback_callers() {
        let dir = std::env::temp_dir().join(format!("storegate-server-{}", std::process::id()));
        let replay = Replay::new(
            Arc::new(Library::open(&dir, WIRES).unwrap()),
            Arc::new(Scrubber::new(&Rules::default(), &[], WIRES).unwrap()),
            Ignore::default(),
            None,
        );
        let router = router(Arc::new(replay), false);
        for path in ["/__storegate/counts", "/__storegate/", "/__storegate"] {
            let (status, body) = call(&router, "GET", path, "127.0.0.1:5000").await;
            assert_eq!(status, StatusCode::OK, "{path}: {body}");
        }
        let (status, _) = call(&router, "GET", "/__storegate/", "192.0.2.7:5000").await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let (status, body) = call(&router, "GET", "/api/rest/x", "127.0.0.1:5000").await;
        assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    }
}
