//! Limits of a request head, answered like every other error of the API.
//!
//! hyper refuses a head it cannot hold with a bare status line (414, 431, 400) and an empty
//! body. Clients of this API expect its error body, in the format they asked for, and a
//! request id to quote. So hyper is given room ([`HYPER_MAX_HEAD`]) and the limits that
//! matter are checked here, before routing: a URI over [`MAX_URI`] bytes is a 414, a head
//! over [`MAX_HEAD`] bytes a 431. Past hyper's own room, or for a head that is not HTTP at
//! all, the protocol leaves no request to answer in a format: hyper answers, and the
//! connection's socket wrapper puts the API's answer in place of hyper's
//! (`server::refusal`).
//!
//! The field count is the one limit left to hyper itself ([`HYPER_MAX_HEADERS`] is
//! [`MAX_HEADERS`]): given room above it, hyper parsed every head into two arrays on the
//! heap (its own are on the stack up to 100 fields), about 600 instructions of every
//! 21,000-instruction cache hit (`bench/instructions.py`). A head of more than 100 fields
//! gets the same 431, the same error tree in the format of its `Accept` line and a request
//! id, through the refusal's replacement.

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, Request, StatusCode};

use crate::http::format::negotiate_response;
use crate::http::{ApiError, Format};

/// Longest request target we serve (nginx's default large buffer is 8 KiB too).
pub const MAX_URI: usize = 8 * 1024;
/// Largest head (request line and fields).
pub const MAX_HEAD: usize = 32 * 1024;
/// Most header fields.
pub const MAX_HEADERS: usize = 100;
/// hyper's read buffer: past this it answers a bare 431 itself.
pub const HYPER_MAX_HEAD: usize = 64 * 1024;
/// hyper's field count: past this it answers a bare 431 itself (replaced by the API's,
/// `server::refusal`). No more than the 100 hyper holds on the stack (module docs).
pub const HYPER_MAX_HEADERS: usize = MAX_HEADERS;

/// The API's answer to a head past our limits, if it is one.
pub fn refuse<B>(request: &Request<B>) -> Option<Response> {
    let uri = request.uri();
    let uri_len = uri.path_and_query().map_or(0, |p| p.as_str().len());
    let error = if uri_len > MAX_URI {
        ApiError::new(StatusCode::URI_TOO_LONG, "Request-URI too long.")
    } else {
        let headers = request.headers();
        let size = uri_len
            + headers
                .iter()
                .map(|(name, value)| name.as_str().len() + value.len() + 4)
                .sum::<usize>();
        if headers.len() > MAX_HEADERS || size > MAX_HEAD {
            ApiError::new(
                StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                "Request header fields too large.",
            )
        } else {
            return None;
        }
    };
    let format = negotiate_response(request.headers()).unwrap_or(Format::Xml);
    let error = error.with_cause("request head over the gateway's limits");
    let mut response = crate::http::middleware::finish(format, error.into_response());
    let headers = response.headers_mut();
    headers.insert(
        crate::observe::telemetry::X_REQUEST_ID,
        crate::observe::telemetry::new_id(),
    );
    // What follows on this connection may be the rest of the oversized head.
    headers.insert(http::header::CONNECTION, HeaderValue::from_static("close"));
    Some(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_over_the_limits() {
        let ok = Request::get("/api/rest/products").body(()).unwrap();
        assert!(refuse(&ok).is_none());
        let long = Request::get(format!("/api/rest/products?q={}", "a".repeat(MAX_URI)))
            .body(())
            .unwrap();
        assert_eq!(refuse(&long).unwrap().status(), 414);
        let mut many = Request::get("/").body(()).unwrap();
        for i in 0..=MAX_HEADERS {
            many.headers_mut().insert(
                format!("x-h{i}").parse::<http::HeaderName>().unwrap(),
                "1".parse().unwrap(),
            );
        }
        assert_eq!(refuse(&many).unwrap().status(), 431);
        let mut big = Request::get("/").body(()).unwrap();
        big.headers_mut()
            .insert("x-big", "a".repeat(MAX_HEAD).parse().unwrap());
        let refused = refuse(&big).unwrap();
        assert_eq!(refused.status(), 431);
        assert!(refused.headers().contains_key("x-request-id"));
    }
}
