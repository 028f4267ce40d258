//! A category's products (SPEC 4.2, and the original's path forms, `/products/category/:id`
//! and `?category_id=`), in the category's order; page, limit and filters apply, and only
//! products that pass the filters (for shoppers: that they may see) count towards pages.
//!
//! Where the store's product search filters by category (`Catalog::category_filter`,
//! Magento 2), the category's list and its products' records are asked for side by side:
//! one round trip. Elsewhere the records are searched by SKU once the list is known.

use std::collections::HashMap;

use axum::response::Response;
use serde_json::{Value, json};

use super::call::ApiCall;
use crate::app::AppState;
use crate::auth::UserType;
use crate::backend::port::SearchResult;
use crate::backend::port::{BackendError, CategoryLink, MAX_PAGE_SIZE, SearchCriteria};
use crate::cache::keys::{tag, view};
use crate::context::profile::Profile;
use crate::http::query::ListParams;
use crate::http::{ApiError, Doc};
use crate::records::catalog::product_index;
use crate::records::listing::search_criteria;
use crate::records::lookups::stores;
use crate::rules::backend_errors;
use crate::rules::mapping::View;

use super::products::{
    ReadStore, keyed_products, priced_caller, product_id, render_product, rendered_by_search,
};

/// Products of a category, ordered by their position in it (SPEC 4.2). Page, limit and
/// filters apply; the order is the category's.
pub(super) async fn category_list(
    call: ApiCall,
    category: &str,
    params: ListParams,
    read_store: ReadStore,
) -> Result<Response, ApiError> {
    let category_id: u64 = category
        .parse()
        .ok()
        .filter(|&id| id > 0)
        .ok_or_else(|| ApiError::bad_request("Category not found."))?;
    let user = call.caller.user_type();
    // The original answered a category's products in the shape of `/products`.
    let as_product_list = Profile::current().category_list_as_product_list();
    let list_view = if as_product_list {
        View::List
    } else {
        View::Category
    };
    let fields = call.app.mappings.get("product").view(user, list_view);
    // Checked before anything is cached or fetched; each search starts from it.
    let filters = search_criteria(&fields, &params, SearchCriteria::new())?;
    let (caller, priced) = priced_caller(&call.app, call.caller, &fields).await?;
    let logical = view::category(category_id, read_store.key(), &params.canonical());
    call.cached(caller, &logical, move |app| async move {
        let shopper = user != UserType::Admin;
        let reading = app.cache.clock_reading();
        // The category's records beside its list, where the store's search filters by
        // category; searched by SKU after the list otherwise, or should that search fail
        // (a store that does not take the filter after all).
        let (links, by_category) = match app.backend.category_filter() {
            Some(field) => {
                let all = filters.clone().filter(field, category_id.to_string(), "eq");
                let (links, found) = tokio::join!(
                    links_of(&app, category_id, &read_store, user),
                    search_all(&app, &read_store, shopper, all)
                );
                (links?, found.ok())
            }
            None => (links_of(&app, category_id, &read_store, user).await?, None),
        };
        let (mut found, paged) = match by_category {
            Some(found) => (found, false),
            None => (
                by_sku(&app, &read_store, shopper, &params, &filters, &links).await?,
                !shopper && params.filters.is_empty(),
            ),
        };
        product_index::learn(&app, reading, &found);
        let position: HashMap<&str, usize> = links
            .iter()
            .enumerate()
            .map(|(i, l)| (l.sku.as_str(), i))
            .collect();
        found.sort_by_key(|p| {
            p.get("sku")
                .and_then(Value::as_str)
                .and_then(|s| position.get(s).copied())
                .unwrap_or(usize::MAX)
        });
        let page: Vec<Value> = if paged {
            found
        } else {
            found
                .into_iter()
                .skip(params.offset() as usize)
                .take(params.limit as usize)
                .collect()
        };
        let store = stores::config(&app, read_store.code(&app)).await?;
        let mut tags = vec![tag::LISTS.to_owned(), tag::category(category_id)];
        if as_product_list {
            let priced = match shopper {
                true => rendered_by_search(&app, priced, &page),
                false => priced,
            };
            let out = keyed_products(&app, &fields, user, page, &store, priced, &mut tags).await?;
            return Ok((Doc::keyed_list(Value::Object(out)), tags));
        }
        let mut out = Vec::new();
        for product in page {
            if let Some(id) = product_id(&product) {
                tags.push(tag::product(id));
            }
            let source = json!({ "product": product });
            // No rendering in this view: nothing in it is the store's per group.
            out.push(render_product(
                &*app.backend,
                &fields,
                user,
                source,
                (priced.group, false),
                &store,
            ));
        }
        Ok((Doc::new(Value::Array(out)), tags))
    })
    .await
}

/// The category's products with their positions, in position order; an unknown category
/// is the original's 400. In a store view the Admin lists its index (an anchor category
/// holds its children's products), a shopper the category's own products, as the
/// original's shopper did.
async fn links_of(
    app: &AppState,
    category_id: u64,
    read_store: &ReadStore,
    user: UserType,
) -> Result<Vec<CategoryLink>, ApiError> {
    let links_view = read_store.key().filter(|_| user == UserType::Admin);
    let mut links = app
        .backend
        .category_products(category_id, links_view)
        .await
        .map_err(|e| match e {
            BackendError::Status { status: 404, .. } => {
                ApiError::bad_request("Category not found.")
            }
            other => backend_errors::to_api(other),
        })?;
    links.sort_by_key(|link| link.position);
    Ok(links)
}

/// Every product `criteria` finds, a page of [`MAX_PAGE_SIZE`] at a time.
async fn search_all(
    app: &AppState,
    read_store: &ReadStore,
    shopper: bool,
    criteria: SearchCriteria,
) -> Result<Vec<Value>, ApiError> {
    let mut found = Vec::new();
    for page in 1.. {
        let criteria = criteria.clone().page(MAX_PAGE_SIZE, page);
        let result: SearchResult<Value> = read_store
            .search(app, shopper, &criteria)
            .await
            .and_then(|page| page.read())
            .map_err(backend_errors::to_api)?;
        let last = result.items.is_empty()
            || u64::from(page) * u64::from(MAX_PAGE_SIZE) >= result.total_count;
        found.extend(result.items);
        if last {
            break;
        }
    }
    Ok(found)
}

/// The records of the category's products, searched by SKU: every product when filters
/// (or a shopper's visibility) decide what counts towards pages, else only the page's.
async fn by_sku(
    app: &AppState,
    read_store: &ReadStore,
    shopper: bool,
    params: &ListParams,
    filters: &SearchCriteria,
    links: &[CategoryLink],
) -> Result<Vec<Value>, ApiError> {
    let skus: Vec<&str> = links.iter().map(|l| l.sku.as_str()).collect();
    let candidates: &[&str] = if shopper || !params.filters.is_empty() {
        &skus
    } else {
        let start = (params.offset() as usize).min(skus.len());
        let end = (start + params.limit as usize).min(skus.len());
        &skus[start..end]
    };
    let mut found: Vec<Value> = Vec::new();
    for chunk in candidates.chunks(MAX_PAGE_SIZE as usize) {
        let criteria = filters
            .clone()
            .filter("sku", chunk.join(","), "in")
            .page(chunk.len() as u32, 1);
        let result: SearchResult<Value> = read_store
            .search(app, shopper, &criteria)
            .await
            .and_then(|page| page.read())
            .map_err(backend_errors::to_api)?;
        found.extend(result.items);
    }
    Ok(found)
}
