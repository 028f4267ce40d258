//! Paths as every store's client writes them: one value as one encoded path segment, and a
//! path's template (its values replaced by `{}`), which the metrics, logs and cassettes name
//! a call by. Which segments of a path are names is each store's own list.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// Characters left as they are in a path segment: RFC 3986 unreserved.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Encodes one path segment (a SKU may hold `/`, spaces, anything).
pub fn segment(value: &str) -> String {
    utf8_percent_encode(value, SEGMENT).to_string()
}

/// `/api/rest/products/12/images/3` -> `/api/rest/products/{}/images/{}`, for a store whose names
/// are `names`: every other segment (a SKU, an id, an e-mail) becomes `{}`, so the endpoint
/// label has a bounded set of values whatever the store holds.
pub fn template(path: &str, names: &[&str]) -> String {
    let mut out = String::with_capacity(path.len());
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        out.push('/');
        if names.contains(&segment) {
            out.push_str(segment);
        } else {
            out.push_str("{}");
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_become_placeholders_and_segments_are_encoded() {
        assert_eq!(
            template("/a/products/x%2Fy/media/3", &["a", "products", "media"]),
            "/a/products/{}/media/{}"
        );
        assert_eq!(template("", &[]), "/");
        assert_eq!(segment("a/b c?d"), "a%2Fb%20c%3Fd");
        assert_eq!(segment("."), ".");
        assert_eq!(segment("é"), "%C3%A9");
    }
}
