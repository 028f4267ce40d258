//! Customers (SPEC 2.4, 4.4): the list and create for Admin, one customer for Admin or the
//! customer themself, partial update, and delete (Admin) which also revokes the customer's
//! gateway tokens.
//!
//! Customer data belongs to one person. None of it goes through the shared cache, every
//! answer carrying it says `Cache-Control: private, no-store`, and upstream failures on these
//! routes are logged without Magento's parameters or bodies (they can quote names and
//! e-mail addresses). A customer reaching for another customer's record gets the same 404
//! as for a record that does not exist, before anything is asked of Magento.
//!
//! The helpers at the end ([`redact`], [`private`], [`owns`], [`criteria_for`], [`lock`])
//! are shared with the address and order resources, which have the same needs.
//!
//! Magento 2's `PUT /V1/customers/{id}` replaces the whole customer, so an update reads the
//! stored customer, changes only the fields sent, and writes it back without an
//! `addresses` key (with one, the list would replace the stored addresses).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::response::Response;
use http::{HeaderMap, HeaderValue, Method, Uri};
use serde_json::{Map, Value, json};

use crate::app::AppState;
use crate::auth::{Operation, Principal, Route, UserType, authorize};
use crate::http::body::decode_record;
use crate::http::query::ListParams;
use crate::http::{ApiError, Doc, Format, created, empty_ok, msg, ok};
use crate::mapping::ResourceMapping;
use crate::mapping::convert::{as_i64, is_empty};
use crate::upstream::{SearchCriteria, UpstreamError};

use super::listing::search_criteria;
use super::support::{Caller, parse_id};
use super::{stores, upstream_errors};

/// SPEC 8: a customer password has at least this many characters. Magento 2 may demand
/// more (8 and three character classes by default); its refusal is passed on.
pub const MIN_PASSWORD: usize = 7;

const PASSWORD_TOO_SHORT: &str =
    "The password must have at least 7 characters. Leading or trailing spaces will be ignored.";

// ---------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------

/// `/customers`: list and create.
pub async fn collection(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    match authorize(Route::Customers, &method, caller.principal)? {
        Operation::Retrieve => list(app, caller, &uri).await,
        Operation::Create => create(app, &headers, body).await,
        op => Err(ApiError::internal().with_cause(format!("{op:?} is not served on /customers"))),
    }
}

/// `/customers/:id`: read, update, delete.
pub async fn entity(
    State(app): State<AppState>,
    caller: Caller,
    method: Method,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    match authorize(Route::Customer, &method, caller.principal)? {
        Operation::Retrieve => get_one(app, caller, &id).await,
        Operation::Update => update(app, caller, &id, &headers, body).await,
        Operation::Delete => delete(app, &id).await,
        Operation::Create => Err(ApiError::not_implemented()),
    }
}

// ---------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------

fn customer_id(customer: &Value) -> Option<u64> {
    super::support::positive_id(customer, "id")
}

/// The list. Admin sees every customer; a customer, whom the policy lets read the
/// collection, gets the list holding only their own record (as the original did), with
/// the same paging and filters.
async fn list(app: AppState, caller: Caller, uri: &Uri) -> Result<Response, ApiError> {
    let params = ListParams::parse(uri.query())?;
    let user = caller.user_type();
    let fields = app.mappings.get("customer").view(user, "list");
    let mut criteria = search_criteria(&fields, &params, SearchCriteria::new())?;
    let only = match caller.principal {
        Principal::Customer(me) => {
            criteria = criteria.filter("entity_id", me.to_string(), "eq");
            Some(me)
        }
        Principal::Admin => None,
        Principal::Guest => return Err(ApiError::access_denied()),
    };
    let criteria = criteria.page(params.limit, params.page);
    let result = app
        .magento
        .search_customers(&criteria)
        .await
        .map_err(redact)?;
    // Magento repeats the last page past the end; past the end is empty here.
    let items = if params.offset() >= result.total_count {
        Vec::new()
    } else {
        result.items
    };
    let out: Vec<Value> = items
        .into_iter()
        // The ownership filter is Magento's to apply; this makes sure of it.
        .filter(|c| only.is_none() || customer_id(c) == only)
        .map(|c| {
            Value::Object(ResourceMapping::render(
                &fields,
                &json!({ "customer": c }),
                "",
            ))
        })
        .collect();
    Ok(private(ok(caller.format, &Doc::new(Value::Array(out)))))
}

