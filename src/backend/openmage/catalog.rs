//! Products through the store's REST API: reads by SKU (the adapter's SKU-to-id map), lists
//! as pages, the storefront's renderings (the store's Guest answers, or its answers to a
//! customer through the session kept for them), creates (then put on their websites),
//! updates, deletes; and what its product records say.

use async_trait::async_trait;
use bytes::Bytes;
use serde_json::{Value, json};

use super::lists::{self, As, id_of};
use super::records::{OpenMageBackend, bytes_of, keep_tiers, parse, put_tiers, text, tiers};
use super::segment;
use crate::backend::port::{
    Assignments, BackendError, Catalog, CategoryLink, CustomerPrices, IdSku, Page, ProductDraft,
    ProductRecords, RenderedTier, Renderings, Scope, SearchCriteria, StoreSession, TierPrice,
};
use crate::backend::values::{as_f64, as_i64};

#[async_trait]
impl Catalog for OpenMageBackend {
    async fn product(&self, scope: Scope<'_>, sku: &str) -> Result<Bytes, BackendError> {
        let id = self.id_of_sku(sku).await?;
        Ok(bytes_of(&self.product_record(scope, id).await?))
    }

    async fn search_products(
        &self,
        scope: Scope<'_>,
        criteria: &SearchCriteria,
    ) -> Result<Page, BackendError> {
        let path = match scope {
            Scope::All => "/products".to_owned(),
            _ => format!("/products{}", self.store_suffix(scope)),
        };
        let page = self.client.page(As::Admin, &path, criteria, &[]).await?;
        for item in &page.read()?.items {
            if let (Some(id), Some(sku)) = (id_of(item), item.get("sku").and_then(Value::as_str)) {
                self.remember(sku, id);
            }
        }
        Ok(page)
    }

    /// The store's own Guest list in the store view: the store leaves out what its
    /// storefront does (disabled, invisible, other websites', out of stock when it is set
    /// to), and pages what is left.
    async fn search_shopper_products(
        &self,
        scope: Scope<'_>,
        _website_id: Option<u64>,
        criteria: &SearchCriteria,
    ) -> Result<Page, BackendError> {
        let path = format!("/products{}", self.store_suffix(scope));
        let page = self.client.page(As::Guest, &path, criteria, &[]).await?;
        // A product listed here is read by SKU next (the gateway learns the pair from the
        // list): its id is known then, not asked for again.
        for item in &page.read()?.items {
            if let (Some(id), Some(sku)) = (id_of(item), item.get("sku").and_then(Value::as_str)) {
                self.remember(sku, id);
            }
        }
        Ok(page)
    }

    async fn skus_of(&self, ids: &[u64]) -> Result<Vec<IdSku>, BackendError> {
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
    }

    /// The Admin's list of the category (`/products/category/:id`), or in a store view
    /// (`.../store/:store`): the store's index for that view, which also holds the products
    /// of an anchor category's children, in their position order.
    async fn category_products(
        &self,
        category_id: u64,
        store_view: Option<&str>,
    ) -> Result<Vec<CategoryLink>, BackendError> {
        let path = match store_view {
            Some(code) => format!(
                "/products/category/{category_id}{}",
                self.store_suffix(Scope::Store(code))
            ),
            None => format!("/products/category/{category_id}"),
        };
        let criteria = SearchCriteria::new().page(super::search::MAX_LIMIT, 1);
        let mut links = Vec::new();
        let mut page = 1;
        loop {
            let criteria = criteria.clone().page(super::search::MAX_LIMIT, page);
            let result = self
                .client
                .page(As::Admin, &path, &criteria, &[])
                .await?
                .read()?;
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
            if (links.len() as u64) >= result.total_count || result.items.is_empty() || page >= 100
            {
                return Ok(links);
            }
            page += 1;
        }
    }

    fn customer_prices(&self) -> CustomerPrices {
        CustomerPrices::FromStore
    }

    /// `search_shopper_products` and an anonymous `render` both read the store's Guest
    /// list of the view.
    fn shopper_search_renders(&self) -> bool {
        true
    }

    /// The store's own storefront view of products: its Guest answers (prices for the NOT
    /// LOGGED IN group), or, with the customer's kept session, its answers to that customer
    /// (their group's prices and tiers, their tax), as the store computes them. A session
    /// the store refuses (they signed in again elsewhere, or the token was revoked in the
    /// store) is forgotten, and the Guest's answer given instead.
    async fn render(
        &self,
        store_id: u64,
        _currency: &str,
        criteria: &SearchCriteria,
        customer: Option<u64>,
    ) -> Result<Renderings, BackendError> {
        let mut session_dropped = false;
        if let Some(customer) = customer {
            match self.session_of(customer).await {
                Some(session) => match self.render_as(store_id, criteria, Some(&session)).await {
                    Ok(items) => {
                        return Ok(Renderings {
                            items,
                            for_customer: true,
                            session_dropped: false,
                        });
                    }
                    Err(BackendError::Status {
                        status: 401 | 403, ..
                    }) => session_dropped = true,
                    Err(other) => return Err(other),
                },
                // Kept when their price group was looked up, gone now.
                None => session_dropped = true,
            }
            if session_dropped {
                crate::observe::log_limit::warn(
                    "store session refused",
                    format_args!(
                        "a customer's kept store session is gone or refused; rendering anonymously"
                    ),
                );
                self.keep_session(customer, "").await;
            }
        }
        Ok(Renderings {
            items: self.render_as(store_id, criteria, None).await?,
            for_customer: false,
            session_dropped,
        })
    }

