//! Content codings of cached answers: gzip, Brotli and zstd variants of a rendered body,
//! and the choice among them by the client's `Accept-Encoding` (RFC 9110 §12.5.3).
//!
//! A phone on a cellular link pays for every byte: a 20-product list is about 10 KB as
//! JSON and a fifth of that compressed. The gateway compresses the bodies it caches, **once,
//! when the entry is filled** (docs/decisions/compression.md says why at fill and not at the
//! first request for each coding): a hit only picks bytes that already exist, and the
//! entry's weight in the cache counts every variant it holds, so the memory cap stays true.
//!
//! - Bodies under [`MIN_SIZE`] are left as they are: the coding's framing and the header
//!   eat most of what it would save, and the client pays a decoder's start-up for nothing.
//! - A variant that is not smaller than the identity body is not kept.
//! - Each variant has its own strong `ETag`: the identity tag with the coding's name added
//!   (`"<digest>-br"`). Two representations with different bytes must not share a strong
//!   validator, or a cache in front could answer a `304` for the wrong bytes.

use std::io::Write;

use bytes::Bytes;
use http::HeaderValue;

/// Bodies shorter than this are never compressed (1 KiB).
pub const MIN_SIZE: usize = 1024;

/// gzip level 6: zlib's default; levels 7-9 cost several times the time for about 1% less.
const GZIP_LEVEL: u32 = 6;
/// Brotli quality 5 with a 128 KiB window: on the benchmark's 20-product list (10,339
/// bytes) 1,405 bytes against quality 9's 1,396 (and quality 11's 1,254); on an Admin
/// product answer (1,038 bytes) 399 against 397. Its match finder (`H5`: 16,384 buckets of
/// 16) is 1 MiB, allocated zeroed for every body compressed. Not quality 9 (with any
/// window), nor 5-8 with a window of 64 KiB or less, as before: the `brotli` crate gives
/// those a match finder of 32 MiB (`H9`, or `H6` where it lacks the small-window ones), so
/// every miss wrote 32 MiB, took milliseconds for it, and the allocator kept the recently
/// freed tables resident: most of the 57 MiB bench row 6 came down by (docs/benchmarks.md).
const BROTLI_QUALITY: i32 = 5;
const BROTLI_WINDOW: i32 = 17;
/// zstd level 9: 1,499 bytes of that list against level 3's 1,593, in 0.11 ms against
/// 0.03 ms (same build as above).
const ZSTD_LEVEL: i32 = 9;

/// A content coding the gateway can answer in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    Identity,
    Gzip,
    Brotli,
    Zstd,
}

impl Coding {
    /// The coding's name in `Content-Encoding`.
    pub fn token(self) -> &'static str {
        match self {
            Coding::Identity => "identity",
            Coding::Gzip => "gzip",
            Coding::Brotli => "br",
            Coding::Zstd => "zstd",
        }
    }

    /// The codings in the order the gateway prefers them when the client likes several as
    /// much: Brotli and zstd give smaller bodies than gzip on JSON and XML.
    const PREFERENCE: [Coding; 3] = [Coding::Brotli, Coding::Zstd, Coding::Gzip];
}

/// One compressed representation of a body.
#[derive(Debug, Clone)]
pub struct Variant {
    pub bytes: Bytes,
    pub etag: HeaderValue,
}

/// The compressed representations of one body (each absent when it would not be smaller).
/// Every variant and its tag are slices of one allocation of exactly their size.
#[derive(Debug, Clone, Default)]
pub struct Variants {
    gzip: Option<Variant>,
    brotli: Option<Variant>,
    zstd: Option<Variant>,
    /// The length of the allocation they share.
    held: usize,
}

/// What the shared allocation costs beside its bytes: `bytes`' reference count header.
const SHARED_HEADER: usize = 32;

