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
