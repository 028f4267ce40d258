//! HAR import: what a browser's developer tools or mitmproxy export, turned into
//! cassettes. Only calls of a known store's API are taken (its wire says which,
//! `WireShape::api_path`); each goes through
//! the same scrubbing as a recording, so an export full of cookies and tokens gives a
//! clean cassette.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::Deserialize;

use super::cassette::{Body, Interaction, Request, Response};
use super::library::Library;
use super::scrub::Scrubber;
use super::wires::Wires;

#[derive(Deserialize)]
struct Har {
    log: Log,
}

#[derive(Deserialize)]
struct Log {
    entries: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    request: HarRequest,
    response: HarResponse,
    #[serde(default)]
    time: f64,
    /// When the browser sent it (RFC 3339 with an offset): the interaction's `recorded_at`.
    #[serde(default, rename = "startedDateTime")]
    started: Option<String>,
}

#[derive(Deserialize)]
struct HarRequest {
    method: String,
    url: String,
    #[serde(default)]
    headers: Vec<Pair>,
    #[serde(default, rename = "postData")]
    post_data: Option<PostData>,
}

#[derive(Deserialize)]
struct PostData {
    #[serde(default)]
    text: Option<String>,
}

#[derive(Deserialize)]
struct HarResponse {
    status: u16,
    #[serde(default)]
    headers: Vec<Pair>,
    #[serde(default)]
    content: Content,
}

#[derive(Deserialize, Default)]
struct Content {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    encoding: Option<String>,
}

#[derive(Deserialize)]
struct Pair {
    name: String,
    value: String,
}

/// What an import did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Imported {
    pub interactions: usize,
    /// Entries that were not Magento REST calls (pages, assets, other hosts' APIs).
    pub skipped: usize,
}

/// Appends the Magento REST calls of the HAR file `file` to the cassettes of `dir`.
pub fn import(
    file: &Path,
    dir: &Path,
    scrubber: &Scrubber,
    wires: Wires,
) -> Result<Imported, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let har: Har = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a HAR file: {e}", file.display()))?;
    let library = Library::for_recording(dir, wires)?;
    let mut imported = Imported {
        interactions: 0,
        skipped: 0,
    };
    for entry in har.log.entries {
        let Some(mut request) = request(&entry.request, wires)? else {
            imported.skipped += 1;
            continue;
        };
        scrubber.request(&mut request);
        let body = match (
            &entry.response.content.text,
            &entry.response.content.encoding,
        ) {
            (Some(text), Some(encoding)) if encoding == "base64" => {
                Body::from_bytes(&BASE64.decode(text).map_err(|e| {
                    format!("{}: a response body is not base64: {e}", file.display())
                })?)
            }
            (Some(text), _) => Body::from_bytes(text.as_bytes()),
            (None, _) => Body::default(),
        };
        let mut response = Response {
            status: entry.response.status,
            headers: headers(&entry.response.headers),
            body,
            elapsed_ms: entry.time.max(0.0) as u64,
        };
        scrubber.response(&request, &mut response);
        let recorded_at = entry
            .started
            .as_deref()
            .and_then(|t| super::ageing::parse_time(t).ok())
            .map(|t| humantime::format_rfc3339_seconds(t).to_string());
        library.append(
            Interaction {
                recorded_at,
                request,
                response,
            },
            false,
        )?;
        imported.interactions += 1;
    }
    Ok(imported)
}

fn request(har: &HarRequest, wires: Wires) -> Result<Option<Request>, String> {
    let url = reqwest::Url::parse(&har.url).map_err(|e| format!("{:?}: {e}", har.url))?;
    let Some(path) = wires.api_path(url.path()) else {
        return Ok(None);
    };
    let mut request = Request {
        method: har.method.to_ascii_uppercase(),
        path: path.to_owned(),
        query: BTreeMap::new(),
        headers: headers(&har.headers),
        body: har
            .post_data
            .as_ref()
            .and_then(|p| p.text.as_deref())
            .map(|t| Body::from_bytes(t.as_bytes()))
            .unwrap_or_default(),
    };
    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    request.set_query(&pairs);
    Ok(Some(request))
}

/// HAR keeps HTTP/2 pseudo-headers and any case; cassettes keep lower-case real headers.
fn headers(pairs: &[Pair]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .filter(|p| !p.name.starts_with(':'))
        .map(|p| (p.name.to_ascii_lowercase(), p.value.clone()))
        .collect()
}
