//! Stock items (SPEC 2.1 and 4.1), Admin only: the list, one item, the partial update of
//! one item, and the batch update with its multi-status answer. DELETE is refused (405, by
//! the policy table): a stock item goes with its product.
//!
//! `:id` is Magento's stock item id, which is not the product id, and Magento 2 addresses
//! stock by SKU only. The item-to-product half of the way there is an index kept in the
//! cache: the pages of Magento's low-stock report over every item (the one call that
//! lists item ids), reduced to `(item, product)` pairs, and one entry per item resolved.
//! The product-to-SKU half is the products' own index (`catalog::product_index`). Nothing here
//! invalidates the index on a stock write (ids do not move); creating or deleting a
//! product through the gateway does.
//!
//! Stock reads themselves are never served from the cache: administrators correct stock
//! from what they read, and a number a minute old is a wrong correction. Every stock write
//! invalidates the product views that show stock (`stock_data`, `is_in_stock`,
//! `is_saleable`) and the product lists.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::Path;
use axum::response::Response;
use futures_util::StreamExt;
use http::HeaderMap;
use indexmap::IndexMap;
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::call::{ApiCall, unserved};
use crate::app::AppState;
use crate::auth::UserType;
use crate::backend::port::SearchResult;
use crate::http::body::decode;
use crate::http::query::{Condition, ListParams, SortDir};
use crate::http::{ApiError, Doc, Format, empty_ok, msg, multi_status, ok};
use crate::rules::mapping::ResourceMapping;
use crate::rules::mapping::View;
use crate::rules::mapping::convert::{as_f64, as_i64, is_empty};
use crate::rules::policy::{Operation, Route};

use crate::cache::keys::tag;

use crate::auth::caller::Caller;
use crate::records::catalog::product_index;
use crate::records::catalog::stock_index::{id_field, product_of_item};
use crate::records::json;
use crate::resources::parse_id;
use crate::rules::backend_errors;
use crate::rules::write_outcome;

/// Items in one batch update. Each is one upstream write; more would not fit the request
/// deadline against a slow store.
pub const MAX_BATCH: usize = 100;
/// Upstream writes of one batch in flight at once.
const BATCH_CONCURRENCY: usize = 8;

const INVALID_ITEM_ID: &str = "Invalid value for \"item_id\" in request.";
const ITEM_DATA_INVALID: &str = "Resource data invalid.";

fn empty_value(field: &str) -> String {
    format!("Empty value for \"{field}\" in request.")
}

fn missing(field: &str) -> String {
    format!("Missing \"{field}\" in request.")
}

// ---------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------

/// `/stockitems`: the list and the batch update.
pub async fn collection(call: ApiCall) -> Result<Response, ApiError> {
    match call.authorize(Route::StockItems)? {
        Operation::Retrieve => list(call.app, call.caller, call.uri.query()).await,
        Operation::Update => batch(call.app, call.caller, &call.headers, call.body).await,
        op => Err(unserved(op, "/stockitems")),
    }
}

/// `/stockitems/:id`: one item and its update.
pub async fn entity(Path(id): Path<String>, call: ApiCall) -> Result<Response, ApiError> {
    match call.authorize(Route::StockItem)? {
        Operation::Retrieve => get_one(call.app, call.caller, &id).await,
        Operation::Update => update(call, &id).await,
        op => Err(unserved(op, "/stockitems/:id")),
    }
}

// ---------------------------------------------------------------------------------------
// The item index
// ---------------------------------------------------------------------------------------

/// Item id to product id and SKU.
async fn locate(app: &AppState, item_id: u64) -> Result<(u64, Arc<str>), ApiError> {
    let product_id = product_of_item(app, item_id).await?;
    let sku = product_index::sku_of(app, product_id).await?;
    Ok((product_id, sku))
}

/// The record Magento gave for a SKU must be the item that was asked for. An index entry
/// that disagrees (it cannot, short of ids being reused) is dropped.
fn check_identity(
    app: &AppState,
    record: &Value,
    item_id: u64,
    product_id: u64,
) -> Result<(), ApiError> {
    let found = id_field(record, "item_id");
    if found == Some(item_id) {
        return Ok(());
    }
    app.cache.invalidate(&[tag::stock_index_of(product_id)]);
    Err(ApiError::not_found().with_cause(format!(
        "the stock item of product {product_id} is {found:?}, not {item_id}"
    )))
}

