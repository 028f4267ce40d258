//! Customer addresses (SPEC 2.5, 4.5): a customer's list and create, and one address's
//! read, update and delete, for Admin and for the customer who owns them.
//!
//! Two kinds of store. One writes addresses only by saving the whole customer (Magento 2:
//! any stored address left out of the saved list is deleted): a write reads the customer,
//! has the back end change one entry of its list (every other goes back as it came), and
//! saves, all while holding the customer's lock, verified by reading the customer back
//! (`customer_save`); everything the spec can refuse is checked before that cycle starts,
//! with SPEC 7's messages, the country and region against the store's directory. The other
//! adds, changes and deletes one address at a time and checks them itself (OpenMage:
//! `address_calls`). The back end says which it is (`People::address_writes`), and what an
//! address record looks like (`People::addresses_of`, `default_addresses`,
//! `AddressList::set_region`).
//!
//! A customer's address is found through the customer's own record, so a customer asking
//! for someone else's address gets the 404 of an address that does not exist, and nothing
//! about the other customer is even fetched.

use std::collections::HashSet;

use axum::extract::Path;
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::call::{ApiCall, unserved};
use crate::app::AppState;
use crate::auth::{Principal, UserType};

use crate::backend::port::{
    AddressEdit, AddressList, AddressWrites, Backend, Country, RegionChoice,
};
use crate::http::query::{ListParams, SortDir};
use crate::http::{ApiError, Doc, created, empty_ok, msg, ok};
use crate::rules::mapping::ResourceMapping;
use crate::rules::mapping::View;
use crate::rules::mapping::convert::{as_i64, is_empty};
use crate::rules::policy::{Operation, Route};

use super::address_fields::{fold_street, plain_fields, street_lines};
use super::customer_save::{ATTEMPTS, Intent, Plan, conflict, same_values, save_verified};
use crate::auth::caller::Caller;
use crate::records::listing::in_memory::{compare, matches};
use crate::records::lookups::directory;
use crate::resources::{owned_id, parse_id};
use crate::rules::mapping::convert::scalar_text;
use crate::rules::privacy::{private, redact};
use crate::shared_state::locks::LockKey;

/// SPEC 7's country and region messages.
pub mod messages {
    pub const COUNTRY_TYPE: &str = "Invalid country identifier type";
    pub const COUNTRY_MISSING: &str = "Country does not exist";
    pub const COUNTRY_REQUIRED: &str = "Country is required";
    pub const COUNTRY_LENGTH: &str = "Country is not between '2' and '3' inclusively.";
    pub const REGION_TYPE: &str = "Invalid State/Province type";
    pub const REGION_REQUIRED: &str = "State/Province is required";
    pub const REGION_INVALID: &str = "State/Province is invalid";
    pub const REGION_MISSING: &str = "State/Province does not exist";
    pub const DEFAULT_DELETE: &str =
        "Address is default for customer so is not allowed to be deleted";
}
use messages as m;

// ---------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------

/// `/customers/:customer_id/addresses`: list and create.
pub async fn collection(Path(customer): Path<String>, call: ApiCall) -> Result<Response, ApiError> {
    match call.authorize(Route::CustomerAddresses)? {
        Operation::Retrieve => list(call, &customer).await,
        Operation::Create => create(call, &customer).await,
        op => Err(unserved(op, "/customers/:id/addresses")),
    }
}

/// `/customers/addresses/:address_id`: read, update, delete.
pub async fn entity(Path(id): Path<String>, call: ApiCall) -> Result<Response, ApiError> {
    match call.authorize(Route::CustomerAddress)? {
        Operation::Retrieve => get_one(call.app, call.caller, &id).await,
        Operation::Update => update(call, &id).await,
        Operation::Delete => delete(call.app, call.caller, &id).await,
        Operation::Create => Err(ApiError::not_implemented()),
    }
}

// ---------------------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------------------

fn id_of(value: &Value) -> Option<u64> {
    crate::records::positive_id(value, "id")
}

/// One address in the caller's view.
fn render(fields: &[crate::rules::mapping::Field], address: &Value) -> Map<String, Value> {
    let mut address = address.clone();
    let street = fold_street(&street_lines(address.get("street")));
    address["street"] = json!(street);
    ResourceMapping::render(fields, &json!({ "address": address }), "")
}

