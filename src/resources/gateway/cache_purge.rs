//! `POST /api/rest/cache/purge` (Admin only): empties cache entries by tag, or all of them,
//! after changes made directly in Magento (the admin panel, an import, a reindex) that the
//! gateway could not see. Writes through the gateway purge on their own.
//!
//! The body (JSON, or XML in the API's usual tree) is
//! `{"tags": ["cat_p_12", "p:13", ...]}` or `{"all": true}`; `tags` may also be one
//! comma-separated string, which is what Magento's `X-Magento-Tags` header holds. Tags are
//! the gateway's own (`p:<product id>`, `s:<sku>`, `c:<category id>`, `pl` for every
//! product list, `stores`, and those of the other resources) or Magento's cache tags, which
//! are translated by [`crate::cache::keys::from_magento_tag`] (its table says into what).
//!
//! The answer is 200 with the tags purged after translation (`{"all": false, "tags":
//! [...]}`), so an operator sees what a Magento tag became. Like Varnish's bans, a purge is
//! O(tags): entries are not scanned, they are found stale on their next read.

use axum::response::Response;
use http::Method;
use serde_json::{Value, json};

use crate::http::body::decode;
use crate::http::{ApiError, Doc, Format, ok};
use crate::resources::call::ApiCall;

use crate::cache::keys::from_magento_tag;

/// At most this many tags in one purge, each at most this long.
const MAX_TAGS: usize = 1000;
const MAX_TAG_LEN: usize = 200;

pub async fn purge(call: ApiCall) -> Result<Response, ApiError> {
    call.admin_only()?;
    if call.method != Method::POST {
        return Err(ApiError::not_supported());
    }
    let (app, caller) = (&call.app, call.caller);
    let input = decode(
        &call.headers,
        call.body,
        Format::Json,
        app.config.body_limit,
    )
    .await?;
    let request = PurgeRequest::read(&input)?;
    if request.all {
        app.cache.invalidate_all();
        tracing::info!("cache purged: everything");
    } else {
        app.cache.invalidate(&request.tags);
        tracing::info!(tags = ?request.tags, "cache purged by tag");
    }
    Ok(ok(
        caller.format,
        &Doc::new(json!({"all": request.all, "tags": request.tags})),
    ))
}

/// What to purge, tags already translated and deduplicated.
#[derive(Debug, PartialEq, Eq)]
struct PurgeRequest {
    all: bool,
    tags: Vec<String>,
}

impl PurgeRequest {
    fn read(input: &Value) -> Result<PurgeRequest, ApiError> {
        let Value::Object(map) = input else {
            return Err(ApiError::request_data_invalid());
        };
        let all = match map.get("all") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => match s.trim() {
                "1" | "true" => true,
                "0" | "false" | "" => false,
                _ => return Err(invalid_all()),
            },
            Some(Value::Number(n)) => match n.as_u64() {
                Some(1) => true,
                Some(0) => false,
                _ => return Err(invalid_all()),
            },
            Some(_) => return Err(invalid_all()),
        };
        let raw: Vec<&str> = match map.get("tags") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(s)) => s.split(',').collect(),
            Some(Value::Array(items)) => {
                let mut raw = Vec::with_capacity(items.len());
                for item in items {
                    match item {
                        Value::String(s) => raw.extend(s.split(',')),
                        _ => return Err(invalid_tags()),
                    }
                }
                raw
            }
            Some(_) => return Err(invalid_tags()),
        };
        let mut tags: Vec<String> = Vec::new();
        for tag in raw.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
            if tag.len() > MAX_TAG_LEN || tag.chars().any(char::is_control) {
                return Err(invalid_tags());
            }
            for translated in from_magento_tag(tag) {
                if !tags.contains(&translated) {
                    tags.push(translated);
                }
            }
            if tags.len() > MAX_TAGS {
                return Err(ApiError::bad_request(format!(
                    "At most {MAX_TAGS} tags may be purged at once."
                )));
            }
        }
        if !all && tags.is_empty() {
            return Err(ApiError::validation(vec![
                "Missing \"tags\" in request.".into(),
            ]));
        }
        Ok(PurgeRequest {
            all,
            tags: if all { Vec::new() } else { tags },
        })
    }
}

fn invalid_all() -> ApiError {
    ApiError::validation(vec!["Invalid \"all\": use true or false.".into()])
}

fn invalid_tags() -> ApiError {
    ApiError::validation(vec![
        "Invalid \"tags\": use a list of cache tags or one comma-separated string.".into(),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(value: Value) -> Result<PurgeRequest, u16> {
        PurgeRequest::read(&value).map_err(|e| e.status().as_u16())
    }

    #[test]
    fn bodies() {
        assert_eq!(
            read(json!({"tags": ["cat_p_1", "p:1", "cat_p_2"]})).unwrap(),
            PurgeRequest {
                all: false,
                tags: vec!["p:1".into(), "pl".into(), "p:2".into()]
            }
        );
        assert_eq!(
            read(json!({"tags": "cat_p_1, cat_c_3"})).unwrap().tags,
            vec!["p:1", "pl", "c:3"]
        );
        assert!(read(json!({"all": true})).unwrap().all);
        assert!(read(json!({"all": "1"})).unwrap().all);
        assert_eq!(
            read(json!({"all": true, "tags": ["p:1"]})).unwrap().tags,
            Vec::<String>::new()
        );
        for bad in [
            json!({}),
            json!({"tags": []}),
            json!({"tags": [1]}),
            json!({"tags": {"a": "b"}}),
            json!({"all": "maybe"}),
            json!({"all": false}),
            json!(["p:1"]),
            json!({"tags": ["a\u{7}b"]}),
            json!({"tags": ["x".repeat(201)]}),
        ] {
            assert_eq!(read(bad.clone()), Err(400), "{bad}");
        }
        let many: Vec<String> = (0..1001).map(|i| format!("p:{i}")).collect();
        assert_eq!(read(json!({ "tags": many })), Err(400));
    }
}
