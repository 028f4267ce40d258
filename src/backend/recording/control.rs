//! The control API of `storegate replay`, under `/__storegate/` (Toxiproxy's idea): a test
//! changes the store's latency and faults while it runs (a maintenance window in the middle
//! of a scenario, no restart), resets everything, and reads what was asked, what was never
//! used and the counts per endpoint.
//!
//! Bodies are the rules as `STOREGATE_REPLAY_FAULTS` and `STOREGATE_REPLAY_LATENCY` write
//! them (plain text, a JSON string, or `{"faults": "..."}` / `{"latency": "..."}`); a bad
//! one is a 400 naming the part. Only loopback callers may use it unless the server was
//! started with `--control-open`: a device on the network reaches the store, not its
//! switches.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::StatusCode;
use serde_json::{Value, json};

use super::faults;
use super::latency::Latencies;
use super::replay::Replay;

pub const PREFIX: &str = "/__storegate";

#[derive(Debug, Clone)]
struct Control {
    replay: Arc<Replay>,
}

/// The control routes, under [`PREFIX`] (the replaying router's fallback answers the rest).
pub fn router(replay: Arc<Replay>, open: bool) -> Router<Arc<Replay>> {
    let control = Control { replay };
    let at = |path: &str| format!("{PREFIX}{path}");
    Router::new()
        .route(PREFIX, get(state))
        .route(&at("/"), get(state))
        .route(
            &at("/faults"),
            get(state)
                .put(set_faults)
                .post(add_faults)
                .delete(clear_faults),
        )
        .route(
            &at("/latency"),
            get(state).put(set_latency).delete(clear_latency),
        )
        .route(&at("/reset"), post(reset))
        .route(&at("/requests"), get(requests))
        .route(&at("/unused"), get(unused))
        .route(&at("/counts"), get(counts))
        .route_layer(axum::middleware::from_fn(
            move |request: Request, next: Next| loopback_only(open, request, next),
        ))
        .with_state(control)
}

async fn loopback_only(open: bool, request: Request, next: Next) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip());
    if open || peer.is_some_and(|ip| ip.is_loopback()) {
        return next.run(request).await;
    }
    problem(
        StatusCode::FORBIDDEN,
        "the control API answers loopback callers only (storegate replay --control-open to allow others)",
    )
}

fn problem(status: StatusCode, message: &str) -> Response {
    reply(status, &json!({ "message": message }))
}

