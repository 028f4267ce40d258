//! Who a client is and what a request does, as far as limits go: the [`Client`] (a guest's
//! address, a customer, a consumer, an admin key), the route class of a method and path,
//! and the names a budget is known by (a keyed digest: never an address, key or token in
//! Redis or in an answer).

use std::net::IpAddr;

use base64::Engine;
use hmac::{Hmac, Mac};
use http::{HeaderMap, Method};
use ipnet::IpNet;
use sha2::Sha256;

use crate::config::{ClientKind, Rate, RouteClass};

/// One client: its kind and who it is within the kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Client {
    pub kind: ClientKind,
    /// A guest's address (IPv4 as its IPv4-mapped IPv6 form; IPv6 by its /64, the block
    /// one subscriber gets), a customer's or consumer's id, an admin key's place in the
    /// configuration.
    pub id: u128,
}

impl Client {
    pub fn guest(address: IpAddr) -> Client {
        let id = match address {
            IpAddr::V4(v4) => u128::from(v4.to_ipv6_mapped()),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => u128::from(v4.to_ipv6_mapped()),
                None => u128::from(v6) & !((1u128 << 64) - 1),
            },
        };
        Client {
            kind: ClientKind::Guest,
            id,
        }
    }

    pub fn customer(id: u64) -> Client {
        Client {
            kind: ClientKind::Customer,
            id: u128::from(id),
        }
    }

    pub fn consumer(id: i64) -> Client {
        Client {
            kind: ClientKind::Consumer,
            id: id as u64 as u128,
        }
    }

    pub fn admin(key: usize) -> Client {
        Client {
            kind: ClientKind::Admin,
            id: key as u128,
        }
    }
}

/// The client's address: the peer's, or, when the peer is a trusted proxy
/// (`STOREGATE_TRUSTED_PROXIES`), the nearest address in `X-Forwarded-For` that is not one
/// of the trusted proxies. A header from any other peer is ignored: anyone can write one.
pub fn client_address(
    headers: &HeaderMap,
    peer: Option<IpAddr>,
    trusted: &[IpNet],
) -> Option<IpAddr> {
    let peer = peer.map(plain)?;
    let is_trusted = |address: IpAddr| trusted.iter().any(|net| net.contains(&address));
    if trusted.is_empty() || !is_trusted(peer) {
        return Some(peer);
    }
    let mut nearest = peer;
    // Read from the right: each proxy appends the address it got the request from, so
    // only the entries our own proxies wrote can be believed.
    let hops = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .collect::<Vec<_>>();
    for hop in hops.into_iter().rev() {
        let Some(address) = parse_hop(hop) else {
            // Garbage where an address belongs: the proxy behind it cannot be trusted
            // to have written it; the last good address is the client.
            break;
        };
        nearest = address;
        if !is_trusted(address) {
            break;
        }
    }
    Some(nearest)
}

/// An `X-Forwarded-For` entry: an address, maybe with a port (`1.2.3.4:5678`,
/// `[2001:db8::1]:443`).
fn parse_hop(hop: &str) -> Option<IpAddr> {
    if let Ok(address) = hop.parse::<IpAddr>() {
        return Some(plain(address));
    }
    if let Ok(socket) = hop.parse::<std::net::SocketAddr>() {
        return Some(plain(socket.ip()));
    }
    None
}

/// IPv4-mapped IPv6 addresses as IPv4 (a dual-stack socket's view of an IPv4 peer).
fn plain(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        v4 => v4,
    }
}

/// The route class of an API request, None for what no limit counts: paths outside
/// `/api/rest/` (the operational endpoints, the OAuth dance) and the API's own reference.
/// Bytes, not `str::split`: it runs on every request of every cache hit.
pub fn class_of(method: &Method, path: &str) -> Option<RouteClass> {
    let rest = path.as_bytes().strip_prefix(b"/api/rest/")?;
    let first = match rest.iter().position(|&b| b == b'/') {
        Some(end) => &rest[..end],
        None => rest,
    };
    let read = method == Method::GET || method == Method::HEAD;
    let write = method == Method::POST
        || method == Method::PUT
        || method == Method::DELETE
        || method == Method::PATCH;
    match first {
        b"openapi.json" | b"docs" => None,
        _ if write => Some(RouteClass::Writes),
        b"customers" | b"orders" | b"oauth" | b"auth" if read => Some(RouteClass::Account),
        _ if read => Some(RouteClass::Catalog),
        _ => None,
    }
}

/// Names budgets and sign-in windows by a keyed digest, the same on every instance that
/// shares the token secret.
#[derive(Clone)]
pub struct Names {
    key: Vec<u8>,
}

impl std::fmt::Debug for Names {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Names([redacted])")
    }
}

impl Names {
    pub fn new(secret: &[u8]) -> Names {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key");
        mac.update(b"storegate rate limits");
        Names {
            key: mac.finalize().into_bytes().to_vec(),
        }
    }

