//! The request's log span: opened for every request the API serves, with the request's id,
//! and not for a repeat the fast path answers (a hit logs nothing but its access line, and
//! opening a span was about a sixth of a hit's instructions: `bench/instructions.py`). With
//! the access log on, the access line opens a span of its own, hit or not.

use std::fmt::Debug;
use std::sync::{Mutex, OnceLock};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::helpers::*;

/// The `request_id` of every `request` span opened in this test binary (tests run side
/// by side, so each test looks for ids of its own).
fn opened() -> &'static Mutex<Vec<String>> {
    static OPENED: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    OPENED.get_or_init(Mutex::default)
}

struct RequestSpans;

impl<S: tracing::Subscriber> Layer<S> for RequestSpans {
    fn on_new_span(&self, attrs: &Attributes<'_>, _id: &Id, _ctx: Context<'_, S>) {
        if attrs.metadata().name() != "request" {
            return;
        }
        struct RequestId(Option<String>);
        impl Visit for RequestId {
            fn record_str(&mut self, field: &Field, value: &str) {
                if field.name() == "request_id" {
                    self.0 = Some(value.to_owned());
                }
            }
            fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
                if field.name() == "request_id" {
                    self.0 = Some(format!("{value:?}"));
                }
            }
        }
        let mut visitor = RequestId(None);
        attrs.record(&mut visitor);
        if let Some(id) = visitor.0 {
            opened().lock().unwrap().push(id);
        }
    }
}

/// Installs the recording subscriber for the whole test binary, once.
fn record_spans() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        // At `info`, as the binary's default filter. The gateways of these tests run with the
        // access log off (`STOREGATE_ACCESS_LOG=off`), so the only span is the request's.
        tracing_subscriber::registry()
            .with(RequestSpans.with_filter(LevelFilter::INFO))
            .try_init()
            .expect("no other global subscriber in the api tests");
    });
}

fn spans_with(id: &str) -> usize {
    opened().lock().unwrap().iter().filter(|s| *s == id).count()
}

#[tokio::test]
async fn the_api_opens_a_span_with_the_request_id_and_a_fast_path_hit_none() {
    record_spans();
    // The access line (on by default, at `info`) opens a span of its own for every request;
    // off here, so that what is counted is the request's span alone.
    let gw = Gateway::start_with(|c| c.access_log = false).await;
    mount_stores(&gw.upstream).await;
    mount_skus(&gw.upstream).await;
    mount_render(&gw.upstream).await;
    Mock::given(method("GET"))
        .and(path("/rest/default/V1/products/24-MB01"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(fixture("products/get-simple-24-mb01")["response"]["body"].clone()),
        )
        .mount(&gw.upstream)
        .await;
    let get = |id: &str| {
        gw.send(
            gw.request("GET", "/products/1", &Who::Guest)
                .header("X-Request-Id", id),
        )
    };

    let miss = get("span-test-miss").await;
    assert_eq!(miss.status, 200, "{}", miss.body);
    assert_eq!(miss.header("x-cache"), Some("MISS"));
    assert_eq!(miss.header("x-request-id"), Some("span-test-miss"));
    assert_eq!(spans_with("span-test-miss"), 1);
    for call in gw.upstream.received_requests().await.unwrap() {
        assert_eq!(
            call.headers["x-request-id"], "span-test-miss",
            "{}",
            call.url
        );
    }

    let hit = get("span-test-hit").await;
    assert_eq!(hit.status, 200);
    assert_eq!(hit.header("x-cache"), Some("HIT"));
    assert_eq!(hit.body, miss.body);
    assert_eq!(hit.header("x-request-id"), Some("span-test-hit"));
    assert_eq!(
        spans_with("span-test-hit"),
        0,
        "a fast-path hit opened a span"
    );

    // An id the gateway makes (the caller's is not a token) is the span's id too.
    let refused = gw
        .send(
            gw.request("GET", "/products/1", &Who::Guest)
                .header("Accept", "image/png")
                .header("X-Request-Id", "not a token"),
        )
        .await;
    assert_eq!(refused.status, 406, "{}", refused.body);
    let made = refused.header("x-request-id").unwrap();
    assert_ne!(made, "not a token");
    assert_eq!(spans_with(made), 1);
}
