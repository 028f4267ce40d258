//! Customers and their addresses through the store's REST API, and a customer's sign-in
//! with their store password (`signin.rs`).

use serde_json::{Value, json};

use super::lists::{self, As, id_of};
use super::records::{OpenMageBackend, not_found, not_yet};
use crate::backend::port::{SearchCriteria, SearchResult, UpstreamError};

impl OpenMageBackend {
    /// The store checks the password on its own authorization page (`signin`); the
    /// answer is the customer's store access token and its secret, as one string.
    pub(super) async fn customer_token(
        &self,
        username: &str,
        password: &str,
    ) -> Result<String, UpstreamError> {
        let (token, secret) = self.client.customer_sign_in(username, password).await?;
        Ok(format!("{token}&{secret}"))
    }

    /// The customer's own record as the store shows it to them (`GET /customers` signed
    /// with their token lists only them, keyed by their id).
    pub(super) async fn customer_me(&self, customer_token: &str) -> Result<Value, UpstreamError> {
        let (token, secret) = customer_token
            .split_once('&')
            .ok_or_else(|| UpstreamError::Protocol("not a store sign-in token".into()))?;
        let raw = self
            .client
            .get_signed_as("/customers", &[], token, secret)
            .await?;
        let mut me = lists::items(&raw)?
            .into_iter()
            .next()
            .ok_or_else(not_found)?;
        let id = id_of(&me).ok_or_else(not_found)?;
        me["id"] = json!(id);
        Ok(me)
    }

    pub(super) async fn search_customers(
        &self,
        criteria: &SearchCriteria,
    ) -> Result<SearchResult<Value>, UpstreamError> {
        let raw = self
            .client
            .page(As::Admin, "/customers", criteria, &[])
            .await?;
        lists::read_page(&raw).map(Self::with_ids)
    }

    pub(super) async fn create_customer(
        &self,
        customer: Value,
        password: &str,
    ) -> Result<Value, UpstreamError> {
        let mut body = customer;
        body["password"] = json!(password);
        let id = self.client.create("/customers", &body).await?;
        let id: u64 = id
            .parse()
            .map_err(|_| UpstreamError::Protocol(format!("created id {id}")))?;
        self.customer_record(id).await
    }

    pub(super) async fn save_customer(
        &self,
        id: u64,
        customer: Value,
    ) -> Result<Value, UpstreamError> {
        let before = self.customer_record(id).await?;
        if customer.get("addresses") != before.get("addresses")
            && customer.get("addresses").is_some()
        {
            return Err(not_yet("an address write"));
        }
        let mut body = customer;
        if let Some(object) = body.as_object_mut() {
            for field in ["id", "addresses", "default_billing", "default_shipping"] {
                object.remove(field);
            }
        }
        self.client.put(&format!("/customers/{id}"), &body).await?;
        self.customer_record(id).await
    }

    pub(super) async fn add_address(
        &self,
        customer_id: u64,
        address: Value,
    ) -> Result<u64, UpstreamError> {
        let id = self
            .client
            .create(&format!("/customers/{customer_id}/addresses"), &address)
            .await?;
        id.parse()
            .map_err(|_| UpstreamError::Protocol(format!("created address id {id}")))
    }

    pub(super) async fn update_address(
        &self,
        id: u64,
        address: Value,
    ) -> Result<(), UpstreamError> {
        self.client
            .put(&format!("/customers/addresses/{id}"), &address)
            .await
            .map(|_| ())
    }
}
