//! Magento's Web API conventions every endpoint shares: the error body and messages, input
//! processing, query strings, `searchCriteria`, the `fields=` projection, timestamps.

pub(crate) mod clock;
pub(crate) mod error;
pub(crate) mod fields;
pub(crate) mod input;
pub(crate) mod messages;
pub(crate) mod query;
pub(crate) mod search;