/// Finds address `id` and its customer, as the caller may see them. A customer looks only
/// in their own record; Admin asks Magento whose address it is.
async fn locate(app: &AppState, principal: Principal, id: u64) -> Result<(Value, Value), ApiError> {
    if principal == Principal::Admin {
        let address = app.backend.address(id).await.map_err(redact)?;
        return match address
            .get("customer_id")
            .and_then(as_i64)
            .filter(|&c| c > 0)
        {
            // The defaults live on the customer record (Magento 2).
            Some(owner) => find_in(app, owner as u64, id).await,
            // A store whose address names no customer carries its own default flags
            // (OpenMage): the record is the whole answer for Admin.
            None => Ok((address, Value::Null)),
        };
    }
    let owner = owner_of(app, principal, id).await?;
    find_in(app, owner, id).await
}

/// Address `id` in the record of customer `owner`, with that record.
async fn find_in(app: &AppState, owner: u64, id: u64) -> Result<(Value, Value), ApiError> {
    let customer = app.backend.customer(owner).await.map_err(redact)?;
    let address = app
        .backend
        .addresses_of(&customer)
        .into_iter()
        .find(|a| id_of(a) == Some(id))
        .ok_or_else(ApiError::not_found)?;
    Ok((address, customer))
}

/// The id of the customer whose address `id` is, as far as this caller may know.
async fn owner_of(app: &AppState, principal: Principal, id: u64) -> Result<u64, ApiError> {
    match principal {
        Principal::Customer(me) => Ok(me),
        Principal::Admin => {
            let address = app.backend.address(id).await.map_err(redact)?;
            address
                .get("customer_id")
                .and_then(as_i64)
                .filter(|&c| c > 0)
                .map(|c| c as u64)
                .ok_or_else(ApiError::not_found)
        }
        Principal::Guest => Err(ApiError::not_found()),
    }
}

// ---------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------

async fn list(call: ApiCall, customer: &str) -> Result<Response, ApiError> {
    let customer_id = owned_id(call.caller, customer)?;
    let params = ListParams::parse(call.query())?;
    let ApiCall { app, caller, .. } = call;
    let fields = app
        .mappings
        .get("address")
        .view(caller.user_type(), View::List);
    let known = |name: &str| fields.iter().any(|f| f.name == name);
    if params.order.as_deref().is_some_and(|o| !known(o)) {
        return Err(ApiError::bad_request(msg::ORDERING));
    }
    if params.filters.iter().any(|f| !known(&f.attribute)) {
        return Err(ApiError::bad_request(msg::FILTERING));
    }
    let customer = app.backend.customer(customer_id).await.map_err(redact)?;
    let mut records: Vec<Map<String, Value>> = app
        .backend
        .addresses_of(&customer)
        .iter()
        .map(|a| render(&fields, a))
        .filter(|r| params.filters.iter().all(|f| matches(r, f)))
        .collect();
    if let Some(order) = &params.order {
        records.sort_by(|a, b| {
            let ordering = compare(a.get(order), b.get(order));
            if params.dir == SortDir::Asc {
                ordering
            } else {
                ordering.reverse()
            }
        });
    }
    let page: Vec<Value> = records
        .into_iter()
        .skip(params.offset() as usize)
        .take(params.limit as usize)
        .map(Value::Object)
        .collect();
    Ok(private(ok(caller.format, &Doc::new(Value::Array(page)))))
}

async fn get_one(app: AppState, caller: Caller, id: &str) -> Result<Response, ApiError> {
    let id = parse_id(id)?;
    let (mut address, customer) = locate(&app, caller.principal, id).await?;
    // A customer's own address came from their record's list, in the list's form; the back
    // end says what the store shows them of it, now that it is known to be theirs.
    if caller.principal != Principal::Admin && !customer.is_null() {
        address = app.backend.own_address(id, address).await.map_err(redact)?;
    }
    let fields = app
        .mappings
        .get("address")
        .view(caller.user_type(), View::Single);
    Ok(private(ok(
        caller.format,
        &Doc::new(Value::Object(render(&fields, &address))),
    )))
}

// ---------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------

/// What a write changes, checked, in Magento's terms.
#[derive(Debug, Default)]
struct Change {
    /// Magento address fields to set (the mapped text fields, street, country, region).
    fields: Map<String, Value>,
    billing: Option<bool>,
    shipping: Option<bool>,
}

