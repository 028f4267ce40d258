//! `storegate replay DIR --listen ADDR`: a cassette folder served as a Magento 2 REST
//! server, for another gateway or any tool that speaks Magento's API.
//!
//! Every request goes through the same [`Transport`] the gateway's own replay uses, so the
//! matching, the modes and the scrubbing are the same. A miss answers 502 with a
//! Magento-shaped error body whose message names the request and the closest recorded one.
//! Credentials are not checked: a cassette holds none to check against.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use http::StatusCode;

use crate::backend::port::BackendError;
use crate::backend::transport::{Outgoing, Transport};

/// Largest request body accepted (image uploads travel base64 in JSON).
const BODY_LIMIT: usize = 64 * 1024 * 1024;

/// The router answering every path from `transport`.
pub fn router(transport: Arc<dyn Transport>) -> Router {
    Router::new().fallback(answer).with_state(transport)
}

async fn answer(State(transport): State<Arc<dyn Transport>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = match axum::body::to_bytes(body, BODY_LIMIT).await {
        Ok(body) => body,
        Err(error) => return error_response(StatusCode::BAD_REQUEST, &error.to_string()),
    };
    let path = parts.uri.path();
    // Whatever sits before `/rest/` is the store's base URL, not part of the call.
    let path = path
        .find("/rest/")
        .map_or(path, |at| &path[at..])
        .to_owned();
    let query = parts
        .uri
        .query()
        .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    let outgoing = Outgoing {
        exact_path: false,
        method: parts.method,
        path,
        query,
        headers: parts.headers,
        body: (!body.is_empty()).then_some(body),
        timeout: Duration::from_secs(30),
    };
    match transport.send(outgoing).await {
        Ok(answer) => {
            let mut response = Response::new(Body::from(answer.body));
            *response.status_mut() = answer.status;
            for (name, value) in &answer.headers {
                response.headers_mut().append(name, value.clone());
            }
            response
        }
        Err(BackendError::Protocol(message)) => error_response(StatusCode::BAD_GATEWAY, &message),
        Err(BackendError::Timeout) => error_response(
            StatusCode::GATEWAY_TIMEOUT,
            "the store did not answer in time",
        ),
        Err(error) => error_response(StatusCode::BAD_GATEWAY, &error.to_string()),
    }
}

/// Magento's error shape, so a client reads it as it reads Magento's own errors.
fn error_response(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({ "message": message, "parameters": [] });
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json; charset=utf-8"),
    );
    response
}
