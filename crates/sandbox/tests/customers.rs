//! Customers, addresses, customer tokens, directory and orders over HTTP.

mod common;

use common::*;
use serde_json::{Value, json};
use storegate_sandbox::{DEMO_CUSTOMER_EMAIL, DEMO_CUSTOMER_PASSWORD};

const REQUIRED: &str = "\"%fieldName\" is required. Enter and try again.";

fn address_ids(customer: &Value) -> Vec<u64> {
    customer["addresses"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a["id"].as_u64())
        .collect()
}

fn us_address(street: &str) -> Value {
    json!({"firstname": "Veronica", "lastname": "Costello", "street": [street], "city": "Austin",
           "postcode": "78701", "country_id": "US", "telephone": "555-0100", "region_id": 57})
}

#[tokio::test]
async fn get_customer_and_not_found() {
    let h = Harness::start().await;
    let c = h.get("/rest/V1/customers/1").await.body;
    assert_eq!(c["email"], DEMO_CUSTOMER_EMAIL);
    assert_eq!(c["default_billing"], "1");
    assert_eq!(c["default_shipping"], "1");
    assert_eq!(c["created_in"], "Default Store View");
    assert_eq!(
        c["addresses"][0]["region"],
        json!({"region_code": "MI", "region": "Michigan", "region_id": 33})
    );
    assert_eq!(c["addresses"][0]["default_billing"], true);
    assert!(
        c["addresses"][1].get("default_billing").is_none(),
        "false flags are absent"
    );
    let r = h.get("/rest/V1/customers/99").await;
    assert_eq!(r.status, 404);
    assert_eq!(
        r.body,
        json!({"message": "No such entity with %fieldName = %fieldValue", "parameters": {"fieldName": "customerId", "fieldValue": 99}})
    );
    let r = h.get("/rest/V1/customers/abc").await;
    assert_eq!(r.status, 400, "ids are typed");
}

#[tokio::test]
async fn search_customers() {
    let h = Harness::start().await;
    let r = h
        .get(&format!(
            "/rest/V1/customers/search?{}",
            filter(0, 0, "email", "%example.com", "like")
        ))
        .await;
    assert_eq!(r.body["total_count"], 2);
    let r = h
        .get("/rest/V1/customers/search?searchCriteria[sortOrders][0][field]=lastname&searchCriteria[sortOrders][0][direction]=ASC&searchCriteria[pageSize]=1&searchCriteria[currentPage]=2")
        .await;
    assert_eq!(r.body["items"][0]["lastname"], "Martin");
    assert_eq!(r.body["total_count"], 3);
}

#[tokio::test]
async fn create_customer_password_rules() {
    let h = Harness::start().await;
    let h = &h;
    let body = |password: &str| json!({"customer": {"email": "new.person@example.com", "firstname": "New", "lastname": "Person"}, "password": password});
    let post = |b: Value| async move { h.send("POST", "/rest/V1/customers", Some(&b), None).await };
    let r = post(body("Ab1!")).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body,
        json!({"message": "The password needs at least %1 characters. Create a new password and try again.", "parameters": [8]})
    );
    let r = post(body("alllowercase1")).await;
    assert_eq!(
        r.body,
        json!({"message": "Minimum of different classes of characters in password is %1. Classes of characters: Lower Case, Upper Case, Digits, Special Characters.", "parameters": [3]})
    );
    let r = post(body(" Spaced-Pass1")).await;
    assert_eq!(
        r.body["message"],
        "The password can't begin or end with a space. Verify the password and try again."
    );
    let same = json!({"customer": {"email": "Same.As@Email.com1", "firstname": "A", "lastname": "B"}, "password": "Same.As@Email.com1"});
    let r = post(same).await;
    assert_eq!(
        r.body["message"],
        "The password can't be the same as the email address. Create a new password and try again."
    );
    let r = post(body("Good-Pass-1")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["created_in"], "Default Store View");
    assert_eq!(r.body["website_id"], 1);
    assert_eq!(r.body["group_id"], 1);
    assert!(
        r.body["created_at"]
            .as_str()
            .is_some_and(|d| d.len() == 19 && &d[10..11] == " ")
    );
    let r = post(body("Good-Pass-1")).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body,
        json!({"message": "A customer with the same email address already exists in an associated website."})
    );
    let duplicate_case =
        json!({"customer": {"email": "ROni_Cost@Example.com", "firstname": "A", "lastname": "B"}});
    assert_eq!(post(duplicate_case).await.status, 400);
    let nameless = json!({"customer": {"email": "nameless@example.com"}});
    let r = post(nameless).await;
    assert_eq!(
        r.body["message"],
        "\"First Name\" is a required value.\n\"Last Name\" is a required value."
    );
    let r = post(json!({"customer": {"email": "bad", "firstname": "A", "lastname": "B"}})).await;
    assert_eq!(r.body["message"], "\"Email\" is not a valid email address.");
    let r = post(json!({"password": "x"})).await;
    assert_eq!(
        r.body,
        json!({"message": REQUIRED, "parameters": {"fieldName": "customer"}})
    );
    // A group only sticks for admin callers.
    let grouped = json!({"customer": {"email": "wholesale@example.com", "firstname": "W", "lastname": "S", "group_id": 2}});
    assert_eq!(post(grouped.clone()).await.body["group_id"], 1);
    let grouped = json!({"customer": {"email": "wholesale2@example.com", "firstname": "W", "lastname": "S", "group_id": 2}});
    assert_eq!(
        h.admin("POST", "/rest/V1/customers", Some(&grouped))
            .await
            .body["group_id"],
        2
    );
    // Through the french store view the account is created there.
    let french = json!({"customer": {"email": "jean@example.fr", "firstname": "Jean", "lastname": "Dupont"}});
    let r = h
        .send("POST", "/rest/french/V1/customers", Some(&french), None)
        .await;
    assert_eq!(r.body["created_in"], "French Store View");
    assert_eq!(r.body["store_id"], 2);
}

