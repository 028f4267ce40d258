//! The dual run's report (`crate::shadow`, docs/dual-run.md), Admin only:
//!
//! - `GET /api/rest/shadow/report`: the counts, in JSON or XML like every route;
//! - `DELETE /api/rest/shadow/report`: starts a new count (the fleet's, with Redis);
//! - `GET /api/rest/shadow`: the same report as a page for a person. The admin key is typed
//!   on the page and sent by its script in an `Authorization` header, never in the URL.
//!   The page itself holds no data, so a browser without a key is given it (to type the
//!   key in); any other caller that is not an admin gets what every admin route gives:
//!   401 for a credential that is not good, 403 for the others.
//!
//! Without a candidate (`STOREGATE_SHADOW_UPSTREAM_URL` unset) there is no report: 404.

use axum::response::{IntoResponse, Response};
use http::Method;
use http::header::{CONTENT_TYPE, HeaderValue};

use crate::auth::Principal;
use crate::http::{ApiError, empty_ok};
use crate::resources::call::{ApiCall, no_store};

/// The page: markup, style and script in one file, built into the binary.
const PAGE: &str = include_str!("shadow_page.html");

fn no_dual_run() -> ApiError {
    ApiError::not_found().with_cause("no dual run: STOREGATE_SHADOW_UPSTREAM_URL is not set")
}

/// `GET` and `DELETE /api/rest/shadow/report`.
pub async fn report(call: ApiCall) -> Result<Response, ApiError> {
    call.admin_only()?;
    if !matches!(call.method, Method::GET | Method::HEAD | Method::DELETE) {
        return Err(ApiError::not_supported());
    }
    let shadow = call.app.shadow.as_ref().ok_or_else(no_dual_run)?;
    match call.method {
        Method::GET | Method::HEAD => {
            let report = shadow.report().await;
            Ok(no_store(call.ok(report)))
        }
        Method::DELETE => {
            shadow.reset().await?;
            tracing::info!("shadow report: a new count begins");
            Ok(empty_ok())
        }
        _ => Err(ApiError::not_supported()),
    }
}

/// `GET /api/rest/shadow`: the page.
pub async fn page(call: ApiCall) -> Result<Response, ApiError> {
    let browser = crate::http::format::wants_html(&call.headers);
    match call.caller.principal {
        Principal::Admin => {}
        Principal::Guest if browser => {}
        _ => return Err(ApiError::access_denied()),
    }
    if call.method != Method::GET && call.method != Method::HEAD {
        return Err(ApiError::not_supported());
    }
    if call.app.shadow.is_none() {
        return Err(no_dual_run());
    }
    let mut response = no_store(PAGE.into_response());
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    // The page fetches its own origin only, and no other site may frame it.
    headers.insert(
        http::header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
             connect-src 'self'; frame-ancestors 'none'; form-action 'none'",
        ),
    );
    headers.insert(
        http::header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    Ok(response)
}
