//! Recognizing uploaded images, and drawing placeholder images for the seed catalog.
//!
//! Magento's `ImageContentValidator` trusts PHP's `getimagesizefromstring`: the bytes must be
//! an image whose real MIME type equals the declared one. This module does the same sniffing
//! for the formats a client may plausibly send, so a JPEG declared as PNG (or as `image/jpg`,
//! which PHP never reports) is refused the way Magento refuses it.

/// What `getimagesizefromstring` would report: the MIME type and the pixel size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ImageInfo {
    pub(crate) mime: &'static str,
    pub(crate) width: u32,
    pub(crate) height: u32,
}

fn be16(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(u16::from_be_bytes([
        *bytes.get(at)?,
        *bytes.get(at + 1)?,
    ])))
}

fn le16(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(u16::from_le_bytes([
        *bytes.get(at)?,
        *bytes.get(at + 1)?,
    ])))
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes([
        *bytes.get(at)?,
        *bytes.get(at + 1)?,
        *bytes.get(at + 2)?,
        *bytes.get(at + 3)?,
    ]))
}

fn png(bytes: &[u8]) -> Option<ImageInfo> {
    if !bytes.starts_with(b"\x89PNG\r\n\x1a\n") || bytes.get(12..16)? != b"IHDR" {
        return None;
    }
    Some(ImageInfo {
        mime: "image/png",
        width: be32(bytes, 16)?,
        height: be32(bytes, 20)?,
    })
}

fn gif(bytes: &[u8]) -> Option<ImageInfo> {
    if !(bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a")) {
        return None;
    }
    Some(ImageInfo {
        mime: "image/gif",
        width: le16(bytes, 6)?,
        height: le16(bytes, 8)?,
    })
}

/// Walks JPEG markers up to the first start-of-frame, which holds the size.
fn jpeg(bytes: &[u8]) -> Option<ImageInfo> {
    if !bytes.starts_with(&[0xFF, 0xD8]) {
        return None;
    }
    let mut at = 2;
    loop {
        while *bytes.get(at)? != 0xFF {
            at += 1;
        }
        while *bytes.get(at)? == 0xFF {
            at += 1;
        }
        let marker = *bytes.get(at)?;
        at += 1;
        match marker {
            0xD8 | 0x01 | 0xD0..=0xD7 => continue,
            0xC0..=0xCF if !matches!(marker, 0xC4 | 0xC8 | 0xCC) => {
                return Some(ImageInfo {
                    mime: "image/jpeg",
                    height: be16(bytes, at + 3)?,
                    width: be16(bytes, at + 5)?,
                });
            }
            _ => {
                let length = be16(bytes, at)? as usize;
                if length < 2 {
                    return None;
                }
                at += length;
            }
        }
    }
}

fn bmp(bytes: &[u8]) -> Option<ImageInfo> {
    if !bytes.starts_with(b"BM") || bytes.len() < 26 {
        return None;
    }
    Some(ImageInfo {
        mime: "image/bmp",
        width: le16(bytes, 18)?,
        height: le16(bytes, 22)?,
    })
}

fn webp(bytes: &[u8]) -> Option<ImageInfo> {
    if bytes.get(0..4)? != b"RIFF" || bytes.get(8..12)? != b"WEBP" {
        return None;
    }
    Some(ImageInfo {
        mime: "image/webp",
        width: 1,
        height: 1,
    })
}

/// Identifies an image like `getimagesizefromstring`; `None` when it is not one.
pub(crate) fn sniff(bytes: &[u8]) -> Option<ImageInfo> {
    png(bytes)
        .or_else(|| jpeg(bytes))
        .or_else(|| gif(bytes))
        .or_else(|| bmp(bytes))
        .or_else(|| webp(bytes))
        .filter(|info| info.width > 0 && info.height > 0)
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in data {
        a = (a + u32::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    (b << 16) | a
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let mut body = Vec::with_capacity(4 + data.len());
    body.extend_from_slice(kind);
    body.extend_from_slice(data);
    out.extend_from_slice(&body);
    out.extend_from_slice(&crc32(&body).to_be_bytes());
}

/// A solid-colour RGB PNG (uncompressed deflate blocks), used for seeded gallery files.
pub(crate) fn solid_png(width: u32, height: u32, rgb: [u8; 3]) -> Vec<u8> {
    // Each scanline: filter type 0, then the pixels.
    let mut row = Vec::with_capacity((width * 3 + 1) as usize);
    row.push(0);
    for _ in 0..width {
        row.extend_from_slice(&rgb);
    }
    let raw = row.repeat(height as usize);
    let mut zlib = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65_535).collect();
    for (index, block) in blocks.iter().enumerate() {
        zlib.push(u8::from(index + 1 == blocks.len()));
        let len = block.len() as u16;
        zlib.extend_from_slice(&len.to_le_bytes());
        zlib.extend_from_slice(&(!len).to_le_bytes());
        zlib.extend_from_slice(block);
    }
    zlib.extend_from_slice(&adler32(&raw).to_be_bytes());
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut header = Vec::with_capacity(13);
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &header);
    chunk(&mut out, b"IDAT", &zlib);
    chunk(&mut out, b"IEND", &[]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognizes_formats() {
        let png = solid_png(3, 2, [200, 10, 10]);
        assert_eq!(
            sniff(&png),
            Some(ImageInfo {
                mime: "image/png",
                width: 3,
                height: 2
            })
        );
        let gif = b"GIF89a\x02\x00\x03\x00\x00\x00\x00;".to_vec();
        assert_eq!(sniff(&gif).map(|i| i.mime), Some("image/gif"));
        let jpeg = [
            0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0x00,
            0x05, 0x00, 0x07,
        ];
        assert_eq!(
            sniff(&jpeg),
            Some(ImageInfo {
                mime: "image/jpeg",
                width: 7,
                height: 5
            })
        );
        assert_eq!(sniff(b"not an image"), None);
    }
}
