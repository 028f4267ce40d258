//! The original's OAuth problems and how each surface reports them.
//!
//! The original (Mage_Oauth) named every failure with an `oauth_problem` string. On the
//! `/oauth/*` endpoints the body is that string, `application/x-www-form-urlencoded`, with a
//! status per problem (400 for malformed requests, 401 for refused credentials); on
//! `/api/rest` the same string is the message of the API's ordinary error tree, always with
//! 401. Clients of that API match on those strings, so they are kept exactly.

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};

use crate::http::ApiError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    VersionRejected,
    /// A required parameter is missing; carries its name.
    ParameterAbsent(&'static str),
    ParameterRejected,
    TimestampRefused,
    NonceUsed,
    /// A method the gateway does not implement. `known` is true for RSA-SHA1, which the
    /// original listed but could never verify (it had no consumer public keys): that is a
    /// refused credential (401) rather than a malformed request (400).
    SignatureMethodRejected {
        known: bool,
    },
    SignatureInvalid,
    ConsumerKeyRejected,
    TokenRejected,
    TokenExpired,
    /// Something failed that is neither the client's fault nor a store's outage.
    Internal(String),
    /// The OAuth store failed (database down, locked past its wait): not the client's
    /// fault, and not the Magento back end's either, which the answer says.
    StoreUnavailable(String),
}

impl Problem {
    pub fn name(&self) -> &'static str {
        match self {
            Problem::VersionRejected => "version_rejected",
            Problem::ParameterAbsent(_) => "parameter_absent",
            Problem::ParameterRejected => "parameter_rejected",
            Problem::TimestampRefused => "timestamp_refused",
            Problem::NonceUsed => "nonce_used",
            Problem::SignatureMethodRejected { .. } => "signature_method_rejected",
            Problem::SignatureInvalid => "signature_invalid",
            Problem::ConsumerKeyRejected => "consumer_key_rejected",
            Problem::TokenRejected => "token_rejected",
            Problem::TokenExpired => "token_expired",
            Problem::Internal(_) | Problem::StoreUnavailable(_) => "internal_error",
        }
    }

    /// `oauth_problem=<name>[&oauth_parameters_absent=<param>]`, as the original's
    /// `reportProblem` wrote it. Internal causes are never included.
    pub fn report(&self) -> String {
        match self {
            Problem::ParameterAbsent(param) => {
                format!("oauth_problem=parameter_absent&oauth_parameters_absent={param}")
            }
            other => format!("oauth_problem={}", other.name()),
        }
    }

    /// The status on the `/oauth/*` endpoints.
    pub fn endpoint_status(&self) -> StatusCode {
        match self {
            Problem::VersionRejected
            | Problem::ParameterAbsent(_)
            | Problem::ParameterRejected
            | Problem::TimestampRefused
            | Problem::SignatureMethodRejected { known: false } => StatusCode::BAD_REQUEST,
            Problem::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Problem::StoreUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::UNAUTHORIZED,
        }
    }

    /// The answer of an `/oauth/*` endpoint.
    pub fn endpoint_response(&self) -> Response {
        if let Problem::Internal(cause) | Problem::StoreUnavailable(cause) = self {
            tracing::error!(cause, "oauth endpoint failed");
        }
        let mut response = (self.endpoint_status(), self.report()).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        );
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }

    /// The answer on `/api/rest`: the API error tree, 401, the problem as its message.
    pub fn api_error(self) -> ApiError {
        match self {
            Problem::Internal(cause) => ApiError::internal().with_cause(cause),
            Problem::StoreUnavailable(cause) => store_unavailable(cause),
            problem => ApiError::new(StatusCode::UNAUTHORIZED, problem.report()).with_header(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("OAuth realm=\"storegate\""),
            ),
        }
    }
}

impl From<super::store::StoreError> for Problem {
    fn from(error: super::store::StoreError) -> Self {
        Problem::StoreUnavailable(error.to_string())
    }
}

/// The API's answer when the OAuth store fails: 503 naming the OAuth store (not "the store
/// back end", which is Magento), `Retry-After: 1`, the cause in the log only.
pub fn store_unavailable(cause: impl std::fmt::Display) -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "The OAuth sign-in store is unavailable. Try again later.",
    )
    .with_header(header::RETRY_AFTER, HeaderValue::from_static("1"))
    .with_cause(cause.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_and_statuses() {
        let absent = Problem::ParameterAbsent("oauth_callback");
        assert_eq!(
            absent.report(),
            "oauth_problem=parameter_absent&oauth_parameters_absent=oauth_callback"
        );
        assert_eq!(absent.endpoint_status(), StatusCode::BAD_REQUEST);
        assert_eq!(
            Problem::SignatureInvalid.endpoint_status(),
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(
            Problem::SignatureMethodRejected { known: true }.endpoint_status(),
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(
            Problem::SignatureMethodRejected { known: false }.endpoint_status(),
            StatusCode::BAD_REQUEST
        );
        assert_eq!(
            Problem::Internal("disk on fire".into()).report(),
            "oauth_problem=internal_error"
        );
    }
}
