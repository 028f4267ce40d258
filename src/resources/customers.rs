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
//! The privacy rules ([`crate::rules::privacy`]) and the customer lock ([`crate::shared_state::locks`]) are
//! shared with the address and order resources, which have the same needs.
//!
//! A store may replace the whole customer on a save (Magento 2 does), so an update reads the
//! stored customer, changes only the fields sent, and writes it back without an
//! `addresses` key (with one, the list would replace the stored addresses).

use axum::extract::Path;
use axum::response::Response;
use http::Uri;
use serde_json::{Map, Value, json};

use crate::app::AppState;
use crate::auth::{Principal, UserType};
use crate::backend::port::SearchCriteria;
use crate::http::query::ListParams;
use crate::http::{ApiError, Doc, created, empty_ok, ok};
use crate::rules::mapping::ResourceMapping;
use crate::rules::mapping::View;
use crate::rules::mapping::convert::{as_i64, is_empty};
use crate::rules::policy::{Operation, Route};
use crate::rules::write_outcome;

use super::call::{ApiCall, unserved};
use super::customer_save::{Intent, Plan, same_values, save_verified};
use crate::auth::caller::Caller;
use crate::cache::keys::tag;
use crate::records::listing::search_criteria;
use crate::records::lookups::stores;
use crate::resources::{owned_id, parse_id};
use crate::rules::mapping::convert::scalar_text;
use crate::rules::privacy::{private, redact, reference_error};
use crate::shared_state::locks::LockKey;

/// SPEC 8: a customer password has at least this many characters. Magento 2 may demand
/// more (8 and three character classes by default); its refusal is passed on.
pub const MIN_PASSWORD: usize = 7;

const PASSWORD_TOO_SHORT: &str =
    "The password must have at least 7 characters. Leading or trailing spaces will be ignored.";

// ---------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------

/// `/customers`: list and create.
pub async fn collection(call: ApiCall) -> Result<Response, ApiError> {
    match call.authorize(Route::Customers)? {
        Operation::Retrieve => list(call.app, call.caller, &call.uri).await,
        Operation::Create => create(call).await,
        op => Err(unserved(op, "/customers")),
    }
}

/// `/customers/:id`: read, update, delete.
pub async fn entity(Path(id): Path<String>, call: ApiCall) -> Result<Response, ApiError> {
    match call.authorize(Route::Customer)? {
        Operation::Retrieve => get_one(call.app, call.caller, &id).await,
        Operation::Update => update(call, &id).await,
        Operation::Delete => delete(call.app, &id).await,
        Operation::Create => Err(ApiError::not_implemented()),
    }
}

// ---------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------

fn customer_id(customer: &Value) -> Option<u64> {
    crate::records::positive_id(customer, "id")
}

/// The list. Admin sees every customer; a customer, whom the policy lets read the
/// collection, gets the list holding only their own record (as the original did), with
/// the same paging and filters.
async fn list(app: AppState, caller: Caller, uri: &Uri) -> Result<Response, ApiError> {
    let params = ListParams::parse(uri.query())?;
    let user = caller.user_type();
    let fields = app.mappings.get("customer").view(user, View::List);
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
        .backend
        .search_customers(&criteria)
        .await
        .map_err(redact)?;
    // Magento repeats the last page past the end; past the end is empty here.
    let items = if params.offset() >= result.total_count {
        Vec::new()
    } else {
        result.items
    };
    let out: Vec<(Option<u64>, Value)> = items
        .into_iter()
        // The ownership filter is Magento's to apply; this makes sure of it.
        .filter(|c| only.is_none() || customer_id(c) == only)
        .map(|c| {
            let id = customer_id(&c);
            let record = ResourceMapping::render(&fields, &json!({ "customer": c }), "");
            (id, Value::Object(record))
        })
        .collect();
    // The original answered an object keyed by customer id (the 152-request replay; its
    // XML writes the same `<data_item>`s as an array); SPEC.md an array.
    let doc = if crate::context::profile::Profile::current().customer_list_keyed_by_id() {
        Doc::keyed_list(Value::Object(
            out.into_iter()
                .filter_map(|(id, record)| Some((id?.to_string(), record)))
                .collect(),
        ))
    } else {
        Doc::new(Value::Array(out.into_iter().map(|(_, r)| r).collect()))
    };
    Ok(private(ok(caller.format, &doc)))
}

async fn get_one(app: AppState, caller: Caller, id: &str) -> Result<Response, ApiError> {
    let id = owned_id(caller, id)?;
    let customer = app.backend.customer(id).await.map_err(redact)?;
    if customer_id(&customer) != Some(id) {
        return Err(ApiError::not_found());
    }
    let fields = app
        .mappings
        .get("customer")
        .view(caller.user_type(), View::Single);
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
    let default = app.backend.default_store();
    let mut candidates: Vec<_> = views
        .iter()
        .filter(|v| v.id != 0 && v.website_id == website_id)
        .collect();
    candidates.sort_by_key(|v| (v.code != default, v.id));
    Ok(candidates.first().map(|v| v.id))
}

