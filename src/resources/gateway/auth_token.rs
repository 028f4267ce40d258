//! `POST /api/rest/auth/token`: a customer exchanges e-mail and password for a gateway
//! token (DESIGN.md §1, Authentication).
//!
//! The credentials are checked by Magento 2 (`/V1/integration/customer/token`, then
//! `/V1/customers/me` for the id); the answer is our own signed token, so later requests
//! need no upstream call to authenticate. The password is never logged or cached.
//!
//! The Magento customer token taken here is left alone, unused, until Magento expires it.
//! Revoking it looks tidier but Magento 2 revokes per customer, not per token: it would sign
//! the customer out of the store's website and of every other app at once. A test keeps it
//! so (`tests/api/auth.rs`).

use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use http::{HeaderMap, Method, StatusCode};
use serde_json::{Value, json};

use crate::app::AppState;
use crate::backend::port::UpstreamError;
use crate::http::body::decode;
use crate::http::{ApiError, Doc, Format, ok};
use crate::rules::mapping::convert::as_i64;

use crate::auth::caller::Caller;
use crate::backend::errors;

pub async fn issue(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    if method != Method::POST {
        return Err(ApiError::not_implemented());
    }
    let input = decode(&headers, body, Format::Json, 64 * 1024).await?;
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
    let upstream_token = match app.backend.customer_token(&username, &password).await {
        Ok(token) => token,
        // Magento answers 401 for bad credentials and a locked account, 400 for empty ones.
        Err(UpstreamError::Status {
            status: 400 | 401, ..
        }) => return Err(refused()),
        Err(other) => return Err(errors::to_api(other)),
    };
    let me = app
        .backend
        .customer_me(&upstream_token)
        .await
        .map_err(errors::to_api)?;
    let customer_id = me
        .get("id")
        .and_then(as_i64)
        .filter(|&id| id > 0)
        .ok_or_else(|| ApiError::bad_gateway().with_cause("customers/me has no id"))?
        as u64;
    let issued = app.auth.tokens().issue(customer_id);
    let doc = Doc::new(json!({
        "access_token": issued.token,
        "token_type": "Bearer",
        "expires_in": issued.expires_in,
        "customer_id": customer_id,
    }));
    let mut response = ok(caller.format, &doc);
    response.headers_mut().insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    Ok(response)
}
