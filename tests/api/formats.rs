//! Formats, statuses and errors of DESIGN.md §1 that hold for every resource.

use serde_json::json;

use crate::helpers::*;

/// The answers of a recording against the sandbox (`fixtures/cassettes/api-formats/`),
/// on the fake Magento.
async fn gateway() -> Gateway {
    let gw = Gateway::start().await;
    crate::cassettes::mount(&gw.upstream, "api-formats").await;
    gw
}

#[tokio::test]
async fn accept_picks_the_format() {
    let gw = gateway().await;
    for (accept, expected) in [
        (None, "application/xml; charset=utf-8"),
        (Some("*/*"), "application/xml; charset=utf-8"),
        (Some("application/json"), "application/json; charset=utf-8"),
        (Some("application/*"), "application/json; charset=utf-8"),
        (Some("text/xml"), "application/xml; charset=utf-8"),
        (
            Some("application/xhtml+xml"),
            "application/xml; charset=utf-8",
        ),
        (
            Some("application/xml;q=0.2, application/json;q=0.8"),
            "application/json; charset=utf-8",
        ),
        (
            Some("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
            "application/xml; charset=utf-8",
        ),
    ] {
        let mut request = gw.request("GET", "/products/1", &Who::Admin);
        if let Some(accept) = accept {
            request = request.header("Accept", accept);
        }
        let r = gw.send_raw(request).await;
        assert_eq!(r.status, 200, "{accept:?}: {}", r.body);
        assert_eq!(r.header("content-type"), Some(expected), "{accept:?}");
    }
}

#[tokio::test]
async fn nothing_acceptable_is_406_with_the_error_body() {
    let gw = gateway().await;
    let r = gw
        .send_header("GET", "/products/1", &Who::Admin, "Accept", "image/png")
        .await;
    assert_eq!(r.status, 406);
    assert!(
        r.body.contains(
            "<message>Server can not understand Accept HTTP header media type.</message>"
        ),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn request_bodies_are_checked_with_the_original_messages() {
    let gw = gateway().await;
    let cases: &[(Option<&str>, &str, &str)] = &[
        (
            Some("application/json; charset=ISO-8859-1"),
            "{}",
            "UTF-8 is the only supported charset",
        ),
        (
            Some("application/json; boundary=x"),
            "{}",
            "Invalid Content-Type header",
        ),
        (
            Some("application/x-www-form-urlencoded"),
            "a=b",
            "Server can not understand Content-Type HTTP header media type \"application/x-www-form-urlencoded\"",
        ),
        (Some("application/json"), "", "Decoding error."),
        (Some("application/json"), "{\"name\":", "Decoding error."),
        (
            Some("application/xml"),
            "<service_api><name>x</service_api>",
            "Decoding error.",
        ),
        (
            Some("application/xml"),
            "<!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><service_api><name>&e;</name></service_api>",
            "Decoding error.",
        ),
        (
            Some("application/json"),
            "{}",
            "The request data is invalid.",
        ),
        // No Content-Type: products default to JSON, so XML does not decode.
        (None, "<service_api/>", "Decoding error."),
    ];
    for (content_type, body, message) in cases {
        let mut request = gw
            .request("PUT", "/products/1", &Who::Admin)
            .header("Accept", "application/json")
            .body(body.to_string());
        if let Some(ct) = content_type {
            request = request.header("Content-Type", *ct);
        }
        let r = gw.send(request).await;
        let messages = r.messages();
        assert_eq!(
            (r.status, messages[0].as_str()),
            (400, *message),
            "{content_type:?} {body}"
        );
        // A decoding error says which format was expected and where reading failed.
        if *message == "Decoding error." {
            assert_eq!(messages.len(), 2, "{messages:?}");
            let format = if content_type.is_some_and(|c| c.contains("xml")) {
                "Expected an XML body: "
            } else {
                "Expected a JSON body: "
            };
            assert!(
                messages[1].starts_with(format),
                "{content_type:?} {body}: {messages:?}"
            );
        } else {
            assert_eq!(messages.len(), 1, "{messages:?}");
        }
    }
    assert_eq!(gw.upstream_count("PUT", "").await, 0);
}

#[tokio::test]
async fn bodies_over_the_limit_are_413() {
    let gw = Gateway::start_with(|c| c.body_limit = 1024).await;
    let big = format!("{{\"name\":\"{}\"}}", "x".repeat(4096));
    let r = gw
        .send_body("PUT", "/products/1", &Who::Admin, "application/json", big)
        .await;
    r.assert_error(413, "Request body is larger than the allowed size.");
}

#[tokio::test]
async fn unknown_routes_and_methods() {
    let gw = gateway().await;
    for path in [
        "/nothing",
        "/products/1/nothing",
        "/customers/1/addresses/2/x",
    ] {
        let r = gw.get_json(path, &Who::Guest).await;
        assert_eq!(
            (r.status, r.messages()),
            (404, vec!["Request does not match any route.".to_owned()]),
            "{path}"
        );
    }
    let r = gw
        .send(
            gw.http
                .get(format!("http://{}/elsewhere", gw.running.addr))
                .header("Accept", "application/json"),
        )
        .await;
    r.assert_error(404, "Request does not match any route.");
    let r = gw
        .send(
            gw.request("PATCH", "/products/1", &Who::Admin)
                .header("Accept", "application/json"),
        )
        .await;
    r.assert_error(400, "Invalid request method");
}

#[tokio::test]
async fn version_one_or_none_is_served_anything_else_refused() {
    let gw = gateway().await;
    for version in [None, Some("1"), Some(" 1 ")] {
        let mut request = gw
            .request("GET", "/products/1", &Who::Admin)
            .header("Accept", "application/json");
        if let Some(v) = version {
            request = request.header("Version", v);
        }
        assert_eq!(gw.send(request).await.status, 200, "{version:?}");
    }
    for version in ["2", "0", "abc", "1.0"] {
        let r = gw
            .send(
                gw.request("GET", "/products/1", &Who::Admin)
                    .header("Accept", "application/json")
                    .header("Version", version),
            )
            .await;
        assert_eq!(r.status, 400, "{version}");
        assert_eq!(
            r.json(),
            json!({"messages": {"error": [{"code": 400, "message": format!("Invalid version \"{version}\" requested.")}]}})
        );
    }
}

#[tokio::test]
async fn health_and_readiness() {
    let gw = gateway().await;
    let base = format!("http://{}", gw.running.addr);
    assert_eq!(
        gw.send(gw.http.get(format!("{base}/healthz"))).await.status,
        200
    );
    assert_eq!(
        gw.send(gw.http.get(format!("{base}/readyz"))).await.status,
        200
    );
    let metrics = gw.send(gw.http.get(format!("{base}/metrics"))).await;
    assert!(metrics.body.contains("storegate_cache_hits_total"));
    // Magento not answering its store list does not take the instance out of service: the
    // state is reported beside the readiness, and in the metrics.
    let down = Gateway::start().await;
    let base = format!("http://{}", down.running.addr);
    let ready = down.send(down.http.get(format!("{base}/readyz"))).await;
    assert_eq!(ready.status, 200);
    assert_eq!(ready.json()["status"], "ready");
    assert_eq!(ready.json()["upstream"], "down");
    let metrics = down.send(down.http.get(format!("{base}/metrics"))).await;
    metrics.assert_contains("storegate_upstream_up 0\n");
    // The strict reading, for those who want it.
    let strict = down
        .send(down.http.get(format!("{base}/readyz?upstream=required")))
        .await;
    assert_eq!(strict.status, 503);
    assert_eq!(strict.json()["upstream"], "down");
    let up = gw
        .send(gw.http.get(format!(
            "http://{}/readyz?upstream=required",
            gw.running.addr
        )))
        .await;
    assert_eq!(
        (up.status, up.json()["upstream"].as_str()),
        (200, Some("up"))
    );
}

/// Issue 32: a path or query part that does not decode to UTF-8 (`%ff`) gets the API's
/// error tree in the negotiated format, with a request id, on every kind of route, for
/// every caller; axum's own plain-text refusal never reaches a client.
#[tokio::test]
async fn undecodable_paths_and_queries_get_the_api_error_tree_in_json_and_xml() {
    let gw = gateway().await;
    const MESSAGE: &str =
        "Request URL is not valid: its path and query must be UTF-8 once percent-decoded.";
    for (path, who) in [
        ("/products/%ff", Who::Guest),
        ("/products/%ff", Who::Admin),
        ("/products/1/images/%C3%28", Who::Admin),
        ("/customers/%fe/addresses", Who::Customer(1)),
        ("/stockitems/%80", Who::Admin),
        (
            "/products?filter[0][attribute]=name&filter[0][like]=%ff",
            Who::Guest,
        ),
        ("/products/1?x=%c0", Who::Guest),
        ("/no/such/route/%ff", Who::Guest),
    ] {
        let json = gw.get_json(path, &who).await;
        assert_eq!(json.status, 400, "{path}: {}", json.body);
        assert_eq!(
            json.header("content-type"),
            Some("application/json; charset=utf-8"),
            "{path}"
        );
        assert_eq!(json.json()["messages"]["error"][0]["code"], 400, "{path}");
        assert_eq!(json.messages(), vec![MESSAGE.to_owned()], "{path}");
        assert!(json.header("x-request-id").is_some(), "{path}");

        let xml = gw.get_xml(path, &who).await;
        assert_eq!(xml.status, 400, "{path}: {}", xml.body);
        assert_eq!(
            xml.header("content-type"),
            Some("application/xml; charset=utf-8"),
            "{path}"
        );
        assert!(
            xml.body.starts_with("<?xml")
                && xml.body.contains("<code>400</code>")
                && xml.body.contains(&format!("<message>{MESSAGE}</message>")),
            "{path}: {}",
            xml.body
        );
        assert!(xml.header("x-request-id").is_some(), "{path}");
    }
    // Writes too, whatever their body.
    let r = gw
        .send_json("PUT", "/products/%ff", &Who::Admin, &json!({"name": "x"}))
        .await;
    r.assert_error(400, MESSAGE);
    // What does decode is served as before.
    let fine = gw.get_json("/products/1", &Who::Admin).await;
    assert_eq!(fine.status, 200, "{}", fine.body);
}