async fn get_one(app: AppState, caller: Caller, id: &str) -> Result<Response, ApiError> {
    let id = parse_id(id)?;
    if !owns(caller.principal, id) {
        return Err(ApiError::not_found());
    }
    let customer = app.magento.customer(id).await.map_err(redact)?;
    if customer_id(&customer) != Some(id) {
        return Err(ApiError::not_found());
    }
    let fields = app
        .mappings
        .get("customer")
        .view(caller.user_type(), "single");
    let record = ResourceMapping::render(&fields, &json!({ "customer": customer }), "");
    Ok(private(ok(caller.format, &Doc::new(Value::Object(record)))))
}

// ---------------------------------------------------------------------------------------
// Writes
// ---------------------------------------------------------------------------------------

/// The password as sent, if it is text. Checked apart from the mapping so that no message
/// ever quotes it.
fn password_of(input: &Map<String, Value>, errors: &mut Vec<String>) -> Option<String> {
    match input.get("password") {
        Some(Value::String(s)) if !s.trim().is_empty() => {
            if s.trim().chars().count() < MIN_PASSWORD {
                errors.push(PASSWORD_TOO_SHORT.to_owned());
            }
            Some(s.clone())
        }
        Some(Value::Array(_) | Value::Object(_) | Value::Bool(_) | Value::Number(_)) => {
            errors.push("Invalid value for \"password\" in request.".to_owned());
            None
        }
        // Missing or empty: the required check says so.
        _ => None,
    }
}

/// The store view a customer of `website_id` is created in: the default store view when
/// it belongs to that website, else the website's first store view.
async fn store_for_website(app: &AppState, website_id: u64) -> Result<Option<u64>, ApiError> {
    let views = stores::views(app).await?;
    let default = app.magento.default_store();
    let mut candidates: Vec<_> = views
        .iter()
        .filter(|v| v.id != 0 && v.website_id == website_id)
        .collect();
    candidates.sort_by_key(|v| (v.code != default, v.id));
    Ok(candidates.first().map(|v| v.id))
}

async fn create(app: AppState, headers: &HeaderMap, body: Body) -> Result<Response, ApiError> {
    let input = decode_record(
        headers,
        body,
        Format::Xml,
        app.config.body_limit,
        ApiError::not_implemented,
    )
    .await?;
    let mapping = app.mappings.get("customer");
    let mut errors = Vec::new();
    for field in mapping.view(UserType::Admin, "required").iter() {
        if input.get(&field.name).is_none_or(is_empty) {
            errors.push(required(&field.name));
        }
    }
    let password = password_of(&input, &mut errors);
    let mut root = json!({ "customer": {} });
    if let Err(mut conversion) =
        ResourceMapping::write(&mapping.view(UserType::Admin, "create"), &input, &mut root)
    {
        errors.append(&mut conversion);
    }
    // Every customer belongs to a store view of their website; Magento would otherwise
    // pick the store of the call's scope, which may be another website's.
    let store_id = if errors.is_empty() {
        let website = root["customer"].get("website_id").and_then(as_i64);
        let store = match website {
            Some(website) if website >= 0 => store_for_website(&app, website as u64).await?,
            _ => None,
        };
        if store.is_none() {
            errors.push(format!(
                "Invalid value \"{}\" for attribute \"website_id\".",
                input.get("website_id").map(scalar_text).unwrap_or_default()
            ));
        }
        store
    } else {
        None
    };
    if !errors.is_empty() {
        errors.dedup();
        return Err(ApiError::validation(errors));
    }
    let (Some(password), Some(store_id)) = (password, store_id) else {
        return Err(ApiError::internal().with_cause("create checks passed without a password"));
    };
    root["customer"]["store_id"] = json!(store_id);
    let saved = app
        .magento
        .create_customer(root["customer"].take(), &password)
        .await
        .map_err(reference_error)?;
    let id = customer_id(&saved)
        .ok_or_else(|| ApiError::bad_gateway().with_cause("created customer has no id"))?;
    Ok(created(&format!("/api/rest/customers/{id}")))
}