    /// The store's create takes no websites (its attribute filter drops `website_ids`): the
    /// product is put on them through `/products/:id/websites` once it exists.
    async fn create_product(&self, draft: ProductDraft) -> Result<Value, BackendError> {
        let mut product = draft.record;
        if let Some(tiers) = &draft.tiers {
            put_tiers(&mut product, tiers);
        }
        let mut websites: Vec<Value> = product
            .as_object_mut()
            .and_then(|p| p.remove("website_ids"))
            .and_then(|w| w.as_array().cloned())
            .unwrap_or_default();
        if let Some(website) = draft.website {
            websites = vec![json!(website)];
        }
        let id = self.create("/products", &product, "created id").await?;
        for website in websites {
            let body = json!({ "website_id": website });
            self.client
                .post(&format!("/products/{id}/websites"), &body)
                .await?;
        }
        self.product_record(Scope::All, id).await
    }

    /// The store keeps group and tier prices in lists of their own: a list not sent is left
    /// as it is, nothing to merge. Its answer is empty: the record returned is the product's
    /// id and SKU.
    async fn update_product(
        &self,
        scope: Scope<'_>,
        sku: &str,
        draft: ProductDraft,
    ) -> Result<Value, BackendError> {
        let mut product = draft.record;
        if let Some(tiers) = &draft.tiers {
            put_tiers(&mut product, tiers);
        }
        let id = self.id_of_sku(sku).await?;
        let suffix = match scope {
            Scope::Store(code) => format!("/store/{}", segment(code)),
            Scope::Default | Scope::All => String::new(),
        };
        self.client
            .put(&format!("/products/{id}{suffix}"), &product)
            .await?;
        let mut now = sku;
        if let Some(new_sku) = product.get("sku").and_then(Value::as_str) {
            self.forget(sku);
            self.remember(new_sku, id);
            now = new_sku;
        }
        // The store answers an update with nothing: what is known of the record, not a
        // read-back (four calls: the product, its websites, categories and gallery).
        Ok(json!({ "id": id, "sku": now }))
    }

    async fn delete_product(&self, sku: &str) -> Result<(), BackendError> {
        let id = self.id_of_sku(sku).await?;
        self.client.delete(&format!("/products/{id}"), None).await?;
        self.forget(sku);
        Ok(())
    }
}

impl OpenMageBackend {
    /// The storefront's answers for the products of `criteria`, as the Guest or as a
    /// customer's session. One product is read singly (the single answer has the tier
    /// prices, URLs and stock flag a list leaves out).
    async fn render_as(
        &self,
        store_id: u64,
        criteria: &SearchCriteria,
        session: Option<&StoreSession>,
    ) -> Result<Vec<Value>, BackendError> {
        if let [group] = criteria.groups()
            && let [only] = group.as_slice()
            && only.field == "entity_id"
            && only.condition_type == "eq"
        {
            let path = format!("/products/{}/store/{store_id}", segment(&only.value));
            let read = match session {
                Some(session) => self.client.get_for(&path, &[], session).await,
                None => self.client.get_as_guest(&path, &[]).await,
            };
            return match read {
                Ok(raw) => {
                    let mut item = parse(&raw)?;
                    if let Some(id) = id_of(&item) {
                        item["id"] = json!(id);
                    }
                    Ok(vec![item])
                }
                Err(e) if e.is_not_found() => Ok(Vec::new()),
                Err(e) => Err(e),
            };
        }
        let who = session.map_or(As::Guest, As::Customer);
        let path = format!("/products/store/{store_id}");
        Ok(self
            .client
            .page(who, &path, criteria, &[])
            .await?
            .read()?
            .items)
    }
}

impl ProductRecords for OpenMageBackend {
    fn price_fields(&self) -> &'static [&'static str] {
        &["group_price", "tier_price"]
    }

    fn tier_prices(&self, product: &Value) -> Vec<TierPrice> {
        tiers(product)
    }

    fn keep_tier_prices(&self, product: &mut Value, keep: &dyn Fn(&TierPrice) -> bool) {
        keep_tiers(product, keep)
    }

    fn final_prices(&self, render: &Value) -> (Option<f64>, Option<f64>) {
        (
            render.get("final_price_without_tax").and_then(as_f64),
            render.get("final_price_with_tax").and_then(as_f64),
        )
    }

    /// A shopper's single product answer carries `tier_price`:
    /// `[{"qty": "5.0000", "price_with_tax": 45, "price_without_tax": 45}]`, for the group
    /// of whom the store answered.
    fn rendered_tiers(&self, render: &Value) -> Option<Vec<RenderedTier>> {
        let tiers = render.get("tier_price")?.as_array()?;
        Some(
            tiers
                .iter()
                .filter_map(|tier| {
                    Some(RenderedTier {
                        qty: as_f64(tier.get("qty")?)?,
                        price_with_tax: as_f64(tier.get("price_with_tax")?)?,
                        price_without_tax: as_f64(tier.get("price_without_tax")?)?,
                    })
                })
                .collect(),
        )
    }

    fn assignments(&self, product: &Value) -> Assignments {
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

    fn on_website(&self, product: &Value, website_id: u64) -> bool {
        match product.get("website_ids") {
            Some(Value::Array(ids)) => ids
                .iter()
                .any(|id| as_i64(id).is_some_and(|id| id as u64 == website_id)),
            _ => true,
        }
    }
}
