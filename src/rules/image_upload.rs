//! The image upload validator: reads an image write's body and checks it the way the
//! original did (file present, base64, a supported type, content of that type, a clean
//! file name, the roles and parameters), with the spec's messages, before Magento is asked.
//! The file's bytes are checked by [`crate::rules::image_bytes`] without being decoded whole, and
//! [`upload_permit`] bounds the uploads whose body is in memory at once.

use crate::backend::port::ImageFile;
use http::{HeaderValue, StatusCode};
use serde_json::{Map, Value};
use tokio::sync::OwnedSemaphorePermit;

use crate::app::AppState;
use crate::http::ApiError;
use crate::rules::image_bytes;
use crate::rules::mapping::convert::{as_i64, is_empty};

pub const NOT_SPECIFIED: &str = "The image is not specified";
pub const BAD_BASE64: &str = "The image content must be valid base64 encoded data";
pub const BAD_MIME: &str = "Unsupported image MIME type";

/// An image type the gateway does not take: [`BAD_MIME`], or the original's misspelt
/// message in its profile.
pub fn bad_mime() -> ApiError {
    let profile = crate::context::profile::Profile::current();
    ApiError::bad_request(
        profile
            .message(crate::context::profile::Message::ImageMimeType)
            .unwrap_or(BAD_MIME),
    )
}

fn invalid(field: &str) -> String {
    format!("Invalid value for \"{field}\" in request.")
}

/// The image types the gateway accepts (SPEC 7: a bitmap type is refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Jpeg,
    Png,
    Gif,
}

impl Kind {
    fn of_mime(mime: &str) -> Option<Kind> {
        let essence = mime.split(';').next().unwrap_or("").trim();
        match essence.to_ascii_lowercase().as_str() {
            "image/jpeg" | "image/jpg" => Some(Kind::Jpeg),
            "image/png" => Some(Kind::Png),
            "image/gif" => Some(Kind::Gif),
            _ => None,
        }
    }

    fn mime(self) -> &'static str {
        match self {
            Kind::Jpeg => "image/jpeg",
            Kind::Png => "image/png",
            Kind::Gif => "image/gif",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Kind::Jpeg => "jpg",
            Kind::Png => "png",
            Kind::Gif => "gif",
        }
    }

    /// Extensions a client's file name may already end with.
    fn extensions(self) -> &'static [&'static str] {
        match self {
            Kind::Jpeg => &[".jpg", ".jpeg"],
            Kind::Png => &[".png"],
            Kind::Gif => &[".gif"],
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Jpeg => "JPEG",
            Kind::Png => "PNG",
            Kind::Gif => "GIF",
        }
    }

    /// Do the bytes start like a file of this type?
    fn matches(self, bytes: &[u8]) -> bool {
        match self {
            Kind::Jpeg => bytes.starts_with(&[0xFF, 0xD8, 0xFF]),
            Kind::Png => bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
            Kind::Gif => bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a"),
        }
    }
}

/// A file name as Magento will take it: the client's name without folders and without
/// the type's extension, characters other than letters, digits, `_`, `-` and `.` turned
/// into `_` (as the original did), at most 80 characters.
pub fn clean_stem(name: &str, kind: Kind) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or_default().trim();
    let lower = base.to_ascii_lowercase();
    let stem = kind
        .extensions()
        .iter()
        .find(|ext| lower.ends_with(*ext))
        .map_or(base, |ext| &base[..base.len() - ext.len()]);
    let cleaned: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    let cleaned = cleaned.trim_matches('.');
    if cleaned.chars().all(|c| c == '_') {
        "file".to_owned()
    } else {
        cleaned.to_owned()
    }
}

/// A checked file, ready for Magento.
#[derive(Debug)]
pub struct NewFile {
    pub base64: String,
    pub kind: Kind,
    /// The cleaned stem of the client's `file_name`, if it sent one.
    pub stem: Option<String>,
}

impl NewFile {
    /// Consumes the file: its base64 text moves into the request, it is not copied.
    pub fn into_file(self, stem: &str) -> ImageFile {
        ImageFile {
            base64: self.base64,
            mime: self.kind.mime(),
            name: format!("{stem}.{}", self.kind.extension()),
        }
    }
}

/// What a create or update asks for; `None` is "not sent".
#[derive(Debug, Default)]
pub struct ImageInput {
    pub file: Option<NewFile>,
    pub label: Option<Value>,
    pub position: Option<i64>,
    pub exclude: Option<bool>,
    pub types: Option<Vec<String>>,
}

