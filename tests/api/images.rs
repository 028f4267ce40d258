//! Product images (SPEC 2.3, 4.3, 7): the ten routes in both formats, per-store values,
//! what shoppers see, every validation message before any upstream call, the body limit,
//! the cache and its invalidation.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use wiremock::matchers::{body_json, method, path, query_param, query_param_is_missing};
use wiremock::{Mock, ResponseTemplate};

use crate::helpers::*;

const URL_FRONT: &str = "https://shop.example/media/catalog/product/h/a/harbor-duffle-front.png";

/// A gateway whose Magento knows the recorded products with their galleries: 24-MB01 (1)
/// in the default and french views and with its default values, 24-UG05 (3, disabled),
/// MT07 (6, second image disabled); and attribute set 4.
async fn catalog() -> Gateway {
    mount_image_catalog(Gateway::start().await).await
}

/// What [`catalog`] mounts, on any gateway (the profile tests reuse it).
pub(crate) async fn mount_image_catalog(gw: Gateway) -> Gateway {
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    mount_product(&gw, "24-MB01", "products/get-simple-24-mb01").await;
    mount_product(&gw, "24-UG05", "products/get-disabled-24-ug05").await;
    mount_product(&gw, "MT07", "products/get-configurable-mt07").await;
    Mock::given(method("GET"))
        .and(path("/rest/french/V1/products/24-MB01"))
        .respond_with(recorded("products/get-simple-24-mb01-french"))
        .mount(&gw.upstream)
        .await;
    mount(&gw.upstream, "media/attribute-set-4-attributes").await;
    gw
}

/// A product read by the default view, and (the same recording: the store has no
/// default-view overrides) with `storeId=0`, its default values.
async fn mount_product(gw: &Gateway, sku: &str, name: &str) {
    let body = fixture(name)["response"]["body"].clone();
    mount_product_body(gw, sku, body).await;
}

async fn mount_product_body(gw: &Gateway, sku: &str, body: Value) {
    Mock::given(method("GET"))
        .and(path(format!("/rest/default/V1/products/{sku}")))
        .and(query_param_is_missing("storeId"))
        .respond_with(ResponseTemplate::new(200).set_body_json(body.clone()))
        .mount(&gw.upstream)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("/rest/default/V1/products/{sku}")))
        .and(query_param("storeId", "0"))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(&gw.upstream)
        .await;
}

fn sent(name: &str) -> Value {
    fixture(name)["request"]["body"].clone()
}

/// The PNG the recordings upload.
fn png_base64() -> String {
    sent("media/create-24-mb01")["entry"]["content"]["base64_encoded_data"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn json_request(gw: &Gateway, verb: &str, route: &str, body: Value) -> Reply {
    gw.send(
        gw.request(verb, route, &Who::Admin)
            .header("Content-Type", "application/json")
            .body(body.to_string()),
    )
    .await
}

// ---------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn admin_lists_the_default_values_with_urls_and_exclusion() {
    let gw = catalog().await;
    let r = gw.get_json("/products/1/images", &Who::Admin).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let list = r.json();
    assert_eq!(
        list,
        json!([
            {"id": "11", "label": "Harbor Duffle Bag, front", "position": "1", "exclude": "0",
             "url": URL_FRONT, "types": ["image", "small_image", "thumbnail", "swatch_image"]},
            {"id": "12", "label": "Harbor Duffle Bag, side", "position": "2", "exclude": "0",
             "url": "https://shop.example/media/catalog/product/h/a/harbor-duffle-side.png",
             "types": []}
        ])
    );
    assert_eq!(
        keys(&list[0]),
        ["id", "label", "position", "exclude", "url", "types"]
    );
    // What a global write changes: the default values (store 0).
    let reads = gw
        .upstream_calls("GET", "^/rest/default/V1/products/24-MB01$")
        .await;
    assert_eq!(reads.len(), 1);
    assert_eq!(reads[0].url.query(), Some("storeId=0"));
    // Not the gallery service, which sends every file's bytes.
    assert_eq!(gw.upstream_count("GET", "/media").await, 0);

    let r = gw.get_xml("/products/1/images", &Who::Admin).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body,
        format!(
            "<?xml version=\"1.0\"?>\n<service_api><data_item><id>11</id>\
             <label>Harbor Duffle Bag, front</label><position>1</position><exclude>0</exclude>\
             <url>{URL_FRONT}</url><types><data_item>image</data_item>\
             <data_item>small_image</data_item><data_item>thumbnail</data_item>\
             <data_item>swatch_image</data_item></types></data_item><data_item><id>12</id>\
             <label>Harbor Duffle Bag, side</label><position>2</position><exclude>0</exclude>\
             <url>https://shop.example/media/catalog/product/h/a/harbor-duffle-side.png</url>\
             <types/></data_item></service_api>"
        )
    );
}

