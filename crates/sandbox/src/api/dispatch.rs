//! From an HTTP request to a Magento service call, in the order Magento's REST front
//! controller does it.
//!
//! 1. Strip `/rest` and an optional store code (`default`, `french`, or `all` for admin);
//!    an unknown code stays part of the path, so it ends as "no route", like Magento.
//! 2. Match the route among those of the HTTP method; literal segments beat parameters so
//!    `/V1/customers/me` and `/V1/stockItems/lowStock` win over their `:id` twins.
//! 3. Check the route's ACL resource against the bearer token (401 otherwise).
//! 4. Refuse GET through `all` (400), then decode the JSON body and call the handler.
//!
//! Everything a handler needs travels in [`Call`] (`call.rs`); this is the one file that
//! knows every handler.

use serde_json::{Map, Value, json};

use crate::model::store::{ADMIN_STORE_ID, DEFAULT_STORE_ID};
use crate::state::Shared;
use crate::webapi::error::{ApiError, ApiResult};
use crate::webapi::{fields, messages, query};

use super::call::{Call, Caller, PathParams, StoreScope};
use super::{
    attributes, categories, customers, directory, links, media, orders, products, render_info,
    stock, store, token,
};

/// Which ACL a route needs, as in Magento's `webapi.xml`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Acl {
    Anonymous,
    /// `self`: a customer token.
    Customer,
    /// An admin resource, granted to the integration token.
    Resource(&'static str),
}

type Handler = fn(&Call) -> ApiResult<Value>;

/// Magento's `ParamsOverrider`: on PUT, the last path parameter replaces the matching
/// property of the single wrapped body object (`PUT /V1/products/{sku}` forces `product.sku`).
#[derive(Debug, Clone, Copy)]
struct BodyOverride {
    wrapper: &'static str,
    property: &'static str,
}

struct Route {
    method: &'static str,
    pattern: &'static str,
    acl: Acl,
    handler: Handler,
    body_override: Option<BodyOverride>,
}

const fn route(method: &'static str, pattern: &'static str, acl: Acl, handler: Handler) -> Route {
    Route {
        method,
        pattern,
        acl,
        handler,
        body_override: None,
    }
}

const fn put_route(
    pattern: &'static str,
    acl: Acl,
    handler: Handler,
    wrapper: &'static str,
    property: &'static str,
) -> Route {
    Route {
        method: "PUT",
        pattern,
        acl,
        handler,
        body_override: Some(BodyOverride { wrapper, property }),
    }
}

const PRODUCTS: Acl = Acl::Resource("Magento_Catalog::products");
const CATALOG: Acl = Acl::Resource("Magento_Catalog::catalog");
const ATTRIBUTES: Acl = Acl::Resource("Magento_Catalog::attributes_attributes");
const CATEGORIES: Acl = Acl::Resource("Magento_Catalog::categories");
const SETS: Acl = Acl::Resource("Magento_Catalog::sets");
const INVENTORY: Acl = Acl::Resource("Magento_CatalogInventory::cataloginventory");
const CUSTOMER_READ: Acl = Acl::Resource("Magento_Customer::customer");
const CUSTOMER_MANAGE: Acl = Acl::Resource("Magento_Customer::manage");
const SALES: Acl = Acl::Resource("Magento_Sales::actions_view");
const SALES_COMMENT: Acl = Acl::Resource("Magento_Sales::comment");