impl ImageInput {
    pub fn is_empty(&self) -> bool {
        self.file.is_none()
            && self.label.is_none()
            && self.position.is_none()
            && self.exclude.is_none()
            && self.types.is_none()
    }
}

/// Checks the image file of a request: present, base64, a supported type, and content of
/// that type whose header gives sensible dimensions. The first failure answers, in this
/// order (the original's). The base64 text is taken out of `input`, checked in one pass and
/// kept as it is ([`image_bytes`]): never decoded whole, never encoded again.
fn check_file(input: &mut Map<String, Value>) -> Result<NewFile, ApiError> {
    let content = input.get("file_content").filter(|v| !is_empty(v));
    let mime = input.get("file_mime_type").filter(|v| !is_empty(v));
    if content.is_none() || mime.is_none() {
        return Err(ApiError::validation(vec![NOT_SPECIFIED.into()]));
    }
    let file = match input.remove("file_content") {
        Some(Value::String(text)) => image_bytes::check_base64(text),
        _ => None,
    }
    .ok_or_else(|| ApiError::bad_request(BAD_BASE64))?;
    let kind = input
        .get("file_mime_type")
        .and_then(Value::as_str)
        .and_then(Kind::of_mime)
        .ok_or_else(bad_mime)?;
    let valid = kind.matches(&file.head)
        && image_bytes::dimensions(&file.head).is_some_and(image_bytes::acceptable);
    if !valid {
        return Err(ApiError::validation(vec![format!(
            "The image content is not a valid {} image.",
            kind.name()
        )]));
    }
    let stem = match input.get("file_name") {
        None => None,
        Some(v) if is_empty(v) => None,
        Some(Value::String(name)) => Some(clean_stem(name, kind)),
        Some(_) => return Err(ApiError::validation(vec![invalid("file_name")])),
    };
    Ok(NewFile {
        base64: file.canonical,
        kind,
        stem,
    })
}

