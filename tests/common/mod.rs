//! Helpers shared by several test binaries. Each binary includes this folder with
//! `#[allow(dead_code)] #[path = "../common/mod.rs"] mod common;` (or `mod common;` from
//! `tests/`), and uses the part it needs.

pub mod api_reference;
pub mod files;
pub mod gateway;
pub mod http;
pub mod openapi;
pub mod process;
pub mod spec;
