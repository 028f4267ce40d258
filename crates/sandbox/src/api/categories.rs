//! `/V1/categories/*`: a category and its product assignments.

use crate::api::call::Call;
use crate::webapi::error::{ApiError, ApiResult};
use serde_json::{Value, json};

fn category_id(call: &Call) -> ApiResult<u64> {
    let id = call.param_int("categoryId")?;
    u64::try_from(id).map_err(|_| ApiError::no_such_entity("id", json!(id)))
}

/// `GET /V1/categories/{categoryId}`
pub(crate) fn get(call: &Call) -> ApiResult<Value> {
    let id = category_id(call)?;
    let db = call.db();
    let category = db
        .categories
        .get(&id)
        .ok_or_else(|| ApiError::no_such_entity("id", json!(id)))?;
    let children: Vec<String> = db
        .categories
        .values()
        .filter(|c| c.parent_id == id && c.id != id)
        .map(|c| c.id.to_string())
        .collect();
    Ok(json!({
        "id": category.id,
        "parent_id": category.parent_id,
        "name": category.name,
        "is_active": category.is_active,
        "position": category.position,
        "level": category.level,
        "children": children.join(","),
        "created_at": category.created_at,
        "updated_at": category.updated_at,
        "path": category.path,
        "available_sort_by": [],
        "include_in_menu": category.include_in_menu,
        "custom_attributes": category.custom_attributes
    }))
}

/// `GET /V1/categories/{categoryId}/products` -> `[{"sku","position","category_id"}]`.
pub(crate) fn products(call: &Call) -> ApiResult<Value> {
    let id = category_id(call)?;
    let db = call.db();
    if !db.categories.contains_key(&id) {
        return Err(ApiError::no_such_entity("id", json!(id)));
    }
    let links: Vec<Value> = db
        .products
        .values()
        .filter_map(|p| {
            p.category_links.iter().find(|l| l.category_id == id).map(
                |l| json!({"sku": p.sku, "position": l.position, "category_id": id.to_string()}),
            )
        })
        .collect();
    Ok(Value::Array(links))
}
