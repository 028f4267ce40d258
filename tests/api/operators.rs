//! What operators and app developers rely on around the API: CORS, W3C trace context into
//! Magento, build and process metrics, and the sandbox's media through the gateway's public
//! address.

use std::time::Duration;

use storegate::config::CorsOrigins;

use crate::common::http::sent;
use crate::helpers::*;

async fn catalog(gw: &Gateway) {
    mount_product_1(&gw.upstream).await;
    mount_render(&gw.upstream).await;
}

/// `GET path` as a guest, from the app's origin.
async fn from_app(gw: &Gateway, path: &str) -> Reply {
    gw.send_header("GET", path, &Who::Guest, "Origin", "https://app.example")
        .await
}

#[tokio::test]
async fn cors_is_off_by_default() {
    let gw = Gateway::start().await;
    let preflight = gw
        .send(
            gw.request("OPTIONS", "/products", &Who::Guest)
                .header("Origin", "https://app.example")
                .header("Access-Control-Request-Method", "GET"),
        )
        .await;
    assert_eq!(preflight.status, 400);
    assert_eq!(preflight.header("access-control-allow-origin"), None);
}

#[tokio::test]
async fn cors_answers_the_configured_origins_only() {
    let gw = Gateway::start_with(|c| {
        c.cors_origins = CorsOrigins::List(vec!["https://app.example".into()]);
        c.cache_ttl = Duration::ZERO;
    })
    .await;
    catalog(&gw).await;
    let preflight = gw
        .send(
            gw.request("OPTIONS", "/products/1", &Who::Guest)
                .header("Origin", "https://app.example")
                .header("Access-Control-Request-Method", "PUT")
                .header(
                    "Access-Control-Request-Headers",
                    "authorization, content-type",
                ),
        )
        .await;
    assert_eq!(preflight.status, 200, "{}", preflight.body);
    assert_eq!(
        preflight.header("access-control-allow-origin"),
        Some("https://app.example")
    );
    let methods = preflight.header("access-control-allow-methods").unwrap();
    assert!(
        methods.contains("PUT") && methods.contains("DELETE"),
        "{methods}"
    );
    let headers = preflight
        .header("access-control-allow-headers")
        .unwrap()
        .to_ascii_lowercase();
    assert!(headers.contains("authorization"), "{headers}");
    assert_eq!(preflight.header("access-control-allow-credentials"), None);

    let read = from_app(&gw, "/products/1").await;
    assert_eq!(read.status, 200);
    assert_eq!(
        read.header("access-control-allow-origin"),
        Some("https://app.example")
    );
    let exposed = read
        .header("access-control-expose-headers")
        .unwrap()
        .to_ascii_lowercase();
    assert!(
        exposed.contains("location") && exposed.contains("etag"),
        "{exposed}"
    );
    // Errors carry the headers too, or a browser hides the error from the app.
    let error = from_app(&gw, "/stockitems").await;
    assert_eq!(error.status, 403);
    assert_eq!(
        error.header("access-control-allow-origin"),
        Some("https://app.example")
    );

    let other = gw
        .send(
            gw.request("GET", "/products/1", &Who::Guest)
                .header("Origin", "https://evil.example"),
        )
        .await;
    assert_eq!(other.header("access-control-allow-origin"), None);
}

