//! The checks of a signed request, in the original's order, and the URL the client signed.
//!
//! Order (Mage_Oauth's server): version, required parameters, signature method, timestamp,
//! consumer, token, signature; the nonce is claimed last, once the signature is known good,
//! so a forged request cannot use up a nonce a real client will send.

use std::net::IpAddr;

use http::HeaderMap;
use ipnet::IpNet;

use super::OAuth;
use super::nonce::{self, FUTURE_SKEW, PAST_WINDOW};
use super::params::Collected;
use super::problem::Problem;
use super::signature::{self, Method, Order};
use super::store::{Consumer, Kind, Token, now_secs};

/// A request as the signature sees it.
#[derive(Debug)]
pub struct SignedRequest {
    pub method: http::Method,
    /// The base URIs the client may have signed (with and without the port).
    pub base_uris: Vec<String>,
    pub params: Collected,
}

/// What a request must carry besides the consumer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// `/oauth/initiate`: the consumer's secret alone.
    Consumer,
    /// `/oauth/token`: an authorized request token and its verifier.
    RequestToken,
    /// An API call: an access token.
    AccessToken,
}

#[derive(Debug)]
pub struct Verified {
    pub consumer: Consumer,
    pub token: Option<Token>,
}

impl SignedRequest {
    fn required(&self, name: &'static str) -> Result<&str, Problem> {
        match self.params.get(name) {
            Some(value) if !value.is_empty() => Ok(value),
            _ => Err(Problem::ParameterAbsent(name)),
        }
    }
}

/// The scheme and host the client used: its `Host` header and plain HTTP, or, from a
/// trusted proxy, `X-Forwarded-Proto` / `X-Forwarded-Host`.
pub fn client_origin(
    headers: &HeaderMap,
    peer: Option<IpAddr>,
    trusted: &[IpNet],
) -> (String, String) {
    let first = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let from_proxy = peer.is_some_and(|peer| {
        let peer = match peer {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(peer, IpAddr::V4),
            v4 => v4,
        };
        trusted.iter().any(|net| net.contains(&peer))
    });
    let mut scheme = "http".to_owned();
    let mut host = first("host").unwrap_or_default();
    if from_proxy {
        if let Some(proto) = first("x-forwarded-proto")
            .map(|p| p.to_ascii_lowercase())
            .filter(|p| p == "http" || p == "https")
        {
            scheme = proto;
        }
        if let Some(forwarded) = first("x-forwarded-host") {
            host = forwarded;
        }
    }
    (scheme, host)
}

/// The base URIs for a host header value: as sent, and without its port (the original
/// signed without it, and clients written against it do too).
pub fn base_uris(scheme: &str, host: &str, path: &str) -> Vec<String> {
    let (name, port) = split_host(host);
    let mut uris = vec![signature::base_uri(scheme, name, port, path)];
    if port.is_some() {
        let bare = signature::base_uri(scheme, name, None, path);
        if !uris.contains(&bare) {
            uris.push(bare);
        }
    }
    uris
}

/// `host:port`, `[v6]:port` or a bare host.
fn split_host(host: &str) -> (&str, Option<u16>) {
    if let Some(rest) = host.strip_prefix('[') {
        if let Some((addr, after)) = rest.split_once(']') {
            let port = after.strip_prefix(':').and_then(|p| p.parse().ok());
            return (&host[..addr.len() + 2], port);
        }
        return (host, None);
    }
    match host.rsplit_once(':') {
        Some((name, port)) if !name.contains(':') => match port.parse() {
            Ok(port) => (name, Some(port)),
            Err(_) => (host, None),
        },
        _ => (host, None),
    }
}

/// Every base string the client may have signed: each base URI ([`base_uris`]) with the
/// parameters in byte order (RFC 5849) and, when it differs, in natural order (Magento 1.9's
/// `strnatcmp`, [`super::natural`]). The checks around the signature (timestamp, nonce,
/// token) are the same whichever order verifies: the nonce is claimed once, after.
pub fn candidate_bases(request: &SignedRequest) -> Vec<String> {
    let bytes = signature::normalized(&request.params.signed, Order::Bytes);
    let natural = signature::normalized(&request.params.signed, Order::Natural);
    let mut orders = vec![bytes];
    if natural != orders[0] {
        orders.push(natural);
    }
    let method = request.method.as_str();
    request
        .base_uris
        .iter()
        .flat_map(|uri| {
            orders
                .iter()
                .map(move |normalized| signature::base_string_of(method, uri, normalized))
        })
        .collect()
}

