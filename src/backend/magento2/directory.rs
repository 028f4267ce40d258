//! The directory: the store's allowed countries and their predefined regions.

use bytes::Bytes;
use serde::Deserialize;

use super::{Magento, Scope, UpstreamError};
use crate::backend::port::lenient_u64;

/// A country as `GET /V1/directory/countries` lists it. Only the allowed countries are
/// listed; `available_regions` is absent for a country without predefined regions.
#[derive(Debug, Clone, Deserialize)]
pub struct Country {
    pub id: String,
    #[serde(default)]
    pub two_letter_abbreviation: String,
    #[serde(default)]
    pub three_letter_abbreviation: String,
    #[serde(default)]
    pub full_name_english: String,
    #[serde(default)]
    pub available_regions: Vec<Region>,
}

/// A predefined region. Its `id` is a string in the directory but the same number as an
/// address's `region_id`.
#[derive(Debug, Clone, Deserialize)]
pub struct Region {
    #[serde(deserialize_with = "lenient_u64")]
    pub id: u64,
    #[serde(default)]
    pub code: String,
    #[serde(default)]
    pub name: String,
}

impl Magento {
    /// `GET /V1/directory/countries` (anonymous), as it came: the caller caches the bytes.
    pub async fn countries(&self) -> Result<Bytes, UpstreamError> {
        self.get(Scope::Default, "/V1/directory/countries", &[])
            .await
    }
}
