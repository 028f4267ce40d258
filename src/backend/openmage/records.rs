//! The records the OpenMage adapter composes and the shapes it converts: a product with its
//! websites, categories and gallery; a customer with their addresses; the SKU-to-id map (the
//! port addresses products by SKU, the store by id); the store's images and group and tier
//! prices as the port's types.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde_json::{Value, json};

use super::lists::{self, id_of};
use super::{OpenMage, segment};
use crate::backend::port::{
    BackendError, Image, Scope, SessionKeeper, StoreSession, TierFields, TierPrice,
};
use crate::backend::values::{as_i64, strings};

/// A store view the operator named (`STOREGATE_OPENMAGE_STORE_VIEWS`): the store's REST
/// API has no list of them.
#[derive(Debug, Clone)]
pub struct View {
    pub id: u64,
    pub code: String,
    pub website_id: u64,
}

/// OpenMage behind the port.
#[derive(Debug)]
pub struct OpenMageBackend {
    pub(super) client: OpenMage,
    pub(super) base: String,
    pub(super) views: Vec<View>,
    skus: Mutex<HashMap<String, u64>>,
    /// Where customers' store sessions are kept (`None`: none kept; every customer is
    /// rendered as the store's Guest).
    sessions: Option<Arc<dyn SessionKeeper>>,
}

pub(super) fn not_found() -> BackendError {
    BackendError::Status {
        status: 404,
        error: super::store_message(
            br#"{"messages":{"error":[{"code":404,"message":"Resource not found."}]}}"#,
        ),
    }
}

/// An operation this adapter does not offer yet: a 501 with the reason, so the client is
/// told so and the operator's log names it.
pub(super) fn not_yet(what: &str) -> BackendError {
    let body = json!({"messages": {"error": [{"code": 501,
        "message": format!("{what} is not available with the OpenMage back end yet")}]}});
    BackendError::Status {
        status: 501,
        error: super::store_message(body.to_string().as_bytes()),
    }
}

pub(super) fn parse(raw: &[u8]) -> Result<Value, BackendError> {
    serde_json::from_slice(raw).map_err(|e| BackendError::Protocol(format!("unexpected body: {e}")))
}

pub(super) fn bytes_of(value: &Value) -> Bytes {
    Bytes::from(value.to_string())
}

