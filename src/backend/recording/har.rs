//! HAR import: what a browser's developer tools or mitmproxy export, turned into
//! cassettes. Only Magento REST calls (a path with `/rest/`) are taken; each goes through
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
pub fn import(file: &Path, dir: &Path, scrubber: &Scrubber) -> Result<Imported, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let har: Har = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a HAR file: {e}", file.display()))?;
    let library = Library::for_recording(dir)?;
    let mut imported = Imported {
        interactions: 0,
        skipped: 0,
    };
    for entry in har.log.entries {
        let Some(mut request) = request(&entry.request)? else {
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

fn request(har: &HarRequest) -> Result<Option<Request>, String> {
    let url = reqwest::Url::parse(&har.url).map_err(|e| format!("{:?}: {e}", har.url))?;
    let Some(at) = url.path().find("/rest/") else {
        return Ok(None);
    };
    let mut request = Request {
        method: har.method.to_ascii_uppercase(),
        path: url.path()[at..].to_owned(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::recording::cassette;
    use crate::backend::recording::scrub::Rules;
    use serde_json::json;

    #[test]
    fn magento_calls_become_scrubbed_cassettes() {
        let dir = std::env::temp_dir().join(format!("storegate-har-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let har = json!({"log": {"version": "1.2", "entries": [
            {"time": 12.5,
             "request": {"method": "POST", "url": "https://shop.example/rest/default/V1/integration/customer/token",
                "headers": [{"name": "Authorization", "value": "Bearer secret-token-123"}, {"name": ":authority", "value": "x"}],
                "postData": {"mimeType": "application/json", "text": "{\"username\":\"a@b.example\",\"password\":\"pw-123456\"}"}},
             "response": {"status": 200, "headers": [{"name": "Set-Cookie", "value": "PHPSESSID=1"}],
                "content": {"mimeType": "application/json", "text": "\"customer-token-abcdef\""}}},
            {"time": 3,
             "request": {"method": "GET", "url": "https://shop.example/rest/default/V1/products?searchCriteria%5BpageSize%5D=2", "headers": []},
             "response": {"status": 200, "headers": [],
                "content": {"mimeType": "application/json", "encoding": "base64", "text": "eyJpdGVtcyI6W119"}}},
            {"time": 1,
             "request": {"method": "GET", "url": "https://shop.example/static/logo.png", "headers": []},
             "response": {"status": 200, "headers": [], "content": {}}}
        ]}});
        let file = dir.with_extension("har");
        std::fs::write(&file, har.to_string()).unwrap();
        let scrubber = Scrubber::new(&Rules::default(), &[]).unwrap();
        let imported = import(&file, &dir, &scrubber).unwrap();
        assert_eq!(
            imported,
            Imported {
                interactions: 2,
                skipped: 1
            }
        );
        let files = cassette::load_dir(&dir).unwrap();
        let all = serde_json::to_string(&files.values().collect::<Vec<_>>()).unwrap();
        for secret in [
            "secret-token-123",
            "pw-123456",
            "customer-token-abcdef",
            "PHPSESSID",
        ] {
            assert!(!all.contains(secret), "{secret} in {all}");
        }
        let list = &files[Path::new("get.products.json")].interactions[0];
        assert_eq!(
            list.request.query_pairs(),
            vec![("searchCriteria[pageSize]".to_owned(), "2".to_owned())]
        );
        assert_eq!(list.response.body.body, Some(json!({"items": []})));
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_file(&file);
    }
}
