//! The one error type a handler returns, and the spec's messages.
//!
//! An [`ApiError`] carries the HTTP status and the list of messages the client sees. It does
//! not know the negotiated format: `IntoResponse` parks the error in the response's
//! extensions and the outermost middleware ([`super::middleware::negotiate`]) renders it as
//! `{"messages":{"error":[{"code","message"}]}}` or the same tree in XML. That way every
//! failure, including the router's own 404 and a caught panic, gets the same body.
//!
//! The internal cause (an upstream error, a bug) is kept separately for the log and is never
//! rendered: nothing a client sends can make the gateway echo a secret or a stack.

use std::borrow::Cow;
use std::fmt;

use axum::response::{IntoResponse, Response};
use http::{HeaderName, HeaderValue, StatusCode};

/// Messages of the original API that several modules use. Exact text: clients match on it.
pub mod msg {
    pub const NOT_FOUND: &str = "Resource not found.";
    pub const ROUTE_NOT_FOUND: &str = "Request does not match any route.";
    pub const ACCESS_DENIED: &str = "Access denied";
    pub const NOT_IMPLEMENTED: &str = "Resource method not implemented yet.";
    pub const NOT_SUPPORTED: &str = "Resource does not support method.";
    pub const INTERNAL: &str = "Resource internal error.";
    pub const PRE_VALIDATION: &str = "Resource data pre-validation error.";
    pub const REQUEST_DATA_INVALID: &str = "The request data is invalid.";
    pub const DECODING: &str = "Decoding error.";
    pub const NOT_ACCEPTABLE: &str = "Server can not understand Accept HTTP header media type.";
    pub const INVALID_METHOD: &str = "Invalid request method";
    pub const PAGING: &str = "Resource collection paging error.";
    pub const PAGING_LIMIT: &str = "The paging limit exceeds the allowed number.";
    pub const ORDERING: &str = "Resource collection ordering error.";
    pub const FILTERING: &str = "Resource collection filtering error.";
    pub const UPDATED: &str = "Resource updated successful.";
    pub const UNKNOWN: &str = "Resource unknown error.";
}

/// One entry of the error body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub code: u16,
    pub text: Cow<'static, str>,
}

/// A failure to answer a request, as the client will see it.
#[derive(Clone)]
pub struct ApiError {
    status: StatusCode,
    messages: Vec<Message>,
    headers: Vec<(HeaderName, HeaderValue)>,
    /// What really happened, for the log only.
    cause: Option<String>,
}

impl fmt::Debug for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiError")
            .field("status", &self.status.as_u16())
            .field("messages", &self.messages)
            .field("cause", &self.cause)
            .finish()
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.status.as_u16(), self.first_message())
    }
}

impl std::error::Error for ApiError {}

/// A failed build of a cached answer: only a server error is worth serving stale data for.
impl crate::cache::FetchError for ApiError {
    fn allows_stale(&self) -> bool {
        self.status().is_server_error()
    }
}

impl ApiError {
    /// An error with one message whose code is the status.
    pub fn new(status: StatusCode, text: impl Into<Cow<'static, str>>) -> Self {
        ApiError {
            status,
            messages: vec![Message {
                code: status.as_u16(),
                text: text.into(),
            }],
            headers: Vec::new(),
            cause: None,
        }
    }

    /// Several 400 messages, then the original's closing `Resource data pre-validation error.`.
    pub fn validation(messages: Vec<String>) -> Self {
        let mut all: Vec<Message> = messages
            .into_iter()
            .map(|text| Message {
                code: 400,
                text: text.into(),
            })
            .collect();
        all.push(Message {
            code: 400,
            text: msg::PRE_VALIDATION.into(),
        });
        ApiError {
            status: StatusCode::BAD_REQUEST,
            messages: all,
            headers: Vec::new(),
            cause: None,
        }
    }

    pub fn bad_request(text: impl Into<Cow<'static, str>>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, text)
    }
    pub fn not_found() -> Self {
        Self::new(StatusCode::NOT_FOUND, msg::NOT_FOUND)
    }
    pub fn route_not_found() -> Self {
        Self::new(StatusCode::NOT_FOUND, msg::ROUTE_NOT_FOUND)
    }
    pub fn access_denied() -> Self {
        Self::new(StatusCode::FORBIDDEN, msg::ACCESS_DENIED)
    }
    pub fn not_implemented() -> Self {
        Self::new(StatusCode::METHOD_NOT_ALLOWED, msg::NOT_IMPLEMENTED)
    }
    pub fn not_supported() -> Self {
        Self::new(StatusCode::METHOD_NOT_ALLOWED, msg::NOT_SUPPORTED)
    }
    pub fn not_acceptable() -> Self {
        Self::new(StatusCode::NOT_ACCEPTABLE, msg::NOT_ACCEPTABLE)
    }
    pub fn invalid_method() -> Self {
        Self::new(StatusCode::BAD_REQUEST, msg::INVALID_METHOD)
    }
    pub fn decoding() -> Self {
        Self::bad_request(msg::DECODING)
    }
    pub fn request_data_invalid() -> Self {
        Self::bad_request(msg::REQUEST_DATA_INVALID)
    }
    pub fn internal() -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, msg::INTERNAL)
    }
    /// 401 for a credential that is present but not good. RFC 6750 asks for the challenge.
    pub fn unauthorized(text: impl Into<Cow<'static, str>>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, text).with_header(
            http::header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer error=\"invalid_token\""),
        )
    }
    pub fn payload_too_large() -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "Request body is larger than the allowed size.",
        )
    }
    /// The back end answered, but not with something we can use.
    pub fn bad_gateway() -> Self {
        Self::new(
            StatusCode::BAD_GATEWAY,
            "The store back end sent an invalid response.",
        )
    }
    /// The back end did not answer in time.
    pub fn gateway_timeout() -> Self {
        Self::new(
            StatusCode::GATEWAY_TIMEOUT,
            "The store back end did not answer in time.",
        )
    }
    /// The back end is unreachable or known to be failing.
    pub fn unavailable() -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "The store back end is unavailable. Try again later.",
        )
    }

    /// Keeps what really happened for the log. Never rendered.
    pub fn with_cause(mut self, cause: impl fmt::Display) -> Self {
        self.cause = Some(cause.to_string());
        self
    }

    /// Adds a message after the others, with the same code.
    pub fn with_message(mut self, text: impl Into<Cow<'static, str>>) -> Self {
        self.messages.push(Message {
            code: self.status.as_u16(),
            text: text.into(),
        });
        self
    }

    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    pub fn status(&self) -> StatusCode {
        self.status
    }
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }
    pub fn first_message(&self) -> &str {
        self.messages.first().map(|m| &*m.text).unwrap_or("")
    }
    pub fn cause(&self) -> Option<&str> {
        self.cause.as_deref()
    }
}

/// A failed request's log line (a server error), left in the response's extensions by the
/// renderer and written by `telemetry` when the request finishes, inside the request's
/// span, at most one per status and message per interval per gateway (`observe::log_limit`).
#[derive(Debug, Clone)]
pub struct FailureLine {
    pub status: u16,
    pub message: String,
    pub cause: Option<String>,
}

/// Marker placed in a response's extensions: "render this error in the negotiated format".
#[derive(Debug, Clone)]
pub struct PendingError(pub ApiError);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = Response::new(axum::body::Body::empty());
        *response.status_mut() = self.status;
        for (name, value) in &self.headers {
            response.headers_mut().append(name.clone(), value.clone());
        }
        response.extensions_mut().insert(PendingError(self));
        response
    }
}