#[tokio::test]
async fn create_customer_with_addresses_validates_them() {
    let h = Harness::start().await;
    let bad = json!({"customer": {"email": "addr@example.com", "firstname": "A", "lastname": "B",
        "addresses": [{"firstname": "A", "lastname": "B", "country_id": "US", "street": ["1 Main St"],
                       "city": "Austin", "telephone": "1", "postcode": "78701"}]}});
    let r = h.send("POST", "/rest/V1/customers", Some(&bad), None).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body,
        json!({"message": REQUIRED, "parameters": {"fieldName": "regionId"}})
    );
    assert_eq!(
        h.get(&format!(
            "/rest/V1/customers/search?{}",
            filter(0, 0, "email", "addr@example.com", "eq")
        ))
        .await
        .body["total_count"],
        0,
        "nothing saved"
    );
    let worse = json!({"customer": {"email": "addr@example.com", "firstname": "A", "lastname": "B",
        "addresses": [{"country_id": "ZZ", "street": []}]}});
    let r = h
        .send("POST", "/rest/V1/customers", Some(&worse), None)
        .await;
    assert_eq!(
        r.body["message"],
        "One or more input exceptions have occurred."
    );
    let errors = r.body["errors"].as_array().cloned().unwrap_or_default();
    let fields: Vec<Value> = errors
        .iter()
        .map(|e| e["parameters"]["fieldName"].clone())
        .collect();
    assert_eq!(
        fields,
        vec![
            json!("firstname"),
            json!("lastname"),
            json!("street"),
            json!("city"),
            json!("telephone"),
            json!("postcode"),
            json!("countryId")
        ]
    );
    assert_eq!(
        errors[6]["message"],
        "Invalid value of \"%value\" provided for the %fieldName field."
    );
    assert_eq!(errors[6]["parameters"]["value"], "ZZ");
    let wrong_region = json!({"customer": {"email": "addr@example.com", "firstname": "A", "lastname": "B",
        "addresses": [{"firstname": "A", "lastname": "B", "country_id": "US", "street": ["1 Main St"],
                       "city": "Toronto", "telephone": "1", "postcode": "1", "region_id": 74}]}});
    let r = h
        .send("POST", "/rest/V1/customers", Some(&wrong_region), None)
        .await;
    assert_eq!(
        r.body,
        json!({"message": "Invalid value of \"%value\" provided for the %fieldName field.", "parameters": {"fieldName": "regionId", "value": "74"}})
    );
    let good = json!({"customer": {"email": "addr@example.com", "firstname": "A", "lastname": "B",
        "addresses": [{"firstname": "A", "lastname": "B", "country_id": "US", "street": ["1 Main St"], "city": "Austin",
                       "telephone": "1", "postcode": "78701", "region": {"region_code": "TX"}, "default_billing": true},
                      {"firstname": "A", "lastname": "B", "country_id": "DE", "street": ["Unter den Linden 1"],
                       "city": "Berlin", "telephone": "1", "postcode": "10117", "default_shipping": true}]}});
    let r = h
        .send("POST", "/rest/V1/customers", Some(&good), None)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.body["addresses"][0]["region_id"], 57,
        "region code resolved"
    );
    assert_eq!(
        r.body["addresses"][1]["region"],
        json!({"region_code": null, "region": null, "region_id": 0})
    );
    let ids = address_ids(&r.body);
    assert_eq!(r.body["default_billing"], ids[0].to_string());
    assert_eq!(r.body["default_shipping"], ids[1].to_string());
}

