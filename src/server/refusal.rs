//! The refusals hyper makes before any request exists, given the API's error body.
//!
//! `protocol` answers heads over the gateway's own limits in the API's format, but some
//! heads hyper refuses itself, before our service sees a request: a URI over 64 KiB (414),
//! a head past its buffer or its field count (431), a repeated or malformed
//! `Content-Length`, a header hyper cannot parse (400). It answers those with a bare status
//! line, `content-length: 0` and `connection: close`, which leaves a client without the
//! error tree it parses every other error from, and without a request id to quote.
//!
//! hyper has no hook for these answers, so the connection's socket wrapper recognises them
//! on their way out ([`replace`]: a 4xx head without our `x-request-id`; every answer our
//! service makes carries one) and writes the API's answer instead: the same status, the
//! error tree in the format the client's `Accept` asked for when the socket saw that line
//! ([`Sniffer`]: the head's `Accept` is noted as it is read, before hyper gives up on it),
//! XML (the API's default) otherwise, a new `X-Request-Id`, `Connection: close`.

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode};

use crate::http::format::negotiate_response;
use crate::http::{ApiError, Format, render_error};

/// The message of a head hyper could not read (a repeated or malformed `Content-Length`,
/// a header that is not `name: value`, a bad method or version).
pub const UNREADABLE_HEAD: &str = "The request head could not be read.";

/// Longest `Accept` value kept: longer ones are not a format choice a client makes.
const MAX_ACCEPT: usize = 256;

/// Notes the `Accept` line of the head being read (only what the socket read while no
/// request was in flight: heads, not bodies).
/// Kept inline, not boxed: every head with an `Accept` line passes here, and a hit must
/// not pay an allocation for a refusal that almost never comes.
#[derive(Debug)]
pub struct Sniffer {
    accept: [u8; MAX_ACCEPT],
    /// Bytes of `accept` in use; 0: no `Accept` line seen.
    len: usize,
}

impl Default for Sniffer {
    fn default() -> Sniffer {
        Sniffer {
            accept: [0; MAX_ACCEPT],
            len: 0,
        }
    }
}

impl Sniffer {
    /// Looks through bytes of a head for an `Accept:` line (a line split across two reads
    /// is missed; the answer is then XML, the API's default).
    pub fn saw(&mut self, bytes: &[u8]) {
        // Every head passes here: line ends found eight bytes at a time ([`each_line_start`]),
        // and a line looked at only when it starts with `a` or `A`. A byte-by-byte scan cost
        // a hit about 1,300 instructions, `memchr`'s iterator (a call through its CPU
        // dispatch per line end, for heads of a few lines) about 700 (`bench/instructions.py`).
        each_line_start(bytes, |at| {
            let rest = &bytes[at..];
            if rest.first().is_some_and(|b| b | 0x20 == b'a')
                && rest.len() >= 7
                && rest[..7].eq_ignore_ascii_case(b"accept:")
            {
                let value = &rest[7..];
                let end = value
                    .iter()
                    .position(|&b| b == b'\r' || b == b'\n')
                    .unwrap_or(value.len());
                let value = value[..end].trim_ascii();
                if value.len() <= MAX_ACCEPT {
                    self.accept[..value.len()].copy_from_slice(value);
                    self.len = value.len();
                }
            }
        });
    }

    /// A response was written: what is read next belongs to another head.
    pub fn reset(&mut self) {
        self.len = 0;
    }

    fn format(&self) -> Format {
        let mut headers = HeaderMap::new();
        if self.len > 0
            && let Ok(value) = HeaderValue::from_bytes(&self.accept[..self.len])
        {
            headers.insert(http::header::ACCEPT, value);
        }
        negotiate_response(&headers).unwrap_or(Format::Xml)
    }
}

/// The API's answer in place of `written`, when `written` is hyper's own refusal of a head
/// (a 400, 414 or 431 without our request id); `None` for anything else.
pub fn replace(written: &[u8], sniffer: &Sniffer) -> Option<Bytes> {
    // Every write passes here: anything but a 4xx head is let through at once.
    // (`HTTP/1.1` then ` 4`: a status line of a 4xx.)
    if !written.starts_with(b"HTTP/1.1") || written.get(8..10) != Some(b" 4") {
        return None;
    }
    // hyper's refusal is about a hundred bytes; a head is looked for in the first KiB only.
    let written = &written[..written.len().min(1024)];
    let head_end = find(written, b"\r\n\r\n")?;
    let head = &written[..head_end + 2];
    let status_line_end = find(head, b"\r\n")?;
    let status_line = &head[..status_line_end];
    let code = status_line.get(9..12)?;
    let message = match code {
        b"400" => UNREADABLE_HEAD,
        b"414" => "Request-URI too long.",
        b"431" => "Request header fields too large.",
        _ => return None,
    };
    // Ours always carry a request id, and a body; hyper's never.
    if contains_ignore_case(head, b"\r\nx-request-id:") {
        return None;
    }
    let status = StatusCode::from_bytes(code).ok()?;
    let format = sniffer.format();
    let body = render_error(format, &ApiError::new(status, message));
    let id = crate::observe::telemetry::new_id();
    tracing::debug!(
        status = status.as_u16(),
        request_id = id.to_str().unwrap_or_default(),
        "request head refused by the HTTP parser"
    );
    let mut out = Vec::with_capacity(256 + body.len());
    out.extend_from_slice(status_line);
    out.extend_from_slice(b"\r\n");
    // hyper's date line, if it wrote one.
    for line in head[status_line_end + 2..].split(|&b| b == b'\n') {
        if line.len() > 5 && line[..5].eq_ignore_ascii_case(b"date:") {
            out.extend_from_slice(line);
            out.push(b'\n');
        }
    }
    out.extend_from_slice(b"content-type: ");
    out.extend_from_slice(format.content_type().as_bytes());
    out.extend_from_slice(b"\r\nx-request-id: ");
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(b"\r\nconnection: close\r\ncontent-length: ");
    out.extend_from_slice(body.len().to_string().as_bytes());
    out.extend_from_slice(b"\r\n\r\n");
    out.extend_from_slice(&body);
    Some(Bytes::from(out))
}

