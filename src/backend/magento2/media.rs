//! Product media calls: the gallery as a store view sees it, and gallery writes.
//!
//! Reads do not use `GET /V1/products/{sku}/media`: that answer carries every file's bytes
//! in base64 (megabytes for a product with a few photos) and its single-entry form needs a
//! different ACL resource. A product read has the same gallery entries (id, label,
//! position, disabled, types, file) without the bytes, in the store view of the call, and
//! with `storeId=0` the default (admin) values.

use bytes::Bytes;
use http::Method;
use serde_json::{Value, json};

use super::{Magento, Scope, UpstreamError, parse, segment};

impl Magento {
    /// `GET /V1/products/{sku}` in `scope`; with `store_id`, the values of that store id
    /// (`0`: the default values, which a GET through `/rest/all` cannot read).
    pub async fn product_in(
        &self,
        scope: Scope<'_>,
        sku: &str,
        store_id: Option<u64>,
    ) -> Result<Bytes, UpstreamError> {
        let query: Vec<(String, String)> = store_id
            .map(|id| vec![("storeId".to_owned(), id.to_string())])
            .unwrap_or_default();
        self.get(scope, &format!("/V1/products/{}", segment(sku)), &query)
            .await
    }

    /// `POST /V1/products/{sku}/media`: adds a gallery entry; the answer is its id.
    /// Through a store code the label, position, disabled flag and roles are that store
    /// view's; through `all` they are the default values.
    pub async fn add_media(
        &self,
        scope: Scope<'_>,
        sku: &str,
        entry: Value,
    ) -> Result<u64, UpstreamError> {
        let body = json!({ "entry": entry });
        let id: Value = self
            .send_json(
                Method::POST,
                scope,
                &format!("/V1/products/{}/media", segment(sku)),
                Some(&body),
            )
            .await?;
        match &id {
            Value::Number(n) => n.as_u64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
        .filter(|&id| id > 0)
        .ok_or_else(|| UpstreamError::Protocol(format!("media create answered {id}")))
    }

    /// `PUT /V1/products/{sku}/media/{id}`: replaces the entry's label, position, disabled
    /// flag and roles (and its file, when `content` is sent). Magento finds the entry by the
    /// `id` inside the body, which is set here.
    pub async fn update_media(
        &self,
        scope: Scope<'_>,
        sku: &str,
        id: u64,
        mut entry: Value,
    ) -> Result<(), UpstreamError> {
        entry["id"] = json!(id);
        let body = json!({ "entry": entry });
        self.call(
            Method::PUT,
            scope,
            &format!("/V1/products/{}/media/{id}", segment(sku)),
            &[],
            Some(&body),
        )
        .await
        .map(|_| ())
    }

    /// `DELETE /V1/products/{sku}/media/{id}` in admin scope: the entry goes in every store.
    pub async fn delete_media(&self, sku: &str, id: u64) -> Result<(), UpstreamError> {
        self.call(
            Method::DELETE,
            Scope::All,
            &format!("/V1/products/{}/media/{id}", segment(sku)),
            &[],
            None,
        )
        .await
        .map(|_| ())
    }

    /// `GET /V1/products/attribute-sets/{id}/attributes`, raw.
    pub async fn attribute_set_attributes(&self, set_id: u64) -> Result<Bytes, UpstreamError> {
        self.get(
            Scope::Default,
            &format!("/V1/products/attribute-sets/{set_id}/attributes"),
            &[],
        )
        .await
    }
}

/// Does an attribute list (the answer of [`Magento::attribute_set_attributes`]) hold
/// `code`?
pub fn has_attribute(attributes: &[u8], code: &str) -> Result<bool, UpstreamError> {
    let list: Vec<Value> = parse(attributes)?;
    Ok(list
        .iter()
        .any(|a| a.get("attribute_code").and_then(Value::as_str) == Some(code)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_lists_are_searched_by_code() {
        let list = br#"[{"attribute_code":"sku"},{"attribute_code":"media_gallery"}]"#;
        assert!(has_attribute(list, "media_gallery").unwrap());
        assert!(!has_attribute(list, "image").unwrap());
        assert!(has_attribute(b"{}", "x").is_err());
    }
}
