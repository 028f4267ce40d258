//! Product media gallery entries: their shape, checks and role assignments (served by
//! `api::media`; the files behind them are kept by `state::media_files`).
//!
//! Label, position and "disabled" are store-scoped in Magento: writes through `/rest/all` set
//! the defaults, writes through a store code (or none, which means `default`) set only that
//! store view's values, and reads fall back from the store view to the defaults. Image roles
//! (`image`, `small_image`, ...) are product attributes pointing at a file, so giving a role
//! to one entry takes it from every other entry. Uploads are validated like
//! `ImageContentValidator` and stored like `ImageProcessor` (dispersion path, lower-case
//! name, `_1`, `_2` suffixes on collision).

use std::collections::BTreeMap;

use base64::Engine;
use serde_json::{Map, Value, json};

use crate::model::attributes::IMAGE_ROLES;
use crate::model::image;
use crate::model::product::Product;
use crate::model::store::ADMIN_STORE_ID;
use crate::webapi::error::{ApiError, ApiResult};
use crate::webapi::input;
use crate::webapi::messages;

/// Store-scoped values of a gallery entry; `None` falls back to the next level.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct MediaValues {
    pub(crate) label: Option<String>,
    pub(crate) position: Option<i64>,
    pub(crate) disabled: Option<bool>,
}

#[derive(Debug, Clone)]
pub(crate) struct MediaEntry {
    pub(crate) id: u64,
    pub(crate) media_type: String,
    pub(crate) file: String,
    pub(crate) defaults: MediaValues,
    pub(crate) stores: BTreeMap<u32, MediaValues>,
    pub(crate) video_content: Option<Value>,
}

impl MediaEntry {
    /// Values as seen from a store view (admin sees the defaults only).
    pub(crate) fn values(&self, store_id: u32) -> MediaValues {
        let store = self
            .stores
            .get(&store_id)
            .filter(|_| store_id != ADMIN_STORE_ID);
        MediaValues {
            label: store
                .and_then(|s| s.label.clone())
                .or_else(|| self.defaults.label.clone()),
            position: store.and_then(|s| s.position).or(self.defaults.position),
            disabled: store.and_then(|s| s.disabled).or(self.defaults.disabled),
        }
    }

    pub(crate) fn to_json(&self, store_id: u32, roles: &BTreeMap<String, String>) -> Value {
        let values = self.values(store_id);
        let types: Vec<&str> = IMAGE_ROLES
            .iter()
            .copied()
            .filter(|role| roles.get(*role) == Some(&self.file))
            .collect();
        let mut out = Map::new();
        out.insert("id".into(), json!(self.id));
        out.insert("media_type".into(), json!(self.media_type));
        out.insert("label".into(), json!(values.label));
        out.insert("position".into(), json!(values.position));
        out.insert("disabled".into(), json!(values.disabled));
        out.insert("types".into(), json!(types));
        out.insert("file".into(), json!(self.file));
        if let Some(video) = &self.video_content {
            out.insert(
                "extension_attributes".into(),
                json!({ "video_content": video }),
            );
        }
        Value::Object(out)
    }

    fn scoped_mut(&mut self, store_id: u32) -> &mut MediaValues {
        if store_id == ADMIN_STORE_ID {
            &mut self.defaults
        } else {
            self.stores.entry(store_id).or_default()
        }
    }
}

/// A product's gallery ordered as Magento reads it (position, NULL first, then id).
pub(crate) fn ordered(product: &Product, store_id: u32) -> Vec<&MediaEntry> {
    let mut entries: Vec<&MediaEntry> = product.media.iter().collect();
    entries.sort_by_key(|e| (e.values(store_id).position, e.id));
    entries
}

pub(crate) fn gallery_json(product: &Product, store_id: u32) -> Vec<Value> {
    ordered(product, store_id)
        .into_iter()
        .map(|e| e.to_json(store_id, &product.roles))
        .collect()
}

/// A decoded upload that passed `ImageContentValidator`.
pub(crate) struct Upload {
    pub(crate) bytes: Vec<u8>,
    pub(crate) name: String,
    pub(crate) mime: &'static str,
}

const ALLOWED_MIME: [&str; 4] = ["image/jpg", "image/jpeg", "image/gif", "image/png"];

fn name_is_valid(name: &str) -> bool {
    !name.is_empty()
        && !name.chars().any(|c| {
            matches!(
                c,
                '\\' | '/' | '?' | '*' | ':' | '"' | ';' | '<' | '>' | '(' | ')' | '|' | '{' | '}'
            )
        })
}

/// Validates `entry.content` in `ImageContentValidator`'s order. A missing `content` object
/// is reported like undecodable data.
pub(crate) fn validate_content(content: Option<&Map<String, Value>>) -> ApiResult<Upload> {
    let not_base64 = || ApiError::bad_request(messages::IMAGE_NOT_BASE64);
    let content = content.ok_or_else(not_base64)?;
    let data = input::opt_string(content, "base64_encoded_data")?.unwrap_or_default();
    // PHP's strict base64 decoding skips whitespace but refuses any other stray character.
    let compact: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD_PAD_INDIFFERENT
        .decode(compact.as_bytes())
        .map_err(|_| not_base64())?;
    if bytes.is_empty() {
        return Err(not_base64());
    }
    let info = image::sniff(&bytes).ok_or_else(not_base64)?;
    let declared = input::opt_string(content, "type")?.unwrap_or_default();
    if info.mime != declared || !ALLOWED_MIME.contains(&info.mime) {
        return Err(ApiError::bad_request(messages::IMAGE_BAD_MIME));
    }
    let name = input::opt_string(content, "name")?.unwrap_or_default();
    if !name_is_valid(&name) {
        return Err(ApiError::bad_request(messages::IMAGE_BAD_NAME));
    }
    Ok(Upload {
        bytes,
        name,
        mime: info.mime,
    })
}

