//! Products (SPEC 4.2): lists and single products for every user type, store views by id
//! and by code, category lists, a product's categories and websites, the 404.

use serde_json::Value;

use super::*;

// The differences below are the ones docs/openmage-mappings.md explains: the gateway shows
// SPEC 2.2's fields with empty values as null where the store leaves the field out, `stock_data` has SPEC 2.2's `use_config_enable_qty_increments`, and
// `buy_now_url` carries a session's form key (the store's changes on every call, and encodes the URL it was called at).

/// The Admin's lists (`/products`, a store view's, a category's).
const ADMIN_LIST: Known = Known {
    gateway_only: &[
        "*.gift_message_available",
        "*.msrp_display_actual_price_type",
        "*.news_from_date",
        "*.news_to_date",
        "*.special_price",
        "*.special_to_date",
    ],
    ..Known::NONE
};

/// The Admin's product 1 (no special price).
const ADMIN_SINGLE: Known = Known {
    gateway_only: &[
        "gift_message_available",
        "msrp_display_actual_price_type",
        "special_price",
        "stock_data.use_config_enable_qty_increments",
    ],
    ..Known::NONE
};

/// The Admin's product 2, which has a special price.
const ADMIN_SPECIAL: Known = Known {
    gateway_only: &[
        "gift_message_available",
        "msrp_display_actual_price_type",
        "stock_data.use_config_enable_qty_increments",
    ],
    ..Known::NONE
};

/// A category's products in store view 2 for the Admin: the store's index for the view,
/// which also holds product 5 (the anchor root category holds it).
const ADMIN_CATEGORY_IN_STORE: Known = ADMIN_LIST;

/// A shopper's lists (`/products`, a category's): the store's own Guest list, so out-of-stock
/// product 3 is left out as the store leaves it out (read singly it is there: 200,
/// is_saleable "0").
const SHOPPER_LIST: Known = Known::NONE;

/// A shopper's single product.
const SHOPPER_SINGLE: Known = Known {
    differ: &["buy_now_url"],
    ..Known::NONE
};

/// A shopper's product 2, which has a tier price: the store's own.
const SHOPPER_TIERED: Known = Known {
    differ: &["buy_now_url"],
    ..Known::NONE
};

