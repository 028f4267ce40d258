//! Helpers shared by several test binaries, written once here rather than in each binary.
//! A binary includes the folder with `#[allow(dead_code)] #[path = "../common/mod.rs"] mod
//! common;` (from `tests/`: `#[allow(dead_code)] mod common;`) and uses what it needs:
//!
//! - `http`: [`http::Reply`] (status, headers, body; JSON, error trees and their assertions,
//!   a form key, a `Location` and the id it names), the plain calls (`call`, `sent`,
//!   `json_of`, `text_of`, `get_json`), the `/metrics` page and one series of it, and a
//!   browser's cookies kept by hand;
//! - `gateway`: an embedded gateway and the sandbox started on free loopback ports;
//! - `files`: fresh temporary folders, a gateway's OAuth data folder, a folder removed when
//!   dropped ([`files::DataDir`]);
//! - `process`: the `storegate` binary with a clean environment, free ports, a child's output;
//!   servers a test starts (installed or skipped loudly, hung, resumed, killed) and tools it
//!   runs to success;
//! - `binary`: the binary as a child stopped however the test ends, its lines on a channel;
//! - `spec`: what SPEC.md fixes about answers that several binaries check;
//! - `oauth_sign`: an app and its token registered in the OAuth store, and calls signed for it
//!   (with a nonce of the test's when it needs one);
//! - `openapi`, `api_reference`: Magento 2.4.5's schema and the gateway's own OpenAPI document.

pub mod api_reference;
pub mod binary;
pub mod files;
pub mod gateway;
pub mod http;
pub mod oauth_sign;
pub mod openapi;
pub mod process;
pub mod spec;
