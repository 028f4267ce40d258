//! The legacy client's requests: every route of the original's `api2.xml` (OpenMage 19.4,
//! the list in `../shared/openmage/README.md`, "Its REST surface") as Admin, a customer and
//! a Guest, in the original's formats (JSON, and XML for some), then the writes an app of
//! the original makes and what it reads back, and the refusals it meets.
//!
//! Paths are templates: `{P}` a product with images, `{P2}` one with special or tier
//! prices, `{C}` a category with products, `{S}` a store view, `{I}` an image of `{P}`,
//! `{K}` a stock item, `{me}`/`{them}` the signed-in customer and another one, `{my_addr}`
//! and `{their_addr}` their addresses, `{my_order}`, `{their_order}`, `{comment}` an
//! order comment. A write's `Location` names what later steps use: `{new_product}`,
//! `{new_customer}`, `{new_address}`, `{new_comment}`.

use serde_json::{Value, json};

use crate::Who;

/// The ids a back end's seed gives the templates.
#[derive(Debug, Clone, Copy)]
pub struct Ids {
    pub product: u64,
    pub product2: u64,
    pub category: u64,
    pub store: u64,
    pub image: u64,
    pub stock: u64,
    pub me: u64,
    pub them: u64,
    pub my_addr: u64,
    pub their_addr: u64,
    pub my_order: u64,
    pub their_order: u64,
    pub comment: u64,
}

/// The seeded OpenMage store (`../shared/openmage/seed.php`): product 1 with two images,
/// product 2 with special and tier prices, category 2, store view 2 (`de`), John (1) and
/// Jane (2), their addresses 1 and 3, their orders 1 and 2.
pub const OPENMAGE: Ids = Ids {
    product: 1,
    product2: 2,
    category: 2,
    store: 2,
    image: 1,
    stock: 1,
    me: 1,
    them: 2,
    my_addr: 1,
    their_addr: 3,
    my_order: 1,
    their_order: 2,
    comment: 1,
};

/// The sandbox (`fixtures/sandbox/README.md`): product 1 (24-MB01, three images, a French
/// name), product 5 with tier prices, category 4 (Bags), store view 2 (`french`), stock item
/// 1001, Veronica (1) and Pierre (2), addresses 1 and 3, orders 1 (hers) and 3 (his).
pub const SANDBOX: Ids = Ids {
    product: 1,
    product2: 5,
    category: 4,
    store: 2,
    image: 1,
    stock: 1001,
    me: 1,
    them: 2,
    my_addr: 1,
    their_addr: 3,
    my_order: 1,
    their_order: 3,
    comment: 1,
};

/// One request of the walk.
#[derive(Debug, Clone)]
pub struct Step {
    pub who: Who,
    pub method: &'static str,
    pub path: String,
    pub body: Option<Value>,
    /// `application/json` or `application/xml`.
    pub accept: &'static str,
}

impl Step {
    /// `GET path` as `who`, in JSON.
    fn get(who: Who, path: &str) -> Step {
        Step {
            who,
            method: "GET",
            path: path.to_owned(),
            body: None,
            accept: "application/json",
        }
    }

    fn xml(who: Who, path: &str) -> Step {
        Step {
            accept: "application/xml",
            ..Step::get(who, path)
        }
    }

    fn send(who: Who, method: &'static str, path: &str, body: Option<Value>) -> Step {
        Step {
            method,
            body,
            ..Step::get(who, path)
        }
    }

    /// What a report calls it: `Admin GET /products/{P}`.
    pub fn label(&self) -> String {
        let format = if self.accept.ends_with("xml") {
            " (XML)"
        } else {
            ""
        };
        format!("{:?} {} {}{format}", self.who, self.method, self.path)
    }

