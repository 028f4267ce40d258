//! Products (SPEC 2.2 and 4.2): lists, single products and category lists in the Admin and
//! the Customer/Guest views; create (simple only), partial update and delete for Admin.
//!
//! Reads assemble one source record per product, `{"product": <Magento product>, "render":
//! <products-render-info entry>}`, and let the product mapping pick the fields of the
//! caller's view. Shoppers (Customer, Guest) only see enabled products that are visible
//! individually. Every read goes through the cache; every write invalidates what it touched
//! before answering, so the next read, by anyone, sees it.

use std::collections::HashMap;

use axum::response::Response;
use serde_json::{Map, Value, json};

use super::call::ApiCall;
use crate::app::AppState;
use crate::auth::Principal;
use crate::auth::UserType;
use crate::backend::port::{
    Backend, CustomerPrices, Page, SearchResult, StoreConfig, StoreView, TierPrice,
};
use crate::backend::port::{BackendError, Scope, SearchCriteria};
use crate::http::query::ListParams;
use crate::http::{ApiError, Doc};
use crate::rules::mapping::convert::as_i64;
use crate::rules::mapping::{Field, ResourceMapping, View};
use crate::rules::pricing::{self, NOT_LOGGED_IN};

use crate::cache::keys::{tag, view};

use crate::auth::caller::Caller;
use crate::records::catalog::product_index;
use crate::records::catalog::product_records::{
    Shopper, product_by_id, render_many, render_matching, render_record,
};
use crate::records::listing::search_criteria;
use crate::records::lookups::{customer_group, stores};
use crate::resources::parse_id;
use crate::rules::backend_errors;

/// The store view a product read answers for: the configured default, or the one a
/// `/store/:store` route names. Store 0 (admin) and the default store's own id or code are
/// the same as the routes without a store.
#[derive(Debug, Clone)]
pub enum ReadStore {
    Default,
    View(StoreView),
}

impl ReadStore {
    pub async fn resolve(app: &AppState, store: &str) -> Result<ReadStore, ApiError> {
        let view = stores::view_by_id_or_code(app, store).await?;
        Ok(
            if view.id == 0 || view.code == app.backend.default_store() {
                ReadStore::Default
            } else {
                ReadStore::View(view)
            },
        )
    }

    pub(super) fn code<'a>(&'a self, app: &'a AppState) -> &'a str {
        match self {
            ReadStore::Default => app.backend.default_store(),
            ReadStore::View(view) => &view.code,
        }
    }

    fn scope(&self) -> Scope<'_> {
        match self {
            ReadStore::Default => Scope::Default,
            ReadStore::View(view) => Scope::Store(&view.code),
        }
    }

    /// The store view in cache views: none for the default store.
    pub(super) fn key(&self) -> Option<&str> {
        match self {
            ReadStore::Default => None,
            ReadStore::View(view) => Some(&view.code),
        }
    }

    /// A store view's lists hold only products of its website (the default store's lists
    /// are the store's as they are).
    fn website(&self) -> Option<u64> {
        match self {
            ReadStore::Default => None,
            ReadStore::View(view) => Some(view.website_id),
        }
    }

    /// A page of products: for shoppers, those the store shows them.
    pub(super) async fn search(
        &self,
        app: &AppState,
        shopper: bool,
        criteria: &SearchCriteria,
    ) -> Result<Page, BackendError> {
        if shopper {
            app.backend
                .search_shopper_products(self.scope(), self.website(), criteria)
                .await
        } else {
            app.backend.search_products(self.scope(), criteria).await
        }
    }
}

// ---------------------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------------------

pub(super) fn product_id(product: &Value) -> Option<u64> {
    crate::records::positive_id(product, "id")
}

/// What a shopper may see: enabled and visible in the catalog or search.
pub fn shopper_visible(product: &Value) -> bool {
    let status = product.get("status").and_then(as_i64).unwrap_or(0);
    let visibility = product.get("visibility").and_then(as_i64).unwrap_or(1);
    status == 1 && visibility != 1
}

/// Does a view show prices that depend on the customer group (tier and group prices)?
fn shows_group_prices(backend: &dyn Backend, fields: &[Field]) -> bool {
    let prices = backend.price_fields();
    fields.iter().any(|field| {
        let path = field.source.segments();
        field.ty.tier_kind().is_some()
            || path.first().is_some_and(|s| s == "pricing" || s == "prices")
            // The product itself, or its price lists, whatever the type.
            || (path.first().is_some_and(|s| s == "product")
                && path.get(1).is_none_or(|f| prices.contains(&f.as_str())))
    })
}