#[tokio::test]
async fn traceparent_continues_into_magento() {
    let gw = Gateway::start_with(|c| c.cache_ttl = Duration::ZERO).await;
    catalog(&gw).await;
    let incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let r = gw
        .send(
            gw.request("GET", "/products/1", &Who::Admin)
                .header("traceparent", incoming)
                .header("tracestate", "vendor=abc"),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let calls = gw.upstream_calls("GET", ".").await;
    assert!(!calls.is_empty());
    let mut parents = std::collections::BTreeSet::new();
    for call in &calls {
        let sent = call.headers["traceparent"].to_str().unwrap();
        let parts: Vec<&str> = sent.split('-').collect();
        assert_eq!(parts.len(), 4, "{sent}");
        assert_eq!(
            (parts[0], parts[1], parts[3]),
            ("00", "4bf92f3577b34da6a3ce929d0e0e4736", "01")
        );
        // The gateway is a hop of its own: a parent id of its own.
        assert_ne!(parts[2], "00f067aa0ba902b7");
        assert_eq!(parts[2].len(), 16);
        parents.insert(parts[2].to_owned());
        assert_eq!(call.headers["tracestate"], "vendor=abc");
    }
    // One hop per request: every call of this request has the same parent.
    assert_eq!(parents.len(), 1, "{parents:?}");

    // Without one (or with a broken one) a new trace starts, and is sent on.
    gw.upstream.reset().await;
    catalog(&gw).await;
    let r = gw
        .send_header("GET", "/products/1", &Who::Admin, "traceparent", "garbage")
        .await;
    assert_eq!(r.status, 200);
    for call in gw.upstream_calls("GET", ".").await {
        let sent = call.headers["traceparent"].to_str().unwrap().to_owned();
        assert!(sent.starts_with("00-") && sent.len() == 55, "{sent}");
        assert!(!sent.contains("garbage"));
        assert!(call.headers.get("tracestate").is_none());
    }
}

#[tokio::test]
async fn metrics_show_the_build_and_the_process() {
    let gw = Gateway::start().await;
    let text = gw
        .send_raw(gw.http.get(format!("http://{}/metrics", gw.running.addr)))
        .await
        .body;
    let info = text
        .lines()
        .find(|l| l.starts_with("storegate_build_info{"))
        .unwrap_or_else(|| panic!("no build info:\n{text}"));
    assert!(
        info.contains(&format!("version=\"{}\"", env!("CARGO_PKG_VERSION")))
            && info.contains("commit=\"")
            && info.ends_with(" 1"),
        "{info}"
    );
    if cfg!(target_os = "linux") {
        for series in [
            "storegate_process_cpu_seconds_total ",
            "storegate_process_resident_memory_bytes ",
            "storegate_process_open_fds ",
            "storegate_process_threads ",
            "storegate_process_start_time_seconds ",
        ] {
            let line = text
                .lines()
                .find(|l| l.starts_with(series))
                .unwrap_or_else(|| panic!("no {series}in:\n{text}"));
            let value: f64 = line[series.len()..].trim().parse().unwrap();
            assert!(value >= 0.0, "{line}");
        }
        let rss = text
            .lines()
            .find_map(|l| l.strip_prefix("storegate_process_resident_memory_bytes "))
            .unwrap();
        assert!(rss.trim().parse::<f64>().unwrap() > 1_000_000.0, "{rss}");
    }
    // The upstream's state appears once a readiness probe has seen it.
    assert!(!text.contains("storegate_upstream_up"), "{text}");
}

#[tokio::test]
async fn sandbox_media_is_served_through_the_public_url() {
    storegate::backend::transport::install_crypto();
    let sandbox =
        crate::common::gateway::start_sandbox(storegate_sandbox::SandboxOptions::default()).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // What a phone on the network would use: another name for this machine.
    let public = format!("http://localhost:{}", addr.port());
    sandbox.set_public_origin(&public);
    let config = storegate::Config {
        sandbox_media: Some(sandbox.base_url()),
        public_url: Some(public.clone()),
        ..test_config()
    };
    let parts = crate::common::gateway::parts(
        &config,
        &crate::common::gateway::Setup {
            upstream_url: &sandbox.base_url(),
            upstream_token: sandbox.token(),
            admin_key: ADMIN_KEY,
            token_secret: b"media-test",
        },
    );
    let gateway = storegate::start(config, parts, listener, None)
        .await
        .unwrap();
    let http = reqwest::Client::new();

    let product: serde_json::Value = crate::common::http::json_of(
        http.get(format!("{}/products/1", gateway.base_url()))
            .header("Accept", "application/json"),
    )
    .await;
    let image_url = product["image_url"].as_str().unwrap();
    assert!(
        image_url.starts_with(&format!("{public}/media/")),
        "{image_url}"
    );
    let images: serde_json::Value = crate::common::http::json_of(
        http.get(format!("{}/products/1/images", gateway.base_url()))
            .header("Accept", "application/json"),
    )
    .await;
    let url = images[0]["url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("{public}/media/catalog/product/")),
        "{url}"
    );
    for url in [image_url, url] {
        let file = http.get(url).send().await.unwrap();
        assert_eq!(file.status(), 200, "{url}");
        let content_type = file.headers()["content-type"].to_str().unwrap().to_owned();
        assert!(content_type.starts_with("image/"), "{content_type}");
        assert!(!file.bytes().await.unwrap().is_empty());
    }
    // Only files, nothing else of the sandbox.
    for bad in [
        "/media/../rest/V1/products",
        "/media/catalog//x",
        "/media/nothing.jpg",
    ] {
        let r = sent(http.get(format!("http://{addr}{bad}"))).await;
        assert_eq!(r.status(), 404, "{bad}");
    }
    gateway.stop().await;
    sandbox.shutdown().await;
}
