//! A product's category and website assignments (the original's `/products/:id/categories`
//! and `/products/:id/websites`). Magento 2 keeps the assignments on the product
//! (`extension_attributes.category_links` and `website_ids`), which the product read
//! already carries; only the writes need calls of their own. Writes run in the admin scope
//! (`/rest/all`), like every catalog write.

use async_trait::async_trait;
use http::Method;
use serde_json::{Value, json};

use super::{Magento, Scope, segment};
use crate::backend::port::{Assignments, BackendError, ProductLinks};

fn id_of(value: &Value) -> Option<u64> {
    value
        .as_u64()
        .or_else(|| value.as_str()?.trim().parse().ok())
        .filter(|&id| id > 0)
}

/// Is a product on a website? True when the record has no `website_ids` (Magento leaves
/// them out in some scopes).
pub(super) fn on_website(product: &Value, website: u64) -> bool {
    match product.pointer("/extension_attributes/website_ids") {
        Some(Value::Array(ids)) => ids.iter().any(|id| id_of(id) == Some(website)),
        _ => true,
    }
}

/// Where a Magento 2 product record is assigned: `extension_attributes.category_links`
/// (category ids as strings) and `website_ids`.
pub(super) fn read_assignments(product: &Value) -> Assignments {
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

#[async_trait]
impl ProductLinks for Magento {
    /// `POST /V1/categories/{id}/products`: assigns the product (an upsert of the link).
    async fn assign_category(&self, category_id: u64, sku: &str) -> Result<(), BackendError> {
        // A new assignment goes first in the category, as the original's did.
        let position = 0;
        let body = json!({"productLink": {
            "sku": sku,
            "position": position,
            "category_id": category_id.to_string(),
        }});
        let path = format!("/V1/categories/{category_id}/products");
        self.command(Method::POST, Scope::All, &path, Some(&body))
            .await
    }

    /// `DELETE /V1/categories/{id}/products/{sku}`.
    async fn unassign_category(&self, category_id: u64, sku: &str) -> Result<(), BackendError> {
        self.delete(
            Scope::All,
            &format!("/V1/categories/{category_id}/products/{}", segment(sku)),
        )
        .await
    }

    /// `POST /V1/products/{sku}/websites`.
    async fn assign_website(&self, sku: &str, website_id: u64) -> Result<(), BackendError> {
        let body = json!({"productWebsiteLink": {"sku": sku, "website_id": website_id}});
        let path = format!("/V1/products/{}/websites", segment(sku));
        self.command(Method::POST, Scope::All, &path, Some(&body))
            .await
    }

    /// `DELETE /V1/products/{sku}/websites/{websiteId}`.
    async fn unassign_website(&self, sku: &str, website_id: u64) -> Result<(), BackendError> {
        self.delete(
            Scope::All,
            &format!("/V1/products/{}/websites/{website_id}", segment(sku)),
        )
        .await
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
    }
}
