//! Mappings are data: editing a file changes responses with no rebuild, and a bad file
//! stops the start with the file and line named.

use serde_json::Value;

use crate::helpers::*;

async fn mount_catalog(gw: &Gateway) {
    mount_product_1(&gw.upstream).await;
    mount_category_4(&gw.upstream).await;
}

#[tokio::test]
async fn editing_a_mapping_changes_responses_without_a_rebuild() {
    // The shipped mapping first.
    let gw = Gateway::start().await;
    mount_catalog(&gw).await;
    let before = gw
        .get_json("/products/category/4", &Who::Guest)
        .await
        .json();
    assert!(before[0].get("weight").is_some());
    let admin = gw.get_json("/products/1", &Who::Admin).await.json();
    assert!(admin.get("has_options").is_none());

    // Hide weight from guests, expose a custom attribute to admins.
    let dir = edited_mappings("mappings", "product.toml", |text| {
        let guest_start = text.find("[view.guest]").unwrap();
        let (head, guest) = text.split_at(guest_start);
        let guest = guest.replace(
            "\"tax_class_id\", \"weight\", \"price\"]",
            "\"tax_class_id\", \"price\"]",
        );
        let head = head
            .replace(
                "[fields]\n",
                "[fields]\nhas_options = { source = \"product.custom_attributes.has_options\", type = \"flag\" }\n",
            )
            .replace(
                "\"stock_data\", \"created_at\",",
                "\"stock_data\", \"has_options\", \"created_at\",",
            );
        format!("{head}{guest}")
    });

    let edited = Gateway::start_with(|c| c.mappings = Some(dir.clone())).await;
    mount_catalog(&edited).await;
    let after = edited
        .get_json("/products/category/4", &Who::Guest)
        .await
        .json();
    assert!(after[0].get("weight").is_none(), "{after}");
    assert!(after[0].get("price").is_some());
    // Admins still see weight in the same list.
    let admin_list = edited
        .get_json("/products/category/4", &Who::Admin)
        .await
        .json();
    assert!(admin_list[0].get("weight").is_some());
    let admin = edited.get_json("/products/1", &Who::Admin).await.json();
    assert_eq!(admin["has_options"], Value::String("1".into()));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_bad_mapping_is_refused_with_file_and_line() {
    let dir = temp_dir("bad-mappings");
    copy_mappings(&dir);
    let file = dir.join("product.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replacen("\"sku\", \"status\"", "\"sku\", \"statuz\"", 1),
    )
    .unwrap();
    let config = storegate::config::Config {
        mappings: Some(dir.clone()),
        ..test_config()
    };
    let error = storegate::load_mappings(&config).unwrap_err().to_string();
    assert!(error.starts_with(&file.display().to_string()), "{error}");
    assert!(
        error.contains(" line ") && error.contains("unknown field \"statuz\""),
        "{error}"
    );

    std::fs::write(
        &file,
        text.replacen("type = \"decimal4\"", "type = \"money\"", 1),
    )
    .unwrap();
    let error = storegate::load_mappings(&config).unwrap_err().to_string();
    assert!(error.contains("line") && error.contains("money"), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}
