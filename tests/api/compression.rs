//! Compressed answers and `Cache-Status` from the outside: gzip, br and zstd by
//! `Accept-Encoding`, each decoding to the identity bytes, each with its own `ETag` and
//! `304`, served from the cache; small bodies untouched.

use std::io::Read;

use wiremock::matchers::{method, path, query_param_is_missing};
use wiremock::{Mock, ResponseTemplate};

use crate::helpers::*;

/// A raw answer: status, headers and the bytes as sent (reqwest here decodes nothing).
struct Raw {
    status: u16,
    headers: reqwest::header::HeaderMap,
    bytes: Vec<u8>,
}

impl Raw {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

async fn get(gw: &Gateway, path: &str, who: &Who, headers: &[(&str, &str)]) -> Raw {
    let mut builder = gw
        .request("GET", path, who)
        .header("Accept", "application/json");
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let response = builder.send().await.expect("gateway answers");
    Raw {
        status: response.status().as_u16(),
        headers: response.headers().clone(),
        bytes: response.bytes().await.unwrap().to_vec(),
    }
}

fn decode(coding: &str, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    match coding {
        "gzip" => flate2::read::GzDecoder::new(bytes)
            .read_to_end(&mut out)
            .unwrap(),
        "br" => brotli::Decompressor::new(bytes, 4096)
            .read_to_end(&mut out)
            .unwrap(),
        "zstd" => zstd::stream::read::Decoder::new(bytes)
            .unwrap()
            .read_to_end(&mut out)
            .unwrap(),
        other => panic!("unexpected coding {other}"),
    };
    out
}

/// A gateway whose Admin product list (seven products, several KB of JSON) is served by
/// one upstream list call at most.
async fn gateway_with_list(list_calls: u64) -> Gateway {
    let gw = Gateway::start().await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products"))
        .and(query_param_is_missing("fields"))
        .respond_with(recorded("products/list-page-1"))
        .expect(list_calls)
        .mount(&gw.upstream)
        .await;
    gw
}

#[tokio::test]
async fn each_encoding_decodes_to_the_identity_bytes_with_its_own_etag_from_the_cache() {
    // One list call for every request below: the variants are made once, at fill.
    let gw = gateway_with_list(1).await;
    let identity = get(&gw, "/products", &Who::Admin, &[]).await;
    assert_eq!(identity.status, 200);
    assert!(identity.bytes.len() >= 1024, "{}", identity.bytes.len());
    assert_eq!(identity.header("content-encoding"), None);
    assert_eq!(identity.header("x-cache"), Some("MISS"));
    assert_eq!(
        identity.header("vary"),
        Some("Accept, Authorization, Accept-Encoding")
    );
    let identity_etag = identity.header("etag").unwrap().to_owned();
    let mut etags = vec![identity_etag.clone()];
    for coding in ["gzip", "br", "zstd"] {
        let r = get(
            &gw,
            "/products",
            &Who::Admin,
            &[("Accept-Encoding", coding)],
        )
        .await;
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-encoding"), Some(coding));
        assert_eq!(r.header("x-cache"), Some("HIT"), "{coding}");
        assert!(
            r.header("cache-status")
                .unwrap()
                .starts_with("storegate; hit; ttl="),
            "{:?}",
            r.header("cache-status")
        );
        assert!(
            r.bytes.len() < identity.bytes.len() / 2,
            "{coding}: {}",
            r.bytes.len()
        );
        assert_eq!(decode(coding, &r.bytes), identity.bytes, "{coding}");
        let etag = r.header("etag").unwrap().to_owned();
        assert!(!etags.contains(&etag), "{coding} shares an ETag: {etag}");
        etags.push(etag.clone());

        // Its own 304, and only for its own tag.
        let not_modified = get(
            &gw,
            "/products",
            &Who::Admin,
            &[("Accept-Encoding", coding), ("If-None-Match", &etag)],
        )
        .await;
        assert_eq!(not_modified.status, 304, "{coding}");
        assert!(not_modified.bytes.is_empty());
        assert_eq!(not_modified.header("etag"), Some(etag.as_str()));
        let other_tag = get(
            &gw,
            "/products",
            &Who::Admin,
            &[
                ("Accept-Encoding", coding),
                ("If-None-Match", &identity_etag),
            ],
        )
        .await;
        assert_eq!(
            other_tag.status, 200,
            "{coding}: identity's tag is not this variant's"
        );
        assert_eq!(decode(coding, &other_tag.bytes), identity.bytes);
    }
    // The identity tag gets its 304 without Accept-Encoding.
    let r = get(
        &gw,
        "/products",
        &Who::Admin,
        &[("If-None-Match", &identity_etag)],
    )
    .await;
    assert_eq!(r.status, 304);
    gw.upstream.verify().await;
}

#[tokio::test]
async fn q_values_choose_the_encoding() {
    let gw = gateway_with_list(1).await;
    let cases: [(&str, Option<&str>); 10] = [
        ("gzip, deflate, br", Some("br")),
        ("br;q=0.5, gzip;q=0.8", Some("gzip")),
        ("zstd;q=1, br;q=0.9, gzip", Some("zstd")),
        ("*", Some("br")),
        ("*, br;q=0", Some("zstd")),
        ("gzip;q=0", None),
        ("identity, gzip;q=0.5", None),
        ("identity;q=0, gzip;q=0.1", Some("gzip")),
        ("deflate", None),
        ("", None),
    ];
    for (accept, expected) in cases {
        let r = get(
            &gw,
            "/products",
            &Who::Admin,
            &[("Accept-Encoding", accept)],
        )
        .await;
        assert_eq!(r.status, 200, "{accept}");
        assert_eq!(
            r.header("content-encoding"),
            expected,
            "Accept-Encoding: {accept}"
        );
    }
}

#[tokio::test]
async fn bodies_under_a_kibibyte_are_untouched() {
    let gw = Gateway::start().await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    // A product whose Guest view is small.
    let mut product = fixture("products/get-simple-24-mb01")["response"]["body"].clone();
    product["custom_attributes"] = serde_json::json!([]);
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products/24-MB01"))
        .respond_with(ResponseTemplate::new(200).set_body_json(product))
        .mount(&gw.upstream)
        .await;
    mount_render(&gw.upstream).await;
    for _ in 0..2 {
        let r = get(
            &gw,
            "/products/1",
            &Who::Guest,
            &[("Accept-Encoding", "gzip, br, zstd")],
        )
        .await;
        assert_eq!(r.status, 200);
        assert!(r.bytes.len() < 1024, "{}", r.bytes.len());
        assert_eq!(r.header("content-encoding"), None);
        serde_json::from_slice::<serde_json::Value>(&r.bytes).expect("plain JSON");
    }
}

#[tokio::test]
async fn cache_status_says_miss_then_hit_and_uncached_reads_say_so() {
    let gw = gateway_with_list(1).await;
    let miss = get(&gw, "/products", &Who::Admin, &[]).await;
    assert_eq!(
        miss.header("cache-status"),
        Some("storegate; fwd=miss; stored; ttl=60")
    );
    assert_eq!(miss.header("x-cache"), Some("MISS"));
    let hit = get(&gw, "/products", &Who::Admin, &[]).await;
    let status = hit.header("cache-status").unwrap();
    let ttl: i64 = status
        .strip_prefix("storegate; hit; ttl=")
        .unwrap_or_else(|| panic!("{status}"))
        .parse()
        .unwrap();
    assert!((59..=60).contains(&ttl), "{status}");
    // A read the cache never holds (an unknown route, here) says the cache did not have it.
    let other = get(&gw, "/no-such-thing", &Who::Admin, &[]).await;
    assert_eq!(other.status, 404);
    assert_eq!(
        other.header("cache-status"),
        Some("storegate; fwd=uri-miss")
    );
}
