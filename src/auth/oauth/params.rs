//! Where a signed request's parameters come from (RFC 5849 §3.4.1.3 and §3.5).
//!
//! Protocol parameters (`oauth_*`) are read from the `Authorization: OAuth ...` header, then
//! from an `application/x-www-form-urlencoded` body, then from the query string (the
//! original's order), the first place naming a parameter winning. Whatever their source, the
//! signature base string covers the header's parameters (less `realm`), every query
//! parameter and every form body parameter, less `oauth_signature`.

use std::collections::HashMap;

use http::HeaderMap;
use http::header::{AUTHORIZATION, CONTENT_TYPE};
use percent_encoding::percent_decode_str;

/// The parameters of one request.
#[derive(Debug, Clone, Default)]
pub struct Collected {
    /// Protocol parameters by name, from the first source that had any.
    pub protocol: HashMap<String, String>,
    /// Every parameter the signature covers, decoded, in arrival order.
    pub signed: Vec<(String, String)>,
}

impl Collected {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.protocol.get(name).map(String::as_str)
    }
}

/// The `Authorization` header's value when its scheme is `OAuth` (case-insensitive).
pub fn oauth_header(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?.trim_start();
    let scheme = value.get(..5)?;
    (scheme.eq_ignore_ascii_case("oauth")
        && value[5..].chars().next().is_none_or(char::is_whitespace))
    .then_some(value)
}

/// Whether the request's body is a form whose fields are signed.
pub fn is_form(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| {
            t.trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        })
}

/// Whether a query string names an `oauth_*` parameter: a call signed in the query
/// (RFC 5849 §3.5.3), which must be verified rather than served as Guest. The substring
/// test first keeps the common case (no `oauth` anywhere) to one scan without decoding.
pub fn query_has_oauth(query: Option<&str>) -> bool {
    query.is_some_and(|q| {
        q.contains("oauth")
            && form_urlencoded::parse(q.as_bytes()).any(|(name, _)| name.starts_with("oauth_"))
    })
}