impl Variants {
    /// Compresses `identity` in every coding, or returns `None` for a body under
    /// [`MIN_SIZE`] or one no coding makes smaller. `etag` is the identity body's tag
    /// (`"..."`).
    ///
    /// The variants kept go into one buffer, with their tags: each encoder's output grows
    /// by doubling, and an allocator keeps a block shrunk by less than half where it is, so
    /// three buffers and three tags of their own held about 880 bytes more per entry than
    /// the cache's weight counted (bench row 6: resident size above the cap by a sixth).
    pub fn compress(identity: &[u8], etag: &str) -> Option<Box<Variants>> {
        if identity.len() < MIN_SIZE {
            return None;
        }
        let smaller =
            |bytes: std::io::Result<Vec<u8>>| bytes.ok().filter(|b| b.len() < identity.len());
        let made = [
            (Coding::Gzip, smaller(gzip(identity))),
            (Coding::Brotli, smaller(brotli(identity))),
            (
                Coding::Zstd,
                smaller(zstd::bulk::compress(identity, ZSTD_LEVEL)),
            ),
        ];
        let kept: Vec<(Coding, Vec<u8>, String)> = made
            .into_iter()
            .filter_map(|(coding, bytes)| Some((coding, bytes?, variant_etag(etag, coding))))
            .collect();
        if kept.is_empty() {
            return None;
        }
        let held = kept.iter().map(|(_, b, t)| b.len() + t.len()).sum();
        let mut buffer = Vec::with_capacity(held);
        let mut spans = Vec::with_capacity(kept.len());
        for (coding, bytes, tag) in &kept {
            let start = buffer.len();
            buffer.extend_from_slice(bytes);
            buffer.extend_from_slice(tag.as_bytes());
            spans.push((*coding, start, start + bytes.len(), buffer.len()));
        }
        let buffer = Bytes::from(buffer);
        let mut variants = Variants {
            held,
            ..Variants::default()
        };
        for (coding, start, tag_start, end) in spans {
            let variant = Variant {
                bytes: buffer.slice(start..tag_start),
                etag: HeaderValue::from_maybe_shared(buffer.slice(tag_start..end))
                    .expect("a tag made of a valid tag and a token is a valid header value"),
            };
            match coding {
                Coding::Gzip => variants.gzip = Some(variant),
                Coding::Brotli => variants.brotli = Some(variant),
                Coding::Zstd => variants.zstd = Some(variant),
                Coding::Identity => {}
            }
        }
        Some(Box::new(variants))
    }

    pub fn get(&self, coding: Coding) -> Option<&Variant> {
        match coding {
            Coding::Identity => None,
            Coding::Gzip => self.gzip.as_ref(),
            Coding::Brotli => self.brotli.as_ref(),
            Coding::Zstd => self.zstd.as_ref(),
        }
    }

    /// Bytes held, for the cache's weight: the shared buffer, its header, and this
    /// structure's own box.
    pub fn weight(&self) -> usize {
        self.held + SHARED_HEADER + std::mem::size_of::<Variants>()
    }

    /// The coding to answer in, for this `Accept-Encoding`.
    pub fn choose(&self, accept_encoding: Option<&HeaderValue>) -> Coding {
        let Some(header) = accept_encoding.and_then(|v| v.to_str().ok()) else {
            // No header: any coding would be acceptable (RFC 9110), but a client that says
            // nothing may not decode one; identity is what every client reads.
            return Coding::Identity;
        };
        let accepted = Accepted::parse(header);
        let mut best: Option<(Coding, u16)> = None;
        for coding in Coding::PREFERENCE {
            let q = accepted.q(coding);
            // Strictly more: among codings the client likes as much, the gateway's order.
            if q > 0 && self.get(coding).is_some() && best.is_none_or(|(_, b)| q > b) {
                best = Some((coding, q));
            }
        }
        match best {
            // A coding the client likes as much as identity wins over it (smaller).
            Some((coding, q)) if q >= accepted.identity() => coding,
            // Identity refused (`identity;q=0`, or `*;q=0` without it) and no coding the
            // client takes is held: the body goes as it is (the decision record says why
            // not a 406).
            _ => Coding::Identity,
        }
    }
}

/// `"<digest>"` becomes `"<digest>-<coding>"`.
fn variant_etag(identity: &str, coding: Coding) -> String {
    let inner = identity.trim_matches('"');
    format!("\"{inner}-{}\"", coding.token())
}

fn gzip(input: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(
        Vec::with_capacity(input.len() / 3),
        flate2::Compression::new(GZIP_LEVEL),
    );
    encoder.write_all(input)?;
    encoder.finish()
}

