//! Black-box tests of the gateway through HTTP, against a `wiremock` Magento 2 serving the
//! recorded responses of `fixtures/magento2/` (plus faults). One test binary, many modules,
//! so the crate links once.

#[allow(dead_code)]
#[path = "../common/mod.rs"]
mod common;
mod helpers;

mod addresses;
mod admin_pages;
mod auth;
mod cache;
mod cassettes;
mod compression;
mod customers;
mod first_hour;
mod formats;
mod hostile;
mod images;
mod legacy_routes;
mod mapping;
mod openapi;
mod operators;
mod orders;
mod original_fields;
mod policy;
mod privacy;
mod products;
mod profile;
mod purge;
mod rate_limits;
mod remembering;
mod resilience;
mod sandboxed;
mod signin_limits;
mod stock_items;
mod store_views;
mod telemetry;
mod tier_prices;
mod unknown_outcome;
mod verified_writes;
mod workers;