async fn update(
    app: AppState,
    caller: Caller,
    id: &str,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let id = parse_id(id)?;
    if !owns(caller.principal, id) {
        return Err(ApiError::not_found());
    }
    let input = decode_record(
        headers,
        body,
        Format::Xml,
        app.config.body_limit,
        ApiError::request_data_invalid,
    )
    .await?;
    let mapping = app.mappings.get("customer");
    let fields = mapping.view(caller.user_type(), "update");
    let mut errors = Vec::new();
    // What must be there on create may not be emptied by an update.
    for field in mapping.view(UserType::Admin, "required").iter() {
        let writable = fields.iter().any(|f| f.name == field.name);
        if writable && input.get(&field.name).is_some_and(is_empty) {
            errors.push(required(&field.name));
        }
    }
    let mut changes = json!({ "customer": {} });
    let written = match ResourceMapping::write(&fields, &input, &mut changes) {
        Ok(written) => written,
        Err(mut conversion) => {
            errors.append(&mut conversion);
            Vec::new()
        }
    };
    if !errors.is_empty() {
        return Err(ApiError::validation(errors));
    }
    // Only fields the caller may not write (website_id, created_in, a password): the
    // original's attribute filter left nothing, which it refused.
    if written.is_empty() {
        return Err(ApiError::request_data_invalid());
    }

    let _turn = lock(&app, id).await;
    let mut stored = app.magento.customer(id).await.map_err(redact)?;
    let Some(customer) = stored.as_object_mut() else {
        return Err(ApiError::bad_gateway().with_cause("customer is not an object"));
    };
    // Without the key Magento keeps every stored address and the default ones; with it,
    // the list sent would replace them.
    customer.remove("addresses");
    // SPEC 4.4: these never change, whatever an operator puts in the update views.
    let fixed: Vec<(String, Value)> = ["id", "website_id", "created_in"]
        .iter()
        .filter_map(|k| customer.get(*k).map(|v| ((*k).to_owned(), v.clone())))
        .collect();
    if let Value::Object(changes) = changes["customer"].take() {
        for (key, value) in changes {
            customer.insert(key, value);
        }
    }
    for (key, value) in fixed {
        customer.insert(key, value);
    }
    customer.insert("id".into(), json!(id));
    app.magento
        .save_customer(id, stored)
        .await
        .map_err(reference_error)?;
    Ok(empty_ok())
}

async fn delete(app: AppState, id: &str) -> Result<Response, ApiError> {
    let id = parse_id(id)?;
    // Before the call: if Magento deletes the customer but its answer is lost, no token
    // of that customer may keep working. After it again, for a login that raced the delete.
    app.auth.revoke_customer(id)?;
    let _turn = lock(&app, id).await;
    app.magento.delete_customer(id).await.map_err(redact)?;
    app.auth.revoke_customer(id)?;
    Ok(empty_ok())
}

// ---------------------------------------------------------------------------------------
// Shared with addresses and orders
// ---------------------------------------------------------------------------------------

/// SPEC 7's message for a missing required value.
pub(super) fn required(name: &str) -> String {
    format!("{name} is a required value.")
}

/// May this principal see the records of customer `customer_id`? Admin may see all; a
/// customer only their own. Everyone else gets the 404 of a record that does not exist.
pub(super) fn owns(principal: Principal, customer_id: u64) -> bool {
    match principal {
        Principal::Admin => true,
        Principal::Customer(me) => me == customer_id,
        Principal::Guest => false,
    }
}

/// Marks a response carrying one person's data: no cache, shared or private, may keep it.
pub(super) fn private(mut response: Response) -> Response {
    response.headers_mut().insert(
        http::header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-store"),
    );
    response
}

