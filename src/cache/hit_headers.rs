//! The headers of a cache hit, made once and copied: what `response::respond` sends with
//! every hit of one body, in one coding, for one kind of caller, in one second.
//!
//! A hit's headers (`Content-Type`, `Content-Encoding`, `ETag`, `Cache-Control`, `Vary`,
//! `X-Cache`, `Cache-Status`) were inserted into a new map one by one for every hit: each
//! insert hashes its name and places it, about 1,900 instructions of a 23,000-instruction
//! hit (`bench/instructions.py`). Copying a map made before costs a fifth of that. Every
//! worker thread keeps the maps it made last in a small table of its own ([`SLOTS`] of
//! them), so nothing is shared or locked, and the memory is bounded whatever the cache
//! holds.
//!
//! What a hit's headers depend on is the whole key of a slot: the `ETag` (a digest of the
//! very bytes sent, so it stands for the body and its coding), the content type, the
//! coding, whether the answer is public (a guest's), and the two numbers of seconds
//! (`max-age`, `Cache-Status`'s `ttl`). Two hits with the same key get the same headers,
//! byte for byte; a hit whose key differs from its slot's remakes the slot. The numbers of
//! seconds change once a second, so a busy entry's map is made about once a second per
//! thread.
//!
//! Nothing a hit copies from here is shared with another thread (issue 23: a count that two
//! cores both write moves its cache line between them on every hit). The slot keeps:
//! - the `ETag` in the key as bytes of its own, not a `HeaderValue` sharing the entry's
//!   bytes, whose reference count every hit of every worker would otherwise bump;
//! - header values made on this thread (the `ETag` copied, not cloned);
//! - a copy of the body, for bodies up to [`COPY_MAX`] bytes: cloning the entry's bytes
//!   would bump their count, which all workers share, twice a hit. The `ETag` is a digest of
//!   the very bytes, so equal tags are equal bodies. At most [`SLOTS`] bodies of at most
//!   [`COPY_MAX`] bytes, 1 MiB, per worker thread;
//! - an `X-Request-Id` already in place, empty until the front sets the request's own
//!   (`telemetry::Observed::finish`): a copied map is exactly as large as its fields, and
//!   adding one more field grew it, an allocation and a copy per hit. For the same reason,
//!   with a spare field reserved (`Cache::reserve_hit_field`: the rate limits' `RateLimit`),
//!   its place comes second, empty, for the front to fill or take out.

use std::cell::RefCell;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue};

use crate::context::request::X_REQUEST_ID;
use crate::http::content_coding::Coding;

/// Maps each worker thread keeps.
const SLOTS: usize = 64;

/// Bodies up to this size are copied into the thread's slot ([module docs](self)).
pub const COPY_MAX: usize = 16 * 1024;

/// An `ETag`, kept inline: the gateway's are 34 to 40 bytes (`"<32 hex digits>"`, with a
/// coding's suffix for a compressed variant).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Tag {
    bytes: [u8; 48],
    len: u8,
}

impl Tag {
    /// `None` for a tag too long to keep inline (such a hit makes its headers anew).
    pub fn of(etag: &HeaderValue) -> Option<Tag> {
        let text = etag.as_bytes();
        let mut bytes = [0u8; 48];
        bytes.get_mut(..text.len())?.copy_from_slice(text);
        Some(Tag {
            bytes,
            len: text.len() as u8,
        })
    }

    fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

/// What a hit's headers depend on ([module docs](self)).
#[derive(Clone, PartialEq, Eq)]
pub struct Key {
    pub etag: Tag,
    pub content_type: &'static str,
    pub coding: Coding,
    pub public: bool,
    pub max_age: u64,
    pub ttl: i64,
    /// The spare field after the request id's, if one is reserved.
    pub spare: Option<http::HeaderName>,
}

impl Key {
    /// The key's slot: from the `ETag`'s digest (hex, spread evenly) and the coding.
    fn slot(&self) -> usize {
        let tag = self.etag.as_bytes();
        let mut word = [0u8; 8];
        let digits = tag.get(1..9).unwrap_or(tag);
        word[..digits.len()].copy_from_slice(digits);
        let mixed =
            (u64::from_le_bytes(word) ^ self.coding as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (mixed >> 58) as usize % SLOTS
    }
}

/// What a slot holds: the key, the map made for it, and the body's bytes as this thread
/// sends them.
type Made = (Key, HeaderMap, Bytes);

thread_local! {
    static MADE: RefCell<Vec<Option<Made>>> = const { RefCell::new(Vec::new()) };
}

/// The headers for `key` and the bytes of `body` to send: the ones this thread made last
/// for it, or `make`'s map (with the request id's place added) and, for a body up to
/// [`COPY_MAX`] bytes, a copy of it (kept for the next hit with the same key). `make`
/// builds the headers from values of this thread's own.
pub fn for_hit(key: Key, body: &Bytes, make: impl FnOnce() -> HeaderMap) -> (HeaderMap, Bytes) {
    let slot = key.slot();
    let found = MADE
        .try_with(|made| {
            let made = made.try_borrow().ok()?;
            match made.get(slot)? {
                Some((seen, headers, bytes)) if *seen == key => {
                    Some((headers.clone(), bytes.clone()))
                }
                _ => None,
            }
        })
        .ok()
        .flatten();
    if let Some(found) = found {
        return found;
    }
    // The request id's place first: `observe::telemetry` sets the first field in place
    // when it is this one, without hashing its name to find it.
    let made = make();
    let mut headers = HeaderMap::with_capacity(made.len() + 2);
    headers.insert(X_REQUEST_ID, HeaderValue::from_static(""));
    if let Some(spare) = &key.spare {
        headers.insert(spare.clone(), HeaderValue::from_static(""));
    }
    headers.extend(made);
    let _ = MADE.try_with(|made| {
        if let Ok(mut made) = made.try_borrow_mut() {
            if made.is_empty() {
                made.resize_with(SLOTS, || None);
            }
            // The same body (the same tag and coding) a second on: its copy is kept.
            let bytes = match &made[slot] {
                Some((seen, _, bytes)) if seen.etag == key.etag && seen.coding == key.coding => {
                    bytes.clone()
                }
                _ if body.len() <= COPY_MAX => Bytes::copy_from_slice(body),
                _ => body.clone(),
            };
            made[slot] = Some((key, headers.clone(), bytes));
        }
    });
    (headers, body.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(etag: &'static str, max_age: u64) -> Key {
        Key {
            etag: Tag::of(&HeaderValue::from_static(etag)).unwrap(),
            content_type: "application/json",
            coding: Coding::Identity,
            public: true,
            max_age,
            ttl: 60,
            spare: None,
        }
    }

    fn made(n: u64) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("x-made", HeaderValue::from(n));
        headers
    }

    #[test]
    fn the_same_key_gets_the_map_made_for_it_and_another_key_its_own() {
        let body = Bytes::from(vec![b'x'; 100]);
        let hit = |k: &Key, n| for_hit(k.clone(), &body, || made(n)).0["x-made"].clone();
        let a = key("\"0123456789abcdef0123456789abcdef\"", 60);
        assert_eq!(hit(&a, 1), "1");
        // Made once: the second hit copies it.
        assert_eq!(hit(&a, 2), "1");
        // Any part of the key that differs is another map, even in the same slot.
        let older = Key {
            max_age: 59,
            ..a.clone()
        };
        assert_eq!(older.slot(), a.slot());
        assert_eq!(hit(&older, 3), "3");
        let private = Key {
            public: false,
            ..a.clone()
        };
        assert_eq!(hit(&private, 4), "4");
        let gzip = Key {
            coding: Coding::Gzip,
            ..a.clone()
        };
        assert_eq!(hit(&gzip, 5), "5");
        let other = key("\"fedcba9876543210fedcba9876543210\"", 60);
        assert_eq!(hit(&other, 6), "6");
        // The slot now holds the last one made for it.
        assert_eq!(hit(&a, 7), "7");
    }

    #[test]
    fn a_hit_sends_this_threads_copy_of_a_small_body_and_has_room_for_the_request_id() {
        let small = Bytes::from(vec![b's'; 1000]);
        let a = key("\"11111111111111111111111111111111\"", 60);
        let made = || {
            let mut made = HeaderMap::new();
            made.insert(http::header::CONTENT_TYPE, HeaderValue::from_static("a/b"));
            made
        };
        let (headers, first) = for_hit(a.clone(), &small, made);
        // The request id's place is there, first (set in place, `observe::telemetry`), so
        // setting it adds no field.
        assert_eq!(headers[X_REQUEST_ID], "");
        assert_eq!(
            headers.iter().next().map(|(name, _)| name),
            Some(&X_REQUEST_ID)
        );
        assert_eq!(headers[http::header::CONTENT_TYPE], "a/b");
        assert_eq!(first, small);
        let (_, second) = for_hit(a.clone(), &small, HeaderMap::new);
        assert_eq!(second, small);
        assert_ne!(
            second.as_ptr(),
            small.as_ptr(),
            "a copy, not the entry's bytes"
        );
        // A second on (another key for the same body), the copy is kept.
        let later = Key { ttl: 59, ..a };
        let (_, third) = for_hit(later.clone(), &small, HeaderMap::new);
        let (_, fourth) = for_hit(later, &small, HeaderMap::new);
        assert_eq!(third, small);
        assert_eq!(fourth.as_ptr(), second.as_ptr());
        // A large body is not copied.
        let large = Bytes::from(vec![b'l'; COPY_MAX + 1]);
        let b = key("\"22222222222222222222222222222222\"", 60);
        let _ = for_hit(b.clone(), &large, HeaderMap::new);
        let (_, sent) = for_hit(b, &large, HeaderMap::new);
        assert_eq!(sent.as_ptr(), large.as_ptr());
        // A tag too long to keep inline.
        assert!(Tag::of(&HeaderValue::from_str(&"9".repeat(49)).unwrap()).is_none());
    }
}
