//! `POST /api/rest/auth/token`: a customer exchanges e-mail and password for a gateway
//! token (DESIGN.md §1, Authentication).
//!
//! The credentials are checked by the store, through the back end
//! (`resources::customer_sign_in`); the answer is our own signed token, so later requests
//! need no back-end call to authenticate. The password is never logged or cached.
//!
//! A token the store gave for the check is left alone, unused, until the store expires it.
//! Revoking it looks tidier but a store may revoke per customer, not per token (Magento 2
//! does): it would sign the customer out of the store's website and of every other app at
//! once. A test keeps it so (`tests/api/auth.rs`).

use axum::response::Response;
use http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::backend::port::BackendError;
use crate::http::body::decode;
use crate::http::{ApiError, Doc, Format, ok};
use crate::resources::call::{ApiCall, no_store};
use crate::resources::customer_sign_in::{self, SignInError};

use crate::rules::backend_errors;

pub async fn issue(call: ApiCall) -> Result<Response, ApiError> {
    if call.method != Method::POST {
        return Err(ApiError::not_implemented());
    }
    let (app, caller, headers) = (&call.app, call.caller, &call.headers);
    let input = decode(headers, call.body, Format::Json, 64 * 1024).await?;
    let field = |name: &str| -> Result<String, ApiError> {
        match input.get(name) {
            Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
            Some(Value::String(_)) | Some(Value::Null) => Err(ApiError::bad_request(format!(
                "Empty value for \"{name}\" in request."
            ))),
            Some(_) => Err(ApiError::bad_request(format!(
                "Invalid value for \"{name}\" in request."
            ))),
            None => Err(ApiError::bad_request(format!(
                "Missing \"{name}\" in request."
            ))),
        }
    };
    let username = field("username")?;
    let password = field("password")?;
    let refused = || ApiError::new(StatusCode::UNAUTHORIZED, "Invalid login or password.");
    // Past the failed sign-ins of this username or address, the store is not asked
    // (`limits::signin`): its own lockout would lock the customer out of the shop.
    let peer = crate::context::request::peer().map(|peer| peer.ip());
    let attempt = app
        .limits
        .signin
        .begin("customer", &username, app.limits.address(headers, peer))
        .await
        .map_err(|too_many| crate::limits::too_many_signins(&too_many))?;
    let customer_id = match customer_sign_in::sign_in(app, &username, &password).await {
        Ok(id) => {
            attempt.succeeded().await;
            id
        }
        Err(SignInError::Refused) => {
            attempt.failed();
            return Err(refused());
        }
        Err(SignInError::Store(BackendError::Protocol(cause))) => {
            attempt.undecided().await;
            return Err(ApiError::bad_gateway().with_cause(cause));
        }
        Err(SignInError::Store(other)) => {
            attempt.undecided().await;
            return Err(backend_errors::to_api(other));
        }
    };
    let issued = app.auth.tokens().issue(customer_id);
    let doc = Doc::new(json!({
        "access_token": issued.token,
        "token_type": "Bearer",
        "expires_in": issued.expires_in,
        "customer_id": customer_id,
    }));
    Ok(no_store(ok(caller.format, &doc)))
}
