//! A back end's failures as the API's errors: the one place where a store's statuses and
//! messages become the spec's (the back end reports them in the port's terms and knows
//! nothing of the API's).
//!
//! Resources that know better (a 404 that means "Category not found.", a 400 that means a
//! duplicate e-mail) look at the [`BackendError`] first and fall back to [`to_api`].

use crate::backend::port::BackendError;
use crate::http::ApiError;

/// The client-facing error for an upstream failure.
pub fn to_api(error: BackendError) -> ApiError {
    match &error {
        BackendError::Status { status: 404, .. } => ApiError::not_found(),
        BackendError::Status {
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
        BackendError::Status {
            status: 401 | 403, ..
        } => ApiError::bad_gateway().with_cause(format!(
            "{error} (check STOREGATE_UPSTREAM_TOKEN and the integration's resource access)"
        )),
        BackendError::Status { status: 500, .. } => ApiError::internal().with_cause(&error),
        BackendError::Status {
            status: 502..=504, ..
        } => ApiError::unavailable().with_cause(&error),
        BackendError::Status { status, .. } if *status >= 500 => {
            ApiError::bad_gateway().with_cause(&error)
        }
        BackendError::Status { .. } => {
            ApiError::bad_request(crate::http::msg::UNKNOWN).with_cause(&error)
        }
        BackendError::Timeout => ApiError::gateway_timeout().with_cause(&error),
        BackendError::Connect(_) | BackendError::Unavailable => {
            ApiError::unavailable().with_cause(&error)
        }
        BackendError::Protocol(_) => ApiError::bad_gateway().with_cause(&error),
        // What the store cannot do is not the client's fault, nor a failure: said as it is.
        BackendError::Unsupported(what) => ApiError::new(
            http::StatusCode::NOT_IMPLEMENTED,
            format!("{what} is not available with this back end"),
        ),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::backend::port::StoreMessage;

    /// The store's refusal with `status` and the error body `body` (shared with the other
    /// rules' tests).
    pub(crate) fn status(status: u16, body: &str) -> BackendError {
        BackendError::Status {
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
        assert_eq!(to_api(BackendError::Timeout).status().as_u16(), 504);
        assert_eq!(
            to_api(BackendError::Protocol("x".into())).status().as_u16(),
            502
        );
        let e = to_api(status(
            400,
            r#"{"message":"One or more input exceptions have occurred.","errors":[{"message":"a"},{"message":"b"}]}"#,
        ));
        assert_eq!(e.messages().len(), 3);
    }
}