/// An upstream failure on a customer, address or order call, as the client's error,
/// with nothing of the customer's data kept for the log.
///
/// Magento's 400 messages are meant for the caller (they may quote what was sent, which
/// is the caller's own data), so they are passed on, and carry no cause: refusals without
/// a cause are not logged. Other failures keep a cause without Magento's parameters or
/// body excerpts.
pub(super) fn redact(error: UpstreamError) -> ApiError {
    match &error {
        UpstreamError::Status { status: 404, .. } => ApiError::not_found(),
        UpstreamError::Status { status: 400, .. } => {
            let mapped = upstream_errors::to_api(error);
            let mut texts: Vec<String> = mapped
                .messages()
                .iter()
                .map(|m| m.text.to_string())
                .collect();
            let closing = texts.last().is_some_and(|t| t == msg::PRE_VALIDATION);
            if closing && texts.len() > 1 {
                texts.pop();
                ApiError::validation(texts)
            } else {
                ApiError::new(
                    mapped.status(),
                    texts.into_iter().next().unwrap_or_default(),
                )
            }
        }
        _ => {
            let summary = match &error {
                // The template only: its parameters are where values are quoted.
                UpstreamError::Status { status, error: m2 } => {
                    format!("upstream answered {status}: {}", m2.message)
                }
                UpstreamError::Protocol(_) => {
                    "upstream sent an unusable answer (details withheld: customer data)".to_owned()
                }
                other => other.to_string(),
            };
            upstream_errors::to_api(error).with_cause(summary)
        }
    }
}

/// [`redact`] for a write whose target is known to exist: a 404 then names something the
/// body refers to (an unknown customer group, say), which is the client's 400.
pub(super) fn reference_error(error: UpstreamError) -> ApiError {
    match &error {
        UpstreamError::Status {
            status: 404,
            error: m2,
        } => {
            let text = m2.text();
            ApiError::bad_request(if text.is_empty() {
                msg::UNKNOWN.to_owned()
            } else {
                text
            })
        }
        _ => redact(error),
    }
}

/// A client value as text, for messages that quote it.
pub(super) fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Serialises the read-modify-write cycles on one customer in this instance: an address
/// save sends the whole customer, so two at once would lose one of them.
pub(super) async fn lock(app: &AppState, customer_id: u64) -> tokio::sync::OwnedMutexGuard<()> {
    let mutex = app
        .create_locks
        .get_with(format!("customer:{customer_id}"), || {
            Arc::new(tokio::sync::Mutex::new(()))
        });
    mutex.lock_owned().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::M2Error;

    fn status(status: u16, body: &str) -> UpstreamError {
        UpstreamError::Status {
            status,
            error: M2Error::parse(body.as_bytes()),
        }
    }

    #[test]
    fn redacted_errors_keep_the_clients_message_and_no_customer_data_for_the_log() {
        let e = redact(status(
            400,
            r#"{"message":"Invalid value of \"%value\" provided for the %fieldName field.","parameters":{"fieldName":"email","value":"jane.doe@example.com"}}"#,
        ));
        assert_eq!(e.status().as_u16(), 400);
        assert_eq!(
            e.first_message(),
            "Invalid value of \"jane.doe@example.com\" provided for the email field."
        );
        assert_eq!(e.cause(), None);
        let e = redact(status(
            400,
            r#"{"message":"One or more input exceptions have occurred.","errors":[{"message":"a"},{"message":"b"}]}"#,
        ));
        let texts: Vec<&str> = e.messages().iter().map(|m| &*m.text).collect();
        assert_eq!(texts, ["a", "b", msg::PRE_VALIDATION]);
        assert_eq!(e.cause(), None);
        let e = redact(status(
            500,
            r#"{"message":"Cannot save %1","parameters":["jane.doe@example.com"]}"#,
        ));
        assert_eq!(e.status().as_u16(), 500);
        assert!(!e.cause().unwrap().contains("jane"), "{:?}", e.cause());
        let e = redact(UpstreamError::Protocol(
            "invalid type: string \"Jane\"".into(),
        ));
        assert!(!e.cause().unwrap().contains("Jane"));
        assert_eq!(
            redact(status(404, "{}")).first_message(),
            "Resource not found."
        );
    }

    #[test]
    fn ownership() {
        assert!(owns(Principal::Admin, 5));
        assert!(owns(Principal::Customer(5), 5));
        assert!(!owns(Principal::Customer(6), 5));
        assert!(!owns(Principal::Guest, 5));
    }
}
