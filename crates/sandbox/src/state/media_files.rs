//! The gallery files the store keeps (`media/catalog/product`): where an upload is filed,
//! under the name Magento would give it.

use std::sync::Arc;

use super::Db;
use crate::model::media::Upload;
use crate::webapi::error::{ApiError, ApiResult};
use crate::webapi::messages;

fn extension_for(mime: &str) -> Option<&'static str> {
    match mime {
        "image/jpg" | "image/jpeg" => Some("jpg"),
        "image/gif" => Some("gif"),
        "image/png" => Some("png"),
        _ => None,
    }
}

/// Stores an upload under `media/catalog/product` and returns its gallery path, e.g.
/// `/t/e/test_image.jpg`, `/t/e/test_image_1.jpg` when that name is taken.
pub(crate) fn store_file(db: &mut Db, upload: Upload) -> ApiResult<String> {
    let mut name = upload.name.clone();
    let has_extension = name
        .rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && !ext.is_empty());
    if !has_extension {
        let ext = extension_for(upload.mime)
            .ok_or_else(|| ApiError::bad_request(messages::IMAGE_NO_EXTENSION))?;
        name = format!("{name}.{ext}");
    }
    let corrected: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let (stem, ext) = corrected
        .rsplit_once('.')
        .map_or((corrected.clone(), String::new()), |(s, e)| {
            (s.to_string(), e.to_string())
        });
    let stem = if stem.chars().all(|c| c == '_') {
        "file".to_string()
    } else {
        stem
    };
    let mut dispersion = String::new();
    for c in stem.chars().take(2) {
        dispersion.push('/');
        dispersion.push(if c == '.' { '_' } else { c });
    }
    let mut candidate = format!("{dispersion}/{stem}.{ext}");
    let mut suffix = 1;
    while db.media_files.contains_key(&candidate) {
        candidate = format!("{dispersion}/{stem}_{suffix}.{ext}");
        suffix += 1;
    }
    db.media_files.insert(
        candidate.clone(),
        Arc::from(upload.bytes.into_boxed_slice()),
    );
    Ok(candidate)
}