/// A role name (`image`, `small_image`, `thumbnail`, or a store's own media attribute).
fn is_role(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 60
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// The other fields of an image write.
fn check_params(input: &Map<String, Value>, out: &mut ImageInput) -> Vec<String> {
    let mut errors = Vec::new();
    match input.get("label") {
        None => {}
        Some(Value::Null) => out.label = Some(Value::Null),
        Some(Value::String(s)) => out.label = Some(Value::String(s.clone())),
        Some(v @ Value::Number(_)) => out.label = Some(Value::String(v.to_string())),
        Some(_) => errors.push(invalid("label")),
    }
    match input.get("position") {
        Some(v) if !is_empty(v) => match v {
            Value::Number(_) | Value::String(_) => match as_i64(v).filter(|p| *p >= 0) {
                Some(p) => out.position = Some(p),
                None => errors.push(invalid("position")),
            },
            _ => errors.push(invalid("position")),
        },
        _ => {}
    }
    match input.get("exclude") {
        Some(v) if !is_empty(v) => match v {
            Value::Bool(b) => out.exclude = Some(*b),
            Value::Number(_) | Value::String(_) => match as_i64(v) {
                Some(0) => out.exclude = Some(false),
                Some(1) => out.exclude = Some(true),
                _ => errors.push(invalid("exclude")),
            },
            _ => errors.push(invalid("exclude")),
        },
        _ => {}
    }
    match input.get("types") {
        None => {}
        // `<types/>`, `null`, `""`: no roles.
        Some(v) if is_empty(v) => out.types = Some(Vec::new()),
        Some(v) => {
            let names: Vec<&Value> = match v {
                Value::Array(list) => list.iter().collect(),
                single => vec![single],
            };
            let mut types: Vec<String> = Vec::new();
            for name in names {
                match name.as_str().map(str::trim) {
                    Some(name) if is_role(name) => {
                        if !types.iter().any(|t| t == name) {
                            types.push(name.to_owned());
                        }
                    }
                    _ => {
                        errors.push(invalid("types"));
                        break;
                    }
                }
            }
            out.types = Some(types);
        }
    }
    errors
}

/// Reads and checks an image write's body. A create needs a file; an update may send one
/// (then with its MIME type).
pub fn parse_input(mut input: Map<String, Value>, create: bool) -> Result<ImageInput, ApiError> {
    let mut out = ImageInput::default();
    let sends_file = input.contains_key("file_content") || input.contains_key("file_mime_type");
    if create || sends_file {
        out.file = Some(check_file(&mut input)?);
    }
    let errors = check_params(&input, &mut out);
    if !errors.is_empty() {
        return Err(ApiError::validation(errors));
    }
    Ok(out)
}

/// A place among the uploads whose bodies may be in memory at once; see [`upload_permit`].
#[derive(Debug)]
pub struct UploadSlot(Option<OwnedSemaphorePermit>);

impl Drop for UploadSlot {
    /// The upload's buffers are gone by now (the slot is taken first, so dropped last):
    /// their memory goes back to the system at once.
    fn drop(&mut self) {
        drop(self.0.take());
        crate::give_back_freed_memory();
    }
}

/// Waits for a place among the uploads whose bodies may be in memory at once
/// (`STOREGATE_MAX_UPLOADS_IN_FLIGHT`). Waiting is waiting for other clients, not for
/// Magento, so the request's deadline is moved past the wait; past the body timeout the
/// answer is a 503 to retry. Take it before reading the body: a waiting upload's bytes stay
/// in the kernel's socket buffers, not in our memory.
pub async fn upload_permit(app: &AppState) -> Result<UploadSlot, ApiError> {
    let wait = app.config.body_timeout;
    let upstream = app.config.upstream_timeout;
    let now = tokio::time::Instant::now();
    crate::context::request::set_deadline(now + wait + upstream);
    let permit = tokio::time::timeout(wait, app.uploads.clone().acquire_owned()).await;
    crate::context::request::set_deadline(tokio::time::Instant::now() + upstream);
    match permit {
        Ok(Ok(permit)) => Ok(UploadSlot(Some(permit))),
        _ => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "The service is overloaded. Try again later.",
        )
        .with_header(http::header::RETRY_AFTER, HeaderValue::from_static("1"))
        .with_cause("too many image uploads in flight (STOREGATE_MAX_UPLOADS_IN_FLIGHT)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use serde_json::json;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01";

    fn body(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    fn first(result: Result<ImageInput, ApiError>) -> String {
        result.unwrap_err().first_message().to_owned()
    }

    #[test]
    fn image_checks_in_the_original_order() {
        let png = STANDARD.encode(PNG);
        assert_eq!(
            first(parse_input(
                body(json!({"file_mime_type": "image/png"})),
                true
            )),
            NOT_SPECIFIED
        );
        assert_eq!(
            first(parse_input(
                body(json!({"file_content": "%%%", "file_mime_type": "image/bmp"})),
                true
            )),
            BAD_BASE64
        );
        assert_eq!(
            first(parse_input(
                body(json!({"file_content": png, "file_mime_type": "image/bmp"})),
                true
            )),
            BAD_MIME
        );
        assert_eq!(
            first(parse_input(
                body(json!({"file_content": png, "file_mime_type": "image/jpeg"})),
                true
            )),
            "The image content is not a valid JPEG image."
        );
        let ok = parse_input(
            body(json!({"file_content": png, "file_mime_type": "Image/PNG", "file_name": "My Front.PNG",
                         "label": "Front", "position": "3", "exclude": "1", "types": ["image", "image"]})),
            true,
        )
        .unwrap();
        let file = ok.file.unwrap();
        assert_eq!(
            (file.kind, file.stem.as_deref()),
            (Kind::Png, Some("My_Front"))
        );
        assert_eq!(ok.position, Some(3));
        assert_eq!(ok.exclude, Some(true));
        assert_eq!(ok.types, Some(vec!["image".to_owned()]));
    }

    #[test]
    fn update_fields_are_checked() {
        let e = parse_input(
            body(json!({"position": -1, "exclude": 2, "types": ["Bad Role"], "label": [1]})),
            false,
        )
        .unwrap_err();
        let texts: Vec<&str> = e.messages().iter().map(|m| &*m.text).collect();
        assert_eq!(
            texts,
            [
                "Invalid value for \"label\" in request.",
                "Invalid value for \"position\" in request.",
                "Invalid value for \"exclude\" in request.",
                "Invalid value for \"types\" in request.",
                "Resource data pre-validation error."
            ]
        );
        assert!(
            parse_input(body(json!({"x": 1})), false)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            parse_input(body(json!({"types": ""})), false)
                .unwrap()
                .types,
            Some(vec![])
        );
        assert_eq!(
            first(parse_input(body(json!({"file_content": "abc"})), false)),
            NOT_SPECIFIED
        );
    }

    #[test]
    fn file_names_are_cleaned() {
        assert_eq!(
            clean_stem("C:\\pics\\front view.jpeg", Kind::Jpeg),
            "front_view"
        );
        assert_eq!(clean_stem("../../etc/passwd", Kind::Png), "passwd");
        assert_eq!(clean_stem("a.png", Kind::Jpeg), "a.png");
        assert_eq!(clean_stem("***", Kind::Gif), "file");
        assert_eq!(clean_stem(&"x".repeat(200), Kind::Gif).len(), 80);
    }
}
