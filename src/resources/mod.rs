//! The spec's resources, one module each. A resource orchestrates: it parses and checks
//! input, applies the policy, calls the upstream (through the cache where it may), maps the
//! records to the caller's view and answers. The other modules do not know the resources.

pub mod addresses;
pub mod auth_token;
pub mod cache_purge;
pub mod customers;
pub mod directory;
pub mod images;
pub mod listing;
pub mod orders;
pub mod products;
pub mod stock_items;
pub mod stores;
pub mod support;
pub mod upstream_errors;

use axum::routing::any;

use crate::app::AppState;
use crate::route_list::Listed;

/// Every route under `/api/rest`. Methods are dispatched inside the handlers, so that the
/// policy (403) is checked before "method not allowed" (405), as the spec wants. Each one
/// is in `docs/openapi.json` (a test fails otherwise).
pub fn routes() -> Listed<AppState> {
    Listed::new()
        .route("/auth/token", any(auth_token::issue))
        .route("/cache/purge", any(cache_purge::purge))
        .route("/products", any(products::collection))
        .route("/products/category/{category_id}", any(products::category))
        .route("/products/{id}", any(products::entity))
        .route("/customers", any(customers::collection))
        .route("/customers/{id}", any(customers::entity))
        .route("/customers/{id}/addresses", any(addresses::collection))
        .route("/customers/addresses/{id}", any(addresses::entity))
        .route("/orders", any(orders::collection))
        .route("/orders/{id}", any(orders::entity))
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
