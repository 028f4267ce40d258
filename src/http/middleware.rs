//! The outermost layer of the API: refuses a request whose format negotiation failed (the
//! caller layer negotiates once per request) and renders every error in the format.
//!
//! Handlers read the negotiated [`Format`] from the request's extensions and return
//! [`ApiError`]s without knowing it; this layer turns the parked error into the body. It also
//! refuses HTTP methods the API does not have and versions other than 1, before routing,
//! as the original did.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Method};

use super::error::{ApiError, FailureLine, PendingError};
use super::format::{Format, Negotiated, negotiate_response};
use super::render_error;

pub async fn negotiate(mut request: Request, next: Next) -> Response {
    // Negotiated once by the caller layer; worked out here only when it did not run.
    let negotiated = match request.extensions_mut().remove::<Negotiated>() {
        Some(Negotiated(negotiated)) => negotiated,
        None => negotiate_response(request.headers()),
    };
    let format = match negotiated {
        Ok(format) => format,
        // Nothing acceptable: the spec's default format is the best we can do.
        Err(error) => return finish(Format::Xml, error.into_response()),
    };
    if !matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::POST | Method::PUT | Method::DELETE
    ) {
        return finish(format, ApiError::invalid_method().into_response());
    }
    if let Err(error) = check_version(request.headers()) {
        return finish(format, error.into_response());
    }
    request.extensions_mut().insert(format);
    let response = next.run(request).await;
    finish(format, response)
}

/// SPEC 9: every resource is version 1. A `Version` header may say so; anything else is
/// refused rather than silently served by another version.
fn check_version(headers: &http::HeaderMap) -> Result<(), ApiError> {
    let Some(value) = headers.get("version") else {
        return Ok(());
    };
    let text = String::from_utf8_lossy(value.as_bytes());
    if text.trim() == "1" {
        Ok(())
    } else {
        // Echo at most a short, printable prefix of what was sent.
        let shown: String = text.chars().filter(|c| !c.is_control()).take(32).collect();
        Err(ApiError::bad_request(format!(
            "Invalid version \"{shown}\" requested."
        )))
    }
}

/// Renders a parked error, if the response carries one.
pub fn finish(format: Format, mut response: Response) -> Response {
    let Some(PendingError(error)) = response.extensions_mut().remove::<PendingError>() else {
        return response;
    };
    if error.status().is_server_error() {
        // Logged when the request finishes (`telemetry`), rate-limited: during an outage
        // every request fails the same way.
        response.extensions_mut().insert(FailureLine {
            status: error.status().as_u16(),
            message: error.first_message().to_owned(),
            cause: error.cause().map(str::to_owned),
        });
    } else if let Some(cause) = error.cause() {
        tracing::debug!(
            status = error.status().as_u16(),
            message = error.first_message(),
            cause,
            "request refused"
        );
    }
    *response.body_mut() = axum::body::Body::from(render_error(format, &error));
    let headers = response.headers_mut();
    // A length computed for the empty placeholder body would now be wrong.
    headers.remove(http::header::CONTENT_LENGTH);
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    response
}
