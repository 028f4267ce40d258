//! The list-parameter parser (`page`, `limit`, `order`, `dir`, `filter[n][...]`) against
//! arbitrary query strings: never a panic, only the spec's 400s, and every accepted query
//! within the documented bounds.

#![no_main]

use libfuzzer_sys::fuzz_target;
use storegate::http::query::{ListParams, MAX_LIMIT};

fuzz_target!(|data: &[u8]| {
    let Ok(query) = std::str::from_utf8(data) else {
        return;
    };
    match ListParams::parse(Some(query)) {
        Ok(params) => {
            assert!(params.page >= 1);
            assert!((1..=MAX_LIMIT).contains(&params.limit));
            assert!(params.filters.len() <= 20);
            assert!(params.filters.iter().all(|f| !f.attribute.is_empty()));
            // Parsing is a function of the text: the cache key it gives is stable.
            let again = ListParams::parse(Some(query)).expect("parsed once, parses again");
            assert_eq!(params.canonical(), again.canonical());
        }
        Err(error) => assert_eq!(error.status().as_u16(), 400, "{error}"),
    }
});
