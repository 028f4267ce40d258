//! Customer and address calls: credentials checks for the gateway's own customer tokens,
//! and the customer repository (read, search, create, save, delete) with its addresses.
//!
//! Magento 2 has no address create or update endpoint: addresses are written by saving
//! their customer with the whole `addresses` list (`PUT /V1/customers/{id}`). What to put
//! in that list is the resources' business; this module only carries it. Customer calls run
//! in the default store view's scope, as a storefront account action would.

use http::{HeaderValue, Method};
use serde_json::{Value, json};

use super::{Magento, Scope, SearchCriteria, UpstreamError, parse};
use crate::backend::port::SearchResult;

impl Magento {
    /// Checks a customer's e-mail and password: Magento answers with a customer token.
    pub async fn customer_token(
        &self,
        username: &str,
        password: &str,
    ) -> Result<String, UpstreamError> {
        let body = json!({"username": username, "password": password});
        self.send_json(
            Method::POST,
            Scope::Default,
            "/V1/integration/customer/token",
            Some(&body),
        )
        .await
    }

    /// The customer a Magento customer token belongs to (`GET /V1/customers/me`).
    pub async fn customer_me(&self, customer_token: &str) -> Result<Value, UpstreamError> {
        let mut authorization = HeaderValue::from_str(&format!("Bearer {customer_token}"))
            .map_err(|_| UpstreamError::Protocol("customer token is not a header value".into()))?;
        authorization.set_sensitive(true);
        let bytes = self
            .call_as(
                Method::GET,
                Scope::Default,
                "/V1/customers/me",
                authorization,
            )
            .await?;
        parse(&bytes)
    }

    /// `GET /V1/customers/{id}`: the customer with its addresses.
    pub async fn customer(&self, id: u64) -> Result<Value, UpstreamError> {
        self.get_json(Scope::Default, &format!("/V1/customers/{id}"), &[])
            .await
    }

    /// `GET /V1/customers/search`.
    pub async fn search_customers(
        &self,
        criteria: &SearchCriteria,
    ) -> Result<SearchResult<Value>, UpstreamError> {
        self.get_json(
            Scope::Default,
            "/V1/customers/search",
            &super::search::to_query(criteria),
        )
        .await
    }

    /// `POST /V1/customers` with a password. Called with the integration token, so the
    /// group sent is kept (an anonymous create drops it).
    pub async fn create_customer(
        &self,
        customer: Value,
        password: &str,
    ) -> Result<Value, UpstreamError> {
        let body = json!({ "customer": customer, "password": password });
        self.send_json(Method::POST, Scope::Default, "/V1/customers", Some(&body))
            .await
    }

    /// `PUT /V1/customers/{id}`: replaces the customer with `customer`. Without an
    /// `addresses` key the stored addresses stay; with one, the list replaces them.
    pub async fn save_customer(&self, id: u64, customer: Value) -> Result<Value, UpstreamError> {
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
    pub async fn delete_customer(&self, id: u64) -> Result<(), UpstreamError> {
        self.call(
            Method::DELETE,
            Scope::Default,
            &format!("/V1/customers/{id}"),
            &[],
            None,
        )
        .await
        .map(|_| ())
    }

    /// `GET /V1/customers/addresses/{id}`: one address, with its `customer_id`.
    pub async fn address(&self, id: u64) -> Result<Value, UpstreamError> {
        self.get_json(
            Scope::Default,
            &format!("/V1/customers/addresses/{id}"),
            &[],
        )
        .await
    }

    /// `DELETE /V1/addresses/{id}` (no `customers/` in this path).
    pub async fn delete_address(&self, id: u64) -> Result<(), UpstreamError> {
        self.call(
            Method::DELETE,
            Scope::Default,
            &format!("/V1/addresses/{id}"),
            &[],
            None,
        )
        .await
        .map(|_| ())
    }
}
