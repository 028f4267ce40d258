//! `STOREGATE_PROFILE`: every behaviour the `original` profile switches, asked of a gateway
//! in each profile (issue 11). The README's profile table lists the same rows.

use serde_json::{Value, json};
use storegate::context::profile::Profile;
use wiremock::Mock;
use wiremock::matchers::{method, path, query_param};

use crate::helpers::*;

const BOTH: [Profile; 2] = [Profile::Spec, Profile::Original];

/// A GET with no header but `Host`, answered head first.
async fn raw_get(gw: &Gateway, target: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(gw.running.addr)
        .await
        .unwrap();
    let request = format!("GET {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(5),
        stream.read_to_end(&mut answer),
    )
    .await
    .expect("the gateway answers in time")
    .unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}

async fn gateway(profile: Profile) -> Gateway {
    Gateway::start_with(|c| c.profile = profile).await
}

#[tokio::test]
async fn xml_root_element() {
    for profile in BOTH {
        let gw = crate::products::mount_catalog(gateway(profile).await).await;
        let root = match profile {
            Profile::Spec => "service_api",
            Profile::Original => "magento_api",
        };
        let r = gw.get_xml("/products/1", &Who::Guest).await;
        assert!(
            r.body
                .starts_with(&format!("<?xml version=\"1.0\"?>\n<{root}><entity_id>1")),
            "{profile:?}: {}",
            r.body
        );
        assert!(r.body.ends_with(&format!("</{root}>")), "{}", r.body);
        // Errors too, and the fast path's repeat of a cached answer.
        let r = gw.get_xml("/products/1", &Who::Guest).await;
        assert_eq!(r.header("x-cache"), Some("HIT"));
        r.assert_contains(&format!("<{root}><entity_id>"));
        let r = gw.get_xml("/nowhere", &Who::Guest).await;
        assert!(
            r.body.contains(&format!("<{root}><messages>")),
            "{profile:?}: {}",
            r.body
        );
    }
}

#[tokio::test]
async fn accept_any_media_type() {
    for (profile, expected) in [
        (Profile::Spec, "application/xml; charset=utf-8"),
        (Profile::Original, "application/json; charset=utf-8"),
    ] {
        let gw = crate::products::mount_catalog(gateway(profile).await).await;
        for _ in 0..2 {
            let r = gw
                .send_raw(
                    gw.request("GET", "/products/1", &Who::Guest)
                        .header("Accept", "*/*"),
                )
                .await;
            assert_eq!(r.status, 200, "{}", r.body);
            assert_eq!(r.header("content-type"), Some(expected), "{profile:?}");
        }
        // No Accept at all: the same as `*/*` (the original's plain 500 is not copied; its
        // documented default is JSON). An HTTP client library adds `Accept: */*`, so this
        // one is written by hand.
        let head = raw_get(&gw, "/api/rest/products/1").await;
        assert!(
            head.to_ascii_lowercase()
                .contains(&format!("content-type: {expected}")),
            "{profile:?}: {head}"
        );
    }
}

#[tokio::test]
async fn product_json_types() {
    for profile in BOTH {
        let gw = crate::products::mount_catalog(gateway(profile).await).await;
        Mock::given(method("GET"))
            .and(path("/rest/default/V1/products"))
            .respond_with(recorded("products/list-by-entity-id-in"))
            .mount(&gw.upstream)
            .await;
        let list = gw.get_json("/products", &Who::Guest).await.json();
        let single = gw.get_json("/products/1", &Who::Guest).await.json();
        let admin = gw.get_json("/products/1", &Who::Admin).await.json();
        let admin_list = gw.get_json("/products", &Who::Admin).await.json();
        // A single product's is_saleable is "1" in both.
        assert_eq!(single["is_saleable"], "1");
        match profile {
            Profile::Spec => {
                assert_eq!(list["1"]["is_saleable"], "1");
                assert_eq!(admin["tier_price"][0]["cust_group"], "1");
                assert!(admin["tier_price"][0].get("is_percent").is_none());
                assert_eq!(admin["created_at"], "2024-04-02 14:10:05");
            }
            Profile::Original => {
                assert_eq!(list["1"]["is_saleable"], json!(true));
                // The original's types: one group's id a string, all groups the integer
                // 32000; a tier's is_percent an integer, a group price's a boolean.
                assert_eq!(admin["tier_price"][0]["cust_group"], "1");
                assert_eq!(admin["tier_price"][1]["cust_group"], json!(32000));
                assert_eq!(admin["tier_price"][1]["is_percent"], json!(1));
                assert_eq!(admin["group_price"][0]["cust_group"], json!(32000));
                assert!(admin["group_price"][0]["is_percent"].is_boolean());
                assert_eq!(admin["created_at"], "2024-04-02T14:10:05+00:00");
                assert_eq!(single["created_at"], "2024-04-02T14:10:05+00:00");
            }
        }
        // Lists keep the database form in both.
        assert_eq!(admin_list["1"]["created_at"], "2024-04-02 14:10:05");
    }
}

