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
//! After the request-context module lands (issue 9), the task-local here belongs there.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use http::{HeaderMap, HeaderName, HeaderValue};

pub const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");
pub const TRACESTATE: HeaderName = HeaderName::from_static("tracestate");

/// The trace a request belongs to and the gateway's place in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    /// 32 lower-case hex digits.
    pub trace_id: String,
    /// The gateway's own id in the trace, 16 hex digits: the parent of its upstream calls.
    pub span_id: String,
    /// 2 hex digits; `01` is sampled.
    pub flags: String,
    /// The caller's `tracestate`, passed on unchanged.
    pub state: Option<HeaderValue>,
    /// Whether the trace came from the caller.
    pub continued: bool,
}

tokio::task_local! {
    static CURRENT: TraceContext;
}

/// The trace of the request the current task serves, if any.
pub fn current() -> Option<TraceContext> {
    CURRENT.try_with(Clone::clone).ok()
}

/// Runs `work` with `trace` as the current trace.
pub async fn scope<F: Future>(trace: TraceContext, work: F) -> F::Output {
    CURRENT.scope(trace, work).await
}

impl TraceContext {
    /// The context of a request with these headers.
    pub fn for_request(headers: &HeaderMap) -> TraceContext {
        let span_id = hex(&next_unique().to_be_bytes());
        match headers.get(&TRACEPARENT).and_then(parse) {
            Some((trace_id, flags)) => TraceContext {
                trace_id,
                span_id,
                flags,
                state: headers.get(&TRACESTATE).filter(|v| v.len() <= 512).cloned(),
                continued: true,
            },
            None => {
                let mut id = [0u8; 16];
                id[..8].copy_from_slice(&process_prefix().to_be_bytes());
                id[8..].copy_from_slice(&next_unique().to_be_bytes());
                TraceContext {
                    trace_id: hex(&id),
                    span_id,
                    flags: "00".to_owned(),
                    state: None,
                    continued: false,
                }
            }
        }
    }

    /// The `traceparent` of the gateway's upstream calls.
    pub fn traceparent(&self) -> HeaderValue {
        HeaderValue::from_str(&format!(
            "00-{}-{}-{}",
            self.trace_id, self.span_id, self.flags
        ))
        .expect("hex digits and dashes are a valid header value")
    }
}

/// `00-<32 hex>-<16 hex>-<2 hex>` -> (trace id, flags). A later version's header is read
/// by its version-00 prefix, as the standard asks; all-zero ids and version `ff` are
/// invalid.
fn parse(value: &HeaderValue) -> Option<(String, String)> {
    let text = value.to_str().ok()?.trim();
    let version = text.get(0..2)?;
    if !is_hex(version) || version == "ff" {
        return None;
    }
    if version == "00" && text.len() != 55 {
        return None;
    }
    if text.len() > 55 && text.as_bytes()[55] != b'-' {
        return None;
    }
    let bytes = text.as_bytes();
    if bytes.len() < 55 || bytes[2] != b'-' || bytes[35] != b'-' || bytes[52] != b'-' {
        return None;
    }
    let (trace_id, parent_id, flags) = (&text[3..35], &text[36..52], &text[53..55]);
    if !is_hex(trace_id) || !is_hex(parent_id) || !is_hex(flags) {
        return None;
    }
    if trace_id.bytes().all(|b| b == b'0') || parent_id.bytes().all(|b| b == b'0') {
        return None;
    }
    Some((trace_id.to_owned(), flags.to_owned()))
}

fn is_hex(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Drawn once per process, so ids of different instances do not collide.
fn process_prefix() -> u64 {
    static PREFIX: OnceLock<u64> = OnceLock::new();
    *PREFIX.get_or_init(|| getrandom::u64().unwrap_or(u64::from(std::process::id())) | 1)
}

/// Unique within the process and never zero: the process prefix mixed with a counter (no
/// system call per request).
fn next_unique() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    // An odd multiplier is a bijection on u64, so distinct counters give distinct ids.
    (n ^ process_prefix()).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(traceparent: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(TRACEPARENT, HeaderValue::from_str(traceparent).unwrap());
        headers
    }

    #[test]
    fn continues_a_valid_trace() {
        let trace = TraceContext::for_request(&headers(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ));
        assert!(trace.continued);
        assert_eq!(trace.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(trace.flags, "01");
        assert_ne!(trace.span_id, "00f067aa0ba902b7");
        let sent = trace.traceparent();
        let sent = sent.to_str().unwrap();
        assert!(
            sent.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-") && sent.ends_with("-01"),
            "{sent}"
        );
        assert!(parse(&trace.traceparent()).is_some());
        // A later version is read by its prefix.
        let later = TraceContext::for_request(&headers(
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
            let trace = TraceContext::for_request(&headers(bad));
            assert!(!trace.continued, "{bad:?}");
            assert_eq!(trace.flags, "00");
            assert!(parse(&trace.traceparent()).is_some(), "{bad:?}");
        }
        let (a, b) = (
            TraceContext::for_request(&HeaderMap::new()),
            TraceContext::for_request(&HeaderMap::new()),
        );
        assert_ne!(a.trace_id, b.trace_id);
        assert_ne!(a.span_id, b.span_id);
    }
}
