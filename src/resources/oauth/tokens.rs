//! `/api/rest/oauth/tokens` (Admin only): the OAuth access tokens the gateway knows, and
//! their revocation, as the original's admin panel offered.
//!
//! - `GET /oauth/tokens[?customer_id=N][&page=P][&limit=L]`: a list of `{id, consumer_key,
//!   consumer_name, user_type, customer_id, revoked, created_at}`, oldest first, `limit`
//!   (1 to 1000, default 100) per page. Never a token or a secret: the id is what an
//!   operator acts on.
//! - `DELETE /oauth/tokens/:id`: revokes that token (200); later calls with it get
//!   `oauth_problem=token_rejected`. An unknown id is 404.
//!
//! Guest and Customer get 403 before any method check, as everywhere in the API.

use axum::extract::Path;
use axum::response::Response;
use http::Method;
use serde_json::{Value, json};

use crate::auth::oauth::store::{AccessTokenInfo, Owner};
use crate::http::{ApiError, empty_ok};
use crate::resources::call::{ApiCall, no_store};

fn store_failed(error: impl std::fmt::Display) -> ApiError {
    crate::auth::oauth::problem::store_unavailable(error)
}

fn entry(info: &AccessTokenInfo) -> Value {
    let (user_type, customer_id) = match info.owner {
        Owner::Admin => ("admin", Value::Null),
        Owner::Customer(id) => ("customer", json!(id)),
    };
    json!({
        "id": info.id,
        "consumer_key": info.consumer_key,
        "consumer_name": info.consumer_name,
        "user_type": user_type,
        "customer_id": customer_id,
        "revoked": info.revoked,
        "created_at": info.created_at,
    })
}

pub async fn collection(call: ApiCall) -> Result<Response, ApiError> {
    call.admin_only()?;
    if call.method != Method::GET && call.method != Method::HEAD {
        return Err(ApiError::not_implemented());
    }
    let (app, query) = (&call.app, call.query());
    let mut customer_id = None;
    let mut page: u64 = 1;
    let mut limit: u32 = 100;
    let invalid =
        |name: &str| ApiError::bad_request(format!("Invalid value for \"{name}\" in request."));
    for (name, value) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        match &*name {
            "customer_id" => {
                customer_id = Some(
                    value
                        .parse::<u64>()
                        .ok()
                        .filter(|&id| id > 0)
                        .ok_or_else(|| invalid("customer_id"))?,
                );
            }
            "page" => {
                page = value
                    .parse()
                    .ok()
                    .filter(|&p| p > 0 && p < 1_000_000_000)
                    .ok_or_else(|| invalid("page"))?;
            }
            "limit" => {
                limit = value
                    .parse()
                    .ok()
                    .filter(|&l| (1..=1000).contains(&l))
                    .ok_or_else(|| invalid("limit"))?;
            }
            _ => {}
        }
    }
    let tokens = app
        .oauth
        .store()
        .list_access_tokens(customer_id, limit, (page - 1) * u64::from(limit))
        .await
        .map_err(store_failed)?;
    let list: Vec<Value> = tokens.iter().map(entry).collect();
    Ok(no_store(call.ok(Value::Array(list))))
}

pub async fn entity(Path(id): Path<String>, call: ApiCall) -> Result<Response, ApiError> {
    call.admin_only()?;
    if call.method != Method::DELETE {
        return Err(ApiError::not_implemented());
    }
    let id: i64 = id
        .parse()
        .ok()
        .filter(|&id| id > 0)
        .ok_or_else(ApiError::not_found)?;
    if call
        .app
        .oauth
        .revoke_token(id)
        .await
        .map_err(store_failed)?
    {
        tracing::info!(token_id = id, "oauth access token revoked");
        Ok(empty_ok())
    } else {
        Err(ApiError::not_found())
    }
}
