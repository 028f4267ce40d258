//! The report an operator acts on (`GET /api/rest/shadow/report`): since when the count
//! runs, at which sample rate, and per route and user type the outcomes, the field paths
//! that differed (class, counts, one example) and a verdict: `ready` (at least
//! `STOREGATE_SHADOW_MIN_COMPARED` compared and nothing differed), `not ready` (something
//! differed), `too few` (nothing differed, not enough compared yet).
//!
//! Built from the flat counts of [`super::tally`], this process's or the fleet's.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::tally::{Outcome, SEP, Snapshot};
use crate::config::shadow::{RouteClass, Shadow as Settings};

/// A path's counts by kind (`differed`, `lag`, `noise`).
type Kinds = BTreeMap<String, i64>;

#[derive(Default)]
struct RouteCounts {
    outcomes: BTreeMap<String, i64>,
    /// (path, class) -> kind -> count.
    paths: BTreeMap<(String, String), BTreeMap<String, i64>>,
}

pub fn build(snapshot: &Snapshot, settings: &Settings, serving_kind: &str) -> Value {
    let mut routes: BTreeMap<(String, String), RouteCounts> = BTreeMap::new();
    let mut served: BTreeMap<String, BTreeMap<String, i64>> = BTreeMap::new();
    for (name, &count) in &snapshot.counts {
        let parts: Vec<&str> = name.split(SEP).collect();
        match parts.as_slice() {
            ["o", route, user, outcome] => {
                *routes
                    .entry((route.to_string(), user.to_string()))
                    .or_default()
                    .outcomes
                    .entry(outcome.to_string())
                    .or_insert(0) += count;
            }
            ["p", route, user, path, class, kind] => {
                *routes
                    .entry((route.to_string(), user.to_string()))
                    .or_default()
                    .paths
                    .entry((path.to_string(), class.to_string()))
                    .or_default()
                    .entry(kind.to_string())
                    .or_insert(0) += count;
            }
            ["s", class, outcome] => {
                *served
                    .entry(class.to_string())
                    .or_default()
                    .entry(outcome.to_string())
                    .or_insert(0) += count;
            }
            _ => {}
        }
    }
    let list: Vec<Value> = routes
        .iter()
        .map(|((route, user), counts)| route_entry(route, user, counts, snapshot, settings))
        .collect();
    let mut serve = Map::new();
    for class in RouteClass::ALL {
        let share = settings.serve.get(class);
        if share > 0 {
            serve.insert(class.name().into(), json!(share));
        }
    }
    let served: Vec<Value> = served
        .iter()
        .map(|(class, counts)| {
            json!({
                "class": class,
                "candidate": counts.get("candidate").copied().unwrap_or(0),
                "fallback": counts.get("fallback").copied().unwrap_or(0),
            })
        })
        .collect();
    json!({
        "since": crate::observe::access_log::utc_text(snapshot.since_ms),
        "sample": settings.sample,
        "min_compared": settings.min_compared,
        "recheck_secs": settings.recheck.as_secs(),
        "counts": snapshot.scope,
        "serving": serving_kind,
        "candidate": settings.backend.as_str(),
        "serve": Value::Object(serve),
        "routes": list,
        "served": served,
    })
}

fn route_entry(
    route: &str,
    user: &str,
    counts: &RouteCounts,
    snapshot: &Snapshot,
    settings: &Settings,
) -> Value {
    let get = |name: &str| counts.outcomes.get(name).copied().unwrap_or(0).max(0);
    let compared: i64 = Outcome::ALL
        .iter()
        .filter(|o| o.is_compared())
        .map(|o| get(o.name()))
        .sum();
    let differed = get(Outcome::Differed.name());
    let verdict = if differed > 0 {
        "not ready"
    } else if compared >= settings.min_compared as i64 {
        "ready"
    } else {
        "too few"
    };
    let mut entry = Map::new();
    entry.insert("route".into(), json!(route));
    entry.insert("user_type".into(), json!(user));
    entry.insert("verdict".into(), json!(verdict));
    entry.insert("compared".into(), json!(compared));
    for outcome in Outcome::ALL {
        entry.insert(outcome.name().into(), json!(get(outcome.name())));
    }
    entry.insert("pending".into(), json!(get("pending")));
    // The paths that differed first, most often first; then those only ever lag or noise.
    let mut paths: Vec<(&(String, String), &Kinds)> = counts.paths.iter().collect();
    let kind = |kinds: &Kinds, k: &str| kinds.get(k).copied().unwrap_or(0);
    paths.sort_by(|a, b| {
        kind(b.1, "differed")
            .cmp(&kind(a.1, "differed"))
            .then(kind(b.1, "lag").cmp(&kind(a.1, "lag")))
            .then(a.0.cmp(b.0))
    });
    let differences: Vec<Value> = paths
        .into_iter()
        .map(|((path, class), kinds)| {
            let example_field = ["e", route, user, path, class].join(&SEP.to_string());
            let example = snapshot
                .firsts
                .get(&example_field)
                .and_then(|text| serde_json::from_str::<Value>(text).ok())
                .unwrap_or(Value::Null);
            json!({
                "path": path,
                "class": class,
                "count": kind(kinds, "differed"),
                "lag": kind(kinds, "lag"),
                "noise": kind(kinds, "noise"),
                "example": example,
            })
        })
        .collect();
    entry.insert("differences".into(), Value::Array(differences));
    Value::Object(entry)
}