/// Calls `f` with the offset just past every `\n` in `bytes` (where each line after it
/// starts), in order. Eight bytes at a time: a word with no `\n` in it (most of a head)
/// costs a few instructions, found with the classic zero-byte test on the word xor `\n`
/// repeated. A plain loop and a callback: the same walk as an iterator of adaptors
/// cost half again what `memchr` did.
fn each_line_start(bytes: &[u8], mut f: impl FnMut(usize)) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const NEWLINES: u64 = ONES * b'\n' as u64;
    let mut i = 0;
    while let Some(word) = bytes.get(i..i + 8) {
        let x = u64::from_le_bytes(word.try_into().expect("eight bytes")) ^ NEWLINES;
        // A high bit set for each byte that is `\n`, and possibly for bytes above one (a
        // borrow runs upward from a true zero byte): every marked byte is checked again.
        let mut found = x.wrapping_sub(ONES) & !x & HIGHS;
        while found != 0 {
            let at = i + found.trailing_zeros() as usize / 8;
            found &= found - 1;
            if bytes[at] == b'\n' {
                f(at + 1);
            }
        }
        i += 8;
    }
    for (at, byte) in bytes.iter().enumerate().skip(i) {
        if *byte == b'\n' {
            f(at + 1);
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn contains_ignore_case(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYPER_431: &[u8] =
        b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\n\
        content-length: 0\r\ndate: Thu, 26 Nov 2026 07:12:53 GMT\r\n\r\n";

    #[test]
    fn hypers_refusal_becomes_the_apis() {
        let mut sniffer = Sniffer::default();
        sniffer.saw(b"GET / HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\nx-a: 1\r\n");
        let answer = replace(HYPER_431, &sniffer).unwrap();
        let text = std::str::from_utf8(&answer).unwrap();
        assert!(
            text.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"),
            "{text}"
        );
        assert!(
            text.contains("\r\ndate: Thu, 26 Nov 2026 07:12:53 GMT\r\n"),
            "{text}"
        );
        assert!(
            text.contains("\r\ncontent-type: application/json"),
            "{text}"
        );
        assert!(text.contains("\r\nx-request-id: "), "{text}");
        assert!(text.ends_with(
            "\r\n\r\n{\"messages\":{\"error\":[{\"code\":431,\"message\":\"Request header fields too large.\"}]}}"
        ), "{text}");
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{head}"
        );
    }

    #[test]
    fn without_a_readable_accept_the_answer_is_xml() {
        let mut sniffer = Sniffer::default();
        sniffer.saw(b"GET / HTTP/1.1\r\nAccept: application/json\r\n");
        sniffer.reset();
        let answer = replace(HYPER_431, &sniffer).unwrap();
        assert!(
            std::str::from_utf8(&answer)
                .unwrap()
                .contains("<message>Request header fields too large.</message>")
        );
    }

    #[test]
    fn line_starts_are_every_offset_past_a_newline() {
        // Every length around the word size, newlines at every place, and bytes that make
        // the zero-byte test borrow (0x0b, 0x8a: `\n` xor them is 1 or has the high bit).
        let mut state = 0x9e37_79b9_u32;
        for len in 0..80 {
            for _ in 0..200 {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 17;
                        state ^= state << 5;
                        [b'\n', b'a', 0x0b, 0x8a, b'\r', 0][state as usize % 6]
                    })
                    .collect();
                let expected: Vec<usize> = bytes
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| **b == b'\n')
                    .map(|(i, _)| i + 1)
                    .collect();
                let mut found = Vec::new();
                each_line_start(&bytes, |at| found.push(at));
                assert_eq!(found, expected, "{bytes:?}");
            }
        }
    }

    #[test]
    fn the_accept_line_is_found_in_any_case_anywhere_in_the_head() {
        for head in [
            &b"GET / HTTP/1.1\r\nHost: x\r\nACCEPT:  application/json \r\n\r\n"[..],
            b"GET /a-long-enough-path HTTP/1.1\r\naccept:application/json\r\n",
            b"GET / HTTP/1.1\nHost: x\nX-A: 1\nX-B: 2\nAccept: application/json",
        ] {
            let mut sniffer = Sniffer::default();
            sniffer.saw(head);
            assert_eq!(sniffer.format(), Format::Json, "{head:?}");
        }
        let mut sniffer = Sniffer::default();
        sniffer.saw(b"GET / HTTP/1.1\r\nX-Accept: application/json\r\n");
        assert_eq!(sniffer.format(), Format::Xml);
    }

    #[test]
    fn our_own_answers_are_left_alone() {
        let sniffer = Sniffer::default();
        assert!(replace(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", &sniffer).is_none());
        assert!(
            replace(
                b"HTTP/1.1 400 Bad Request\r\nx-request-id: abc\r\ncontent-length: 2\r\n\r\n{}",
                &sniffer
            )
            .is_none()
        );
        assert!(replace(b"HTTP/1.1 404 Not Found\r\n\r\n", &sniffer).is_none());
        // Part of a body, not a head.
        assert!(replace(b"abc", &sniffer).is_none());
    }
}
