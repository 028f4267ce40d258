//! An uploaded image's bytes, checked without holding more copies of them than needed.
//!
//! An upload arrives as base64 text inside a JSON or XML body (16 MiB at most). Decoding it
//! whole, checking the bytes and encoding them again for Magento cost about eight copies of
//! the body: ten parallel 15 MB uploads took the process from 47 to 611 MB. Here the text
//! is decoded once, in small chunks, only to prove it is valid base64 and to keep the first
//! bytes ([`SNIFF`]), where the type's signature and the picture's dimensions are. The text
//! itself goes to Magento as the client sent it when it already is canonical base64 (no line
//! breaks, padded), moved rather than copied, or compacted once when it is not.
//!
//! Together with the bound on uploads whose body is in memory at once
//! (`image_upload::upload_permit`, `STOREGATE_MAX_UPLOADS_IN_FLIGHT`), memory stays near
//! one copy of each body in flight (the decoded JSON or XML tree; the request bytes are
//! dropped after decoding, the request to Magento is one more while it is sent).

use base64::Engine as _;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};

/// Decoded bytes kept for the checks: a JPEG's frame header can sit behind EXIF and ICC
/// segments of up to 64 KiB each.
pub const SNIFF: usize = 512 * 1024;
/// Largest picture accepted, in pixels per side and in all (Magento resizes every image it
/// stores; a 100-megapixel PNG of a few kilobytes is a decompression bomb for it).
const MAX_SIDE: u32 = 20_000;
const MAX_PIXELS: u64 = 100_000_000;

/// Standard alphabet, padding optional (clients wrap and trim base64 freely).
const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);
/// Base64 characters decoded per step (a multiple of 4).
const STEP: usize = 16 * 1024;

/// Valid base64, checked in one pass.
#[derive(Debug)]
pub struct Base64File {
    /// The same data as canonical base64, ready for Magento.
    pub canonical: String,
    /// The first [`SNIFF`] decoded bytes.
    pub head: Vec<u8>,
    /// Decoded size.
    pub len: usize,
}

/// Checks base64 as clients send it (standard alphabet, optional padding, line breaks and
/// spaces allowed), without decoding it whole. `None` if it is not valid or is empty.
pub fn check_base64(text: String) -> Option<Base64File> {
    let bytes = text.as_bytes();
    let canonical_already =
        bytes.len().is_multiple_of(4) && !bytes.iter().any(|b| b.is_ascii_whitespace());
    let mut compact = (!canonical_already).then(|| String::with_capacity(bytes.len()));
    let mut chunk: Vec<u8> = Vec::with_capacity(STEP);
    let mut out = vec![0u8; STEP / 4 * 3];
    let mut head = Vec::new();
    let mut len = 0usize;
    let mut decode = |chunk: &[u8], last: bool, head: &mut Vec<u8>| -> Option<()> {
        // Padding is only allowed at the very end.
        if !last && chunk.contains(&b'=') {
            return None;
        }
        let n = LENIENT.decode_slice(chunk, &mut out).ok()?;
        if head.len() < SNIFF {
            let take = n.min(SNIFF - head.len());
            head.extend_from_slice(&out[..take]);
        }
        len += n;
        Some(())
    };
    for &b in bytes {
        if b.is_ascii_whitespace() {
            continue;
        }
        if chunk.len() == STEP {
            decode(&chunk, false, &mut head)?;
            chunk.clear();
        }
        chunk.push(b);
        if let Some(compact) = &mut compact {
            compact.push(b as char);
        }
    }
    decode(&chunk, true, &mut head)?;
    if len == 0 {
        return None;
    }
    let canonical = match compact {
        None => text,
        Some(mut compact) => {
            while !compact.len().is_multiple_of(4) {
                compact.push('=');
            }
            drop(text);
            compact
        }
    };
    Some(Base64File {
        canonical,
        head,
        len,
    })
}

/// Width and height of a PNG, GIF or JPEG from its header, or `None` if the header does
/// not say (a truncated or corrupt file).
pub fn dimensions(head: &[u8]) -> Option<(u32, u32)> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        // The IHDR chunk comes first: length, "IHDR", width, height (big-endian).
        if head.get(12..16)? != b"IHDR" {
            return None;
        }
        let width = u32::from_be_bytes(head.get(16..20)?.try_into().ok()?);
        let height = u32::from_be_bytes(head.get(20..24)?.try_into().ok()?);
        return Some((width, height));
    }
    if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        let width = u16::from_le_bytes(head.get(6..8)?.try_into().ok()?);
        let height = u16::from_le_bytes(head.get(8..10)?.try_into().ok()?);
        return Some((width.into(), height.into()));
    }
    if head.starts_with(&[0xFF, 0xD8]) {
        return jpeg_dimensions(head);
    }
    None
}

