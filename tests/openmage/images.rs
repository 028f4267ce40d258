//! Product images (SPEC 4.3): the list, one image, and both per store view, for every user
//! type.

use super::*;

#[tokio::test]
async fn images_for_every_user_type() {
    let stack = Stack::start("images").await;
    for who in [Who::Admin, Who::Customer, Who::Guest] {
        let known = &Known::NONE;
        let list = stack.same_as_store(who, "/products/1/images", known).await;
        let list = list.as_array().unwrap_or_else(|| panic!("{who:?}: {list}"));
        assert_eq!(list.len(), 2, "{who:?}: {list:?}");
        assert!(
            list[0]["url"]
                .as_str()
                .is_some_and(|u| u.ends_with("/media/catalog/product/r/e/red.png")),
            "{who:?}: {list:?}"
        );
        assert_eq!(
            list[0]["types"],
            serde_json::json!(["image", "small_image", "thumbnail"])
        );
        let one = stack
            .same_as_store(who, "/products/1/images/1", known)
            .await;
        assert_eq!(one["id"], "1", "{who:?}: {one}");
        let per_store = stack
            .same_as_store(who, "/products/1/images/store/2", known)
            .await;
        assert_eq!(per_store.as_array().map(Vec::len), Some(2), "{who:?}");
        // A store view by its code, as the store takes it.
        let by_code = stack
            .same_as_store(who, "/products/1/images/store/de", known)
            .await;
        assert_eq!(by_code.as_array().map(Vec::len), Some(2), "{who:?}");
        let one = stack
            .same_as_store(who, "/products/1/images/2/store/2", known)
            .await;
        assert_eq!(one["id"], "2", "{who:?}: {one}");
        // A product without images.
        let none = stack.same_as_store(who, "/products/2/images", known).await;
        assert_eq!(none, serde_json::json!([]), "{who:?}");
    }
    let xml = stack.get_xml(Who::Guest, "/products/1/images/1").await;
    assert_eq!(xml.status, 200, "{}", xml.body);
    assert!(
        xml_text(&xml.body, "url").is_some_and(|u| u.ends_with("/r/e/red.png")),
        "{}",
        xml.body
    );
    stack.stop().await;
}

#[tokio::test]
async fn a_missing_image_is_404() {
    let stack = Stack::start("images-missing").await;
    // The store names the missing image to the Admin ("Product image not found") and tells
    // customers and guests only that the resource is not there: so does the gateway.
    for who in [Who::Admin, Who::Customer, Who::Guest] {
        stack
            .same_as_store(who, "/products/1/images/999", &Known::NONE)
            .await;
    }
    stack.stop().await;
}
