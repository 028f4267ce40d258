//! The client-facing protocol: formats, bodies, errors and list parameters.
//!
//! Nothing in here knows Magento; it is the old API's wire format, usable in front of any
//! back end.

pub mod body;
pub mod canonical;
pub mod client_body;
pub mod content_coding;
pub mod error;
pub mod format;
pub mod middleware;
pub mod query;
pub mod route_list;
pub mod xml;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::header::{CONTENT_TYPE, LOCATION};
use http::{HeaderValue, StatusCode};
use serde_json::Value;

pub use error::{ApiError, FailureLine, msg};
pub use format::Format;

/// A response document before it is written in a format.
#[derive(Debug, Clone)]
pub struct Doc {
    pub value: Value,
    /// How XML writes a top-level map; JSON always keeps the keys.
    pub top: xml::TopMap,
}

impl Doc {
    pub fn new(value: Value) -> Doc {
        Doc {
            value,
            top: xml::TopMap::Natural,
        }
    }
    /// A map keyed by id that XML writes as plain `<data_item>`s (products).
    pub fn keyed_list(value: Value) -> Doc {
        Doc {
            value,
            top: xml::TopMap::Items,
        }
    }
    /// A map keyed by id whose keys XML keeps as `data_item_<id>` elements (orders).
    pub fn keyed_elements(value: Value) -> Doc {
        Doc {
            value,
            top: xml::TopMap::Keys,
        }
    }
}

/// Writes a document in a format.
pub fn render(format: Format, doc: &Doc) -> Bytes {
    match format {
        // Serialising a `Value` cannot fail: its keys are strings.
        Format::Json => Bytes::from(serde_json::to_vec(&doc.value).unwrap_or_default()),
        Format::Xml => Bytes::from(xml::write_document(&doc.value, doc.top)),
    }
}

/// Writes the error body: `{"messages":{"error":[{"code","message"}]}}`, same tree in XML.
pub fn render_error(format: Format, error: &ApiError) -> Bytes {
    let entries: Vec<Value> = error
        .messages()
        .iter()
        .map(|m| serde_json::json!({"code": m.code, "message": m.text}))
        .collect();
    let doc = Doc::new(serde_json::json!({"messages": {"error": entries}}));
    render(format, &doc)
}

/// 200 with a rendered document.
pub fn ok(format: Format, doc: &Doc) -> Response {
    with_body(StatusCode::OK, format, render(format, doc))
}

/// 207 with the batch result groups.
pub fn multi_status(format: Format, doc: &Doc) -> Response {
    with_body(StatusCode::MULTI_STATUS, format, render(format, doc))
}

/// A status with an already rendered body.
pub fn with_body(status: StatusCode, format: Format, body: Bytes) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    response
}

/// Create: 200, empty body, `Location: /api/rest/<resource>/<id>`.
pub fn created(location: &str) -> Response {
    let mut response = Response::new(Body::empty());
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(LOCATION, value);
    }
    response
}

/// Update and delete: 200, empty body.
pub fn empty_ok() -> Response {
    Response::new(Body::empty())
}
