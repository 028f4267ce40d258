//! The OpenMage client as the back-end port: each operation of [`Backend`] in the calls of
//! the store's own REST API.
//!
//! The store speaks the API's own field names, so most records cross the port as the store
//! sent them (its admin view), with the few additions the layers above read by name (an
//! `id`; a product's `website_ids` and `category_ids`, its `images`; a customer's
//! `addresses` and default address ids) composed from the store's other routes. What the
//! store's REST API lacks (store views, a directory, categories, attribute sets) is
//! answered from configuration or left to the store's own checks; each case is named at
//! its operation and in docs/decisions/openmage-adapter.md.
//!
//! The store addresses products by id where the port (Magento 2's key) passes SKUs: the
//! adapter keeps a SKU-to-id map, filled by every list it reads, and asks the store
//! (`filter` on `sku`) on a miss.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::lists::{self, As, id_of};
use super::{OpenMage, segment};
use crate::backend::port::{
    AddressEdit, Answer, Assignments, Backend, Category, CategoryLink, CircuitState, Country,
    IdSku, Image, ImageChange, ImageRefusal, NewImage, OrderParts, RegionChoice, Scope,
    SearchCriteria, SearchResult, SentPrices, StoreConfig, StoreView, TierPrice, UpstreamError,
};
use crate::backend::values::{as_f64, as_i64};

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
    client: OpenMage,
    base: String,
    views: Vec<View>,
    skus: Mutex<HashMap<String, u64>>,
}

fn not_found() -> UpstreamError {
    UpstreamError::Status {
        status: 404,
        error: super::store_message(
            br#"{"messages":{"error":[{"code":404,"message":"Resource not found."}]}}"#,
        ),
    }
}

/// An operation this adapter does not offer yet: a 501 with the reason, so the client is
/// told so and the operator's log names it.
fn not_yet(what: &str) -> UpstreamError {
    let body = json!({"messages": {"error": [{"code": 501,
        "message": format!("{what} is not available with the OpenMage back end yet")}]}});
    UpstreamError::Status {
        status: 501,
        error: super::store_message(body.to_string().as_bytes()),
    }
}

fn parse(raw: &[u8]) -> Result<Value, UpstreamError> {
    serde_json::from_slice(raw)
        .map_err(|e| UpstreamError::Protocol(format!("unexpected body: {e}")))
}

fn bytes_of(value: &Value) -> Bytes {
    Bytes::from(value.to_string())
}

