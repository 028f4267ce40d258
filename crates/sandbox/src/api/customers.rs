//! `/V1/customers*` and `/V1/addresses/*` endpoints.

use serde_json::{Map, Value, json};

use crate::api::call::{Call, Caller};
use crate::model::customer::{self, Address, Customer};
use crate::model::store::DEFAULT_STORE_ID;
use crate::state::Db;
use crate::webapi::clock;
use crate::webapi::error::{ApiError, ApiResult};
use crate::webapi::input;
use crate::webapi::messages;
use crate::webapi::search::{FieldValue, Scalar, SearchCriteria};

fn customer_not_found(id: i64) -> ApiError {
    ApiError::no_such_entity("customerId", json!(id))
}

fn address_not_found(id: i64) -> ApiError {
    ApiError::no_such_entity("addressId", json!(id))
}

fn customer_body<'a>(call: &'a Call<'_>) -> ApiResult<&'a Map<String, Value>> {
    input::opt_object(call.body(), "customer", "customer")?
        .ok_or_else(|| ApiError::required("customer"))
}

fn email_taken(db: &Db, email: &str, website_id: u32, except: Option<u64>) -> bool {
    db.customers.values().any(|c| {
        Some(c.id) != except && c.website_id == website_id && c.email.eq_ignore_ascii_case(email)
    })
}

fn check_group(db: &Db, group_id: i64) -> ApiResult<()> {
    if group_id != 32000 && db.catalog.customer_groups.contains(&group_id) {
        Ok(())
    } else {
        Err(ApiError::no_such_entity("id", json!(group_id)))
    }
}

/// Builds the complete new address list from an `addresses` array. `existing` gives the
/// addresses an entry with `id` may update; on create it is empty and ids are ignored.
/// Answers the list and the ids flagged as default billing/shipping.
fn build_addresses(
    db: &mut Db,
    customer_id: u64,
    existing: &[Address],
    entries: &[&Value],
    allow_ids: bool,
) -> ApiResult<(Vec<Address>, Option<u64>, Option<u64>)> {
    let mut built: Vec<(Address, bool, bool)> = Vec::new();
    for entry in entries {
        let Value::Object(entry) = entry else {
            return Err(ApiError::type_mismatch(entry, "object"));
        };
        let mut address = match input::opt_int(entry, "id")?.filter(|_| allow_ids) {
            Some(id) => existing
                .iter()
                .find(|a| a.id as i64 == id)
                .cloned()
                .ok_or_else(|| address_not_found(id))?,
            None => Address::default(),
        };
        let (billing, shipping) = address.apply(entry, &db.directory)?;
        customer::address_errors(address.validate(&db.directory))?;
        address.customer_id = customer_id;
        built.push((address, billing, shipping));
    }
    let mut default_billing = None;
    let mut default_shipping = None;
    let mut out = Vec::with_capacity(built.len());
    for (mut address, billing, shipping) in built {
        if address.id == 0 {
            address.id = db.next_address_id;
            db.next_address_id += 1;
        }
        if billing {
            default_billing = Some(address.id);
        }
        if shipping {
            default_shipping = Some(address.id);
        }
        out.push(address);
    }
    Ok((out, default_billing, default_shipping))
}

fn parse_default(input: &Map<String, Value>, key: &str) -> ApiResult<Option<u64>> {
    Ok(input::opt_int(input, key)?.and_then(|id| u64::try_from(id).ok()))
}