static ROUTES: &[Route] = &[
    // Catalog: products.
    route("GET", "/V1/products", PRODUCTS, products::list),
    route("POST", "/V1/products", PRODUCTS, products::create),
    route("GET", "/V1/products/:sku", PRODUCTS, products::get),
    put_route(
        "/V1/products/:sku",
        PRODUCTS,
        products::update,
        "product",
        "sku",
    ),
    route("DELETE", "/V1/products/:sku", PRODUCTS, products::delete),
    route(
        "GET",
        "/V1/products-render-info",
        Acl::Anonymous,
        render_info::list,
    ),
    // Catalog: attribute sets (clients ask whether a set has a media gallery).
    route(
        "GET",
        "/V1/products/attribute-sets/:attributeSetId/attributes",
        SETS,
        attributes::set_attributes,
    ),
    // Catalog: media gallery.
    route("GET", "/V1/products/:sku/media", CATALOG, media::list),
    route("POST", "/V1/products/:sku/media", CATALOG, media::create),
    route(
        "GET",
        "/V1/products/:sku/media/:entryId",
        ATTRIBUTES,
        media::get,
    ),
    route(
        "PUT",
        "/V1/products/:sku/media/:entryId",
        CATALOG,
        media::update,
    ),
    route(
        "DELETE",
        "/V1/products/:sku/media/:entryId",
        CATALOG,
        media::delete,
    ),
    // Catalog: categories.
    route(
        "GET",
        "/V1/categories/:categoryId",
        CATEGORIES,
        categories::get,
    ),
    route(
        "GET",
        "/V1/categories/:categoryId/products",
        CATEGORIES,
        categories::products,
    ),
    route(
        "POST",
        "/V1/categories/:categoryId/products",
        CATEGORIES,
        links::assign_category,
    ),
    route(
        "DELETE",
        "/V1/categories/:categoryId/products/:sku",
        CATEGORIES,
        links::unassign_category,
    ),
    // Catalog: website assignments.
    route(
        "POST",
        "/V1/products/:sku/websites",
        PRODUCTS,
        links::assign_website,
    ),
    route(
        "DELETE",
        "/V1/products/:sku/websites/:websiteId",
        PRODUCTS,
        links::unassign_website,
    ),
    // Store.
    route(
        "GET",
        "/V1/store/storeViews",
        Acl::Anonymous,
        store::store_views,
    ),
    route(
        "GET",
        "/V1/store/storeGroups",
        Acl::Anonymous,
        store::store_groups,
    ),
    route("GET", "/V1/store/websites", Acl::Anonymous, store::websites),
    route(
        "GET",
        "/V1/store/storeConfigs",
        Acl::Anonymous,
        store::store_configs,
    ),
    // Inventory (legacy CatalogInventory API).
    route(
        "GET",
        "/V1/stockItems/lowStock",
        INVENTORY,
        stock::low_stock,
    ),
    route("GET", "/V1/stockItems/:productSku", INVENTORY, stock::get),
    put_route(
        "/V1/products/:productSku/stockItems/:itemId",
        INVENTORY,
        stock::update,
        "stockItem",
        "item_id",
    ),
    route(
        "GET",
        "/V1/stockStatuses/:productSku",
        Acl::Anonymous,
        stock::status,
    ),
    // Customers.
    route(
        "GET",
        "/V1/customers/search",
        CUSTOMER_READ,
        customers::search,
    ),
    route("GET", "/V1/customers/me", Acl::Customer, customers::get_me),
    put_route(
        "/V1/customers/me",
        Acl::Customer,
        customers::update_me,
        "customer",
        "id",
    ),
    route(
        "GET",
        "/V1/customers/me/billingAddress",
        Acl::Customer,
        customers::me_billing,
    ),
    route(
        "GET",
        "/V1/customers/me/shippingAddress",
        Acl::Customer,
        customers::me_shipping,
    ),
    route(
        "GET",
        "/V1/customers/:customerId",
        CUSTOMER_READ,
        customers::get,
    ),
    route("POST", "/V1/customers", Acl::Anonymous, customers::create),
    put_route(
        "/V1/customers/:id",
        CUSTOMER_MANAGE,
        customers::update,
        "customer",
        "id",
    ),
    route(
        "DELETE",
        "/V1/customers/:customerId",
        CUSTOMER_MANAGE,
        customers::delete,
    ),
    route(
        "POST",
        "/V1/customers/isEmailAvailable",
        Acl::Anonymous,
        customers::email_available,
    ),
    route(
        "GET",
        "/V1/customers/:customerId/billingAddress",
        CUSTOMER_MANAGE,
        customers::billing,
    ),
    route(
        "GET",
        "/V1/customers/:customerId/shippingAddress",
        CUSTOMER_MANAGE,
        customers::shipping,
    ),
    route(
        "GET",
        "/V1/customers/addresses/:addressId",
        CUSTOMER_MANAGE,
        customers::address,
    ),
    route(
        "DELETE",
        "/V1/addresses/:addressId",
        CUSTOMER_MANAGE,
        customers::delete_address,
    ),
    // Directory.
    route(
        "GET",
        "/V1/directory/countries",
        Acl::Anonymous,
        directory::countries,
    ),
    route(
        "GET",
        "/V1/directory/countries/:countryId",
        Acl::Anonymous,
        directory::country,
    ),
    route(
        "GET",
        "/V1/directory/currency",
        Acl::Anonymous,
        directory::currency,
    ),
    // Tokens.
    route(
        "POST",
        "/V1/integration/customer/token",
        Acl::Anonymous,
        token::customer_token,
    ),
    // Sales.
    route("GET", "/V1/orders", SALES, orders::list),
    route("GET", "/V1/orders/:id", SALES, orders::get),
    route("GET", "/V1/orders/:id/comments", SALES, orders::comments),
    route(
        "POST",
        "/V1/orders/:id/comments",
        SALES_COMMENT,
        orders::add_comment,
    ),
];