/// `priced`, with the renderings a shopper's search gave (`found`) where the store's
/// shopper search is its anonymous rendering of the same view
/// ([`crate::backend::port::Catalog::shopper_search_renders`]) and the shopper is
/// anonymous: the page then needs no rendering call of its own.
pub(super) fn rendered_by_search(app: &AppState, priced: Priced, found: &[Value]) -> Priced {
    if priced.shopper != Shopper::Anonymous || !app.backend.shopper_search_renders() {
        return priced;
    }
    let renders = found
        .iter()
        .filter_map(|item| Some((product_id(item)?, item.clone())))
        .collect();
    Priced {
        renders: Some((renders, true, true)),
        ..priced
    }
}

/// Whose prices a shopper's answer shows: the customer group (Admin and Guest: the NOT
/// LOGGED IN group's), and for whom the store renders it.
#[derive(Debug, Clone)]
pub(super) struct Priced {
    pub(super) group: u64,
    shopper: Shopper,
    /// Renderings already asked for beside a list (by product id), whether they are the
    /// shopper's own, and whether every product of the page the storefront shows is among
    /// them.
    renders: Option<(HashMap<u64, Value>, bool, bool)>,
}

/// What a shopper's answer in this view is priced for, and the caller that keys its cache
/// entry by that. Views without group prices are the same for every group (they are
/// shared, and their records still carry only anonymous tiers), unless the store renders
/// for each customer: then every price of the view is their group's, and the answer is
/// keyed by their group and tax destination.
pub(super) async fn priced_caller(
    app: &AppState,
    caller: Caller,
    fields: &[Field],
) -> Result<(Caller, Priced), ApiError> {
    let anonymous = Priced {
        group: NOT_LOGGED_IN,
        shopper: Shopper::Anonymous,
        renders: None,
    };
    match (caller.user_type(), caller.principal) {
        (UserType::Customer, Principal::Customer(id))
            if app.backend.customer_prices() == CustomerPrices::FromStore
                || shows_group_prices(&*app.backend, fields) =>
        {
            let prices = customer_group::of(app, caller.principal).await?;
            let priced = Priced {
                group: prices.group,
                shopper: Shopper::Customer { id, prices },
                renders: None,
            };
            Ok((caller.with_price_group(prices), priced))
        }
        _ => Ok((caller, anonymous)),
    }
}

/// Renders one product for a caller. A shopper's record first loses every tier price that
/// is not for `group` (see [`pricing::prepare_shopper_source`]); `render_is_theirs`: its
/// rendering was made for the shopper's own group.
pub(super) fn render_product(
    backend: &dyn Backend,
    fields: &[Field],
    user: UserType,
    mut source: Value,
    (group, render_is_theirs): (u64, bool),
    store: &StoreConfig,
) -> Value {
    if user != UserType::Admin {
        pricing::prepare_shopper_source(
            backend,
            &mut source,
            group,
            store.website_id,
            render_is_theirs,
        );
    }
    // The record's group and tier prices (a shopper's: theirs only, after the line above) in
    // the gateway's own form, which the mappings' price types read.
    let tiers: Vec<Value> = backend
        .tier_prices(&source["product"])
        .iter()
        .map(TierPrice::to_value)
        .collect();
    source["prices"] = json!({ "tiers": tiers });
    Value::Object(ResourceMapping::render(
        fields,
        &source,
        &store.base_media_url,
    ))
}

// ---------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------

pub(super) async fn get_one(
    call: ApiCall,
    id: &str,
    read_store: ReadStore,
) -> Result<Response, ApiError> {
    let id = parse_id(id)?;
    let user = call.caller.user_type();
    let fields = call.app.mappings.get("product").view(user, View::Single);
    let (caller, priced) = priced_caller(&call.app, call.caller, &fields).await?;
    call.cached(
        caller,
        &view::product(id, read_store.key()),
        move |app| async move {
            let shopper = user != UserType::Admin;
            // Two independent chains, run side by side so a miss costs two upstream round
            // trips, not four: id -> SKU -> product, and store -> rendering (which needs
            // only the id and the store).
            let product_chain = product_by_id(&app, id, read_store.key());
            let store_chain = async {
                let store = stores::config(&app, read_store.code(&app)).await?;
                let render = match shopper {
                    true => Some(
                        render_record(
                            &app,
                            id,
                            store.id,
                            &store.base_currency_code,
                            priced.shopper,
                        )
                        .await?,
                    ),
                    false => None,
                };
                Ok::<_, ApiError>((store, render))
            };
            // Both run to the end; the product's own failure is the one to report.
            let (product_result, store_result) = tokio::join!(product_chain, store_chain);
            let (sku, product) = product_result?;
            let (store, render) = store_result?;
            let mut source = json!({ "product": product });
            if shopper
                && (!shopper_visible(&source["product"])
                    || !app.backend.on_website(&source["product"], store.website_id))
            {
                return Err(ApiError::not_found());
            }
            let theirs = match render {
                Some(rendering) => {
                    source["render"] = rendering.render;
                    rendering.theirs
                }
                None => true,
            };
            let record = render_product(
                &*app.backend,
                &fields,
                user,
                source,
                (priced.group, theirs),
                &store,
            );
            Ok((
                Doc::new(record),
                vec![tag::product(id), tag::sku(&sku), tag::STORES.to_owned()],
            ))
        },
    )
    .await
}

