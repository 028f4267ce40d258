//! The cassette format: what one upstream exchange looks like on disk, and the folder of
//! cassette files a recording writes and a replay reads.
//!
//! One pretty-printed JSON file per endpoint (`get.api.rest.products.{}.json` holds every
//! `GET /api/rest/products/{id}` exchange), interactions in the order they happened, header
//! and query names sorted, JSON bodies written as JSON, other bodies as text or base64:
//! a re-recording diffs like a change of the store. See docs/recording.md, "Cassette format".

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The version written in every file; a file of another version is refused, not misread.
pub const FORMAT_VERSION: u32 = 1;

/// One cassette file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cassette {
    pub storegate_cassette: u32,
    /// `GET /api/rest/products/{}`: what the file holds (informative; matching never reads
    /// it).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub endpoint: String,
    pub interactions: Vec<Interaction>,
}

/// One request and the answer it got.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Interaction {
    /// When it was recorded, RFC 3339 in UTC (`2026-11-28T21:57:33Z`); absent in cassettes
    /// written before storegate kept it (their age is unknown: see `ageing`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_at: Option<String>,
    pub request: Request,
    pub response: Response,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Request {
    pub method: String,
    /// The store's path without the query, as sent.
    pub path: String,
    /// Decoded pairs by name; a name sent more than once holds a list.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub query: BTreeMap<String, QueryValue>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    #[serde(flatten)]
    pub body: Body,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Response {
    pub status: u16,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    #[serde(flatten)]
    pub body: Body,
    /// How long the store took, in milliseconds (replayed by the `recorded` latency).
    #[serde(default)]
    pub elapsed_ms: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(untagged)]
pub enum QueryValue {
    One(String),
    Many(Vec<String>),
}

/// A body, in the most readable form that gives the same bytes' meaning back: JSON as
/// JSON, UTF-8 text as a string, anything else as base64. At most one field is set.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Body {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_base64: Option<String>,
}

impl Body {
    pub fn from_bytes(bytes: &[u8]) -> Body {
        if bytes.is_empty() {
            return Body::default();
        }
        if let Ok(value) = serde_json::from_slice::<Value>(bytes) {
            return Body {
                body: Some(value),
                ..Body::default()
            };
        }
        match std::str::from_utf8(bytes) {
            Ok(text) => Body {
                body_text: Some(text.to_owned()),
                ..Body::default()
            },
            Err(_) => Body {
                body_base64: Some(BASE64.encode(bytes)),
                ..Body::default()
            },
        }
    }

    pub fn json(value: Value) -> Body {
        Body {
            body: Some(value),
            ..Body::default()
        }
    }

    /// The bytes to send (JSON compact, as Magento writes it).
    pub fn to_bytes(&self) -> Result<Bytes, String> {
        if let Some(value) = &self.body {
            return serde_json::to_vec(value)
                .map(Bytes::from)
                .map_err(|e| e.to_string());
        }
        if let Some(text) = &self.body_text {
            return Ok(Bytes::from(text.clone()));
        }
        if let Some(encoded) = &self.body_base64 {
            return BASE64
                .decode(encoded)
                .map(Bytes::from)
                .map_err(|e| format!("body_base64 is not base64: {e}"));
        }
        Ok(Bytes::new())
    }

    pub fn is_empty(&self) -> bool {
        self.body.is_none() && self.body_text.is_none() && self.body_base64.is_none()
    }
}

impl Request {
    /// The pairs, sorted (order-insensitive comparison).
    pub fn query_pairs(&self) -> Vec<(String, String)> {
        let mut pairs = Vec::new();
        for (name, value) in &self.query {
            match value {
                QueryValue::One(v) => pairs.push((name.clone(), v.clone())),
                QueryValue::Many(list) => {
                    pairs.extend(list.iter().map(|v| (name.clone(), v.clone())));
                }
            }
        }
        pairs.sort();
        pairs
    }

