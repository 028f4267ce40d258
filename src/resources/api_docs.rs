//! The API reference, served by the gateway itself: `GET /api/rest/openapi.json` (the
//! OpenAPI 3.1 document of every route, method, user type, body, field, status and error
//! message, `docs/openapi.json` in the repository) and `GET /api/rest/docs`, a page that
//! renders it in a browser without fetching anything from elsewhere (`docs/api.html`).
//!
//! The document is not derived from the Rust code (utoipa and the like): the handlers
//! dispatch methods themselves (the policy's 403 comes before any 405), bodies are shaped
//! by the mapping files at run time, and XML has no Rust types to derive from, so a derive
//! would describe less than the file does. It is written by `tools/openapi/generate.py`:
//! the operations, user types, statuses and messages by hand there, the field schemas from
//! the default mappings. What keeps it true is `tests/api/openapi.rs` and
//! `tests/e2e/openapi.rs`: every served route is documented and every documented one
//! served, every message the code can send is in it, real answers validate against it, and
//! the file is the script's output. Both files are built into the binary, so the reference
//! always matches the build.

use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::header::{CACHE_CONTROL, CONTENT_TYPE};

use crate::http::route_list::Listed;

/// The OpenAPI document, as committed.
pub const OPENAPI_JSON: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/openapi.json"));
const PAGE: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/api.html"));

pub fn routes() -> Listed {
    Listed::new()
        .route("/api/rest/openapi.json", get(openapi))
        .route("/api/rest/docs", get(page))
}

async fn openapi() -> Response {
    (
        [
            (CONTENT_TYPE, "application/json"),
            (CACHE_CONTROL, "public, max-age=300"),
        ],
        OPENAPI_JSON,
    )
        .into_response()
}

async fn page() -> Response {
    (
        [
            (CONTENT_TYPE, "text/html; charset=utf-8"),
            (CACHE_CONTROL, "public, max-age=300"),
            // The page runs its own inline script and fetches the document from this origin;
            // nothing else.
            (
                http::header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'",
            ),
        ],
        PAGE,
    )
        .into_response()
}
