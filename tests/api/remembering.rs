//! A Magento customer that remembers its writes, for tests of writes the gateway verifies
//! by reading the customer back (`customer_save`): a GET after a save shows the save.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::helpers::{any_scope, fixture};

/// What a save answers.
#[derive(Clone)]
pub enum Answer {
    /// A recorded exchange's response, whatever was sent.
    Recorded(&'static str),
    /// What was sent, with ids given to new addresses (from this one on), as Magento does.
    Echo { next_address_id: u64 },
}

/// The customer's current record, shared with the mocks.
#[derive(Clone)]
pub struct Remembered(pub Arc<Mutex<Value>>);

impl Remembered {
    pub fn get(&self) -> Value {
        self.0.lock().unwrap().clone()
    }
    pub fn set(&self, customer: Value) {
        *self.0.lock().unwrap() = customer;
    }
}

/// Runs before a read is answered, with the read's number (1 for the first): another
/// writer's change lands there.
pub type OnRead = Box<dyn Fn(usize, &mut Value) + Send + Sync>;

struct Read(Remembered, Mutex<usize>, OnRead);

impl Respond for Read {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let n = {
            let mut count = self.1.lock().unwrap();
            *count += 1;
            *count
        };
        let mut customer = self.0.get();
        (self.2)(n, &mut customer);
        self.0.set(customer.clone());
        ResponseTemplate::new(200).set_body_json(customer)
    }
}

struct Save(Remembered, Answer, Arc<Mutex<u64>>);

impl Respond for Save {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let saved = match &self.1 {
            Answer::Recorded(name) => fixture(name)["response"]["body"].clone(),
            Answer::Echo { .. } => {
                let mut customer = request.body_json::<Value>().unwrap()["customer"].clone();
                let mut next = self.2.lock().unwrap();
                let id = customer["id"].clone();
                let mut defaults = Vec::new();
                if let Some(addresses) = customer["addresses"].as_array_mut() {
                    for address in addresses {
                        if address.get("id").is_none_or(Value::is_null) {
                            address["id"] = json!(*next);
                            *next += 1;
                        }
                        address["customer_id"] = id.clone();
                        // Magento moves an address's default flags to the customer record.
                        for key in ["default_billing", "default_shipping"] {
                            if address[key] == json!(true) {
                                defaults.push((key, json!(address["id"].to_string())));
                            }
                        }
                    }
                } else {
                    // No list sent: Magento keeps the stored addresses.
                    customer["addresses"] = self.0.get()["addresses"].clone();
                }
                for (key, value) in defaults {
                    customer[key] = value;
                }
                customer
            }
        };
        self.0.set(saved.clone());
        ResponseTemplate::new(200).set_body_json(saved)
    }
}

struct DeleteAddress(Remembered);

impl Respond for DeleteAddress {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let id: u64 = request
            .url
            .path()
            .rsplit('/')
            .next()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let mut customer = self.0.get();
        if let Some(addresses) = customer["addresses"].as_array_mut() {
            addresses.retain(|a| a["id"].as_u64() != Some(id));
        }
        self.0.set(customer);
        ResponseTemplate::new(200).set_body_json(true)
    }
}

/// Mounts customer `id` (starting as `initial`) ahead of any recorded answer: reads show the
/// last save, saves answer as `answer` says, address deletes take the address out.
pub async fn remember_customer(
    server: &MockServer,
    id: u64,
    initial: Value,
    answer: Answer,
) -> Remembered {
    remember_customer_with(server, id, initial, answer, Box::new(|_, _| {})).await
}

/// [`remember_customer`] with another writer: `on_read` may change the customer before
/// each read is answered.
pub async fn remember_customer_with(
    server: &MockServer,
    id: u64,
    initial: Value,
    answer: Answer,
    on_read: OnRead,
) -> Remembered {
    let state = Remembered(Arc::new(Mutex::new(initial)));
    let next = match answer {
        Answer::Echo { next_address_id } => next_address_id,
        Answer::Recorded(_) => 0,
    };
    Mock::given(method("GET"))
        .and(path_regex(any_scope(&format!("/V1/customers/{id}"))))
        .respond_with(Read(state.clone(), Mutex::new(0), on_read))
        .with_priority(1)
        .mount(server)
        .await;
    Mock::given(method("PUT"))
        .and(path_regex(any_scope(&format!("/V1/customers/{id}"))))
        .respond_with(Save(state.clone(), answer, Arc::new(Mutex::new(next))))
        .with_priority(1)
        .mount(server)
        .await;
    Mock::given(method("DELETE"))
        .and(path_regex("^/rest/(?:[a-z0-9_]+/)?V1/addresses/[0-9]+$"))
        .respond_with(DeleteAddress(state.clone()))
        .with_priority(1)
        .mount(server)
        .await;
    state
}
