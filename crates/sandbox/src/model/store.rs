//! Websites, store groups and store views (served by `api::store`).
//!
//! The store code in `/rest/<code>/V1/...` decides which store view a call runs in; writes and
//! reads of store-scoped values depend on it, so every other module asks this one which
//! store a code or id names.

use serde::Deserialize;

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