#[tokio::test]
async fn address_default_flags() {
    for (profile, yes, no) in [
        (Profile::Spec, json!("1"), json!("0")),
        (Profile::Original, json!(1), json!(0)),
    ] {
        let gw = crate::addresses::mount_addresses(gateway(profile).await).await;
        let r = gw
            .get_json("/customers/5/addresses", &Who::Customer(5))
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        let list = r.json();
        assert_eq!(list[0]["is_default_billing"], yes, "{profile:?}");
        assert_eq!(list[0]["is_default_shipping"], no, "{profile:?}");
    }
}

#[tokio::test]
async fn orders_in_xml_and_for_guests() {
    for profile in BOTH {
        let gw = crate::orders::mount_orders(gateway(profile).await).await;
        let r = gw.get_xml("/orders", &Who::Admin).await;
        assert_eq!(r.status, 200, "{}", r.body);
        match profile {
            Profile::Spec => {
                r.assert_contains("<service_api><data_item_31>");
                assert!(r.body.contains("</data_item_31><data_item_32>"));
            }
            Profile::Original => {
                r.assert_contains("<magento_api><data_item><customer_id>5</customer_id>");
                assert!(!r.body.contains("data_item_3"), "{}", r.body);
            }
        }
        // JSON stays keyed by id in both.
        let json = gw.get_json("/orders", &Who::Admin).await.json();
        assert!(json.get("31").is_some());
        let guest = gw.get_json("/orders", &Who::Guest).await;
        match profile {
            Profile::Spec => assert_eq!((guest.status, guest.json()), (200, json!({}))),
            Profile::Original => {
                guest.assert_error(403, "Access denied");
            }
        }
    }
}

#[tokio::test]
async fn category_list_shape() {
    for profile in BOTH {
        let gw = crate::products::mount_catalog(gateway(profile).await).await;
        crate::products::mount_category(&gw).await;
        for who in [Who::Admin, Who::Guest] {
            let r = gw.get_json("/products/category/4", &who).await;
            assert_eq!(r.status, 200, "{}", r.body);
            let list = r.json();
            match profile {
                Profile::Spec => {
                    assert_eq!(list[0]["entity_id"], "2");
                    assert_eq!(keys(&list[0]), crate::common::spec::CATEGORY_LIST_FIELDS);
                }
                Profile::Original => {
                    // The shape of /products: keyed by id, the caller's list fields, in
                    // the category's order.
                    assert_eq!(keys(&list), ["2", "1"], "{who:?}");
                    assert_eq!(list["1"]["sku"], "24-MB01");
                    if matches!(who, Who::Guest) {
                        assert_eq!(list["1"]["final_price_with_tax"], json!(36.85));
                        assert!(list["1"].get("attribute_set_id").is_none());
                    } else {
                        assert_eq!(list["1"]["special_price"], Value::Null);
                    }
                }
            }
        }
    }
}

#[tokio::test]
async fn stock_item_list_and_batch() {
    for profile in BOTH {
        let gw = crate::stock_items::mount_stock(gateway(profile).await).await;
        Mock::given(method("GET"))
            .and(path("/rest/default/V1/stockItems/lowStock/"))
            .and(query_param("pageSize", "3"))
            .respond_with(recorded("stock/low-stock-every-item-page-2-of-3"))
            .mount(&gw.upstream)
            .await;
        let list = gw
            .get_json("/stockitems?page=2&limit=3", &Who::Admin)
            .await
            .json();
        let fields = keys(&list[0]).len();
        match profile {
            Profile::Spec => assert!(fields < 25, "reduced set: {fields}"),
            Profile::Original => assert_eq!(fields, 25, "full record"),
        }
        crate::stock_items::mount_put(&gw, "stock/update-24-mb01").await;
        let sent = r#"[{"item_id": 15, "qty": 80}, {"item_id": 9999, "qty": 1}]"#;
        let r = gw
            .send_body("PUT", "/stockitems", &Who::Admin, "application/json", sent)
            .await;
        assert_eq!(r.status, 207);
        let unknown = &r.json()["error"][0];
        let sent = r#"[{"item_id": 15, "qty": 80}]"#;
        let ok = gw
            .send_body("PUT", "/stockitems", &Who::Admin, "application/json", sent)
            .await
            .json();
        match profile {
            Profile::Spec => {
                assert_eq!(unknown["code"], json!(404));
                assert_eq!(unknown["message"], "Resource not found.");
                assert_eq!(ok["error"], json!([]));
                assert_eq!(ok["success"][0]["item_id"], json!(15));
            }
            Profile::Original => {
                assert_eq!(unknown["code"], json!(400));
                assert_eq!(unknown["message"], "StockItem #9999 not found.");
                assert!(ok.get("error").is_none(), "{ok}");
                // The original named an updated item as the record it loaded: a string.
                assert_eq!(ok["success"][0]["item_id"], json!("15"));
                assert_eq!(unknown["item_id"], json!(9999));
            }
        }
    }
}