pub(super) async fn list(
    call: ApiCall,
    params: ListParams,
    read_store: ReadStore,
) -> Result<Response, ApiError> {
    let user = call.caller.user_type();
    let fields = call.app.mappings.get("product").view(user, View::List);
    // Checked before anything is cached or fetched.
    let criteria = search_criteria(&fields, &params, SearchCriteria::new())?;
    let (caller, priced) = priced_caller(&call.app, call.caller, &fields).await?;
    let logical = view::product_list(read_store.key(), &params.canonical());
    call.cached(caller, &logical, move |app| async move {
        let criteria = criteria.page(params.limit, params.page);
        let shopper = user != UserType::Admin;
        let reading = app.cache.clock_reading();
        // The page, and beside it (for shoppers) the storefront's rendering of the same
        // criteria: the products it renders are the page's, so the prices need no second
        // round trip after the list (those it did not render are asked for after).
        let search = async {
            read_store
                .search(&app, shopper, &criteria)
                .await
                .and_then(|page| page.read())
                .map_err(backend_errors::to_api)
        };
        // Where the store's shopper search is its anonymous rendering, that is asked once.
        let search_renders =
            priced.shopper == Shopper::Anonymous && app.backend.shopper_search_renders();
        let store_and_renders = async {
            let store = stores::config(&app, read_store.code(&app)).await?;
            let renders = match shopper && !search_renders {
                true => render_matching(
                    &app,
                    &criteria,
                    store.id,
                    &store.base_currency_code,
                    priced.shopper,
                )
                .await
                .ok(),
                false => None,
            };
            Ok::<_, ApiError>((store, renders))
        };
        let (result, store_and_renders) = tokio::join!(search, store_and_renders);
        let result: SearchResult<Value> = result?;
        let (store, renders) = store_and_renders?;
        product_index::learn(&app, reading, &result.items);
        // Magento repeats the last page past the end; the original did too, and clients
        // paging until an empty page never stopped. Past the end is empty here.
        let items = if params.offset() >= result.total_count {
            Vec::new()
        } else {
            result.items
        };
        let mut tags = vec![tag::LISTS.to_owned(), tag::STORES.to_owned()];
        // On the first page a product the storefront renders at all is among those it
        // rendered: the storefront's list holds the search's products less those it does not
        // show, in the same order, so none of the first `limit` it shows can have slipped to
        // a page before. Past the first page one may have: those are asked for by id.
        let first_page = params.page <= 1;
        let renders = renders.map(|(found, theirs)| (found, theirs, first_page));
        let page = match shopper && search_renders {
            true => rendered_by_search(&app, priced, &items),
            false => Priced { renders, ..priced },
        };
        let out = keyed_products(&app, &fields, user, items, &store, page, &mut tags).await?;
        Ok((Doc::keyed_list(Value::Object(out)), tags))
    })
    .await
}

/// A page of product records rendered for a caller as the original's keyed list (by id),
/// each with its rendering for a shopper; each product's tag goes into `tags`.
pub(super) async fn keyed_products(
    app: &AppState,
    fields: &[Field],
    user: UserType,
    products: Vec<Value>,
    store: &StoreConfig,
    priced: Priced,
    tags: &mut Vec<String>,
) -> Result<Map<String, Value>, ApiError> {
    let ids: Vec<u64> = products.iter().filter_map(product_id).collect();
    let (renders, theirs) = match (user, priced.renders) {
        (UserType::Admin, _) => (HashMap::new(), true),
        (_, None) => {
            render_many(
                app,
                &ids,
                store.id,
                &store.base_currency_code,
                priced.shopper,
            )
            .await?
        }
        // Rendered beside the list: only the products it left out are asked for now, unless
        // it left out only what the storefront does not show.
        (_, Some((renders, theirs, true))) => (renders, theirs),
        (_, Some((mut renders, theirs, false))) => {
            let missing: Vec<u64> = ids
                .iter()
                .copied()
                .filter(|id| !renders.contains_key(id))
                .collect();
            let (more, more_theirs) = render_many(
                app,
                &missing,
                store.id,
                &store.base_currency_code,
                priced.shopper,
            )
            .await?;
            renders.extend(more);
            (renders, theirs && more_theirs)
        }
    };
    let mut out = Map::new();
    for product in products {
        let Some(id) = product_id(&product) else {
            continue;
        };
        tags.push(tag::product(id));
        let render = renders.get(&id).cloned().unwrap_or(Value::Null);
        let source = json!({ "product": product, "render": render });
        let record = render_product(
            &*app.backend,
            fields,
            user,
            source,
            (priced.group, theirs),
            store,
        );
        out.insert(id.to_string(), record);
    }
    Ok(out)
}
