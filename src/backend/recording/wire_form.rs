//! Between the wire and the cassette: a call the client is about to send
//! ([`Outgoing`]) as a cassette [`Request`], and a recorded [`Response`] as the [`Answer`]
//! the wire would have given.

use std::collections::BTreeMap;

use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};

use super::cassette::{Body, Request, Response};
use crate::backend::transport::{Answer, Outgoing};

/// A call in cassette form (not scrubbed yet).
pub fn to_request(outgoing: &Outgoing) -> Request {
    let mut request = Request {
        method: outgoing.method.to_string(),
        path: outgoing.path.clone(),
        query: BTreeMap::new(),
        headers: header_map(&outgoing.headers),
        body: outgoing
            .body
            .as_deref()
            .map(Body::from_bytes)
            .unwrap_or_default(),
    };
    request.set_query(&outgoing.query);
    request
}

/// A recorded answer as the wire would have given it.
pub fn to_answer(response: &Response) -> Result<Answer, String> {
    let status = StatusCode::from_u16(response.status)
        .map_err(|_| format!("recorded status {} is not an HTTP status", response.status))?;
    let mut headers = HeaderMap::new();
    for (name, value) in &response.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            headers.append(name, value);
        }
    }
    if response.body.body.is_some() && !headers.contains_key(http::header::CONTENT_TYPE) {
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json; charset=utf-8"),
        );
    }
    Ok(Answer {
        status,
        headers,
        body: response.body.to_bytes()?,
    })
}

pub fn header_map(headers: &HeaderMap) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in headers {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        out.entry(name.as_str().to_owned())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    out
}
