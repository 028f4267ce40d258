//! Customer access tokens (`POST /V1/integration/customer/token`).
//!
//! Tokens are opaque random strings (real 2.4 installs issue JWTs; clients must not care).
//! They stay valid for the life of the sandbox; there is no failure lock-out.

use serde_json::{Value, json};

use crate::api::call::Call;
use crate::webapi::error::{ApiError, ApiResult, ErrorItem};
use crate::webapi::input;
use crate::webapi::messages;

/// 32 characters of `[a-z0-9]` from the operating system's generator. The bias of the
/// modulo (256 % 36) is irrelevant for a sandbox's token.
pub(crate) fn random_token() -> String {
    const ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the operating system's random generator");
    bytes
        .iter()
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect()
}

/// `{"username": e-mail, "password": ...}` -> the token as a JSON string.
pub(crate) fn customer_token(call: &Call) -> ApiResult<Value> {
    let username = input::opt_string(call.body(), "username")?.unwrap_or_default();
    let password = input::opt_string(call.body(), "password")?.unwrap_or_default();
    let mut missing = Vec::new();
    if username.is_empty() {
        missing.push(ErrorItem::required("username"));
    }
    if password.is_empty() {
        missing.push(ErrorItem::required("password"));
    }
    if !missing.is_empty() {
        return Err(ApiError::aggregate(missing));
    }
    let mut db = call.db_mut();
    let website = call.store.website_id;
    let customer = db
        .customers
        .values()
        .find(|c| {
            c.email.eq_ignore_ascii_case(username.trim())
                && (website == 0 || c.website_id == website)
        })
        .filter(|c| c.password.as_deref() == Some(password.as_str()))
        .map(|c| c.id)
        .ok_or_else(|| {
            ApiError::new(
                401,
                messages::SIGN_IN_FAILED,
                crate::webapi::error::Params::None,
            )
        })?;
    let token = random_token();
    db.customer_tokens.insert(token.clone(), customer);
    Ok(json!(token))
}
