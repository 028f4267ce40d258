//! Allowed countries and their regions (served by `api::directory`), also used to validate
//! addresses.
//!
//! Region ids are Magento's real ones (California 12, Texas 57, ...), because clients store
//! `region_id` values and must be able to map them back to codes.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct RegionInfo {
    #[serde(deserialize_with = "id_from_string")]
    pub(crate) id: u32,
    pub(crate) code: String,
    pub(crate) name: String,
}

/// Magento's directory API prints region ids as strings; the fixture follows it.
fn id_from_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let value = Value::deserialize(d)?;
    match &value {
        Value::String(s) => s.parse().map_err(serde::de::Error::custom),
        Value::Number(n) => n
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| serde::de::Error::custom("region id out of range")),
        _ => Err(serde::de::Error::custom("region id must be a string")),
    }
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Country {
    pub(crate) id: String,
    pub(crate) three_letter_abbreviation: String,
    pub(crate) full_name_english: String,
    #[serde(default)]
    pub(crate) available_regions: Vec<RegionInfo>,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Directory {
    pub(crate) countries: Vec<Country>,
    /// Country names per locale other than en_US.
    #[serde(default)]
    pub(crate) locale_names: BTreeMap<String, BTreeMap<String, String>>,
    /// `general/region/state_required`.
    pub(crate) region_required_countries: Vec<String>,
    /// `general/country/optional_zip_countries`.
    pub(crate) optional_zip_countries: Vec<String>,
}

impl Directory {
    pub(crate) fn country(&self, id: &str) -> Option<&Country> {
        self.countries.iter().find(|c| c.id == id)
    }

    pub(crate) fn region(&self, country: &str, region_id: u32) -> Option<&RegionInfo> {
        self.country(country)?
            .available_regions
            .iter()
            .find(|r| r.id == region_id)
    }

    pub(crate) fn region_by_code(&self, country: &str, code: &str) -> Option<&RegionInfo> {
        self.country(country)?
            .available_regions
            .iter()
            .find(|r| r.code.eq_ignore_ascii_case(code))
    }

    pub(crate) fn is_region_required(&self, country: &str) -> bool {
        self.region_required_countries.iter().any(|c| c == country)
    }

    pub(crate) fn is_zip_optional(&self, country: &str) -> bool {
        self.optional_zip_countries.iter().any(|c| c == country)
    }

    pub(crate) fn to_json(&self, country: &Country, locale: &str) -> Value {
        let local_name = self
            .locale_names
            .get(locale)
            .and_then(|names| names.get(&country.id))
            .cloned()
            .unwrap_or_else(|| country.full_name_english.clone());
        let mut out = Map::new();
        out.insert("id".into(), json!(country.id));
        out.insert("two_letter_abbreviation".into(), json!(country.id));
        out.insert(
            "three_letter_abbreviation".into(),
            json!(country.three_letter_abbreviation),
        );
        out.insert("full_name_locale".into(), json!(local_name));
        out.insert("full_name_english".into(), json!(country.full_name_english));
        if !country.available_regions.is_empty() {
            let regions: Vec<Value> = country
                .available_regions
                .iter()
                .map(|r| json!({"id": r.id.to_string(), "code": r.code, "name": r.name}))
                .collect();
            out.insert("available_regions".into(), Value::Array(regions));
        }
        Value::Object(out)
    }
}

pub(crate) fn currency_symbol(code: &str) -> String {
    match code {
        "USD" => "$".into(),
        "EUR" => "€".into(),
        "GBP" => "£".into(),
        "CAD" => "CA$".into(),
        other => format!("{other} "),
    }
}