/// A JSON answer (axum is built without its `json` feature).
fn reply(status: StatusCode, value: &Value) -> Response {
    (
        status,
        [(http::header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

/// The rules text of a body: plain, a JSON string, `{"<field>": "..."}`, one rule as an
/// object (`{"endpoint": "GET /api/rest/products/{}", "fault": "maintenance", "probability": 0.3}`,
/// `{"latency": "fixed:200ms"}`), or a list of any of these.
fn rules_text(body: &Bytes, field: &str) -> Result<String, String> {
    let text = std::str::from_utf8(body).map_err(|_| "the body is not UTF-8 text".to_owned())?;
    match serde_json::from_str::<Value>(text) {
        Ok(value) => rule_of(&value, field),
        Err(_) => Ok(text.to_owned()),
    }
}

fn rule_of(value: &Value, field: &str) -> Result<String, String> {
    match value {
        Value::String(rules) => Ok(rules.clone()),
        Value::Array(items) => Ok(items
            .iter()
            .map(|item| rule_of(item, field))
            .collect::<Result<Vec<_>, _>>()?
            .join("; ")),
        Value::Object(map) => {
            // `faults` / `latency` hold rules; `fault` names one, with its endpoint and
            // probability beside it.
            let one = if field == "faults" {
                "fault"
            } else {
                "latency"
            };
            if let Some(rules) = map.get(field).filter(|_| field != one) {
                return rule_of(rules, field);
            }
            let Some(Value::String(setting)) = map.get(one) else {
                return Err(format!(
                    "a JSON body needs {field:?} (rules) or {one:?} (one rule, with \"endpoint\" and \"probability\" if any)"
                ));
            };
            let mut rule = setting.clone();
            match map.get("probability") {
                None | Some(Value::Null) => {}
                Some(Value::Number(p)) => rule = format!("{rule}@{p}"),
                Some(other) => {
                    return Err(format!(
                        "\"probability\" {other} is not a number from 0 to 1"
                    ));
                }
            }
            match map.get("endpoint") {
                None | Some(Value::Null) => Ok(rule),
                Some(Value::String(endpoint)) => Ok(format!("{endpoint}={rule}")),
                Some(other) => Err(format!(
                    "\"endpoint\" {other} is not a string such as \"GET /api/rest/products/{{}}\""
                )),
            }
        }
        other => Err(format!("{other} is not a rule")),
    }
}

async fn state(State(control): State<Control>) -> Response {
    let bench = control.replay.bench();
    let settings = bench.settings();
    let library = control.replay.library();
    reply(
        StatusCode::OK,
        &json!({
            "seed": bench.seed(),
            "latency": settings.latency.text,
            "faults": settings.faults.iter().map(|r| r.text.clone()).collect::<Vec<_>>(),
            "cassettes": library.map(|l| l.dir().display().to_string()),
            "interactions": library.map_or(0, |l| l.len()),
            "broken": library.map(|l| l.broken().to_vec()).unwrap_or_default(),
            "failures": super::failures::CATALOG.iter().map(|(name, what)| json!({"name": name, "what": what})).collect::<Vec<_>>(),
        }),
    )
}

async fn set_faults(State(control): State<Control>, body: Bytes) -> Response {
    change_faults(control, body, |bench, rules| bench.set_faults(rules)).await
}

async fn add_faults(State(control): State<Control>, body: Bytes) -> Response {
    change_faults(control, body, |bench, rules| bench.add_faults(rules)).await
}

/// The fault rules of `body` handed to `apply`; a bad one is a 400 and changes nothing.
async fn change_faults(
    control: Control,
    body: Bytes,
    apply: impl FnOnce(&super::bench::Bench, Vec<faults::FaultRule>),
) -> Response {
    match rules_text(&body, "faults").and_then(|t| faults::parse(&t)) {
        Ok(rules) => {
            apply(control.replay.bench(), rules);
            state(State(control)).await
        }
        Err(error) => problem(StatusCode::BAD_REQUEST, &error),
    }
}

async fn clear_faults(State(control): State<Control>) -> Response {
    control.replay.bench().set_faults(Vec::new());
    state(State(control)).await
}

async fn set_latency(State(control): State<Control>, body: Bytes) -> Response {
    match rules_text(&body, "latency").and_then(|t| Latencies::parse(&t)) {
        Ok(latency) => {
            control.replay.bench().set_latency(latency);
            state(State(control)).await
        }
        Err(error) => problem(StatusCode::BAD_REQUEST, &error),
    }
}

async fn clear_latency(State(control): State<Control>) -> Response {
    control.replay.bench().set_latency(Latencies::default());
    state(State(control)).await
}

/// The start's settings again, nothing asked, every interaction unused: the same seed
/// draws the same sequence.
async fn reset(State(control): State<Control>) -> Response {
    control.replay.bench().reset();
    if let Some(library) = control.replay.library() {
        library.reset_used();
    }
    state(State(control)).await
}

async fn requests(State(control): State<Control>) -> Response {
    reply(
        StatusCode::OK,
        &json!({ "requests": control.replay.bench().asked() }),
    )
}

async fn unused(State(control): State<Control>) -> Response {
    let unused = control
        .replay
        .library()
        .map(|l| l.unused())
        .unwrap_or_default();
    reply(StatusCode::OK, &json!({ "unused": unused }))
}

async fn counts(State(control): State<Control>) -> Response {
    reply(
        StatusCode::OK,
        &json!({ "counts": control.replay.bench().counts() }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(body: &str, field: &str) -> Result<String, String> {
        rules_text(&Bytes::from(body.to_owned()), field)
    }

    #[test]
    fn bodies_say_rules_in_several_forms() {
        assert_eq!(
            rules("maintenance@0.3", "faults").unwrap(),
            "maintenance@0.3"
        );
        assert_eq!(rules("\"reset\"", "faults").unwrap(), "reset");
        assert_eq!(
            rules(r#"{"faults": "reset; empty"}"#, "faults").unwrap(),
            "reset; empty"
        );
        assert_eq!(
            rules(
                r#"{"endpoint": "GET /api/rest/products/{}", "fault": "maintenance", "probability": 0.3}"#,
                "faults"
            )
            .unwrap(),
            "GET /api/rest/products/{}=maintenance@0.3"
        );
        assert_eq!(
            rules(
                r#"[{"fault": "reset"}, "GET /api/rest/orders=http:500"]"#,
                "faults"
            )
            .unwrap(),
            "reset; GET /api/rest/orders=http:500"
        );
        assert_eq!(
            rules(
                r#"{"endpoint": "GET /api/rest/orders", "latency": "fixed:1s"}"#,
                "latency"
            )
            .unwrap(),
            "GET /api/rest/orders=fixed:1s"
        );
        assert!(rules(r#"{"fault": "reset", "probability": "often"}"#, "faults").is_err());
        assert!(
            rules(r#"{"nothing": 1}"#, "faults")
                .unwrap_err()
                .contains("\"fault\"")
        );
        // Parsed as rules afterwards: a bad probability is still named there.
        let text = rules(r#"{"fault": "maintenance", "probability": 1.5}"#, "faults").unwrap();
        assert!(faults::parse(&text).unwrap_err().contains("outside 0-1"));
    }
}