#[tokio::test]
async fn put_customer_address_semantics() {
    let h = Harness::start().await;
    let original = h.get("/rest/V1/customers/1").await.body;
    // `addresses` omitted: untouched, defaults kept.
    let mut body = original.clone();
    body.as_object_mut().map(|b| b.remove("addresses"));
    body["lastname"] = json!("Costello-Smith");
    let r = h
        .admin(
            "PUT",
            "/rest/V1/customers/1",
            Some(&json!({"customer": body})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["lastname"], "Costello-Smith");
    assert_eq!(address_ids(&r.body), vec![1, 2]);
    assert_eq!(r.body["default_billing"], "1");
    // A list: id 1 updated (fields merge), new one created, id 2 deleted, defaults from flags.
    let mut body = original.clone();
    body["addresses"] = json!([
        {"id": 1, "city": "Calder Town", "default_billing": true},
        us_address("100 Rainey Street").as_object().cloned().map(|mut a| { a.insert("default_shipping".into(), json!(true)); Value::Object(a) }).unwrap_or_default()
    ]);
    let r = h
        .admin(
            "PUT",
            "/rest/V1/customers/1",
            Some(&json!({"customer": body})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let ids = address_ids(&r.body);
    assert_eq!(ids.len(), 2);
    assert_eq!(ids[0], 1);
    assert!(ids[1] > 3, "new address got a new id");
    assert_eq!(r.body["addresses"][0]["city"], "Calder Town");
    assert_eq!(
        r.body["addresses"][0]["street"],
        json!(["6146 Honey Bluff Parkway"]),
        "unsent address fields stay"
    );
    assert_eq!(r.body["default_billing"], "1");
    assert_eq!(r.body["default_shipping"], ids[1].to_string());
    assert_eq!(
        h.get("/rest/V1/customers/addresses/2").await.status,
        404,
        "address 2 deleted"
    );
    // `addresses: []` deletes them all.
    let mut body = original.clone();
    body["addresses"] = json!([]);
    let r = h
        .admin(
            "PUT",
            "/rest/V1/customers/1",
            Some(&json!({"customer": body})),
        )
        .await;
    assert_eq!(r.body["addresses"], json!([]));
    assert!(r.body.get("default_billing").is_none());
    assert_eq!(
        h.get("/rest/V1/customers/1/billingAddress").await.body,
        Value::Null
    );
}

#[tokio::test]
async fn put_customer_requires_identity_fields() {
    let h = Harness::start().await;
    let r = h
        .admin(
            "PUT",
            "/rest/V1/customers/1",
            Some(&json!({"customer": {"lastname": "X"}})),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body["message"],
        "The customer email is missing. Enter and try again."
    );
    let r = h
        .admin("PUT", "/rest/V1/customers/1", Some(&json!({"customer": {"email": "pierre.martin@example.fr", "firstname": "V", "lastname": "C"}})))
        .await;
    assert_eq!(
        r.body["message"],
        "A customer with the same email address already exists in an associated website."
    );
    let r = h
        .admin(
            "PUT",
            "/rest/V1/customers/77",
            Some(&json!({"customer": {"email": "a@b.co", "firstname": "A", "lastname": "B"}})),
        )
        .await;
    assert_eq!(r.status, 404);
    let bad_address = json!({"customer": {"email": DEMO_CUSTOMER_EMAIL, "firstname": "V", "lastname": "C",
        "addresses": [{"id": 1, "city": ""}]}});
    let r = h
        .admin("PUT", "/rest/V1/customers/1", Some(&bad_address))
        .await;
    assert_eq!(
        r.body,
        json!({"message": REQUIRED, "parameters": {"fieldName": "city"}})
    );
    assert_eq!(
        h.get("/rest/V1/customers/1").await.body["addresses"][0]["city"],
        "Calder",
        "nothing changed"
    );
}

#[tokio::test]
async fn addresses_endpoints() {
    let h = Harness::start().await;
    let a = h.get("/rest/V1/customers/addresses/2").await.body;
    assert_eq!(a["customer_id"], 1);
    assert_eq!(a["region_id"], 57);
    assert_eq!(
        h.get("/rest/V1/customers/1/billingAddress").await.body["id"],
        1
    );
    assert_eq!(
        h.get("/rest/V1/customers/2/shippingAddress").await.body["id"],
        3
    );
    assert_eq!(
        h.get("/rest/V1/customers/3/billingAddress").await.body,
        Value::Null,
        "no default: null"
    );
    let r = h.admin("DELETE", "/rest/V1/addresses/1", None).await;
    assert_eq!(r.body, json!(true));
    let c = h.get("/rest/V1/customers/1").await.body;
    assert_eq!(address_ids(&c), vec![2]);
    assert!(c.get("default_billing").is_none());
    let r = h.admin("DELETE", "/rest/V1/addresses/1", None).await;
    assert_eq!(r.status, 404);
    assert_eq!(
        r.body["parameters"],
        json!({"fieldName": "addressId", "fieldValue": 1})
    );
}

#[tokio::test]
async fn delete_customer_and_email_availability() {
    let h = Harness::start().await;
    let check = |email: &str| json!({"customerEmail": email, "websiteId": 1});
    let r = h
        .send(
            "POST",
            "/rest/V1/customers/isEmailAvailable",
            Some(&check(DEMO_CUSTOMER_EMAIL)),
            None,
        )
        .await;
    assert_eq!(r.body, json!(false));
    let r = h
        .send(
            "POST",
            "/rest/V1/customers/isEmailAvailable",
            Some(&check("free@example.com")),
            None,
        )
        .await;
    assert_eq!(r.body, json!(true));
    let r = h
        .send(
            "POST",
            "/rest/V1/customers/isEmailAvailable",
            Some(&json!({})),
            None,
        )
        .await;
    assert_eq!(r.body["parameters"], json!({"fieldName": "customerEmail"}));
    let r = h.admin("DELETE", "/rest/V1/customers/3", None).await;
    assert_eq!(r.body, json!(true));
    assert_eq!(h.get("/rest/V1/customers/3").await.status, 404);
}

#[tokio::test]
async fn customer_token_and_me() {
    let h = Harness::start().await;
    let login = json!({"username": DEMO_CUSTOMER_EMAIL, "password": DEMO_CUSTOMER_PASSWORD});
    let r = h
        .send(
            "POST",
            "/rest/V1/integration/customer/token",
            Some(&login),
            None,
        )
        .await;
    assert_eq!(r.status, 200);
    let token = r.body.as_str().unwrap_or_default().to_string();
    assert!(!token.is_empty());
    let me = h
        .send("GET", "/rest/V1/customers/me", None, Some(&token))
        .await;
    assert_eq!(me.body["id"], 1);
    let billing = h
        .send(
            "GET",
            "/rest/V1/customers/me/billingAddress",
            None,
            Some(&token),
        )
        .await;
    assert_eq!(billing.body["id"], 1);
    // The token only opens `self` routes, and the integration token does not open those.
    assert_eq!(
        h.send("GET", "/rest/V1/customers/1", None, Some(&token))
            .await
            .status,
        401
    );
    let r = h.get("/rest/V1/customers/me").await;
    assert_eq!(r.status, 401);
    assert_eq!(r.body["parameters"], json!({"resources": "self"}));
    // PUT me: the token's customer, whatever the body id says.
    let mut body = me.body.clone();
    body["id"] = json!(2);
    body["firstname"] = json!("Roni");
    body.as_object_mut().map(|b| b.remove("addresses"));
    let r = h
        .send(
            "PUT",
            "/rest/V1/customers/me",
            Some(&json!({"customer": body})),
            Some(&token),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["id"], 1);
    assert_eq!(
        h.get("/rest/V1/customers/1").await.body["firstname"],
        "Roni"
    );
    assert_eq!(
        h.get("/rest/V1/customers/2").await.body["firstname"],
        "Pierre"
    );
    let wrong = json!({"username": DEMO_CUSTOMER_EMAIL, "password": "Wrong-Pass-1"});
    let r = h
        .send(
            "POST",
            "/rest/V1/integration/customer/token",
            Some(&wrong),
            None,
        )
        .await;
    assert_eq!(r.status, 401);
    assert_eq!(
        r.body,
        json!({"message": "The account sign-in was incorrect or your account is disabled temporarily. Please wait and try again later."})
    );
    let r = h
        .send(
            "POST",
            "/rest/V1/integration/customer/token",
            Some(&json!({"username": "", "password": ""})),
            None,
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body["errors"].as_array().map(Vec::len), Some(2));
    let r = h
        .send(
            "POST",
            "/rest/V1/integration/customer/token",
            Some(&json!({"username": "x@y.z"})),
            None,
        )
        .await;
    assert_eq!(
        r.body,
        json!({"message": REQUIRED, "parameters": {"fieldName": "password"}})
    );
}

#[tokio::test]
async fn directory_countries() {
    let h = Harness::start().await;
    let countries = h
        .send("GET", "/rest/V1/directory/countries", None, None)
        .await;
    assert_eq!(countries.status, 200, "anonymous");
    let us = h
        .send("GET", "/rest/V1/directory/countries/US", None, None)
        .await
        .body;
    let regions = us["available_regions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for (id, code) in [("1", "AL"), ("12", "CA"), ("43", "NY"), ("57", "TX")] {
        assert!(
            regions.iter().any(|r| r["id"] == id && r["code"] == code),
            "{code}"
        );
    }
    let fr = h
        .send("GET", "/rest/V1/directory/countries/FR", None, None)
        .await
        .body;
    assert!(
        fr.get("available_regions").is_none(),
        "absent when a country has none"
    );
    let french = h
        .send("GET", "/rest/french/V1/directory/countries/US", None, None)
        .await
        .body;
    assert_eq!(french["full_name_locale"], "États-Unis");
    assert_eq!(french["full_name_english"], "United States");
    let r = h
        .send("GET", "/rest/V1/directory/countries/ZZ", None, None)
        .await;
    assert_eq!(r.status, 404);
    assert_eq!(r.body["message"], "The country isn't available.");
}

#[tokio::test]
async fn orders_list_and_get() {
    let h = Harness::start().await;
    let all = h.get("/rest/V1/orders?searchCriteria=").await.body;
    assert_eq!(all["total_count"], 4);
    let mine = h
        .get(&format!(
            "/rest/V1/orders?{}",
            filter(0, 0, "customer_id", "1", "eq")
        ))
        .await
        .body;
    let ids: Vec<u64> = mine["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o["entity_id"].as_u64())
        .collect();
    assert_eq!(ids, vec![1, 2]);
    let by_increment = h
        .get(&format!(
            "/rest/V1/orders?{}",
            filter(0, 0, "increment_id", "000000004", "eq")
        ))
        .await
        .body;
    assert_eq!(by_increment["total_count"], 1);
    assert_eq!(
        h.get(&format!(
            "/rest/V1/orders?{}",
            filter(0, 0, "increment_id", "4", "eq")
        ))
        .await
        .body["total_count"],
        0
    );
    let recent = h
        .get(&format!(
            "/rest/V1/orders?{}",
            filter(0, 0, "created_at", "2024-03-12 00:00:00", "gteq")
        ))
        .await
        .body;
    assert_eq!(recent["total_count"], 2);

    let invoiced = h.get("/rest/V1/orders/1").await.body;
    assert_eq!(invoiced["total_paid"], 103.1);
    assert_eq!(invoiced["items"][1]["parent_item_id"], 1);
    assert_eq!(
        invoiced["items"][1]["parent_item"]["product_type"],
        "configurable"
    );
    let shipping =
        &invoiced["extension_attributes"]["shipping_assignments"][0]["shipping"]["address"];
    assert_eq!(shipping["address_type"], "shipping");
    assert_eq!(invoiced["billing_address"]["address_type"], "billing");
    assert_eq!(
        invoiced["extension_attributes"]["applied_taxes"][0]["percent"],
        8.25
    );
    let virtual_order = h.get("/rest/V1/orders/2").await.body;
    assert_eq!(virtual_order["is_virtual"], 1);
    assert!(
        virtual_order.get("total_paid").is_none(),
        "not invoiced: no paid/due fields"
    );
    assert!(virtual_order.get("total_due").is_none());
    assert!(
        virtual_order["extension_attributes"]["shipping_assignments"][0]["shipping"]
            .get("address")
            .is_none()
    );
    let guest = h.get("/rest/V1/orders/4").await.body;
    assert_eq!(guest["customer_is_guest"], 1);
    assert!(guest.get("customer_id").is_none());
    let r = h.get("/rest/V1/orders/99").await;
    assert_eq!(r.status, 404);
    assert_eq!(
        r.body,
        json!({"message": "The entity that was requested doesn't exist. Verify the entity and try again."})
    );
    assert_eq!(
        h.send("GET", "/rest/V1/orders/1", None, None).await.status,
        401
    );
}
