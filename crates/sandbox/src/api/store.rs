//! `/V1/store/*`: store views, groups, websites and their configuration (anonymous).

use crate::api::call::Call;
use crate::model::store::{ADMIN_STORE_ID, StoreUrls};
use crate::webapi::error::ApiResult;
use serde_json::{Value, json};

pub(crate) fn store_views(call: &Call) -> ApiResult<Value> {
    let db = call.db();
    // No `extension_attributes`: Magento leaves an empty one out of every answer.
    Ok(Value::Array(
        db.stores
            .store_views
            .iter()
            .map(|s| {
                json!({
                    "id": s.id,
                    "code": s.code,
                    "name": s.name,
                    "website_id": s.website_id,
                    "store_group_id": s.store_group_id
                })
            })
            .collect(),
    ))
}

pub(crate) fn store_groups(call: &Call) -> ApiResult<Value> {
    let db = call.db();
    Ok(Value::Array(
        db.stores
            .store_groups
            .iter()
            .map(|g| {
                json!({
                    "id": g.id,
                    "website_id": g.website_id,
                    "root_category_id": g.root_category_id,
                    "default_store_id": g.default_store_id,
                    "name": g.name,
                    "code": g.code
                })
            })
            .collect(),
    ))
}

pub(crate) fn websites(call: &Call) -> ApiResult<Value> {
    let db = call.db();
    Ok(Value::Array(
        db.stores
            .websites
            .iter()
            .map(|w| {
                json!({
                    "id": w.id,
                    "code": w.code,
                    "name": w.name,
                    "default_group_id": w.default_group_id
                })
            })
            .collect(),
    ))
}

/// `GET /V1/store/storeConfigs[?storeCodes[]=default]`: every store view but admin.
pub(crate) fn store_configs(call: &Call) -> ApiResult<Value> {
    let db = call.db();
    let wanted: Option<Vec<String>> = call.query.get("storeCodes").map(|v| match v {
        Value::Object(map) => map
            .values()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        Value::String(s) => vec![s.clone()],
        _ => Vec::new(),
    });
    let urls = StoreUrls::new(&call.origin);
    let mut out = Vec::new();
    for view in &db.stores.store_views {
        if view.id == ADMIN_STORE_ID {
            continue;
        }
        if let Some(wanted) = &wanted
            && !wanted.iter().any(|c| c == &view.code)
        {
            continue;
        }
        let Some(settings) = db.stores.settings(&view.code) else {
            continue;
        };
        out.push(json!({
            "id": view.id,
            "code": view.code,
            "website_id": view.website_id,
            "locale": settings.locale,
            "base_currency_code": settings.base_currency_code,
            "default_display_currency_code": settings.default_display_currency_code,
            "timezone": settings.timezone,
            "weight_unit": settings.weight_unit,
            "base_url": urls.base_url,
            "base_link_url": urls.base_url,
            "base_static_url": urls.static_url,
            "base_media_url": urls.media_url,
            "secure_base_url": urls.base_url,
            "secure_base_link_url": urls.base_url,
            "secure_base_static_url": urls.static_url,
            "secure_base_media_url": urls.media_url
        }));
    }
    Ok(Value::Array(out))
}
