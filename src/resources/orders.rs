//! Sales orders (SPEC 2.6, 4.6), read-only: the list (Admin: every order; a customer: their
//! own; a guest, who has none: an empty list) and one order (Admin, or its customer).
//!
//! Each order is rendered from one record: the store's order plus what the back end works
//! out of it (`derived`, [`Backend::order_parts`]): the tax name and rate, the billing and
//! shipping addresses, each with its `address_type` and the street as one string, and the
//! comments oldest first. The list is keyed by order id: a JSON
//! object, and `<data_item_<id>>` elements in XML (DESIGN.md).
//!
//! Orders are one customer's data: never cached in a shared entry, marked `private,
//! no-store`; another customer's order is the 404 of an order that does not exist.

use axum::extract::Path;
use axum::response::Response;
use http::Uri;
use serde_json::{Map, Value, json};

use super::call::ApiCall;
use crate::app::AppState;
use crate::auth::{Principal, UserType};
use crate::backend::port::{Backend, SearchCriteria};
use crate::http::query::ListParams;
use crate::http::{ApiError, Doc, ok};
use crate::rules::mapping::View;
use crate::rules::mapping::{Field, ResourceMapping};
use crate::rules::policy::{Operation, Route};

use crate::auth::caller::Caller;
use crate::records::listing::search_criteria;
use crate::resources::parse_id;
use crate::rules::mapping::convert::scalar_text;
use crate::rules::privacy::{private, redact};

/// How the lines of an order address's street become the spec's single string: the way
/// the original stored them.
pub const ORDER_STREET_JOIN: &str = "\n";

/// `/orders`: the list.
pub async fn collection(call: ApiCall) -> Result<Response, ApiError> {
    match call.authorize(Route::Orders)? {
        Operation::Retrieve => list(call.app, call.caller, &call.uri).await,
        _ => Err(ApiError::not_implemented()),
    }
}

/// `/orders/:id`: one order.
pub async fn entity(Path(id): Path<String>, call: ApiCall) -> Result<Response, ApiError> {
    match call.authorize(Route::Order)? {
        Operation::Retrieve => get_one(call.app, call.caller, &id).await,
        _ => Err(ApiError::not_implemented()),
    }
}

fn customer_of(order: &Value) -> Option<u64> {
    crate::records::positive_id(order, "customer_id")
}

pub(crate) fn order_id(order: &Value) -> Option<u64> {
    crate::records::positive_id(order, "entity_id")
}

/// May this principal see this order? A guest never: guest orders have no owner to prove.
pub(crate) fn may_see(principal: Principal, order: &Value) -> bool {
    match principal {
        Principal::Admin => true,
        Principal::Customer(me) => customer_of(order) == Some(me),
        Principal::Guest => false,
    }
}

/// An order address as the spec shows it: its street in one string, its type named.
fn order_address(address: &Value, address_type: &str) -> Value {
    let mut address = address.clone();
    let street = match address.get("street") {
        Some(Value::Array(lines)) => Value::String(
            lines
                .iter()
                .map(scalar_text)
                .filter(|l| !l.trim().is_empty())
                .collect::<Vec<_>>()
                .join(ORDER_STREET_JOIN),
        ),
        Some(other) => other.clone(),
        None => Value::Null,
    };
    address["street"] = street;
    if address
        .get("address_type")
        .and_then(Value::as_str)
        .is_none()
    {
        address["address_type"] = json!(address_type);
    }
    address
}

/// The record an order is rendered from (see the module doc): the store's order, and
/// what the back end works out of it, with the spec's street and address types.
pub fn order_source(backend: &dyn Backend, order: Value) -> Value {
    let parts = backend.order_parts(&order);
    let addresses: Vec<Value> = parts
        .addresses
        .iter()
        .map(|(kind, address)| order_address(address, kind.as_str()))
        .collect();
    let tax = json!({ "name": parts.tax_name, "rate": parts.tax_rate });
    json!({ "order": order, "derived": { "tax": tax, "addresses": addresses, "comments": parts.comments } })
}

/// Order fields that hold lists of records, and the mapping each record is rendered with
/// (by the name its paths start with).
const RECORD_LISTS: &[(&str, &str, &str)] = &[
    ("addresses", "order_address", "address"),
    ("order_items", "order_item", "item"),
    ("order_comments", "order_comment", "comment"),
];

