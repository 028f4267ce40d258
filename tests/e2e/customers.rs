//! Customers, addresses and orders against the stateful sandbox: full cycles, ownership,
//! token revocation, and the address-keeping merge on customer updates.

use serde_json::json;

use crate::harness::Stack;
use crate::schema::assert_answers_match_schema;

const DEMO: (&str, &str) = ("roni_cost@example.com", "Roni-Cost-2024");
const PIERRE: (&str, &str) = ("pierre.martin@example.fr", "Pierre-Martin-75");

#[tokio::test]
async fn admin_customer_cycle_keeps_addresses_and_revokes_tokens_on_delete() {
    let stack = Stack::start().await;
    let r = stack
        .admin(
            "POST",
            "/customers",
            Some(
                json!({"firstname": "Ada", "lastname": "Byron", "email": "ada.byron@example.com",
                        "password": "Analytical-Engine-1843", "website_id": 1, "group_id": 1}),
            ),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body, "");
    let location = r.header("location").unwrap().to_owned();
    let id = location
        .strip_prefix("/api/rest/customers/")
        .unwrap()
        .to_owned();

    let c = stack.admin("GET", &format!("/customers/{id}"), None).await;
    assert_eq!(c.status, 200, "{}", c.body);
    assert_eq!(c.json()["email"], "ada.byron@example.com");

    // The new customer logs in and adds an address for herself.
    let token = stack
        .customer_token("ada.byron@example.com", "Analytical-Engine-1843")
        .await;
    let address = json!({"firstname": "Ada", "lastname": "Byron", "street": ["12 St James's Square"],
                         "city": "London", "country_id": "GB", "postcode": "SW1Y 4JH", "telephone": "0207"});
    let r = stack
        .call(
            "POST",
            &format!("/customers/{id}/addresses"),
            Some(&token),
            Some(address),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let address_location = r.header("location").unwrap().to_owned();
    assert!(
        address_location.starts_with("/api/rest/customers/addresses/"),
        "{address_location}"
    );

    // A partial customer update must not drop that address.
    let r = stack
        .admin(
            "PUT",
            &format!("/customers/{id}"),
            Some(json!({"lastname": "Lovelace"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let c = stack.admin_json(&format!("/customers/{id}")).await;
    assert_eq!(
        (c["firstname"].as_str(), c["lastname"].as_str()),
        (Some("Ada"), Some("Lovelace"))
    );
    assert_eq!(c["website_id"], "1");
    let addresses = stack
        .call(
            "GET",
            &format!("/customers/{id}/addresses"),
            Some(&token),
            None,
        )
        .await;
    assert_eq!(addresses.status, 200, "{}", addresses.body);
    assert_eq!(
        addresses.json().as_array().unwrap().len(),
        1,
        "{}",
        addresses.body
    );

    // Delete: the customer's token dies with the record.
    assert_eq!(
        stack
            .admin("DELETE", &format!("/customers/{id}"), None)
            .await
            .status,
        200
    );
    assert_eq!(
        stack
            .call("GET", &format!("/customers/{id}"), Some(&token), None)
            .await
            .status,
        401
    );
    assert_eq!(
        stack
            .admin("GET", &format!("/customers/{id}"), None)
            .await
            .status,
        404
    );

    assert_answers_match_schema(&stack.exchanges());
}

#[tokio::test]
async fn a_customer_manages_their_own_addresses_only() {
    let stack = Stack::start().await;
    let demo = stack.customer_token(DEMO.0, DEMO.1).await;
    let pierre = stack.customer_token(PIERRE.0, PIERRE.1).await;

    let mine = stack
        .call("GET", "/customers/1/addresses", Some(&demo), None)
        .await;
    assert_eq!(mine.status, 200, "{}", mine.body);
    let before = mine.json().as_array().unwrap().len();

    // Three street lines: the rest joins the second.
    let r = stack
        .call(
            "POST",
            "/customers/1/addresses",
            Some(&demo),
            Some(json!({"firstname": "Veronica", "lastname": "Costello", "street": ["1 Main St", "Floor 2", "Desk 9"],
                        "city": "Austin", "country_id": "US", "region": "TX", "postcode": "78701", "telephone": "555"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let path = r
        .header("location")
        .unwrap()
        .strip_prefix("/api/rest")
        .unwrap()
        .to_owned();
    let a = stack.call("GET", &path, Some(&demo), None).await.json();
    assert_eq!(a["street"], json!(["1 Main St", "Floor 2; Desk 9"]));
    assert_eq!(a["region"], "Texas");
    let all = stack
        .call("GET", "/customers/1/addresses", Some(&demo), None)
        .await
        .json();
    assert_eq!(all.as_array().unwrap().len(), before + 1);

    // Validation before any write.
    let r = stack
        .call("POST", "/customers/1/addresses", Some(&demo),
              Some(json!({"firstname": "V", "lastname": "C", "street": ["x"], "city": "Austin",
                          "country_id": "US", "region": "Atlantis", "postcode": "1", "telephone": "1"})))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);

    // Pierre can see or touch none of it.
    for (verb, target) in [
        ("GET", path.as_str()),
        ("PUT", path.as_str()),
        ("DELETE", path.as_str()),
        ("GET", "/customers/1/addresses"),
        ("GET", "/customers/1"),
    ] {
        let r = stack
            .call(verb, target, Some(&pierre), Some(json!({"city": "Paris"})))
            .await;
        assert_eq!(r.status, 404, "{verb} {target}: {}", r.body);
        assert!(
            !r.body.contains("Costello") && !r.body.contains("Austin"),
            "{}",
            r.body
        );
    }

    // Update then delete the new address; the default one cannot go.
    let r = stack
        .call(
            "PUT",
            &path,
            Some(&demo),
            Some(json!({"city": "Round Rock"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        stack.call("GET", &path, Some(&demo), None).await.json()["city"],
        "Round Rock"
    );
    assert_eq!(
        stack.call("DELETE", &path, Some(&demo), None).await.status,
        200
    );
    assert_eq!(
        stack.call("GET", &path, Some(&demo), None).await.status,
        404
    );
    let r = stack
        .call("DELETE", "/customers/addresses/1", Some(&demo), None)
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    r.assert_contains("Address is default for customer so is not allowed to be deleted");

    assert_answers_match_schema(&stack.exchanges());
}

#[tokio::test]
async fn orders_by_owner() {
    let stack = Stack::start().await;
    let demo = stack.customer_token(DEMO.0, DEMO.1).await;

    // The customer's own record, as the original showed it, dated by the sandbox.
    let me = stack
        .call("GET", "/customers", Some(&demo), None)
        .await
        .json();
    assert_eq!(me[0]["email"], DEMO.0);
    assert!(me[0]["updated_at"].is_string(), "{me}");
    let admin_view = stack.admin_json("/customers/1").await;
    assert!(admin_view["updated_at"].is_string(), "{admin_view}");

    let mine = stack.call("GET", "/orders", Some(&demo), None).await;
    assert_eq!(mine.status, 200, "{}", mine.body);
    let mine = mine.json();
    let ids: Vec<&str> = mine
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(ids, ["1", "2"]);
    // The original's customer view of an order: order-currency totals, no base_* amounts.
    assert_eq!(mine["1"]["subtotal"], "86.0000");
    assert_eq!(mine["1"].get("base_subtotal"), None);
    assert_eq!(mine["1"]["increment_id"], "000000001");
    assert!(mine["1"]["order_items"].as_array().unwrap().len() >= 2);

    let all = stack.admin_json("/orders").await;
    assert!(all.as_object().unwrap().len() >= 4, "{all}");
    let as_demo = |path: &'static str| stack.call("GET", path, Some(&demo), None);
    assert_eq!(as_demo("/orders/3").await.status, 404);
    assert_eq!(as_demo("/orders/1").await.status, 200);
    assert_eq!(
        stack.call("GET", "/orders", None, None).await.json(),
        json!({})
    );

    let xml = crate::common::http::text_of(
        stack
            .http
            .get(stack.url("/orders"))
            .bearer_auth(&demo)
            .header("Accept", "application/xml"),
    )
    .await;
    assert!(
        xml.contains("<data_item_1>") && xml.contains("<data_item_2>"),
        "{xml}"
    );

    assert_answers_match_schema(&stack.exchanges());
}
