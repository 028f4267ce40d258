//! Cassettes on the fake Magento: a recorded folder of `fixtures/cassettes/` mounted on
//! the `wiremock` server as its lowest-priority answer, matched by storegate's own replay
//! rules (method, path, query in any order, JSON-equal body).
//!
//! Tests keep `wiremock` for what it is good at (faults mounted above the cassette,
//! counting calls) while plain answers come from a recording instead of hand-written
//! mounts. A call the cassette does not hold gets a 502 whose message names it, as in
//! strict replay.

use storegate::backend::recording::cassette::{Body, Request};
use storegate::backend::recording::library::Library;
use storegate::backend::recording::matching::Ignore;
use storegate::backend::recording::scrub::{Rules, Scrubber};
use wiremock::{Mock, MockServer, Respond, ResponseTemplate};

use crate::helpers::root;

struct Cassette {
    library: Library,
    scrubber: Scrubber,
}

impl Respond for Cassette {
    fn respond(&self, request: &wiremock::Request) -> ResponseTemplate {
        let mut wanted = Request {
            method: request.method.to_string(),
            path: request.url.path().to_owned(),
            query: Default::default(),
            headers: Default::default(),
            body: Body::from_bytes(&request.body),
        };
        let pairs: Vec<(String, String)> = request.url.query_pairs().into_owned().collect();
        wanted.set_query(&pairs);
        self.scrubber.request(&mut wanted);
        match self.library.answer(&wanted, &Ignore::default()) {
            Ok(response) => {
                let content_type = response
                    .headers
                    .get("content-type")
                    .cloned()
                    .unwrap_or_else(|| "application/json; charset=utf-8".into());
                ResponseTemplate::new(response.status)
                    .set_body_raw(response.body.to_bytes().unwrap().to_vec(), &content_type)
            }
            Err(closest) => ResponseTemplate::new(502).set_body_json(serde_json::json!({
                "message": format!("cassette: no recorded answer for {}; {closest}", wanted.describe())
            })),
        }
    }
}

/// Mounts `fixtures/cassettes/<name>/` on `server`, below every other mount.
pub async fn mount(server: &MockServer, name: &str) {
    let dir = root().join("fixtures/cassettes").join(name);
    let library =
        Library::open(&dir, storegate::backend::registry::WIRES).unwrap_or_else(|e| panic!("{e}"));
    assert!(!library.is_empty(), "{} holds no cassette", dir.display());
    let cassette = Cassette {
        library,
        scrubber: Scrubber::new(&Rules::default(), &[], storegate::backend::registry::WIRES)
            .unwrap(),
    };
    Mock::given(wiremock::matchers::any())
        .respond_with(cassette)
        .with_priority(u8::MAX)
        .mount(server)
        .await;
}
