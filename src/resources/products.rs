//! Products (SPEC 2.2 and 4.2): lists, single products and category lists in the Admin and
//! the Customer/Guest views; create (simple only), partial update and delete for Admin.
//!
//! Reads assemble one source record per product, `{"product": <Magento product>, "render":
//! <products-render-info entry>}`, and let the product mapping pick the fields of the
//! caller's view. Shoppers (Customer, Guest) only see enabled products that are visible
//! individually. Every read goes through the cache; every write invalidates what it touched
//! before answering, so the next read, by anyone, sees it.

use std::collections::HashMap;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::response::Response;
use http::{HeaderMap, Method, Uri};
use serde_json::{Map, Value, json};

use crate::app::AppState;
use crate::auth::Principal;
use crate::auth::UserType;
use crate::backend::port::{
    Backend, CustomerPrices, Page, ProductDraft, SearchResult, SentPrices, StoreConfig, StoreView,
    TierPrice,
};
use crate::backend::port::{BackendError, Scope, SearchCriteria};
use crate::context::profile::{Message, Profile};
use crate::http::body::decode_record;
use crate::http::query::ListParams;
use crate::http::{ApiError, Doc, Format, created, empty_ok};
use crate::rules::mapping::convert::{as_f64, as_i64, is_empty};
use crate::rules::mapping::{Field, ResourceMapping, View};
use crate::rules::policy::{Operation, Route, authorize};
use crate::rules::pricing::{self, NOT_LOGGED_IN};

use crate::cache::keys::{tag, view};

use crate::auth::caller::Caller;
use crate::cache::response::cached;
use crate::records::catalog::product_index::sku_of;
use crate::records::catalog::product_records::{
    Shopper, product_record, product_record_in, render_many, render_record,
};
use crate::records::listing::search_criteria;
use crate::records::lookups::{customer_group, stores};
use crate::resources::parse_id;
use crate::rules::backend_errors;
use crate::rules::write_outcome;
use crate::shared_state::locks::LockKey;

/// Types Magento knows; only `simple` may be created here (SPEC 2.2).
const PRODUCT_TYPES: &[&str] = &[
    "simple",
    "virtual",
    "configurable",
    "bundle",
    "grouped",
    "downloadable",
];

// ---------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------

/// `/products`: list (also `?category_id=N`) and create.
pub async fn collection(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    // The policy answers before anything about the request is looked at.
    match authorize(Route::Products, &method, caller.principal)? {
        Operation::Retrieve => {
            read_collection(app, caller, &method, &uri, &headers, ReadStore::Default).await
        }
        Operation::Create => create(app, &headers, body).await,
        op => Err(ApiError::internal().with_cause(format!("{op:?} is not served on /products"))),
    }
}

/// A product list, or a category's when the query names one (`?category_id=N`).
async fn read_collection(
    app: AppState,
    caller: Caller,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    store: ReadStore,
) -> Result<Response, ApiError> {
    let params = ListParams::parse(uri.query())?;
    match params.category_id.clone() {
        Some(category) => {
            authorize(Route::CategoryProducts, method, caller.principal)?;
            category_list(app, caller, headers, &category, params, store).await
        }
        None => list(app, caller, headers, params, store).await,
    }
}

/// `/products/store/:store`: the product list in a store view (by id or code).
pub async fn store_collection(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    Path(store): Path<String>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    authorize(Route::StoreProducts, &method, caller.principal)?;
    let store = ReadStore::resolve(&app, &store).await?;
    read_collection(app, caller, &method, &uri, &headers, store).await
}