#[tokio::test]
async fn shoppers_see_neither_excluded_images_nor_the_flag() {
    let gw = catalog().await;
    for who in [Who::Guest, Who::Customer(5)] {
        let r = gw.get_json("/products/6/images", &who).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let list = r.json();
        assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
        assert_eq!(list[0]["id"], "15");
        assert_eq!(keys(&list[0]), ["id", "label", "position", "url", "types"]);
        let r = gw.get_json("/products/6/images/16", &who).await;
        r.assert_error(404, "Product image not found");
        let r = gw.get_json("/products/6/images/15", &who).await;
        assert_eq!(r.status, 200);
        assert_eq!(r.json()["label"], "Summit Tee, gray");
    }
    // Shoppers read the default store view, not the default values.
    let reads = gw
        .upstream_calls("GET", "^/rest/default/V1/products/MT07$")
        .await;
    assert!(reads.iter().all(|r| r.url.query().is_none()));

    let r = gw.get_json("/products/6/images", &Who::Admin).await;
    assert_eq!(r.json()[1]["exclude"], "1");
    let r = gw.get_json("/products/6/images/16", &Who::Admin).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["exclude"], "1");
}

#[tokio::test]
async fn shoppers_get_no_images_of_a_product_they_cannot_see() {
    let gw = catalog().await;
    let r = gw.get_json("/products/3/images", &Who::Guest).await;
    r.assert_error(404, "Resource not found.");
    let r = gw.get_json("/products/3/images", &Who::Admin).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()[0]["id"], "17");
}

#[tokio::test]
async fn labels_differ_per_store_view() {
    let gw = catalog().await;
    let r = gw.get_json("/products/1/images/store/2", &Who::Guest).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let labels: Vec<Value> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].clone())
        .collect();
    assert_eq!(
        labels,
        [
            json!("Sac de sport Harbor, face"),
            json!("Sac de sport Harbor, profil")
        ]
    );
    let r = gw
        .get_xml("/products/1/images/12/store/2", &Who::Admin)
        .await;
    assert_eq!(r.status, 200);
    assert!(
        r.body
            .contains("<label>Sac de sport Harbor, profil</label>")
            && r.body.contains("<types/>"),
        "{}",
        r.body
    );
    // Store 1 is the default view; store 0 the admin scope, like the global routes.
    let r = gw.get_json("/products/1/images/store/1", &Who::Admin).await;
    assert_eq!(r.json()[0]["label"], "Harbor Duffle Bag, front");
    let r = gw
        .get_json("/products/1/images/11/store/0", &Who::Admin)
        .await;
    assert_eq!(r.json()["label"], "Harbor Duffle Bag, front");
    assert!(
        gw.upstream_count("GET", "^/rest/french/V1/products/24-MB01$")
            .await
            == 1
    );
}

#[tokio::test]
async fn unknown_stores_products_and_images() {
    let gw = catalog().await;
    for route in [
        "/products/1/images/store/9",
        "/products/1/images/store/abc",
        "/products/1/images/11/store/9",
    ] {
        let r = gw.get_json(route, &Who::Guest).await;
        assert_eq!(r.status, 400, "{route}");
        assert_eq!(r.messages(), ["Requested store is invalid"]);
    }
    for route in [
        "/products/99/images",
        "/products/99/images/11",
        "/products/x/images",
    ] {
        let r = gw.get_json(route, &Who::Admin).await;
        assert_eq!(
            (r.status, r.messages()),
            (404, vec!["Resource not found.".to_owned()]),
            "{route}"
        );
    }
    for route in [
        "/products/1/images/99",
        "/products/1/images/x",
        "/products/1/images/99/store/2",
    ] {
        let r = gw.get_xml(route, &Who::Admin).await;
        assert_eq!(r.status, 404, "{route}");
        r.assert_contains("<message>Product image not found</message>");
    }
}