fn brotli_params(len: usize) -> brotli::enc::BrotliEncoderParams {
    brotli::enc::BrotliEncoderParams {
        quality: BROTLI_QUALITY,
        lgwin: BROTLI_WINDOW,
        size_hint: len,
        ..Default::default()
    }
}

fn brotli(input: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(input.len() / 3);
    brotli::BrotliCompress(&mut &input[..], &mut out, &brotli_params(input.len()))?;
    Ok(out)
}

/// An `Accept-Encoding` header's weights, in thousandths (q-values have at most three
/// decimals), as far as the gateway's codings go.
#[derive(Debug, Default)]
struct Accepted {
    gzip: Option<u16>,
    brotli: Option<u16>,
    zstd: Option<u16>,
    identity: Option<u16>,
    any: Option<u16>,
}

impl Accepted {
    fn parse(header: &str) -> Accepted {
        let mut accepted = Accepted::default();
        for item in header.split(',') {
            let mut parts = item.split(';');
            let name = parts.next().unwrap_or_default().trim();
            if name.is_empty() {
                continue;
            }
            let mut q = Some(1000);
            for param in parts {
                if let Some((key, value)) = param.split_once('=')
                    && key.trim().eq_ignore_ascii_case("q")
                {
                    q = parse_q(value.trim());
                }
            }
            // A malformed weight makes the item meaningless: it is ignored.
            let Some(q) = q else { continue };
            let slot = if name.eq_ignore_ascii_case("gzip") || name.eq_ignore_ascii_case("x-gzip") {
                &mut accepted.gzip
            } else if name.eq_ignore_ascii_case("br") {
                &mut accepted.brotli
            } else if name.eq_ignore_ascii_case("zstd") {
                &mut accepted.zstd
            } else if name.eq_ignore_ascii_case("identity") {
                &mut accepted.identity
            } else if name == "*" {
                &mut accepted.any
            } else {
                continue;
            };
            // Listed twice: the first weight counts.
            slot.get_or_insert(q);
        }
        accepted
    }

    fn q(&self, coding: Coding) -> u16 {
        let named = match coding {
            Coding::Identity => return self.identity(),
            Coding::Gzip => self.gzip,
            Coding::Brotli => self.brotli,
            Coding::Zstd => self.zstd,
        };
        named.or(self.any).unwrap_or(0)
    }

    /// Identity is acceptable unless refused by name or by `*;q=0`; not named, it weighs
    /// less than any coding the client named (1 thousandth), so `gzip;q=0.1` still wins.
    fn identity(&self) -> u16 {
        self.identity.or(self.any.map(|q| q.min(1))).unwrap_or(1)
    }
}

