//! When a request is "the same" as a recorded one: method, path, query (in any order) and
//! body (equal as JSON), minus what the ignore rules leave out. And, when nothing matches,
//! which recorded request comes closest and how it differs, for the error message.

use serde_json::Value;

use super::cassette::Request;
use super::json_path::JsonPath;

/// The customer a call was made for, when it names one (an OpenMage read signed with a
/// customer's session): the same URL answers differently for each customer and the Guest.
fn on_behalf_of(request: &Request) -> Option<&str> {
    request
        .headers
        .get(crate::backend::port::ON_BEHALF_OF.as_str())
        .map(String::as_str)
}

/// Two paths of the same length that differ in one segment (a SKU, an id): most likely one
/// endpoint, whichever store they are of.
fn same_shape(a: &str, b: &str) -> bool {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.split('/').collect(), b.split('/').collect());
    a.len() == b.len() && a.iter().zip(&b).filter(|(x, y)| x != y).count() <= 1
}

/// `STOREGATE_REPLAY_IGNORE`: query parameters and body fields left out of matching.
#[derive(Debug, Clone, Default)]
pub struct Ignore {
    query: Vec<String>,
    body: Vec<JsonPath>,
}

impl Ignore {
    /// Rules such as `query:searchCriteria[currentPage]` and `body:product.updated_at`.
    pub fn parse(rules: &[String]) -> Result<Ignore, String> {
        let mut ignore = Ignore::default();
        for rule in rules {
            if let Some(name) = rule.strip_prefix("query:") {
                ignore.query.push(name.trim().to_owned());
            } else if let Some(path) = rule.strip_prefix("body:") {
                ignore.body.push(
                    JsonPath::parse(path).map_err(|e| format!("STOREGATE_REPLAY_IGNORE: {e}"))?,
                );
            } else {
                return Err(format!(
                    "STOREGATE_REPLAY_IGNORE: {rule:?} is neither query:NAME nor body:JSON.PATH"
                ));
            }
        }
        Ok(ignore)
    }

    fn query(&self, request: &Request) -> Vec<(String, String)> {
        request
            .query_pairs()
            .into_iter()
            .filter(|(name, _)| !self.query.contains(name))
            .collect()
    }

    fn body(&self, request: &Request) -> Option<Value> {
        let mut body = request.body.body.clone()?;
        for path in &self.body {
            path.remove(&mut body);
        }
        Some(body)
    }

    /// Same request for replay purposes.
    pub fn matches(&self, wanted: &Request, recorded: &Request) -> bool {
        wanted.method == recorded.method
            && on_behalf_of(wanted) == on_behalf_of(recorded)
            && wanted.path == recorded.path
            && self.query(wanted) == self.query(recorded)
            && self.body(wanted) == self.body(recorded)
            && wanted.body.body_text == recorded.body.body_text
            && wanted.body.body_base64 == recorded.body.body_base64
    }

    /// How far `recorded` is from `wanted`: lower is closer.
    fn distance(&self, wanted: &Request, recorded: &Request) -> usize {
        let mut distance = 0;
        if wanted.method != recorded.method {
            distance += 100;
        }
        if wanted.path != recorded.path {
            distance += if same_shape(&wanted.path, &recorded.path) {
                20
            } else {
                60
            };
        }
        let (a, b) = (self.query(wanted), self.query(recorded));
        distance += a.iter().filter(|p| !b.contains(p)).count();
        distance += b.iter().filter(|p| !a.contains(p)).count();
        if self.body(wanted) != self.body(recorded) {
            distance += 5;
        }
        distance
    }

    /// What separates `recorded` from `wanted`, in words.
    fn differences(&self, wanted: &Request, recorded: &Request) -> String {
        let mut out = Vec::new();
        if wanted.method != recorded.method {
            out.push("method".to_owned());
        }
        if wanted.path != recorded.path {
            out.push("path".to_owned());
        }
        let (a, b) = (self.query(wanted), self.query(recorded));
        let mut names: Vec<&str> = a
            .iter()
            .filter(|p| !b.contains(p))
            .chain(b.iter().filter(|p| !a.contains(p)))
            .map(|(name, _)| name.as_str())
            .collect();
        names.dedup();
        if !names.is_empty() {
            out.push(format!("query {}", names.join(", ")));
        }
        if self.body(wanted) != self.body(recorded) {
            out.push("body".to_owned());
        }
        out.join("; ")
    }

    /// The closest of `recorded`, described, or a note that the cassettes are empty.
    pub fn closest<'a>(
        &self,
        wanted: &Request,
        recorded: impl Iterator<Item = &'a Request>,
    ) -> String {
        match recorded.min_by_key(|r| self.distance(wanted, r)) {
            Some(best) => format!(
                "closest recorded: {} (differs in {})",
                best.describe(),
                self.differences(wanted, best)
            ),
            None => "the cassettes hold no interaction at all".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::recording::cassette::Body;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn req(method: &str, path: &str, query: &[(&str, &str)], body: Option<Value>) -> Request {
        let mut r = Request {
            method: method.into(),
            path: path.into(),
            query: BTreeMap::new(),
            headers: BTreeMap::new(),
            body: body.map(Body::json).unwrap_or_default(),
        };
        r.set_query(
            &query
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<Vec<_>>(),
        );
        r
    }

    #[test]
    fn query_order_and_key_order_do_not_matter() {
        let ignore = Ignore::default();
        let a = req(
            "PUT",
            "/p",
            &[("a", "1"), ("b", "2")],
            Some(json!({"x": 1, "y": [1, 2]})),
        );
        let b = req(
            "PUT",
            "/p",
            &[("b", "2"), ("a", "1")],
            Some(json!({"y": [1, 2], "x": 1})),
        );
        assert!(ignore.matches(&a, &b));
        let c = req(
            "PUT",
            "/p",
            &[("b", "2"), ("a", "1")],
            Some(json!({"y": [2, 1], "x": 1})),
        );
        assert!(!ignore.matches(&a, &c));
        assert!(!ignore.matches(
            &a,
            &req(
                "POST",
                "/p",
                &[("a", "1"), ("b", "2")],
                Some(json!({"x": 1, "y": [1, 2]}))
            )
        ));
    }

    #[test]
    fn ignore_rules_and_closest() {
        let ignore =
            Ignore::parse(&["query:page".into(), "body:product.updated_at".into()]).unwrap();
        let a = req(
            "PUT",
            "/p",
            &[("page", "1")],
            Some(json!({"product": {"sku": "a", "updated_at": "1"}})),
        );
        let b = req(
            "PUT",
            "/p",
            &[("page", "2")],
            Some(json!({"product": {"sku": "a", "updated_at": "2"}})),
        );
        assert!(ignore.matches(&a, &b));
        assert!(Ignore::parse(&["header:x".into()]).is_err());

        let wanted = req("GET", "/shop/api/products/B", &[], None);
        let recorded = [
            req("GET", "/shop/api/orders", &[], None),
            req("GET", "/shop/api/products/A", &[], None),
        ];
        let text = Ignore::default().closest(&wanted, recorded.iter());
        assert_eq!(
            text,
            "closest recorded: GET /shop/api/products/A (differs in path)"
        );
    }
}
