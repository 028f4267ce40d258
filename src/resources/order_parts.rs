//! The parts of a sales order on routes of their own, the original's routes beyond the
//! spec: `/orders/:id/items`, `/orders/:id/addresses[/:address_type]`, `/orders/:id/comments`
//! and `/orders/comments/:id`.
//!
//! Each answer comes from the order record (`Backend::order`): its `items` and the
//! addresses the order resource derives (billing, and the shipping assignment's); the
//! comments are the order's status history (`Backend::order_comments`). Reading the order
//! first is also the ownership check: a customer asking for another customer's order gets the 404 of an order
//! that does not exist, as the original answered; guests have no privilege (403). The
//! records are rendered with the `own` views of `order_item.toml`, `order_address.toml` and
//! `order_comment.toml`: the original showed other fields here than inside an order.
//!
//! A customer sees only the comments marked visible on the storefront. The Admin adds a
//! comment with `POST /orders/:id/comments` and reads one with `/orders/comments/:id`
//! (`Backend::order_comment`; Magento 2 has no read of one status history entry, so its
//! adapter looks among the orders updated most recently, docs/decisions/legacy-clients.md).
//!
//! Like orders, these are one customer's data: `private, no-store`, never cached.

use axum::extract::Path;
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::call::ApiCall;
use crate::app::AppState;
use crate::auth::caller::Caller;
use crate::auth::{Principal, UserType};
use crate::http::{ApiError, created};
use crate::resources::orders::{may_see, order_id, order_source};
use crate::resources::parse_id;
use crate::rules::mapping::convert::as_i64;
use crate::rules::mapping::{ResourceMapping, View};
use crate::rules::policy::{Operation, Route};
use crate::rules::privacy::redact;
use crate::rules::write_outcome;

/// `/orders/:id/items`.
pub async fn items(Path(id): Path<String>, call: ApiCall) -> Result<Response, ApiError> {
    call.authorize(Route::OrderItems)?;
    let order = visible_order(&call.app, call.caller.principal, &id).await?;
    let view = call
        .app
        .mappings
        .get("order_item")
        .view(call.caller.user_type(), View::Own);
    let list: Vec<Value> = call
        .app
        .backend
        .order_parts(&order)
        .items
        .iter()
        .map(|item| Value::Object(ResourceMapping::render(&view, &json!({ "item": item }), "")))
        .collect();
    Ok(call.private_ok(Value::Array(list)))
}

/// `/orders/:id/addresses`.
pub async fn addresses(Path(id): Path<String>, call: ApiCall) -> Result<Response, ApiError> {
    call.authorize(Route::OrderAddresses)?;
    let list = rendered_addresses(&call.app, &call.caller, &id).await?;
    // The original: an order without addresses (or not the caller's) is not found.
    if list.is_empty() {
        return Err(ApiError::not_found());
    }
    let list = list.into_iter().map(|(_, a)| Value::Object(a)).collect();
    Ok(call.private_ok(Value::Array(list)))
}

/// `/orders/:id/addresses/:address_type` (`billing` or `shipping`).
pub async fn address(
    Path((id, address_type)): Path<(String, String)>,
    call: ApiCall,
) -> Result<Response, ApiError> {
    call.authorize(Route::OrderAddress)?;
    let found = rendered_addresses(&call.app, &call.caller, &id)
        .await?
        .into_iter()
        .find(|(kind, _)| *kind == address_type)
        .ok_or_else(ApiError::not_found)?;
    Ok(call.private_ok(Value::Object(found.1)))
}

/// `/orders/:id/comments`: the list (Admin, the order's customer) and a new comment (Admin).
pub async fn comments(Path(id): Path<String>, call: ApiCall) -> Result<Response, ApiError> {
    match call.authorize(Route::OrderComments)? {
        Operation::Retrieve => list_comments(call, &id).await,
        Operation::Create => add_comment(call, &id).await,
        _ => Err(ApiError::not_implemented()),
    }
}

/// `/orders/comments/:id`: one comment, the Admin's.
pub async fn comment(Path(id): Path<String>, call: ApiCall) -> Result<Response, ApiError> {
    call.authorize(Route::OrderComment)?;
    // The original had the privilege for customers but no handler: 405.
    if call.caller.user_type() != UserType::Admin {
        return Err(ApiError::not_implemented());
    }
    let comment_id = parse_id(&id)?;
    let found = call
        .app
        .backend
        .order_comment(comment_id)
        .await
        .map_err(redact)?
        .ok_or_else(ApiError::not_found)?;
    let view = call
        .app
        .mappings
        .get("order_comment")
        .view(UserType::Admin, View::Single);
    let record = ResourceMapping::render(&view, &json!({ "comment": found }), "");
    Ok(call.private_ok(Value::Object(record)))
}

/// The order, when this principal may see it; `Resource not found.` otherwise.
async fn visible_order(app: &AppState, principal: Principal, id: &str) -> Result<Value, ApiError> {
    let id = parse_id(id)?;
    let order = app.backend.order(id).await.map_err(redact)?;
    if !may_see(principal, &order) || order_id(&order) != Some(id) {
        return Err(ApiError::not_found());
    }
    Ok(order)
}