async fn create(mut call: ApiCall) -> Result<Response, ApiError> {
    let input = call.created_record().await?;
    let app = call.app;
    let mapping = app.mappings.get("customer");
    let mut errors = Vec::new();
    let profile = crate::context::profile::Profile::current();
    for field in mapping.view(UserType::Admin, View::Required).iter() {
        if input.get(&field.name).is_none_or(is_empty) {
            errors.push(profile.required_customer_field(&field.name));
        }
    }
    let password = password_of(&input, &mut errors);
    let mut root = json!({ "customer": {} });
    if let Err(mut conversion) = ResourceMapping::write(
        &mapping.view(UserType::Admin, View::Create),
        &input,
        &mut root,
    ) {
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
    // A create that may still land says so: sent again blindly, it could make two customers.
    let saved = app
        .backend
        .create_customer(root["customer"].take(), &password)
        .await
        .map_err(|error| write_outcome::answer(error, reference_error))?;
    let id = customer_id(&saved)
        .ok_or_else(|| ApiError::bad_gateway().with_cause("created customer has no id"))?;
    Ok(created(&format!("/api/rest/customers/{id}")))
}

async fn update(mut call: ApiCall, id: &str) -> Result<Response, ApiError> {
    let id = owned_id(call.caller, id)?;
    let input = call.update_record().await?;
    let ApiCall { app, caller, .. } = call;
    let mapping = app.mappings.get("customer");
    let fields = mapping.view(caller.user_type(), View::Update);
    let mut errors = Vec::new();
    // What must be there on create may not be emptied by an update.
    for field in mapping.view(UserType::Admin, View::Required).iter() {
        let writable = fields.iter().any(|f| f.name == field.name);
        if writable && input.get(&field.name).is_some_and(is_empty) {
            errors.push(required(&field.name));
        }
    }
    let mut changes = json!({ "customer": {} });
    // Only fields the caller may not write (website_id, created_in, a password): the
    // original's attribute filter left nothing, which it refused.
    super::written_update(&fields, &input, &mut changes, errors)?;

    let Value::Object(changes) = changes["customer"].take() else {
        return Err(ApiError::request_data_invalid());
    };
    let saved = save_verified(&app, id, &mut FieldsUpdate { id, changes }).await;
    // The group decides the customer's prices: read it again, whatever happened.
    app.cache.invalidate(&[tag::customer_group(id)]);
    saved?;
    Ok(empty_ok())
}

async fn delete(app: AppState, id: &str) -> Result<Response, ApiError> {
    let id = parse_id(id)?;
    // Nothing takes effect before every store the delete needs has said yes: a request
    // refused here (Redis down: the shared lock; the OAuth store down: the revocation's
    // keeping) changes nothing, now or later (issue 32).
    let _turn = app.locks.lock(LockKey::Customer(id)).await?;
    app.oauth.refuse_while_down()?;
    let deleted = app.backend.delete_customer(id).await;
    // The group decides prices: forget it, whatever happened (held off when the delete may
    // still land: `write_outcome`).
    write_outcome::touched(&app.cache, &deleted, &[tag::customer_group(id)]);
    // Deleted, or perhaps deleted (the answer was lost): the customer's tokens stop working
    // everywhere. A delete Magento refused revokes nothing.
    let revoke = match &deleted {
        Ok(()) => true,
        Err(error) => write_outcome::is_unknown(error),
    };
    if revoke {
        app.auth.revoke_customer(id).await;
    }
    deleted.map_err(|error| write_outcome::answer(error, redact))?;
    Ok(empty_ok())
}

/// A customer update: the fields sent, on the stored customer, its addresses left alone.
struct FieldsUpdate {
    id: u64,
    changes: Map<String, Value>,
}

impl Intent for FieldsUpdate {
    type Output = ();

    fn plan(&mut self, stored: &Value, _previous: Option<&()>) -> Result<Plan<()>, ApiError> {
        let mut stored = stored.clone();
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
        for (key, value) in &self.changes {
            customer.insert(key.clone(), value.clone());
        }
        for (key, value) in fixed {
            customer.insert(key, value);
        }
        customer.insert("id".into(), json!(self.id));
        Ok(Plan::Save(stored))
    }

    fn verify(&mut self, saved: &Value, now: &Value) -> Result<(), Option<()>> {
        // Every field written reads back as Magento stored it for us (a password is not
        // in the record, and nested values are Magento's to reshape).
        let written = self
            .changes
            .iter()
            .filter(|(_, v)| !v.is_object() && !v.is_array())
            .map(|(k, _)| k.as_str());
        if same_values(saved, now, written) {
            Ok(())
        } else {
            Err(None)
        }
    }
}

// ---------------------------------------------------------------------------------------
// Shared with addresses and orders
// ---------------------------------------------------------------------------------------

/// SPEC 7's message for a missing required value.
pub(super) fn required(name: &str) -> String {
    format!("{name} is a required value.")
}
