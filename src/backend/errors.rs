//! Upstream failures as the old API's errors: the one place where Magento 2's statuses and
//! messages become the spec's.
//!
//! Resources that know better (a 404 that means "Category not found.", a 400 that means a
//! duplicate e-mail) look at the [`UpstreamError`] first and fall back to [`to_api`].

use crate::backend::error::UpstreamError;
use crate::http::ApiError;

/// The client-facing error for an upstream failure.
pub fn to_api(error: UpstreamError) -> ApiError {
    match &error {
        UpstreamError::Status { status: 404, .. } => ApiError::not_found(),
        UpstreamError::Status {
            status: 400,
            error: m2,
        } => {
            // Magento's validation messages are meant for people; pass them on, each one.
            let mut messages: Vec<String> = m2.errors.iter().map(|e| e.text()).collect();
            if messages.is_empty() {
                let text = m2.text();
                messages.push(if text.is_empty() {
                    crate::http::msg::UNKNOWN.to_owned()
                } else {
                    text
                });
            }
            if messages.len() == 1 {
                ApiError::bad_request(messages.remove(0))
            } else {
                ApiError::validation(messages)
            }
            .with_cause(&error)
        }
        // Our integration token was refused: a configuration problem on our side, never
        // something to tell the client about.
        UpstreamError::Status {
            status: 401 | 403, ..
        } => ApiError::bad_gateway().with_cause(format!(
            "{error} (check STOREGATE_UPSTREAM_TOKEN and the integration's resource access)"
        )),
        UpstreamError::Status { status: 500, .. } => ApiError::internal().with_cause(&error),
        UpstreamError::Status {
            status: 502..=504, ..
        } => ApiError::unavailable().with_cause(&error),
        UpstreamError::Status { status, .. } if *status >= 500 => {
            ApiError::bad_gateway().with_cause(&error)
        }
        UpstreamError::Status { .. } => {
            ApiError::bad_request(crate::http::msg::UNKNOWN).with_cause(&error)
        }
        UpstreamError::Timeout => ApiError::gateway_timeout().with_cause(&error),
        UpstreamError::Connect(_) | UpstreamError::Unavailable => {
            ApiError::unavailable().with_cause(&error)
        }
        UpstreamError::Protocol(_) => ApiError::bad_gateway().with_cause(&error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::error::StoreMessage;

    fn status(status: u16, body: &str) -> UpstreamError {
        UpstreamError::Status {
            status,
            error: StoreMessage::parse(body.as_bytes()),
        }
    }

    #[test]
    fn statuses_map_to_the_spec() {
        assert_eq!(
            to_api(status(404, "{}")).first_message(),
            "Resource not found."
        );
        let e = to_api(status(
            400,
            r#"{"message":"%fieldName is wrong","parameters":{"fieldName":"sku"}}"#,
        ));
        assert_eq!(
            (e.status().as_u16(), e.first_message()),
            (400, "sku is wrong")
        );
        assert_eq!(
            to_api(status(500, "<html>")).first_message(),
            "Resource internal error."
        );
        assert_eq!(to_api(status(401, "{}")).status().as_u16(), 502);
        assert_eq!(to_api(status(503, "")).status().as_u16(), 503);
        assert_eq!(to_api(UpstreamError::Timeout).status().as_u16(), 504);
        assert_eq!(
            to_api(UpstreamError::Protocol("x".into()))
                .status()
                .as_u16(),
            502
        );
        let e = to_api(status(
            400,
            r#"{"message":"One or more input exceptions have occurred.","errors":[{"message":"a"},{"message":"b"}]}"#,
        ));
        assert_eq!(e.messages().len(), 3);
    }
}