/// The order's addresses in the caller's `own` view, with their types.
async fn rendered_addresses(
    app: &AppState,
    caller: &Caller,
    id: &str,
) -> Result<Vec<(String, Map<String, Value>)>, ApiError> {
    let order = visible_order(app, caller.principal, id).await?;
    let source = order_source(&*app.backend, order);
    let view = app
        .mappings
        .get("order_address")
        .view(caller.user_type(), View::Own);
    Ok(source["derived"]["addresses"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|address| {
            let kind = address["address_type"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let rendered = ResourceMapping::render(&view, &json!({ "address": address }), "");
            (kind, rendered)
        })
        .collect())
}

/// The comments a user type sees, oldest first (the original's collection order): a
/// customer only the entries shown on the storefront.
fn shown(entries: &[Value], user: UserType) -> Vec<&Value> {
    let mut shown: Vec<&Value> = entries
        .iter()
        .filter(|entry| {
            user == UserType::Admin
                || entry
                    .get("is_visible_on_front")
                    .and_then(as_i64)
                    .is_some_and(|v| v != 0)
        })
        .collect();
    shown.sort_by_key(|entry| entry.get("entity_id").and_then(as_i64).unwrap_or(0));
    shown
}

async fn list_comments(call: ApiCall, id: &str) -> Result<Response, ApiError> {
    let app = &call.app;
    let order = visible_order(app, call.caller.principal, id).await?;
    let id = order_id(&order).ok_or_else(ApiError::not_found)?;
    let entries = app.backend.order_comments(id).await.map_err(redact)?;
    let user = call.caller.user_type();
    let view = app.mappings.get("order_comment").view(user, View::Own);
    let list: Vec<Value> = shown(&entries, user)
        .into_iter()
        .map(|entry| {
            Value::Object(ResourceMapping::render(
                &view,
                &json!({ "comment": entry }),
                "",
            ))
        })
        .collect();
    Ok(call.private_ok(Value::Array(list)))
}

/// A 0/1 flag of a new comment, as the original stored it (`true`, `"1"`, `1`).
fn flag(input: &Map<String, Value>, field: &str, errors: &mut Vec<String>) -> u8 {
    match input.get(field) {
        None | Some(Value::Null) => 0,
        Some(Value::Bool(b)) => u8::from(*b),
        Some(other) => match as_i64(other) {
            Some(0) => 0,
            Some(1) => 1,
            _ => {
                errors.push(format!("Invalid value for \"{field}\" in request."));
                0
            }
        },
    }
}

async fn add_comment(mut call: ApiCall, id: &str) -> Result<Response, ApiError> {
    let order = visible_order(&call.app, Principal::Admin, id).await?;
    let id = order_id(&order).ok_or_else(ApiError::not_found)?;
    let input = call.update_record().await?;
    let app = call.app;
    let allowed = app
        .mappings
        .get("order_comment")
        .view(UserType::Admin, View::Create);
    // The original's attribute filter: a body with none of the writable fields is empty.
    if !allowed.iter().any(|f| input.contains_key(&f.name)) {
        return Err(ApiError::request_data_invalid());
    }
    let mut errors = Vec::new();
    let notified = flag(&input, "is_customer_notified", &mut errors);
    let visible = flag(&input, "is_visible_on_front", &mut errors);
    let text = |field: &str| match input.get(field) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) => Ok(n.to_string()),
        Some(_) => Err(format!("Invalid value for \"{field}\" in request.")),
    };
    let comment = text("comment").unwrap_or_else(|e| {
        errors.push(e);
        String::new()
    });
    let status = text("status").unwrap_or_else(|e| {
        errors.push(e);
        String::new()
    });
    if !errors.is_empty() {
        return Err(ApiError::validation(errors));
    }
    let mut entry = json!({
        "parent_id": id,
        "comment": comment,
        "is_customer_notified": notified,
        "is_visible_on_front": visible,
    });
    if !status.is_empty() {
        entry["status"] = json!(status);
    }
    let new_id = app
        .backend
        .add_order_comment(id, entry)
        .await
        // Orders are never cached: nothing to hold off, but the client is told when the
        // comment may have been added all the same.
        .map_err(|e| write_outcome::answer(e, redact))?;
    Ok(created(&format!("/api/rest/orders/comments/{new_id}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn customers_see_the_storefront_comments_oldest_first() {
        let entries = json!([
            {"entity_id": 9, "is_visible_on_front": 1, "comment": "b"},
            {"entity_id": 4, "is_visible_on_front": 0, "comment": "hidden"},
            {"entity_id": 2, "is_visible_on_front": "1", "comment": "a"}
        ]);
        let entries = entries.as_array().unwrap();
        let comments = |user| {
            shown(entries, user)
                .iter()
                .map(|h| h["comment"].as_str().unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(comments(UserType::Customer), vec!["a", "b"]);
        assert_eq!(comments(UserType::Admin), vec!["a", "hidden", "b"]);
        assert!(shown(&[], UserType::Admin).is_empty());
    }

    #[test]
    fn flags_take_the_originals_spellings() {
        let input = json!({"a": true, "b": "1", "c": 0, "d": "yes"});
        let input = input.as_object().unwrap();
        let mut errors = Vec::new();
        assert_eq!(flag(input, "a", &mut errors), 1);
        assert_eq!(flag(input, "b", &mut errors), 1);
        assert_eq!(flag(input, "c", &mut errors), 0);
        assert_eq!(flag(input, "missing", &mut errors), 0);
        assert!(errors.is_empty());
        flag(input, "d", &mut errors);
        assert_eq!(errors, vec!["Invalid value for \"d\" in request."]);
    }
}
