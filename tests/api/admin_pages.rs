//! The operator's pages outside the API: `/admin/oauth_authorize` in the original docs'
//! spelling (`/admin/oAuth_authorize`), and an HTML 404 for a browser on a wrong `/admin/...`.

use crate::helpers::*;

const BROWSER: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

async fn page(gw: &Gateway, path: &str, accept: &str) -> Reply {
    gw.send_raw(
        gw.http
            .get(format!(
                "{}{path}",
                gw.running.base_url().trim_end_matches("/api/rest")
            ))
            .header("Accept", accept),
    )
    .await
}

#[tokio::test]
async fn the_admin_authorize_page_answers_in_any_case() {
    let gw = Gateway::start().await;
    let canonical = page(&gw, "/admin/oauth_authorize?oauth_token=unknown", BROWSER).await;
    assert!(
        canonical
            .header("content-type")
            .unwrap()
            .starts_with("text/html"),
        "{}",
        canonical.body
    );
    for spelling in [
        "/admin/oAuth_authorize?oauth_token=unknown",
        "/Admin/OAUTH_AUTHORIZE?oauth_token=unknown",
    ] {
        let r = page(&gw, spelling, BROWSER).await;
        assert_eq!(r.status, canonical.status, "{spelling}: {}", r.body);
        assert_eq!(r.body, canonical.body, "{spelling}");
    }
    let simple = page(
        &gw,
        "/admin/oauth_authorize/simple?oauth_token=unknown",
        BROWSER,
    )
    .await;
    let r = page(
        &gw,
        "/admin/oAuth_authorize/Simple?oauth_token=unknown",
        BROWSER,
    )
    .await;
    assert_eq!((r.status, r.body), (simple.status, simple.body));

    // The request metrics name the route that served each spelling, not `unmatched`.
    let metrics = gw.metrics().await;
    let count = |route: &str| {
        let prefix = format!(
            "storegate_http_request_duration_seconds_count{{route=\"{route}\",method=\"GET\",status=\"400\""
        );
        metrics
            .lines()
            .find(|l| l.starts_with(&prefix))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|n| n.parse::<f64>().ok())
    };
    assert_eq!(count("/admin/oauth_authorize"), Some(3.0), "{metrics}");
    assert_eq!(
        count("/admin/oauth_authorize/simple"),
        Some(2.0),
        "{metrics}"
    );
    assert!(!metrics.contains("route=\"unmatched\""), "{metrics}");
}

#[tokio::test]
async fn a_browser_on_a_wrong_admin_page_gets_html_and_apps_the_apis_404() {
    let gw = Gateway::start().await;
    let r = page(&gw, "/admin/oauth_authorise", BROWSER).await;
    assert_eq!(r.status, 404);
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
    r.assert_contains("<h1>Page not found</h1>");
    let r = page(&gw, "/admin/oauth_authorise", "application/json").await;
    assert_eq!(r.status, 404);
    assert_eq!(r.messages(), vec!["Request does not match any route."]);
    // Outside /admin, a browser still gets the API's answer: nothing there is a page.
    let r = page(&gw, "/elsewhere", BROWSER).await;
    assert_eq!(r.status, 404);
    assert!(r.body.contains("Request does not match any route."));
    assert!(!r.header("content-type").unwrap().starts_with("text/html"));
}