impl Change {
    fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.billing.is_none() && self.shipping.is_none()
    }
}

/// Is this text shaped like a region code (`NY`, `2A`) or name (`Provence-Alpes-Côte
/// d'Azur`)? Anything else is SPEC 7's "neither a valid region code nor name".
fn region_shaped(text: &str) -> bool {
    text.chars().count() <= 255
        && text.chars().any(char::is_alphanumeric)
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || c == ' ' || "-'’.,()&/".contains(c))
}

/// The country of the request, checked: SPEC 7's messages in the original's order.
fn check_country<'c>(
    value: Option<&Value>,
    countries: &'c [Country],
) -> Result<&'c Country, &'static str> {
    let code = match value {
        None | Some(Value::Null) => return Err(m::COUNTRY_REQUIRED),
        Some(Value::String(s)) => s.trim(),
        Some(_) => return Err(m::COUNTRY_TYPE),
    };
    if code.is_empty() {
        return Err(m::COUNTRY_REQUIRED);
    }
    if !(2..=3).contains(&code.chars().count()) {
        return Err(m::COUNTRY_LENGTH);
    }
    directory::find_country(countries, code).ok_or(m::COUNTRY_MISSING)
}

/// A default flag: `1`/`0`, `true`/`false`; empty is "no".
fn flag(name: &str, value: &Value) -> Result<bool, String> {
    match value {
        Value::Bool(b) => Ok(*b),
        v if is_empty(v) => Ok(false),
        v => match as_i64(v) {
            Some(0) => Ok(false),
            Some(1) => Ok(true),
            _ => Err(format!(
                "Invalid value \"{}\" for attribute \"{name}\".",
                scalar_text(v)
            )),
        },
    }
}

/// Checks a create (`stored` is None) or an update of `stored` and says what to change.
/// Every problem is reported at once, with SPEC 7's messages.
fn check(
    app: &AppState,
    list: &dyn AddressList,
    user: UserType,
    input: &Map<String, Value>,
    stored: Option<&Value>,
    countries: &[Country],
) -> Result<Change, ApiError> {
    let creating = stored.is_none();
    let mut errors: Vec<String> = Vec::new();
    let mut change = Change {
        fields: plain_fields(app, user, input, creating, &mut errors),
        ..Change::default()
    };

    // The country: always on create, on update when sent. Then the region of the country
    // the address will have.
    let stored_country = stored
        .and_then(|a| a.get("country_id"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let country = if creating || input.contains_key("country_id") {
        match check_country(input.get("country_id"), countries) {
            Ok(country) => {
                change
                    .fields
                    .insert("country_id".into(), json!(country.id.clone()));
                Some(country)
            }
            Err(message) => {
                // The original named the value it did not know.
                let original = (message == m::COUNTRY_MISSING)
                    .then(|| {
                        crate::context::profile::Profile::current().unknown_country(
                            &crate::rules::mapping::convert::scalar_text(&input["country_id"]),
                        )
                    })
                    .flatten();
                errors.push(original.unwrap_or_else(|| message.into()));
                None
            }
        }
    } else {
        directory::find_country(countries, stored_country)
    };
    let country_changed =
        creating || country.is_some_and(|c| !c.id.eq_ignore_ascii_case(stored_country));
    if let Some(country) = country {
        let has_regions = !country.available_regions.is_empty();
        match input.get("region") {
            None | Some(Value::Null) => {
                if country_changed {
                    if has_regions {
                        errors.push(m::REGION_REQUIRED.into());
                    } else {
                        // A region of the old country means nothing in the new one.
                        list.set_region(&mut change.fields, RegionChoice::None);
                    }
                }
            }
            Some(Value::String(text)) => {
                let text = text.trim();
                if text.is_empty() {
                    if has_regions {
                        errors.push(m::REGION_TYPE.into());
                    } else {
                        list.set_region(&mut change.fields, RegionChoice::None);
                    }
                } else if !region_shaped(text) {
                    errors.push(m::REGION_INVALID.into());
                } else if has_regions {
                    match directory::find_region(country, text) {
                        Some(region) => {
                            list.set_region(&mut change.fields, RegionChoice::Predefined(region))
                        }
                        None => errors.push(m::REGION_MISSING.into()),
                    }
                } else {
                    list.set_region(&mut change.fields, RegionChoice::Text(text));
                }
            }
            Some(_) => errors.push(m::REGION_TYPE.into()),
        }
    }

    for (name, slot) in [
        ("is_default_billing", &mut change.billing),
        ("is_default_shipping", &mut change.shipping),
    ] {
        if let Some(value) = input.get(name) {
            match flag(name, value) {
                Ok(on) => *slot = Some(on),
                Err(message) => errors.push(message),
            }
        }
    }

    if !errors.is_empty() {
        errors.dedup();
        return Err(ApiError::validation(errors));
    }
    if change.is_empty() {
        return Err(ApiError::request_data_invalid());
    }
    Ok(change)
}

// ---------------------------------------------------------------------------------------
// Writes
// ---------------------------------------------------------------------------------------

/// Which entry of the list a write is about.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Existing(u64),
    New,
}

async fn create(mut call: ApiCall, customer: &str) -> Result<Response, ApiError> {
    let customer_id = owned_id(call.caller, customer)?;
    let input = call.created_record().await?;
    let ApiCall { app, caller, .. } = call;
    let list = match app.backend.address_writes() {
        AddressWrites::OneAtATime(calls) => {
            return super::address_calls::create(&app, calls, &caller, customer_id, &input).await;
        }
        AddressWrites::ThroughCustomer(list) => list,
    };
    let countries = directory::countries(&app).await?;
    let change = check(&app, list, caller.user_type(), &input, None, &countries)?;

    let mut address = Value::Object(change.fields.clone());
    address["customer_id"] = json!(customer_id);
    let mut intent = AddressWrite {
        backend: &*app.backend,
        list,
        target: Target::New,
        change,
        new_address: Some(address),
        kept: HashSet::new(),
    };
    let id = save_verified(&app, customer_id, &mut intent).await?;
    Ok(created(&format!("/api/rest/customers/addresses/{id}")))
}

/// An address create or update through the customer save, verified (`customer_save`):
/// the written address shows what Magento stored for us, the default flags asked for point
/// at it, and every address the save kept is still there.
struct AddressWrite<'a> {
    backend: &'a dyn Backend,
    /// How the store writes the address list.
    list: &'a dyn AddressList,
    target: Target,
    change: Change,
    /// For a create: the address to add.
    new_address: Option<Value>,
    /// Ids of the addresses the last save sent along.
    kept: HashSet<u64>,
}

