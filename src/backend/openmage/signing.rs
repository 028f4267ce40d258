//! OpenMage's OAuth 1.0a signature of the gateway's own calls: the `Authorization` header
//! as the store checks it (its base URL without the port, the query read as PHP reads it).
//! Apart from the client so that the recorder's wire (`endpoint.rs`) signs a live call for
//! drift and re-recording the same way, without importing the client.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use http::Method;
use percent_encoding::percent_decode_str;

use crate::auth::oauth::signature;

/// The keys one call is signed with.
pub(super) struct Keys<'a> {
    pub consumer_key: &'a str,
    pub consumer_secret: &'a str,
    pub token: &'a str,
    pub token_secret: &'a str,
}

/// `scheme://host[/path]` of the store's base URL, without the port, lower case: what
/// OpenMage signs with. It rebuilds the URL of a request from `getScheme()`, `getHttpHost()`
/// (which in Magento 1 trims the port) and the request URI, so a store on port 8081 checks
/// the signature of `http://host/api/rest/...`. On 80 and 443 that is RFC 5849's base URI
/// too. A base that is not an http(s) URL (`replay:DIR`) is kept as it is: nothing checks it.
pub(super) fn signing_base(base: &str) -> String {
    let base = base.trim_end_matches('/');
    match reqwest::Url::parse(base) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host_str().is_some() => {
            format!(
                "{}://{}{}",
                url.scheme(),
                url.host_str().unwrap_or_default().to_ascii_lowercase(),
                url.path().trim_end_matches('/')
            )
        }
        _ => base.to_owned(),
    }
}

/// The `Authorization: OAuth ...` value of one call: HMAC-SHA1 over the method, `uri` and
/// the protocol and query parameters (RFC 5849 §3.4.1.3), the query read as the store
/// reads it ([`as_the_store_reads`]).
pub(super) fn authorization(
    method: &Method,
    uri: &str,
    query: &[(String, String)],
    keys: &Keys<'_>,
    nonce: &str,
    timestamp: u64,
) -> String {
    let timestamp = timestamp.to_string();
    let protocol = [
        ("oauth_consumer_key", keys.consumer_key),
        ("oauth_nonce", nonce),
        ("oauth_signature_method", "HMAC-SHA1"),
        ("oauth_timestamp", timestamp.as_str()),
        ("oauth_token", keys.token),
        ("oauth_version", "1.0"),
    ];
    let mut signed: Vec<(String, String)> = protocol
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    signed.extend(as_the_store_reads(query));
    let base = signature::base_string(method.as_str(), uri, &signed);
    let signature = signature::sign(
        signature::Method::HmacSha1,
        &base,
        keys.consumer_secret,
        keys.token_secret,
    );
    let mut header = String::from("OAuth ");
    for (i, (name, value)) in protocol
        .iter()
        .copied()
        .chain(std::iter::once(("oauth_signature", signature.as_str())))
        .enumerate()
    {
        if i > 0 {
            header.push_str(", ");
        }
        header.push_str(name);
        header.push_str("=\"");
        header.push_str(&signature::encode(value));
        header.push('"');
    }
    header
}

/// The query parameters as OpenMage puts them in the base string. It splits the raw query
/// on `&` and `=` and decodes each side with PHP's `rawurldecode`, which leaves `+` alone:
/// a space, sent as `+` by the form encoding the transport uses, is signed as `+`. It
/// keeps one value per name (the last), and leaves out names that look like protocol
/// parameters (`oauth_...` anywhere in the name).
pub(super) fn as_the_store_reads(query: &[(String, String)]) -> Vec<(String, String)> {
    fn reread(text: &str) -> String {
        let sent: String = form_urlencoded::byte_serialize(text.as_bytes()).collect();
        percent_decode_str(&sent).decode_utf8_lossy().into_owned()
    }
    fn protocol(name: &str) -> bool {
        name.match_indices("oauth_").any(|(at, _)| {
            name[at + 6..]
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_lowercase() || b == b'_' || b == b'-')
        })
    }
    let mut by_name = BTreeMap::new();
    for (name, value) in query {
        let name = reread(name);
        if !protocol(&name) {
            by_name.insert(name, reread(value));
        }
    }
    by_name.into_iter().collect()
}

/// 32 hex digits: the store keeps nonces in a `VARCHAR(32)`.
pub(super) fn nonce() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random generator");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(super) fn timestamp() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
