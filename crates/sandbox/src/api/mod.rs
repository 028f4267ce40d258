//! The Magento REST endpoints: [`dispatch`] turns an HTTP request into a service call and
//! routes it to a handler; the other modules are the handlers, one per group of routes.

pub(crate) mod attributes;
pub(crate) mod call;
pub(crate) mod categories;
pub(crate) mod customers;
pub(crate) mod directory;
pub(crate) mod dispatch;
pub(crate) mod links;
pub(crate) mod media;
pub(crate) mod orders;
pub(crate) mod products;
pub(crate) mod render_info;
pub(crate) mod stock;
pub(crate) mod store;
pub(crate) mod token;
