//! `storegate cassette drift DIR`: every recorded read asked again of the live store, and
//! what it answers differently now, per endpoint and field (Hoverfly's diff mode). A
//! cassette recorded against last year's store keeps tests green; drift says where the
//! store has moved on, so the team re-records on purpose.
//!
//! The comparison is the dual-run shadow's ([`crate::compare`]): field paths in template
//! form, lists matched by identity, key order no difference, and noise (what differs between
//! two live reads of the same request, such as a clock) told apart. The live answer goes
//! through the recording's own scrubbing and masking first, and scrubbed or faked values
//! are compared by presence only: a masked field can only drift by appearing or vanishing.
//!
//! Only reads are asked again (GET, HEAD): replaying a recorded create against a live store
//! would create it. Writes are listed as not checked.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, HeaderValue, Method};
use serde_json::Value;

use super::cassette::{self, Body, Request, Response};
use super::mask::Masker;
use super::scrub::{SCRUBBED, Scrubber};
use super::wire_form::header_map;
use super::wires::Wires;
use crate::backend::port::LiveCredentials;
use crate::backend::transport::{HttpTransport, Outgoing, Transport};
use crate::compare::{self, Answer, Comparison, Difference, Noise, Options, Shown};

/// The live store and what to sign with.
#[derive(Debug, Clone)]
pub struct Live {
    /// `STOREGATE_REPLAY_UPSTREAM_URL`.
    pub url: String,
    /// `STOREGATE_UPSTREAM_TOKEN`: Magento 2's integration token, or OpenMage's access token.
    pub token: String,
    /// OpenMage's consumer key and secret and the token's secret (`STOREGATE_UPSTREAM_*`).
    pub oauth: Option<(String, String, String)>,
    pub timeout: Duration,
}

/// One recorded request that the store answers differently now.
#[derive(Debug, Clone)]
pub struct Drifted {
    pub endpoint: String,
    /// `get.products.{}.json#0`
    pub cassette: String,
    pub request: String,
    pub differences: Vec<Difference>,
}

/// What a drift check found.
#[derive(Debug, Default)]
pub struct Report {
    pub drifted: Vec<Drifted>,
    pub unchanged: usize,
    /// Recorded requests not asked again, and why (writes, customers' sessions).
    pub skipped: Vec<String>,
    /// Requests the store did not answer, and cassette files that do not parse.
    pub failed: Vec<String>,
}

impl Report {
    /// Everything checked answered as recorded.
    pub fn is_clean(&self) -> bool {
        self.drifted.is_empty() && self.failed.is_empty()
    }

    /// The report, grouped per endpoint and field, for a person.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let mut by_endpoint: BTreeMap<&str, Vec<&Drifted>> = BTreeMap::new();
        for d in &self.drifted {
            by_endpoint.entry(&d.endpoint).or_default().push(d);
        }
        for (endpoint, drifted) in &by_endpoint {
            out.push_str(&format!(
                "{endpoint}: {} recorded request(s) answered differently\n",
                drifted.len()
            ));
            // Per field: the requests it changed in, and the first example.
            let mut fields: BTreeMap<(String, &str), (usize, &Difference, &Drifted)> =
                BTreeMap::new();
            for d in drifted {
                for difference in &d.differences {
                    fields
                        .entry((difference.path.clone(), difference.class.name()))
                        .and_modify(|e| e.0 += 1)
                        .or_insert((1, difference, d));
                }
            }
            for ((path, class), (count, difference, first)) in &fields {
                out.push_str(&format!(
                    "  {path} ({class}) in {count}: recorded {}, now {} ({} {})\n",
                    shown(&difference.good),
                    shown(&difference.other),
                    first.cassette,
                    first.request
                ));
            }
        }
        for failed in &self.failed {
            out.push_str(&format!("not checked: {failed}\n"));
        }
        out.push_str(&format!(
            "drift: {} of {} recorded reads answer differently now ({} endpoint(s)); {} not asked again (writes, customers' sessions); {} could not be checked\n",
            self.drifted.len(),
            self.drifted.len() + self.unchanged,
            by_endpoint.len(),
            self.skipped.len(),
            self.failed.len()
        ));
        out
    }
}

fn shown(value: &Shown) -> String {
    match value {
        Shown::Absent => "(absent)".into(),
        Shown::Value(v) => super::cassette::shorten(&v.to_string(), 80),
        Shown::Digest(d) => format!("(digest {d})"),
        Shown::Masked => "(masked)".into(),
    }
}