pub(super) fn text(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

impl OpenMageBackend {
    /// `base` is the store's URL (for the store configs' URLs); `views` the store views
    /// besides the admin one (0).
    pub fn new(client: OpenMage, base: &str, views: Vec<View>) -> OpenMageBackend {
        OpenMageBackend {
            client,
            base: base.trim_end_matches('/').to_owned(),
            views,
            skus: Mutex::new(HashMap::new()),
            sessions: None,
        }
    }

    /// The same back end keeping customers' store sessions in `keeper`.
    pub fn with_sessions(mut self, keeper: Arc<dyn SessionKeeper>) -> OpenMageBackend {
        self.sessions = Some(keeper);
        self
    }

    /// The session kept for a customer, if any (an unreadable one is none). The keeper
    /// failing is logged and read as none: anonymous prices are a fallback, not a failure.
    pub(super) async fn session_of(&self, customer_id: u64) -> Option<StoreSession> {
        let keeper = self.sessions.as_ref()?;
        match keeper.session(customer_id).await {
            Ok(Some(text)) => StoreSession::from_text(&text),
            Ok(None) => None,
            Err(e) => {
                crate::observe::log_limit::warn(
                    "store session lookup",
                    format_args!("store session lookup failed, rendering anonymously: {e}"),
                );
                None
            }
        }
    }

    /// Keeps a customer's session (an empty text forgets it); true when it was kept.
    pub(super) async fn keep_session(&self, customer_id: u64, session: &str) -> bool {
        let Some(keeper) = &self.sessions else {
            return false;
        };
        match keeper.keep(customer_id, session).await {
            Ok(()) => true,
            Err(error) => {
                // Without it the customer still signs in; their prices are worked out by
                // the gateway instead of the store until the next sign-in.
                tracing::warn!(%error, "could not keep a customer's store session");
                false
            }
        }
    }

    pub(super) fn remember(&self, sku: &str, id: u64) {
        if let Ok(mut map) = self.skus.lock() {
            map.insert(sku.to_owned(), id);
        }
    }

    pub(super) fn forget(&self, sku: &str) {
        if let Ok(mut map) = self.skus.lock() {
            map.remove(sku);
        }
    }

    /// The product id of a SKU: remembered, or asked of the store.
    pub(super) async fn id_of_sku(&self, sku: &str) -> Result<u64, BackendError> {
        if let Some(id) = self.skus.lock().ok().and_then(|m| m.get(sku).copied()) {
            return Ok(id);
        }
        let query = vec![
            ("filter[0][attribute]".to_owned(), "sku".to_owned()),
            ("filter[0][eq]".to_owned(), sku.to_owned()),
            ("attrs[]".to_owned(), "sku".to_owned()),
            ("limit".to_owned(), "1".to_owned()),
        ];
        let raw = self.client.get("/products", &query).await?;
        let found = lists::items(&raw)?
            .into_iter()
            .find(|item| text(item.get("sku")) == sku)
            .and_then(|item| id_of(&item))
            .ok_or_else(not_found)?;
        self.remember(sku, found);
        Ok(found)
    }

    /// `/store/<code>` for a read in `scope` (the default store view for `Default`, the
    /// admin values for `All`).
    pub(super) fn store_suffix(&self, scope: Scope<'_>) -> String {
        match scope {
            Scope::Default => format!("/store/{}", segment(self.client.default_store())),
            Scope::Store(code) => format!("/store/{}", segment(code)),
            Scope::All => String::new(),
        }
    }

    /// A product as the admin sees it in `scope`, with its id, websites, categories and
    /// gallery (`images`, as that store view shows it), read at once: a product record is
    /// cached whole, and every resource of a product reads it.
    pub(super) async fn product_record(
        &self,
        scope: Scope<'_>,
        id: u64,
    ) -> Result<Value, BackendError> {
        let suffix = self.store_suffix(scope);
        let (one, websites, categories, gallery) = (
            format!("/products/{id}{suffix}"),
            format!("/products/{id}/websites"),
            format!("/products/{id}/categories"),
            format!("/products/{id}/images{suffix}"),
        );
        // All four answered, whatever the first says: the links hold in every scope, and
        // a recording replays the same calls however fast the store answers.
        let (product, websites, categories, images) = tokio::join!(
            self.client.get(&one, &[]),
            self.client.get(&websites, &[]),
            self.client.get(&categories, &[]),
            self.client.get(&gallery, &[]),
        );
        let (product, images) = match product {
            // A product on no website has no default store view to be read in (the store
            // answers 404 there): the Admin still sees it, with its admin values, as the
            // store's own `/products/:id` shows it. Its links are those already read.
            Err(BackendError::Status { status: 404, .. }) if scope == Scope::Default => {
                let (one, gallery) = (format!("/products/{id}"), format!("/products/{id}/images"));
                let (product, images) =
                    tokio::join!(self.client.get(&one, &[]), self.client.get(&gallery, &[]));
                (product?, images?)
            }
            product => (product?, images?),
        };
        let (websites, categories) = (websites?, categories?);
        let mut product = parse(&product)?;
        let ids = |raw: &[u8], field: &str| -> Result<Vec<Value>, BackendError> {
            Ok(lists::items(raw)?
                .iter()
                .filter_map(|entry| entry.get(field).cloned())
                .collect())
        };
        product["id"] = json!(id);
        product["website_ids"] = Value::Array(ids(&websites, "website_id")?);
        product["category_ids"] = Value::Array(ids(&categories, "category_id")?);
        product["images"] = Value::Array(lists::items(&images)?);
        if let Some(sku) = product.get("sku").and_then(Value::as_str) {
            self.remember(sku, id);
        }
        Ok(product)
    }

    /// `POST`s a new entry to `path`; its id, from the answer's `Location` (`what` names
    /// the entry in the error when the store's answer holds no id).
    pub(super) async fn create(
        &self,
        path: &str,
        body: &Value,
        what: &str,
    ) -> Result<u64, BackendError> {
        let id = self.client.create(path, body).await?;
        id.parse()
            .map_err(|_| BackendError::Protocol(format!("{what} {id}")))
    }

    /// A page of an admin list (`/customers`, `/orders`) matching `criteria`.
    pub(super) async fn admin_search(
        &self,
        path: &str,
        criteria: &crate::backend::port::SearchCriteria,
    ) -> Result<crate::backend::port::SearchResult<Value>, BackendError> {
        let page = self
            .client
            .page(lists::As::Admin, path, criteria, &[])
            .await?;
        page.read()
    }

    pub(super) async fn customer_record(&self, id: u64) -> Result<Value, BackendError> {
        let (one, list) = (
            format!("/customers/{id}"),
            format!("/customers/{id}/addresses"),
        );
        // Both answered, whatever the first says (a recording replays the same calls
        // however fast the store answers); the customer's error first.
        let (customer, addresses) =
            tokio::join!(self.client.get(&one, &[]), self.client.get(&list, &[]));
        let (customer, addresses) = (customer?, addresses?);
        let mut customer = parse(&customer)?;
        let mut addresses = lists::items(&addresses)?;
        for address in &mut addresses {
            let address_id = id_of(address);
            address["id"] = json!(address_id);
            address["customer_id"] = json!(id);
            for (flag, field) in [
                ("is_default_billing", "default_billing"),
                ("is_default_shipping", "default_shipping"),
            ] {
                if address.get(flag).and_then(as_i64).is_some_and(|v| v != 0) {
                    customer[field] = json!(address_id.map(|a| a.to_string()));
                }
            }
        }
        customer["id"] = json!(id);
        customer["addresses"] = Value::Array(addresses);
        Ok(customer)
    }

    pub(super) fn store_views_value(&self) -> Value {
        let mut views = vec![json!({"id": 0, "code": "admin", "name": "Admin", "website_id": 0})];
        views.extend(self.views.iter().map(
            |v| json!({"id": v.id, "code": v.code, "name": v.code, "website_id": v.website_id}),
        ));
        Value::Array(views)
    }
}

/// The store's image record as the port's [`Image`]: its `url` names the file.
pub(super) fn image(record: &Value) -> Option<Image> {
    let id = u64::try_from(record.get("id").and_then(as_i64)?).ok()?;
    let url = text(record.get("url"));
    let file = url
        .split_once("/catalog/product")
        .map_or(url.as_str(), |(_, path)| path)
        .to_owned();
    Some(Image {
        id,
        file,
        label: record.get("label").cloned().unwrap_or(Value::Null),
        position: record.get("position").and_then(as_i64),
        exclude: record
            .get("exclude")
            .and_then(as_i64)
            .is_some_and(|v| v != 0),
        types: strings(record.get("types")),
        record: record.clone(),
    })
}

/// The store takes a file name without its extension (it adds the one of the MIME type).
pub(super) fn file_fields(body: &mut Value, file: crate::backend::port::ImageFile) {
    let stem = file
        .name
        .rsplit_once('.')
        .map_or(file.name.as_str(), |(stem, _)| stem)
        .to_owned();
    body["file_content"] = json!(file.base64);
    body["file_mime_type"] = json!(file.mime);
    body["file_name"] = json!(stem);
}

/// The group prices (`group_price`, quantity 1) and tiers (`tier_price`) of an admin
/// product record.
pub(super) fn tiers(product: &Value) -> Vec<TierPrice> {
    let read = |entry: &Value, qty: Option<&'static str>| -> Option<TierPrice> {
        let fields = TierFields {
            group: "/cust_group",
            website_id: "/website_id",
            qty,
            value: "/price",
        };
        let percent = entry
            .get("is_percent")
            .is_some_and(|v| v.as_bool().unwrap_or(false) || as_i64(v).is_some_and(|i| i != 0));
        TierPrice::read(entry, &fields, percent)
    };
    let list = |field: &str| -> Vec<Value> {
        product
            .get(field)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let mut out: Vec<TierPrice> = list("group_price")
        .iter()
        .filter_map(|e| read(e, None))
        .collect();
    out.extend(
        list("tier_price")
            .iter()
            .filter_map(|e| read(e, Some("/price_qty"))),
    );
    out
}

/// Group and tier prices written into the store's two lists: group prices (quantity 1)
/// and tiers.
pub(super) fn put_tiers(product: &mut Value, tiers: &[TierPrice]) {
    let entry = |tier: &TierPrice| {
        let mut entry = json!({"website_id": tier.website_id,
            "cust_group": tier.group.unwrap_or(32000), "price": tier.value});
        if tier.qty > 1.0 {
            entry["price_qty"] = json!(tier.qty);
        }
        entry
    };
    let (group, tier): (Vec<&TierPrice>, Vec<&TierPrice>) =
        tiers.iter().partition(|t| t.qty <= 1.0);
    product["group_price"] = Value::Array(group.into_iter().map(entry).collect());
    product["tier_price"] = Value::Array(tier.into_iter().map(entry).collect());
}

pub(super) fn keep_tiers(product: &mut Value, keep: &dyn Fn(&TierPrice) -> bool) {
    for (field, qty) in [("group_price", None), ("tier_price", Some("price_qty"))] {
        if let Some(list) = product.get_mut(field).and_then(Value::as_array_mut) {
            list.retain(|entry| {
                let single = json!({ field: [entry] });
                let read = tiers(&single);
                let _ = qty;
                read.first().is_some_and(keep)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::port::ProductRecords;

    #[test]
    fn group_and_tier_prices_are_read_and_kept_per_group() {
        let mut product = json!({
            "group_price": [{"website_id": "0", "cust_group": "1", "price": "47.0000", "is_percent": true}],
            "tier_price": [{"website_id": "0", "cust_group": 32000, "price": "45.0000", "price_qty": "5.0000", "is_percent": 0},
                           {"website_id": "1", "cust_group": "2", "price": "40.0000", "price_qty": "3.0000"}]
        });
        let read = tiers(&product);
        assert_eq!(read.len(), 3);
        assert_eq!(
            (read[0].group, read[0].qty, read[0].value),
            (Some(1), 1.0, 47.0)
        );
        assert_eq!((read[1].group, read[1].qty), (Some(32000), 5.0));
        keep_tiers(&mut product, &|t| t.group != Some(2));
        assert!(!product.to_string().contains("40.0000"));
        assert_eq!(product["group_price"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn tiers_are_written_into_the_stores_two_lists() {
        let tier = |group, qty, value| TierPrice {
            group: Some(group),
            website_id: 0,
            qty,
            value,
            percent: false,
        };
        let mut product = json!({});
        let backend = OpenMageBackend::new(
            OpenMage::new(
                "http://127.0.0.1",
                super::super::Credentials::none(),
                std::time::Duration::from_secs(1),
                "default",
            )
            .unwrap(),
            "http://127.0.0.1",
            Vec::new(),
        );
        super::put_tiers(&mut product, &[tier(1, 1.0, 47.0), tier(32000, 5.0, 45.0)]);
        assert_eq!(
            product,
            json!({"group_price": [{"website_id": 0, "cust_group": 1, "price": 47.0}],
                   "tier_price": [{"website_id": 0, "cust_group": 32000, "price": 45.0, "price_qty": 5.0}]})
        );
        let read = backend.tier_prices(&product);
        assert_eq!((read[0].qty, read[1].qty, read[1].value), (1.0, 5.0, 45.0));
    }

    #[test]
    fn images_name_their_file_by_url() {
        let record = json!({"id": "1", "label": "", "position": "1", "exclude": "0",
            "url": "http://127.0.0.1/media/catalog/product/r/e/red.png", "types": ["image"]});
        let image = image(&record).unwrap();
        assert_eq!(
            (image.id, image.file.as_str(), image.exclude),
            (1, "/r/e/red.png", false)
        );
        let mut body = json!({});
        file_fields(
            &mut body,
            crate::backend::port::ImageFile {
                base64: "AAAA".into(),
                mime: "image/png",
                name: "image_2.png".into(),
            },
        );
        assert_eq!(body["file_name"], "image_2");
    }
}
