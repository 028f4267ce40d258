//! Request bodies: read within a size limit, then decode JSON or XML into one tree.
//!
//! Both formats decode to a `serde_json::Value`, so validation and mapping never care which
//! one the client sent. Leaves read from XML are strings; the field parsers accept numbers
//! and numeric strings alike for that reason.

use axum::body::Body;
use http::HeaderMap;
use http::header::CONTENT_LENGTH;
use http_body_util::BodyExt as _;
use serde_json::Value;

use super::error::ApiError;
use super::format::{Format, negotiate_request};
use super::xml;

/// Reads at most `limit` bytes. A declared or actual body over the limit is a 413; we never
/// buffer more than the limit to find out.
///
/// Read into one buffer sized from `Content-Length` (at most the limit): collecting the
/// pieces and joining them would hold two copies of a large upload at once.
pub async fn read_limited(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
) -> Result<bytes::Bytes, ApiError> {
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|declared| declared > limit as u64) {
        return Err(ApiError::payload_too_large());
    }
    let mut buffer = bytes::BytesMut::with_capacity(declared.map_or(8 * 1024, |d| d as usize));
    let mut body = body;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|error| {
            if super::client_body::is_stalled(&error) {
                // The client's problem, not Magento's: a 408, logged as such.
                tracing::info!("request body stalled: answered 408");
                ApiError::new(
                    http::StatusCode::REQUEST_TIMEOUT,
                    "The request body did not arrive in time.",
                )
                .with_cause("client stalled its request body (STOREGATE_BODY_TIMEOUT_SECS)")
            } else {
                // A broken connection or bad framing.
                ApiError::decoding().with_cause(error)
            }
        })?;
        if let Ok(data) = frame.into_data() {
            if buffer.len() + data.len() > limit {
                return Err(ApiError::payload_too_large());
            }
            buffer.extend_from_slice(&data);
        }
    }
    Ok(buffer.freeze())
}

/// Decodes a request body in the format its `Content-Type` names (or `default`).
///
/// Errors are the original's: `Decoding error.` for an empty or undecodable body, `The
/// request data is invalid.` for a body that decodes to nothing (`{}`, `[]`, a scalar).
pub async fn decode(
    headers: &HeaderMap,
    body: Body,
    default: Format,
    limit: usize,
) -> Result<Value, ApiError> {
    if is_text_plain(headers) && crate::context::profile::Profile::current().text_plain_is_query() {
        let bytes = read_limited(headers, body, limit).await?;
        return decode_query(&bytes);
    }
    let format = negotiate_request(headers, default)?;
    let bytes = read_limited(headers, body, limit).await?;
    decode_bytes(format, &bytes)
}

fn is_text_plain(headers: &HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("text/plain"))
}

/// A `text/plain` body read as a query string, as the original's `parse_str` did (profile
/// `original` only): `qty=1&street[]=a&street[]=b&stock_data[qty]=5`. Values are strings.
pub fn decode_query(bytes: &[u8]) -> Result<Value, ApiError> {
    let text = std::str::from_utf8(bytes.trim_ascii())
        .map_err(|_| ApiError::bad_request("Invalid data type. Check Content-Type."))?;
    // Only characters a URI may hold (RFC 3986) are a query string.
    if !text
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=%".contains(&b))
    {
        return Err(ApiError::bad_request(
            "Invalid data type. Check Content-Type.",
        ));
    }
    if text.is_empty() {
        return Err(ApiError::decoding());
    }
    let mut root = serde_json::Map::new();
    for (key, value) in form_urlencoded::parse(text.as_bytes()) {
        let mut path = key.split('[').map(|s| s.trim_end_matches(']'));
        let Some(first) = path.next().filter(|f| !f.is_empty()) else {
            continue;
        };
        let rest: Vec<&str> = path.collect();
        insert_query_value(&mut root, first, &rest, Value::String(value.into_owned()));
    }
    if root.is_empty() {
        return Err(ApiError::request_data_invalid());
    }
    Ok(Value::Object(root))
}

/// Puts `value` at `key[rest...]`; an empty segment (`a[]`) appends to a list. Depth is
/// bounded like the XML reader's.
fn insert_query_value(
    map: &mut serde_json::Map<String, Value>,
    key: &str,
    rest: &[&str],
    value: Value,
) {
    let Some((next, deeper)) = rest.split_first().filter(|_| rest.len() < 16) else {
        map.insert(key.to_owned(), value);
        return;
    };
    if next.is_empty() {
        let slot = map
            .entry(key.to_owned())
            .or_insert_with(|| Value::Array(Vec::new()));
        if !slot.is_array() {
            *slot = Value::Array(Vec::new());
        }
        if let Value::Array(list) = slot {
            list.push(value);
        }
        return;
    }
    let slot = map
        .entry(key.to_owned())
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(serde_json::Map::new());
    }
    if let Value::Object(inner) = slot {
        insert_query_value(inner, next, deeper, value);
    }
}

