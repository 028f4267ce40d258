//! Content negotiation: which body format a client gets (`Accept`) and which one it sent
//! (`Content-Type`).
//!
//! The rules are the contract of DESIGN.md §1: the spec's default is XML, `application/json`
//! and `application/*` select JSON, the three XML types select XML, and a request whose
//! `Accept` names nothing we can produce is refused with 406 (the original meant to do this
//! and sent a 500 by accident).

use http::HeaderMap;
use http::header::{ACCEPT, CONTENT_TYPE};

use super::error::ApiError;
use crate::context::profile::Profile;

/// A body format the gateway can read and write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Json,
    Xml,
}

impl Format {
    /// The `Content-Type` of a response in this format. The original always answered
    /// `application/xml` for XML, even when `text/xml` was asked for; clients rely on that.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Json => "application/json; charset=utf-8",
            Format::Xml => "application/xml; charset=utf-8",
        }
    }

    /// A short stable name, used in cache keys and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Xml => "xml",
        }
    }

    /// The format of a media type we accept in a request or can produce in a response.
    fn of_media_type(media: &str) -> Option<Format> {
        match media {
            "application/json" => Some(Format::Json),
            "application/xml" | "text/xml" | "application/xhtml+xml" => Some(Format::Xml),
            _ => None,
        }
    }
}

/// Picks the response format from the `Accept` header.
///
/// Entries are ordered by their q-value (highest first, ties keep their order); the first
/// one we can serve wins. `q=0` means "not acceptable". `*/*` and a missing header give the
/// spec's default, XML. `text/*` gives XML too, the only text type we produce.
/// The outcome of [`negotiate_response`] for a request, worked out once (by the caller
/// layer) and left in its extensions for the layers after it.
#[derive(Debug, Clone)]
pub struct Negotiated(pub Result<Format, ApiError>);

pub fn negotiate_response(headers: &HeaderMap) -> Result<Format, ApiError> {
    // One look-up of the header for everything below (each costs a hash of its name).
    let accept = headers.get_all(ACCEPT);
    let mut values = accept.iter();
    let Some(first) = values.next() else {
        return Ok(if Profile::current().missing_accept_is_json() {
            Format::Json
        } else {
            Format::Xml
        });
    };
    // The usual header, one media type alone in lower case (`application/json`): what the
    // list below would make of it, without building the list.
    if values.next().is_none() {
        // The spellings almost every client sends, compared byte for byte: no pass over the
        // text to check it first (every request negotiates; issue 23).
        match first.as_bytes() {
            b"application/json" => return Ok(Format::Json),
            b"application/xml" | b"text/xml" => return Ok(Format::Xml),
            _ => {}
        }
        if let Some(media) = single_media_type(first)
            && let Some(answer) = answer_for(media)
        {
            return Ok(answer);
        }
    }
    // Several Accept headers are one comma-separated list (RFC 9110 §5.3).
    let mut entries: Vec<(f32, usize, String)> = Vec::new();
    for value in accept.iter() {
        let Ok(text) = value.to_str() else {
            continue;
        };
        for raw in text.split(',') {
            let mut parts = raw.split(';');
            let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            if media.is_empty() {
                continue;
            }
            let mut q = 1.0_f32;
            for param in parts {
                let Some((name, val)) = param.split_once('=') else {
                    continue;
                };
                if name.trim().eq_ignore_ascii_case("q") {
                    // A q-value we cannot read makes the entry unusable, not the request.
                    q = val.trim().parse::<f32>().unwrap_or(-1.0);
                }
            }
            if (0.0..=1.0).contains(&q) && q > 0.0 {
                let order = entries.len();
                entries.push((q, order, media));
            }
        }
    }
    entries.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    for (_, _, media) in &entries {
        if let Some(format) = answer_for(media) {
            return Ok(format);
        }
    }
    Err(ApiError::not_acceptable())
}

/// The format a media range (lower case, no parameters) asks for, if we serve one.
fn answer_for(media: &str) -> Option<Format> {
    if let Some(format) = Format::of_media_type(media) {
        return Some(format);
    }
    match media {
        "*/*" | "*" => Some(if Profile::current().any_media_type_is_json() {
            Format::Json
        } else {
            Format::Xml
        }),
        "application/*" => Some(Format::Json),
        "text/*" => Some(Format::Xml),
        _ => None,
    }
}

/// The media type of an `Accept` header (the request's only one) naming one media type,
/// without parameters, already in lower case: the list [`negotiate_response`] builds would
/// hold it alone, with q=1.
fn single_media_type(value: &http::HeaderValue) -> Option<&str> {
    let text = value.to_str().ok()?;
    // One pass over the bytes: no list, no parameters, no upper case.
    if text
        .bytes()
        .any(|b| b == b',' || b == b';' || b.is_ascii_uppercase())
    {
        return None;
    }
    let media = text.trim();
    (!media.is_empty()).then_some(media)
}