/// Creates a customer the way `AccountManagement::createAccount` does.
fn create_customer(
    call: &Call,
    input: &Map<String, Value>,
    password: Option<String>,
) -> ApiResult<Value> {
    let email = input::opt_string(input, "email")?
        .unwrap_or_default()
        .trim()
        .to_string();
    if let Some(password) = &password {
        customer::check_password(password, &email)?;
    }
    let mut db = call.db_mut();
    let mut customer = Customer {
        group_id: 1,
        ..Customer::default()
    };
    customer.apply(input)?;
    // Without admin rights Magento silently drops a requested group.
    if call.caller == Caller::Integration
        && let Some(group) = input::opt_int(input, "group_id")?
    {
        check_group(&db, group)?;
        customer.group_id = group;
    }
    let requested_store = input::opt_int(input, "store_id")?.filter(|s| *s > 0);
    let requested_website = input::opt_int(input, "website_id")?.filter(|w| *w > 0);
    let store_id = match (requested_store, requested_website) {
        (Some(store), _) => u32::try_from(store).unwrap_or(u32::MAX),
        (None, Some(website)) => db
            .stores
            .default_store_of_website(u32::try_from(website).unwrap_or(u32::MAX))
            .ok_or_else(|| ApiError::not_found(messages::STORE_NOT_FOUND))?,
        (None, None) if call.store.is_admin() => DEFAULT_STORE_ID,
        (None, None) => call.store.id,
    };
    let store = db
        .stores
        .by_id(store_id)
        .ok_or_else(|| ApiError::not_found(messages::STORE_NOT_FOUND))?;
    let website_id =
        requested_website.map_or(store.website_id, |w| u32::try_from(w).unwrap_or(u32::MAX));
    if !db
        .stores
        .store_ids_of_website(website_id)
        .contains(&store_id)
    {
        return Err(ApiError::bad_request(messages::STORE_NOT_IN_WEBSITE));
    }
    customer.created_in = store.name.clone();
    customer.store_id = store_id;
    customer.website_id = website_id;
    let duplicate = email_taken(&db, &customer.email, website_id, None);
    customer::validate_identity(
        &customer.email,
        &customer.firstname,
        &customer.lastname,
        duplicate,
    )?;
    let id = db.next_customer_id;
    customer.id = id;
    if let Some(list) = input::opt_array(input, "addresses", "addresses[]")? {
        let (addresses, billing, shipping) = build_addresses(&mut db, id, &[], &list, false)?;
        customer.addresses = addresses;
        customer.default_billing = billing;
        customer.default_shipping = shipping;
    }
    let now = clock::now();
    customer.created_at = now;
    customer.updated_at = now;
    customer.password = password;
    db.next_customer_id += 1;
    let out = customer.to_json();
    db.customers.insert(id, customer);
    Ok(out)
}

/// `CustomerRepository::save` for an existing customer.
fn update_customer(
    call: &Call,
    id: u64,
    input: &Map<String, Value>,
    self_service: bool,
) -> ApiResult<Value> {
    let mut db = call.db_mut();
    let mut customer = db
        .customers
        .get(&id)
        .cloned()
        .ok_or_else(|| customer_not_found(id as i64))?;
    let email = input::opt_string(input, "email")?
        .unwrap_or_default()
        .trim()
        .to_string();
    let firstname = input::opt_string(input, "firstname")?.unwrap_or_default();
    let lastname = input::opt_string(input, "lastname")?.unwrap_or_default();
    if let Some(website) = input::opt_int(input, "website_id")? {
        customer.website_id = u32::try_from(website).unwrap_or(customer.website_id);
    }
    if let Some(store) = input::opt_int(input, "store_id")? {
        let store = u32::try_from(store).unwrap_or(u32::MAX);
        if db.stores.by_id(store).is_none() {
            return Err(ApiError::not_found(messages::STORE_NOT_FOUND));
        }
        customer.store_id = store;
    }
    let duplicate = !email.is_empty() && email_taken(&db, &email, customer.website_id, Some(id));
    // Magento validates the customer built from the body alone: these must be sent.
    customer::validate_identity(&email, &firstname, &lastname, duplicate)?;
    if !self_service && let Some(group) = input::opt_int(input, "group_id")? {
        check_group(&db, group)?;
        customer.group_id = group;
    }
    customer.apply(input)?;
    match input::present(input, "addresses") {
        // Absent (or null): addresses and defaults stay as stored.
        None => {}
        Some(list) => {
            let entries: Vec<&Value> = match list {
                Value::Array(items) => items.iter().collect(),
                Value::Object(items) => items.values().collect(),
                other => return Err(ApiError::type_mismatch(other, "addresses[]")),
            };
            let previous = customer.addresses.clone();
            let (addresses, billing, shipping) =
                build_addresses(&mut db, id, &previous, &entries, true)?;
            let exists =
                |candidate: Option<u64>| candidate.filter(|c| addresses.iter().any(|a| a.id == *c));
            customer.default_billing = billing
                .or_else(|| exists(parse_default(input, "default_billing").ok().flatten()))
                .or_else(|| exists(customer.default_billing));
            customer.default_shipping = shipping
                .or_else(|| exists(parse_default(input, "default_shipping").ok().flatten()))
                .or_else(|| exists(customer.default_shipping));
            customer.addresses = addresses;
        }
    }
    customer.updated_at = clock::now();
    let out = customer.to_json();
    db.customers.insert(id, customer);
    Ok(out)
}

