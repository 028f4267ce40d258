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
    if let Err(error) = check_decodable(request.uri()) {
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

/// The message of a path or query that does not decode.
pub const UNDECODABLE_URL: &str =
    "Request URL is not valid: its path and query must be UTF-8 once percent-decoded.";

/// Every part of the path and query must be UTF-8 once percent-decoded (`%ff` is not), as
/// the routes' parameters and the list parameters read them. Checked here, before routing's
/// extractors, whose refusal would be plain text and not the API's error tree (issue 32);
/// the query is never read lossily either, so `filter[0][like]=%ff` cannot become a search
/// for U+FFFD.
fn check_decodable(uri: &http::Uri) -> Result<(), ApiError> {
    let path_ok = percent_encoding::percent_decode_str(uri.path())
        .decode_utf8()
        .is_ok();
    let query_ok = uri.query().is_none_or(|query| {
        query.split('&').all(|pair| {
            // `+` is a space in a form-encoded query; it decodes to ASCII either way.
            percent_encoding::percent_decode_str(pair)
                .decode_utf8()
                .is_ok()
        })
    });
    if path_ok && query_ok {
        Ok(())
    } else {
        Err(ApiError::bad_request(UNDECODABLE_URL))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_queries_that_do_not_decode_are_refused() {
        for good in [
            "/api/rest/products/1",
            "/api/rest/products/caf%C3%A9",
            "/api/rest/products?filter[0][attribute]=name&filter[0][like]=%25a%25",
            "/api/rest/products/%zz",
            "/api/rest/products?q=a+b",
        ] {
            let uri: http::Uri = good.parse().unwrap();
            assert!(check_decodable(&uri).is_ok(), "{good}");
        }
        for bad in [
            "/api/rest/products/%ff",
            "/api/rest/products/%C3",
            "/api/rest/customers/1/addresses?x=%80",
            "/api/rest/products?filter[0][like]=%fe%ff",
        ] {
            let uri: http::Uri = bad.parse().unwrap();
            let error = check_decodable(&uri).unwrap_err();
            assert_eq!(error.status(), 400, "{bad}");
            assert_eq!(error.first_message(), UNDECODABLE_URL);
        }
    }
}