    pub fn set_query(&mut self, pairs: &[(String, String)]) {
        let mut query: BTreeMap<String, QueryValue> = BTreeMap::new();
        for (name, value) in pairs {
            match query.remove(name) {
                None => {
                    query.insert(name.clone(), QueryValue::One(value.clone()));
                }
                Some(QueryValue::One(first)) => {
                    query.insert(name.clone(), QueryValue::Many(vec![first, value.clone()]));
                }
                Some(QueryValue::Many(mut list)) => {
                    list.push(value.clone());
                    query.insert(name.clone(), QueryValue::Many(list));
                }
            }
        }
        self.query = query;
    }

    /// `GET /api/rest/x?a=1`, for messages.
    pub fn describe(&self) -> String {
        let mut text = format!("{} {}", self.method, self.path);
        let pairs = self.query_pairs();
        if !pairs.is_empty() {
            text.push('?');
            let query = form_urlencoded::Serializer::new(String::new())
                .extend_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                .finish();
            text.push_str(&query);
        }
        if let Some(body) = &self.body.body {
            text.push_str(" with body ");
            text.push_str(&shorten(&body.to_string(), 160));
        } else if let Some(body) = &self.body.body_text {
            text.push_str(" with body ");
            text.push_str(&shorten(body, 160));
        }
        text
    }
}

pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max).collect();
    out.push('…');
    out
}

/// Every cassette file under `dir` (sub-folders included, so a team can keep one folder
/// per scenario), by path relative to `dir`, sorted. The first file that does not parse
/// fails the whole load (the HAR import, tests); replay uses [`load_dir_lenient`].
pub fn load_dir(dir: &Path) -> Result<BTreeMap<PathBuf, Cassette>, String> {
    let (files, broken) = load_dir_lenient(dir)?;
    match broken.into_iter().next() {
        Some(error) => Err(error),
        None => Ok(files),
    }
}

