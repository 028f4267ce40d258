//! Customers and their addresses (SPEC 4.4, 4.5): the Admin reads everyone, customer 1
//! their own record and addresses (another customer's are not there), a guest nothing.

use super::*;

// The differences are docs/openmage-mappings.md's: the gateway shows empty values as null
// where the store leaves the field out, and folds an address's street lines past the
// second into the second (SPEC 2.5).

const ADMIN_LIST: Known = Known {
    gateway_only: &["*.middlename", "*.prefix", "*.suffix", "*.taxvat"],
    ..Known::NONE
};

/// A customer's own record: the name parts the store leaves out when empty.
const OWN_SINGLE: Known = Known {
    gateway_only: &["middlename", "prefix", "suffix", "taxvat"],
    ..Known::NONE
};

const ADMIN_SINGLE: Known = Known {
    gateway_only: &["last_logged_in", "middlename", "prefix", "suffix", "taxvat"],
    ..Known::NONE
};

/// A customer's list of addresses: address 1 has three street lines, address 2 no company.
const ADDRESSES: Known = Known {
    store_only: &["*.street.[2]"],
    gateway_only: &[
        "*.company",
        "*.fax",
        "*.middlename",
        "*.prefix",
        "*.suffix",
        "*.vat_id",
    ],
    differ: &["*.street.*"],
    ..Known::NONE
};

/// Address 1 (three street lines).
const ADDRESS_1: Known = Known {
    store_only: &["street.[2]"],
    gateway_only: &["fax", "middlename", "prefix", "suffix", "vat_id"],
    differ: &["street.*"],
    ..Known::NONE
};

/// Address 2 (no company).
const ADDRESS_2: Known = Known {
    gateway_only: &["company", "fax", "middlename", "prefix", "suffix", "vat_id"],
    ..Known::NONE
};

/// A customer's own address 1: as the store shows it to them (its single-record dates).
const OWN_ADDRESS_1: Known = Known {
    differ: &["street.*"],
    ..ADDRESS_1
};

/// A customer's own address 2.
const OWN_ADDRESS_2: Known = ADDRESS_2;

#[tokio::test]
async fn customers_for_every_user_type() {
    let stack = Stack::start("customers").await;
    let list = stack
        .same_as_store(Who::Admin, "/customers", &ADMIN_LIST)
        .await;
    assert_eq!(list["1"]["email"], "john@example.com", "{list}");
    assert_eq!(list["2"]["email"], "jane@example.com", "{list}");
    let john = stack
        .same_as_store(Who::Admin, "/customers/1", &ADMIN_SINGLE)
        .await;
    assert_eq!(
        (&john["firstname"], &john["lastname"], &john["group_id"]),
        (
            &serde_json::json!("John"),
            &serde_json::json!("Doe"),
            &serde_json::json!("1")
        )
    );
    let jane = stack
        .same_as_store(Who::Admin, "/customers/2", &ADMIN_SINGLE)
        .await;
    assert_eq!(jane["firstname"], "Jane");
    stack
        .same_as_store(Who::Admin, "/customers/999", &Known::NONE)
        .await;

    // Customer 1: their own record, and only theirs; its name parts (none here), which the
    // store leaves out when empty.
    let own = stack
        .same_as_store(Who::Customer, "/customers/1", &OWN_SINGLE)
        .await;
    assert_eq!(own["email"], "john@example.com");
    let own_list = stack
        .same_as_store(Who::Customer, "/customers", &Known::NONE)
        .await;
    assert_eq!(own_list.as_object().map(|o| o.len()), Some(1), "{own_list}");
    let other = stack
        .same_as_store(Who::Customer, "/customers/2", &Known::NONE)
        .await;
    let _ = other;
    let reply = stack.get(Who::Customer, "/customers/2").await;
    assert_eq!(reply.status, 404);
    assert_eq!(reply.message(), "Resource not found.");

    // A guest: no customers at all.
    for path in ["/customers", "/customers/1"] {
        stack.same_as_store(Who::Guest, path, &Known::NONE).await;
        let reply = stack.get(Who::Guest, path).await;
        assert_eq!(reply.status, 403, "{path}: {}", reply.body);
        let xml = stack.get_xml(Who::Guest, path).await;
        assert_eq!(xml.status, 403, "{path}: {}", xml.body);
    }

    let xml = stack.get_xml(Who::Customer, "/customers/1").await;
    assert_eq!(xml.status, 200, "{}", xml.body);
    xml.assert_contains("<magento_api>");
    assert_eq!(xml_text(&xml.body, "email"), Some("john@example.com"));
    stack.stop().await;
}

