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

use std::cell::RefCell;

use http::{HeaderMap, HeaderValue};

use crate::http::content_coding::Coding;

/// Maps each worker thread keeps.
const SLOTS: usize = 64;

/// What a hit's headers depend on ([module docs](self)).
#[derive(Clone, PartialEq, Eq)]
pub struct Key {
    pub etag: HeaderValue,
    pub content_type: &'static str,
    pub coding: Coding,
    pub public: bool,
    pub max_age: u64,
    pub ttl: i64,
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

thread_local! {
    static MADE: RefCell<Vec<Option<(Key, HeaderMap)>>> = const { RefCell::new(Vec::new()) };
}

/// A copy of the headers for `key`: the ones this thread made last for it, or `make`'s
/// (kept for the next hit with the same key).
pub fn for_hit(key: Key, make: impl FnOnce() -> HeaderMap) -> HeaderMap {
    let slot = key.slot();
    let found = MADE
        .try_with(|made| {
            let made = made.try_borrow().ok()?;
            match made.get(slot)? {
                Some((seen, headers)) if *seen == key => Some(headers.clone()),
                _ => None,
            }
        })
        .ok()
        .flatten();
    if let Some(headers) = found {
        return headers;
    }
    let headers = make();
    let _ = MADE.try_with(|made| {
        if let Ok(mut made) = made.try_borrow_mut() {
            if made.is_empty() {
                made.resize_with(SLOTS, || None);
            }
            made[slot] = Some((key, headers.clone()));
        }
    });
    headers
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(etag: &'static str, max_age: u64) -> Key {
        Key {
            etag: HeaderValue::from_static(etag),
            content_type: "application/json",
            coding: Coding::Identity,
            public: true,
            max_age,
            ttl: 60,
        }
    }

    fn made(n: u64) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("x-made", HeaderValue::from(n));
        headers
    }

    #[test]
    fn the_same_key_gets_the_map_made_for_it_and_another_key_its_own() {
        let a = key("\"0123456789abcdef0123456789abcdef\"", 60);
        assert_eq!(for_hit(a.clone(), || made(1))["x-made"], "1");
        // Made once: the second hit copies it.
        assert_eq!(for_hit(a.clone(), || made(2))["x-made"], "1");
        // Any part of the key that differs is another map, even in the same slot.
        let older = Key {
            max_age: 59,
            ..a.clone()
        };
        assert_eq!(older.slot(), a.slot());
        assert_eq!(for_hit(older, || made(3))["x-made"], "3");
        let private = Key {
            public: false,
            ..a.clone()
        };
        assert_eq!(for_hit(private, || made(4))["x-made"], "4");
        let gzip = Key {
            coding: Coding::Gzip,
            ..a.clone()
        };
        assert_eq!(for_hit(gzip, || made(5))["x-made"], "5");
        let other = key("\"fedcba9876543210fedcba9876543210\"", 60);
        assert_eq!(for_hit(other, || made(6))["x-made"], "6");
        // The slot now holds the last one made for it.
        assert_eq!(for_hit(a, || made(7))["x-made"], "7");
    }
}
