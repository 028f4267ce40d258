//! The value parsers shared by the sections: addresses, URLs, sizes, numbers, digests,
//! origins and proxies.

use std::net::SocketAddr;

use super::sources::Raw;
use super::{ConfigError, CorsOrigins, REPLAY_SCHEME, Secret};

pub fn parse_listen(text: &str) -> Option<SocketAddr> {
    let text = text.trim();
    if let Ok(addr) = text.parse() {
        return Some(addr);
    }
    let port = text.strip_prefix("localhost:")?.parse::<u16>().ok()?;
    Some(SocketAddr::from(([127, 0, 0, 1], port)))
}

/// `*`, or a comma-separated list of origins (`scheme://host[:port]`, no path).
pub(super) fn parse_origins(text: &str) -> Result<CorsOrigins, &'static str> {
    let text = text.trim();
    match text.to_ascii_lowercase().as_str() {
        "" | "off" | "none" => return Ok(CorsOrigins::Off),
        "*" => return Ok(CorsOrigins::Any),
        _ => {}
    }
    let expected = "`*` or comma-separated origins such as https://app.example";
    let mut origins = Vec::new();
    for origin in text.split(',').map(str::trim).filter(|o| !o.is_empty()) {
        let origin = origin.trim_end_matches('/');
        let url = reqwest::Url::parse(origin).map_err(|_| expected)?;
        if !matches!(url.scheme(), "http" | "https")
            || url.host_str().is_none()
            || url.path() != "/"
            || url.query().is_some()
            || http::HeaderValue::from_str(origin).is_err()
        {
            return Err(expected);
        }
        origins.push(origin.to_owned());
    }
    Ok(CorsOrigins::List(origins))
}

/// `10.0.0.1, 192.168.0.0/16, ::1`: addresses or CIDR blocks.
pub(super) fn parse_proxies(r: &Raw) -> Result<Vec<ipnet::IpNet>, ConfigError> {
    let expected = "comma-separated IP addresses or CIDR blocks such as 10.0.0.0/8";
    r.value
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(|item| {
            item.parse::<ipnet::IpNet>()
                .or_else(|_| item.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                .map_err(|_| r.fail(expected))
        })
        .collect()
}

/// `redis://[user:password@]host[:port][/db]` or `rediss://` for TLS. Checked here so that a
/// typo stops the start; the message never quotes the value (it may hold a password).
pub(super) fn parse_redis_url(r: &Raw) -> Result<Secret, ConfigError> {
    let expected = "a redis:// or rediss:// URL such as redis://:password@127.0.0.1:6379/0";
    let text = r.value.trim();
    let url = reqwest::Url::parse(text).map_err(|_| r.fail(expected))?;
    if !matches!(url.scheme(), "redis" | "rediss") || url.host_str().is_none_or(str::is_empty) {
        return Err(r.fail(expected));
    }
    let db = url.path().trim_start_matches('/');
    if !db.is_empty() && db.parse::<u32>().is_err() {
        return Err(r.fail(expected));
    }
    Ok(Secret::new(text))
}

pub(super) fn number(r: &Raw, expected: &str) -> Result<u64, ConfigError> {
    r.value.trim().parse::<u64>().map_err(|_| r.fail(expected))
}

pub(super) fn positive(r: &Raw, expected: &str) -> Result<u64, ConfigError> {
    match number(r, expected)? {
        0 => Err(r.fail(expected)),
        n => Ok(n),
    }
}

pub(super) fn parse_url(r: &Raw) -> Result<String, ConfigError> {
    let text = r.value.trim().trim_end_matches('/');
    if let Some(dir) = text.strip_prefix(REPLAY_SCHEME) {
        if dir.is_empty() {
            return Err(r.fail("replay:DIR with a cassette folder"));
        }
        return Ok(text.to_owned());
    }
    let url = reqwest::Url::parse(text).map_err(|_| r.fail("an http:// or https:// URL"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(r.fail("an http:// or https:// URL"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(r.fail("a base URL without query or fragment"));
    }
    Ok(text.to_owned())
}

pub(super) fn parse_sha256(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(i * 2..i * 2 + 2)?, 16).ok()?;
    }
    Some(out)
}

/// `268435456`, `256MiB`, `256 MB`, `1GiB`, `512k`.
pub fn parse_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits.parse().ok()?;
    let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1024,
        "m" | "mb" | "mib" => 1024 * 1024,
        "g" | "gb" | "gib" => 1024 * 1024 * 1024,
        _ => return None,
    };
    n.checked_mul(factor)
}