    /// Twelve bytes of a keyed digest of `parts`.
    pub fn digest(&self, parts: &[&[u8]]) -> [u8; 12] {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key");
        for part in parts {
            mac.update(&(part.len() as u32).to_be_bytes());
            mac.update(part);
        }
        let full = mac.finalize().into_bytes();
        let mut out = [0u8; 12];
        out.copy_from_slice(&full[..12]);
        out
    }

    /// The digest of a client's budget on a class at a rate's window.
    pub fn budget(&self, client: Client, class: RouteClass, rate: Rate) -> [u8; 12] {
        self.digest(&[
            client.kind.as_str().as_bytes(),
            class.as_str().as_bytes(),
            &rate.window_secs().to_be_bytes(),
            &client.id.to_be_bytes(),
        ])
    }
}

/// A digest as the `pk` parameter writes it: a structured-field byte sequence.
pub fn partition_key(digest: &[u8; 12]) -> String {
    format!(
        ":{}:",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// A digest as hex, for Redis keys.
pub fn hex(digest: &[u8; 12]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn with_xff(value: &str) -> HeaderMap {
        let forwarded = http::HeaderName::from_static("x-forwarded-for");
        HeaderMap::from_iter([(forwarded, HeaderValue::from_str(value).unwrap())])
    }

    #[test]
    fn forwarded_addresses_only_from_trusted_proxies() {
        let trusted: Vec<IpNet> = vec!["10.0.0.0/8".parse().unwrap()];
        let headers = with_xff("203.0.113.9, 198.51.100.7, 10.0.0.2");
        // The client `headers` name, through `trusted` proxies, on a connection from `peer`.
        let client = |headers: &HeaderMap, peer: &str, trusted: &[IpNet]| {
            client_address(headers, Some(peer.parse().unwrap()), trusted)
                .unwrap()
                .to_string()
        };
        let from = |peer: &str| client(&headers, peer, &trusted);
        // From our proxy: the nearest address our proxies did not write.
        assert_eq!(from("10.1.2.3"), "198.51.100.7");
        assert_eq!(from("::ffff:10.1.2.3"), "198.51.100.7");
        // From anyone else: the header is a forgery, the peer is the client.
        assert_eq!(from("192.0.2.1"), "192.0.2.1");
        assert_eq!(client(&headers, "10.1.2.3", &[]), "10.1.2.3");
        // Garbage, ports, and a chain of nothing but proxies.
        let odd = with_xff("not-an-ip, 198.51.100.7:4711");
        assert_eq!(client(&odd, "10.0.0.1", &trusted), "198.51.100.7");
        let proxies = with_xff("10.9.9.9");
        assert_eq!(client(&proxies, "10.0.0.1", &trusted), "10.9.9.9");
        assert!(client_address(&headers, None, &trusted).is_none());
    }

    #[test]
    fn guests_by_address_and_ipv6_by_block() {
        let a = Client::guest("2001:db8:1:2::1".parse().unwrap());
        let b = Client::guest("2001:db8:1:2:ffff::9".parse().unwrap());
        let c = Client::guest("2001:db8:1:3::1".parse().unwrap());
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(
            Client::guest("192.0.2.1".parse().unwrap()),
            Client::guest("::ffff:192.0.2.1".parse().unwrap())
        );
    }

    #[test]
    fn route_classes() {
        let get = Method::GET;
        for (method, path, class) in [
            (&get, "/api/rest/products/1", RouteClass::Catalog),
            (&get, "/api/rest/stockitems", RouteClass::Catalog),
            (&get, "/api/rest/customers/1", RouteClass::Account),
            (&get, "/api/rest/orders", RouteClass::Account),
            (&Method::POST, "/api/rest/auth/token", RouteClass::Writes),
            (&Method::DELETE, "/api/rest/products/1", RouteClass::Writes),
        ] {
            assert_eq!(class_of(method, path), Some(class), "{method} {path}");
        }
        assert_eq!(class_of(&get, "/api/rest/openapi.json"), None);
        assert_eq!(class_of(&get, "/healthz"), None);
        assert_eq!(class_of(&Method::OPTIONS, "/api/rest/products"), None);
    }

    #[test]
    fn names_are_digests() {
        let names = Names::new(b"secret");
        let rate = Rate::parse("20/10s").unwrap();
        let one = names.budget(Client::customer(1), RouteClass::Catalog, rate);
        assert_ne!(
            one,
            names.budget(Client::customer(2), RouteClass::Catalog, rate)
        );
        assert_ne!(
            one,
            names.budget(Client::customer(1), RouteClass::Writes, rate)
        );
        assert_ne!(
            one,
            Names::new(b"other").budget(Client::customer(1), RouteClass::Catalog, rate)
        );
        assert_eq!(partition_key(&one).len(), 18);
        assert_eq!(hex(&one).len(), 24);
    }
}
