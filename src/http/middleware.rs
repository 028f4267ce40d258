//! The outermost layer of the API: negotiates the response format once per request and
//! renders every error in it.
//!
//! Handlers read the negotiated [`Format`] from the request's extensions and return
//! [`ApiError`]s without knowing it; this layer turns the parked error into the body. It also
//! refuses HTTP methods the API does not have, before routing, as the original did.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Method};

use super::error::{ApiError, PendingError};
use super::format::{Format, negotiate_response};
use super::render_error;

pub async fn negotiate(mut request: Request, next: Next) -> Response {
    let format = match negotiate_response(request.headers()) {
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
    request.extensions_mut().insert(format);
    let response = next.run(request).await;
    finish(format, response)
}

/// Renders a parked error, if the response carries one.
pub fn finish(format: Format, mut response: Response) -> Response {
    let Some(PendingError(error)) = response.extensions_mut().remove::<PendingError>() else {
        return response;
    };
    if error.status().is_server_error() {
        tracing::error!(
            status = error.status().as_u16(),
            message = error.first_message(),
            cause = error.cause(),
            "request failed"
        );
    } else if let Some(cause) = error.cause() {
        tracing::debug!(
            status = error.status().as_u16(),
            message = error.first_message(),
            cause,
            "request refused"
        );
    }
    *response.body_mut() = axum::body::Body::from(render_error(format, &error));
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    response
}
