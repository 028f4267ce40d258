//! The answer for a path no route serves, outside `/api/rest` (the API's own unknown routes
//! are its 404 `Request does not match any route.`).
//!
//! Two things differ from the API's answer, because people and the original's docs reach
//! these paths, not apps:
//! - `/admin/oauth_authorize` (and its `/simple`, `/confirm`, `/reject`) is matched without
//!   regard to case: the Magento 1 docs and their PHP example spell it
//!   `/admin/oAuth_authorize` (which the original on Linux answered with a 404:
//!   docs/decisions/legacy-clients.md). The request is served by the canonical route, with
//!   its path rewritten, so there is one handler and one set of form actions, and its
//!   answer names that route for the access log and metrics ([`ServedAs`]).
//! - A browser (an `Accept` naming `text/html`) on an unknown `/admin/...` page gets an HTML
//!   404 page: the admin pages are pages, and an XML error tree in a browser tab tells an
//!   operator nothing.
//!
//! Everything else gets the API's 404 in the negotiated format.

use axum::extract::Request;
use axum::response::Response;
use http::{StatusCode, Uri};
use tower::ServiceExt as _;

use crate::app::AppState;
use crate::http::ApiError;
use crate::http::format::Negotiated;
use crate::observe::telemetry::ServedAs;
use crate::resources::oauth::{endpoints, pages};

/// The actions under the admin authorize page, with their canonical paths (which are also
/// the route templates the access log and metrics name).
const ADMIN_ACTIONS: [(&str, &str); 3] = [
    ("simple", "/admin/oauth_authorize/simple"),
    ("confirm", "/admin/oauth_authorize/confirm"),
    ("reject", "/admin/oauth_authorize/reject"),
];

/// The canonical path of a spelling of the admin authorize pages in another case
/// (`/admin/oAuth_authorize/Simple` is `/admin/oauth_authorize/simple`); `None` for any
/// other path.
pub fn admin_authorize_alias(path: &str) -> Option<&'static str> {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let canonical = match segments.as_slice() {
        [admin, page] if is(admin, "admin") && is(page, "oauth_authorize") => {
            "/admin/oauth_authorize"
        }
        [admin, page, action] if is(admin, "admin") && is(page, "oauth_authorize") => {
            ADMIN_ACTIONS.iter().find(|(a, _)| is(action, a))?.1
        }
        _ => return None,
    };
    (canonical != path).then_some(canonical)
}

fn is(segment: &str, name: &str) -> bool {
    segment.eq_ignore_ascii_case(name)
}

pub use crate::http::format::wants_html;

/// The fallback of the front router.
pub async fn outside_api(app: AppState, mut request: Request) -> Response {
    let path = request.uri().path().to_owned();
    if let Some(canonical) = admin_authorize_alias(&path) {
        let uri = match request.uri().query() {
            Some(query) => format!("{canonical}?{query}"),
            None => canonical.to_owned(),
        };
        if let Ok(uri) = uri.parse::<Uri>() {
            *request.uri_mut() = uri;
            let (router, _) = endpoints::routes(app).into_parts();
            let mut response = match router.oneshot(request).await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            // Served by the canonical route: the access line and metrics name it.
            response.extensions_mut().insert(ServedAs(canonical));
            return response;
        }
    }
    let admin_page = path
        .trim_start_matches('/')
        .split('/')
        .next()
        .is_some_and(|first| is(first, "admin"));
    if admin_page && wants_html(request.headers()) {
        return pages::respond(
            StatusCode::NOT_FOUND,
            pages::message(
                false,
                "Page not found",
                "There is no page at this address. The sign-in page for operators is /admin/oauth_authorize, reached from the application that asked for access.",
            ),
        );
    }
    let format = match request.extensions().get::<Negotiated>() {
        Some(Negotiated(negotiated)) => negotiated.clone(),
        None => crate::http::format::negotiate_response(request.headers()),
    }
    .unwrap_or(crate::http::Format::Xml);
    crate::http::middleware::finish(
        format,
        axum::response::IntoResponse::into_response(ApiError::route_not_found()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_admin_page_in_any_case() {
        assert_eq!(
            admin_authorize_alias("/admin/oAuth_authorize"),
            Some("/admin/oauth_authorize")
        );
        assert_eq!(
            admin_authorize_alias("/Admin/OAUTH_AUTHORIZE/Simple"),
            Some("/admin/oauth_authorize/simple")
        );
        // Already canonical (the router serves it), or another page.
        assert_eq!(admin_authorize_alias("/admin/oauth_authorize"), None);
        assert_eq!(admin_authorize_alias("/admin/oAuth_authorize/other"), None);
        assert_eq!(admin_authorize_alias("/admin/dashboard"), None);
        assert_eq!(admin_authorize_alias("/oauth/authorize"), None);
    }

    #[test]
    fn browsers_ask_for_html() {
        use http::HeaderMap;
        use http::header::ACCEPT;
        let with = |accept: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(ACCEPT, accept.parse().unwrap());
            wants_html(&headers)
        };
        assert!(with(
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
        ));
        assert!(!with("application/json"));
        assert!(!with("*/*"));
        assert!(!with("text/html;q=0"));
        assert!(!wants_html(&HeaderMap::new()));
    }
}
