//! OAuth 1.0a signatures (RFC 5849 §3.4): the base string and the three methods.
//!
//! Written here rather than taken from a crate: the Rust OAuth 1 crates are clients that
//! sign requests they build themselves; a provider must rebuild the base string of a request
//! someone else built, from its raw parts. The digests are the RustCrypto crates (`hmac`,
//! `sha1`, `sha2`), comparison is constant-time (`subtle`).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use subtle::ConstantTimeEq;

use super::problem::Problem;

/// RFC 3986 unreserved characters stay; everything else is `%XX` (RFC 5849 §3.6).
const RESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

pub fn encode(text: &str) -> String {
    utf8_percent_encode(text, RESERVED).to_string()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    HmacSha1,
    HmacSha256,
    Plaintext,
}

impl Method {
    pub fn parse(name: &str) -> Result<Method, Problem> {
        match name {
            "HMAC-SHA1" => Ok(Method::HmacSha1),
            "HMAC-SHA256" => Ok(Method::HmacSha256),
            "PLAINTEXT" => Ok(Method::Plaintext),
            "RSA-SHA1" => Err(Problem::SignatureMethodRejected { known: true }),
            _ => Err(Problem::SignatureMethodRejected { known: false }),
        }
    }
}

/// `scheme://host[:port]/path`, lower-case scheme and host, default ports left out
/// (RFC 5849 §3.4.1.2). `path` is sent as the client sent it (still percent-encoded).
pub fn base_uri(scheme: &str, host: &str, port: Option<u16>, path: &str) -> String {
    let scheme = scheme.to_ascii_lowercase();
    let host = host.to_ascii_lowercase();
    let default = matches!(
        (scheme.as_str(), port),
        ("http", Some(80)) | ("https", Some(443))
    );
    match port {
        Some(port) if !default => format!("{scheme}://{host}:{port}{path}"),
        _ => format!("{scheme}://{host}{path}"),
    }
}

/// How the encoded parameters are sorted before they are joined (RFC 5849 §3.4.1.3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// By byte value: RFC 5849, OpenMage since 19.4.0, every current client library.
    Bytes,
    /// By PHP's `strnatcmp`: Magento 1.9 and Zend Framework 1 ([`super::natural`]).
    Natural,
}

/// The normalized parameters: encoded, sorted in `order`, joined as `k=v&k=v`.
pub fn normalized(params: &[(String, String)], order: Order) -> String {
    let mut encoded: Vec<(String, String)> =
        params.iter().map(|(k, v)| (encode(k), encode(v))).collect();
    match order {
        Order::Bytes => encoded.sort(),
        Order::Natural => super::natural::sort_pairs(&mut encoded),
    }
    encoded
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// The signature base string of already normalized parameters.
pub fn base_string_of(method: &str, base_uri: &str, normalized: &str) -> String {
    format!(
        "{}&{}&{}",
        method.to_ascii_uppercase(),
        encode(base_uri),
        encode(normalized)
    )
}

/// The signature base string: method, base URI and the parameters in byte order.
pub fn base_string(method: &str, base_uri: &str, params: &[(String, String)]) -> String {
    base_string_of(method, base_uri, &normalized(params, Order::Bytes))
}

/// The signature a method gives for a base string and the two secrets.
pub fn sign(method: Method, base: &str, consumer_secret: &str, token_secret: &str) -> String {
    let key = format!("{}&{}", encode(consumer_secret), encode(token_secret));
    match method {
        Method::Plaintext => key,
        Method::HmacSha1 => {
            let mut mac = Hmac::<sha1::Sha1>::new_from_slice(key.as_bytes())
                .expect("HMAC takes keys of any length");
            mac.update(base.as_bytes());
            STANDARD.encode(mac.finalize().into_bytes())
        }
        Method::HmacSha256 => {
            let mut mac = Hmac::<sha2::Sha256>::new_from_slice(key.as_bytes())
                .expect("HMAC takes keys of any length");
            mac.update(base.as_bytes());
            STANDARD.encode(mac.finalize().into_bytes())
        }
    }
}

/// Whether `presented` is the signature of any of the base strings (the forms of the URL a
/// client may have signed). Every candidate is computed and compared in constant time.
pub fn verify(
    method: Method,
    bases: &[String],
    consumer_secret: &str,
    token_secret: &str,
    presented: &str,
) -> bool {
    bases
        .iter()
        .fold(subtle::Choice::from(0), |found, base| {
            let expected = sign(method, base, consumer_secret, token_secret);
            found | expected.as_bytes().ct_eq(presented.as_bytes())
        })
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn rfc5849_base_string() {
        // RFC 5849 §3.4.1.1's example request.
        let collected = super::super::params::collect(
            Some(
                r#"OAuth realm="Example", oauth_consumer_key="9djdj82h48djs9d2", oauth_token="kkk9d7dh3k39sjv7", oauth_signature_method="HMAC-SHA1", oauth_timestamp="137131201", oauth_nonce="7d8f3e4a", oauth_signature="bYT5CMsGcbgUdFHObYMEfcx6bsw%3D""#,
            ),
            Some("b5=%3D%253D&a3=a&c%40=&a2=r%20b"),
            Some(b"c2&a3=2+q"),
        );
        let uri = base_uri("HTTP", "EXAMPLE.com", Some(80), "/request");
        assert_eq!(
            base_string("post", &uri, &collected.signed),
            "POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7"
        );
    }

    #[test]
    fn hmac_sha1_of_the_classic_example() {
        // The OAuth 1.0 specification's photos example (Appendix A.5).
        let params = pairs(&[
            ("file", "vacation.jpg"),
            ("size", "original"),
            ("oauth_consumer_key", "dpf43f3p2l4k3l03"),
            ("oauth_token", "nnch734d00sl2jdk"),
            ("oauth_signature_method", "HMAC-SHA1"),
            ("oauth_timestamp", "1191242096"),
            ("oauth_nonce", "kllo9940pd9333jh"),
            ("oauth_version", "1.0"),
        ]);
        let base = base_string(
            "GET",
            &base_uri("http", "photos.example.net", None, "/photos"),
            &params,
        );
        let signature = sign(
            Method::HmacSha1,
            &base,
            "kd94hf93k423kf44",
            "pfkkdhi9sl3r4s00",
        );
        assert_eq!(signature, "tR3+Ty81lMeYAr/Fid0kMTYa/WM=");
        assert!(verify(
            Method::HmacSha1,
            &["other".into(), base.clone()],
            "kd94hf93k423kf44",
            "pfkkdhi9sl3r4s00",
            &signature
        ));
        assert!(!verify(
            Method::HmacSha1,
            std::slice::from_ref(&base),
            "kd94hf93k423kf44",
            "wrong",
            &signature
        ));
        assert!(!verify(Method::HmacSha256, &[base], "a", "b", &signature));
    }

    #[test]
    fn plaintext_and_methods() {
        assert_eq!(sign(Method::Plaintext, "", "a&b", ""), "a%26b&");
        assert_eq!(Method::parse("HMAC-SHA256"), Ok(Method::HmacSha256));
        assert_eq!(
            Method::parse("RSA-SHA1"),
            Err(Problem::SignatureMethodRejected { known: true })
        );
        assert_eq!(
            Method::parse("hmac-sha1"),
            Err(Problem::SignatureMethodRejected { known: false })
        );
        assert_eq!(base_uri("https", "h", Some(8443), "/p"), "https://h:8443/p");
        assert_eq!(base_uri("https", "h", Some(443), "/p"), "https://h/p");
    }
}