/// Asks the live store every recorded read of `dir` again and compares.
pub async fn check(dir: &Path, live: &Live, scrubber: Arc<Scrubber>) -> Result<Report, String> {
    let (files, broken) = cassette::load_dir_lenient(dir)?;
    let store = HttpTransport::without_redirects(&live.url, live.timeout)?;
    let masker = Masker::new(b"");
    let options = Options::default().masked_values(move |value| match value {
        Value::String(text) => text == SCRUBBED || text.contains(SCRUBBED) || masker.is_fake(text),
        _ => false,
    });
    let mut report = Report {
        failed: broken,
        ..Report::default()
    };
    for (file, cassette) in &files {
        for (index, interaction) in cassette.interactions.iter().enumerate() {
            let recorded = &interaction.request;
            let place = format!("{}#{index}", file.display());
            if !matches!(recorded.method.as_str(), "GET" | "HEAD") {
                report
                    .skipped
                    .push(format!("{place} {}: a write", recorded.describe()));
                continue;
            }
            // Made with a customer's credentials (OpenMage's session, Magento 2's `me`
            // routes): drift has only the store's own, so the store would answer otherwise.
            if recorded
                .headers
                .contains_key(crate::backend::port::ON_BEHALF_OF.as_str())
                || recorded.path.split('/').any(|s| s == "me" || s == "mine")
            {
                report.skipped.push(format!(
                    "{place} {}: made in a customer's session",
                    recorded.describe()
                ));
                continue;
            }
            let mut reads = Vec::with_capacity(2);
            for _ in 0..2 {
                match ask(&store, recorded, live, scrubber.wires()).await {
                    Ok(response) => reads.push(response),
                    Err(error) => {
                        report
                            .failed
                            .push(format!("{place} {}: {error}", recorded.describe()));
                        break;
                    }
                }
            }
            let [first, second] = match <[Response; 2]>::try_from(reads) {
                Ok(pair) => pair,
                Err(_) => continue,
            };
            let mut live_reads = [first, second];
            for read in &mut live_reads {
                scrubber.response(recorded, read);
            }
            let recorded_body = body_value(&interaction.response.body);
            let bodies = [
                body_value(&live_reads[0].body),
                body_value(&live_reads[1].body),
            ];
            let good = Answer::new(interaction.response.status, &recorded_body);
            let now = Answer::new(live_reads[0].status, &bodies[0]);
            let noise =
                Noise::between(now, Answer::new(live_reads[1].status, &bodies[1]), &options);
            let (real, _noise): (Comparison, Comparison) =
                noise.split(compare::compare(good, now, &options));
            if real.is_match() {
                report.unchanged += 1;
            } else {
                report.drifted.push(Drifted {
                    endpoint: scrubber.wires().endpoint(&recorded.method, &recorded.path),
                    cassette: place,
                    request: recorded.describe(),
                    differences: real.differences,
                });
            }
        }
    }
    Ok(report)
}

/// A body as the engine compares it: JSON as JSON, anything else as its text.
fn body_value(body: &Body) -> Value {
    if let Some(value) = &body.body {
        return value.clone();
    }
    match body.to_bytes() {
        Ok(bytes) if bytes.is_empty() => Value::Null,
        Ok(bytes) => Value::String(String::from_utf8_lossy(&bytes).into_owned()),
        Err(_) => Value::Null,
    }
}

/// The recorded request sent to the live store, with the store's credentials where the
/// recording had some (a request recorded without `Authorization` goes as the store's guest).
async fn ask(
    store: &HttpTransport,
    recorded: &Request,
    live: &Live,
    wires: Wires,
) -> Result<Response, String> {
    let method = Method::from_bytes(recorded.method.as_bytes()).map_err(|e| e.to_string())?;
    let query = recorded.query_pairs();
    let mut headers = HeaderMap::new();
    for name in ["accept", "content-type"] {
        if let Some(value) = recorded.headers.get(name)
            && let Ok(value) = HeaderValue::from_str(value)
        {
            headers.insert(http::header::HeaderName::from_static(name), value);
        }
    }
    if !headers.contains_key(http::header::ACCEPT) {
        headers.insert(
            http::header::ACCEPT,
            HeaderValue::from_static("application/json"),
        );
    }
    let signed = recorded.headers.contains_key("authorization");
    if signed {
        // Signed anew as the store signs (its wire knows how).
        let credentials = LiveCredentials {
            url: &live.url,
            token: &live.token,
            oauth: live.oauth.as_ref().map(|(key, secret, token_secret)| {
                (key.as_str(), secret.as_str(), token_secret.as_str())
            }),
        };
        let store = wires
            .owner(&recorded.path)
            .ok_or_else(|| format!("no known store's path: {}", recorded.path))?;
        if let Some(value) = store.authorize(&method, &recorded.path, &query, &credentials)? {
            let mut value = HeaderValue::from_str(&value).map_err(|e| e.to_string())?;
            value.set_sensitive(true);
            headers.insert(http::header::AUTHORIZATION, value);
        }
    }
    let outgoing = Outgoing {
        method,
        path: recorded.path.clone(),
        query,
        headers,
        body: None,
        timeout: live.timeout,
        exact_path: false,
    };
    let answer = store.send(outgoing).await.map_err(|e| e.to_string())?;
    Ok(Response {
        status: answer.status.as_u16(),
        headers: header_map(&answer.headers),
        body: Body::from_bytes(&answer.body),
        elapsed_ms: 0,
    })
}