fn parse_types(entry: &Map<String, Value>) -> ApiResult<Option<Vec<String>>> {
    let Some(list) = input::opt_array(entry, "types", "string[]")? else {
        return Ok(None);
    };
    list.into_iter()
        .map(input::to_string)
        .collect::<ApiResult<Vec<_>>>()
        .map(Some)
}

/// Gives every listed role to `file`, taking it from whichever entry had it.
fn assign_roles(product: &mut Product, file: &str, roles: &[String]) {
    for role in roles {
        if IMAGE_ROLES.contains(&role.as_str()) {
            product.roles.insert(role.clone(), file.to_string());
        }
    }
}

/// Adds a new entry for an already stored file; the caller checked gallery support.
pub(crate) fn add_entry(
    db_ids: &mut u64,
    product: &mut Product,
    entry: &Map<String, Value>,
    file: String,
    store_id: u32,
) -> ApiResult<u64> {
    let id = *db_ids;
    *db_ids += 1;
    let types = parse_types(entry)?;
    let label = input::opt_string(entry, "label")?;
    let explicit_position = input::opt_int(entry, "position")?;
    let position = explicit_position.or_else(|| {
        let max = product
            .media
            .iter()
            .filter_map(|e| e.values(store_id).position)
            .max()
            .unwrap_or(0);
        Some(max + 1)
    });
    // Magento's `addImage` excludes the image from the storefront unless told otherwise.
    let disabled = Some(input::opt_bool(entry, "disabled")?.unwrap_or(true));
    let values = MediaValues {
        label,
        position,
        disabled,
    };
    let mut new_entry = MediaEntry {
        id,
        media_type: input::opt_string(entry, "media_type")?.unwrap_or_else(|| "image".into()),
        file: file.clone(),
        defaults: MediaValues::default(),
        stores: BTreeMap::new(),
        video_content: input::opt_object(entry, "extension_attributes", "object")?
            .and_then(|ext| input::present(ext, "video_content").cloned()),
    };
    *new_entry.scoped_mut(store_id) = values;
    let first_image = product.media.is_empty();
    product.media.push(new_entry);
    match types {
        Some(types) => assign_roles(product, &file, &types),
        // The first image of a product gets every role when none are given.
        None if first_image => {
            let all: Vec<String> = IMAGE_ROLES.iter().map(|r| r.to_string()).collect();
            assign_roles(product, &file, &all);
        }
        None => {}
    }
    Ok(id)
}

/// Applies an update body to an existing entry (fields sent change, others stay).
pub(crate) fn update_entry(
    product: &mut Product,
    index: usize,
    entry: &Map<String, Value>,
    store_id: u32,
) -> ApiResult<()> {
    let types = parse_types(entry)?;
    let label = input::opt_string(entry, "label")?;
    let position = input::opt_int(entry, "position")?;
    let disabled = input::opt_bool(entry, "disabled")?;
    let media_type = input::opt_string(entry, "media_type")?;
    let target = &mut product.media[index];
    if let Some(media_type) = media_type {
        target.media_type = media_type;
    }
    let scoped = target.scoped_mut(store_id);
    if label.is_some() {
        scoped.label = label;
    }
    if position.is_some() {
        scoped.position = position;
    }
    if disabled.is_some() {
        scoped.disabled = disabled;
    }
    let file = target.file.clone();
    if let Some(types) = types {
        product.roles.retain(|_, f| f != &file);
        assign_roles(product, &file, &types);
    }
    Ok(())
}

/// Removes an entry in every store and clears the roles that pointed at its file.
pub(crate) fn remove_entry(product: &mut Product, index: usize) {
    let removed = product.media.remove(index);
    product.roles.retain(|_, f| f != &removed.file);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_validator() {
        assert!(name_is_valid("front.png"));
        assert!(!name_is_valid("a/b.png"));
        assert!(!name_is_valid("x(1).png"));
        assert!(!name_is_valid(""));
    }

    #[test]
    fn content_errors_in_magento_order() {
        let bad = json!({"base64_encoded_data": "%%%", "type": "image/png", "name": "a.png"});
        let err = validate_content(bad.as_object())
            .err()
            .map(|e| e.message.clone());
        assert_eq!(err.as_deref(), Some(messages::IMAGE_NOT_BASE64));
        let png =
            base64::engine::general_purpose::STANDARD.encode(image::solid_png(1, 1, [0, 0, 0]));
        let wrong = json!({"base64_encoded_data": png, "type": "image/jpeg", "name": "a.png"});
        let err = validate_content(wrong.as_object())
            .err()
            .map(|e| e.message.clone());
        assert_eq!(err.as_deref(), Some(messages::IMAGE_BAD_MIME));
        let named = json!({"base64_encoded_data": png, "type": "image/png", "name": "a:b"});
        let err = validate_content(named.as_object())
            .err()
            .map(|e| e.message.clone());
        assert_eq!(err.as_deref(), Some(messages::IMAGE_BAD_NAME));
    }
}