    /// The path with the back end's ids (and the walk's created ones) put in.
    pub fn resolve(&self, ids: &Ids, created: &Created) -> String {
        let mut path = self.path.clone();
        for (name, value) in [
            ("{P2}", ids.product2.to_string()),
            ("{P}", ids.product.to_string()),
            ("{C}", ids.category.to_string()),
            ("{S}", ids.store.to_string()),
            ("{I}", ids.image.to_string()),
            ("{K}", ids.stock.to_string()),
            ("{me}", ids.me.to_string()),
            ("{them}", ids.them.to_string()),
            ("{my_addr}", ids.my_addr.to_string()),
            ("{their_addr}", ids.their_addr.to_string()),
            ("{my_order}", ids.my_order.to_string()),
            ("{their_order}", ids.their_order.to_string()),
            ("{comment}", ids.comment.to_string()),
            ("{new_product}", created.product.clone()),
            ("{new_customer}", created.customer.clone()),
            ("{new_address}", created.address.clone()),
            ("{new_comment}", created.comment.clone()),
            ("{new_image}", created.image.clone()),
        ] {
            path = path.replace(name, &value);
        }
        path
    }

    /// The body with the back end's ids put in (`"{C}"` as a number).
    pub fn resolved_body(&self, ids: &Ids, created: &Created) -> Option<Value> {
        let text = self.body.as_ref()?.to_string();
        let text = text
            .replace("\"{C}\"", &ids.category.to_string())
            .replace("\"{K}\"", &ids.stock.to_string());
        let _ = created;
        Some(serde_json::from_str(&text).expect("a body stays JSON"))
    }
}

/// Ids the walk's creates got (the last segment of each `Location`).
#[derive(Debug, Clone, Default)]
pub struct Created {
    pub product: String,
    pub customer: String,
    pub address: String,
    pub comment: String,
    pub image: String,
}

impl Created {
    /// Keeps the id of a create's `Location` for the steps after it.
    pub fn note(&mut self, step: &Step, location: &str) {
        let id = location.rsplit('/').next().unwrap_or_default().to_owned();
        match (step.method, step.path.as_str()) {
            ("POST", "/products") => self.product = id,
            ("POST", "/customers") => self.customer = id,
            ("POST", "/customers/{me}/addresses") => self.address = id,
            ("POST", "/orders/{my_order}/comments") => self.comment = id,
            ("POST", "/products/{new_product}/images") => self.image = id,
            _ => {}
        }
    }
}

/// A 64x64 red PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAEAAAABACAIAAAAlC+aJAAAAb0lEQVR4nO3PAQkAAAyEwO9feoshgnABdLep8QUNyPEFDcjxBQ3I8QUNyPEFDcjxBQ3I8QUNyPEFDcjxBQ3I8QUNyPEFDcjxBQ3I8QUNyPEFDcjxBQ3I8QUNyPEFDcjxBQ3I8QUNyPEFDcjxBQ3IPanc8OLDQitxAAAAAElFTkSuQmCC";

/// The reads of every route, for each user type.
const READS: [&str; 33] = [
    "/products",
    "/products?limit=2&page=1&order=entity_id&dir=asc",
    "/products/{P}",
    "/products/{P2}",
    "/products/9999",
    "/products/{P}/store/{S}",
    "/products/store/{S}",
    "/products/category/{C}",
    "/products/category/{C}/store/{S}",
    "/products/store/{S}/category/{C}",
    "/products/{P}/categories",
    "/products/{P}/websites",
    "/products/{P}/images",
    "/products/{P}/images/{I}",
    "/products/{P}/images/store/{S}",
    "/products/{P}/images/{I}/store/{S}",
    "/stockitems",
    "/stockitems/{K}",
    "/customers",
    "/customers/{me}",
    "/customers/{them}",
    "/customers/{me}/addresses",
    "/customers/addresses/{my_addr}",
    "/customers/addresses/{their_addr}",
    "/orders",
    "/orders/{my_order}",
    "/orders/{their_order}",
    "/orders/{my_order}/items",
    "/orders/{my_order}/addresses",
    "/orders/{my_order}/addresses/billing",
    "/orders/{my_order}/addresses/shipping",
    "/orders/{my_order}/comments",
    "/orders/comments/{comment}",
];

