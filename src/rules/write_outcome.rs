//! Writes whose outcome is unknown: what they touched is held off the cache, and the
//! client is told it cannot know whether the change was made.
//!
//! A write that Magento answered (success, a 400, a 404, a 500) has a known outcome: its
//! tags are invalidated, as every write's are. A write the gateway gave up on after sending
//! it (the deadline passed, the connection broke, Magento's proxy said 502 or 504, the
//! answer was cut) may still land in Magento: its tags are **held off** for
//! [`crate::cache::hold_off::WINDOW`] on every instance (`Cache::hold_off`, published like an
//! invalidation), so that no read in between caches the record from before the landing.
//! The answer keeps its status (504, 503, 502) and adds a second message and an
//! `X-Write-Outcome: unknown` header, so that a client reads the record again instead of
//! retrying a create blindly. A refused connection counts as unknown too: the client cannot
//! tell it from a lost answer either, and the cost of holding off is a few Magento reads.

use http::{HeaderName, HeaderValue, StatusCode};

use crate::backend::port::BackendError;
use crate::cache::Cache;
use crate::http::ApiError;

/// The second message of a write whose outcome is unknown.
pub const UNKNOWN: &str =
    "The change may or may not have been made: read the record again before sending it again.";

/// The header that says so.
pub const X_WRITE_OUTCOME: HeaderName = HeaderName::from_static("x-write-outcome");

/// True when Magento may have applied a write that failed this way.
pub fn is_unknown(error: &BackendError) -> bool {
    match error {
        BackendError::Timeout | BackendError::Connect(_) | BackendError::Protocol(_) => true,
        // A proxy in front of Magento gave up waiting for it (or lost it).
        BackendError::Status { status, .. } => matches!(status, 502 | 504),
        // The breaker kept the call from being sent; the back end has no such call.
        BackendError::Unavailable | BackendError::Unsupported(_) => false,
    }
}

/// After a write: its tags invalidated, or held off when its outcome is unknown.
pub fn touched<T>(cache: &Cache, result: &Result<T, BackendError>, tags: &[String]) {
    match result {
        Err(error) if is_unknown(error) => {
            crate::observe::log_limit::warn(
                "write outcome unknown",
                format_args!(
                    "a write's outcome is unknown: {error}; its tags are held off the cache"
                ),
            );
            cache.hold_off(tags, crate::cache::hold_off::WINDOW);
        }
        _ => cache.invalidate(tags),
    }
}

/// The client's error for a failed write: the resource's own translation (`to_api`), and
/// when the outcome is unknown, the second message and the header.
pub fn answer(error: BackendError, to_api: impl FnOnce(BackendError) -> ApiError) -> ApiError {
    let unknown = is_unknown(&error);
    let api = to_api(error);
    if unknown { mark(api) } else { api }
}

/// [`answer`] for an error already translated (the stock batch's entries): a 504, the
/// gateway's own deadline passing while the write was out, is the unknown outcome there.
pub fn answer_translated(api: ApiError) -> ApiError {
    if api.status() == StatusCode::GATEWAY_TIMEOUT {
        mark(api)
    } else {
        api
    }
}

/// True when [`answer_translated`] would mark this error.
pub fn translated_is_unknown(api: &ApiError) -> bool {
    api.status() == StatusCode::GATEWAY_TIMEOUT
}

fn mark(api: ApiError) -> ApiError {
    api.with_message(UNKNOWN)
        .with_header(X_WRITE_OUTCOME, HeaderValue::from_static("unknown"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::port::StoreMessage;

    #[test]
    fn which_failures_leave_the_outcome_unknown() {
        let status = |status| BackendError::Status {
            status,
            error: StoreMessage::default(),
        };
        assert!(is_unknown(&BackendError::Timeout));
        assert!(is_unknown(&BackendError::Connect("reset".into())));
        assert!(is_unknown(&status(504)));
        assert!(is_unknown(&status(502)));
        assert!(!is_unknown(&status(500)));
        assert!(!is_unknown(&status(400)));
        assert!(!is_unknown(&BackendError::Unavailable));
        let api = answer(BackendError::Timeout, crate::rules::backend_errors::to_api);
        assert_eq!(api.status(), 504);
        assert_eq!(api.messages().len(), 2);
        assert_eq!(api.messages()[1].text, UNKNOWN);
    }
}
