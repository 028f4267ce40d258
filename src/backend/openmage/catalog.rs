//! Products through the store's REST API: reads by SKU (the adapter's SKU-to-id map), lists
//! as pages, the Guest's renderings, creates (then put on their websites), updates, deletes.

use bytes::Bytes;
use serde_json::{Value, json};

use super::lists::{self, As, id_of};
use super::records::{OpenMageBackend, bytes_of, parse, text};
use super::segment;
use crate::backend::port::{
    CategoryLink, IdSku, RenderedTier, Scope, SearchCriteria, StoreSession, UpstreamError,
};
use crate::backend::values::as_f64;

impl OpenMageBackend {
    pub(super) async fn search_products(
        &self,
        scope: Scope<'_>,
        criteria: &SearchCriteria,
    ) -> Result<Bytes, UpstreamError> {
        let path = match scope {
            Scope::All => "/products".to_owned(),
            _ => format!("/products{}", self.store_suffix(scope)),
        };
        let raw = self.client.page(As::Admin, &path, criteria, &[]).await?;
        for item in &lists::read_page(&raw)?.items {
            if let (Some(id), Some(sku)) = (id_of(item), item.get("sku").and_then(Value::as_str)) {
                self.remember(sku, id);
            }
        }
        Ok(raw)
    }

    /// The store's own Guest list in the store view: the store leaves out what its
    /// storefront does (disabled, invisible, other websites', out of stock when it is set
    /// to), and pages what is left.
    pub(super) async fn search_shopper_products(
        &self,
        scope: Scope<'_>,
        _website_id: Option<u64>,
        criteria: &SearchCriteria,
    ) -> Result<Bytes, UpstreamError> {
        let path = format!("/products{}", self.store_suffix(scope));
        self.client.page(As::Guest, &path, criteria, &[]).await
    }

    pub(super) async fn skus_of(&self, ids: &[u64]) -> Result<Vec<IdSku>, UpstreamError> {
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

    /// The store's own storefront view of products: its Guest answers (prices for the NOT
    /// LOGGED IN group), or, with a customer's session, its answers to that customer (their
    /// group's prices and tiers, their tax), as the store computes them. One product is read
    /// singly (the single answer has the tier prices, URLs and stock flag a list leaves out).
    pub(super) async fn render_info(
        &self,
        store_id: u64,
        criteria: &SearchCriteria,
        customer: Option<&StoreSession>,
    ) -> Result<Bytes, UpstreamError> {
        let who = customer.map_or(As::Guest, As::Customer);
        if let [group] = criteria.groups()
            && let [only] = group.as_slice()
            && only.field == "entity_id"
            && only.condition_type == "eq"
        {
            let path = format!("/products/{}/store/{store_id}", segment(&only.value));
            let read = match customer {
                Some(session) => self.client.get_for(&path, &[], session).await,
                None => self.client.get_as_guest(&path, &[]).await,
            };
            let items = match read {
                Ok(raw) => vec![parse(&raw)?],
                Err(e) if e.is_not_found() => Vec::new(),
                Err(e) => return Err(e),
            };
            return Ok(bytes_of(
                &json!({"items": items, "total_count": items.len()}),
            ));
        }
        let path = format!("/products/store/{store_id}");
        self.client.page(who, &path, criteria, &[]).await
    }

    /// The session of a customer signed in through the store's authorization page
    /// ([`OpenMageBackend::customer_token`]'s `token&secret`, for the gateway's consumer).
    pub(super) fn store_session(customer_id: u64, customer_token: &str) -> Option<StoreSession> {
        let (token, secret) = customer_token.split_once('&')?;
        Some(StoreSession {
            customer_id,
            consumer: None,
            token: token.to_owned(),
            secret: secret.to_owned(),
        })
    }

    /// A shopper's single product answer carries `tier_price`:
    /// `[{"qty": "5.0000", "price_with_tax": 45, "price_without_tax": 45}]`, for the group
    /// of whom the store answered.
    pub(super) fn read_render_tiers(render: &Value) -> Option<Vec<RenderedTier>> {
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

    /// The Admin's list of the category (`/products/category/:id`), or in a store view
    /// (`.../store/:store`): the store's index for that view, which also holds the products
    /// of an anchor category's children, in their position order.
    pub(super) async fn category_products(
        &self,
        category_id: u64,
        store_view: Option<&str>,
    ) -> Result<Vec<CategoryLink>, UpstreamError> {
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
            let raw = self.client.page(As::Admin, &path, &criteria, &[]).await?;
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
            if (links.len() as u64) >= result.total_count || result.items.is_empty() || page >= 100
            {
                return Ok(links);
            }
            page += 1;
        }
    }

    /// The store's create takes no websites (its attribute filter drops `website_ids`): the
    /// product is put on them through `/products/:id/websites` once it exists.
    pub(super) async fn create_product(&self, product: Value) -> Result<Value, UpstreamError> {
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
    }

    pub(super) async fn delete_product(&self, sku: &str) -> Result<(), UpstreamError> {
        let id = self.id_of_sku(sku).await?;
        self.client.delete(&format!("/products/{id}"), None).await?;
        self.forget(sku);
        Ok(())
    }

    /// The admin record with the gallery (`images`) as the store view (or, `Some(0)`, the
    /// default values) has it.
    pub(super) async fn product_in(
        &self,
        scope: Scope<'_>,
        sku: &str,
        store_id: Option<u64>,
    ) -> Result<Bytes, UpstreamError> {
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
    }
}