#[tokio::test]
async fn image_reads_are_cached_per_view_and_coalesced() {
    let gw = catalog().await;
    let calls = futures_util::future::join_all(
        (0..8).map(|_| gw.get_json("/products/1/images", &Who::Guest)),
    )
    .await;
    assert!(calls.iter().all(|r| r.status == 200));
    let r = gw.get_json("/products/1/images", &Who::Guest).await;
    assert_eq!(r.header("x-cache"), Some("HIT"));
    assert_eq!(r.header("cache-control"), Some("public, max-age=60"));
    assert_eq!(
        gw.upstream_count("GET", "^/rest/default/V1/products/24-MB01$")
            .await,
        1
    );
    // Admin's view is its own entry.
    let r = gw.get_json("/products/1/images", &Who::Admin).await;
    assert_eq!(r.header("x-cache"), Some("MISS"));
    assert_eq!(r.header("cache-control"), Some("private, max-age=60"));
    // A 304 for a client that has it.
    let etag = r.header("etag").unwrap().to_owned();
    let r = gw
        .send_header(
            "GET",
            "/products/1/images",
            &Who::Admin,
            "If-None-Match",
            etag,
        )
        .await;
    assert_eq!(r.status, 304);
}

// ---------------------------------------------------------------------------------------
// Create
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn admin_adds_an_image_globally() {
    let gw = catalog().await;
    // Exactly what the recording sent: next position, the type's extension, roles none.
    Mock::given(method("POST"))
        .and(path("/rest/all/V1/products/24-MB01/media"))
        .and(body_json(sent("media/create-24-mb01")))
        .respond_with(recorded("media/create-24-mb01"))
        .expect(2)
        .mount(&gw.upstream)
        .await;
    let r = json_request(
        &gw,
        "POST",
        "/products/1/images",
        json!({"file_mime_type": "image/png", "file_content": png_base64(),
               "file_name": "harbor-duffle-open", "label": "Harbor Duffle Bag, open"}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body, "");
    assert_eq!(r.header("location"), Some("/api/rest/products/1/images/18"));

    // The same in XML, without Content-Type (the operation's default), the base64 wrapped.
    let wrapped: String = png_base64()
        .as_bytes()
        .chunks(40)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    let xml = format!(
        "<?xml version=\"1.0\"?><service_api><file_mime_type>image/png</file_mime_type>\
         <file_content>{wrapped}</file_content><file_name>harbor-duffle-open.png</file_name>\
         <label>Harbor Duffle Bag, open</label></service_api>"
    );
    let r = gw
        .send(
            gw.request("POST", "/products/1/images", &Who::Admin)
                .body(xml),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("location"), Some("/api/rest/products/1/images/18"));
}

#[tokio::test]
async fn default_file_names_are_image_then_image_2() {
    let gw = catalog().await;
    Mock::given(method("POST"))
        .and(path("/rest/all/V1/products/24-MB01/media"))
        .and(wiremock::matchers::body_partial_json(
            json!({"entry": {"content": {"name": "image.png", "type": "image/png"}}}),
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(18))
        .expect(1)
        .mount(&gw.upstream)
        .await;
    let r = json_request(
        &gw,
        "POST",
        "/products/1/images",
        json!({"file_mime_type": "image/png", "file_content": png_base64()}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);

    // A product whose gallery already holds `image`: the next is `image_2`, at position 2.
    let mut product = fixture("products/get-virtual-sg-warranty-2y")["response"]["body"].clone();
    product["media_gallery_entries"] = json!([{"id": 30, "media_type": "image", "label": null,
        "position": 1, "disabled": false, "types": [], "file": "/i/m/image.png"}]);
    mount_product_body(&gw, "SG-WARRANTY-2Y", product).await;
    // A JPEG header: SOI, a short APP0, then the frame header (16 x 16) the checks read.
    let jpeg = STANDARD.encode([
        0xFF, 0xD8, 0xFF, 0xE0, 0, 4, b'J', b'F', 0xFF, 0xC0, 0, 11, 8, 0, 16, 0, 16, 1, 1, 0x11, 0,
    ]);
    Mock::given(method("POST"))
        .and(path("/rest/all/V1/products/SG-WARRANTY-2Y/media"))
        .and(wiremock::matchers::body_partial_json(json!({"entry": {
            "position": 2, "disabled": true, "types": ["image", "thumbnail"],
            "content": {"name": "image_2.jpg", "type": "image/jpeg", "base64_encoded_data": jpeg}}})))
        .respond_with(ResponseTemplate::new(200).set_body_json(31))
        .expect(1)
        .mount(&gw.upstream)
        .await;
    let r = json_request(
        &gw,
        "POST",
        "/products/7/images",
        json!({"file_mime_type": "image/jpg", "file_content": jpeg, "exclude": 1,
               "types": ["image", "thumbnail"]}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("location"), Some("/api/rest/products/7/images/31"));
}

#[tokio::test]
async fn a_per_store_create_goes_through_the_store_code() {
    let gw = catalog().await;
    Mock::given(method("POST"))
        .and(path("/rest/french/V1/products/24-MB01/media"))
        .and(body_json(sent("media/create-24-mb01-french")))
        .respond_with(recorded("media/create-24-mb01-french"))
        .expect(1)
        .mount(&gw.upstream)
        .await;
    let r = json_request(
        &gw,
        "POST",
        "/products/1/images/store/2",
        json!({"file_mime_type": "image/png", "file_content": png_base64(),
               "label": "Sac de sport Harbor, ouvert"}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("location"), Some("/api/rest/products/1/images/19"));
    // The gallery it started from was the french view's, read fresh.
    assert_eq!(
        gw.upstream_count("GET", "^/rest/french/V1/products/24-MB01$")
            .await,
        1
    );
    assert_eq!(gw.upstream_count("POST", "^/rest/all/").await, 0);
}

#[tokio::test]
async fn every_image_check_answers_before_any_upstream_call() {
    let gw = Gateway::start().await;
    let png = png_base64();
    let jpeg_as_gif = STANDARD.encode([0xFF, 0xD8, 0xFF, 0xE0]);
    let pre = "Resource data pre-validation error.";
    for (body, messages) in [
        (
            json!({"label": "no file"}),
            vec!["The image is not specified", pre],
        ),
        (
            json!({"file_content": png, "file_mime_type": ""}),
            vec!["The image is not specified", pre],
        ),
        (
            json!({"file_content": "this is not base64!", "file_mime_type": "image/png"}),
            vec!["The image content must be valid base64 encoded data"],
        ),
        (
            json!({"file_content": png, "file_mime_type": "image/bmp"}),
            vec!["Unsupported image MIME type"],
        ),
        (
            json!({"file_content": png, "file_mime_type": "image/x-ms-bmp"}),
            vec!["Unsupported image MIME type"],
        ),
        (
            json!({"file_content": jpeg_as_gif, "file_mime_type": "image/gif"}),
            vec!["The image content is not a valid GIF image.", pre],
        ),
        (
            json!({"file_content": STANDARD.encode("hello"), "file_mime_type": "image/png"}),
            vec!["The image content is not a valid PNG image.", pre],
        ),
        (
            json!({"file_content": png, "file_mime_type": "image/png", "position": "first",
                   "types": ["image", 3]}),
            vec![
                "Invalid value for \"position\" in request.",
                "Invalid value for \"types\" in request.",
                pre,
            ],
        ),
    ] {
        for route in ["/products/1/images", "/products/1/images/store/2"] {
            let r = json_request(&gw, "POST", route, body.clone()).await;
            assert_eq!(r.status, 400, "{route} {body}");
            assert_eq!(r.messages(), messages, "{route} {body}");
        }
    }
    // Updates check a new file the same way.
    let r = json_request(
        &gw,
        "PUT",
        "/products/1/images/11",
        json!({"file_content": png, "file_mime_type": "image/tiff"}),
    )
    .await;
    assert_eq!(r.messages(), ["Unsupported image MIME type"]);
    // And in XML.
    let r = gw
        .send(
            gw.request("POST", "/products/1/images", &Who::Admin)
                .header("Content-Type", "application/xml")
                .header("Accept", "application/xml")
                .body("<service_api><file_content>@@@</file_content><file_mime_type>image/png</file_mime_type></service_api>"),
        )
        .await;
    assert_eq!(r.status, 400);
    r.assert_contains("<message>The image content must be valid base64 encoded data</message>");
    assert!(gw.upstream.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn image_bodies_have_their_own_limit() {
    // Larger than the general limit, so a photo fits; past it, a 413 with the error body.
    let gw = Gateway::start_with(|c| {
        c.body_limit = 1024;
        c.image_body_limit = 8 * 1024;
    })
    .await;
    let big = STANDARD.encode(vec![0u8; 4 * 1024]);
    let r = json_request(
        &gw,
        "POST",
        "/products/1/images",
        json!({"file_content": big, "file_mime_type": "image/png"}),
    )
    .await;
    // Within the image limit: read, then refused on its content.
    assert_eq!(
        r.messages()[0],
        "The image content is not a valid PNG image."
    );
    let bigger = STANDARD.encode(vec![0u8; 16 * 1024]);
    for route in ["/products/1/images", "/products/1/images/11/store/2"] {
        let verb = if route.ends_with("images") {
            "POST"
        } else {
            "PUT"
        };
        let r = json_request(
            &gw,
            verb,
            route,
            json!({"file_content": bigger, "file_mime_type": "image/png"}),
        )
        .await;
        assert_eq!(r.status, 413, "{route}");
        assert_eq!(
            r.messages(),
            ["Request body is larger than the allowed size."]
        );
    }
    // The same size sent in chunks, without a declared length: cut off at the limit.
    let status = chunked_post(&gw, "/api/rest/products/1/images", 32, 1024).await;
    assert!(status.starts_with("HTTP/1.1 413"), "{status}");
}

/// POSTs `chunks` chunks of `size` bytes with `Transfer-Encoding: chunked` and returns the
/// status line.
async fn chunked_post(gw: &Gateway, target: &str, chunks: usize, size: usize) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(gw.running.addr)
        .await
        .unwrap();
    let head = format!(
        "POST {target} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {ADMIN_KEY}\r\n\
         Content-Type: application/json\r\nAccept: application/json\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        gw.running.addr
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let chunk = format!("{size:x}\r\n{}\r\n", "a".repeat(size));
    for _ in 0..chunks {
        // The gateway may answer and close before taking everything.
        if stream.write_all(chunk.as_bytes()).await.is_err() {
            break;
        }
    }
    let _ = stream.write_all(b"0\r\n\r\n").await;
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    let answer = String::from_utf8_lossy(&answer);
    answer.lines().next().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_product_without_a_media_gallery_cannot_hold_images() {
    let gw = catalog().await;
    mount(&gw.upstream, "media/attribute-set-12-without-gallery").await;
    let mut product = fixture("products/get-virtual-sg-warranty-2y")["response"]["body"].clone();
    product["attribute_set_id"] = json!(12);
    mount_product_body(&gw, "SG-WARRANTY-2Y", product).await;
    let r = json_request(
        &gw,
        "POST",
        "/products/7/images",
        json!({"file_content": png_base64(), "file_mime_type": "image/png"}),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.messages(), ["Requested product does not support images"]);
    assert_eq!(gw.upstream_count("POST", ".").await, 0);
}

#[tokio::test]
async fn magento_refusals_of_an_image_are_the_spec_messages() {
    let gw = catalog().await;
    Mock::given(method("POST"))
        .and(path("/rest/all/V1/products/24-MB01/media"))
        .respond_with(recorded("media/create-error-mime-type"))
        .mount(&gw.upstream)
        .await;
    let r = json_request(
        &gw,
        "POST",
        "/products/1/images",
        json!({"file_content": png_base64(), "file_mime_type": "image/png"}),
    )
    .await;
    r.assert_error(400, "Unsupported image MIME type");
}

// ---------------------------------------------------------------------------------------
// Update and delete
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn an_update_keeps_what_was_not_sent() {
    let gw = catalog().await;
    Mock::given(method("PUT"))
        .and(path("/rest/all/V1/products/24-MB01/media/12"))
        .and(body_json(sent("media/update-24-mb01-12")))
        .respond_with(recorded("media/update-24-mb01-12"))
        .expect(1)
        .mount(&gw.upstream)
        .await;
    let r = json_request(
        &gw,
        "PUT",
        "/products/1/images/12",
        json!({"label": "Harbor Duffle Bag, side view", "types": ["small_image"]}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body, "");
    assert!(r.header("location").is_none());
}

#[tokio::test]
async fn a_per_store_update_changes_only_that_store_view() {
    let gw = catalog().await;
    Mock::given(method("PUT"))
        .and(path("/rest/french/V1/products/24-MB01/media/12"))
        .and(body_json(sent("media/update-24-mb01-12-french")))
        .respond_with(recorded("media/update-24-mb01-12-french"))
        .expect(1)
        .mount(&gw.upstream)
        .await;
    let r = gw
        .send(
            gw.request("PUT", "/products/1/images/12/store/2", &Who::Admin)
                .header("Content-Type", "text/xml")
                .body("<service_api><label>Sac de sport Harbor, vue de côté</label></service_api>"),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(gw.upstream_count("PUT", "^/rest/all/").await, 0);
}

#[tokio::test]
async fn update_refusals() {
    let gw = catalog().await;
    let r = json_request(&gw, "PUT", "/products/1/images/99", json!({"label": "x"})).await;
    r.assert_error(404, "Product image not found");
    let r = json_request(&gw, "PUT", "/products/1/images/12", json!({"sku": "x"})).await;
    r.assert_error(400, "The request data is invalid.");
    let r = json_request(
        &gw,
        "PUT",
        "/products/1/images/12",
        json!({"exclude": "maybe"}),
    )
    .await;
    assert_eq!(
        r.messages(),
        [
            "Invalid value for \"exclude\" in request.",
            "Resource data pre-validation error."
        ]
    );
    let r = json_request(
        &gw,
        "PUT",
        "/products/1/images/12/store/7",
        json!({"label": "x"}),
    )
    .await;
    r.assert_error(400, "Requested store is invalid");
    assert_eq!(gw.upstream_count("PUT", ".").await, 0);
}

#[tokio::test]
async fn a_new_file_gives_the_image_a_new_id_and_location() {
    let gw = Gateway::start().await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    mount(&gw.upstream, "media/attribute-set-4-attributes").await;
    let before = fixture("products/get-simple-24-mb01")["response"]["body"].clone();
    let mut after = before.clone();
    after["media_gallery_entries"][1]["id"] = json!(20);
    after["media_gallery_entries"][1]["file"] = json!("/h/a/harbor-duffle-side_1.png");
    // The first read is the one before the write; then Magento has the new entry.
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products/24-MB01"))
        .respond_with(ResponseTemplate::new(200).set_body_json(before))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&gw.upstream)
        .await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products/24-MB01"))
        .respond_with(ResponseTemplate::new(200).set_body_json(after))
        .with_priority(2)
        .mount(&gw.upstream)
        .await;
    Mock::given(method("PUT"))
        .and(path("/rest/all/V1/products/24-MB01/media/12"))
        .and(wiremock::matchers::body_partial_json(json!({"entry": {
            "id": 12, "label": "Harbor Duffle Bag, side", "position": 2,
            "content": {"name": "harbor-duffle-side.png", "type": "image/png"}}})))
        .respond_with(ResponseTemplate::new(200).set_body_json(true))
        .expect(1)
        .mount(&gw.upstream)
        .await;
    let r = json_request(
        &gw,
        "PUT",
        "/products/1/images/12",
        json!({"file_content": png_base64(), "file_mime_type": "image/png"}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("location"), Some("/api/rest/products/1/images/20"));
}

#[tokio::test]
async fn a_global_delete_removes_the_image() {
    let gw = catalog().await;
    Mock::given(method("DELETE"))
        .and(path("/rest/all/V1/products/24-MB01/media/11"))
        .respond_with(ResponseTemplate::new(200).set_body_json(true))
        .expect(1)
        .mount(&gw.upstream)
        .await;
    let r = gw
        .send(gw.request("DELETE", "/products/1/images/11", &Who::Admin))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body, "");
    let r = gw
        .send(gw.request("DELETE", "/products/1/images/99", &Who::Admin))
        .await;
    r.assert_error(404, "Product image not found");
}

#[tokio::test]
async fn a_per_store_delete_sets_no_image_in_that_store_only() {
    let gw = catalog().await;
    Mock::given(method("PUT"))
        .and(path("/rest/french/V1/products/24-MB01/media/11"))
        .and(body_json(sent("media/update-24-mb01-11-hidden-french")))
        .respond_with(recorded("media/update-24-mb01-11-hidden-french"))
        .expect(1)
        .mount(&gw.upstream)
        .await;
    let r = gw
        .send(gw.request("DELETE", "/products/1/images/11/store/2", &Who::Admin))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(gw.upstream_count("DELETE", ".").await, 0);
}

#[tokio::test]
async fn a_magento_404_on_a_write_is_image_not_found() {
    // The image went between the gateway's read and its write.
    let gw = catalog().await;
    Mock::given(method("DELETE"))
        .and(path("/rest/all/V1/products/24-MB01/media/12"))
        .respond_with(recorded("media/delete-error-entry-not-found"))
        .mount(&gw.upstream)
        .await;
    let r = gw
        .send(gw.request("DELETE", "/products/1/images/12", &Who::Admin))
        .await;
    r.assert_error(404, "Product image not found");
}

// ---------------------------------------------------------------------------------------
// Invalidation
// ---------------------------------------------------------------------------------------

async fn cached_twice(gw: &Gateway, route: &str, who: &Who) {
    assert_eq!(gw.get_json(route, who).await.status, 200, "{route}");
    assert_eq!(
        gw.get_json(route, who).await.header("x-cache"),
        Some("HIT"),
        "{route}"
    );
}

#[tokio::test]
async fn image_writes_invalidate_image_and_product_views() {
    let gw = catalog().await;
    mount_render(&gw.upstream).await;
    Mock::given(method("PUT"))
        .and(path("/rest/all/V1/products/24-MB01/media/12"))
        .respond_with(ResponseTemplate::new(200).set_body_json(true))
        .mount(&gw.upstream)
        .await;
    Mock::given(method("POST"))
        .and(path("/rest/french/V1/products/24-MB01/media"))
        .respond_with(ResponseTemplate::new(200).set_body_json(19))
        .mount(&gw.upstream)
        .await;
    let views = [
        ("/products/1/images", Who::Guest),
        ("/products/1/images/store/2", Who::Guest),
        ("/products/1/images/11", Who::Admin),
        ("/products/1", Who::Guest),
    ];
    let writes = [
        ("PUT", "/products/1/images/12", json!({"label": "New"})),
        (
            "POST",
            "/products/1/images/store/2",
            json!({"file_content": png_base64(), "file_mime_type": "image/png"}),
        ),
    ];
    for (verb, route, body) in writes {
        for (view, who) in &views {
            cached_twice(&gw, view, who).await;
        }
        let r = json_request(&gw, verb, route, body).await;
        assert_eq!(r.status, 200, "{verb} {route}: {}", r.body);
        for (view, who) in &views {
            let r = gw.get_json(view, who).await;
            assert_eq!(
                r.header("x-cache"),
                Some("MISS"),
                "{view} after {verb} {route}"
            );
        }
    }
}

#[tokio::test]
async fn a_product_delete_invalidates_its_images() {
    let gw = catalog().await;
    Mock::given(method("DELETE"))
        .and(path("/rest/all/V1/products/24-MB01"))
        .respond_with(ResponseTemplate::new(200).set_body_json(true))
        .mount(&gw.upstream)
        .await;
    cached_twice(&gw, "/products/1/images/store/2", &Who::Guest).await;
    cached_twice(&gw, "/products/1/images", &Who::Admin).await;
    let r = gw
        .send(gw.request("DELETE", "/products/1", &Who::Admin))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    for (view, who) in [
        ("/products/1/images/store/2", Who::Guest),
        ("/products/1/images", Who::Admin),
    ] {
        let r = gw.get_json(view, &who).await;
        assert_eq!(r.header("x-cache"), Some("MISS"), "{view}");
    }
}
