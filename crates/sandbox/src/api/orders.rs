//! Read-only sales orders (`/V1/orders`), kept exactly in Magento's `OrderInterface` shape.
//!
//! The seed holds the awkward cases a client must handle: a configurable parent line with its
//! simple child, an invoiced order next to one without paid/due amounts, a virtual order
//! without shipping address and a guest order without `customer_id`.

use serde_json::{Value, json};

use crate::api::call::Call;
use crate::webapi::error::{ApiError, ApiResult};
use crate::webapi::messages;
use crate::webapi::search::{FieldValue, Scalar, SearchCriteria};

fn order_field<'a>(order: &'a Value, field: &str) -> Option<FieldValue<'a>> {
    Some(FieldValue::One(Scalar::from_json(order.get(field))))
}

/// `GET /V1/orders?searchCriteria...`
pub(crate) fn list(call: &Call) -> ApiResult<Value> {
    let criteria = SearchCriteria::required(&call.query)?;
    let db = call.db();
    let mut rows: Vec<&Value> = db
        .orders
        .values()
        .filter(|o| criteria.matches(|f| order_field(o, f)))
        .collect();
    criteria.sort(&mut rows, |o, f| order_field(o, f));
    let (page, total) = criteria.page(rows);
    Ok(json!({
        "items": page,
        "search_criteria": criteria.echo(),
        "total_count": total
    }))
}

/// `GET /V1/orders/{id}` (the `entity_id`, not the increment id).
pub(crate) fn get(call: &Call) -> ApiResult<Value> {
    let id = call.param_int("id")?;
    let db = call.db();
    u64::try_from(id)
        .ok()
        .and_then(|id| db.orders.get(&id))
        .cloned()
        .ok_or_else(|| ApiError::not_found(messages::ORDER_NOT_FOUND))
}

fn order_param(call: &Call) -> ApiResult<u64> {
    let id = call.param_int("id")?;
    u64::try_from(id).map_err(|_| ApiError::not_found(messages::ORDER_NOT_FOUND))
}

/// `GET /V1/orders/{id}/comments`: the order's status history, as Magento's
/// `OrderManagementInterface::getCommentsList` answers it (a search result; an order without
/// history, or no order at all, has an empty one: the collection is filtered by parent id).
pub(crate) fn comments(call: &Call) -> ApiResult<Value> {
    let id = order_param(call)?;
    let db = call.db();
    let items: Vec<Value> = db
        .orders
        .get(&id)
        .and_then(|o| o.get("status_histories"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let total = items.len();
    Ok(json!({
        "items": items,
        "search_criteria": {"filter_groups": []},
        "total_count": total
    }))
}

/// `POST /V1/orders/{id}/comments` with `{"statusHistory": {...}}`: adds an entry to the
/// order's status history (`Order::addStatusHistory`: the entry takes the order as parent;
/// a status given becomes the order's, none means the order's current one) and answers
/// `true`.
pub(crate) fn add_comment(call: &Call) -> ApiResult<Value> {
    use crate::webapi::input;
    let id = order_param(call)?;
    let history = match input::present(&call.body, "status_history") {
        Some(Value::Object(inner)) => inner.clone(),
        Some(other) => return Err(ApiError::type_mismatch(other, "statusHistory")),
        None => return Err(ApiError::required("statusHistory")),
    };
    let comment = input::opt_string(&history, "comment")?;
    let notified = input::opt_int(&history, "is_customer_notified")?.unwrap_or(0);
    let visible = input::opt_int(&history, "is_visible_on_front")?.unwrap_or(0);
    let status = input::opt_string(&history, "status")?.filter(|s| !s.is_empty());
    let mut db = call.db_mut();
    let next_id = db
        .orders
        .values()
        .filter_map(|o| o.get("status_histories").and_then(Value::as_array))
        .flatten()
        .filter_map(|h| h.get("entity_id").and_then(Value::as_u64))
        .max()
        .unwrap_or(0)
        + 1;
    let order = db
        .orders
        .get_mut(&id)
        .ok_or_else(|| ApiError::not_found(messages::ORDER_NOT_FOUND))?;
    let status = match status {
        Some(status) => {
            order["status"] = json!(status);
            status
        }
        None => order
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
    };
    let now = crate::webapi::clock::format_datetime(crate::webapi::clock::now());
    let entry = json!({
        "comment": comment,
        "created_at": now,
        "entity_id": next_id,
        "entity_name": "order",
        "is_customer_notified": notified,
        "is_visible_on_front": visible,
        "parent_id": id,
        "status": status
    });
    order["updated_at"] = json!(now);
    match order
        .get_mut("status_histories")
        .and_then(Value::as_array_mut)
    {
        // Magento lists the newest entry first.
        Some(list) => list.insert(0, entry),
        None => order["status_histories"] = json!([entry]),
    }
    Ok(json!(true))
}