fn customer_json(db: &Db, id: i64) -> ApiResult<Value> {
    u64::try_from(id)
        .ok()
        .and_then(|id| db.customers.get(&id))
        .map(Customer::to_json)
        .ok_or_else(|| customer_not_found(id))
}

fn me(call: &Call) -> ApiResult<u64> {
    match call.caller {
        Caller::Customer(id) => Ok(id),
        _ => Err(ApiError::unauthorized("self")),
    }
}

/// `GET /V1/customers/{customerId}`
pub(crate) fn get(call: &Call) -> ApiResult<Value> {
    let id = call.param_int("customerId")?;
    customer_json(&call.db(), id)
}

/// `GET /V1/customers/me` (customer token)
pub(crate) fn get_me(call: &Call) -> ApiResult<Value> {
    let id = me(call)?;
    customer_json(&call.db(), id as i64)
}

fn customer_field<'a>(c: &'a Customer, field: &str) -> Option<FieldValue<'a>> {
    let text =
        |v: &'a Option<String>| FieldValue::One(v.as_deref().map_or(Scalar::Null, Scalar::text));
    Some(match field {
        "id" | "entity_id" => FieldValue::One(Scalar::Num(c.id as f64)),
        "email" => FieldValue::One(Scalar::text(c.email.as_str())),
        "firstname" => FieldValue::One(Scalar::text(c.firstname.as_str())),
        "lastname" => FieldValue::One(Scalar::text(c.lastname.as_str())),
        "group_id" => FieldValue::One(Scalar::Num(c.group_id as f64)),
        "website_id" => FieldValue::One(Scalar::Num(f64::from(c.website_id))),
        "store_id" => FieldValue::One(Scalar::Num(f64::from(c.store_id))),
        "gender" => FieldValue::One(Scalar::Num(c.gender as f64)),
        "created_at" => FieldValue::One(Scalar::text(clock::format_datetime(c.created_at))),
        "updated_at" => FieldValue::One(Scalar::text(clock::format_datetime(c.updated_at))),
        "created_in" => FieldValue::One(Scalar::text(c.created_in.as_str())),
        "dob" => text(&c.dob),
        "middlename" => text(&c.middlename),
        "prefix" => text(&c.prefix),
        "suffix" => text(&c.suffix),
        "taxvat" => text(&c.taxvat),
        "default_billing" => FieldValue::One(
            c.default_billing
                .map_or(Scalar::Null, |v| Scalar::Num(v as f64)),
        ),
        "default_shipping" => FieldValue::One(
            c.default_shipping
                .map_or(Scalar::Null, |v| Scalar::Num(v as f64)),
        ),
        _ => return None,
    })
}

/// `GET /V1/customers/search?searchCriteria...`
pub(crate) fn search(call: &Call) -> ApiResult<Value> {
    let criteria = SearchCriteria::required(&call.query)?;
    let db = call.db();
    let mut rows: Vec<&Customer> = db
        .customers
        .values()
        .filter(|c| criteria.matches(|f| customer_field(c, f)))
        .collect();
    criteria.sort(&mut rows, |c, f| customer_field(c, f));
    let (page, total) = criteria.page(rows);
    Ok(json!({
        "items": page.into_iter().map(Customer::to_json).collect::<Vec<_>>(),
        "search_criteria": criteria.echo(),
        "total_count": total
    }))
}

/// `POST /V1/customers` `{"customer": {...}, "password": "..."}` (anonymous).
pub(crate) fn create(call: &Call) -> ApiResult<Value> {
    let input = customer_body(call)?;
    let password = input::opt_string(call.body(), "password")?;
    create_customer(call, input, password)
}