/// What a stock write changes in the cache: every view of the product that shows stock;
/// held off for a while when `unknown` (Magento may still apply the write:
/// `write_outcome`).
fn invalidate_product(app: &AppState, product_id: u64, sku: &str, unknown: bool) {
    let tags = [
        tag::product(product_id),
        tag::sku(sku),
        tag::LISTS.to_owned(),
    ];
    if unknown {
        app.cache.hold_off(&tags, crate::cache::hold_off::WINDOW);
    } else {
        app.cache.invalidate(&tags);
    }
}

// ---------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------

/// The low-stock report takes one filter, an upper bound on the quantity, and sorts by
/// item id; the list's `filter` and `order` can ask for that and nothing else.
fn qty_bound(params: &ListParams) -> Result<Option<String>, ApiError> {
    if let Some(order) = &params.order
        && !(order == "item_id" && params.dir == SortDir::Asc)
    {
        return Err(ApiError::bad_request(msg::ORDERING));
    }
    let mut bound: Option<f64> = None;
    for filter in &params.filters {
        let value = match (filter.attribute.as_str(), &filter.condition) {
            ("qty", Condition::Lteq(value))
            | (
                "qty",
                Condition::Range {
                    from: None,
                    to: Some(value),
                },
            ) => value,
            _ => return Err(ApiError::bad_request(msg::FILTERING)),
        };
        let value = value
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| ApiError::bad_request(msg::FILTERING))?;
        bound = Some(bound.map_or(value, |b| b.min(value)));
    }
    Ok(bound.map(|b| b.to_string()))
}

async fn list(app: AppState, caller: Caller, query: Option<&str>) -> Result<Response, ApiError> {
    let params = ListParams::parse(query)?;
    let bound = qty_bound(&params)?;
    let result: SearchResult<Value> = app
        .backend
        .stock_items_page(bound.as_deref(), params.page, params.limit)
        .await
        .and_then(|page| page.read())
        .map_err(backend_errors::to_api)?;
    // Past the end is empty, never the last page again (clients page until empty).
    let items = if params.offset() >= result.total_count {
        Vec::new()
    } else {
        result.items
    };
    // The original listed the full record.
    let view = if crate::context::profile::Profile::current().stock_list_is_full_record() {
        View::Single
    } else {
        View::List
    };
    let fields = app.mappings.get("stock_item").view(UserType::Admin, view);
    let out: Vec<Value> = items
        .iter()
        .map(|item| Value::Object(ResourceMapping::render(&fields, item, "")))
        .collect();
    Ok(ok(caller.format, &Doc::new(Value::Array(out))))
}

async fn get_one(app: AppState, caller: Caller, id: &str) -> Result<Response, ApiError> {
    let item_id = parse_id(id)?;
    let (product_id, sku) = locate(&app, item_id).await?;
    let bytes = app
        .backend
        .stock_item(&sku)
        .await
        .map_err(backend_errors::to_api)?;
    let record = json(&bytes)?;
    check_identity(&app, &record, item_id, product_id)?;
    let fields = app
        .mappings
        .get("stock_item")
        .view(UserType::Admin, View::Single);
    let out = ResourceMapping::render(&fields, &record, "");
    Ok(ok(caller.format, &Doc::new(Value::Object(out))))
}

// ---------------------------------------------------------------------------------------
// Input checks
// ---------------------------------------------------------------------------------------

/// How a stock field is checked. The rules and messages are the original's field
/// validators (`<field>: <message>`), with two repairs: quantities may be decimal (Magento
/// 2 sells decimal quantities), and the backorders message names its own field.
#[derive(Debug, Clone, Copy)]
enum Check {
    /// A quantity, negative allowed (backorders).
    Qty,
    /// A quantity of at least 0.
    NonNegative,
    /// 0 or 1.
    Flag,
    /// 0, 1 or 2.
    Backorders,
    /// Read-only, but an empty value is still refused (SPEC 4.1: "an empty product_id").
    ReadOnlyId,
    /// Read-only, ignored.
    ReadOnly,
}

/// The largest magnitude `cataloginventory_stock_item` stores (decimal 12,4).
const QTY_LIMIT: f64 = 99_999_999.999_9;

