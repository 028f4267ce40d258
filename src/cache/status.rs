//! `Cache-Status` (RFC 9211): how the gateway's cache handled a read, in the standard
//! header a CDN or a client's tooling can read (`X-Cache` stays for those who read it).
//!
//! - `storegate; hit; ttl=N`: served from a fresh entry, fresh for N more seconds;
//! - `storegate; fwd=miss; stored; ttl=N`: fetched from the back end now (or by a caller
//!   this one waited for) and stored (`stored` and `ttl` only when the cache is on);
//! - `storegate; fwd=stale; ttl=-N; detail=revalidating`: past its freshness by N seconds,
//!   served while one background refresh runs;
//! - `storegate; fwd=stale; ttl=-N; detail=backend-failing`: stale, served because the back
//!   end failed when it was asked again;
//! - `storegate; fwd=uri-miss`: an API read the cache never holds (a customer's own data,
//!   a refusal), or one kept away from it.
//!
//! A negative `ttl` says by how much the answer is stale (RFC 9211 §2.6).

use http::HeaderValue;

use crate::cache::Source;

/// The header's name.
pub const CACHE_STATUS: http::HeaderName = http::HeaderName::from_static("cache-status");

/// The value for an answer served through the read cache. `ttl` is the entry's remaining
/// freshness in seconds (negative when stale); `stored` is false when the cache is off.
pub fn for_source(source: Source, ttl: i64, stored: bool) -> HeaderValue {
    if source == Source::Hit {
        return reused(Reused::Hit, ttl, || make(source, ttl, stored));
    }
    make(source, ttl, stored)
}

fn make(source: Source, ttl: i64, stored: bool) -> HeaderValue {
    let mut text = Writer::default();
    text.push(b"storegate; ");
    match source {
        Source::Hit => text.push(b"hit"),
        Source::Fetched if stored => text.push(b"fwd=miss; stored"),
        Source::Fetched => {
            text.push(b"fwd=miss");
            return text.finish();
        }
        Source::StaleWhileRevalidate | Source::StaleIfError => text.push(b"fwd=stale"),
    }
    text.push(b"; ttl=");
    text.number(ttl);
    match source {
        Source::StaleWhileRevalidate => text.push(b"; detail=revalidating"),
        Source::StaleIfError => text.push(b"; detail=backend-failing"),
        _ => {}
    }
    text.finish()
}

/// An API read the cache did not answer and did not store.
pub fn uncached() -> HeaderValue {
    HeaderValue::from_static("storegate; fwd=uri-miss")
}

/// A read whose entry the gateway keeps away from the cache until the back end has shown
/// its state again (a write with an unknown outcome touched it: `outcome`).
pub fn bypassed() -> HeaderValue {
    HeaderValue::from_static("storegate; fwd=bypass; detail=write-outcome-unknown")
}

/// True for an API read: a GET or HEAD under `/api/rest/`, the answers that carry a
/// `Cache-Status`.
pub fn is_api_read(method: &http::Method, path: &str) -> bool {
    (method == http::Method::GET || method == http::Method::HEAD) && path.starts_with("/api/rest/")
}

/// Puts [`uncached`] on an API read's answer that has no `Cache-Status` yet (the front
/// calls it for every read past the fast path; a hit carries its own).
pub fn mark_uncached(response: &mut axum::response::Response) {
    if !response.headers().contains_key(CACHE_STATUS) {
        response.headers_mut().insert(CACHE_STATUS, uncached());
    }
}

/// The header values a hit sends that depend on a number of seconds: `Cache-Status`'s
/// `storegate; hit; ttl=N`, `Cache-Control`'s `public, max-age=N` and `private, max-age=N`.
#[derive(Debug, Clone, Copy)]
pub enum Reused {
    Hit = 0,
    Public = 1,
    Private = 2,
}

/// Slots per kind: every number of seconds up to this many has one of its own.
const SLOTS: usize = 128;