/// `PUT /V1/customers/{id}`: `customer.id` decides (the path id replaces it when the body
/// holds only `customer`); without an id the repository creates a customer.
pub(crate) fn update(call: &Call) -> ApiResult<Value> {
    let input = customer_body(call)?;
    match input::opt_int(input, "id")? {
        Some(id) => update_customer(
            call,
            u64::try_from(id).map_err(|_| customer_not_found(id))?,
            input,
            false,
        ),
        None => create_customer(call, input, None),
    }
}

/// `PUT /V1/customers/me` (customer token): the token's customer, whatever `customer.id` says.
pub(crate) fn update_me(call: &Call) -> ApiResult<Value> {
    let id = me(call)?;
    let input = customer_body(call)?;
    update_customer(call, id, input, true)
}

/// `DELETE /V1/customers/{customerId}`
pub(crate) fn delete(call: &Call) -> ApiResult<Value> {
    let id = call.param_int("customerId")?;
    let mut db = call.db_mut();
    let key = u64::try_from(id).map_err(|_| customer_not_found(id))?;
    db.customers
        .remove(&key)
        .ok_or_else(|| customer_not_found(id))?;
    db.customer_tokens.retain(|_, owner| *owner != key);
    Ok(json!(true))
}

/// `POST /V1/customers/isEmailAvailable` `{"customerEmail": "...", "websiteId": 1}`
pub(crate) fn email_available(call: &Call) -> ApiResult<Value> {
    let email = input::opt_string(call.body(), "customer_email")?
        .ok_or_else(|| ApiError::required("customerEmail"))?;
    let website = match input::opt_int(call.body(), "website_id")? {
        Some(w) => u32::try_from(w).unwrap_or(u32::MAX),
        // Magento uses the current store's website: 0 through `/rest/all`, where no
        // customer lives, so every address looks available there.
        None => call.store.website_id,
    };
    let db = call.db();
    Ok(json!(!email_taken(&db, email.trim(), website, None)))
}

fn default_address(db: &Db, id: i64, billing: bool) -> ApiResult<Value> {
    let customer = u64::try_from(id)
        .ok()
        .and_then(|id| db.customers.get(&id))
        .ok_or_else(|| customer_not_found(id))?;
    let wanted = if billing {
        customer.default_billing
    } else {
        customer.default_shipping
    };
    // Magento answers `null` (200) when the customer has no such default.
    Ok(customer
        .address(wanted)
        .map_or(Value::Null, |a| a.to_json(customer)))
}

pub(crate) fn billing(call: &Call) -> ApiResult<Value> {
    default_address(&call.db(), call.param_int("customerId")?, true)
}

pub(crate) fn shipping(call: &Call) -> ApiResult<Value> {
    default_address(&call.db(), call.param_int("customerId")?, false)
}

pub(crate) fn me_billing(call: &Call) -> ApiResult<Value> {
    default_address(&call.db(), me(call)? as i64, true)
}

pub(crate) fn me_shipping(call: &Call) -> ApiResult<Value> {
    default_address(&call.db(), me(call)? as i64, false)
}

/// `GET /V1/customers/addresses/{addressId}`
pub(crate) fn address(call: &Call) -> ApiResult<Value> {
    let id = call.param_int("addressId")?;
    let db = call.db();
    db.customers
        .values()
        .find_map(|c| {
            c.addresses
                .iter()
                .find(|a| a.id as i64 == id)
                .map(|a| a.to_json(c))
        })
        .ok_or_else(|| address_not_found(id))
}

/// `DELETE /V1/addresses/{addressId}`: also clears the defaults that pointed at it.
pub(crate) fn delete_address(call: &Call) -> ApiResult<Value> {
    let id = call.param_int("addressId")?;
    let mut db = call.db_mut();
    for customer in db.customers.values_mut() {
        if let Some(index) = customer.addresses.iter().position(|a| a.id as i64 == id) {
            let removed = customer.addresses.remove(index);
            if customer.default_billing == Some(removed.id) {
                customer.default_billing = None;
            }
            if customer.default_shipping == Some(removed.id) {
                customer.default_shipping = None;
            }
            customer.updated_at = clock::now();
            return Ok(json!(true));
        }
    }
    Err(address_not_found(id))
}
