//! Customers and their addresses.
//!
//! Stores write addresses in one of two ways, and an adapter says which through
//! [`People::address_writes`]: one address at a time, the store checking countries and
//! regions itself ([`AddressCalls`], OpenMage), or by saving the whole customer with its
//! address list ([`AddressList`], Magento 2), the gateway checking the address against the
//! store's directory first and verifying the save. Each adapter implements only the calls
//! its store has.

use std::collections::HashSet;

use async_trait::async_trait;
use serde_json::Value;

use super::error::BackendError;
use super::query::SearchCriteria;
use super::records::SearchResult;
use super::setup::Region;

/// An address write for a store that writes addresses by saving the whole customer
/// ([`AddressList`]).
#[derive(Debug, Clone, Default)]
pub struct AddressEdit {
    /// The address changed, or None for a new one (`new_address`).
    pub target: Option<u64>,
    /// The fields set on the changed address.
    pub fields: serde_json::Map<String, Value>,
    /// `Some(true)`: make it the default billing (shipping) address; anything else
    /// changes no default.
    pub billing: Option<bool>,
    pub shipping: Option<bool>,
    pub new_address: Option<Value>,
}

/// The region an address is given.
#[derive(Debug, Clone, Copy)]
pub enum RegionChoice<'a> {
    /// No region (a country without predefined regions, or one that changed).
    None,
    /// One of the country's predefined regions.
    Predefined(&'a Region),
    /// Free text, for a country without predefined regions.
    Text(&'a str),
}

/// How a store writes addresses.
pub enum AddressWrites<'a> {
    /// One address at a time; the store checks countries and regions itself.
    OneAtATime(&'a dyn AddressCalls),
    /// By saving the whole customer with its address list; the gateway checks addresses
    /// against the store's directory first.
    ThroughCustomer(&'a dyn AddressList),
}

/// Customers and addresses.
#[async_trait]
pub trait People: Send + Sync {
    /// A customer with their addresses, in the store's shape.
    async fn customer(&self, id: u64) -> Result<Value, BackendError>;
    async fn search_customers(
        &self,
        criteria: &SearchCriteria,
    ) -> Result<SearchResult<Value>, BackendError>;
    /// Creates a customer. (The write defaults: a store the gateway only reads.)
    async fn create_customer(
        &self,
        _customer: Value,
        _password: &str,
    ) -> Result<Value, BackendError> {
        Err(BackendError::Unsupported("creating a customer".into()))
    }
    /// Saves a customer (the customer mapping's write fields); the store's record.
    async fn save_customer(&self, _id: u64, _customer: Value) -> Result<Value, BackendError> {
        Err(BackendError::Unsupported("changing a customer".into()))
    }
    async fn delete_customer(&self, _id: u64) -> Result<(), BackendError> {
        Err(BackendError::Unsupported("deleting a customer".into()))
    }
    /// An address by id. With the id of its customer (`customer_id`) where the store says
    /// it; an address that does not name one carries its own default flags instead.
    async fn address(&self, id: u64) -> Result<Value, BackendError>;
    /// Address `id` as its owner sees it, given its entry in their record's list
    /// ([`People::addresses_of`]): where the store shows a customer their single address
    /// record differently (OpenMage's dates), that record. By default, the list's entry.
    async fn own_address(&self, _id: u64, listed: Value) -> Result<Value, BackendError> {
        Ok(listed)
    }
    /// A customer record's addresses, each with its default flags as booleans
    /// (`default_billing`, `default_shipping`).
    fn addresses_of(&self, customer: &Value) -> Vec<Value>;
    /// A customer record's default billing and shipping address ids.
    fn default_addresses(&self, customer: &Value) -> (Option<u64>, Option<u64>);
    async fn delete_address(&self, _id: u64) -> Result<(), BackendError> {
        Err(BackendError::Unsupported("deleting an address".into()))
    }
    /// How this store writes addresses (by default: it writes none).
    fn address_writes(&self) -> AddressWrites<'_> {
        AddressWrites::OneAtATime(&NoAddressWrites)
    }
}

/// The address calls of a store the gateway only reads: each says so.
#[derive(Debug)]
pub struct NoAddressWrites;

#[async_trait]
impl AddressCalls for NoAddressWrites {
    async fn add_address(&self, _customer_id: u64, _address: Value) -> Result<u64, BackendError> {
        Err(BackendError::Unsupported("adding an address".into()))
    }

    async fn update_address(&self, _id: u64, _address: Value) -> Result<(), BackendError> {
        Err(BackendError::Unsupported("changing an address".into()))
    }
}

/// Address writes one at a time (the store checks them).
#[async_trait]
pub trait AddressCalls: Send + Sync {
    /// Adds an address (the address mapping's write fields) to a customer; its id.
    async fn add_address(&self, customer_id: u64, address: Value) -> Result<u64, BackendError>;
    /// Changes an address's fields.
    async fn update_address(&self, id: u64, address: Value) -> Result<(), BackendError>;
}

/// Address writes through the customer's save ([`People::save_customer`]).
pub trait AddressList: Send + Sync {
    /// Writes an address's region into its fields, in the store's shape.
    fn set_region(&self, fields: &mut serde_json::Map<String, Value>, region: RegionChoice<'_>);
    /// The customer to save, with one address changed or added as `edit` says, every other
    /// as it came.
    fn customer_with_address(&self, customer: &Value, edit: &AddressEdit) -> Value;
    /// The id a customer save (its answer, `saved`) gave a new address: the one not among
    /// `before`; should several be new, the one holding what was `sent`.
    fn new_address_id(&self, saved: &Value, before: &HashSet<u64>, sent: &Value) -> Option<u64>;
}