/// A q-value (`0`, `0.5`, `1`, `1.000`) in thousandths; `None` when malformed.
fn parse_q(text: &str) -> Option<u16> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if fraction.len() > 3 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = fraction
        .bytes()
        .fold(0u16, |n, b| n * 10 + u16::from(b - b'0'))
        * 10u16.pow(3 - fraction.len() as u32);
    match whole {
        "0" => Some(digits),
        "1" if digits == 0 => Some(1000),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// The encoder's allocator, noting the largest block it is asked for.
    struct Largest(Arc<AtomicUsize>);

    impl<T> brotli::Allocator<T> for Largest
    where
        brotli::enc::StandardAlloc: brotli::Allocator<T>,
    {
        type AllocatedMemory =
            <brotli::enc::StandardAlloc as brotli::Allocator<T>>::AllocatedMemory;
        fn alloc_cell(&mut self, len: usize) -> Self::AllocatedMemory {
            self.0
                .fetch_max(len * std::mem::size_of::<T>(), Ordering::Relaxed);
            brotli::enc::StandardAlloc::default().alloc_cell(len)
        }
        fn free_cell(&mut self, data: Self::AllocatedMemory) {
            brotli::enc::StandardAlloc::default().free_cell(data)
        }
    }

    impl brotli::enc::BrotliAlloc for Largest {}

    /// Brotli with the gateway's settings takes little memory for a body: quality 9 took a
    /// 32 MiB match finder for each one, written whole, which bench row 6 paid in resident
    /// memory and every miss in time (docs/benchmarks.md).
    #[test]
    fn brotli_compresses_a_body_with_tables_of_at_most_2_mib() {
        for input in [body(), body().repeat(20)] {
            let largest = Arc::new(AtomicUsize::new(0));
            let mut out = Vec::new();
            brotli::BrotliCompressCustomAlloc(
                &mut &input[..],
                &mut out,
                &mut [0u8; 4096],
                &mut [0u8; 4096],
                &brotli_params(input.len()),
                Largest(largest.clone()),
            )
            .unwrap();
            let largest = largest.load(Ordering::Relaxed);
            assert!(largest <= 2 << 20, "{largest} bytes for {}", input.len());
            assert!(
                out.len() < input.len() / 4,
                "{} of {}",
                out.len(),
                input.len()
            );
            assert_eq!(out, brotli(&input).unwrap(), "the same settings as a fill");
        }
    }

    fn body() -> Vec<u8> {
        (0..200)
            .map(|i| format!("{{\"entity_id\":{i},\"name\":\"Product {i}\"}},"))
            .collect::<String>()
            .into_bytes()
    }

    fn choose(header: &str) -> Coding {
        let variants = Variants::compress(&body(), "\"abc\"").unwrap();
        variants.choose(Some(&HeaderValue::from_str(header).unwrap()))
    }

    #[test]
    fn q_values() {
        assert_eq!(parse_q("0"), Some(0));
        assert_eq!(parse_q("0.5"), Some(500));
        assert_eq!(parse_q("0.125"), Some(125));
        assert_eq!(parse_q("1"), Some(1000));
        assert_eq!(parse_q("1.000"), Some(1000));
        assert_eq!(parse_q("1.5"), None);
        assert_eq!(parse_q("0.1234"), None);
        assert_eq!(parse_q("abc"), None);
    }

    #[test]
    fn choices() {
        assert_eq!(choose("gzip"), Coding::Gzip);
        assert_eq!(choose("gzip, br"), Coding::Brotli);
        assert_eq!(choose("gzip, deflate, br, zstd"), Coding::Brotli);
        assert_eq!(choose("br;q=0.5, gzip;q=0.8"), Coding::Gzip);
        assert_eq!(choose("GZIP;Q=1, zstd;q=0.9"), Coding::Gzip);
        assert_eq!(choose("x-gzip"), Coding::Gzip);
        assert_eq!(choose("zstd"), Coding::Zstd);
        assert_eq!(choose("*"), Coding::Brotli);
        assert_eq!(choose("*, br;q=0"), Coding::Zstd);
        assert_eq!(choose("gzip;q=0"), Coding::Identity);
        assert_eq!(choose("identity"), Coding::Identity);
        assert_eq!(choose("identity, gzip;q=0.5"), Coding::Identity);
        assert_eq!(choose("identity;q=0, gzip;q=0.1"), Coding::Gzip);
        assert_eq!(choose("deflate"), Coding::Identity);
        assert_eq!(choose(""), Coding::Identity);
        assert_eq!(choose("gzip;q=bad, zstd;q=0.2"), Coding::Zstd);
        // Nothing acceptable is held: the body goes as it is.
        assert_eq!(choose("*;q=0"), Coding::Identity);
        assert_eq!(choose("identity;q=0"), Coding::Identity);
    }

    #[test]
    fn variants_decode_to_the_body() {
        let body = body();
        let variants = Variants::compress(&body, "\"abc\"").unwrap();
        let gz = variants.get(Coding::Gzip).unwrap();
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz.bytes[..]), &mut out)
            .unwrap();
        assert_eq!(out, body);
        assert_eq!(gz.etag, "\"abc-gzip\"");
        let br = variants.get(Coding::Brotli).unwrap();
        let mut out = Vec::new();
        std::io::Read::read_to_end(
            &mut brotli::Decompressor::new(&br.bytes[..], 4096),
            &mut out,
        )
        .unwrap();
        assert_eq!(out, body);
        let zst = variants.get(Coding::Zstd).unwrap();
        assert_eq!(
            zstd::bulk::decompress(&zst.bytes, body.len()).unwrap(),
            body
        );
        assert!(variants.weight() < body.len());
    }

    #[test]
    fn small_or_incompressible_bodies_have_no_variants() {
        assert!(Variants::compress(&[b'a'; MIN_SIZE - 1], "\"x\"").is_none());
        // Bytes no coding shrinks: a pseudo-random sequence.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        assert!(Variants::compress(&noise, "\"x\"").is_none());
    }
}
