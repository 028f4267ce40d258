//! Product media in Magento 2: the gallery as a store view sees it, and gallery writes.
//!
//! Reads do not use `GET /V1/products/{sku}/media`: that answer carries every file's bytes
//! in base64 (megabytes for a product with a few photos) and its single-entry form needs a
//! different ACL resource. A product read has the same gallery entries (id, label,
//! position, disabled, types, file) without the bytes, in the store view of the call, and
//! with `storeId=0` the default (admin) values.

use async_trait::async_trait;
use bytes::Bytes;
use http::Method;
use serde_json::{Value, json};

use super::{Magento, Scope, segment};
use crate::backend::port::{
    BackendError, Image, ImageChange, ImageFile, ImageRefusal, Media, NewImage,
};
use crate::backend::values::{as_i64, strings};

#[async_trait]
impl Media for Magento {
    /// `GET /V1/products/{sku}` in `scope`; with `store_id`, the values of that store id
    /// (`0`: the default values, which a GET through `/rest/all` cannot read).
    async fn product_gallery(
        &self,
        scope: Scope<'_>,
        sku: &str,
        store_id: Option<u64>,
    ) -> Result<Bytes, BackendError> {
        let query: Vec<(String, String)> = store_id
            .map(|id| vec![("storeId".to_owned(), id.to_string())])
            .unwrap_or_default();
        self.get(scope, &format!("/V1/products/{}", segment(sku)), &query)
            .await
    }

    fn images(&self, product: &Value) -> Vec<Image> {
        images(product)
    }

    /// `POST /V1/products/{sku}/media`: adds a gallery entry; the answer is its id.
    /// Through a store code the label, position, disabled flag and roles are that store
    /// view's; through `all` they are the default values.
    async fn add_image(
        &self,
        scope: Scope<'_>,
        sku: &str,
        image: NewImage,
    ) -> Result<u64, BackendError> {
        let body = json!({ "entry": new_entry(image) });
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
        .ok_or_else(|| BackendError::Protocol(format!("media create answered {id}")))
    }

    async fn update_image(
        &self,
        scope: Scope<'_>,
        sku: &str,
        existing: &Image,
        change: ImageChange,
    ) -> Result<(), BackendError> {
        self.put_media(scope, sku, existing.id, changed_entry(existing, change))
            .await
    }

    /// Magento keeps one gallery per product: in one store view the image stays, excluded
    /// there and in no role (SPEC 2.3 "set to No Image for the store"); in admin scope
    /// (`DELETE /V1/products/{sku}/media/{id}`) the entry goes in every store.
    async fn remove_image(
        &self,
        scope: Scope<'_>,
        sku: &str,
        existing: &Image,
    ) -> Result<(), BackendError> {
        match scope {
            Scope::Store(_) => {
                let hidden = ImageChange {
                    exclude: Some(true),
                    types: Some(Vec::new()),
                    ..ImageChange::default()
                };
                self.put_media(scope, sku, existing.id, changed_entry(existing, hidden))
                    .await
            }
            Scope::Default | Scope::All => {
                self.delete(
                    Scope::All,
                    &format!("/V1/products/{}/media/{}", segment(sku), existing.id),
                )
                .await
            }
        }
    }

    fn image_refusal(&self, error: &BackendError) -> Option<ImageRefusal> {
        refusal(error)
    }
}

impl Magento {
    /// `PUT /V1/products/{sku}/media/{id}`: replaces the entry's label, position, disabled
    /// flag and roles (and its file, when `content` is sent). Magento finds the entry by the
    /// `id` inside the body, which is set here.
    async fn put_media(
        &self,
        scope: Scope<'_>,
        sku: &str,
        id: u64,
        mut entry: Value,
    ) -> Result<(), BackendError> {
        entry["id"] = json!(id);
        let body = json!({ "entry": entry });
        let path = format!("/V1/products/{}/media/{id}", segment(sku));
        self.command(Method::PUT, scope, &path, Some(&body)).await
    }
}

fn images(product: &Value) -> Vec<Image> {
    let Some(entries) = product
        .get("media_gallery_entries")
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    entries
        .iter()
        .filter(|e| {
            e.get("media_type")
                .and_then(Value::as_str)
                .is_none_or(|kind| kind == "image")
        })
        .filter_map(|e| {
            let id = e.get("id").and_then(as_i64).filter(|&id| id > 0)? as u64;
            Some(Image {
                id,
                file: e
                    .get("file")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                label: e.get("label").cloned().unwrap_or(Value::Null),
                position: e.get("position").and_then(as_i64),
                exclude: match e.get("disabled") {
                    Some(Value::Bool(b)) => *b,
                    Some(other) => as_i64(other).is_some_and(|v| v != 0),
                    None => false,
                },
                types: strings(e.get("types")),
                record: e.clone(),
            })
        })
        .collect()
}

fn content(file: ImageFile) -> Value {
    json!({ "base64_encoded_data": file.base64, "type": file.mime, "name": file.name })
}

/// A new gallery entry.
fn new_entry(image: NewImage) -> Value {
    let mut entry = json!({
        "media_type": "image",
        "position": image.position,
        "disabled": image.exclude,
        "types": image.types,
        "content": content(image.file),
    });
    if let Some(label) = image.label {
        entry["label"] = label;
    }
    entry
}

/// Magento replaces a whole entry on update: what the change leaves out keeps its value.
fn changed_entry(existing: &Image, change: ImageChange) -> Value {
    let mut entry = json!({
        "media_type": "image",
        "label": change.label.unwrap_or_else(|| existing.label.clone()),
        "position": change.position.or(existing.position),
        "disabled": change.exclude.unwrap_or(existing.exclude),
        "types": change.types.unwrap_or_else(|| existing.types.clone()),
    });
    if let Some(file) = change.file {
        entry["content"] = content(file);
    }
    entry
}

/// Magento's media refusals that are the request's fault.
fn refusal(error: &BackendError) -> Option<ImageRefusal> {
    let BackendError::Status { status, error } = error else {
        return None;
    };
    let text = error.text();
    match (*status, text.as_str()) {
        (404, t)
            if t.starts_with("No image with the provided ID")
                || t.starts_with("The image doesn't exist") =>
        {
            Some(ImageRefusal::NotFound)
        }
        (400, "The image content must be valid base64 encoded data.") => {
            Some(ImageRefusal::BadBase64)
        }
        (400, "The image MIME type is not valid or not supported.") => Some(ImageRefusal::BadMime),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gallery_entries_become_images_and_back() {
        let product = json!({"media_gallery_entries": [
            {"id": 3, "media_type": "image", "file": "/a/b/x.png", "label": null, "position": 2,
             "disabled": "1", "types": ["image"]},
            {"id": 4, "media_type": "external-video", "file": "/v.png"},
            {"id": 5, "file": "/c.png", "disabled": false}
        ]});
        let found = images(&product);
        assert_eq!(found.iter().map(|i| i.id).collect::<Vec<_>>(), [3, 5]);
        assert!(found[0].exclude && !found[1].exclude);
        let kept = changed_entry(
            &found[0],
            ImageChange {
                position: Some(9),
                ..Default::default()
            },
        );
        assert_eq!(
            kept,
            json!({"media_type": "image", "label": null, "position": 9,
                                "disabled": true, "types": ["image"]})
        );
        assert!(images(&json!({})).is_empty());
    }
}