impl AddressWrite<'_> {
    /// The id a save gave the written address.
    fn written_id(&self, saved: &Value) -> Option<u64> {
        match (self.target, &self.new_address) {
            (Target::Existing(id), _) => Some(id),
            (Target::New, Some(sent)) => self.list.new_address_id(saved, &self.kept, sent),
            (Target::New, None) => None,
        }
    }
}

impl Intent for AddressWrite<'_> {
    type Output = u64;

    fn plan(&mut self, stored: &Value, previous: Option<&u64>) -> Result<Plan<u64>, ApiError> {
        let ids: HashSet<u64> = self
            .backend
            .addresses_of(stored)
            .iter()
            .filter_map(id_of)
            .collect();
        match self.target {
            // An earlier try's create is there after all: adding it again would duplicate it.
            Target::New => {
                if let Some(&id) = previous.filter(|id| ids.contains(id)) {
                    return Ok(Plan::Done(id));
                }
            }
            // Deleted by someone else meanwhile.
            Target::Existing(id) if !ids.contains(&id) => return Err(ApiError::not_found()),
            Target::Existing(_) => {}
        }
        self.kept = ids;
        let edit = AddressEdit {
            target: match self.target {
                Target::Existing(id) => Some(id),
                Target::New => None,
            },
            fields: self.change.fields.clone(),
            billing: self.change.billing,
            shipping: self.change.shipping,
            new_address: self.new_address.clone(),
        };
        Ok(Plan::Save(self.list.customer_with_address(stored, &edit)))
    }

    fn verify(&mut self, saved: &Value, now: &Value) -> Result<u64, Option<u64>> {
        let Some(id) = self.written_id(saved) else {
            return Err(None);
        };
        let find = |customer: &Value| {
            self.backend
                .addresses_of(customer)
                .into_iter()
                .find(|a| id_of(a) == Some(id))
        };
        let (Some(as_saved), Some(as_read)) = (find(saved), find(now)) else {
            return Err(Some(id));
        };
        let fields = self.change.fields.keys().map(String::as_str);
        let present: HashSet<u64> = self
            .backend
            .addresses_of(now)
            .iter()
            .filter_map(id_of)
            .collect();
        let (billing, shipping) = self.backend.default_addresses(now);
        let defaults_kept = (self.change.billing != Some(true) || billing == Some(id))
            && (self.change.shipping != Some(true) || shipping == Some(id));
        if same_values(&as_saved, &as_read, fields)
            && self.kept.is_subset(&present)
            && defaults_kept
        {
            Ok(id)
        } else {
            Err(Some(id))
        }
    }
}