/// Matches path segments against a pattern; returns the parameters and a specificity key
/// (one flag per segment, literal = true) so the most literal route can win.
fn match_pattern(pattern: &'static str, segments: &[String]) -> Option<(PathParams, Vec<bool>)> {
    let parts: Vec<&'static str> = pattern.trim_matches('/').split('/').collect();
    if parts.len() != segments.len() {
        return None;
    }
    let mut params = Vec::new();
    let mut specificity = Vec::with_capacity(parts.len());
    for (part, segment) in parts.iter().zip(segments) {
        if let Some(name) = part.strip_prefix(':') {
            params.push((name, segment.clone()));
            specificity.push(false);
        } else if part == segment {
            specificity.push(true);
        } else {
            return None;
        }
    }
    Some((params, specificity))
}

fn find_route(method: &str, segments: &[String]) -> Option<(&'static Route, PathParams)> {
    let mut best: Option<(&'static Route, PathParams, Vec<bool>)> = None;
    for candidate in ROUTES.iter().filter(|r| r.method == method) {
        if let Some((params, specificity)) = match_pattern(candidate.pattern, segments) {
            let better = match &best {
                None => true,
                Some((_, _, current)) => specificity > *current,
            };
            if better {
                best = Some((candidate, params, specificity));
            }
        }
    }
    best.map(|(r, p, _)| (r, p))
}

fn percent_decode(segment: &str) -> String {
    percent_encoding::percent_decode_str(segment)
        .decode_utf8_lossy()
        .into_owned()
}

/// A request as the HTTP layer hands it over.
pub(crate) struct RawRequest<'a> {
    pub(crate) method: &'a str,
    /// Path after `/rest`, still percent-encoded, starting with `/`.
    pub(crate) rest_path: &'a str,
    pub(crate) query: &'a str,
    pub(crate) authorization: Option<&'a str>,
    pub(crate) content_type: Option<&'a str>,
    pub(crate) body: &'a [u8],
    pub(crate) origin: String,
}

/// What the dispatcher answers: a status and a JSON body.
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) body: Value,
}

impl From<ApiError> for Answer {
    fn from(error: ApiError) -> Self {
        Answer {
            status: error.status,
            body: error.to_json(),
        }
    }
}

fn caller_of(shared: &Shared, authorization: Option<&str>) -> Caller {
    let Some(header) = authorization else {
        return Caller::Guest;
    };
    let mut parts = header.trim().splitn(2, char::is_whitespace);
    let scheme = parts.next().unwrap_or("");
    let token = parts.next().unwrap_or("").trim();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return Caller::Guest;
    }
    if token == shared.token {
        return Caller::Integration;
    }
    let db = shared
        .db
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    db.customer_tokens
        .get(token)
        .map_or(Caller::Guest, |id| Caller::Customer(*id))
}

fn decode_body(content_type: Option<&str>, body: &[u8]) -> ApiResult<Map<String, Value>> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    let Some(content_type) = content_type.map(str::trim).filter(|c| !c.is_empty()) else {
        return Err(ApiError::bad_request(messages::CONTENT_TYPE_EMPTY));
    };
    let mut parts = content_type.splitn(2, ';');
    let media_type = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    if let Some(params) = parts.next() {
        let charset = params
            .split(';')
            .filter_map(|p| p.trim().strip_prefix("charset="))
            .next();
        match charset {
            Some(c) if c.trim_matches('"').eq_ignore_ascii_case("utf-8") => {}
            Some(_) => {
                return Err(ApiError::bad_request(
                    "UTF-8 is the only supported charset.",
                ));
            }
            None => return Err(ApiError::bad_request(messages::CONTENT_TYPE_INVALID)),
        }
    }
    if media_type != "application/json" {
        return Err(ApiError::bad_request_with(
            messages::CONTENT_TYPE_UNSUPPORTED,
            crate::webapi::error::Params::List(vec![json!(media_type)]),
        ));
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        // Magento casts the decoded body to a PHP array; scalars and lists carry no named
        // parameters, so the service then reports its required parameters as missing.
        Ok(_) => Ok(Map::new()),
        Err(_) => Err(ApiError::bad_request(messages::DECODING_ERROR)),
    }
}

