//! `/V1/directory/*`: allowed countries, their regions, and the store's currency.

use crate::api::call::Call;
use crate::model::directory::currency_symbol;
use crate::webapi::error::{ApiError, ApiResult};
use crate::webapi::messages;
use serde_json::{Value, json};

pub(crate) fn countries(call: &Call) -> ApiResult<Value> {
    let db = call.db();
    let locale = db.stores.locale_of(call.store.id);
    Ok(Value::Array(
        db.directory
            .countries
            .iter()
            .map(|c| db.directory.to_json(c, &locale))
            .collect(),
    ))
}

pub(crate) fn country(call: &Call) -> ApiResult<Value> {
    let db = call.db();
    let locale = db.stores.locale_of(call.store.id);
    let id = call.param("countryId");
    db.directory
        .country(id)
        .map(|c| db.directory.to_json(c, &locale))
        .ok_or_else(|| ApiError::not_found(messages::COUNTRY_NOT_AVAILABLE))
}

pub(crate) fn currency(call: &Call) -> ApiResult<Value> {
    let db = call.db();
    let code = db.stores.base_currency_of(call.store.id);
    let symbol = currency_symbol(&code);
    Ok(json!({
        "base_currency_code": code,
        "base_currency_symbol": symbol,
        "default_display_currency_code": code,
        "default_display_currency_symbol": symbol,
        "available_currency_codes": [code],
        "exchange_rates": [{"currency_to": code, "rate": 1}]
    }))
}
