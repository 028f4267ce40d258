//! Product record reads: a product as Magento returns it, and its shopper-facing
//! rendering, through the cache (or, for a page of renderings, in one search).

use std::collections::HashMap;

use bytes::Bytes;
use serde_json::Value;

use crate::app::AppState;
use crate::auth::price_group::PriceGroup;
use crate::backend::errors;
use crate::backend::port::{Scope, SearchCriteria, StoreSession, UpstreamError};
use crate::cache::keys::{key, price_audience, tag};
use crate::http::ApiError;
use crate::records::{json, record};
use crate::rules::mapping::convert::as_i64;

/// A product as Magento returns it by SKU (with its stock item), through the cache.
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

/// A product as a store view (by code) sees it (`/rest/<code>/V1/products/{sku}`), through
/// the cache; the same entry the image resource reads for that store.
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

/// Marks a store's refusal of a kept session, or none kept, inside a fetch (the cache's
/// errors are API errors): the rendering falls back to the anonymous one.
const SESSION_REFUSED: &str = "the store refused the customer's kept session";

/// The customer a rendering is made for by the store, with their price group: when the store
/// renders for customers and the customer's group lookup found a session of theirs (its
/// destination): the answer is keyed as the store's own, and only the store's own may fill it.
fn rendered_for(app: &AppState, shopper: Shopper) -> Option<(u64, PriceGroup)> {
    match shopper {
        Shopper::Customer { id, prices }
            if app.backend.renders_for_customers() && prices.destination.is_some() =>
        {
            Some((id, prices))
        }
        _ => None,
    }
}

/// The customer's kept session with the store. Missing or unreadable is a refusal: the
/// rendering falls back to the anonymous one.
async fn stored_session(
    oauth: &crate::auth::oauth::OAuth,
    customer_id: u64,
) -> Result<StoreSession, UpstreamError> {
    match oauth.store().store_session(customer_id).await {
        Ok(Some(text)) => StoreSession::from_text(&text),
        Ok(None) => None,
        Err(e) => {
            // Anonymous prices are a fallback, not a failure of the read.
            crate::observe::log_limit::warn(
                "store session lookup",
                format_args!("store session lookup failed, rendering anonymously: {e}"),
            );
            None
        }
    }
    .ok_or_else(|| UpstreamError::Protocol(SESSION_REFUSED.to_owned()))
}

/// A store's rendering call for a customer's session, with a refusal of the session marked.
async fn render_call(
    backend: &dyn crate::backend::port::Backend,
    store_id: u64,
    currency: &str,
    criteria: &SearchCriteria,
    session: Option<&StoreSession>,
) -> Result<Bytes, UpstreamError> {
    match backend
        .render_info(store_id, currency, criteria, session)
        .await
    {
        Err(UpstreamError::Status {
            status: 401 | 403, ..
        }) if session.is_some() => Err(UpstreamError::Protocol(SESSION_REFUSED.to_owned())),
        other => other,
    }
}

fn refused(error: &ApiError) -> bool {
    error.cause().is_some_and(|c| c.contains(SESSION_REFUSED))
}

/// The session is the store's no longer (the customer signed in again elsewhere, or the
/// token was revoked in the store): forgotten, so the next reads go anonymous at once.
async fn forget_session(app: &AppState, customer_id: u64) {
    crate::observe::log_limit::warn(
        "store session refused",
        format_args!("a customer's kept store session is gone or refused; rendering anonymously"),
    );
    let _ = app.oauth.store().put_store_session(customer_id, "").await;
    // Their next answers are keyed for the group alone (`lookups::customer_group`).
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
        let (backend, oauth) = (app.backend.clone(), app.oauth.clone());
        let currency_owned = currency.to_owned();
        let query = criteria.clone();
        let key = key::render_for(store_id, id, &price_audience(prices));
        // The session is read only when the rendering is not cached.
        let fetched = record(app, key, move || async move {
            let session = stored_session(&oauth, customer).await?;
            let bytes =
                render_call(&*backend, store_id, &currency_owned, &query, Some(&session)).await?;
            Ok((first_item(&*backend, &bytes)?, vec![tag::product(id)]))
        })
        .await;
        match fetched {
            Ok(bytes) => {
                return Ok(Rendering {
                    render: json(&bytes)?,
                    theirs: true,
                });
            }
            Err(e) if refused(&e) => forget_session(app, customer).await,
            Err(e) => return Err(e),
        }
    }
    let backend = app.backend.clone();
    let currency = currency.to_owned();
    let bytes = record(app, key::render_info(store_id, id), move || async move {
        let bytes = backend
            .render_info(store_id, &currency, &criteria, None)
            .await?;
        Ok((first_item(&*backend, &bytes)?, vec![tag::product(id)]))
    })
    .await?;
    Ok(Rendering {
        render: json(&bytes)?,
        theirs: shopper == Shopper::Anonymous,
    })
}

/// The first product of a rendering answer, as JSON bytes (`null`: none).
fn first_item(
    backend: &dyn crate::backend::port::Backend,
    bytes: &[u8],
) -> Result<Bytes, UpstreamError> {
    let item = backend
        .read_render_items(bytes)?
        .into_iter()
        .next()
        .unwrap_or(Value::Null);
    Ok(Bytes::from(serde_json::to_vec(&item).unwrap_or_default()))
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
    let mut theirs = shopper == Shopper::Anonymous;
    let mut answer = None;
    if let Some((customer, _)) = rendered_for(app, shopper) {
        let rendered = match stored_session(&app.oauth, customer).await {
            Ok(session) => {
                render_call(&*app.backend, store_id, currency, &criteria, Some(&session)).await
            }
            Err(refused) => Err(refused),
        };
        match rendered {
            Ok(bytes) => {
                answer = Some(bytes);
                theirs = true;
            }
            Err(UpstreamError::Protocol(cause)) if cause == SESSION_REFUSED => {
                forget_session(app, customer).await;
            }
            Err(e) => return Err(errors::to_api(e)),
        }
    }
    let bytes = match answer {
        Some(bytes) => bytes,
        None => app
            .backend
            .render_info(store_id, currency, &criteria, None)
            .await
            .map_err(errors::to_api)?,
    };
    let items = app
        .backend
        .read_render_items(&bytes)
        .map_err(errors::to_api)?;
    Ok((
        items
            .into_iter()
            .filter_map(|item| Some((item.get("id").and_then(as_i64)? as u64, item)))
            .collect(),
        theirs,
    ))
}