fn apply_override(route: &Route, params: &[(&'static str, String)], body: &mut Map<String, Value>) {
    let Some(rule) = route.body_override else {
        return;
    };
    let Some((_, value)) = params.last() else {
        return;
    };
    if value == "me" {
        return;
    }
    if body.len() != 1 {
        return;
    }
    if let Some(Value::Object(inner)) = body.get_mut(rule.wrapper) {
        let camel = crate::webapi::input::camel_case(rule.property);
        let key = if inner.contains_key(&camel) && camel != rule.property {
            camel
        } else {
            rule.property.to_string()
        };
        inner.insert(key, Value::String(value.clone()));
    }
}

/// Runs one `/rest/...` request. Also reports the path after the store code, for counters.
pub(crate) fn dispatch(shared: &Shared, raw: &RawRequest<'_>) -> (Answer, String) {
    let trimmed = raw.rest_path.trim_start_matches('/');
    let (first, remainder) = trimmed.split_once('/').unwrap_or((trimmed, ""));
    let scope = {
        let db = shared
            .db
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let decoded_first = percent_decode(first);
        if decoded_first == "all" {
            Some(StoreScope {
                id: ADMIN_STORE_ID,
                website_id: 0,
            })
        } else {
            db.stores
                .by_code(&decoded_first)
                .filter(|s| s.id != ADMIN_STORE_ID)
                .map(|s| StoreScope {
                    id: s.id,
                    website_id: s.website_id,
                })
        }
    };
    let (store, service_path) = match scope {
        Some(store) => (store, format!("/{remainder}")),
        None => {
            let db = shared
                .db
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            (
                StoreScope {
                    id: DEFAULT_STORE_ID,
                    website_id: db.stores.website_of(DEFAULT_STORE_ID),
                },
                format!("/{trimmed}"),
            )
        }
    };
    let answer = run(shared, raw, store, &service_path).unwrap_or_else(Answer::from);
    (answer, service_path)
}

fn run(
    shared: &Shared,
    raw: &RawRequest<'_>,
    store: StoreScope,
    service_path: &str,
) -> ApiResult<Answer> {
    let segments: Vec<String> = service_path
        .trim_matches('/')
        .split('/')
        .map(percent_decode)
        .collect();
    let (route, params) =
        find_route(raw.method, &segments).ok_or_else(|| ApiError::not_found(messages::NO_ROUTE))?;
    let caller = caller_of(shared, raw.authorization);
    match route.acl {
        Acl::Anonymous => {}
        Acl::Customer => {
            if !matches!(caller, Caller::Customer(_)) {
                return Err(ApiError::unauthorized("self"));
            }
        }
        Acl::Resource(resource) => {
            if caller != Caller::Integration {
                return Err(ApiError::unauthorized(resource));
            }
        }
    }
    if store.is_admin() && raw.method == "GET" {
        return Err(ApiError::bad_request(messages::GET_ON_ALL));
    }
    let mut body = if raw.method == "POST" || raw.method == "PUT" {
        decode_body(raw.content_type, raw.body)?
    } else {
        Map::new()
    };
    if raw.method == "PUT" {
        apply_override(route, &params, &mut body);
    }
    let call = Call {
        shared,
        store,
        params,
        query: query::parse(raw.query),
        body,
        caller,
        origin: raw.origin.clone(),
    };
    let mut output = (route.handler)(&call)?;
    if raw.method == "GET"
        && let Some(filter) = call.query_str("fields")
    {
        output = fields::project(output, filter);
    }
    Ok(Answer {
        status: 200,
        body: output,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(path: &str) -> Vec<String> {
        path.trim_matches('/')
            .split('/')
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn literal_routes_win() {
        let (r, _) = find_route("GET", &segs("/V1/customers/me"))
            .map_or((None, vec![]), |(r, p)| (Some(r), p));
        assert_eq!(r.map(|r| r.pattern), Some("/V1/customers/me"));
        let (r, p) = find_route("GET", &segs("/V1/customers/12"))
            .map_or((None, vec![]), |(r, p)| (Some(r), p));
        assert_eq!(r.map(|r| r.pattern), Some("/V1/customers/:customerId"));
        assert_eq!(p, vec![("customerId", "12".to_string())]);
        let (r, _) = find_route("GET", &segs("/V1/stockItems/lowStock/"))
            .map_or((None, vec![]), |(r, p)| (Some(r), p));
        assert_eq!(r.map(|r| r.pattern), Some("/V1/stockItems/lowStock"));
        assert!(find_route("PATCH", &segs("/V1/products")).is_none());
    }
}
