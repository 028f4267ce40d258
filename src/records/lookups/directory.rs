//! Countries and regions from the store's directory, for checking addresses before any
//! write (SPEC 7's country and region messages) and for turning a region code or name into
//! the store's region id.
//!
//! The list is the store's allowed countries: the same for every caller, so one cached
//! entry is shared (it holds nothing about anyone).

use std::sync::Arc;

use futures_util::future::BoxFuture;

use crate::app::AppState;
use crate::backend::port::{Backend, BackendError, Country, Region};
use crate::http::ApiError;

use crate::cache::keys::{key, tag};

use crate::records::{renew_typed, typed};

/// The countries and the tags their entry carries.
type Fetched = Result<(Vec<Country>, Vec<String>), BackendError>;

fn fetch_countries(backend: Arc<dyn Backend>) -> BoxFuture<'static, Fetched> {
    Box::pin(async move { Ok((backend.countries().await?, vec![tag::DIRECTORY.to_owned()])) })
}

/// The allowed countries with their predefined regions, through the cache.
pub async fn countries(app: &AppState) -> Result<Vec<Country>, ApiError> {
    let backend = app.backend.clone();
    let key = key::countries(backend.default_store());
    typed(app, key, move || fetch_countries(backend)).await
}

/// The countries fetched again now (`keeper`).
pub async fn renew_countries(app: &AppState) -> Result<(), ApiError> {
    let backend = app.backend.clone();
    let key = key::countries(backend.default_store());
    renew_typed(app, key, move || fetch_countries(backend)).await
}

/// The country a 2- or 3-letter code names (`US`, `usa`), if the store allows it.
pub fn find_country<'c>(countries: &'c [Country], code: &str) -> Option<&'c Country> {
    let code = code.trim();
    countries.iter().find(|c| {
        c.id.eq_ignore_ascii_case(code)
            || (!c.two_letter_abbreviation.is_empty()
                && c.two_letter_abbreviation.eq_ignore_ascii_case(code))
            || (!c.three_letter_abbreviation.is_empty()
                && c.three_letter_abbreviation.eq_ignore_ascii_case(code))
    })
}

/// The predefined region of `country` a code (`NY`) or a name (`New York`) names, compared
/// without regard to case.
pub fn find_region<'c>(country: &'c Country, text: &str) -> Option<&'c Region> {
    let text = text.trim();
    let same = |a: &str| !a.is_empty() && a.to_lowercase() == text.to_lowercase();
    country
        .available_regions
        .iter()
        .find(|r| same(&r.code))
        .or_else(|| country.available_regions.iter().find(|r| same(&r.name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us() -> Country {
        serde_json::from_value(serde_json::json!({
            "id": "US", "two_letter_abbreviation": "US", "three_letter_abbreviation": "USA",
            "available_regions": [
                {"id": "43", "code": "NY", "name": "New York"},
                {"id": "12", "code": "CA", "name": "California"}
            ]
        }))
        .unwrap()
    }

    #[test]
    fn countries_by_either_code_and_regions_by_code_or_name() {
        let list = vec![us()];
        assert_eq!(find_country(&list, "us").unwrap().id, "US");
        assert_eq!(find_country(&list, "USA").unwrap().id, "US");
        assert!(find_country(&list, "CA").is_none());
        let us = &list[0];
        assert_eq!(find_region(us, "ny").unwrap().id, 43);
        assert_eq!(find_region(us, " california ").unwrap().id, 12);
        assert!(find_region(us, "Ontario").is_none());
        assert!(find_region(us, "").is_none());
    }
}
