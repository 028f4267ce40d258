//! Address writes for a store that adds, changes and deletes one address at a time
//! (OpenMage: `AddressWrites::OneAtATime`). The store checks the country, the region and
//! the default flags itself, with the original's own messages; the gateway checks what it
//! checks for every store (who may write, the required fields, the mapped values, the
//! street) and passes the rest on. A customer writes only in their own record: another
//! customer's address is the 404 of one that does not exist, before the store is asked.

use axum::response::Response;
use serde_json::{Map, Value};

use crate::app::AppState;
use crate::auth::Principal;
use crate::auth::caller::Caller;
use crate::backend::port::AddressCalls;
use crate::http::{ApiError, created, empty_ok};
use crate::rules::privacy::redact;
use crate::rules::write_outcome;

use super::address_fields::plain_fields;

/// The customer's own address `id`, for a customer; nothing to look up for Admin (the store
/// answers for an address that is not there).
async fn ensure_may_write(app: &AppState, principal: Principal, id: u64) -> Result<(), ApiError> {
    match principal {
        Principal::Admin => Ok(()),
        Principal::Customer(me) => {
            let customer = app.backend.customer(me).await.map_err(redact)?;
            let mine = customer
                .get("addresses")
                .and_then(Value::as_array)
                .is_some_and(|list| {
                    list.iter()
                        .any(|a| crate::records::positive_id(a, "id") == Some(id))
                });
            if mine {
                Ok(())
            } else {
                Err(ApiError::not_found())
            }
        }
        Principal::Guest => Err(ApiError::not_found()),
    }
}

fn fields(
    app: &AppState,
    caller: &Caller,
    input: &Map<String, Value>,
    creating: bool,
) -> Result<Value, ApiError> {
    let mut errors = Vec::new();
    let mut fields = plain_fields(app, caller.user_type(), input, creating, &mut errors);
    // The store checks these itself, against its own directory.
    for name in ["country_id", "region"] {
        match input.get(name) {
            Some(value @ (Value::String(_) | Value::Null)) => {
                fields.insert(name.to_owned(), value.clone());
            }
            Some(_) => errors.push(format!("Invalid value for \"{name}\" in request.")),
            None => {}
        }
    }
    if !errors.is_empty() {
        errors.dedup();
        return Err(ApiError::validation(errors));
    }
    if fields.is_empty() {
        return Err(ApiError::request_data_invalid());
    }
    Ok(Value::Object(fields))
}

pub(super) async fn create(
    app: &AppState,
    calls: &dyn AddressCalls,
    caller: &Caller,
    customer_id: u64,
    input: &Map<String, Value>,
) -> Result<Response, ApiError> {
    let address = fields(app, caller, input, true)?;
    let id = calls
        .add_address(customer_id, address)
        .await
        .map_err(|error| write_outcome::answer(error, redact))?;
    Ok(created(&format!("/api/rest/customers/addresses/{id}")))
}

pub(super) async fn update(
    app: &AppState,
    calls: &dyn AddressCalls,
    caller: &Caller,
    id: u64,
    input: &Map<String, Value>,
) -> Result<Response, ApiError> {
    ensure_may_write(app, caller.principal, id).await?;
    let address = fields(app, caller, input, false)?;
    calls
        .update_address(id, address)
        .await
        .map_err(|error| write_outcome::answer(error, redact))?;
    Ok(empty_ok())
}

pub(super) async fn delete(app: &AppState, caller: &Caller, id: u64) -> Result<Response, ApiError> {
    ensure_may_write(app, caller.principal, id).await?;
    app.backend
        .delete_address(id)
        .await
        .map_err(|error| write_outcome::answer(error, redact))?;
    Ok(empty_ok())
}