/// Reads an app of the original makes in XML.
const XML_READS: [&str; 3] = ["/products/{P}", "/customers/{me}", "/orders/{my_order}"];

/// The whole walk, in order: reads, then writes and their read-backs, then refusals.
pub fn walk() -> Vec<Step> {
    use Who::{Admin, Customer, Guest};
    let mut steps = Vec::new();
    for who in [Admin, Customer, Guest] {
        steps.extend(READS.iter().map(|path| Step::get(who, path)));
        steps.extend(XML_READS.iter().map(|path| Step::xml(who, path)));
    }

    // The Admin's catalog writes, each read back.
    let product = json!({"type_id": "simple", "attribute_set_id": 4, "sku": "LEGACY-WALK-1",
        "name": "Made by the legacy client", "price": 12.5, "weight": 1, "status": 1,
        "visibility": 4, "tax_class_id": 2, "description": "Walked", "short_description": "W",
        "stock_data": {"qty": 10, "is_in_stock": 1, "manage_stock": 1, "use_config_manage_stock": 0}});
    steps.extend([
        Step::send(Admin, "POST", "/products", Some(product)),
        Step::get(Admin, "/products/{new_product}"),
        Step::send(
            Admin,
            "PUT",
            "/products/{new_product}",
            Some(json!({"name": "Renamed by the legacy client", "price": 13})),
        ),
        Step::get(Admin, "/products/{new_product}"),
        Step::get(Guest, "/products/{new_product}"),
        Step::send(
            Admin,
            "POST",
            "/products/{new_product}/images",
            Some(json!({"file_mime_type": "image/png", "file_content": PNG,
                "file_name": "walk", "label": "Walk", "types": ["image"]})),
        ),
        Step::get(Admin, "/products/{new_product}/images"),
        Step::send(
            Admin,
            "PUT",
            "/products/{new_product}/images/{new_image}",
            Some(json!({"label": "Walked", "position": 3})),
        ),
        Step::get(Admin, "/products/{new_product}/images/{new_image}"),
        Step::send(
            Admin,
            "DELETE",
            "/products/{new_product}/images/{new_image}",
            None,
        ),
        // A seeded product's image and name in a store view.
        Step::send(
            Admin,
            "PUT",
            "/products/{P}/images/{I}/store/{S}",
            Some(json!({"label": "Walk in the store view"})),
        ),
        Step::get(Admin, "/products/{P}/images/{I}/store/{S}"),
        Step::get(Guest, "/products/{P}/images/{I}/store/{S}"),
        Step::send(
            Admin,
            "PUT",
            "/products/{P}/store/{S}",
            Some(json!({"name": "Walked in the store view"})),
        ),
        Step::get(Admin, "/products/{P}/store/{S}"),
        Step::send(
            Admin,
            "POST",
            "/products/{new_product}/categories",
            Some(json!({"category_id": "{C}"})),
        ),
        Step::get(Admin, "/products/{new_product}/categories"),
        Step::send(
            Admin,
            "DELETE",
            "/products/{new_product}/categories/{C}",
            None,
        ),
        Step::get(Admin, "/products/{new_product}/websites"),
        Step::send(Admin, "DELETE", "/products/{new_product}", None),
        Step::get(Admin, "/products/{new_product}"),
        // A product's website taken away and given back.
        Step::send(Admin, "DELETE", "/products/{P}/websites/1", None),
        Step::get(Admin, "/products/{P}/websites"),
        Step::send(
            Admin,
            "POST",
            "/products/{P}/websites",
            Some(json!({"website_id": 1})),
        ),
        Step::get(Admin, "/products/{P}/websites"),
        // Stock: one item, then the batch.
        Step::send(Admin, "PUT", "/stockitems/{K}", Some(json!({"qty": 42}))),
        Step::get(Admin, "/stockitems/{K}"),
        Step::send(
            Admin,
            "PUT",
            "/stockitems",
            Some(json!([{"item_id": "{K}", "qty": 43}, {"item_id": 99999, "qty": 1}])),
        ),
        Step::get(Admin, "/stockitems/{K}"),
    ]);

    // Customers: the Admin's create, change and delete.
    let customer = json!({"firstname": "Walker", "lastname": "Legacy",
        "email": "legacy.walker@example.com", "password": "Walk-Password-2026",
        "website_id": 1, "group_id": 1});
    steps.extend([
        Step::send(Admin, "POST", "/customers", Some(customer)),
        Step::get(Admin, "/customers/{new_customer}"),
        Step::send(
            Admin,
            "PUT",
            "/customers/{new_customer}",
            Some(json!({"firstname": "Walked"})),
        ),
        Step::get(Admin, "/customers/{new_customer}"),
        Step::send(Admin, "DELETE", "/customers/{new_customer}", None),
        Step::get(Admin, "/customers/{new_customer}"),
    ]);

    // The customer's own record and addresses.
    let address = json!({"firstname": "Walker", "lastname": "Legacy", "street": ["Elm St 9"],
        "city": "Dallas", "country_id": "US", "region": "Texas", "postcode": "75201",
        "telephone": "555-0199"});
    steps.extend([
        Step::send(
            Customer,
            "PUT",
            "/customers/{me}",
            Some(json!({"middlename": "Q"})),
        ),
        Step::get(Customer, "/customers/{me}"),
        Step::send(Customer, "POST", "/customers/{me}/addresses", Some(address)),
        Step::get(Customer, "/customers/addresses/{new_address}"),
        Step::send(
            Customer,
            "PUT",
            "/customers/addresses/{new_address}",
            Some(json!({"city": "Austin"})),
        ),
        Step::get(Customer, "/customers/addresses/{new_address}"),
        Step::send(
            Customer,
            "DELETE",
            "/customers/addresses/{new_address}",
            None,
        ),
        Step::get(Customer, "/customers/addresses/{new_address}"),
        Step::send(Customer, "DELETE", "/customers/addresses/{my_addr}", None),
        Step::send(
            Customer,
            "PUT",
            "/customers/addresses/{their_addr}",
            Some(json!({"city": "X"})),
        ),
    ]);

    // An order comment, read back by its id.
    steps.extend([
        Step::send(
            Admin,
            "POST",
            "/orders/{my_order}/comments",
            Some(json!({"comment": "Walked today", "is_customer_notified": 0,
                "is_visible_on_front": 1, "status": "pending"})),
        ),
        Step::get(Admin, "/orders/comments/{new_comment}"),
        Step::get(Customer, "/orders/{my_order}/comments"),
    ]);

    // What the original refuses.
    steps.extend([
        Step::send(Guest, "POST", "/products", Some(json!({"sku": "x"}))),
        Step::send(Customer, "PUT", "/stockitems/{K}", Some(json!({"qty": 1}))),
        Step::send(Customer, "DELETE", "/customers/{me}", None),
        Step::send(Guest, "POST", "/customers", Some(json!({"firstname": "x"}))),
        Step::send(Admin, "DELETE", "/stockitems/{K}", None),
        Step::send(Admin, "POST", "/orders", Some(json!({"x": 1}))),
        Step::send(Admin, "PUT", "/orders/{my_order}", Some(json!({"x": 1}))),
        Step::send(Admin, "POST", "/customers/{me}", Some(json!({"x": 1}))),
        Step::send(
            Admin,
            "POST",
            "/products",
            Some(json!({"type_id": "simple", "sku": "no-set"})),
        ),
        Step::send(
            Admin,
            "POST",
            "/customers/{me}/addresses",
            Some(
                json!({"firstname": "A", "lastname": "B", "street": ["S 1"], "city": "C",
                "country_id": "ZZ", "postcode": "1", "telephone": "1"}),
            ),
        ),
        Step::get(Admin, "/orders/9999"),
        Step::get(Admin, "/customers/9999"),
        Step::get(Admin, "/stockitems/99999"),
        Step::get(Admin, "/products/{P}/images/9999"),
        Step::get(Guest, "/no/such/route"),
    ]);
    steps
}
