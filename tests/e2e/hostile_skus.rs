//! SKUs that are not safe in a URL path (issue 12): `.` and `..`, which URL parsers and web
//! servers resolve as dot segments, and `/`, `%2F`, `?`, `#`, spaces, unicode. Each one must
//! reach Magento as exactly one path segment, naming that product and nothing else.

use std::time::Duration;

use serde_json::{Value, json};
use storegate::backend::magento2::{Magento, Scope};
use storegate::backend::port::{
    Catalog, Image, ImageChange, ImageFile, Media, NewImage, ProductDraft, Stock,
};
use storegate_sandbox::SandboxOptions;

use crate::harness::Stack;

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

const HOSTILE: &[&str] = &[
    ".", "..", "/", "%2F", "?", "#", "a b c", "é/ü", "a/../b", "..%2F",
];

fn sku_of(bytes: &[u8]) -> String {
    let value: Value = serde_json::from_slice(bytes).unwrap();
    value["sku"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn every_sku_path_of_the_client_names_that_product_and_nothing_else() {
    storegate::backend::transport::install_crypto();
    let sandbox = crate::common::gateway::start_sandbox(SandboxOptions::default()).await;
    let magento = Magento::new(
        &sandbox.base_url(),
        sandbox.token(),
        Duration::from_secs(5),
        "default",
    )
    .unwrap();
    let other = magento.product(Scope::Default, "24-MB01").await.unwrap();
    for (i, &sku) in HOSTILE.iter().enumerate() {
        let created = magento
            .create_product(ProductDraft {
                record: json!({
                    "sku": sku, "name": format!("Hostile {i}"), "attribute_set_id": 4,
                    "type_id": "simple", "price": 1, "status": 1, "visibility": 4,
                    "custom_attributes": [{"attribute_code": "url_key", "value": format!("hostile-{i}")}],
                    "extension_attributes": {"stock_item": {"qty": 3, "is_in_stock": true}}
                }),
                ..ProductDraft::default()
            })
            .await
            .unwrap_or_else(|e| panic!("create {sku:?}: {e}"));
        assert_eq!(created["sku"], sku);

        let read = magento.product(Scope::Default, sku).await.unwrap();
        assert_eq!(sku_of(&read), sku, "read {sku:?}");
        let updated = magento
            .update_product(
                Scope::All,
                sku,
                ProductDraft {
                    record: json!({"name": format!("Renamed {i}")}),
                    ..ProductDraft::default()
                },
            )
            .await
            .unwrap_or_else(|e| panic!("update {sku:?}: {e}"));
        assert_eq!(updated["sku"], sku);
        let read = magento
            .product_gallery(Scope::Default, sku, None)
            .await
            .unwrap();
        assert_eq!(sku_of(&read), sku);

        let item: Value = serde_json::from_slice(&magento.stock_item(sku).await.unwrap()).unwrap();
        let item_id = item["item_id"].as_u64().unwrap();
        magento
            .update_stock_item(sku, item_id, json!({"qty": 7, "is_in_stock": true}))
            .await
            .unwrap_or_else(|e| panic!("stock {sku:?}: {e}"));

        let image = magento
            .add_image(
                Scope::All,
                sku,
                NewImage {
                    file: ImageFile {
                        base64: PNG.into(),
                        mime: "image/png",
                        name: "x.png".into(),
                    },
                    label: None,
                    position: 1,
                    exclude: false,
                    types: Vec::new(),
                },
            )
            .await
            .unwrap_or_else(|e| panic!("add image {sku:?}: {e}"));
        let added = Image {
            id: image,
            file: String::new(),
            label: Value::Null,
            position: Some(1),
            exclude: false,
            types: Vec::new(),
            record: json!({}),
        };
        magento
            .update_image(
                Scope::All,
                sku,
                &added,
                ImageChange {
                    label: Some(json!("L")),
                    ..ImageChange::default()
                },
            )
            .await
            .unwrap_or_else(|e| panic!("update image {sku:?}: {e}"));
        magento.remove_image(Scope::All, sku, &added).await.unwrap();

        magento
            .delete_product(sku)
            .await
            .unwrap_or_else(|e| panic!("delete {sku:?}: {e}"));
        assert!(magento.product(Scope::Default, sku).await.is_err());
        // Nothing else was touched.
        assert_eq!(
            magento.product(Scope::Default, "24-MB01").await.unwrap(),
            other,
            "after {sku:?}"
        );
    }
    sandbox.shutdown().await;
}

#[tokio::test]
async fn products_with_skus_dot_and_dot_dot_are_themselves_through_the_gateway() {
    let stack = Stack::start().await;
    let first = stack.admin_json("/products/1").await;
    let count = |list: Value| list.as_object().map_or(0, |m| m.len());
    let before = count(stack.admin_json("/products?limit=100").await);
    let product = |sku: &str, name: &str, price: &str| {
        json!({
            "type_id": "simple", "attribute_set_id": 4, "sku": sku,
            "name": name, "price": price, "weight": "1", "status": 1,
            "visibility": 4, "tax_class_id": 2, "description": "d",
            "short_description": "d", "stock_data": {"qty": 1, "is_in_stock": 1}
        })
    };
    for (n, sku) in [".", ".."].into_iter().enumerate() {
        let mut dot = product(sku, "Dot", "1.00");
        dot["url_key"] = json!(format!("dot-{n}"));
        let r = stack.admin("POST", "/products", Some(dot)).await;
        assert_eq!(r.status, 200, "create {sku:?}: {}", r.body);
        let id = r.created_id();
        let read = stack.admin("GET", &format!("/products/{id}"), None).await;
        assert_eq!(read.status, 200, "{}", read.body);
        assert_eq!(read.json()["sku"], sku);

        // A second create of the same SKU is refused, not an overwrite.
        let other = product(sku, "Other", "2.00");
        let again = stack.admin("POST", "/products", Some(other)).await;
        assert_eq!(again.status, 400, "{}", again.body);

        let r = stack.rename_product(&id, "Dot renamed").await;
        assert_eq!(r.status, 200, "{}", r.body);
        let read = stack.admin_json(&format!("/products/{id}")).await;
        assert_eq!(
            (read["sku"].as_str(), read["name"].as_str()),
            (Some(sku), Some("Dot renamed"))
        );
        assert_eq!(
            count(stack.admin_json("/products?limit=100").await),
            before + 1
        );

        let r = stack
            .admin("DELETE", &format!("/products/{id}"), None)
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        let gone = stack.admin("GET", &format!("/products/{id}"), None).await;
        assert_eq!(gone.status, 404, "{}", gone.body);
        assert_eq!(count(stack.admin_json("/products?limit=100").await), before);
        assert_eq!(stack.admin_json("/products/1").await, first);
    }
    let paths: Vec<String> = stack.exchanges().into_iter().map(|e| e.path).collect();
    assert!(
        paths.iter().any(|p| p.ends_with("/V1/products/%2E%2E")),
        "{paths:?}"
    );
    assert!(
        paths.iter().any(|p| p.ends_with("/V1/products/%2E")),
        "{paths:?}"
    );
    assert!(
        !paths
            .iter()
            .any(|p| p.ends_with("/V1/") || p.ends_with("/V1/products/")),
        "{paths:?}"
    );
}
