//! Stock items (SPEC 4.1): the list and one item, for the Admin only.

use super::*;

#[tokio::test]
async fn the_admin_reads_stock_items_and_no_one_else() {
    let stack = Stack::start("stock-items").await;
    let list = stack
        .same_as_store(Who::Admin, "/stockitems", &Known::NONE)
        .await;
    let list = list.as_array().unwrap_or_else(|| panic!("{list}"));
    assert_eq!(list.len(), 5, "{list:?}");
    let one = stack
        .same_as_store(Who::Admin, "/stockitems/1", &Known::NONE)
        .await;
    assert_eq!(one["item_id"], "1");
    assert_eq!(one["product_id"], "1");
    assert_eq!(one["qty"], "98.0000", "{one}");
    assert_eq!(one["is_in_stock"], "1");
    let three = stack
        .same_as_store(Who::Admin, "/stockitems/3", &Known::NONE)
        .await;
    assert_eq!(
        three["is_in_stock"], "0",
        "product 3 is out of stock: {three}"
    );
    stack
        .same_as_store(Who::Admin, "/stockitems/999", &Known::NONE)
        .await;

    let xml = stack.get_xml(Who::Admin, "/stockitems/1").await;
    assert_eq!(xml.status, 200, "{}", xml.body);
    assert_eq!(xml_text(&xml.body, "item_id"), Some("1"));
    assert_eq!(xml_text(&xml.body, "qty"), Some("98.0000"));

    for who in [Who::Customer, Who::Guest] {
        for path in ["/stockitems", "/stockitems/1"] {
            let refused = stack.get(who, path).await;
            assert_eq!(refused.status, 403, "{who:?} {path}: {}", refused.body);
        }
    }
    stack.stop().await;
}
