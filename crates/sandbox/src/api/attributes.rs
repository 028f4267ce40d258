//! `GET /V1/products/attribute-sets/{id}/attributes`: an attribute set's attributes.

use crate::model::attributes::{AttributeMeta, Scope};
use crate::webapi::error::{ApiError, ApiResult};
use serde_json::Value;

/// `GET /V1/products/attribute-sets/{attributeSetId}/attributes`: the attributes of a set.
///
/// The seed keeps one attribute list for every set; what differs between sets here is the
/// `media_gallery` attribute, which only sets with a gallery have (clients ask this endpoint
/// to learn whether a product can hold images).
pub(crate) fn set_attributes(call: &crate::api::call::Call) -> ApiResult<Value> {
    let id = call.param_int("attributeSetId")?;
    let db = call.db();
    let set = db
        .catalog
        .attribute_set(id)
        .ok_or_else(|| ApiError::no_such_entity("attributeSetId", serde_json::json!(id)))?;
    let mut list: Vec<Value> = db
        .catalog
        .attributes
        .iter()
        .filter(|a| a.attribute_code != "media_gallery")
        .map(attribute_json)
        .collect();
    if set.has_media_gallery {
        list.push(attribute_json(&AttributeMeta {
            attribute_code: "media_gallery".into(),
            default_frontend_label: "Media Gallery".into(),
            scope: Scope::Global,
            backend_type: "static".into(),
            frontend_input: "gallery".into(),
        }));
    }
    Ok(Value::Array(list))
}

fn attribute_json(meta: &AttributeMeta) -> Value {
    let scope = match meta.scope {
        Scope::Global => "global",
        Scope::Website => "website",
        Scope::Store => "store",
    };
    serde_json::json!({
        "attribute_code": meta.attribute_code,
        "frontend_input": meta.frontend_input,
        "entity_type_id": "4",
        "is_required": matches!(meta.attribute_code.as_str(), "name" | "sku" | "price"),
        "frontend_labels": [],
        "default_frontend_label": meta.default_frontend_label,
        "backend_type": meta.backend_type,
        "scope": scope,
        "is_user_defined": false,
    })
}
