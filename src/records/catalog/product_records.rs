//! Product record reads: a product as the store returns it, and its shopper-facing
//! rendering, through the cache (or, for a page of renderings, in one search).

use std::collections::HashMap;

use bytes::Bytes;
use serde_json::Value;

use crate::app::AppState;
use crate::auth::price_group::PriceGroup;
use crate::backend::port::{BackendError, CustomerPrices, Scope, SearchCriteria};
use crate::cache::keys::{key, price_audience, tag};
use crate::http::ApiError;
use crate::records::{json, record};
use crate::rules::backend_errors;
use crate::rules::mapping::convert::as_i64;

/// A product as the store returns it by SKU (with its stock item), through the cache.
pub async fn product_record(app: &AppState, id: u64, sku: &str) -> Result<Value, ApiError> {
    let backend = app.backend.clone();
    let owned = sku.to_owned();
    let bytes = record(
        app,
        key::product(backend.default_store(), sku),
        move || async move {
            let bytes = backend.product(Scope::Default, &owned).await?;
            Ok((bytes, vec![tag::product(id), tag::sku(&owned)]))
        },
    )
    .await?;
    json(&bytes)
}

/// A product as a store view (by code) sees it, through the cache; the same entry the image
/// resource reads for that store.
pub async fn product_record_in(
    app: &AppState,
    id: u64,
    sku: &str,
    store_code: &str,
) -> Result<Value, ApiError> {
    let backend = app.backend.clone();
    let owned = sku.to_owned();
    let code = store_code.to_owned();
    let bytes = record(app, key::product(store_code, sku), move || async move {
        let bytes = backend.product(Scope::Store(&code), &owned).await?;
        Ok((
            bytes,
            vec![tag::product(id), tag::sku(&owned), tag::images(id)],
        ))
    })
    .await?;
    json(&bytes)
}

/// Product `id` as the default store view (`store`: None) or a store view sees it, by the
/// SKU the index gives, checked: a record that is not product `id` (the SKU moved in the
/// store) makes the index ask for the SKU again, and the record is read once more
/// (`product_index::confirmed`). The SKU and the record.
pub async fn product_by_id(
    app: &AppState,
    id: u64,
    store: Option<&str>,
) -> Result<(std::sync::Arc<str>, Value), ApiError> {
    let read = |sku: std::sync::Arc<str>| async move {
        match store {
            None => product_record(app, id, &sku).await,
            Some(code) => product_record_in(app, id, &sku, code).await,
        }
    };
    let (sku, indexed) = super::product_index::sku_to_read(app, id).await?;
    let first = read(sku.clone()).await;
    if !indexed {
        return Ok((sku, first?));
    }
    match super::product_index::confirmed(app, id, first.as_ref()).await? {
        None => Ok((sku, first?)),
        Some(sku) => {
            let product = read(sku.clone()).await?;
            Ok((sku, product))
        }
    }
}

/// For whom a product is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shopper {
    /// A Guest (or a view whose prices are nobody's in particular).
    Anonymous,
    /// A customer, with their price group.
    Customer { id: u64, prices: PriceGroup },
}

/// A rendering, and whether it was made for the shopper's own price group (a Guest's always;
/// a customer's when the store renders for customers and holds a session of theirs). Only
/// then do its group-dependent parts (tier prices) speak for the shopper.
#[derive(Debug, Clone)]
pub struct Rendering {
    pub render: Value,
    pub theirs: bool,
}

/// Marks, inside a fetch (the cache's errors are API errors), a rendering the store did not
/// make for the customer after all (their kept session is gone or refused, and the back end
/// forgot it): the rendering falls back to the anonymous one.
const NOT_THEIRS: &str = "the store did not render for the customer's kept session";

/// The customer a rendering is made for by the store, with their price group: when the store
/// prices each customer and the customer's group lookup found a session of theirs (its
/// destination): the answer is keyed as the store's own, and only the store's own may fill
/// it.
fn rendered_for(app: &AppState, shopper: Shopper) -> Option<(u64, PriceGroup)> {
    match shopper {
        Shopper::Customer { id, prices }
            if app.backend.customer_prices() == CustomerPrices::FromStore
                && prices.destination.is_some() =>
        {
            Some((id, prices))
        }
        _ => None,
    }
}