fn text(value: Option<&Value>) -> String {
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
        }
    }

    fn remember(&self, sku: &str, id: u64) {
        if let Ok(mut map) = self.skus.lock() {
            map.insert(sku.to_owned(), id);
        }
    }

    fn forget(&self, sku: &str) {
        if let Ok(mut map) = self.skus.lock() {
            map.remove(sku);
        }
    }

    /// The product id of a SKU: remembered, or asked of the store.
    async fn id_of_sku(&self, sku: &str) -> Result<u64, UpstreamError> {
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
    fn store_suffix(&self, scope: Scope<'_>) -> String {
        match scope {
            Scope::Default => format!("/store/{}", segment(self.client.default_store())),
            Scope::Store(code) => format!("/store/{}", segment(code)),
            Scope::All => String::new(),
        }
    }

    /// A product as the admin sees it in `scope`, with its id, websites, categories and
    /// gallery (`images`, as that store view shows it), read at once: a product record is
    /// cached whole, and every resource of a product reads it.
    async fn product_record(&self, scope: Scope<'_>, id: u64) -> Result<Value, UpstreamError> {
        let suffix = self.store_suffix(scope);
        let (one, websites, categories, gallery) = (
            format!("/products/{id}{suffix}"),
            format!("/products/{id}/websites"),
            format!("/products/{id}/categories"),
            format!("/products/{id}/images{suffix}"),
        );
        let (product, websites, categories, images) = tokio::try_join!(
            self.client.get(&one, &[]),
            self.client.get(&websites, &[]),
            self.client.get(&categories, &[]),
            self.client.get(&gallery, &[]),
        )?;
        let mut product = parse(&product)?;
        let ids = |raw: &[u8], field: &str| -> Result<Vec<Value>, UpstreamError> {
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

    async fn customer_record(&self, id: u64) -> Result<Value, UpstreamError> {
        let (one, list) = (
            format!("/customers/{id}"),
            format!("/customers/{id}/addresses"),
        );
        let (customer, addresses) =
            tokio::try_join!(self.client.get(&one, &[]), self.client.get(&list, &[]))?;
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

    fn with_ids(mut page: SearchResult<Value>) -> SearchResult<Value> {
        for item in &mut page.items {
            if let Some(id) = id_of(item) {
                item["id"] = json!(id);
            }
        }
        page
    }

    fn store_views_value(&self) -> Value {
        let mut views = vec![json!({"id": 0, "code": "admin", "name": "Admin", "website_id": 0})];
        views.extend(self.views.iter().map(
            |v| json!({"id": v.id, "code": v.code, "name": v.code, "website_id": v.website_id}),
        ));
        Value::Array(views)
    }
}

/// The store's image record as the port's [`Image`]: its `url` names the file.
fn image(record: &Value) -> Option<Image> {
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
        types: record
            .get("types")
            .and_then(Value::as_array)
            .map(|t| {
                t.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
        record: record.clone(),
    })
}

/// The store takes a file name without its extension (it adds the one of the MIME type).
fn file_fields(body: &mut Value, file: crate::backend::port::ImageFile) {
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
fn tiers(product: &Value) -> Vec<TierPrice> {
    let read = |entry: &Value, qty_field: Option<&str>| -> Option<TierPrice> {
        Some(TierPrice {
            group: entry
                .get("cust_group")
                .and_then(as_i64)
                .and_then(|g| u64::try_from(g).ok()),
            website_id: entry
                .get("website_id")
                .and_then(as_i64)
                .and_then(|w| u64::try_from(w).ok())
                .unwrap_or(0),
            qty: qty_field
                .and_then(|f| entry.get(f))
                .and_then(as_f64)
                .unwrap_or(1.0),
            value: entry.get("price").and_then(as_f64)?,
            percent: entry
                .get("is_percent")
                .is_some_and(|v| v.as_bool().unwrap_or(false) || as_i64(v).is_some_and(|i| i != 0)),
        })
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
            .filter_map(|e| read(e, Some("price_qty"))),
    );
    out
}

fn keep_tiers(product: &mut Value, keep: &dyn Fn(&TierPrice) -> bool) {
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

impl Backend for OpenMageBackend {
    fn default_store(&self) -> &str {
        self.client.default_store()
    }

    fn circuit_state(&self) -> CircuitState {
        self.client.circuit_state()
    }

    fn circuit_probe(&self) -> Arc<dyn Fn() -> CircuitState + Send + Sync> {
        self.client.circuit_probe()
    }

    fn ping(&self) -> Answer<'_, ()> {
        Box::pin(async move {
            let query = vec![("limit".to_owned(), "1".to_owned())];
            self.client.get("/stockitems", &query).await.map(|_| ())
        })
    }

    fn credentials_refused(&self) -> BoxFuture<'_, Option<String>> {
        Box::pin(async move {
            let query = vec![("limit".to_owned(), "1".to_owned())];
            match self.client.get("/stockitems", &query).await {
                Err(UpstreamError::Status {
                    status: status @ (401 | 403),
                    error,
                }) => Some(format!(
                    "the store refuses the gateway's OAuth token ({status}: {})",
                    error.text()
                )),
                _ => None,
            }
        })
    }

    // The store's REST API lists no store views: they are the configured ones, each checked
    // once here (the store answers 400 "Requested store is invalid" for one it lacks), so a
    // wrong `STOREGATE_OPENMAGE_STORE_VIEWS` shows on the first read and in `/readyz`.
    fn store_views(&self) -> Answer<'_, Bytes> {
        Box::pin(async move {
            let checks = self.views.iter().map(|view| async move {
                let query = vec![
                    ("limit".to_owned(), "1".to_owned()),
                    ("attrs[]".to_owned(), "entity_id".to_owned()),
                ];
                match self.client.get(&format!("/products/store/{}", view.id), &query).await {
                    Err(UpstreamError::Status { status: 400, .. }) => Err(UpstreamError::Protocol(
                        format!(
                            "STOREGATE_OPENMAGE_STORE_VIEWS names store view {} ({}), which the store does not have",
                            view.id, view.code
                        ),
                    )),
                    Err(e) => Err(e),
                    Ok(_) => Ok(()),
                }
            });
            futures_util::future::try_join_all(checks).await?;
            Ok(bytes_of(&self.store_views_value()))
        })
    }

    fn read_store_views(&self, raw: &[u8]) -> Result<Vec<StoreView>, UpstreamError> {
        serde_json::from_slice(raw).map_err(|e| UpstreamError::Protocol(e.to_string()))
    }

    fn store_configs(&self) -> Answer<'_, Bytes> {
        Box::pin(async move {
            let configs: Vec<Value> = self
                .store_views_value()
                .as_array()
                .into_iter()
                .flatten()
                .map(|view| {
                    json!({"id": view["id"], "code": view["code"], "website_id": view["website_id"],
                        "base_url": format!("{}/", self.base),
                        "base_media_url": format!("{}/media/", self.base),
                        "base_currency_code": ""})
                })
                .collect();
            Ok(bytes_of(&Value::Array(configs)))
        })
    }

    fn read_store_configs(&self, raw: &[u8]) -> Result<Vec<StoreConfig>, UpstreamError> {
        serde_json::from_slice(raw).map_err(|e| UpstreamError::Protocol(e.to_string()))
    }

    // No directory in the store's REST API: the store checks an address's country itself.
    fn countries(&self) -> Answer<'_, Bytes> {
        Box::pin(async { Err(not_yet("the country directory")) })
    }

    fn read_countries(&self, _raw: &[u8]) -> Result<Vec<Country>, UpstreamError> {
        Err(not_yet("the country directory"))
    }

    fn read_list(&self, raw: &[u8]) -> Result<SearchResult<Value>, UpstreamError> {
        lists::read_page(raw).map(Self::with_ids)
    }

    fn product<'a>(&'a self, scope: Scope<'a>, sku: &'a str) -> Answer<'a, Bytes> {
        Box::pin(async move {
            let id = self.id_of_sku(sku).await?;
            Ok(bytes_of(&self.product_record(scope, id).await?))
        })
    }

    fn search_products<'a>(
        &'a self,
        scope: Scope<'a>,
        criteria: &'a SearchCriteria,
    ) -> Answer<'a, Bytes> {
        Box::pin(async move {
            let path = match scope {
                Scope::All => "/products".to_owned(),
                _ => format!("/products{}", self.store_suffix(scope)),
            };
            let raw = self.client.page(As::Admin, &path, criteria, &[]).await?;
            for item in &lists::read_page(&raw)?.items {
                if let (Some(id), Some(sku)) =
                    (id_of(item), item.get("sku").and_then(Value::as_str))
                {
                    self.remember(sku, id);
                }
            }
            Ok(raw)
        })
    }

    /// The store's own Guest list in the store view: the store leaves out what its
    /// storefront does (disabled, invisible, other websites', out of stock when it is set
    /// to), and pages what is left.
    fn search_shopper_products<'a>(
        &'a self,
        scope: Scope<'a>,
        _website_id: Option<u64>,
        criteria: &'a SearchCriteria,
    ) -> Answer<'a, Bytes> {
        Box::pin(async move {
            let path = format!("/products{}", self.store_suffix(scope));
            self.client.page(As::Guest, &path, criteria, &[]).await
        })
    }

    fn skus_of<'a>(&'a self, ids: &'a [u64]) -> Answer<'a, Vec<IdSku>> {
        Box::pin(async move {
            let mut out = Vec::new();
            for chunk in ids.chunks(super::search::MAX_LIMIT as usize) {
                let mut query = vec![("filter[0][attribute]".to_owned(), "entity_id".to_owned())];
                for (i, id) in chunk.iter().enumerate() {
                    query.push((format!("filter[0][in][{i}]"), id.to_string()));
                }
                query.push(("attrs[]".into(), "sku".into()));
                query.push(("limit".into(), super::search::MAX_LIMIT.to_string()));
                let raw = self.client.get("/products", &query).await?;
                for item in lists::items(&raw)? {
                    let (Some(id), sku) = (id_of(&item), text(item.get("sku"))) else {
                        continue;
                    };
                    self.remember(&sku, id);
                    out.push(IdSku { id, sku });
                }
            }
            Ok(out)
        })
    }

    /// The store's own storefront view of products: its Guest answers, prices for the NOT
    /// LOGGED IN group as the store computes them. One product is read singly (the single
    /// answer has the tier prices, URLs and stock flag a list leaves out).
    fn render_info<'a>(
        &'a self,
        store_id: u64,
        _currency: &'a str,
        criteria: &'a SearchCriteria,
    ) -> Answer<'a, Bytes> {
        Box::pin(async move {
            if let [group] = criteria.groups()
                && let [only] = group.as_slice()
                && only.field == "entity_id"
                && only.condition_type == "eq"
            {
                let path = format!("/products/{}/store/{store_id}", segment(&only.value));
                let items = match self.client.get_as_guest(&path, &[]).await {
                    Ok(raw) => vec![parse(&raw)?],
                    Err(e) if e.is_not_found() => Vec::new(),
                    Err(e) => return Err(e),
                };
                return Ok(bytes_of(
                    &json!({"items": items, "total_count": items.len()}),
                ));
            }
            let path = format!("/products/store/{store_id}");
            self.client.page(As::Guest, &path, criteria, &[]).await
        })
    }

    fn read_render_items(&self, raw: &[u8]) -> Result<Vec<Value>, UpstreamError> {
        Ok(Self::with_ids(lists::read_page(raw)?).items)
    }

    fn price_fields(&self) -> &'static [&'static str] {
        &["group_price", "tier_price"]
    }

    /// The store's own two lists: group prices (quantity 1) and tiers.
    fn put_tier_prices(&self, product: &mut Value, tiers: &[TierPrice]) {
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

    fn read_tier_prices(&self, product: &Value) -> Vec<TierPrice> {
        tiers(product)
    }

    fn keep_tier_prices(&self, product: &mut Value, keep: &dyn Fn(&TierPrice) -> bool) {
        keep_tiers(product, keep)
    }

    fn read_final_prices(&self, render: &Value) -> (Option<f64>, Option<f64>) {
        (
            render.get("final_price_without_tax").and_then(as_f64),
            render.get("final_price_with_tax").and_then(as_f64),
        )
    }

    fn category_products(&self, category_id: u64) -> Answer<'_, Vec<CategoryLink>> {
        Box::pin(async move {
            let criteria = SearchCriteria::new().page(super::search::MAX_LIMIT, 1);
            let mut links = Vec::new();
            let mut page = 1;
            loop {
                let criteria = criteria.clone().page(super::search::MAX_LIMIT, page);
                let raw = self
                    .client
                    .page(
                        As::Admin,
                        &format!("/products/category/{category_id}"),
                        &criteria,
                        &[],
                    )
                    .await?;
                let result = lists::read_page(&raw)?;
                for item in &result.items {
                    let sku = text(item.get("sku"));
                    if let Some(id) = id_of(item) {
                        self.remember(&sku, id);
                    }
                    links.push(CategoryLink {
                        sku,
                        position: links.len() as i64,
                    });
                }
                if (links.len() as u64) >= result.total_count
                    || result.items.is_empty()
                    || page >= 100
                {
                    return Ok(links);
                }
                page += 1;
            }
        })
    }

    /// The store's create takes no websites (its attribute filter drops `website_ids`): the
    /// product is put on them through `/products/:id/websites` once it exists.
    fn create_product(&self, product: Value) -> Answer<'_, Value> {
        Box::pin(async move {
            let mut product = product;
            let websites: Vec<Value> = product
                .as_object_mut()
                .and_then(|p| p.remove("website_ids"))
                .and_then(|w| w.as_array().cloned())
                .unwrap_or_default();
            let id = self.client.create("/products", &product).await?;
            let id: u64 = id
                .parse()
                .map_err(|_| UpstreamError::Protocol(format!("created id {id}")))?;
            for website in websites {
                let body = json!({ "website_id": website });
                self.client
                    .post(&format!("/products/{id}/websites"), &body)
                    .await?;
            }
            self.product_record(Scope::All, id).await
        })
    }

    fn update_product<'a>(
        &'a self,
        scope: Scope<'a>,
        sku: &'a str,
        product: Value,
        _prices: SentPrices,
    ) -> Answer<'a, Value> {
        // The store keeps group and tier prices in lists of their own: a list not sent is
        // left as it is, nothing to merge.
        Box::pin(async move {
            let id = self.id_of_sku(sku).await?;
            let suffix = match scope {
                Scope::Store(code) => format!("/store/{}", segment(code)),
                Scope::Default | Scope::All => String::new(),
            };
            self.client
                .put(&format!("/products/{id}{suffix}"), &product)
                .await?;
            if let Some(new_sku) = product.get("sku").and_then(Value::as_str) {
                self.forget(sku);
                self.remember(new_sku, id);
            }
            self.product_record(Scope::All, id).await
        })
    }

    fn on_website(&self, product: &Value, website_id: u64) -> bool {
        match product.get("website_ids") {
            Some(Value::Array(ids)) => ids
                .iter()
                .any(|id| as_i64(id).is_some_and(|id| id as u64 == website_id)),
            _ => true,
        }
    }

    fn place_on_website(&self, product: &mut Value, website_id: u64) {
        product["website_ids"] = json!([website_id]);
    }

    fn delete_product<'a>(&'a self, sku: &'a str) -> Answer<'a, ()> {
        Box::pin(async move {
            let id = self.id_of_sku(sku).await?;
            self.client.delete(&format!("/products/{id}"), None).await?;
            self.forget(sku);
            Ok(())
        })
    }

    /// The admin record with the gallery (`images`) as the store view (or, `Some(0)`, the
    /// default values) has it.
    fn product_in<'a>(
        &'a self,
        scope: Scope<'a>,
        sku: &'a str,
        store_id: Option<u64>,
    ) -> Answer<'a, Bytes> {
        Box::pin(async move {
            let id = self.id_of_sku(sku).await?;
            // `Some(0)`: the default values; another id: that store view's.
            let store = store_id.map(|id| id.to_string());
            let scope = match (store.as_deref(), scope) {
                (Some("0"), _) | (_, Scope::All) => Scope::All,
                (Some(store), _) => Scope::Store(store),
                (None, scope) => scope,
            };
            let product = self.product_record(scope, id).await?;
            Ok(bytes_of(&product))
        })
    }

    fn read_images(&self, product: &Value) -> Vec<Image> {
        product
            .get("images")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(image)
            .collect()
    }

    fn add_image<'a>(&'a self, scope: Scope<'a>, sku: &'a str, new: NewImage) -> Answer<'a, u64> {
        Box::pin(async move {
            let id = self.id_of_sku(sku).await?;
            let mut body = json!({"position": new.position, "exclude": u8::from(new.exclude),
                "types": new.types});
            if let Some(label) = new.label {
                body["label"] = label;
            }
            file_fields(&mut body, new.file);
            let path = match scope {
                Scope::Store(code) => format!("/products/{id}/images/store/{}", segment(code)),
                Scope::Default | Scope::All => format!("/products/{id}/images"),
            };
            let created = self.client.create(&path, &body).await?;
            created
                .parse()
                .map_err(|_| UpstreamError::Protocol(format!("created image id {created}")))
        })
    }

    fn update_image<'a>(
        &'a self,
        scope: Scope<'a>,
        sku: &'a str,
        existing: &'a Image,
        change: ImageChange,
    ) -> Answer<'a, ()> {
        Box::pin(async move {
            let id = self.id_of_sku(sku).await?;
            let mut body = json!({});
            if let Some(label) = change.label {
                body["label"] = label;
            }
            if let Some(position) = change.position {
                body["position"] = json!(position);
            }
            if let Some(exclude) = change.exclude {
                body["exclude"] = json!(u8::from(exclude));
            }
            if let Some(types) = change.types {
                body["types"] = json!(types);
            }
            if let Some(file) = change.file {
                file_fields(&mut body, file);
            }
            let image = existing.id;
            let path = match scope {
                Scope::Store(code) => {
                    format!("/products/{id}/images/{image}/store/{}", segment(code))
                }
                Scope::Default | Scope::All => format!("/products/{id}/images/{image}"),
            };
            self.client.put(&path, &body).await.map(|_| ())
        })
    }

    fn remove_image<'a>(
        &'a self,
        scope: Scope<'a>,
        sku: &'a str,
        existing: &'a Image,
    ) -> Answer<'a, ()> {
        // The store itself keeps a store view's removal as "no image" there.
        Box::pin(async move {
            let id = self.id_of_sku(sku).await?;
            let image = existing.id;
            let path = match scope {
                Scope::Store(code) => {
                    format!("/products/{id}/images/{image}/store/{}", segment(code))
                }
                Scope::Default | Scope::All => format!("/products/{id}/images/{image}"),
            };
            self.client.delete(&path, None).await.map(|_| ())
        })
    }

    fn image_refusal(&self, error: &UpstreamError) -> Option<ImageRefusal> {
        match error {
            UpstreamError::Status { status: 404, error } if error.text().contains("image") => {
                Some(ImageRefusal::NotFound)
            }
            _ => None,
        }
    }

    // The store refuses an image for a product whose attribute set has no gallery itself.
    fn attribute_set_attributes(&self, _set_id: u64) -> Answer<'_, Bytes> {
        Box::pin(async { Ok(Bytes::from_static(b"true")) })
    }

    fn read_takes_images(&self, _raw: &[u8]) -> Result<bool, UpstreamError> {
        Ok(true)
    }

    fn stock_item<'a>(&'a self, sku: &'a str) -> Answer<'a, Bytes> {
        Box::pin(async move {
            let id = self.id_of_sku(sku).await?;
            let query = vec![
                ("filter[0][attribute]".to_owned(), "product_id".to_owned()),
                ("filter[0][eq]".to_owned(), id.to_string()),
                ("limit".to_owned(), "1".to_owned()),
            ];
            let raw = self.client.get("/stockitems", &query).await?;
            let item = lists::items(&raw)?
                .into_iter()
                .next()
                .ok_or_else(not_found)?;
            Ok(bytes_of(&item))
        })
    }

    fn stock_items_page<'a>(
        &'a self,
        max_qty: Option<&'a str>,
        page: u32,
        size: u32,
    ) -> Answer<'a, Bytes> {
        Box::pin(async move {
            let mut criteria = SearchCriteria::new();
            if let Some(max) = max_qty {
                criteria = criteria.filter("qty", max, "lteq");
            }
            let criteria = criteria.page(size, page);
            self.client
                .page(As::Admin, "/stockitems", &criteria, &[])
                .await
        })
    }

    fn update_stock_item<'a>(
        &'a self,
        _sku: &'a str,
        item_id: u64,
        changes: Value,
    ) -> Answer<'a, ()> {
        Box::pin(async move {
            self.client
                .put(&format!("/stockitems/{item_id}"), &changes)
                .await
                .map(|_| ())
        })
    }

    /// The store checks the password on its own authorization page (`signin`); the
    /// answer is the customer's store access token and its secret, as one string.
    fn customer_token<'a>(&'a self, username: &'a str, password: &'a str) -> Answer<'a, String> {
        Box::pin(async move {
            let (token, secret) = self.client.customer_sign_in(username, password).await?;
            Ok(format!("{token}&{secret}"))
        })
    }

    /// The customer's own record as the store shows it to them (`GET /customers` signed
    /// with their token lists only them, keyed by their id).
    fn customer_me<'a>(&'a self, customer_token: &'a str) -> Answer<'a, Value> {
        Box::pin(async move {
            let (token, secret) = customer_token
                .split_once('&')
                .ok_or_else(|| UpstreamError::Protocol("not a store sign-in token".into()))?;
            let raw = self
                .client
                .get_signed_as("/customers", &[], token, secret)
                .await?;
            let mut me = lists::items(&raw)?
                .into_iter()
                .next()
                .ok_or_else(not_found)?;
            let id = id_of(&me).ok_or_else(not_found)?;
            me["id"] = json!(id);
            Ok(me)
        })
    }

    fn customer(&self, id: u64) -> Answer<'_, Value> {
        Box::pin(self.customer_record(id))
    }

    fn search_customers<'a>(
        &'a self,
        criteria: &'a SearchCriteria,
    ) -> Answer<'a, SearchResult<Value>> {
        Box::pin(async move {
            let raw = self
                .client
                .page(As::Admin, "/customers", criteria, &[])
                .await?;
            lists::read_page(&raw).map(Self::with_ids)
        })
    }

    fn create_customer<'a>(&'a self, customer: Value, password: &'a str) -> Answer<'a, Value> {
        Box::pin(async move {
            let mut body = customer;
            body["password"] = json!(password);
            let id = self.client.create("/customers", &body).await?;
            let id: u64 = id
                .parse()
                .map_err(|_| UpstreamError::Protocol(format!("created id {id}")))?;
            self.customer_record(id).await
        })
    }

    fn save_customer(&self, id: u64, customer: Value) -> Answer<'_, Value> {
        Box::pin(async move {
            let before = self.customer_record(id).await?;
            if customer.get("addresses") != before.get("addresses")
                && customer.get("addresses").is_some()
            {
                return Err(not_yet("an address write"));
            }
            let mut body = customer;
            if let Some(object) = body.as_object_mut() {
                for field in ["id", "addresses", "default_billing", "default_shipping"] {
                    object.remove(field);
                }
            }
            self.client.put(&format!("/customers/{id}"), &body).await?;
            self.customer_record(id).await
        })
    }

    fn delete_customer(&self, id: u64) -> Answer<'_, ()> {
        Box::pin(async move {
            self.client
                .delete(&format!("/customers/{id}"), None)
                .await
                .map(|_| ())
        })
    }

    fn address(&self, id: u64) -> Answer<'_, Value> {
        Box::pin(async move {
            let mut address = parse(
                &self
                    .client
                    .get(&format!("/customers/addresses/{id}"), &[])
                    .await?,
            )?;
            address["id"] = json!(id);
            Ok(address)
        })
    }

    /// The addresses composed into the customer record, their flags as booleans too.
    fn addresses_of(&self, customer: &Value) -> Vec<Value> {
        let mut list: Vec<Value> = customer
            .get("addresses")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for address in &mut list {
            for (flag, field) in [
                ("is_default_billing", "default_billing"),
                ("is_default_shipping", "default_shipping"),
            ] {
                let on = address.get(flag).and_then(as_i64).is_some_and(|v| v != 0);
                address[field] = json!(on);
            }
        }
        list
    }

    fn default_addresses(&self, customer: &Value) -> (Option<u64>, Option<u64>) {
        let id = |key: &str| {
            customer
                .get(key)
                .and_then(as_i64)
                .and_then(|id| u64::try_from(id).ok())
                .filter(|&id| id > 0)
        };
        (id("default_billing"), id("default_shipping"))
    }

    /// The store keeps a region as its name (or the text given).
    fn set_region(&self, fields: &mut serde_json::Map<String, Value>, region: RegionChoice<'_>) {
        let value = match region {
            RegionChoice::None => Value::Null,
            RegionChoice::Predefined(r) => json!(r.name),
            RegionChoice::Text(text) => json!(text),
        };
        fields.insert("region".into(), value);
    }

    // The store writes one address at a time (`writes_addresses`): never asked.
    fn customer_with_address(&self, customer: &Value, _edit: &AddressEdit) -> Value {
        customer.clone()
    }

    fn new_address_id(
        &self,
        _saved: &Value,
        _before: &std::collections::HashSet<u64>,
        _sent: &Value,
    ) -> Option<u64> {
        None
    }

    fn writes_addresses(&self) -> bool {
        true
    }

    fn add_address(&self, customer_id: u64, address: Value) -> Answer<'_, u64> {
        Box::pin(async move {
            let id = self
                .client
                .create(&format!("/customers/{customer_id}/addresses"), &address)
                .await?;
            id.parse()
                .map_err(|_| UpstreamError::Protocol(format!("created address id {id}")))
        })
    }

    fn update_address(&self, id: u64, address: Value) -> Answer<'_, ()> {
        Box::pin(async move {
            self.client
                .put(&format!("/customers/addresses/{id}"), &address)
                .await
                .map(|_| ())
        })
    }

    fn delete_address(&self, id: u64) -> Answer<'_, ()> {
        Box::pin(async move {
            self.client
                .delete(&format!("/customers/addresses/{id}"), None)
                .await
                .map(|_| ())
        })
    }

    fn search_orders<'a>(
        &'a self,
        criteria: &'a SearchCriteria,
    ) -> Answer<'a, SearchResult<Value>> {
        Box::pin(async move {
            let raw = self
                .client
                .page(As::Admin, "/orders", criteria, &[])
                .await?;
            lists::read_page(&raw).map(Self::with_ids)
        })
    }

    fn order(&self, id: u64) -> Answer<'_, Value> {
        Box::pin(async move { parse(&self.client.get(&format!("/orders/{id}"), &[]).await?) })
    }

    fn order_parts(&self, order: &Value) -> OrderParts {
        let addresses = order
            .get("addresses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|a| (text(a.get("address_type")), a.clone()))
            .collect();
        let tax_name = order
            .get("tax_name")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned);
        OrderParts {
            tax_name,
            tax_rate: order.get("tax_rate").and_then(as_f64),
            addresses,
            comments: order
                .get("order_comments")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            items: order
                .get("order_items")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
        }
    }

    fn order_comments(&self, order_id: u64) -> Answer<'_, Vec<Value>> {
        Box::pin(async move {
            lists::items(
                &self
                    .client
                    .get(&format!("/orders/{order_id}/comments"), &[])
                    .await?,
            )
        })
    }

    fn add_order_comment(&self, order_id: u64, comment: Value) -> Answer<'_, u64> {
        Box::pin(async move {
            let mut body = comment;
            if let Some(object) = body.as_object_mut() {
                // The order is the path's.
                object.remove("parent_id");
            }
            let id = self
                .client
                .create(&format!("/orders/{order_id}/comments"), &body)
                .await?;
            id.parse()
                .map_err(|_| UpstreamError::Protocol(format!("created comment id {id}")))
        })
    }

    fn order_comment(&self, comment_id: u64) -> Answer<'_, Option<Value>> {
        Box::pin(async move {
            match self
                .client
                .get(&format!("/orders/comments/{comment_id}"), &[])
                .await
            {
                Ok(raw) => Ok(Some(parse(&raw)?)),
                Err(e) if e.is_not_found() => Ok(None),
                Err(e) => Err(e),
            }
        })
    }

    fn read_assignments(&self, product: &Value) -> Assignments {
        let ids = |field: &str| {
            let mut ids: Vec<u64> = product
                .get(field)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| as_i64(v).and_then(|i| u64::try_from(i).ok()))
                .collect();
            ids.sort_unstable();
            ids.dedup();
            ids
        };
        Assignments {
            category_ids: ids("category_ids"),
            website_ids: ids("website_ids"),
        }
    }

    /// The store's REST API has no category reads: a category is there when the store
    /// lists its products (it answers 400 "Category not found." otherwise).
    fn category(&self, id: u64) -> Answer<'_, Bytes> {
        Box::pin(async move {
            let query = vec![("limit".to_owned(), "1".to_owned())];
            match self
                .client
                .get(&format!("/products/category/{id}"), &query)
                .await
            {
                Ok(_) => Ok(bytes_of(&json!({"id": id, "is_active": true}))),
                Err(UpstreamError::Status { status: 400, error })
                    if error.text().contains("Category not found") =>
                {
                    Err(not_found())
                }
                Err(e) => Err(e),
            }
        })
    }

    fn read_category(&self, raw: &[u8]) -> Result<Category, UpstreamError> {
        let value = parse(raw)?;
        Ok(Category {
            id: value.get("id").and_then(as_i64).unwrap_or(0) as u64,
            is_active: value
                .get("is_active")
                .and_then(Value::as_bool)
                .unwrap_or(true),
        })
    }

    /// The websites of the configured store views.
    fn websites(&self) -> Answer<'_, Bytes> {
        Box::pin(async move {
            let mut ids: Vec<u64> = self.views.iter().map(|v| v.website_id).collect();
            ids.sort_unstable();
            ids.dedup();
            Ok(bytes_of(&json!(ids)))
        })
    }

    fn read_websites(&self, raw: &[u8]) -> Result<Vec<u64>, UpstreamError> {
        serde_json::from_slice(raw).map_err(|e| UpstreamError::Protocol(e.to_string()))
    }

    fn assign_category<'a>(&'a self, category_id: u64, sku: &'a str) -> Answer<'a, ()> {
        Box::pin(async move {
            let id = self.id_of_sku(sku).await?;
            let body = json!({ "category_id": category_id });
            self.client
                .post(&format!("/products/{id}/categories"), &body)
                .await
                .map(|_| ())
        })
    }

    fn unassign_category<'a>(&'a self, category_id: u64, sku: &'a str) -> Answer<'a, ()> {
        Box::pin(async move {
            let id = self.id_of_sku(sku).await?;
            self.client
                .delete(&format!("/products/{id}/categories/{category_id}"), None)
                .await
                .map(|_| ())
        })
    }

    fn assign_website<'a>(&'a self, sku: &'a str, website_id: u64) -> Answer<'a, ()> {
        Box::pin(async move {
            let id = self.id_of_sku(sku).await?;
            let body = json!({ "website_id": website_id });
            self.client
                .post(&format!("/products/{id}/websites"), &body)
                .await
                .map(|_| ())
        })
    }

    fn unassign_website<'a>(&'a self, sku: &'a str, website_id: u64) -> Answer<'a, ()> {
        Box::pin(async move {
            let id = self.id_of_sku(sku).await?;
            self.client
                .delete(&format!("/products/{id}/websites/{website_id}"), None)
                .await
                .map(|_| ())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        backend.put_tier_prices(&mut product, &[tier(1, 1.0, 47.0), tier(32000, 5.0, 45.0)]);
        assert_eq!(
            product,
            json!({"group_price": [{"website_id": 0, "cust_group": 1, "price": 47.0}],
                   "tier_price": [{"website_id": 0, "cust_group": 32000, "price": 45.0, "price_qty": 5.0}]})
        );
        let read = backend.read_tier_prices(&product);
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
