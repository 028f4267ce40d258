//! A product's category and website assignments (the original's `/products/:id/categories`
//! and `/products/:id/websites`): a category record, the websites, and the link
//! repositories' writes. Magento 2 keeps the assignments on the product
//! (`extension_attributes.category_links` and `website_ids`), which the product read
//! already carries; only the writes and the records they name need calls of their own.
//! Writes run in the admin scope (`/rest/all`), like every catalog write.

use bytes::Bytes;
use http::Method;
use serde_json::{Value, json};

use super::{Magento, Scope, UpstreamError, parse, segment};
use crate::backend::port::{Assignments, Category};

fn id_of(value: &Value) -> Option<u64> {
    value
        .as_u64()
        .or_else(|| value.as_str()?.trim().parse().ok())
        .filter(|&id| id > 0)
}

/// Where a Magento 2 product record is assigned: `extension_attributes.category_links`
/// (category ids as strings) and `website_ids`.
/// Is a product on a website? True when the record has no `website_ids` (Magento leaves
/// them out in some scopes).
pub fn on_website(product: &Value, website: u64) -> bool {
    match product.pointer("/extension_attributes/website_ids") {
        Some(Value::Array(ids)) => ids.iter().any(|id| id_of(id) == Some(website)),
        _ => true,
    }
}

pub fn read_assignments(product: &Value) -> Assignments {
    let ids = |pointer: &str, field: Option<&str>| {
        let mut ids: Vec<u64> = product
            .pointer(pointer)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|entry| id_of(field.map_or(Some(entry), |f| entry.get(f))?))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    };
    Assignments {
        category_ids: ids("/extension_attributes/category_links", Some("category_id")),
        website_ids: ids("/extension_attributes/website_ids", None),
    }
}

/// A `CategoryInterface`: its id and `is_active`.
pub fn read_category(raw: &[u8]) -> Result<Category, UpstreamError> {
    let category: Value = parse(raw)?;
    let id = category
        .get("id")
        .and_then(id_of)
        .ok_or_else(|| UpstreamError::Protocol("a category without an id".into()))?;
    let is_active = match category.get("is_active") {
        Some(Value::Bool(b)) => *b,
        Some(other) => id_of(other).is_some(),
        None => true,
    };
    Ok(Category { id, is_active })
}

/// `GET /V1/store/websites`: the ids, without the admin website 0.
pub fn read_websites(raw: &[u8]) -> Result<Vec<u64>, UpstreamError> {
    let websites: Vec<Value> = parse(raw)?;
    Ok(websites
        .iter()
        .filter_map(|w| w.get("id").and_then(id_of))
        .collect())
}

impl Magento {
    /// `GET /V1/categories/{id}`, raw: the caller caches the bytes.
    pub async fn category(&self, id: u64) -> Result<Bytes, UpstreamError> {
        self.get(Scope::Default, &format!("/V1/categories/{id}"), &[])
            .await
    }

    /// `GET /V1/store/websites`, raw: the caller caches the bytes.
    pub async fn websites(&self) -> Result<Bytes, UpstreamError> {
        self.get(Scope::Default, "/V1/store/websites", &[]).await
    }

    /// `POST /V1/categories/{id}/products`: assigns the product (an upsert of the link).
    pub async fn assign_category(&self, category_id: u64, sku: &str) -> Result<(), UpstreamError> {
        // A new assignment goes first in the category, as the original's did.
        let position = 0;
        let body = json!({"productLink": {
            "sku": sku,
            "position": position,
            "category_id": category_id.to_string(),
        }});
        self.call(
            Method::POST,
            Scope::All,
            &format!("/V1/categories/{category_id}/products"),
            &[],
            Some(&body),
        )
        .await
        .map(|_| ())
    }

    /// `DELETE /V1/categories/{id}/products/{sku}`.
    pub async fn unassign_category(
        &self,
        category_id: u64,
        sku: &str,
    ) -> Result<(), UpstreamError> {
        self.call(
            Method::DELETE,
            Scope::All,
            &format!("/V1/categories/{category_id}/products/{}", segment(sku)),
            &[],
            None,
        )
        .await
        .map(|_| ())
    }

    /// `POST /V1/products/{sku}/websites`.
    pub async fn assign_website(&self, sku: &str, website_id: u64) -> Result<(), UpstreamError> {
        let body = json!({"productWebsiteLink": {"sku": sku, "website_id": website_id}});
        self.call(
            Method::POST,
            Scope::All,
            &format!("/V1/products/{}/websites", segment(sku)),
            &[],
            Some(&body),
        )
        .await
        .map(|_| ())
    }

    /// `DELETE /V1/products/{sku}/websites/{websiteId}`.
    pub async fn unassign_website(&self, sku: &str, website_id: u64) -> Result<(), UpstreamError> {
        self.call(
            Method::DELETE,
            Scope::All,
            &format!("/V1/products/{}/websites/{website_id}", segment(sku)),
            &[],
            None,
        )
        .await
        .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_are_read_from_the_product_record() {
        let record = json!({"extension_attributes": {
            "category_links": [{"category_id": "5", "position": 0}, {"category_id": 3}],
            "website_ids": [2, 1, 1]
        }});
        let read = read_assignments(&record);
        assert_eq!(read.category_ids, vec![3, 5]);
        assert_eq!(read.website_ids, vec![1, 2]);
        assert_eq!(read_assignments(&json!({})), Assignments::default());
        let category = read_category(br#"{"id": 8, "is_active": false}"#).unwrap();
        assert_eq!((category.id, category.is_active), (8, false));
        assert_eq!(
            read_websites(br#"[{"id": 0, "code": "admin"}, {"id": 1}]"#).unwrap(),
            vec![1]
        );
    }
}