#[tokio::test]
async fn addresses_for_the_admin_and_their_customer() {
    let stack = Stack::start("addresses").await;
    for who in [Who::Admin, Who::Customer] {
        let list = stack
            .same_as_store(who, "/customers/1/addresses", &ADDRESSES)
            .await;
        let list = list.as_array().unwrap_or_else(|| panic!("{who:?}: {list}"));
        assert_eq!(list.len(), 2, "{who:?}: {list:?}");
        assert_eq!(list[0]["city"], "Berlin", "{who:?}: {list:?}");
        assert_eq!(list[1]["city"], "Austin", "{who:?}: {list:?}");
        assert_eq!(list[1]["is_default_billing"], 1, "{who:?}: {list:?}");
    }
    for who in [Who::Admin, Who::Customer] {
        let admin = who == Who::Admin;
        let known = if admin { &ADDRESS_1 } else { &OWN_ADDRESS_1 };
        let one = stack
            .same_as_store(who, "/customers/addresses/1", known)
            .await;
        assert_eq!(one["city"], "Austin", "{who:?}: {one}");
        assert_eq!(one["region"], "Texas", "{who:?}: {one}");
        assert_eq!(
            one["street"],
            serde_json::json!(["Main St 1", "Building B; Floor 3"]),
            "{who:?}"
        );
        let known = if admin { &ADDRESS_2 } else { &OWN_ADDRESS_2 };
        let two = stack
            .same_as_store(who, "/customers/addresses/2", known)
            .await;
        assert_eq!(two["country_id"], "DE", "{who:?}: {two}");
    }
    // Jane's address and list are not customer 1's.
    for path in ["/customers/addresses/3", "/customers/2/addresses"] {
        stack.same_as_store(Who::Customer, path, &Known::NONE).await;
    }
    for path in ["/customers/1/addresses", "/customers/addresses/1"] {
        let refused = stack.get(Who::Guest, path).await;
        assert_eq!(refused.status, 403, "{path}: {}", refused.body);
    }
    let xml = stack.get_xml(Who::Admin, "/customers/1/addresses").await;
    assert_eq!(xml.status, 200, "{}", xml.body);
    assert_eq!(xml_text(&xml.body, "city"), Some("Berlin"));
    xml.assert_contains("<street><data_item>Main St 1</data_item>");
    stack.stop().await;
}

/// A store customer signs in with their store password (`POST /api/rest/auth/token`, checked
/// by the store on its own authorization page); the gateway's Bearer token reads their own
/// record and nobody else's. A wrong e-mail or password is the store's refusal, a 401.
/// Jane signs in, not John: the store keeps one token per customer and consumer, so her
/// sign-in replaces her store token, and John's, which the other scenarios sign with, stays.
#[tokio::test]
async fn a_customer_signs_in_with_their_store_password() {
    let stack = Stack::start("sign-in").await;
    let token_url = stack.url("/auth/token");
    let sign_in = |username: &str, password: &str| {
        stack
            .http
            .post(&token_url)
            .header("Accept", "application/json")
            .json(&serde_json::json!({"username": username, "password": password}))
            .send()
    };
    let refused = sign_in("nobody@example.com", "Password123").await.unwrap();
    assert_eq!(refused.status(), 401);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(
        body["messages"]["error"][0]["message"],
        "Invalid login or password."
    );

    let signed_in = sign_in("jane@example.com", "Password123").await.unwrap();
    assert_eq!(signed_in.status(), 200);
    let body: Value = signed_in.json().await.unwrap();
    assert_eq!(body["customer_id"], 2, "{body}");
    let bearer = format!("Bearer {}", body["access_token"].as_str().unwrap());
    let read = |path: &str| {
        stack
            .http
            .get(stack.url(path))
            .header("Accept", "application/json")
            .header("Authorization", bearer.clone())
            .send()
    };
    let mine = read("/customers/2").await.unwrap();
    assert_eq!(mine.status(), 200);
    let mine: Value = mine.json().await.unwrap();
    assert_eq!(mine["email"], "jane@example.com", "{mine}");
    assert_eq!(read("/customers/1").await.unwrap().status(), 404);
    stack.stop().await;
}