/// Picks the format of a request body from `Content-Type`, with the original's messages.
///
/// `default` is the operation's format when the header is absent (JSON for products, XML
/// elsewhere). Only `charset=utf-8` is accepted as a parameter; anything else about the
/// header is a 400, never a guess.
pub fn negotiate_request(headers: &HeaderMap, default: Format) -> Result<Format, ApiError> {
    let absent = || match Profile::current().content_type_required() {
        true => Err(ApiError::bad_request("Content-Type header is empty")),
        false => Ok(default),
    };
    let Some(value) = headers.get(CONTENT_TYPE) else {
        return absent();
    };
    let text = value
        .to_str()
        .map_err(|_| ApiError::bad_request("Invalid Content-Type header"))?
        .trim();
    if text.is_empty() {
        return absent();
    }
    let mut parts = text.split(';');
    let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    if media.is_empty()
        || !media
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/-+.".contains(&b))
    {
        return Err(ApiError::bad_request("Invalid Content-Type header"));
    }
    for param in parts {
        let param = param.trim();
        if param.is_empty() {
            continue;
        }
        let Some((name, val)) = param.split_once('=') else {
            return Err(ApiError::bad_request("Invalid Content-Type header"));
        };
        if !name.trim().eq_ignore_ascii_case("charset") {
            return Err(ApiError::bad_request("Invalid Content-Type header"));
        }
        let charset = val.trim().trim_matches('"');
        if !charset.eq_ignore_ascii_case("utf-8") {
            return Err(ApiError::bad_request("UTF-8 is the only supported charset"));
        }
    }
    Format::of_media_type(&media).ok_or_else(|| {
        ApiError::bad_request(format!(
            "Server can not understand Content-Type HTTP header media type \"{media}\""
        ))
    })
}

/// Whether the client is a browser asking for a page: `text/html` named with a q-value
/// above zero.
pub fn wants_html(headers: &HeaderMap) -> bool {
    headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|entry| {
            let mut parts = entry.split(';');
            let media = parts.next().unwrap_or("").trim();
            let q = parts
                .filter_map(|p| p.split_once('='))
                .find(|(name, _)| name.trim().eq_ignore_ascii_case("q"))
                .map_or(1.0, |(_, v)| v.trim().parse::<f32>().unwrap_or(0.0));
            media.eq_ignore_ascii_case("text/html") && q > 0.0
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn accept(value: &str) -> Result<Format, ApiError> {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_str(value).unwrap());
        negotiate_response(&headers)
    }

    fn content_type(value: &str) -> Result<Format, ApiError> {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_str(value).unwrap());
        negotiate_request(&headers, Format::Xml)
    }

    #[test]
    fn missing_accept_and_wildcard_give_xml() {
        assert_eq!(negotiate_response(&HeaderMap::new()).unwrap(), Format::Xml);
        assert_eq!(accept("*/*").unwrap(), Format::Xml);
        assert_eq!(accept("text/*").unwrap(), Format::Xml);
    }

    #[test]
    fn json_and_application_wildcard_give_json() {
        assert_eq!(accept("application/json").unwrap(), Format::Json);
        assert_eq!(accept("application/*").unwrap(), Format::Json);
        assert_eq!(accept("Application/JSON; q=0.5").unwrap(), Format::Json);
    }

    #[test]
    fn q_values_order_the_choice() {
        assert_eq!(
            accept("application/xml;q=0.4, application/json;q=0.9").unwrap(),
            Format::Json
        );
        assert_eq!(
            accept("application/json;q=0, text/xml").unwrap(),
            Format::Xml
        );
        // A browser's header: xhtml+xml comes first.
        assert_eq!(
            accept("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8").unwrap(),
            Format::Xml
        );
    }

    #[test]
    fn nothing_acceptable_is_406() {
        let err = accept("image/png").unwrap_err();
        assert_eq!(err.status().as_u16(), 406);
        let err = accept("application/json;q=0").unwrap_err();
        assert_eq!(err.status().as_u16(), 406);
        assert!(accept("text/html, image/*;q=abc").is_err());
    }

    #[test]
    fn request_types_and_charsets() {
        assert_eq!(
            negotiate_request(&HeaderMap::new(), Format::Json).unwrap(),
            Format::Json
        );
        assert_eq!(content_type("application/json").unwrap(), Format::Json);
        assert_eq!(
            content_type("text/xml; charset=UTF-8").unwrap(),
            Format::Xml
        );
        let err = content_type("application/json; charset=latin1").unwrap_err();
        assert_eq!(err.first_message(), "UTF-8 is the only supported charset");
        let err = content_type("multipart/form-data; boundary=x").unwrap_err();
        assert_eq!(err.first_message(), "Invalid Content-Type header");
        let err = content_type("application/x-www-form-urlencoded").unwrap_err();
        assert_eq!(
            err.first_message(),
            "Server can not understand Content-Type HTTP header media type \"application/x-www-form-urlencoded\""
        );
        let err = content_type("not a type").unwrap_err();
        assert_eq!(err.first_message(), "Invalid Content-Type header");
    }
}
