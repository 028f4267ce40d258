//! The spec's resources, one module each, and the gateway's own endpoints ([`gateway`]).
//! A resource orchestrates: it parses and checks input, applies the policy, calls the
//! upstream (through the cache where it may), maps the records to the caller's view and
//! answers. The other modules do not know the resources.

mod address_calls;
mod address_fields;
pub mod addresses;
pub mod api_docs;
pub mod call;
pub mod customer_save;
pub mod customer_sign_in;
pub mod customers;
pub mod gateway;
pub mod images;
pub mod media_proxy;
pub mod oauth;
pub mod ops;
pub mod order_parts;
pub mod orders;
mod product_category;
pub mod product_links;
pub mod product_routes;
pub mod product_store;
mod product_writes;
pub mod products;
pub mod stock_items;

use axum::routing::any;

use crate::app::AppState;
use crate::auth::caller::Caller;
use crate::http::ApiError;
use crate::http::route_list::Listed;
use crate::rules::mapping::{Field, ResourceMapping};
use serde_json::{Map, Value};

/// Every route under `/api/rest`. Methods are dispatched inside the handlers, so that the
/// policy (403) is checked before "method not allowed" (405), as the spec wants. Each one
/// is in `docs/openapi.json` (a test fails otherwise).
pub fn routes() -> Listed<AppState> {
    Listed::new()
        .route("/auth/token", any(gateway::auth_token::issue))
        .route("/cache/purge", any(gateway::cache_purge::purge))
        .route("/oauth/tokens", any(oauth::tokens::collection))
        .route("/oauth/tokens/{id}", any(oauth::tokens::entity))
        .route("/shadow", any(gateway::shadow::page))
        .route("/shadow/report", any(gateway::shadow::report))
        .route("/products", any(product_routes::collection))
        .route(
            "/products/category/{category_id}",
            any(product_routes::category),
        )
        .route(
            "/products/store/{store}",
            any(product_routes::store_collection),
        )
        .route(
            "/products/category/{category_id}/store/{store}",
            any(product_routes::store_category),
        )
        .route(
            "/products/store/{store}/category/{category_id}",
            any(product_routes::store_category),
        )
        .route("/products/{id}", any(product_routes::entity))
        .route("/products/{id}/store/{store}", any(product_store::entity))
        .route("/products/{id}/categories", any(product_links::categories))
        .route(
            "/products/{id}/categories/{category_id}",
            any(product_links::category),
        )
        .route("/products/{id}/websites", any(product_links::websites))
        .route(
            "/products/{id}/websites/{website_id}",
            any(product_links::website),
        )
        .route("/customers", any(customers::collection))
        .route("/customers/{id}", any(customers::entity))
        .route("/customers/{id}/addresses", any(addresses::collection))
        .route("/customers/addresses/{id}", any(addresses::entity))
        .route("/orders", any(orders::collection))
        .route("/orders/{id}", any(orders::entity))
        .route("/orders/{id}/items", any(order_parts::items))
        .route("/orders/{id}/addresses", any(order_parts::addresses))
        .route(
            "/orders/{id}/addresses/{address_type}",
            any(order_parts::address),
        )
        .route("/orders/{id}/comments", any(order_parts::comments))
        .route("/orders/comments/{id}", any(order_parts::comment))
        .route("/stockitems", any(stock_items::collection))
        .route("/stockitems/{id}", any(stock_items::entity))
        .route("/products/{id}/images", any(images::collection))
        .route(
            "/products/{id}/images/store/{store_id}",
            any(images::store_collection),
        )
        .route("/products/{id}/images/{image_id}", any(images::entity))
        .route(
            "/products/{id}/images/{image_id}/store/{store_id}",
            any(images::store_entity),
        )
}

/// Parses a path id the way the original did: anything that is not a positive integer
/// names no resource.
pub fn parse_id(text: &str) -> Result<u64, ApiError> {
    text.parse::<u64>()
        .ok()
        .filter(|&id| id > 0)
        .ok_or_else(ApiError::not_found)
}

/// What an update writes through the mapping `fields` into `root`, once the checks before
/// it have had their say (`errors`): every message at once (400), and the original's
/// `The request data is invalid.` for an update with nothing its caller may write. The
/// names written, when all is well.
pub fn written_update(
    fields: &[Field],
    input: &Map<String, Value>,
    root: &mut Value,
    mut errors: Vec<String>,
) -> Result<Vec<String>, ApiError> {
    let written = match ResourceMapping::write(fields, input, root) {
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
    Ok(written)
}

/// A customer's id from the path, when the caller may see that customer's data: a
/// customer reaching for another's gets the 404 of one that does not exist, before
/// anything is asked of the store.
pub fn owned_id(caller: Caller, text: &str) -> Result<u64, ApiError> {
    let id = parse_id(text)?;
    if !crate::rules::privacy::owns(caller.principal, id) {
        return Err(ApiError::not_found());
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        assert_eq!(parse_id("12").unwrap(), 12);
        for bad in ["0", "-1", "abc", "1.5", "", "99999999999999999999999"] {
            assert_eq!(parse_id(bad).unwrap_err().status().as_u16(), 404);
        }
    }
}