const FIELDS: &[(&str, Check)] = &[
    ("product_id", Check::ReadOnlyId),
    ("stock_id", Check::ReadOnlyId),
    ("qty", Check::Qty),
    ("min_qty", Check::NonNegative),
    ("use_config_min_qty", Check::Flag),
    ("is_qty_decimal", Check::Flag),
    ("backorders", Check::Backorders),
    ("use_config_backorders", Check::Flag),
    ("min_sale_qty", Check::NonNegative),
    ("use_config_min_sale_qty", Check::Flag),
    ("max_sale_qty", Check::NonNegative),
    ("use_config_max_sale_qty", Check::Flag),
    ("is_in_stock", Check::Flag),
    ("low_stock_date", Check::ReadOnly),
    ("notify_stock_qty", Check::Qty),
    ("use_config_notify_stock_qty", Check::Flag),
    ("manage_stock", Check::Flag),
    ("use_config_manage_stock", Check::Flag),
    ("stock_status_changed_auto", Check::Flag),
    ("use_config_qty_increments", Check::Flag),
    ("qty_increments", Check::NonNegative),
    ("use_config_enable_qty_inc", Check::Flag),
    ("enable_qty_increments", Check::Flag),
    ("is_decimal_divided", Check::Flag),
];

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.trim().to_owned(),
        other => other.to_string(),
    }
}

/// A number sent as a JSON number or a numeric string (XML leaves are strings).
fn number_of(value: &Value) -> Option<f64> {
    match value {
        Value::Number(_) | Value::String(_) => as_f64(value),
        _ => None,
    }
}

/// One of `allowed`, sent as a number, a numeric string or (for flags) a JSON boolean.
fn choice_of(value: &Value, allowed: &[i64]) -> bool {
    match value {
        Value::Number(_) | Value::String(_) | Value::Bool(_) => {
            as_i64(value).is_some_and(|v| allowed.contains(&v))
        }
        _ => false,
    }
}

/// The messages for the stock fields of `input`, in a stable order. Fields that are not
/// stock fields are ignored, as the original's attribute filter did.
fn check_fields(input: &Map<String, Value>, errors: &mut Vec<String>) {
    for &(field, check) in FIELDS {
        let Some(value) = input.get(field) else {
            continue;
        };
        if matches!(check, Check::ReadOnly) {
            continue;
        }
        if is_empty(value) {
            errors.push(empty_value(field));
            continue;
        }
        let range = |min: f64| match number_of(value) {
            None => Some(format!(
                "{field}: Please enter a valid number in \"{field}\" field"
            )),
            Some(v) if v < min || v > QTY_LIMIT => Some(format!(
                "{field}: '{}' is not between '{}' and '{QTY_LIMIT}', inclusively",
                text_of(value),
                if min < 0.0 { "-99999999.9999" } else { "0" }
            )),
            Some(_) => None,
        };
        let problem = match check {
            Check::Qty => range(-QTY_LIMIT),
            Check::NonNegative => range(0.0),
            Check::Flag => (!choice_of(value, &[0, 1]))
                .then(|| format!("{field}: The \"{field}\" field must be set to 0 or 1.")),
            Check::Backorders => (!choice_of(value, &[0, 1, 2]))
                .then(|| format!("{field}: The \"{field}\" field must be set to 0, 1, or 2.")),
            Check::ReadOnlyId | Check::ReadOnly => None,
        };
        errors.extend(problem);
    }
}

