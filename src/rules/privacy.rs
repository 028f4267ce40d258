//! The privacy rules of the customer resources (customers, addresses, orders): who may
//! see whose records, which answers no cache may keep, and which upstream failures are
//! told to the client and logged without the customer's data.

use axum::response::Response;
use http::HeaderValue;

use crate::auth::Principal;
use crate::backend::port::BackendError;
use crate::http::{ApiError, msg};
use crate::rules::backend_errors;

/// May this principal see the records of customer `customer_id`? Admin may see all; a
/// customer only their own. Everyone else gets the 404 of a record that does not exist.
pub fn owns(principal: Principal, customer_id: u64) -> bool {
    match principal {
        Principal::Admin => true,
        Principal::Customer(me) => me == customer_id,
        Principal::Guest => false,
    }
}

/// Marks a response carrying one person's data: no cache, shared or private, may keep it.
pub fn private(mut response: Response) -> Response {
    response.headers_mut().insert(
        http::header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-store"),
    );
    response
}

/// An upstream failure on a customer, address or order call, as the client's error,
/// with nothing of the customer's data kept for the log.
///
/// Magento's 400 messages are meant for the caller (they may quote what was sent, which
/// is the caller's own data), so they are passed on, and carry no cause: refusals without
/// a cause are not logged. Other failures keep a cause without Magento's parameters or
/// body excerpts.
pub fn redact(error: BackendError) -> ApiError {
    match &error {
        BackendError::Status { status: 404, .. } => ApiError::not_found(),
        BackendError::Status { status: 400, .. } => {
            let mapped = backend_errors::to_api(error);
            let mut texts: Vec<String> = mapped
                .messages()
                .iter()
                .map(|m| m.text.to_string())
                .collect();
            let closing = texts.last().is_some_and(|t| t == msg::PRE_VALIDATION);
            if closing && texts.len() > 1 {
                texts.pop();
                ApiError::validation(texts)
            } else {
                ApiError::new(
                    mapped.status(),
                    texts.into_iter().next().unwrap_or_default(),
                )
            }
        }
        _ => {
            let summary = match &error {
                // The template only: its parameters are where values are quoted.
                BackendError::Status { status, error: m2 } => {
                    format!("upstream answered {status}: {}", m2.message)
                }
                BackendError::Protocol(_) => {
                    "upstream sent an unusable answer (details withheld: customer data)".to_owned()
                }
                other => other.to_string(),
            };
            backend_errors::to_api(error).with_cause(summary)
        }
    }
}

/// [`redact`] for a write whose target is known to exist: a 404 then names something the
/// body refers to (an unknown customer group, say), which is the client's 400.
pub fn reference_error(error: BackendError) -> ApiError {
    match &error {
        BackendError::Status {
            status: 404,
            error: m2,
        } => {
            let text = m2.text();
            ApiError::bad_request(if text.is_empty() {
                msg::UNKNOWN.to_owned()
            } else {
                text
            })
        }
        _ => redact(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::backend_errors::tests::status;

    #[test]
    fn redacted_errors_keep_the_clients_message_and_no_customer_data_for_the_log() {
        let e = redact(status(
            400,
            r#"{"message":"Invalid value of \"%value\" provided for the %fieldName field.","parameters":{"fieldName":"email","value":"jane.doe@example.com"}}"#,
        ));
        assert_eq!(e.status().as_u16(), 400);
        assert_eq!(
            e.first_message(),
            "Invalid value of \"jane.doe@example.com\" provided for the email field."
        );
        assert_eq!(e.cause(), None);
        let e = redact(status(
            400,
            r#"{"message":"One or more input exceptions have occurred.","errors":[{"message":"a"},{"message":"b"}]}"#,
        ));
        let texts: Vec<&str> = e.messages().iter().map(|m| &*m.text).collect();
        assert_eq!(texts, ["a", "b", msg::PRE_VALIDATION]);
        assert_eq!(e.cause(), None);
        let e = redact(status(
            500,
            r#"{"message":"Cannot save %1","parameters":["jane.doe@example.com"]}"#,
        ));
        assert_eq!(e.status().as_u16(), 500);
        assert!(!e.cause().unwrap().contains("jane"), "{:?}", e.cause());
        let e = redact(BackendError::Protocol(
            "invalid type: string \"Jane\"".into(),
        ));
        assert!(!e.cause().unwrap().contains("Jane"));
        assert_eq!(
            redact(status(404, "{}")).first_message(),
            "Resource not found."
        );
    }

    #[test]
    fn ownership() {
        assert!(owns(Principal::Admin, 5));
        assert!(owns(Principal::Customer(5), 5));
        assert!(!owns(Principal::Customer(6), 5));
        assert!(!owns(Principal::Guest, 5));
    }
}
