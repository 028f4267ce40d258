//! One service call as a handler sees it: who calls ([`Caller`]), in which store
//! ([`StoreScope`]), with which parameters and body, and access to the store data ([`Call`]).
//! Handlers know this file, not [`super::dispatch`], which alone knows every handler.

use std::sync::{RwLockReadGuard, RwLockWriteGuard};

use serde_json::{Map, Value};

use crate::model::store::ADMIN_STORE_ID;
use crate::state::{Db, Shared};
use crate::webapi::error::ApiResult;
use crate::webapi::query;

/// Path parameters by name, percent-decoded.
pub(super) type PathParams = Vec<(&'static str, String)>;

/// Who is calling, from the `Authorization: Bearer` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Caller {
    /// The integration token: every ACL resource.
    Integration,
    /// A customer token: the `self` routes of that customer.
    Customer(u64),
    /// No token, or one Magento does not know (it treats those as guests).
    Guest,
}

/// The store view a call runs in.
#[derive(Debug, Clone)]
pub(crate) struct StoreScope {
    pub(crate) id: u32,
    pub(crate) website_id: u32,
}

impl StoreScope {
    pub(crate) fn is_admin(&self) -> bool {
        self.id == ADMIN_STORE_ID
    }
}

/// One service call: the resolved request plus access to the store data.
pub(crate) struct Call<'a> {
    pub(super) shared: &'a Shared,
    pub(crate) store: StoreScope,
    pub(super) params: PathParams,
    pub(crate) query: Map<String, Value>,
    pub(super) body: Map<String, Value>,
    pub(crate) caller: Caller,
    /// `http://host:port` as the client addressed the sandbox, for URLs in answers.
    pub(crate) origin: String,
}

impl Call<'_> {
    pub(crate) fn db(&self) -> RwLockReadGuard<'_, Db> {
        self.shared
            .db
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn db_mut(&self) -> RwLockWriteGuard<'_, Db> {
        self.shared
            .db
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A path parameter, percent-decoded. Routes guarantee the names exist.
    pub(crate) fn param(&self, name: &str) -> &str {
        self.params
            .iter()
            .find(|(n, _)| *n == name)
            .map_or("", |(_, v)| v.as_str())
    }

    /// An `int` path parameter, converted as Magento's input processor does.
    pub(crate) fn param_int(&self, name: &str) -> ApiResult<i64> {
        crate::webapi::input::to_int(&Value::String(self.param(name).to_string()))
    }

    pub(crate) fn body(&self) -> &Map<String, Value> {
        &self.body
    }

    /// A query parameter as text.
    pub(crate) fn query_str(&self, name: &str) -> Option<&str> {
        query::scalar(&self.query, name)
    }
}