impl OAuth {
    /// Runs every check; on success the consumer and the token the request used.
    pub async fn verify(
        &self,
        request: &SignedRequest,
        expect: Expect,
    ) -> Result<Verified, Problem> {
        if let Some(version) = request.params.get("oauth_version")
            && version != "1.0"
        {
            return Err(Problem::VersionRejected);
        }
        let consumer_key = request.required("oauth_consumer_key")?;
        let method_name = request.required("oauth_signature_method")?;
        let presented = request.required("oauth_signature")?;
        let method = Method::parse(method_name)?;

        // PLAINTEXT may leave nonce and timestamp out (RFC 5849 §3.1); when sent they count.
        let plaintext = method == Method::Plaintext;
        let timestamp = match request.params.get("oauth_timestamp") {
            None | Some("") if plaintext => None,
            _ => Some(request.required("oauth_timestamp")?),
        };
        let nonce = match request.params.get("oauth_nonce") {
            None | Some("") if plaintext => None,
            _ => Some(request.required("oauth_nonce")?),
        };
        if let Some(timestamp) = timestamp {
            let value: i64 = timestamp.parse().map_err(|_| Problem::TimestampRefused)?;
            if !nonce::timestamp_ok(value, now_secs()) {
                return Err(Problem::TimestampRefused);
            }
        }

        let consumer = self
            .verified
            .consumer(&*self.store, consumer_key)
            .await?
            .ok_or(Problem::ConsumerKeyRejected)?;

        let token = match expect {
            Expect::Consumer => None,
            Expect::RequestToken => {
                let value = request.required("oauth_token")?;
                let verifier = request.required("oauth_verifier")?;
                let token = self
                    .store
                    .token(value)
                    .await?
                    .filter(|t| {
                        t.kind == Kind::Request
                            && t.consumer_id == consumer.id
                            && t.authorized
                            && t.owner.is_some()
                    })
                    .ok_or(Problem::TokenRejected)?;
                let expected = token.verifier.as_deref().unwrap_or("");
                if !bool::from(subtle::ConstantTimeEq::ct_eq(
                    expected.as_bytes(),
                    verifier.as_bytes(),
                )) {
                    return Err(Problem::TokenRejected);
                }
                Some(token)
            }
            Expect::AccessToken => {
                let value = request.required("oauth_token")?;
                let token = self
                    .verified
                    .access_token(&*self.store, value)
                    .await?
                    .filter(|t| {
                        t.kind == Kind::Access
                            && t.consumer_id == consumer.id
                            && !t.revoked
                            && t.owner.is_some()
                    })
                    .ok_or(Problem::TokenRejected)?;
                if let Some(ttl) = self.token_ttl
                    && now_secs() >= token.created_at.saturating_add(ttl.as_secs() as i64)
                {
                    return Err(Problem::TokenExpired);
                }
                Some(token)
            }
        };

        let bases = candidate_bases(request);
        let token_secret = token.as_ref().map_or("", |t| t.secret.as_str());
        if !signature::verify(method, &bases, &consumer.secret, token_secret, presented) {
            return Err(Problem::SignatureInvalid);
        }

        if let Some(nonce) = nonce {
            let claimed = self
                .nonces
                .claim_once(
                    &nonce::nonce_key(&consumer.key, nonce),
                    FUTURE_SKEW + PAST_WINDOW,
                )
                .await?;
            if !claimed {
                return Err(Problem::NonceUsed);
            }
        }
        Ok(Verified { consumer, token })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn hosts_and_ports() {
        assert_eq!(
            base_uris("http", "Shop.example:8081", "/api/rest/products"),
            vec![
                "http://shop.example:8081/api/rest/products".to_owned(),
                "http://shop.example/api/rest/products".to_owned()
            ]
        );
        assert_eq!(base_uris("http", "shop:80", "/p"), vec!["http://shop/p"]);
        assert_eq!(
            base_uris("http", "[::1]:8080", "/p"),
            vec!["http://[::1]:8080/p", "http://[::1]/p"]
        );
        assert_eq!(base_uris("https", "shop", "/p"), vec!["https://shop/p"]);
    }

    #[test]
    fn forwarded_headers_only_from_trusted_peers() {
        let mut headers = HeaderMap::new();
        headers.insert("host", HeaderValue::from_static("10.0.0.5:8080"));
        headers.insert("x-forwarded-proto", HeaderValue::from_static("https"));
        headers.insert(
            "x-forwarded-host",
            HeaderValue::from_static("shop.example, inner"),
        );
        let trusted: Vec<IpNet> = vec!["10.0.0.0/8".parse().unwrap()];
        assert_eq!(
            client_origin(&headers, Some("10.1.2.3".parse().unwrap()), &trusted),
            ("https".to_owned(), "shop.example".to_owned())
        );
        assert_eq!(
            client_origin(&headers, Some("::ffff:10.1.2.3".parse().unwrap()), &trusted),
            ("https".to_owned(), "shop.example".to_owned())
        );
        assert_eq!(
            client_origin(&headers, Some("192.0.2.1".parse().unwrap()), &trusted),
            ("http".to_owned(), "10.0.0.5:8080".to_owned())
        );
        assert_eq!(
            client_origin(&headers, None, &trusted),
            ("http".to_owned(), "10.0.0.5:8080".to_owned())
        );
    }
}
