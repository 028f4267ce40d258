//! The spec's resources, one module each, and the gateway's own endpoints ([`gateway`]).
//! A resource orchestrates: it parses and checks input, applies the policy, calls the
//! upstream (through the cache where it may), maps the records to the caller's view and
//! answers. The other modules do not know the resources.

mod address_calls;
mod address_fields;
pub mod addresses;
pub mod api_docs;
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

use axum::body::Body;
use axum::routing::any;
use http::HeaderMap;
use serde_json::{Map, Value};

use crate::app::AppState;
use crate::http::body::decode_record;
use crate::http::route_list::Listed;
use crate::http::{ApiError, Format};

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

/// The record an update sends: XML unless its `Content-Type` says otherwise, within the body
/// limit; a list where one record belongs is the original's `Request data is invalid.`.
pub async fn update_record(
    app: &AppState,
    headers: &HeaderMap,
    body: Body,
) -> Result<Map<String, Value>, ApiError> {
    let limit = app.config.body_limit;
    decode_record(
        headers,
        body,
        Format::Xml,
        limit,
        ApiError::request_data_invalid,
    )
    .await
}

/// The record a create sends into a collection: XML unless its `Content-Type` says
/// otherwise, within the body limit; a list (several records at once) is the original's
/// 501, which it never implemented for these collections.
pub async fn created_record(
    app: &AppState,
    headers: &HeaderMap,
    body: Body,
) -> Result<Map<String, Value>, ApiError> {
    let limit = app.config.body_limit;
    decode_record(headers, body, Format::Xml, limit, ApiError::not_implemented).await
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