/// Every cassette file under `dir` that parses, and one message for each that does not
/// (naming the file and the line and column where it stops making sense), so that one
/// broken file does not take the others' answers with it. `Err` only when the folder
/// itself cannot be read.
pub fn load_dir_lenient(dir: &Path) -> Result<(BTreeMap<PathBuf, Cassette>, Vec<String>), String> {
    fn walk(
        root: &Path,
        dir: &Path,
        out: &mut BTreeMap<PathBuf, Cassette>,
        broken: &mut Vec<String>,
    ) -> Result<(), String> {
        let entries =
            std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let mut paths = Vec::new();
        for entry in entries {
            paths.push(
                entry
                    .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
                    .path(),
            );
        }
        paths.sort();
        for path in paths {
            if path.is_dir() {
                walk(root, &path, out, broken)?;
            } else if path.extension().is_some_and(|e| e == "json") {
                match read(&path) {
                    Ok(cassette) => {
                        let relative = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
                        out.insert(relative, cassette);
                    }
                    Err(error) => broken.push(error),
                }
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    let mut broken = Vec::new();
    if dir.exists() {
        walk(dir, dir, &mut out, &mut broken)?;
    }
    Ok((out, broken))
}

/// One cassette file; the error names the file and what is wrong.
pub fn read(path: &Path) -> Result<Cassette, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read cassette {}: {e}", path.display()))?;
    let cassette: Cassette = serde_json::from_str(&text)
        .map_err(|e| format!("cassette {} is not valid: {e}", path.display()))?;
    if cassette.storegate_cassette != FORMAT_VERSION {
        return Err(format!(
            "cassette {} has format {}, this storegate reads {FORMAT_VERSION}",
            path.display(),
            cassette.storegate_cassette
        ));
    }
    Ok(cassette)
}

/// Writes a cassette whole, through a temporary file and a rename, so a reader never sees
/// half a file.
pub fn write(path: &Path, cassette: &Cassette) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let mut text = serde_json::to_string_pretty(cassette).map_err(|e| e.to_string())?;
    text.push('\n');
    let temporary = path.with_extension("json.tmp");
    std::fs::write(&temporary, text)
        .map_err(|e| format!("cannot write {}: {e}", temporary.display()))?;
    std::fs::rename(&temporary, path).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// How every file [`write()`] makes ends: the close of the interactions list and of the file.
const TAIL: &[u8] = b"\n  ]\n}\n";

/// Adds one interaction at the end of the cassette file at `path` (created if missing).
///
/// A recording appends to a file for every exchange, so rewriting the whole file each time
/// would cost the square of its length. A file that ends the way [`write()`] ends it gets the
/// new interaction written over its last few bytes instead, giving the very bytes a full
/// rewrite would; any other file (edited by hand) is read and rewritten whole.
pub fn append(path: &Path, endpoint: &str, interaction: &Interaction) -> Result<(), String> {
    use std::io::{Read, Seek, SeekFrom, Write};
    let cannot = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    if !path.exists() {
        return write(
            path,
            &Cassette {
                storegate_cassette: FORMAT_VERSION,
                endpoint: endpoint.to_owned(),
                interactions: vec![interaction.clone()],
            },
        );
    }
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(cannot)?;
    let len = file.metadata().map_err(cannot)?.len();
    let mut tail = vec![0u8; TAIL.len()];
    let ends_as_written = len >= TAIL.len() as u64 + 2
        && file
            .seek(SeekFrom::Start(len - TAIL.len() as u64))
            .and_then(|_| file.read_exact(&mut tail))
            .is_ok()
        && tail == TAIL;
    if !ends_as_written {
        drop(file);
        let mut cassette = read(path)?;
        cassette.interactions.push(interaction.clone());
        return write(path, &cassette);
    }
    // An item of the list sits four spaces in: indent the pretty interaction as much.
    let item = serde_json::to_string_pretty(interaction).map_err(|e| e.to_string())?;
    let mut text = String::with_capacity(item.len() + item.len() / 8 + 16);
    text.push_str(",\n");
    for (i, line) in item.lines().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str("    ");
        text.push_str(line);
    }
    text.push_str(std::str::from_utf8(TAIL).expect("the tail is text"));
    file.seek(SeekFrom::Start(len - TAIL.len() as u64))
        .map_err(cannot)?;
    file.write_all(text.as_bytes()).map_err(cannot)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// What a store's wire names its calls: `files`, a call's cassette file (method, path,
    /// file name); `endpoints`, its endpoint (method, path, endpoint).
    pub(crate) fn assert_names(
        wires: crate::backend::recording::Wires,
        files: &[(&str, &str, &str)],
        endpoints: &[(&str, &str, &str)],
    ) {
        for (method, path, file) in files {
            assert_eq!(wires.file_name(method, path), *file, "{method} {path}");
        }
        for (method, path, endpoint) in endpoints {
            assert_eq!(wires.endpoint(method, path), *endpoint, "{method} {path}");
        }
    }

    /// A GET of `path` answered 200 with `answer` after `elapsed_ms`.
    pub(crate) fn exchange(path: &str, answer: serde_json::Value, elapsed_ms: u64) -> Interaction {
        Interaction {
            recorded_at: None,
            request: Request {
                method: "GET".into(),
                path: path.into(),
                query: BTreeMap::new(),
                headers: BTreeMap::new(),
                body: Body::default(),
            },
            response: Response {
                status: 200,
                headers: BTreeMap::new(),
                body: Body::json(answer),
                elapsed_ms,
            },
        }
    }

    /// A store of the tests' own: `/shop/api/...`, its names `shop`, `api`, `products`.
    #[derive(Debug)]
    pub(crate) struct TestWire;

    impl crate::backend::port::WireShape for TestWire {
        fn kind(&self) -> &'static str {
            "test"
        }
        fn owns(&self, path: &str) -> bool {
            path.starts_with("/shop/")
        }
        fn template(&self, path: &str) -> String {
            crate::backend::shell::paths::template(path, &["shop", "api", "products"])
        }
        fn unnamed_segments(&self) -> &'static [&'static str] {
            &["api"]
        }
        fn token_endpoints(&self) -> &'static [&'static str] {
            &["/shop/api/token"]
        }
        fn form_token_endpoints(&self) -> &'static [&'static str] {
            &["/oauth/token"]
        }
    }

    pub(crate) const WIRES: crate::backend::recording::Wires =
        crate::backend::recording::Wires(&[&TestWire]);

    #[test]
    fn files_are_named_after_the_endpoint() {
        let file_name = |method, path| WIRES.file_name(method, path);
        let endpoint = |method, path| WIRES.endpoint(method, path);
        // Each store's own names: its adapter's tests.
        assert_eq!(
            file_name("GET", "/shop/api/products/1"),
            "get.shop.products.{}.json"
        );
        assert_eq!(
            endpoint("put", "/shop/api/products/3"),
            "PUT /shop/api/products/{}"
        );
        // A path no known store owns: every segment a value.
        assert_eq!(endpoint("get", "/static/logo.png"), "GET /{}/{}");
    }

    #[test]
    fn appending_gives_the_bytes_of_a_full_write() {
        let dir = std::env::temp_dir().join(format!("storegate-append-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let exchange = |n: u64| {
            let answer = json!({"id": n, "lines": ["a\nb"], "nested": {"x": [1, {"y": 2}]}});
            exchange(&format!("/api/rest/products/{n}"), answer, n)
        };
        let appended = dir.join("appended.json");
        for n in 0..3 {
            append(&appended, "GET /api/rest/products/{}", &exchange(n)).unwrap();
        }
        let whole = dir.join("whole.json");
        let cassette = Cassette {
            storegate_cassette: FORMAT_VERSION,
            endpoint: "GET /api/rest/products/{}".into(),
            interactions: (0..3).map(exchange).collect(),
        };
        write(&whole, &cassette).unwrap();
        assert_eq!(
            std::fs::read_to_string(&appended).unwrap(),
            std::fs::read_to_string(&whole).unwrap()
        );
        // A file edited by hand (no final newline) is rewritten whole, and still reads.
        let text = std::fs::read_to_string(&whole).unwrap();
        std::fs::write(&whole, text.trim_end()).unwrap();
        append(&whole, "GET /api/rest/products/{}", &exchange(3)).unwrap();
        assert_eq!(read(&whole).unwrap().interactions.len(), 4);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn bodies_keep_their_form() {
        assert_eq!(Body::from_bytes(b"{\"a\":1}").body, Some(json!({"a": 1})));
        assert_eq!(
            Body::from_bytes(b"<html>").body_text.as_deref(),
            Some("<html>")
        );
        let binary = Body::from_bytes(&[0xff, 0x00, 0x89]);
        assert_eq!(binary.body_base64.as_deref(), Some("/wCJ"));
        assert_eq!(binary.to_bytes().unwrap().as_ref(), &[0xff, 0x00, 0x89]);
        assert!(Body::from_bytes(b"").is_empty());
    }

    #[test]
    fn a_cassette_reads_back_as_written() {
        let mut request = Request {
            method: "GET".into(),
            path: "/api/rest/products".into(),
            query: BTreeMap::new(),
            headers: BTreeMap::new(),
            body: Body::default(),
        };
        request.set_query(&[
            ("b".into(), "2".into()),
            ("a".into(), "1".into()),
            ("b".into(), "3".into()),
        ]);
        let cassette = Cassette {
            storegate_cassette: FORMAT_VERSION,
            endpoint: "GET /api/rest/products".into(),
            interactions: vec![Interaction {
                recorded_at: Some("2026-11-28T21:57:33Z".into()),
                request,
                response: Response {
                    status: 200,
                    headers: BTreeMap::new(),
                    body: Body::json(json!({"items": []})),
                    elapsed_ms: 2,
                },
            }],
        };
        let text = serde_json::to_string_pretty(&cassette).unwrap();
        assert!(text.contains("\"b\": [\n"), "{text}");
        let back: Cassette = serde_json::from_str(&text).unwrap();
        assert_eq!(back, cassette);
        assert_eq!(
            back.interactions[0].request.query_pairs(),
            vec![
                ("a".to_owned(), "1".to_owned()),
                ("b".to_owned(), "2".to_owned()),
                ("b".to_owned(), "3".to_owned())
            ]
        );
    }
}