/// `/products/category/:category_id/store/:store` and
/// `/products/store/:store/category/:category_id`: a category's products in a store view.
pub async fn store_category(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    Path(params): Path<HashMap<String, String>>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    authorize(Route::CategoryProducts, &method, caller.principal)?;
    let (Some(category), Some(store)) = (params.get("category_id"), params.get("store")) else {
        return Err(ApiError::internal().with_cause("store category route without parameters"));
    };
    let store = ReadStore::resolve(&app, store).await?;
    let params = ListParams::parse(uri.query())?;
    category_list(app, caller, &headers, category, params, store).await
}

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

    fn code<'a>(&'a self, app: &'a AppState) -> &'a str {
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
    fn key(&self) -> Option<&str> {
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
    async fn search(
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

/// `/products/:id`, and the spec's literal `/products/category_id=:id`.
pub async fn entity(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    Path(id): Path<String>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    if let Some(category) = id.strip_prefix("category_id=") {
        authorize(Route::CategoryProducts, &method, caller.principal)?;
        let params = ListParams::parse(uri.query())?;
        return category_list(app, caller, &headers, category, params, ReadStore::Default).await;
    }
    match authorize(Route::Product, &method, caller.principal)? {
        Operation::Retrieve => get_one(app, caller, &headers, &id, ReadStore::Default).await,
        Operation::Update => update(app, &headers, &id, body, Scope::All).await,
        Operation::Delete => delete(app, &id).await,
        Operation::Create => Err(ApiError::not_implemented()),
    }
}

/// `/products/category/:category_id`, the original's path form.
pub async fn category(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    Path(category): Path<String>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    authorize(Route::CategoryProducts, &method, caller.principal)?;
    let params = ListParams::parse(uri.query())?;
    category_list(app, caller, &headers, &category, params, ReadStore::Default).await
}

// ---------------------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------------------

fn product_id(product: &Value) -> Option<u64> {
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

/// Whose prices a shopper's answer shows: the customer group (Admin and Guest: the NOT
/// LOGGED IN group's), and for whom the store renders it.
#[derive(Debug, Clone, Copy)]
struct Priced {
    group: u64,
    shopper: Shopper,
}

/// What a shopper's answer in this view is priced for, and the caller that keys its cache
/// entry by that. Views without group prices are the same for every group (they are
/// shared, and their records still carry only anonymous tiers), unless the store renders
/// for each customer: then every price of the view is their group's, and the answer is
/// keyed by their group and tax destination.
async fn priced_caller(
    app: &AppState,
    caller: Caller,
    fields: &[Field],
) -> Result<(Caller, Priced), ApiError> {
    let anonymous = Priced {
        group: NOT_LOGGED_IN,
        shopper: Shopper::Anonymous,
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
            };
            Ok((caller.with_price_group(prices), priced))
        }
        _ => Ok((caller, anonymous)),
    }
}

/// The group and tier prices a write mapped (`prices.tiers`, the gateway's own form), taken
/// out of the mapped record: the back end writes them in its store's shape.
fn take_prices(root: &mut Value) -> Option<Vec<TierPrice>> {
    let prices = root.as_object_mut().and_then(|r| r.remove("prices"))?;
    let list = prices.get("tiers").and_then(Value::as_array)?;
    Some(list.iter().filter_map(TierPrice::from_value).collect())
}

/// Renders one product for a caller. A shopper's record first loses every tier price that
/// is not for `group` (see [`pricing::prepare_shopper_source`]); `render_is_theirs`: its
/// rendering was made for the shopper's own group.
fn render_product(
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
    app: AppState,
    caller: Caller,
    headers: &HeaderMap,
    id: &str,
    read_store: ReadStore,
) -> Result<Response, ApiError> {
    let id = parse_id(id)?;
    let user = caller.user_type();
    let fields = app.mappings.get("product").view(user, View::Single);
    let (caller, priced) = priced_caller(&app, caller, &fields).await?;
    let state = app.clone();
    cached(
        &app.cache,
        caller,
        headers,
        &view::product(id, read_store.key()),
        move || async move {
            let app = state;
            let shopper = user != UserType::Admin;
            // Two independent chains, run side by side so a miss costs two upstream round
            // trips, not four: id -> SKU -> product, and store -> rendering (which needs
            // only the id and the store).
            let product_chain = async {
                let sku = sku_of(&app, id).await?;
                let product = match &read_store {
                    ReadStore::Default => product_record(&app, id, &sku).await?,
                    ReadStore::View(view) => product_record_in(&app, id, &sku, &view.code).await?,
                };
                Ok::<_, ApiError>((sku, product))
            };
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

async fn list(
    app: AppState,
    caller: Caller,
    headers: &HeaderMap,
    params: ListParams,
    read_store: ReadStore,
) -> Result<Response, ApiError> {
    let user = caller.user_type();
    let fields = app.mappings.get("product").view(user, View::List);
    // Checked before anything is cached or fetched.
    let criteria = search_criteria(&fields, &params, SearchCriteria::new())?;
    let (caller, priced) = priced_caller(&app, caller, &fields).await?;
    let state = app.clone();
    let logical = view::product_list(read_store.key(), &params.canonical());
    cached(&app.cache, caller, headers, &logical, move || async move {
        let app = state;
        let criteria = criteria.page(params.limit, params.page);
        let result: SearchResult<Value> = read_store
            .search(&app, user != UserType::Admin, &criteria)
            .await
            .and_then(|page| page.read())
            .map_err(backend_errors::to_api)?;
        // Magento repeats the last page past the end; the original did too, and clients
        // paging until an empty page never stopped. Past the end is empty here.
        let items = if params.offset() >= result.total_count {
            Vec::new()
        } else {
            result.items
        };
        let store = stores::config(&app, read_store.code(&app)).await?;
        let mut tags = vec![tag::LISTS.to_owned(), tag::STORES.to_owned()];
        let out = keyed_products(&app, &fields, user, items, &store, priced, &mut tags).await?;
        Ok((Doc::keyed_list(Value::Object(out)), tags))
    })
    .await
}

/// A page of product records rendered for a caller as the original's keyed list (by id),
/// each with its rendering for a shopper; each product's tag goes into `tags`.
async fn keyed_products(
    app: &AppState,
    fields: &[Field],
    user: UserType,
    products: Vec<Value>,
    store: &StoreConfig,
    priced: Priced,
    tags: &mut Vec<String>,
) -> Result<Map<String, Value>, ApiError> {
    let ids: Vec<u64> = products.iter().filter_map(product_id).collect();
    let (renders, theirs) = match user {
        UserType::Admin => (HashMap::new(), true),
        _ => {
            render_many(
                app,
                &ids,
                store.id,
                &store.base_currency_code,
                priced.shopper,
            )
            .await?
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

/// Products of a category, ordered by their position in it (SPEC 4.2). Page, limit and
/// filters apply; the order is the category's.
async fn category_list(
    app: AppState,
    caller: Caller,
    headers: &HeaderMap,
    category: &str,
    params: ListParams,
    read_store: ReadStore,
) -> Result<Response, ApiError> {
    let category_id: u64 = category
        .parse()
        .ok()
        .filter(|&id| id > 0)
        .ok_or_else(|| ApiError::bad_request("Category not found."))?;
    let user = caller.user_type();
    // The original answered a category's products in the shape of `/products`.
    let as_product_list = Profile::current().category_list_as_product_list();
    let list_view = if as_product_list {
        View::List
    } else {
        View::Category
    };
    let fields = app.mappings.get("product").view(user, list_view);
    // Checked before anything is cached or fetched; each chunk's search starts from it.
    let filters = search_criteria(&fields, &params, SearchCriteria::new())?;
    let (caller, priced) = priced_caller(&app, caller, &fields).await?;
    let state = app.clone();
    let logical = view::category(category_id, read_store.key(), &params.canonical());
    cached(&app.cache, caller, headers, &logical, move || async move {
        let app = state;
        // In a store view the Admin lists its index (an anchor category holds its children's
        // products), a shopper the category's own products, as the original's shopper did.
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
        let position: HashMap<&str, usize> = links
            .iter()
            .enumerate()
            .map(|(i, l)| (l.sku.as_str(), i))
            .collect();
        let skus: Vec<&str> = links.iter().map(|l| l.sku.as_str()).collect();
        let filtered = user != UserType::Admin || !params.filters.is_empty();
        // Only products that pass the filters (and, for shoppers, are visible) count
        // towards pages, so the filter must see every product of the category.
        let candidates: Vec<&str> = if filtered {
            skus.clone()
        } else {
            let start = (params.offset() as usize).min(skus.len());
            let end = (start + params.limit as usize).min(skus.len());
            skus[start..end].to_vec()
        };
        let mut found: Vec<Value> = Vec::new();
        for chunk in candidates.chunks(crate::backend::port::MAX_PAGE_SIZE as usize) {
            let criteria = filters
                .clone()
                .filter("sku", chunk.join(","), "in")
                .page(chunk.len() as u32, 1);
            let result: SearchResult<Value> = read_store
                .search(&app, user != UserType::Admin, &criteria)
                .await
                .and_then(|page| page.read())
                .map_err(backend_errors::to_api)?;
            found.extend(result.items);
        }
        found.sort_by_key(|p| {
            p.get("sku")
                .and_then(Value::as_str)
                .and_then(|s| position.get(s).copied())
                .unwrap_or(usize::MAX)
        });
        let page: Vec<Value> = if filtered {
            found
                .into_iter()
                .skip(params.offset() as usize)
                .take(params.limit as usize)
                .collect()
        } else {
            found
        };
        let store = stores::config(&app, read_store.code(&app)).await?;
        let mut tags = vec![tag::LISTS.to_owned(), tag::category(category_id)];
        if as_product_list {
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

// ---------------------------------------------------------------------------------------
// Writes
// ---------------------------------------------------------------------------------------

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.trim().to_owned(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Checks of values that the mapping's type conversion does not cover, with the
/// original's messages.
fn check_values(input: &Map<String, Value>, errors: &mut Vec<String>) {
    if let Some(sku) = input.get("sku")
        && text_of(sku).chars().count() > 64
    {
        errors.push("SKU length should be 64 characters maximum.".into());
    }
    for (field, allowed) in [("status", &[1, 2][..]), ("visibility", &[1, 2, 3, 4][..])] {
        if let Some(value) = input.get(field).filter(|v| !is_empty(v))
            && !as_i64(value).is_some_and(|v| allowed.contains(&v))
        {
            errors.push(format!(
                "Invalid value \"{}\" for attribute \"{field}\".",
                text_of(value)
            ));
        }
    }
    for field in ["price", "special_price", "weight", "msrp"] {
        if let Some(value) = input.get(field).filter(|v| !is_empty(v))
            && as_f64(value).is_some_and(|v| v < 0.0)
        {
            errors.push(format!(
                "Please enter a number 0 or greater in the \"{field}\" field."
            ));
        }
    }
}

async fn create(app: AppState, headers: &HeaderMap, body: Body) -> Result<Response, ApiError> {
    let input = decode_record(
        headers,
        body,
        Format::Json,
        app.config.body_limit,
        ApiError::not_implemented,
    )
    .await?;
    let mapping = app.mappings.get("product");

    // The original stops at the first of these.
    let type_id = match input.get("type_id") {
        None => {
            return Err(ApiError::validation(vec![
                "Missing \"type_id\" in request.".into(),
            ]));
        }
        Some(v) => text_of(v),
    };
    if !PRODUCT_TYPES.contains(&type_id.as_str()) {
        return Err(ApiError::validation(vec!["Invalid product type.".into()]));
    }
    if type_id != "simple" {
        return Err(ApiError::new(
            http::StatusCode::METHOD_NOT_ALLOWED,
            format!("Creation of products with type '{type_id}' is not implemented"),
        ));
    }
    match input.get("attribute_set_id") {
        None => {
            return Err(ApiError::validation(vec![
                "Missing \"attribute_set_id\" in request.".into(),
            ]));
        }
        Some(v) if as_i64(v).is_none_or(|id| id <= 0) => {
            return Err(ApiError::validation(vec!["Invalid attribute set.".into()]));
        }
        Some(_) => {}
    }

    let mut errors = Vec::new();
    for field in mapping.view(UserType::Admin, View::Required).iter() {
        match input.get(&field.name) {
            None => errors.push(format!("Missing \"{}\" in request.", field.name)),
            Some(v) if is_empty(v) => {
                errors.push(format!("Empty value for \"{}\" in request.", field.name))
            }
            Some(_) => {}
        }
    }
    check_values(&input, &mut errors);
    let mut root = json!({ "product": {} });
    let write_fields = mapping.view(UserType::Admin, View::Write);
    if let Err(mut conversion) = ResourceMapping::write(&write_fields, &input, &mut root) {
        errors.append(&mut conversion);
    }
    if !errors.is_empty() {
        errors.dedup();
        return Err(ApiError::validation(errors));
    }
    let sku = text_of(&input["sku"]);

    // Magento's POST updates an existing SKU. Refuse instead of overwriting, and make
    // concurrent creates of one SKU take turns (across instances when they share Redis).
    let _turn = app.locks.lock(LockKey::Sku(sku.clone())).await?;
    match app.backend.product(Scope::Default, &sku).await {
        Ok(_) => {
            return Err(ApiError::validation(vec![
                Profile::current()
                    .message(Message::DuplicateSku)
                    .unwrap_or("The value of attribute \"sku\" must be unique.")
                    .into(),
            ]));
        }
        Err(e) if e.is_not_found() => {}
        Err(e) => return Err(backend_errors::to_api(e)),
    }

    let website = stores::default_website(&app).await?;
    let product = &mut root["product"];
    product["sku"] = Value::String(sku.clone());
    product["type_id"] = Value::String(type_id);
    let draft = ProductDraft {
        tiers: take_prices(&mut root),
        record: root["product"].take(),
        website: Some(website),
        ..ProductDraft::default()
    };
    let saved = app.backend.create_product(draft).await;
    if saved.is_err() {
        // A create whose outcome is unknown may have made the product: its SKU and the
        // lists are held off the cache (`write_outcome`).
        write_outcome::touched(
            &app.cache,
            &saved,
            &[
                tag::LISTS.to_owned(),
                tag::sku(&sku),
                tag::STOCK_INDEX.to_owned(),
            ],
        );
    }
    let saved = saved.map_err(|e| write_outcome::answer(e, backend_errors::to_api))?;
    let id = product_id(&saved)
        .ok_or_else(|| ApiError::bad_gateway().with_cause("created product has no id"))?;
    app.cache.invalidate(&[
        tag::LISTS.to_owned(),
        tag::product(id),
        tag::sku(&sku),
        // A new product has a new stock item.
        tag::STOCK_INDEX.to_owned(),
    ]);
    Ok(created(&format!("/api/rest/products/{id}")))
}

/// An update of the fields sent, in `scope` (the admin values, or a store view's).
pub(super) async fn update(
    app: AppState,
    headers: &HeaderMap,
    id: &str,
    body: Body,
    scope: Scope<'_>,
) -> Result<Response, ApiError> {
    let id = parse_id(id)?;
    let mut input = decode_record(
        headers,
        body,
        Format::Json,
        app.config.body_limit,
        ApiError::request_data_invalid,
    )
    .await?;
    let sku = sku_of(&app, id).await?;
    // The original ignores these on update; the type and set of a product stay.
    input.remove("type_id");
    input.remove("attribute_set_id");
    if let Some(new_sku) = input.get("sku") {
        if text_of(new_sku) != *sku {
            return Err(ApiError::validation(vec![
                "Changing the SKU of a product is not supported; create a new product instead."
                    .into(),
            ]));
        }
        input.remove("sku");
    }
    let mapping = app.mappings.get("product");
    let mut errors = Vec::new();
    for field in mapping.view(UserType::Admin, View::Required).iter() {
        if input.get(&field.name).is_some_and(is_empty) {
            errors.push(format!("Empty value for \"{}\" in request.", field.name));
        }
    }
    check_values(&input, &mut errors);
    let mut root = json!({ "product": {} });
    let written = match ResourceMapping::write(
        &mapping.view(UserType::Admin, View::Write),
        &input,
        &mut root,
    ) {
        Ok(written) => written,
        Err(mut conversion) => {
            errors.append(&mut conversion);
            Vec::new()
        }
    };
    if !errors.is_empty() {
        return Err(ApiError::validation(errors));
    }
    if written.is_empty() {
        return Err(ApiError::request_data_invalid());
    }

    let prices = SentPrices {
        group: written.iter().any(|w| w == "group_price"),
        tier: written.iter().any(|w| w == "tier_price"),
    };
    root["product"]["sku"] = Value::String(sku.to_string());
    let draft = ProductDraft {
        tiers: take_prices(&mut root),
        record: root["product"].take(),
        sent: prices,
        website: None,
    };
    let result = app.backend.update_product(scope, &sku, draft).await;
    // Whatever happened, what we had cached about this product is suspect now; held off
    // for a while if Magento may still apply the change (`write_outcome`).
    write_outcome::touched(
        &app.cache,
        &result,
        &[tag::LISTS.to_owned(), tag::product(id), tag::sku(&sku)],
    );
    result.map_err(|e| write_outcome::answer(e, backend_errors::to_api))?;
    Ok(empty_ok())
}

async fn delete(app: AppState, id: &str) -> Result<Response, ApiError> {
    let id = parse_id(id)?;
    let sku = sku_of(&app, id).await?;
    let result = app.backend.delete_product(&sku).await;
    write_outcome::touched(
        &app.cache,
        &result,
        &[
            tag::LISTS.to_owned(),
            tag::product(id),
            tag::sku(&sku),
            tag::images(id),
            // Its stock item goes with it.
            tag::STOCK_INDEX.to_owned(),
            tag::stock_index_of(id),
        ],
    );
    result.map_err(|e| write_outcome::answer(e, backend_errors::to_api))?;
    Ok(empty_ok())
}