#[tokio::test]
async fn request_bodies_without_or_with_a_text_content_type() {
    for profile in BOTH {
        let gw = crate::stock_items::mount_stock(gateway(profile).await).await;
        crate::stock_items::mount_put(&gw, "stock/update-24-mb01").await;
        let missing = gw
            .send(
                gw.request("PUT", "/stockitems/15", &Who::Admin)
                    .body("<service_api><qty>80</qty></service_api>"),
            )
            .await;
        let sent = "qty=80";
        let plain = gw
            .send_body("PUT", "/stockitems/15", &Who::Admin, "text/plain", sent)
            .await;
        match profile {
            // SPEC: XML by default; text/plain is not a body format.
            Profile::Spec => {
                assert_eq!(missing.status, 200, "{}", missing.body);
                assert_eq!(plain.status, 400);
                assert_eq!(
                    plain.messages(),
                    [
                        "Server can not understand Content-Type HTTP header media type \"text/plain\""
                    ]
                );
            }
            Profile::Original => {
                missing.assert_error(400, "Content-Type header is empty");
                assert_eq!(plain.status, 200, "{}", plain.body);
                let sent = gw
                    .upstream_calls("PUT", "/V1/products/24-MB01/stockItems/15")
                    .await;
                assert_eq!(
                    sent.last().unwrap().body_json::<Value>().unwrap()["stockItem"]["qty"],
                    json!(80.0)
                );
            }
        }
        // The policy still answers first.
        let r = gw
            .send(gw.request("PUT", "/stockitems/15", &Who::Guest).body("x"))
            .await;
        assert_eq!(r.status, 403);
    }
}

#[tokio::test]
async fn messages_that_differ() {
    for profile in BOTH {
        let original = profile == Profile::Original;
        // An image that is not there: the original (OpenMage 19.4.23, asked live) names it to
        // the Admin and tells a guest only that the resource is not there.
        let gw = crate::images::mount_image_catalog(gateway(profile).await).await;
        let r = gw.get_json("/products/1/images/999", &Who::Admin).await;
        r.assert_error(404, "Product image not found");
        let r = gw.get_json("/products/1/images/999", &Who::Guest).await;
        assert_eq!(r.status, 404);
        let expected = if original {
            "Resource not found."
        } else {
            "Product image not found"
        };
        assert_eq!(r.messages(), [expected]);
        // An image of a type the original did not take.
        let r = gw
            .send(
                gw.request("POST", "/products/1/images", &Who::Admin)
                    .json(&json!({
                        "file_mime_type": "image/bmp", "file_content": "Qk0=", "file_name": "x"
                    })),
            )
            .await;
        assert_eq!(r.status, 400, "{}", r.body);
        let expected = if original {
            "Unsuppoted image MIME type"
        } else {
            "Unsupported image MIME type"
        };
        assert_eq!(r.messages()[0], expected);

        // A duplicate SKU.
        let gw = crate::products::mount_catalog(gateway(profile).await).await;
        let mut body = crate::products::create_body();
        body["sku"] = json!("24-MB01");
        let r = gw
            .send(gw.request("POST", "/products", &Who::Admin).json(&body))
            .await;
        let expected = if original {
            "Invalid attribute \"sku\": The value of attribute \"SKU\" must be unique"
        } else {
            "The value of attribute \"sku\" must be unique."
        };
        assert_eq!(r.messages()[0], expected);

        // A customer create without its names.
        let gw = gateway(profile).await;
        let r = crate::customers::post_customer(
            &gw,
            json!({"email": "a@example.com", "password": "Long-enough-1", "website_id": 1, "group_id": 1}),
        )
        .await;
        let expected = if original {
            [
                "\"First Name\" is a required value.",
                "\"Last Name\" is a required value.",
            ]
        } else {
            [
                "firstname is a required value.",
                "lastname is a required value.",
            ]
        };
        assert_eq!(r.messages()[..2], expected);

        // An unknown country.
        let gw = crate::addresses::mount_addresses(gateway(profile).await).await;
        let mut address = crate::addresses::new_address();
        address["country_id"] = json!("ZZ");
        let r = gw
            .send_json("POST", "/customers/5/addresses", &Who::Admin, &address)
            .await;
        let expected = if original {
            "Invalid value \"ZZ\" for country_id"
        } else {
            "Country does not exist"
        };
        assert_eq!(r.messages()[0], expected, "{}", r.body);
    }
}

#[tokio::test]
async fn a_bad_profile_stops_the_start_naming_the_variable() {
    let e = storegate::config::Config::from_sources(None, &|name| {
        (name == "STOREGATE_PROFILE").then(|| "magento1".to_owned())
    })
    .unwrap_err();
    assert!(e.0.contains("STOREGATE_PROFILE"), "{e}");
}