async fn update(mut call: ApiCall, id: &str) -> Result<Response, ApiError> {
    let id = parse_id(id)?;
    let input = call.update_record().await?;
    let ApiCall { app, caller, .. } = call;
    let list = match app.backend.address_writes() {
        AddressWrites::OneAtATime(calls) => {
            return super::address_calls::update(&app, calls, &caller, id, &input).await;
        }
        AddressWrites::ThroughCustomer(list) => list,
    };
    let owner = owner_of(&app, caller.principal, id).await?;
    let (address, _) = find_in(&app, owner, id).await?;
    let countries = directory::countries(&app).await?;
    let change = check(
        &app,
        list,
        caller.user_type(),
        &input,
        Some(&address),
        &countries,
    )?;
    let mut intent = AddressWrite {
        backend: &*app.backend,
        list,
        target: Target::Existing(id),
        change,
        new_address: None,
        kept: HashSet::new(),
    };
    save_verified(&app, owner, &mut intent).await?;
    Ok(empty_ok())
}

async fn delete(app: AppState, caller: Caller, id: &str) -> Result<Response, ApiError> {
    let id = parse_id(id)?;
    if let AddressWrites::OneAtATime(_) = app.backend.address_writes() {
        return super::address_calls::delete(&app, &caller, id).await;
    }
    let owner = owner_of(&app, caller.principal, id).await?;
    let _turn = app.locks.lock(LockKey::Customer(owner)).await?;
    for attempt in 0..ATTEMPTS {
        if attempt > 0 {
            app.metrics.customer_write_retried();
        }
        let (_, customer) = match find_in(&app, owner, id).await {
            Ok(found) => found,
            // Gone, after a try of ours: done. Before any: the 404 it was.
            Err(e) if attempt > 0 && e.status() == http::StatusCode::NOT_FOUND => {
                return Ok(empty_ok());
            }
            Err(e) => return Err(e),
        };
        let (billing, shipping) = app.backend.default_addresses(&customer);
        if billing == Some(id) || shipping == Some(id) {
            return Err(ApiError::bad_request(m::DEFAULT_DELETE));
        }
        app.backend
            .delete_address(id)
            .await
            .map_err(|error| crate::rules::write_outcome::answer(error, redact))?;
        // Verified like the saves: a writer that saved the customer from an older read
        // can put the address back.
        let now = app.backend.customer(owner).await.map_err(redact)?;
        if !app
            .backend
            .addresses_of(&now)
            .iter()
            .any(|a| id_of(a) == Some(id))
        {
            return Ok(empty_ok());
        }
        tracing::warn!(
            attempt = attempt + 1,
            "deleted address came back (another writer); trying again"
        );
    }
    app.metrics.customer_write_conflicted();
    Err(conflict())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn streets_fold_past_the_second_line() {
        assert_eq!(fold_street(&lines(&["a"])), ["a"]);
        assert_eq!(fold_street(&lines(&["a", "b"])), ["a", "b"]);
        assert_eq!(fold_street(&lines(&["a", "b", "c", "d"])), ["a", "b; c; d"]);
        assert_eq!(fold_street(&lines(&[" a ", "", "b"])), ["a", "b"]);
        assert!(fold_street(&lines(&["", " "])).is_empty());
    }

    #[test]
    fn region_shapes() {
        for good in [
            "NY",
            "2A",
            "New York",
            "Provence-Alpes-Côte d'Azur",
            "Baden-Württemberg",
        ] {
            assert!(region_shaped(good), "{good}");
        }
        for bad in ["@@", "<b>", "NY;DROP", "", "   ", "a\u{0}b"] {
            assert!(!region_shaped(bad), "{bad}");
        }
    }
}