/// The query without its `oauth_*` parameters, the others kept byte for byte: once a
/// call is verified, the protocol parameters are no business of the resource (a list
/// would see unknown parameters, a cache one key per nonce).
pub fn strip_oauth_query(query: &str) -> String {
    query
        .split('&')
        .filter(|segment| {
            let name = segment.split('=').next().unwrap_or("");
            !form_urlencoded::parse(name.as_bytes())
                .next()
                .is_some_and(|(name, _)| name.starts_with("oauth_"))
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// `OAuth realm="x", oauth_consumer_key="k", ...`: the pairs, percent-decoded. Quoted
/// values are the norm; bare ones are accepted as some clients send them.
pub fn parse_header(value: &str) -> Vec<(String, String)> {
    let rest = value.trim_start().get(5..).unwrap_or("");
    let mut pairs = Vec::new();
    for item in split_items(rest) {
        let Some((name, raw)) = item.split_once('=') else {
            continue;
        };
        let name = name.trim();
        let raw = raw.trim();
        let raw = raw
            .strip_prefix('"')
            .and_then(|r| r.strip_suffix('"'))
            .unwrap_or(raw);
        if name.is_empty() {
            continue;
        }
        pairs.push((decode(name), decode(raw)));
    }
    pairs
}

/// Splits on commas outside quotes.
fn split_items(text: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let mut quoted = false;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                items.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&text[start..]);
    items
}

fn decode(text: &str) -> String {
    percent_decode_str(text).decode_utf8_lossy().into_owned()
}

/// `a=1&b=2` decoded the form way (`+` is a space), as RFC 5849 §3.4.1.3.1 says.
pub fn parse_form(text: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(text)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// Gathers the parameters. `header` is the `OAuth ...` value if any; `form` the body when
/// it is a form.
pub fn collect(header: Option<&str>, query: Option<&str>, form: Option<&[u8]>) -> Collected {
    let header_pairs: Vec<(String, String)> = header
        .map(parse_header)
        .unwrap_or_default()
        .into_iter()
        .filter(|(name, _)| name != "realm")
        .collect();
    let query_pairs = query.map(|q| parse_form(q.as_bytes())).unwrap_or_default();
    let form_pairs = form.map(parse_form).unwrap_or_default();

    // A parameter missing from the header may come from the body, then the query: the
    // original's documentation put `oauth_callback` in the initiate URL's query while the
    // client library signed in the header. Each of them is in the base string wherever it
    // came from, so taking it from there lets nothing unsigned in.
    let mut protocol = HashMap::new();
    for source in [&header_pairs, &form_pairs, &query_pairs] {
        for (name, value) in source {
            if name.starts_with("oauth_") {
                protocol
                    .entry(name.clone())
                    .or_insert_with(|| value.clone());
            }
        }
    }
    let signed = header_pairs
        .into_iter()
        .chain(query_pairs)
        .chain(form_pairs)
        .filter(|(name, _)| name != "oauth_signature")
        .collect();
    Collected { protocol, signed }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn header_pairs_are_decoded_and_realm_left_out() {
        let collected = collect(
            Some(
                r#"OAuth realm="Example", oauth_consumer_key="9djdj82h48djs9d2",oauth_nonce=7d8f3e4a, oauth_signature="bYT5CMsGcbgUdFHObYMEfcx6bsw%3D""#,
            ),
            Some("b5=%3D%253D&a3=a&c%40=&a2=r%20b"),
            Some(b"c2&a3=2+q"),
        );
        assert_eq!(
            collected.get("oauth_consumer_key"),
            Some("9djdj82h48djs9d2")
        );
        assert_eq!(collected.get("oauth_nonce"), Some("7d8f3e4a"));
        assert_eq!(
            collected.get("oauth_signature"),
            Some("bYT5CMsGcbgUdFHObYMEfcx6bsw=")
        );
        assert!(collected.signed.iter().all(|(n, _)| n != "realm"));
        assert!(collected.signed.iter().all(|(n, _)| n != "oauth_signature"));
        assert!(collected.signed.contains(&("a3".into(), "2 q".into())));
        assert!(collected.signed.contains(&("b5".into(), "=%3D".into())));
        assert!(collected.signed.contains(&("c2".into(), "".into())));
    }

    #[test]
    fn protocol_from_body_then_query() {
        let from_body = collect(None, Some("oauth_nonce=q"), Some(b"oauth_nonce=b"));
        assert_eq!(from_body.get("oauth_nonce"), Some("b"));
        let from_query = collect(None, Some("oauth_nonce=q"), None);
        assert_eq!(from_query.get("oauth_nonce"), Some("q"));
        // The header wins; what it lacks comes from the query.
        let mixed = collect(
            Some(r#"OAuth oauth_nonce="h""#),
            Some("oauth_nonce=q&oauth_callback=oob"),
            None,
        );
        assert_eq!(mixed.get("oauth_nonce"), Some("h"));
        assert_eq!(mixed.get("oauth_callback"), Some("oob"));
    }

    #[test]
    fn oauth_parameters_in_the_query() {
        assert!(!query_has_oauth(None));
        assert!(!query_has_oauth(Some("limit=2&page=1")));
        // A value naming oauth is not a parameter.
        assert!(!query_has_oauth(Some("filter[1][like]=oauth_x")));
        assert!(query_has_oauth(Some("a=1&oauth_token=t")));
        assert!(query_has_oauth(Some("oauth%5Fnonce=n")));
        assert_eq!(
            strip_oauth_query("x=a%20b&oauth_nonce=n&filter%5B1%5D=2&oauth%5Ftoken=t"),
            "x=a%20b&filter%5B1%5D=2"
        );
        assert_eq!(strip_oauth_query("oauth_nonce=n"), "");
    }

    #[test]
    fn only_the_oauth_scheme() {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, HeaderValue::from_static("OAuth a=\"b\""));
        assert!(oauth_header(&headers).is_some());
        headers.insert(AUTHORIZATION, HeaderValue::from_static("oauth a=\"b\""));
        assert!(oauth_header(&headers).is_some());
        headers.insert(AUTHORIZATION, HeaderValue::from_static("OAuthx a"));
        assert!(oauth_header(&headers).is_none());
        headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer x"));
        assert!(oauth_header(&headers).is_none());
    }
}
