//! W3C Trace Context (`traceparent`, `tracestate`): a caller's trace continues through the
//! gateway into Magento, and the gateway's logs carry the trace id.
//!
//! A request with a valid `traceparent` keeps its trace id and flags; one without (or with
//! an invalid one, which the standard says to ignore) starts a new trace, not sampled. The
//! gateway is one hop of the trace: each request gets its own parent id, sent to Magento
//! as `traceparent: 00-<trace id>-<gateway's id>-<flags>` with every upstream call, with the
//! caller's `tracestate` passed on as it came. Spans are not exported (no OpenTelemetry
//! exporter is built in): the ids are for correlating logs across services.
//!
//! The request being served carries its context in [`crate::context::request`].

use std::sync::OnceLock;

use http::{HeaderMap, HeaderName, HeaderValue};

pub const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");
pub const TRACESTATE: HeaderName = HeaderName::from_static("tracestate");

/// The trace a request belongs to and the gateway's place in it. Kept as numbers, so the
/// hot path formats nothing: the ids are written out only for an upstream call or a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    pub trace_id: u128,
    /// The gateway's own id in the trace: the parent of its upstream calls.
    pub span_id: u64,
    /// `01` is sampled.
    pub flags: u8,
    /// The caller's `tracestate`, passed on unchanged.
    pub state: Option<HeaderValue>,
    /// Whether the trace came from the caller.
    pub continued: bool,
}

/// A trace id written as 32 lower-case hex digits (for log fields).
#[derive(Debug, Clone, Copy)]
pub struct TraceId(pub u128);

impl std::fmt::Display for TraceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

impl TraceContext {
    /// The context of a request whose `traceparent` (the first, if any) the caller found
    /// already: `Observed::begin` looks for it in the pass that finds the request id.
    pub fn with_parent(traceparent: Option<&HeaderValue>, headers: &HeaderMap) -> TraceContext {
        let span_id = next_unique();
        match traceparent.and_then(parse) {
            Some((trace_id, flags)) => TraceContext {
                trace_id,
                span_id,
                flags,
                state: headers.get(&TRACESTATE).filter(|v| v.len() <= 512).cloned(),
                continued: true,
            },
            None => TraceContext {
                trace_id: (u128::from(process_prefix()) << 64) | u128::from(next_unique()),
                span_id,
                flags: 0,
                state: None,
                continued: false,
            },
        }
    }

    pub fn trace_id(&self) -> TraceId {
        TraceId(self.trace_id)
    }

    /// The `traceparent` of the gateway's upstream calls.
    pub fn traceparent(&self) -> HeaderValue {
        HeaderValue::from_str(&format!(
            "00-{:032x}-{:016x}-{:02x}",
            self.trace_id, self.span_id, self.flags
        ))
        .expect("hex digits and dashes are a valid header value")
    }
}

/// `00-<32 hex>-<16 hex>-<2 hex>` -> (trace id, flags). A later version's header is read
/// by its version-00 prefix, as the standard asks; upper-case hex, all-zero ids and version
/// `ff` are invalid.
fn parse(value: &HeaderValue) -> Option<(u128, u8)> {
    let text = value.to_str().ok()?.trim();
    let bytes = text.as_bytes();
    if bytes.len() < 55 || bytes[2] != b'-' || bytes[35] != b'-' || bytes[52] != b'-' {
        return None;
    }
    let version = &text[0..2];
    if !is_hex(version) || version == "ff" {
        return None;
    }
    if version == "00" && bytes.len() != 55 {
        return None;
    }
    if bytes.len() > 55 && bytes[55] != b'-' {
        return None;
    }
    let (trace_id, parent_id, flags) = (&text[3..35], &text[36..52], &text[53..55]);
    if !is_hex(trace_id) || !is_hex(parent_id) || !is_hex(flags) {
        return None;
    }
    let trace_id = u128::from_str_radix(trace_id, 16).ok()?;
    let parent_id = u64::from_str_radix(parent_id, 16).ok()?;
    if trace_id == 0 || parent_id == 0 {
        return None;
    }
    Some((trace_id, u8::from_str_radix(flags, 16).ok()?))
}

fn is_hex(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Drawn once per process, so ids of different instances do not collide.
fn process_prefix() -> u64 {
    static PREFIX: OnceLock<u64> = OnceLock::new();
    *PREFIX.get_or_init(|| getrandom::u64().unwrap_or(u64::from(std::process::id())) | 1)
}

/// Unique within the process and never zero: a counter mixed with the process prefix (no
/// system call per request, no shared write: `per_thread::sequence`).
fn next_unique() -> u64 {
    thread_local!(static BLOCK: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) });
    static NEXT: crate::per_thread::sequence::Sequence =
        crate::per_thread::sequence::Sequence::new(&BLOCK);
    let n = NEXT.next();
    // An odd multiplier is a bijection on u64, so distinct counters give distinct ids.
    (n ^ process_prefix()).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The context of a request with these headers, its `traceparent` looked up as
    /// `Observed::begin` finds it.
    fn for_request(headers: &HeaderMap) -> TraceContext {
        TraceContext::with_parent(headers.get(&TRACEPARENT), headers)
    }

    fn headers(traceparent: &str) -> HeaderMap {
        HeaderMap::from_iter([(TRACEPARENT, HeaderValue::from_str(traceparent).unwrap())])
    }

    #[test]
    fn continues_a_valid_trace() {
        let trace = for_request(&headers(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ));
        assert!(trace.continued);
        assert_eq!(
            trace.trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert_eq!(trace.flags, 1);
        assert_ne!(trace.span_id, 0x00f0_67aa_0ba9_02b7);
        let sent = trace.traceparent();
        let sent = sent.to_str().unwrap();
        assert!(
            sent.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-") && sent.ends_with("-01"),
            "{sent}"
        );
        assert!(parse(&trace.traceparent()).is_some());
        // A later version is read by its prefix.
        let later = for_request(&headers(
            "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes-next",
        ));
        assert!(later.continued);
    }

    #[test]
    fn starts_a_trace_when_the_header_is_absent_or_invalid() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        ] {
            let trace = for_request(&headers(bad));
            assert!(!trace.continued, "{bad:?}");
            assert_eq!(trace.flags, 0);
            assert!(parse(&trace.traceparent()).is_some(), "{bad:?}");
        }
        let (a, b) = (
            for_request(&HeaderMap::new()),
            for_request(&HeaderMap::new()),
        );
        assert_ne!(a.trace_id, b.trace_id);
        assert_ne!(a.span_id, b.span_id);
    }
}
