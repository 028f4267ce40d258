//! Customers in Magento 2: the customer repository (read, search, create, save, delete)
//! with its addresses, and customers' sign-ins (a customer token, then whose it is).
//!
//! Magento 2 has no address create or update endpoint: addresses are written by saving
//! their customer with the whole `addresses` list (`PUT /V1/customers/{id}`,
//! [`AddressWrites::ThroughCustomer`], `addresses.rs`). Customer calls run in the default
//! store view's scope, as a storefront account action would.

use async_trait::async_trait;
use http::{HeaderValue, Method};
use serde_json::{Value, json};

use super::{Magento, Scope, SearchCriteria, parse};
use crate::backend::port::{
    AddressWrites, BackendError, People, SearchResult, SignIn, SignInFailure, SignedIn,
};
use crate::backend::values::as_i64;

#[async_trait]
impl SignIn for Magento {
    /// `POST /V1/integration/customer/token` checks the e-mail and password (401 for bad
    /// credentials and a locked account, 400 for empty ones). Whose they are is asked at the
    /// same time, not after (one round trip, not two in a row): the integration's search of
    /// customers by that e-mail. When it finds exactly one, that is the customer the store
    /// signed in (e-mails are unique per website, and the token's website is the default
    /// store view's); when it finds none or several, `GET /V1/customers/me` with the token
    /// says. The token is not kept: the gateway issues its own.
    async fn sign_in(&self, username: &str, password: &str) -> Result<SignedIn, SignInFailure> {
        let body = json!({"username": username, "password": password});
        let token = self.send_json::<String>(
            Method::POST,
            Scope::Default,
            "/V1/integration/customer/token",
            Some(&body),
        );
        let criteria = SearchCriteria::new()
            .filter("email", username.trim(), "eq")
            .page(2, 1);
        let by_email = People::search_customers(self, &criteria);
        let (token, by_email) = tokio::join!(token, by_email);
        let token = match token {
            Ok(token) => token,
            Err(BackendError::Status {
                status: 400 | 401, ..
            }) => return Err(SignInFailure::Refused),
            Err(other) => return Err(SignInFailure::Store(other)),
        };
        let me = match by_email {
            Ok(found) if found.items.len() == 1 => found.items.into_iter().next(),
            _ => None,
        };
        let me = match me {
            Some(me) => me,
            None => self
                .customer_of(&token)
                .await
                .map_err(SignInFailure::Store)?,
        };
        let customer_id = me
            .get("id")
            .and_then(as_i64)
            .filter(|&id| id > 0)
            .ok_or_else(|| {
                SignInFailure::Store(BackendError::Protocol("the customer has no id".into()))
            })? as u64;
        Ok(SignedIn {
            customer_id,
            session_kept: false,
            group: me
                .get("group_id")
                .and_then(as_i64)
                .and_then(|g| u64::try_from(g).ok()),
        })
    }
}

impl Magento {
    /// `GET /V1/customers/me` with a customer's token: whose it is.
    async fn customer_of(&self, token: &str) -> Result<Value, BackendError> {
        let mut authorization = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| BackendError::Protocol("customer token is not a header value".into()))?;
        authorization.set_sensitive(true);
        self.call_as(
            Method::GET,
            Scope::Default,
            "/V1/customers/me",
            authorization,
        )
        .await
        .and_then(|bytes| parse(&bytes))
    }
}

#[async_trait]
impl People for Magento {
    /// `GET /V1/customers/{id}`: the customer with its addresses.
    async fn customer(&self, id: u64) -> Result<Value, BackendError> {
        self.get_json(Scope::Default, &format!("/V1/customers/{id}"), &[])
            .await
    }

    /// `GET /V1/customers/search`.
    async fn search_customers(
        &self,
        criteria: &SearchCriteria,
    ) -> Result<SearchResult<Value>, BackendError> {
        self.search("/V1/customers/search", criteria).await
    }

    /// `POST /V1/customers` with a password. Called with the integration token, so the
    /// group sent is kept (an anonymous create drops it).
    async fn create_customer(
        &self,
        customer: Value,
        password: &str,
    ) -> Result<Value, BackendError> {
        let body = json!({ "customer": customer, "password": password });
        self.send_json(Method::POST, Scope::Default, "/V1/customers", Some(&body))
            .await
    }

    /// `PUT /V1/customers/{id}`: replaces the customer with `customer`. Without an
    /// `addresses` key the stored addresses stay; with one, the list replaces them.
    async fn save_customer(&self, id: u64, customer: Value) -> Result<Value, BackendError> {
        let body = json!({ "customer": customer });
        self.send_json(
            Method::PUT,
            Scope::Default,
            &format!("/V1/customers/{id}"),
            Some(&body),
        )
        .await
    }

    /// `DELETE /V1/customers/{id}`.
    async fn delete_customer(&self, id: u64) -> Result<(), BackendError> {
        self.delete(Scope::Default, &format!("/V1/customers/{id}"))
            .await
    }

    /// `GET /V1/customers/addresses/{id}`: one address, with its `customer_id`.
    async fn address(&self, id: u64) -> Result<Value, BackendError> {
        self.get_json(
            Scope::Default,
            &format!("/V1/customers/addresses/{id}"),
            &[],
        )
        .await
    }

    fn addresses_of(&self, customer: &Value) -> Vec<Value> {
        super::addresses::addresses_of(customer)
    }

    fn default_addresses(&self, customer: &Value) -> (Option<u64>, Option<u64>) {
        super::addresses::defaults_of(customer)
    }

    fn address_writes(&self) -> AddressWrites<'_> {
        AddressWrites::ThroughCustomer(self)
    }

    /// `DELETE /V1/addresses/{id}` (no `customers/` in this path).
    async fn delete_address(&self, id: u64) -> Result<(), BackendError> {
        self.delete(Scope::Default, &format!("/V1/addresses/{id}"))
            .await
    }
}
