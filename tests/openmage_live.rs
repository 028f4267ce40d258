//! The OpenMage client against a live OpenMage store, seeded as `../shared/openmage/`
//! describes (consumer `k`x32 / `s`x32, the admin token `admintoken...a` / `adminsecret...a`,
//! customer 1's `custtoken...c` / `custsecret...c`, products 1 to 5).
//!
//! Does nothing (and passes) unless `STOREGATE_TEST_OPENMAGE_URL` names the store:
//!
//! ```sh
//! STOREGATE_TEST_OPENMAGE_URL=http://127.0.0.1 cargo test --test openmage_live
//! ```
//!
//! The writes (a product created, read back, deleted) also need
//! `STOREGATE_TEST_OPENMAGE_WRITES=1`: they change the store (its next product id).

use std::time::Duration;

use serde_json::{Value, json};
use storegate::backend::openmage::{Credentials, OpenMage};
use storegate::backend::port::BackendError;
use storegate::config::Secret;

fn padded(prefix: &str, fill: char) -> String {
    let mut text = prefix.to_owned();
    while text.len() < 32 {
        text.push(fill);
    }
    text
}

/// The client for the store named by the variable, or None (the test is skipped).
fn store() -> Option<OpenMage> {
    let url = std::env::var("STOREGATE_TEST_OPENMAGE_URL").ok()?;
    let url = url.trim().trim_end_matches('/');
    if url.is_empty() {
        return None;
    }
    let credentials = Credentials {
        consumer_key: Secret::new("k".repeat(32)),
        consumer_secret: Secret::new("s".repeat(32)),
        token: Secret::new(padded("admintoken", 'a')),
        token_secret: Secret::new(padded("adminsecret", 'a')),
    };
    // The original is slow (tens of milliseconds a call, more on a busy machine).
    Some(OpenMage::new(url, credentials, Duration::from_secs(30), "default").unwrap())
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[tokio::test]
async fn admin_reads_a_product() {
    let Some(store) = store() else { return };
    let product: Value = store.get_json("/products/1", &[]).await.unwrap();
    assert_eq!(product["entity_id"], "1", "{product}");
    assert!(
        product["sku"].as_str().is_some_and(|s| !s.is_empty()),
        "{product}"
    );
}

#[tokio::test]
async fn a_guest_reads_a_product_unsigned() {
    let Some(store) = store() else { return };
    let body = store.get_as_guest("/products/1", &[]).await.unwrap();
    let product: Value = serde_json::from_slice(&body).unwrap();
    assert!(product["sku"].is_string(), "{product}");
}

#[tokio::test]
async fn a_missing_product_is_the_stores_404() {
    let Some(store) = store() else { return };
    let error = store.get("/products/999999", &[]).await.unwrap_err();
    let BackendError::Status { status, error } = &error else {
        panic!("a status: {error:?}")
    };
    assert_eq!(*status, 404);
    assert_eq!(error.text(), "Resource not found.");
}

#[tokio::test]
async fn query_parameters_are_signed_as_the_store_reads_them() {
    let Some(store) = store() else { return };
    // Brackets, several parameters, and a space (sent as `+`, which the store signs as `+`).
    let query = pairs(&[
        ("filter[0][attribute]", "name"),
        ("filter[0][like]", "Test Product%"),
        ("order", "entity_id"),
        ("dir", "asc"),
        ("limit", "2"),
        ("page", "1"),
    ]);
    let list: Value = store.get_json("/products", &query).await.unwrap();
    let list = list.as_object().expect("products keyed by id");
    assert!(!list.is_empty() && list.len() <= 2, "{list:?}");
}

#[tokio::test]
async fn a_customer_reads_their_own_record_with_their_token() {
    let Some(store) = store() else { return };
    let body = store
        .get_signed_as(
            "/customers/1",
            &[],
            &padded("custtoken", 'c'),
            &padded("custsecret", 'c'),
        )
        .await
        .unwrap();
    let customer: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(customer["email"], "john@example.com", "{customer}");
    // Another customer's record is not theirs.
    let error = store
        .get_signed_as(
            "/customers/2",
            &[],
            &padded("custtoken", 'c'),
            &padded("custsecret", 'c'),
        )
        .await
        .unwrap_err();
    assert!(matches!(error.status(), Some(403 | 404)), "{error:?}");
}

#[tokio::test]
async fn a_wrong_secret_is_the_stores_401() {
    let Some(store) = store() else { return };
    let error = store
        .get_signed_as(
            "/products/1",
            &[],
            &padded("admintoken", 'a'),
            "not-the-secret",
        )
        .await
        .unwrap_err();
    let BackendError::Status { status, error } = &error else {
        panic!("a status: {error:?}")
    };
    assert_eq!(*status, 401);
    assert!(
        error.text().contains("signature_invalid"),
        "{}",
        error.text()
    );
}

#[tokio::test]
async fn a_product_is_created_read_and_deleted() {
    let Some(store) = store() else { return };
    if std::env::var_os("STOREGATE_TEST_OPENMAGE_WRITES").is_none_or(|v| v != "1") {
        return;
    }
    let sku = format!("storegate-live-{}", std::process::id());
    let id = store
        .create(
            "/products",
            &json!({
                "type_id": "simple", "attribute_set_id": 4, "sku": sku,
                "name": "storegate live test", "price": 1.5, "status": 2, "visibility": 1,
                "weight": 1, "tax_class_id": 0,
                "description": "d", "short_description": "s"
            }),
        )
        .await
        .unwrap();
    let product: Value = store
        .get_json(&format!("/products/{id}"), &[])
        .await
        .unwrap();
    assert_eq!(product["sku"], sku.as_str(), "{product}");
    let written = store
        .delete(&format!("/products/{id}"), None)
        .await
        .unwrap();
    assert_eq!(written.status, 200);
    let error = store
        .get(&format!("/products/{id}"), &[])
        .await
        .unwrap_err();
    assert!(error.is_not_found(), "{error:?}");
}

/// The adapter behind the port, on the seeded store (store view 2 is `de`).
fn adapter() -> Option<storegate::backend::openmage::OpenMageBackend> {
    use storegate::backend::openmage::{OpenMageBackend, View};
    let client = store()?;
    let url = std::env::var("STOREGATE_TEST_OPENMAGE_URL").ok()?;
    let views = vec![
        View {
            id: 1,
            code: "default".into(),
            website_id: 1,
        },
        View {
            id: 2,
            code: "de".into(),
            website_id: 1,
        },
    ];
    Some(OpenMageBackend::new(client, &url, views))
}

#[tokio::test]
async fn the_adapter_reads_products_pages_and_renderings() {
    use storegate::backend::port::{Catalog, Media, ProductRecords, Scope, SearchCriteria};
    let Some(backend) = adapter() else { return };
    let skus = backend.skus_of(&[1, 2]).await.unwrap();
    assert_eq!(skus.len(), 2, "{skus:?}");
    let sku = skus.iter().find(|p| p.id == 1).unwrap().sku.clone();
    let raw = backend.product(Scope::Default, &sku).await.unwrap();
    let product: Value = serde_json::from_slice(&raw).unwrap();
    assert_eq!(product["id"], 1);
    assert_eq!(backend.assignments(&product).website_ids, [1]);
    assert!(backend.on_website(&product, 1) && !backend.on_website(&product, 9));
    let german = backend.product(Scope::Store("de"), &sku).await.unwrap();
    let german: Value = serde_json::from_slice(&german).unwrap();
    assert_ne!(german["name"], product["name"], "store view values");
    // Five products, two a page: page 3 holds one, page 4 is past the end.
    let page = |n| SearchCriteria::new().page(2, n);
    let read = |page: storegate::backend::port::Page| page.read().unwrap();
    let third = read(backend.search_products(Scope::All, &page(3)).await.unwrap());
    assert_eq!((third.items.len(), third.total_count), (1, 5));
    let fourth = read(backend.search_products(Scope::All, &page(4)).await.unwrap());
    // Past the end the store repeats its last page; the page is empty here, its total no
    // more than the offset (the store tells no count).
    assert!(
        fourth.items.is_empty() && fourth.total_count <= 6,
        "{fourth:?}"
    );
    let one = SearchCriteria::new().filter("entity_id", "2", "eq");
    let items = backend.render(1, "", &one, None).await.unwrap().items;
    assert_eq!(items[0]["id"], 2);
    let (without, with) = backend.final_prices(&items[0]);
    assert!(without.is_some() && with.is_some(), "{}", items[0]);
    let images = backend
        .product_gallery(Scope::All, &sku, Some(0))
        .await
        .unwrap();
    let images = backend.images(&serde_json::from_slice(&images).unwrap());
    assert_eq!(images.len(), 2, "{images:?}");
}

#[tokio::test]
async fn the_adapter_reads_stock_customers_and_orders() {
    use storegate::backend::port::{Catalog, Orders, People, SearchCriteria, Stock};
    let Some(backend) = adapter() else { return };
    let sku = backend.skus_of(&[1]).await.unwrap()[0].sku.clone();
    let item: Value = serde_json::from_slice(&backend.stock_item(&sku).await.unwrap()).unwrap();
    // A page larger than the store serves (100) is read in its pages, and ends.
    let all = backend
        .stock_items_page(None, 1, 300)
        .await
        .unwrap()
        .read()
        .unwrap();
    assert_eq!((all.items.len(), all.total_count), (5, 5), "{all:?}");
    let past = backend
        .stock_items_page(None, 2, 300)
        .await
        .unwrap()
        .read()
        .unwrap();
    assert!(past.items.is_empty(), "{past:?}");
    assert_eq!(item["product_id"], "1", "{item}");
    let customer = backend.customer(1).await.unwrap();
    assert_eq!(customer["id"], 1);
    let addresses = customer["addresses"].as_array().unwrap();
    assert!(
        addresses.iter().all(|a| a["customer_id"] == 1),
        "{customer}"
    );
    assert_eq!(customer["default_billing"], "1", "{customer}");
    let orders = backend
        .search_orders(
            &SearchCriteria::new()
                .filter("customer_id", "1", "eq")
                .page(10, 1),
        )
        .await
        .unwrap();
    assert!(!orders.items.is_empty());
    let order = backend.order(1).await.unwrap();
    let parts = backend.order_parts(&order);
    let kinds: Vec<&str> = parts.addresses.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(kinds, ["billing", "shipping"], "{order}");
}

/// `storegate cassette drift` against the live store, signed as the gateway signs: reads
/// recorded from the store now answer as recorded (exit 0); a recorded field that the store
/// answers otherwise (here the cassette's product name, as if the store had renamed it since:
/// the shared store is not written) is named with its endpoint (exit 1).
#[tokio::test]
async fn drift_against_the_live_store() {
    use std::sync::Arc;
    use storegate::backend::recording::library::Library;
    use storegate::backend::recording::recorder::Recorder;
    use storegate::backend::transport::{HttpTransport, Transport};
    use storegate::config::Recording;

    let Ok(url) = std::env::var("STOREGATE_TEST_OPENMAGE_URL") else {
        return;
    };
    let url = url.trim().trim_end_matches('/').to_owned();
    if url.is_empty() {
        return;
    }
    storegate::backend::transport::install_crypto();
    let dir = std::env::temp_dir().join(format!("storegate-live-drift-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let timeout = Duration::from_secs(30);
    let wires = storegate::backend::registry::WIRES;
    let scrubber =
        storegate::backend::recording::scrubber(&Recording::default(), &[], wires).unwrap();
    let inner: Arc<dyn Transport> =
        Arc::new(HttpTransport::without_redirects(&url, timeout).unwrap());
    let recorder = Recorder::new(
        inner,
        Arc::new(Library::for_recording(&dir, wires).unwrap()),
        Arc::new(scrubber),
    );
    let credentials = Credentials {
        consumer_key: Secret::new("k".repeat(32)),
        consumer_secret: Secret::new("s".repeat(32)),
        token: Secret::new(padded("admintoken", 'a')),
        token_secret: Secret::new(padded("adminsecret", 'a')),
    };
    let store = OpenMage::new(&url, credentials, timeout, "default")
        .unwrap()
        .with_transport(Arc::new(recorder));
    let _: Value = store.get_json("/products/1", &[]).await.unwrap();
    let _: Value = store.get_json("/stockitems/1", &[]).await.unwrap();

    let drift = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_storegate"))
            .env("STOREGATE_DATA_DIR", dir.join("data"))
            .env_remove("STOREGATE_UPSTREAM_URL")
            .env("STOREGATE_BACKEND", "openmage")
            .env("STOREGATE_REPLAY_UPSTREAM_URL", &url)
            .env("STOREGATE_UPSTREAM_TOKEN", padded("admintoken", 'a'))
            .env("STOREGATE_UPSTREAM_CONSUMER_KEY", "k".repeat(32))
            .env("STOREGATE_UPSTREAM_CONSUMER_SECRET", "s".repeat(32))
            .env(
                "STOREGATE_UPSTREAM_TOKEN_SECRET",
                padded("adminsecret", 'a'),
            )
            .args(["cassette", "drift"])
            .arg(&dir)
            .output()
            .unwrap()
    };
    let output = drift();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("drift: 0 of 2"), "{stdout}");

    let file = dir.join("get.api.rest.products.{}.json");
    let mut cassette: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    cassette["interactions"][0]["response"]["body"]["name"] = json!("A Name From Before");
    std::fs::write(&file, serde_json::to_string_pretty(&cassette).unwrap()).unwrap();
    let output = drift();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("GET /api/rest/products/{}: 1 recorded request"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  name (value) in 1: recorded \"A Name From Before\""),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