/// Checks a stock write and converts its writable fields into Magento's `stockItem`.
/// `Ok(None)` when it holds nothing to write; `Err` with every message otherwise.
fn changes_of(app: &AppState, input: &Map<String, Value>) -> Result<Option<Value>, Vec<String>> {
    let mut errors = Vec::new();
    check_fields(input, &mut errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    let mapping = app.mappings.get("stock_item");
    let mut changes = json!({});
    let written = ResourceMapping::write(
        &mapping.view(UserType::Admin, View::Write),
        input,
        &mut changes,
    )?;
    Ok((!written.is_empty()).then_some(changes))
}

/// A positive integer id sent as a number or a numeric string.
fn id_value(value: &Value) -> Option<u64> {
    match value {
        Value::Number(_) | Value::String(_) => {
            as_i64(value).filter(|&id| id > 0).map(|id| id as u64)
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------
// Writes
// ---------------------------------------------------------------------------------------

async fn update(mut call: ApiCall, id: &str) -> Result<Response, ApiError> {
    let item_id = parse_id(id)?;
    // SPEC 4.1 asks for a Content-Type; without one the operation's default (XML) applies.
    let input = call.update_record().await?;
    let app = call.app;
    let mut errors = Vec::new();
    // The item is the path's; a body that names another one is a mistake, not a move.
    match input.get("item_id") {
        Some(value) if is_empty(value) => errors.push(empty_value("item_id")),
        Some(value) if id_value(value) != Some(item_id) => errors.push(INVALID_ITEM_ID.into()),
        _ => {}
    }
    let changes = match changes_of(&app, &input) {
        Ok(changes) => changes,
        Err(mut messages) => {
            errors.append(&mut messages);
            None
        }
    };
    if !errors.is_empty() {
        return Err(ApiError::validation(errors));
    }
    let Some(changes) = changes else {
        return Err(ApiError::request_data_invalid());
    };
    let (product_id, sku) = locate(&app, item_id).await?;
    let result = app.backend.update_stock_item(&sku, item_id, changes).await;
    // Whatever happened, what the cache shows of this product's stock is suspect now.
    let unknown = matches!(&result, Err(e) if write_outcome::is_unknown(e));
    invalidate_product(&app, product_id, &sku, unknown);
    result.map_err(|e| write_outcome::answer(e, backend_errors::to_api))?;
    Ok(empty_ok())
}

/// One entry of the multi-status answer.
#[derive(Debug, Clone)]
struct Outcome {
    item_id: Value,
    message: String,
    code: u16,
}

impl Outcome {
    /// An item that does not exist: SPEC.md's code 404 with `Resource not found.`, or the
    /// original's code 400 `StockItem #<id> not found.`.
    fn unknown(item_id: u64) -> Outcome {
        let profile = crate::context::profile::Profile::current();
        let message = match profile.unknown_stock_item_code() {
            404 => msg::NOT_FOUND.to_owned(),
            _ => format!("StockItem #{item_id} not found."),
        };
        Outcome {
            item_id: json!(item_id),
            message,
            code: profile.unknown_stock_item_code(),
        }
    }

    fn updated(item_id: u64) -> Outcome {
        let item_id = if crate::context::profile::Profile::current().stock_success_id_is_text() {
            json!(item_id.to_string())
        } else {
            json!(item_id)
        };
        Outcome {
            item_id,
            message: msg::UPDATED.to_owned(),
            code: 200,
        }
    }

    /// The entries of a failure: one per message, without the closing pre-validation
    /// message a whole-request error carries.
    fn failed(item_id: &Value, error: &ApiError) -> Vec<Outcome> {
        let entries: Vec<Outcome> = error
            .messages()
            .iter()
            .filter(|m| m.text != msg::PRE_VALIDATION)
            .map(|m| Outcome {
                item_id: item_id.clone(),
                message: m.text.to_string(),
                code: m.code,
            })
            .collect();
        if entries.is_empty() {
            vec![Outcome {
                item_id: item_id.clone(),
                message: error.first_message().to_owned(),
                code: error.status().as_u16(),
            }]
        } else {
            entries
        }
    }

    fn invalid(item_id: &Value, messages: Vec<String>) -> Vec<Outcome> {
        messages
            .into_iter()
            .map(|message| Outcome {
                item_id: item_id.clone(),
                message,
                code: 400,
            })
            .collect()
    }

    /// The original wrote the extra parameter (`item_id`) first, then message and code.
    fn to_json(&self) -> Value {
        json!({ "item_id": self.item_id, "message": self.message, "code": self.code })
    }
}

/// A batch entry that passed the checks.
#[derive(Debug)]
struct Plan {
    index: usize,
    item_id: u64,
    changes: Option<Value>,
}

/// Checks one batch entry.
fn plan(app: &AppState, index: usize, entry: Value) -> Result<Plan, Vec<Outcome>> {
    let Value::Object(input) = entry else {
        return Err(Outcome::invalid(
            &Value::Null,
            vec![ITEM_DATA_INVALID.into()],
        ));
    };
    // The id as every entry shows it (a number), or what the client sent when it is not
    // one, so the client can still match the entry.
    let echo = match input.get("item_id") {
        Some(value) if id_value(value).is_some() => json!(id_value(value)),
        Some(value @ (Value::String(_) | Value::Number(_))) => value.clone(),
        _ => Value::Null,
    };
    let mut errors = Vec::new();
    let item_id = match input.get("item_id") {
        None => {
            errors.push(missing("item_id"));
            None
        }
        Some(value) if is_empty(value) => {
            errors.push(empty_value("item_id"));
            None
        }
        Some(value) => {
            let id = id_value(value);
            if id.is_none() {
                errors.push(INVALID_ITEM_ID.into());
            }
            id
        }
    };
    let changes = match changes_of(app, &input) {
        Ok(changes) => changes,
        Err(mut messages) => {
            errors.append(&mut messages);
            None
        }
    };
    match item_id {
        Some(item_id) if errors.is_empty() => Ok(Plan {
            index,
            item_id,
            changes,
        }),
        _ => Err(Outcome::invalid(&echo, errors)),
    }
}

/// Runs `work` unless the batch's time is up, so the 207 goes out before the request
/// deadline however slow the store is; what did not finish says so.
async fn within<T>(
    deadline: Instant,
    work: impl Future<Output = Result<T, ApiError>>,
) -> Result<T, ApiError> {
    tokio::time::timeout_at(deadline, work)
        .await
        .unwrap_or_else(|_| Err(ApiError::gateway_timeout().with_cause("batch time budget spent")))
}

/// PUT /stockitems: every entry is checked, located and written on its own; one bad entry
/// never stops the others. Entries for one item are applied in their order; different
/// items are written concurrently, a few at a time.
async fn batch(
    app: AppState,
    caller: Caller,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    // The request deadline (app.rs) is the upstream timeout plus a margin; the batch stops
    // starting work at the timeout and answers within the margin.
    let deadline = Instant::now() + app.config.upstream_timeout;
    let entries = match decode(headers, body, Format::Xml, app.config.body_limit).await? {
        Value::Array(entries) => entries,
        _ => return Err(ApiError::request_data_invalid()),
    };
    if entries.len() > MAX_BATCH {
        return Err(ApiError::bad_request(format!(
            "At most {MAX_BATCH} stock items can be updated in one request."
        )));
    }
    let mut outcomes: Vec<Vec<Outcome>> = vec![Vec::new(); entries.len()];
    // Entries grouped by item, in the order items first appear.
    let mut groups: IndexMap<u64, Vec<Plan>> = IndexMap::new();
    for (index, entry) in entries.into_iter().enumerate() {
        match plan(&app, index, entry) {
            Ok(plan) => groups.entry(plan.item_id).or_default().push(plan),
            Err(failed) => outcomes[index] = failed,
        }
    }

    // Items to products, through the index (pages are shared, so this is cheap after the
    // first), then every product's SKU in one search.
    let located: HashMap<u64, Result<u64, ApiError>> =
        futures_util::stream::iter(groups.keys().copied())
            .map(|item_id| {
                let app = app.clone();
                async move {
                    let found = within(deadline, product_of_item(&app, item_id)).await;
                    (item_id, found)
                }
            })
            .buffer_unordered(BATCH_CONCURRENCY)
            .collect()
            .await;
    let mut product_ids: Vec<u64> = located
        .values()
        .filter_map(|r| r.as_ref().ok())
        .copied()
        .collect();
    product_ids.sort_unstable();
    product_ids.dedup();
    let skus = within(deadline, product_index::skus_of_many(&app, &product_ids)).await;

    let written: Vec<(usize, Vec<Outcome>)> = futures_util::stream::iter(groups)
        .map(|(item_id, plans)| {
            let app = app.clone();
            let target = match located.get(&item_id) {
                Some(Ok(product_id)) => match &skus {
                    Ok(skus) => skus
                        .get(product_id)
                        .cloned()
                        .map(|sku| (*product_id, sku))
                        .ok_or_else(ApiError::not_found),
                    Err(e) => Err(e.clone()),
                },
                Some(Err(e)) => Err(e.clone()),
                None => Err(ApiError::internal().with_cause("item was not located")),
            };
            async move {
                let mut done = Vec::new();
                for plan in plans {
                    let echo = json!(item_id);
                    let outcome = match (&target, plan.changes) {
                        (Err(e), _) if e.status() == http::StatusCode::NOT_FOUND => {
                            vec![Outcome::unknown(item_id)]
                        }
                        (Err(e), _) => Outcome::failed(&echo, e),
                        (Ok(_), None) => vec![Outcome::updated(item_id)],
                        (Ok((product_id, sku)), Some(changes)) => {
                            let result = within(deadline, async {
                                app.backend
                                    .update_stock_item(sku, item_id, changes)
                                    .await
                                    .map_err(backend_errors::to_api)
                            })
                            .await;
                            let unknown = matches!(
                                &result,
                                Err(e) if write_outcome::translated_is_unknown(e)
                            );
                            invalidate_product(&app, *product_id, sku, unknown);
                            match result {
                                Ok(()) => vec![Outcome::updated(item_id)],
                                Err(e) => {
                                    Outcome::failed(&echo, &write_outcome::answer_translated(e))
                                }
                            }
                        }
                    };
                    done.push((plan.index, outcome));
                }
                done
            }
        })
        .buffer_unordered(BATCH_CONCURRENCY)
        .flat_map(futures_util::stream::iter)
        .collect()
        .await;
    for (index, outcome) in written {
        outcomes[index] = outcome;
    }

    let mut success = Vec::new();
    let mut error = Vec::new();
    for outcome in outcomes.iter().flatten() {
        if outcome.code == 200 {
            success.push(outcome.to_json());
        } else {
            error.push(outcome.to_json());
        }
    }
    // The original wrote a group only when it had entries.
    let mut groups = Map::new();
    let all = crate::context::profile::Profile::current().empty_groups_shown();
    for (name, entries) in [("success", success), ("error", error)] {
        if all || !entries.is_empty() {
            groups.insert(name.to_owned(), Value::Array(entries));
        }
    }
    Ok(multi_status(
        caller.format,
        &Doc::new(Value::Object(groups)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(input: Value) -> Vec<String> {
        let mut errors = Vec::new();
        check_fields(input.as_object().unwrap(), &mut errors);
        errors
    }

    #[test]
    fn field_checks_follow_the_original_validators() {
        assert!(
            messages(json!({"qty": "5.5", "is_in_stock": "1", "backorders": 2, "x": "y"}))
                .is_empty()
        );
        assert!(
            messages(json!({"qty": -3, "manage_stock": true, "low_stock_date": ""})).is_empty()
        );
        assert_eq!(
            messages(json!({"qty": "", "product_id": "", "stock_id": " "})),
            [
                "Empty value for \"product_id\" in request.",
                "Empty value for \"stock_id\" in request.",
                "Empty value for \"qty\" in request."
            ]
        );
        assert_eq!(
            messages(json!({"qty": "lots", "is_in_stock": 2, "backorders": "3", "min_qty": -1})),
            [
                "qty: Please enter a valid number in \"qty\" field",
                "min_qty: '-1' is not between '0' and '99999999.9999', inclusively",
                "backorders: The \"backorders\" field must be set to 0, 1, or 2.",
                "is_in_stock: The \"is_in_stock\" field must be set to 0 or 1."
            ]
        );
        assert_eq!(
            messages(json!({"qty": "100000000"})),
            ["qty: '100000000' is not between '-99999999.9999' and '99999999.9999', inclusively"]
        );
        assert_eq!(messages(json!({"manage_stock": [1]})).len(), 1);
    }

    #[test]
    fn item_ids_are_positive_integers() {
        assert_eq!(id_value(&json!("15")), Some(15));
        assert_eq!(id_value(&json!(15)), Some(15));
        for bad in [
            json!("x"),
            json!(0),
            json!(-1),
            json!(true),
            json!([15]),
            json!("1.5"),
        ] {
            assert_eq!(id_value(&bad), None, "{bad}");
        }
    }

    #[test]
    fn the_list_can_only_bound_the_quantity() {
        let params = |q: &str| ListParams::parse(Some(q)).unwrap();
        assert_eq!(qty_bound(&ListParams::default()).unwrap(), None);
        assert_eq!(
            qty_bound(&params("filter[0][attribute]=qty&filter[0][lteq]=10")).unwrap(),
            Some("10".to_owned())
        );
        assert_eq!(
            qty_bound(&params("filter[0][attribute]=qty&filter[0][to]=2.5")).unwrap(),
            Some("2.5".to_owned())
        );
        assert!(qty_bound(&params("order=item_id&dir=asc")).is_ok());
        assert_eq!(
            qty_bound(&params("order=qty")).unwrap_err().first_message(),
            msg::ORDERING
        );
        assert_eq!(
            qty_bound(&params("filter[0][attribute]=qty&filter[0][gt]=1"))
                .unwrap_err()
                .first_message(),
            msg::FILTERING
        );
    }
}
