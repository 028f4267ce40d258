//! The XML request-body reader against arbitrary input: it must never panic, never recurse
//! past its depth bound, and answer every document with a tree or an error.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use storegate::http::xml::{Limits, read_document};

fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let limits = Limits {
        max_depth: 8,
        max_elements: 200,
    };
    if let Ok(value) = read_document(text, limits) {
        // One level per element, plus one for the lists repeated names collect into.
        assert!(
            depth(&value) <= 2 * limits.max_depth,
            "tree deeper than the reader allows"
        );
        // Whatever was read can be written back out.
        let _ = storegate::http::xml::write_document(&value, storegate::http::xml::TopMap::Natural);
    }
});