/// Renders an order in a view; the record lists are rendered entry by entry with the
/// caller's `list` view of their own mapping (an absent list is an empty one).
fn render(app: &AppState, user: UserType, fields: &[Field], source: &Value) -> Map<String, Value> {
    let mut out = ResourceMapping::render(fields, source, "");
    for field in fields {
        let Some((_, resource, root)) = RECORD_LISTS.iter().find(|(name, ..)| *name == field.name)
        else {
            continue;
        };
        let view = app.mappings.get(resource).view(user, View::List);
        // A customer is shown only the comments marked for the storefront (the original
        // showed every one, its staff's notes included: not copied).
        let shown = |entry: &&Value| {
            *resource != "order_comment"
                || user == UserType::Admin
                || entry
                    .get("is_visible_on_front")
                    .and_then(crate::rules::mapping::convert::as_i64)
                    .is_some_and(|v| v != 0)
        };
        let list = match field.source.get(source) {
            Some(Value::Array(entries)) => entries
                .iter()
                .filter(shown)
                .map(|entry| {
                    let record = json!({ *root: entry });
                    Value::Object(ResourceMapping::render(&view, &record, ""))
                })
                .collect(),
            _ => Vec::new(),
        };
        out.insert(field.name.clone(), Value::Array(list));
    }
    out
}

async fn list(app: AppState, caller: Caller, uri: &Uri) -> Result<Response, ApiError> {
    // The original had no guest privilege on orders at all.
    if caller.principal == Principal::Guest
        && !crate::context::profile::Profile::current().guests_may_list_orders()
    {
        return Err(ApiError::access_denied());
    }
    let params = ListParams::parse(uri.query())?;
    // A guest has no orders (DESIGN.md): nothing to ask Magento.
    if caller.principal == Principal::Guest {
        return Ok(private(ok(
            caller.format,
            &Doc::keyed_elements(Value::Object(Map::new())),
        )));
    }
    let user = caller.user_type();
    let fields = app.mappings.get("order").view(user, View::List);
    let mut criteria = search_criteria(&fields, &params, SearchCriteria::new())?;
    if let Principal::Customer(me) = caller.principal {
        criteria = criteria.filter("customer_id", me.to_string(), "eq");
    }
    let criteria = criteria.page(params.limit, params.page);
    let result = app.backend.search_orders(&criteria).await.map_err(redact)?;
    let items = if params.offset() >= result.total_count {
        Vec::new()
    } else {
        result.items
    };
    let mut out = Map::new();
    for order in items {
        // The customer filter is Magento's to apply; this makes sure of it.
        if !may_see(caller.principal, &order) {
            continue;
        }
        let Some(id) = order_id(&order) else {
            continue;
        };
        out.insert(
            id.to_string(),
            Value::Object(render(
                &app,
                user,
                &fields,
                &order_source(&*app.backend, order),
            )),
        );
    }
    Ok(private(ok(
        caller.format,
        &Doc::keyed_elements(Value::Object(out)),
    )))
}

async fn get_one(app: AppState, caller: Caller, id: &str) -> Result<Response, ApiError> {
    let id = parse_id(id)?;
    let order = app.backend.order(id).await.map_err(redact)?;
    if !may_see(caller.principal, &order) || order_id(&order) != Some(id) {
        return Err(ApiError::not_found());
    }
    let user = caller.user_type();
    let fields = app.mappings.get("order").view(user, View::Single);
    let record = render(&app, user, &fields, &order_source(&*app.backend, order));
    Ok(private(ok(caller.format, &Doc::new(Value::Object(record)))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_addresses_show_one_street_and_their_type() {
        let billing = order_address(&json!({"street": ["a", " ", "b"], "city": "X"}), "billing");
        assert_eq!(billing["street"], "a\nb");
        assert_eq!(billing["address_type"], "billing");
        let kept = order_address(
            &json!({"street": "c\nd", "address_type": "shipping"}),
            "billing",
        );
        assert_eq!(
            (kept["street"].as_str(), kept["address_type"].as_str()),
            (Some("c\nd"), Some("shipping"))
        );
    }
}
