//! Websites, store groups and store views, and the anonymous `/V1/store/*` endpoints.
//!
//! The store code in `/rest/<code>/V1/...` decides which store view a call runs in; writes and
//! reads of store-scoped values depend on it, so every other module asks this one which
//! store a code or id names.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::dispatch::Call;
use crate::error::ApiResult;

/// Store id of the admin scope (`/rest/all`), where default values live.
pub(crate) const ADMIN_STORE_ID: u32 = 0;
/// The store view `/rest/V1` (no code) runs in.
pub(crate) const DEFAULT_STORE_ID: u32 = 1;

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Website {
    pub(crate) id: u32,
    pub(crate) code: String,
    pub(crate) name: String,
    pub(crate) default_group_id: u32,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct StoreGroup {
    pub(crate) id: u32,
    pub(crate) website_id: u32,
    pub(crate) root_category_id: u32,
    pub(crate) default_store_id: u32,
    pub(crate) name: String,
    pub(crate) code: String,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct StoreView {
    pub(crate) id: u32,
    pub(crate) code: String,
    pub(crate) name: String,
    pub(crate) website_id: u32,
    pub(crate) store_group_id: u32,
}

/// Per-store-view configuration (what `storeConfigs` reports, minus the URLs, which depend
/// on the address the sandbox listens on).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct StoreSettings {
    pub(crate) code: String,
    pub(crate) locale: String,
    pub(crate) base_currency_code: String,
    pub(crate) default_display_currency_code: String,
    pub(crate) timezone: String,
    pub(crate) weight_unit: String,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Stores {
    pub(crate) websites: Vec<Website>,
    pub(crate) store_groups: Vec<StoreGroup>,
    pub(crate) store_views: Vec<StoreView>,
    pub(crate) store_configs: Vec<StoreSettings>,
}

impl Stores {
    pub(crate) fn by_code(&self, code: &str) -> Option<&StoreView> {
        self.store_views.iter().find(|s| s.code == code)
    }

    pub(crate) fn by_id(&self, id: u32) -> Option<&StoreView> {
        self.store_views.iter().find(|s| s.id == id)
    }

    pub(crate) fn settings(&self, code: &str) -> Option<&StoreSettings> {
        self.store_configs.iter().find(|s| s.code == code)
    }

    pub(crate) fn name_of(&self, id: u32) -> String {
        self.by_id(id).map(|s| s.name.clone()).unwrap_or_default()
    }

    pub(crate) fn website_of(&self, store_id: u32) -> u32 {
        self.by_id(store_id).map_or(0, |s| s.website_id)
    }

    /// Store views (not admin) of a website.
    pub(crate) fn store_ids_of_website(&self, website_id: u32) -> Vec<u32> {
        self.store_views
            .iter()
            .filter(|s| s.website_id == website_id && s.id != ADMIN_STORE_ID)
            .map(|s| s.id)
            .collect()
    }

    /// The website's default store view, used when a customer is created without a store.
    pub(crate) fn default_store_of_website(&self, website_id: u32) -> Option<u32> {
        let website = self.websites.iter().find(|w| w.id == website_id)?;
        let group = self
            .store_groups
            .iter()
            .find(|g| g.id == website.default_group_id)?;
        Some(group.default_store_id)
    }

    pub(crate) fn locale_of(&self, store_id: u32) -> String {
        self.by_id(store_id)
            .and_then(|s| self.settings(&s.code))
            .map_or_else(|| "en_US".to_string(), |s| s.locale.clone())
    }

    pub(crate) fn base_currency_of(&self, store_id: u32) -> String {
        self.by_id(store_id)
            .and_then(|s| self.settings(&s.code))
            .map_or_else(|| "USD".to_string(), |s| s.base_currency_code.clone())
    }
}

/// URLs of a store view, all derived from the address the client reached the sandbox at.
pub(crate) struct StoreUrls {
    pub(crate) base_url: String,
    pub(crate) static_url: String,
    pub(crate) media_url: String,
}

impl StoreUrls {
    /// `origin` is `http://host:port` without a trailing slash.
    pub(crate) fn new(origin: &str) -> Self {
        StoreUrls {
            base_url: format!("{origin}/"),
            static_url: format!("{origin}/static/"),
            media_url: format!("{origin}/media/"),
        }
    }
}

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