fn not_theirs(error: &ApiError) -> bool {
    error.cause().is_some_and(|c| c.contains(NOT_THEIRS))
}

/// The customer's session is the store's no longer: their next answers are keyed for the
/// group alone (`lookups::customer_group`).
fn session_gone(app: &AppState, customer_id: u64) {
    app.cache.invalidate(&[tag::customer_group(customer_id)]);
}

/// The shopper-facing rendering of one product (prices with tax, salability, URLs), or
/// `null` when the store does not show it in the store view: the customer's own when the
/// store renders for customers and holds their session, else the anonymous one.
pub async fn render_record(
    app: &AppState,
    id: u64,
    store_id: u64,
    currency: &str,
    shopper: Shopper,
) -> Result<Rendering, ApiError> {
    let criteria = SearchCriteria::new().filter("entity_id", id.to_string(), "eq");
    if let Some((customer, prices)) = rendered_for(app, shopper) {
        let backend = app.backend.clone();
        let currency_owned = currency.to_owned();
        let query = criteria.clone();
        let key = key::render_for(store_id, id, &price_audience(prices));
        let fetched = record(app, key, move || async move {
            let rendered = backend
                .render(store_id, &currency_owned, &query, Some(customer))
                .await?;
            if !rendered.for_customer {
                return Err(BackendError::Protocol(NOT_THEIRS.to_owned()));
            }
            Ok((first_item(rendered.items), vec![tag::product(id)]))
        })
        .await;
        match fetched {
            Ok(bytes) => {
                return Ok(Rendering {
                    render: json(&bytes)?,
                    theirs: true,
                });
            }
            Err(e) if not_theirs(&e) => session_gone(app, customer),
            Err(e) => return Err(e),
        }
    }
    let backend = app.backend.clone();
    let currency = currency.to_owned();
    let bytes = record(app, key::render_info(store_id, id), move || async move {
        let rendered = backend.render(store_id, &currency, &criteria, None).await?;
        Ok((first_item(rendered.items), vec![tag::product(id)]))
    })
    .await?;
    Ok(Rendering {
        render: json(&bytes)?,
        theirs: shopper == Shopper::Anonymous,
    })
}

/// The first product of a rendering, as JSON bytes (`null`: none).
fn first_item(items: Vec<Value>) -> Bytes {
    let item = items.into_iter().next().unwrap_or(Value::Null);
    Bytes::from(serde_json::to_vec(&item).unwrap_or_default())
}

/// Render entries for a page of products, by id, for `shopper` (as [`render_record`]);
/// `.1`: they are the shopper's own.
pub async fn render_many(
    app: &AppState,
    ids: &[u64],
    store_id: u64,
    currency: &str,
    shopper: Shopper,
) -> Result<(HashMap<u64, Value>, bool), ApiError> {
    if ids.is_empty() {
        return Ok((HashMap::new(), true));
    }
    let list = ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    let criteria = SearchCriteria::new()
        .filter("entity_id", list, "in")
        .page(ids.len() as u32, 1);
    render_matching(app, &criteria, store_id, currency, shopper).await
}

/// Render entries of the products matching `criteria` (a list's own criteria, asked at the
/// same time as the list: the storefront renders the products a shopper's list holds, so
/// the list and its prices cost one round trip, not two in a row), as [`render_many`].
pub async fn render_matching(
    app: &AppState,
    criteria: &SearchCriteria,
    store_id: u64,
    currency: &str,
    shopper: Shopper,
) -> Result<(HashMap<u64, Value>, bool), ApiError> {
    let customer = rendered_for(app, shopper).map(|(customer, _)| customer);
    let rendered = app
        .backend
        .render(store_id, currency, criteria, customer)
        .await
        .map_err(backend_errors::to_api)?;
    if let (Some(customer), true) = (customer, rendered.session_dropped) {
        session_gone(app, customer);
    }
    let theirs = shopper == Shopper::Anonymous || rendered.for_customer;
    Ok((
        rendered
            .items
            .into_iter()
            .filter_map(|item| Some((item.get("id").and_then(as_i64)? as u64, item)))
            .collect(),
        theirs,
    ))
}
