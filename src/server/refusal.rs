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

/// Bytes of a head kept to be looked through only if hyper refuses it: as much as hyper's
/// read buffer holds, so that a head hyper refuses for its size or its fields was kept
/// whole.
const KEPT: usize = crate::server::protocol::HYPER_MAX_HEAD;

/// Room a connection keeps between heads: a head larger than this (rare, and hostile
/// heads are) gives its room back when it is answered.
const KEPT_ROOM: usize = 4 * 1024;

/// Notes the `Accept` line of the head being read (only what the socket read while no
/// request was in flight: heads, not bodies).
///
/// Almost every head is one hyper accepts, and then its `Accept` line is never needed: so a
/// head is only copied aside as it is read (a few dozen instructions), and looked through
/// when hyper refuses it ([`replace`]). Looking through every head as it was read cost a
/// cache hit about 700 instructions (`bench/instructions.py`). Kept whole, a head is looked
/// through as one piece: an `Accept` line split between two reads is found too. A head
/// that outgrows [`KEPT`] (hyper refuses it anyway) is looked through as it is read from
/// there on, each read on its own, so that an `Accept` line anywhere is still found.
///
/// The copy is a buffer of the connection's, kept between heads: a hit pays no allocation
/// for a refusal that almost never comes.
#[derive(Debug)]
pub struct Sniffer {
    accept: [u8; MAX_ACCEPT],
    /// Bytes of `accept` in use; 0: no `Accept` line seen.
    len: usize,
    /// What was read of the head, not looked through yet.
    kept: Vec<u8>,
}

impl Default for Sniffer {
    fn default() -> Sniffer {
        Sniffer {
            accept: [0; MAX_ACCEPT],
            len: 0,
            kept: Vec::new(),
        }
    }
}

impl Sniffer {
    /// Bytes of a head, as the socket read them.
    pub fn saw(&mut self, bytes: &[u8]) {
        if self.kept.len() + bytes.len() <= KEPT {
            self.kept.extend_from_slice(bytes);
            return;
        }
        // Past what is kept: what was kept, then these bytes, looked through now.
        self.look_through_kept();
        self.look_through(bytes);
    }

    /// Looks through what was kept of the head, and keeps nothing.
    fn look_through_kept(&mut self) {
        find_accept(&self.kept, &mut self.accept, &mut self.len);
        self.kept.clear();
    }

    /// Looks through bytes of a head for an `Accept:` line (past the kept bytes, a line
    /// split across two reads is missed; the answer is then XML, the API's default).
    fn look_through(&mut self, bytes: &[u8]) {
        find_accept(bytes, &mut self.accept, &mut self.len);
    }

    /// A response was written: what is read next belongs to another head.
    pub fn reset(&mut self) {
        self.len = 0;
        self.kept.clear();
        if self.kept.capacity() > KEPT_ROOM {
            self.kept.shrink_to(KEPT_ROOM);
        }
    }

    /// The format the head's `Accept` line asks for (XML without one).
    fn format(&mut self) -> Format {
        self.look_through_kept();
        let mut headers = HeaderMap::new();
        if self.len > 0
            && let Ok(value) = HeaderValue::from_bytes(&self.accept[..self.len])
        {
            headers.insert(http::header::ACCEPT, value);
        }
        negotiate_response(&headers).unwrap_or(Format::Xml)
    }
}

/// Notes in `accept` (`len` bytes of it) the value of the last `Accept:` line in `bytes`.
fn find_accept(bytes: &[u8], accept: &mut [u8; MAX_ACCEPT], len: &mut usize) {
    // Line ends found with SIMD (`memchr`), and a line looked at only when it starts with
    // `a` or `A` (a byte-by-byte scan cost a hit about 1,300 instructions).
    for at in memchr::memchr_iter(b'\n', bytes) {
        let rest = &bytes[at + 1..];
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
                accept[..value.len()].copy_from_slice(value);
                *len = value.len();
            }
        }
    }
}

/// The API's answer in place of `written`, when `written` is hyper's own refusal of a head
/// (a 400, 414 or 431 without our request id); `None` for anything else.
pub fn replace(written: &[u8], sniffer: &mut Sniffer) -> Option<Bytes> {
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
        let answer = replace(HYPER_431, &mut sniffer).unwrap();
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
        let answer = replace(HYPER_431, &mut sniffer).unwrap();
        assert!(
            std::str::from_utf8(&answer)
                .unwrap()
                .contains("<message>Request header fields too large.</message>")
        );
    }

    #[test]
    fn the_accept_line_is_found_in_a_kept_head_and_past_it() {
        // Within what is kept, over several reads, in any case, even split between reads.
        let mut sniffer = Sniffer::default();
        sniffer.saw(b"GET / HTTP/1.1\r\nHost: x\r\n");
        sniffer.saw(b"ACCEPT:  application/json \r\nx-a: 1\r\n");
        assert_eq!(sniffer.format(), Format::Json);
        sniffer.reset();
        sniffer.saw(b"GET / HTTP/1.1\r\nHost: x\r\nAcc");
        sniffer.saw(b"ept: application/json\r\n");
        assert_eq!(sniffer.format(), Format::Json);
        // A large head gives its room back when it is answered.
        sniffer.saw(&[b'x'; 20_000]);
        sniffer.reset();
        assert!(sniffer.kept.capacity() <= KEPT_ROOM);
        // Reset by an answer: the next head has none.
        sniffer.reset();
        sniffer.saw(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(sniffer.format(), Format::Xml);
        // A head that outgrows what is kept: its Accept line before the limit, after it, or
        // in the read that crosses it.
        let filler: Vec<u8> = (0..6000)
            .flat_map(|i| format!("x-h{i}: 1\r\n").into_bytes())
            .collect();
        assert!(filler.len() > KEPT);
        for (before, after) in [
            (&b"Accept: application/json\r\n"[..], &b""[..]),
            // (A line that starts a read past the kept bytes is missed, as a split one.)
            (b"", b"x-last: 1\r\naccept: application/json\r\n"),
        ] {
            let mut sniffer = Sniffer::default();
            sniffer.saw(b"GET / HTTP/1.1\r\n");
            sniffer.saw(before);
            for chunk in filler.chunks(5000) {
                sniffer.saw(chunk);
            }
            sniffer.saw(after);
            assert_eq!(sniffer.format(), Format::Json, "{before:?} {after:?}");
        }
        let mut sniffer = Sniffer::default();
        let mut crossing = filler.clone();
        crossing.extend_from_slice(b"Accept: application/json\r\n");
        sniffer.saw(&crossing);
        assert_eq!(sniffer.format(), Format::Json);
    }

    #[test]
    fn our_own_answers_are_left_alone() {
        let mut sniffer = Sniffer::default();
        assert!(
            replace(
                b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n",
                &mut sniffer
            )
            .is_none()
        );
        assert!(
            replace(
                b"HTTP/1.1 400 Bad Request\r\nx-request-id: abc\r\ncontent-length: 2\r\n\r\n{}",
                &mut sniffer
            )
            .is_none()
        );
        assert!(replace(b"HTTP/1.1 404 Not Found\r\n\r\n", &mut sniffer).is_none());
        // Part of a body, not a head.
        assert!(replace(b"abc", &mut sniffer).is_none());
    }
}
