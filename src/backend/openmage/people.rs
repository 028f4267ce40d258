//! Customers and their addresses through the store's REST API, and a customer's sign-in
//! with their store password (checked on the store's own authorization page, `signin.rs`),
//! which gives a session the adapter keeps for them (their prices are then the store's own).

use async_trait::async_trait;
use serde_json::{Value, json};

use super::lists::{self, id_of};
use super::records::{OpenMageBackend, not_found, not_yet, parse};
use crate::backend::port::{
    AddressCalls, AddressWrites, BackendError, People, SearchCriteria, SearchResult, SignIn,
    SignInFailure, SignedIn, StoreSession,
};
use crate::backend::values::as_i64;

#[async_trait]
impl SignIn for OpenMageBackend {
    /// The store checks the password on its own authorization page; the access token it
    /// gives reads the customer's own record as the store shows it to them, and is kept as
    /// their session (for the gateway's own consumer).
    async fn sign_in(&self, username: &str, password: &str) -> Result<SignedIn, SignInFailure> {
        let (token, secret) = match self.client.customer_sign_in(username, password).await {
            Ok(pair) => pair,
            Err(BackendError::Status {
                status: 400 | 401, ..
            }) => return Err(SignInFailure::Refused),
            Err(other) => return Err(SignInFailure::Store(other)),
        };
        // `GET /customers` signed with their token lists only them, keyed by their id.
        let me = async {
            let raw = self
                .client
                .get_signed_as("/customers", &[], &token, &secret)
                .await?;
            let me = lists::items(&raw)?
                .into_iter()
                .next()
                .ok_or_else(not_found)?;
            id_of(&me).ok_or_else(not_found)
        };
        let customer_id = me.await.map_err(SignInFailure::Store)?;
        let session = StoreSession {
            customer_id,
            consumer: None,
            token,
            secret,
        };
        Ok(SignedIn {
            customer_id,
            session_kept: self.keep_session(customer_id, &session.to_text()).await,
            // Their group decides nothing here: the store prices them through the session.
            group: None,
        })
    }

    async fn has_session(&self, customer_id: u64) -> bool {
        self.session_of(customer_id).await.is_some()
    }
}

#[async_trait]
impl People for OpenMageBackend {
    async fn customer(&self, id: u64) -> Result<Value, BackendError> {
        self.customer_record(id).await
    }

    async fn search_customers(
        &self,
        criteria: &SearchCriteria,
    ) -> Result<SearchResult<Value>, BackendError> {
        self.admin_search("/customers", criteria).await
    }

    async fn create_customer(
        &self,
        customer: Value,
        password: &str,
    ) -> Result<Value, BackendError> {
        let mut body = customer;
        body["password"] = json!(password);
        let id = self.create("/customers", &body, "created id").await?;
        self.customer_record(id).await
    }

    async fn save_customer(&self, id: u64, customer: Value) -> Result<Value, BackendError> {
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

    async fn delete_customer(&self, id: u64) -> Result<(), BackendError> {
        self.client
            .delete(&format!("/customers/{id}"), None)
            .await
            .map(|_| ())
    }

    async fn address(&self, id: u64) -> Result<Value, BackendError> {
        let mut address = parse(
            &self
                .client
                .get(&format!("/customers/addresses/{id}"), &[])
                .await?,
        )?;
        address["id"] = json!(id);
        Ok(address)
    }

    /// A single address record is the whole answer, its own default flags and dates in
    /// the store's single-record form: what the store shows its customer.
    async fn own_address(&self, id: u64, _listed: Value) -> Result<Value, BackendError> {
        People::address(self, id).await
    }

    /// The addresses composed into the customer record, their flags as booleans too.
    fn addresses_of(&self, customer: &Value) -> Vec<Value> {
        let mut list: Vec<Value> = customer
            .get("addresses")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for address in &mut list {
            for (flag, field) in [
                ("is_default_billing", "default_billing"),
                ("is_default_shipping", "default_shipping"),
            ] {
                let on = address.get(flag).and_then(as_i64).is_some_and(|v| v != 0);
                address[field] = json!(on);
            }
        }
        list
    }

    fn default_addresses(&self, customer: &Value) -> (Option<u64>, Option<u64>) {
        let id = |key: &str| {
            customer
                .get(key)
                .and_then(as_i64)
                .and_then(|id| u64::try_from(id).ok())
                .filter(|&id| id > 0)
        };
        (id("default_billing"), id("default_shipping"))
    }

    async fn delete_address(&self, id: u64) -> Result<(), BackendError> {
        self.client
            .delete(&format!("/customers/addresses/{id}"), None)
            .await
            .map(|_| ())
    }

    /// The store adds and changes one address at a time, and checks countries and regions
    /// itself.
    fn address_writes(&self) -> AddressWrites<'_> {
        AddressWrites::OneAtATime(self)
    }
}

#[async_trait]
impl AddressCalls for OpenMageBackend {
    async fn add_address(&self, customer_id: u64, address: Value) -> Result<u64, BackendError> {
        let path = format!("/customers/{customer_id}/addresses");
        self.create(&path, &address, "created address id").await
    }

    async fn update_address(&self, id: u64, address: Value) -> Result<(), BackendError> {
        self.client
            .put(&format!("/customers/addresses/{id}"), &address)
            .await
            .map(|_| ())
    }
}
