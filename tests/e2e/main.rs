//! End-to-end flows: the gateway against the embedded Magento 2 sandbox, over HTTP, with
//! state that changes. Every sandbox answer the gateway relied on is checked against
//! Magento 2.4.5's generated schema.

#[allow(dead_code)]
#[path = "../common/mod.rs"]
mod common;
mod harness;

mod customers;
mod hostile_skus;
mod openapi;
mod products;
mod recording;
mod replay_ageing;
mod replay_bench;
mod replay_support;
mod round_trips;
mod schema;
mod stock_and_images;