/// A body that must be one record (a JSON object, an XML document with named fields).
/// What a list answers depends on the route: `on_list` (a list posted to a collection is a
/// multi-create, which the original never implemented; sent to an entity it is invalid).
pub async fn decode_record(
    headers: &HeaderMap,
    body: Body,
    default: Format,
    limit: usize,
    on_list: fn() -> ApiError,
) -> Result<serde_json::Map<String, Value>, ApiError> {
    match decode(headers, body, default, limit).await? {
        Value::Object(map) => Ok(map),
        _ => Err(on_list()),
    }
}

/// The decoding half of [`decode`], for bodies already in memory.
pub fn decode_bytes(format: Format, bytes: &[u8]) -> Result<Value, ApiError> {
    let expected = match format {
        Format::Json => "a JSON",
        Format::Xml => "an XML",
    };
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(ApiError::decoding_of(expected, "the body is empty"));
    }
    let value = match format {
        Format::Json => serde_json::from_slice::<Value>(bytes)
            .map_err(|e| ApiError::decoding_of(expected, e))?,
        Format::Xml => {
            let text = std::str::from_utf8(bytes).map_err(|e| {
                ApiError::decoding_of(
                    expected,
                    format!("not UTF-8 text (at byte {})", e.valid_up_to()),
                )
            })?;
            xml::read_document(text, xml::Limits::default())
                .map_err(|e| ApiError::decoding_of(expected, e))?
        }
    };
    match &value {
        Value::Object(map) if !map.is_empty() => Ok(value),
        Value::Array(list) if !list.is_empty() => Ok(value),
        // An XML document whose root holds only text reads as a string: nothing usable.
        _ => Err(ApiError::request_data_invalid()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn query_string_bodies_nest_like_parse_str() {
        assert_eq!(
            decode_query(b"qty=1&street[]=a&street[]=b%20c&stock_data[qty]=5").unwrap(),
            json!({"qty": "1", "street": ["a", "b c"], "stock_data": {"qty": "5"}})
        );
        assert_eq!(
            decode_query("qty=\u{e9}".as_bytes())
                .unwrap_err()
                .first_message(),
            "Invalid data type. Check Content-Type."
        );
        assert_eq!(
            decode_query(b"&&").unwrap_err().first_message(),
            "The request data is invalid."
        );
    }

    #[test]
    fn decoding_errors_say_what_was_expected_and_where() {
        let messages = |format, body: &[u8]| {
            decode_bytes(format, body)
                .unwrap_err()
                .messages()
                .iter()
                .map(|m| m.text.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            messages(Format::Json, b"{\"name\":"),
            [
                "Decoding error.",
                "Expected a JSON body: EOF while parsing a value at line 1 column 8"
            ]
        );
        assert_eq!(
            messages(Format::Json, b"  "),
            ["Decoding error.", "Expected a JSON body: the body is empty"]
        );
        let xml = messages(Format::Xml, b"<a><b>x</a>");
        assert_eq!(xml[0], "Decoding error.");
        assert!(
            xml[1].starts_with("Expected an XML body: malformed XML: "),
            "{xml:?}"
        );
        assert!(xml[1].contains("at byte"), "{xml:?}");
        // The original profile: its bare message.
        let original =
            crate::context::profile::sync_scope(crate::context::profile::Profile::Original, || {
                messages(Format::Json, b"{")
            });
        assert_eq!(original, ["Decoding error."]);
    }

    #[test]
    fn empty_and_undecodable_bodies() {
        let cases: [(Format, &[u8], &str); 7] = [
            (Format::Json, &b""[..], "Decoding error."),
            (Format::Json, &b"{"[..], "Decoding error."),
            (Format::Xml, &b"<a>"[..], "Decoding error."),
            (Format::Json, &b"{}"[..], "The request data is invalid."),
            (Format::Json, &b"[]"[..], "The request data is invalid."),
            (Format::Json, &b"12"[..], "The request data is invalid."),
            (
                Format::Xml,
                &b"<service_api/>"[..],
                "The request data is invalid.",
            ),
        ];
        for (format, body, message) in cases {
            assert_eq!(
                decode_bytes(format, body).unwrap_err().first_message(),
                message,
                "{body:?}"
            );
        }
    }

    #[test]
    fn both_formats_give_one_tree() {
        assert_eq!(
            decode_bytes(Format::Json, br#"{"sku":"a"}"#).unwrap(),
            json!({"sku": "a"})
        );
        assert_eq!(
            decode_bytes(Format::Xml, b"<service_api><sku>a</sku></service_api>").unwrap(),
            json!({"sku": "a"})
        );
    }

    #[tokio::test]
    async fn bodies_over_the_limit_are_413() {
        let headers = HeaderMap::new();
        let err = read_limited(&headers, Body::from(vec![b'a'; 100]), 10)
            .await
            .unwrap_err();
        assert_eq!(err.status().as_u16(), 413);
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_LENGTH, "1000".parse().unwrap());
        let err = read_limited(&headers, Body::from("x"), 10)
            .await
            .unwrap_err();
        assert_eq!(err.status().as_u16(), 413);
        assert_eq!(
            read_limited(&HeaderMap::new(), Body::from("abc"), 10)
                .await
                .unwrap(),
            "abc"
        );
    }
}