/// Walks the JPEG segments to the first frame header (SOF0 to SOF15, except DHT, JPG and
/// DAC, which share the range).
fn jpeg_dimensions(data: &[u8]) -> Option<(u32, u32)> {
    let mut at = 2;
    loop {
        // Markers may be preceded by fill bytes (0xFF).
        while *data.get(at)? == 0xFF && *data.get(at + 1)? == 0xFF {
            at += 1;
        }
        if *data.get(at)? != 0xFF {
            return None;
        }
        let marker = *data.get(at + 1)?;
        at += 2;
        match marker {
            // Markers without a length.
            0x01 | 0xD0..=0xD7 => continue,
            // Start of scan or end of image before any frame header.
            0xDA | 0xD9 => return None,
            _ => {}
        }
        let length = u16::from_be_bytes(data.get(at..at + 2)?.try_into().ok()?) as usize;
        if length < 2 {
            return None;
        }
        if matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC) {
            let height = u16::from_be_bytes(data.get(at + 3..at + 5)?.try_into().ok()?);
            let width = u16::from_be_bytes(data.get(at + 5..at + 7)?.try_into().ok()?);
            return Some((width.into(), height.into()));
        }
        at += length;
    }
}

/// Are these dimensions a picture Magento should be asked to store?
pub fn acceptable((width, height): (u32, u32)) -> bool {
    width > 0
        && height > 0
        && width <= MAX_SIDE
        && height <= MAX_SIDE
        && u64::from(width) * u64::from(height) <= MAX_PIXELS
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::STANDARD;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        bytes.extend_from_slice(&width.to_be_bytes());
        bytes.extend_from_slice(&height.to_be_bytes());
        bytes.extend_from_slice(&[8, 6, 0, 0, 0]);
        bytes
    }

    #[test]
    fn base64_in_one_pass_matches_a_whole_decode() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let text = STANDARD.encode(&data);
        let checked = check_base64(text.clone()).unwrap();
        assert_eq!(checked.canonical, text, "canonical input passes as it is");
        assert_eq!(checked.len, data.len());
        assert_eq!(checked.head, data[..data.len().min(SNIFF)]);

        // Wrapped and unpadded: compacted and padded, the same data.
        let wrapped: String = text
            .trim_end_matches('=')
            .as_bytes()
            .chunks(76)
            .map(|line| format!("{}\r\n", std::str::from_utf8(line).unwrap()))
            .collect();
        let checked = check_base64(wrapped).unwrap();
        assert_eq!(checked.canonical, text);

        assert_eq!(check_base64("aGk".into()).unwrap().canonical, "aGk=");
        assert!(check_base64(String::new()).is_none());
        assert!(check_base64("a!b=".into()).is_none());
        // Padding in the middle, even across a step boundary.
        let mut middle = "A".repeat(STEP - 4);
        middle.push_str("aGk=");
        middle.push_str("aGk=");
        assert!(check_base64(middle).is_none());
    }

    #[test]
    fn dimensions_from_headers() {
        assert_eq!(dimensions(&png(640, 480)), Some((640, 480)));
        assert_eq!(dimensions(b"GIF89a\x80\x02\xe0\x01"), Some((640, 480)));
        // JPEG: SOI, an APP0 segment, then SOF0 with height 480 and width 640.
        let jpeg = [
            0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x4A, 0x46, 0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x01,
            0xE0, 0x02, 0x80, 0x01, 0x01, 0x11, 0x00,
        ];
        assert_eq!(dimensions(&jpeg), Some((640, 480)));
        // A DHT segment (0xC4) is not a frame header.
        let mut with_dht = vec![0xFF, 0xD8, 0xFF, 0xC4, 0x00, 0x03, 0x00];
        with_dht.extend_from_slice(&jpeg[8..]);
        assert_eq!(dimensions(&with_dht), Some((640, 480)));
        assert_eq!(dimensions(&[0xFF, 0xD8, 0xFF]), None);
        assert_eq!(dimensions(&png(1, 1)[..20]), None);
        assert!(acceptable((640, 480)));
        assert!(!acceptable((0, 480)));
        assert!(!acceptable((20_000, 20_000)));
    }
}