thread_local! {
    /// The last value made for each kind and number of seconds (modulo [`SLOTS`]).
    static REUSED: std::cell::RefCell<Vec<Option<(i64, HeaderValue)>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The value of `kind` for `n` seconds: the one this thread made last, or `make`'s. A
/// header value made from text copies it into an allocation of its own; a clone of one made
/// before only counts a reference. Hits of one entry all send the same value for a second,
/// and an entry's seconds go from the TTL down to 0.
pub fn reused(kind: Reused, n: i64, make: impl FnOnce() -> HeaderValue) -> HeaderValue {
    let slot = kind as usize * SLOTS + n.rem_euclid(SLOTS as i64) as usize;
    let found = REUSED
        .try_with(|cells| match cells.try_borrow().ok()?.get(slot)? {
            Some((seen, value)) if *seen == n => Some(value.clone()),
            _ => None,
        })
        .ok()
        .flatten();
    if let Some(value) = found {
        return value;
    }
    let value = make();
    let _ = REUSED.try_with(|cells| {
        if let Ok(mut cells) = cells.try_borrow_mut() {
            if cells.is_empty() {
                cells.resize(3 * SLOTS, None);
            }
            cells[slot] = Some((n, value.clone()));
        }
    });
    value
}

/// A header value written into a stack buffer, without a formatter: every hit sends one.
struct Writer {
    text: [u8; 80],
    len: usize,
}

impl Default for Writer {
    fn default() -> Writer {
        Writer {
            text: [0; 80],
            len: 0,
        }
    }
}

/// `n` in decimal digits, written at the end of `digits` (a header value built without an
/// allocation).
pub(crate) fn decimal(mut n: u64, digits: &mut [u8; 20]) -> &[u8] {
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &digits[i..];
        }
    }
}

impl Writer {
    fn push(&mut self, bytes: &[u8]) {
        let end = (self.len + bytes.len()).min(self.text.len());
        self.text[self.len..end].copy_from_slice(&bytes[..end - self.len]);
        self.len = end;
    }

    fn number(&mut self, n: i64) {
        if n < 0 {
            self.push(b"-");
        }
        let mut digits = [0u8; 20];
        self.push(decimal(n.unsigned_abs(), &mut digits));
    }

    fn finish(self) -> HeaderValue {
        HeaderValue::from_bytes(&self.text[..self.len])
            .expect("ASCII letters, digits and punctuation are a valid header value")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reused_values_are_the_values_made() {
        for n in [0, 1, 59, 60, 127, 128, 129, 255, -3, i64::MAX] {
            for _ in 0..2 {
                assert_eq!(
                    for_source(Source::Hit, n, true),
                    format!("storegate; hit; ttl={n}")
                );
            }
        }
        // Two numbers in one slot: each gets its own value.
        assert_eq!(for_source(Source::Hit, 1, true), "storegate; hit; ttl=1");
        assert_eq!(
            for_source(Source::Hit, 129, true),
            "storegate; hit; ttl=129"
        );
        assert_eq!(for_source(Source::Hit, 1, true), "storegate; hit; ttl=1");
    }

    #[test]
    fn values() {
        assert_eq!(for_source(Source::Hit, 42, true), "storegate; hit; ttl=42");
        assert_eq!(
            for_source(Source::Fetched, 60, true),
            "storegate; fwd=miss; stored; ttl=60"
        );
        assert_eq!(for_source(Source::Fetched, 0, false), "storegate; fwd=miss");
        assert_eq!(
            for_source(Source::StaleWhileRevalidate, -3, true),
            "storegate; fwd=stale; ttl=-3; detail=revalidating"
        );
        assert_eq!(
            for_source(Source::StaleIfError, -120, true),
            "storegate; fwd=stale; ttl=-120; detail=backend-failing"
        );
        assert_eq!(
            for_source(Source::Hit, i64::MIN, true),
            "storegate; hit; ttl=-9223372036854775808"
        );
    }
}