fn name_of(list: &Value, id: &str) -> String {
    list[id]["name"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn admin_reads_products() {
    let stack = Stack::start("products-admin").await;
    let admin = Who::Admin;

    let list = stack.same_as_store(admin, "/products", &ADMIN_LIST).await;
    let ids: Vec<&String> = list.as_object().unwrap().keys().collect();
    assert_eq!(
        ids,
        ["1", "2", "3", "4", "5"],
        "the Admin sees every product"
    );
    assert_eq!(list["1"]["sku"], "TP-1");
    assert_eq!(name_of(&list, "1"), "Test Product One");
    assert_eq!(list["4"]["status"], "2", "product 4 is disabled");
    // The original's Admin list carries the attribute set (issue 36).
    assert_eq!(list["1"]["attribute_set_id"], "4", "{list}");

    let one = stack
        .same_as_store(admin, "/products/1", &ADMIN_SINGLE)
        .await;
    assert_eq!(
        (&one["entity_id"], &one["sku"], &one["name"], &one["price"]),
        (
            &Value::from("1"),
            &Value::from("TP-1"),
            &Value::from("Test Product One"),
            &Value::from("19.9900")
        )
    );
    assert_eq!(one["stock_data"]["is_in_stock"], "1");

    // Group and tier prices: the Admin's lists, as the store has them.
    let two = stack
        .same_as_store(admin, "/products/2", &ADMIN_SPECIAL)
        .await;
    assert_eq!(two["sku"], "TP-2");
    assert_eq!(two["group_price"][0]["cust_group"], "1", "{two}");
    assert_eq!(two["group_price"][0]["price"], "47.0000", "{two}");
    assert_eq!(two["tier_price"][0]["price_qty"], "5.0000", "{two}");
    assert_eq!(two["tier_price"][0]["price"], "45.0000", "{two}");
    assert_eq!(
        two["tier_price"][0]["cust_group"], 32000,
        "all groups: {two}"
    );

    // Store view 2 (`de`), by id and by code: its own name.
    let de = stack
        .same_as_store(admin, "/products/1/store/2", &ADMIN_SINGLE)
        .await;
    assert_eq!(de["name"], "Testprodukt Eins");
    let by_code = stack
        .same_as_store(admin, "/products/1/store/de", &ADMIN_SINGLE)
        .await;
    assert_eq!(by_code, de, "store view by code and by id");
    let de_list = stack
        .same_as_store(admin, "/products/store/2", &ADMIN_LIST)
        .await;
    assert_eq!(name_of(&de_list, "1"), "Testprodukt Eins");

    // XML: the original's root element for an app of the original.
    let xml = stack.get_xml(admin, "/products/1").await;
    assert_eq!(xml.status, 200, "{}", xml.body);
    xml.assert_contains("<magento_api>");
    assert_eq!(xml_text(&xml.body, "sku"), Some("TP-1"));
    assert_eq!(xml_text(&xml.body, "name"), Some("Test Product One"));
    assert_eq!(xml_text(&xml.body, "price"), Some("19.9900"));
    stack.stop().await;
}

#[tokio::test]
async fn shoppers_read_products() {
    let stack = Stack::start("products-shoppers").await;

    let list = stack
        .same_as_store(Who::Guest, "/products", &SHOPPER_LIST)
        .await;
    assert_eq!(name_of(&list, "1"), "Test Product One");
    assert_eq!(list["2"]["final_price_with_tax"], 39.95);
    assert!(list.get("4").is_none(), "a disabled product is not listed");

    // Product 2's special price, as the store computes it for guests.
    let two = stack
        .same_as_store(Who::Guest, "/products/2", &SHOPPER_TIERED)
        .await;
    assert_eq!(two["sku"], "TP-2");
    assert_eq!(two["final_price_with_tax"], 39.95);
    assert_eq!(two["final_price_without_tax"], 39.95);
    assert_eq!(two["regular_price_with_tax"], 49.5);
    assert_eq!(two["tier_price"][0]["price_with_tax"], 45, "{two}");
    assert!(two.get("group_price").is_none(), "{two}");
    assert!(two.get("price").is_none(), "{two}");

    let one = stack
        .same_as_store(Who::Guest, "/products/1", &SHOPPER_SINGLE)
        .await;
    assert_eq!(one["name"], "Test Product One");
    assert_eq!(one["is_in_stock"], "1");
    assert_eq!(one["final_price_with_tax"], 19.99);

    // Out of stock: readable singly, not saleable.
    let three = stack
        .same_as_store(Who::Guest, "/products/3", &SHOPPER_SINGLE)
        .await;
    assert_eq!(
        (&three["is_in_stock"], &three["is_saleable"]),
        (&Value::from("0"), &Value::from("0"))
    );

    let de = stack
        .same_as_store(Who::Guest, "/products/1/store/2", &SHOPPER_SINGLE)
        .await;
    assert_eq!(de["name"], "Testprodukt Eins");
    let by_code = stack
        .same_as_store(Who::Guest, "/products/1/store/de", &SHOPPER_SINGLE)
        .await;
    assert_eq!(by_code["name"], "Testprodukt Eins");
    // The store's Guest list in store view 2 (its names are the default store's: the
    // store's own quirk, kept).
    let de_list = stack
        .same_as_store(Who::Guest, "/products/store/2", &SHOPPER_LIST)
        .await;
    assert!(
        de_list.get("3").is_none() && de_list.get("4").is_none(),
        "{de_list}"
    );

    let customer_list = stack
        .same_as_store(Who::Customer, "/products", &SHOPPER_LIST)
        .await;
    assert_eq!(name_of(&customer_list, "2"), "Test Product Two");
    let customer_one = stack
        .same_as_store(Who::Customer, "/products/2", &SHOPPER_TIERED)
        .await;
    assert_eq!(customer_one["sku"], "TP-2");
    assert!(customer_one.get("stock_data").is_none());

    for who in [Who::Guest, Who::Customer] {
        let xml = stack.get_xml(who, "/products/2").await;
        assert_eq!(xml.status, 200, "{}", xml.body);
        xml.assert_contains("<magento_api>");
        assert_eq!(xml_text(&xml.body, "sku"), Some("TP-2"));
        assert_eq!(xml_text(&xml.body, "final_price_with_tax"), Some("39.95"));
    }
    stack.stop().await;
}

/// A guest in the contract's profile (the gateway's default): SPEC.md's forms, not the
/// store's.
#[tokio::test]
async fn guests_in_the_contracts_profile() {
    let stack = Stack::start_with("products-spec", &[("STOREGATE_PROFILE", "spec")]).await;
    let two = stack.get(Who::Guest, "/products/2").await;
    assert_eq!(two.status, 200, "{}", two.body);
    let two = two.json();
    assert_eq!(two["final_price_with_tax"], 39.95);
    // SPEC 2.4's form, `YYYY-MM-DD HH:MM:SS` (the value is the seed's, which a new seed
    // changes).
    let created = two["created_at"].as_str().unwrap_or_default();
    assert!(
        created.len() == 19
            && created.char_indices().all(|(i, c)| match i {
                4 | 7 => c == '-',
                10 => c == ' ',
                13 | 16 => c == ':',
                _ => c.is_ascii_digit(),
            }),
        "SPEC 2.4's form: {two}"
    );
    let list = stack.get(Who::Guest, "/products").await.json();
    assert_eq!(list["1"]["is_saleable"], "1", "{list}");
    let category = stack.get(Who::Guest, "/products/category/2").await.json();
    let first = &category.as_array().unwrap_or_else(|| panic!("{category}"))[0];
    assert_eq!(
        first.as_object().unwrap().keys().collect::<Vec<_>>(),
        crate::common::spec::CATEGORY_LIST_FIELDS,
        "SPEC 2.2's category list fields: {category}"
    );
    // The contract lets guests list orders: none are theirs (the store answers 403).
    let orders = stack.get(Who::Guest, "/orders").await;
    assert_eq!((orders.status, orders.json()), (200, serde_json::json!({})));
    let xml = stack.get_xml(Who::Guest, "/products/2").await;
    xml.assert_contains("<service_api>");
    assert_eq!(xml_text(&xml.body, "final_price_with_tax"), Some("39.95"));
    stack.stop().await;
}

#[tokio::test]
async fn category_lists() {
    let stack = Stack::start("products-categories").await;
    let admin = stack
        .same_as_store(Who::Admin, "/products/category/2", &ADMIN_LIST)
        .await;
    let mut ids: Vec<&String> = admin.as_object().unwrap().keys().collect();
    ids.sort();
    assert_eq!(ids, ["1", "2", "3"]);
    let guest = stack
        .same_as_store(Who::Guest, "/products/category/2", &SHOPPER_LIST)
        .await;
    assert!(guest.get("1").is_some(), "{guest}");
    let in_store = stack
        .same_as_store(
            Who::Admin,
            "/products/category/2/store/2",
            &ADMIN_CATEGORY_IN_STORE,
        )
        .await;
    let ids: Vec<&String> = in_store.as_object().unwrap().keys().collect();
    assert_eq!(ids, ["5", "2", "1", "3"], "the store view's positions");
    stack
        .same_as_store(
            Who::Admin,
            "/products/store/2/category/2",
            &ADMIN_CATEGORY_IN_STORE,
        )
        .await;
    stack.stop().await;
}

#[tokio::test]
async fn a_products_categories_and_websites() {
    let stack = Stack::start("products-links").await;
    for who in [Who::Admin, Who::Customer, Who::Guest] {
        let categories = stack
            .same_as_store(who, "/products/1/categories", &Known::NONE)
            .await;
        assert_eq!(categories[0]["category_id"], "2", "{who:?}: {categories}");
    }
    let websites = stack
        .same_as_store(Who::Admin, "/products/1/websites", &Known::NONE)
        .await;
    assert_eq!(websites[0]["website_id"], "1");
    for who in [Who::Customer, Who::Guest] {
        let refused = stack.get(who, "/products/1/websites").await;
        assert_eq!(refused.status, 403, "{who:?}: {}", refused.body);
    }
    stack.stop().await;
}

#[tokio::test]
async fn a_missing_product_is_404_for_everyone() {
    let stack = Stack::start("products-missing").await;
    for who in [Who::Admin, Who::Customer, Who::Guest] {
        stack
            .same_as_store(who, "/products/999", &Known::NONE)
            .await;
        let reply = stack.get(who, "/products/999").await;
        assert_eq!(reply.status, 404);
        assert_eq!(reply.message(), "Resource not found.");
        let xml = stack.get_xml(who, "/products/999").await;
        assert_eq!(xml.status, 404);
        xml.assert_contains("Resource not found.");
    }
    // Disabled: not there for shoppers.
    stack
        .same_as_store(Who::Guest, "/products/4", &Known::NONE)
        .await;
    stack.stop().await;
}
