//! Customers and their addresses: the data, its JSON shape, and Magento's save rules.
//!
//! The rules that matter to clients are the ones of `CustomerRepository::save`: an update
//! needs `email`, `firstname` and `lastname` in the body, other absent fields stay as they
//! are; an `addresses` key that is absent leaves the addresses alone, `[]` deletes them all,
//! and a list is the new complete set (entries with `id` updated, without created, the rest
//! deleted). Addresses are checked like `Address\Validator\General` and `...\Country`.

use serde_json::{Map, Value, json};

use crate::model::directory::Directory;
use crate::webapi::clock;
use crate::webapi::error::{self, ApiError, ApiResult, ErrorItem, Params};
use crate::webapi::input;
use crate::webapi::messages;

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Region {
    pub(crate) id: u32,
    pub(crate) code: Option<String>,
    pub(crate) name: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Address {
    pub(crate) id: u64,
    pub(crate) customer_id: u64,
    pub(crate) region: Region,
    pub(crate) country_id: Option<String>,
    pub(crate) street: Vec<String>,
    pub(crate) company: Option<String>,
    pub(crate) telephone: Option<String>,
    pub(crate) fax: Option<String>,
    pub(crate) postcode: Option<String>,
    pub(crate) city: Option<String>,
    pub(crate) firstname: Option<String>,
    pub(crate) lastname: Option<String>,
    pub(crate) middlename: Option<String>,
    pub(crate) prefix: Option<String>,
    pub(crate) suffix: Option<String>,
    pub(crate) vat_id: Option<String>,
    pub(crate) custom_attributes: Vec<Value>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Customer {
    pub(crate) id: u64,
    pub(crate) group_id: i64,
    pub(crate) default_billing: Option<u64>,
    pub(crate) default_shipping: Option<u64>,
    pub(crate) created_at: i64,
    pub(crate) updated_at: i64,
    pub(crate) created_in: String,
    pub(crate) dob: Option<String>,
    pub(crate) email: String,
    pub(crate) firstname: String,
    pub(crate) lastname: String,
    pub(crate) middlename: Option<String>,
    pub(crate) prefix: Option<String>,
    pub(crate) suffix: Option<String>,
    pub(crate) gender: i64,
    pub(crate) store_id: u32,
    pub(crate) website_id: u32,
    pub(crate) taxvat: Option<String>,
    pub(crate) addresses: Vec<Address>,
    pub(crate) disable_auto_group_change: i64,
    pub(crate) is_subscribed: bool,
    pub(crate) custom_attributes: Vec<Value>,
    /// Kept in clear: this is a sandbox, and the demo customer's password is public anyway.
    pub(crate) password: Option<String>,
}

fn insert_opt(out: &mut Map<String, Value>, key: &str, value: &Option<String>) {
    if let Some(value) = value {
        out.insert(key.into(), json!(value));
    }
}

impl Address {
    pub(crate) fn to_json(&self, customer: &Customer) -> Value {
        let mut out = Map::new();
        out.insert("id".into(), json!(self.id));
        out.insert("customer_id".into(), json!(self.customer_id));
        out.insert(
            "region".into(),
            json!({
                "region_code": self.region.code,
                "region": self.region.name,
                "region_id": self.region.id
            }),
        );
        out.insert("region_id".into(), json!(self.region.id));
        insert_opt(&mut out, "country_id", &self.country_id);
        out.insert("street".into(), json!(self.street));
        insert_opt(&mut out, "company", &self.company);
        insert_opt(&mut out, "telephone", &self.telephone);
        insert_opt(&mut out, "fax", &self.fax);
        insert_opt(&mut out, "postcode", &self.postcode);
        insert_opt(&mut out, "city", &self.city);
        insert_opt(&mut out, "firstname", &self.firstname);
        insert_opt(&mut out, "lastname", &self.lastname);
        insert_opt(&mut out, "middlename", &self.middlename);
        insert_opt(&mut out, "prefix", &self.prefix);
        insert_opt(&mut out, "suffix", &self.suffix);
        insert_opt(&mut out, "vat_id", &self.vat_id);
        // Magento only sets the flags that are true; false ones are absent.
        if customer.default_shipping == Some(self.id) {
            out.insert("default_shipping".into(), json!(true));
        }
        if customer.default_billing == Some(self.id) {
            out.insert("default_billing".into(), json!(true));
        }
        if !self.custom_attributes.is_empty() {
            out.insert("custom_attributes".into(), json!(self.custom_attributes));
        }
        Value::Object(out)
    }

    /// Merges the fields present in an address body; flags are returned, not stored.
    pub(crate) fn apply(
        &mut self,
        input: &Map<String, Value>,
        directory: &Directory,
    ) -> ApiResult<(bool, bool)> {
        macro_rules! text {
            ($name:ident) => {
                if let Some(v) = input::opt_string(input, stringify!($name))? {
                    self.$name = Some(v);
                }
            };
        }
        text!(company);
        text!(telephone);
        text!(fax);
        text!(postcode);
        text!(city);
        text!(firstname);
        text!(lastname);
        text!(middlename);
        text!(prefix);
        text!(suffix);
        text!(vat_id);
        text!(country_id);
        match input::present(input, "street") {
            Some(Value::Array(lines)) => {
                self.street = lines
                    .iter()
                    .map(input::to_string)
                    .collect::<ApiResult<Vec<_>>>()?;
            }
            Some(other) => self.street = vec![input::to_string(other)?],
            None => {}
        }
        if let Some(list) = input::opt_array(input, "custom_attributes", "custom_attributes[]")? {
            self.custom_attributes = list.into_iter().cloned().collect();
        }
        let top_region_id = input::opt_int(input, "region_id")?.filter(|id| *id > 0);
        let (region_id, code, name, region_given) = match input::present(input, "region") {
            Some(Value::Object(region)) => (
                input::opt_int(region, "region_id")?.filter(|id| *id > 0),
                input::opt_string(region, "region_code")?.filter(|c| !c.is_empty()),
                input::opt_string(region, "region")?.filter(|r| !r.is_empty()),
                true,
            ),
            Some(other) => (None, None, Some(input::to_string(other)?), true),
            None => (None, None, None, false),
        };
        if region_given || top_region_id.is_some() {
            let country = self.country_id.clone().unwrap_or_default();
            let id = top_region_id.or(region_id).or_else(|| {
                code.as_deref()
                    .and_then(|c| directory.region_by_code(&country, c))
                    .map(|r| i64::from(r.id))
            });
            self.region = Region {
                id: id.and_then(|id| u32::try_from(id).ok()).unwrap_or(0),
                code,
                name,
            };
        }
        self.resolve_region(directory);
        Ok((
            input::opt_bool(input, "default_billing")?.unwrap_or(false),
            input::opt_bool(input, "default_shipping")?.unwrap_or(false),
        ))
    }

    /// Region code and name come from the directory whenever the id is one of the country's.
    pub(crate) fn resolve_region(&mut self, directory: &Directory) {
        let country = self.country_id.clone().unwrap_or_default();
        if self.region.id != 0
            && let Some(known) = directory.region(&country, self.region.id)
        {
            self.region.code = Some(known.code.clone());
            self.region.name = Some(known.name.clone());
        }
    }

    /// `Address\Validator\General` then `...\Country`, all errors collected.
    pub(crate) fn validate(&self, directory: &Directory) -> Vec<ErrorItem> {
        let empty = |v: &Option<String>| v.as_deref().is_none_or(|s| s.trim().is_empty());
        let mut errors = Vec::new();
        if empty(&self.firstname) {
            errors.push(ErrorItem::required("firstname"));
        }
        if empty(&self.lastname) {
            errors.push(ErrorItem::required("lastname"));
        }
        if self.street.first().is_none_or(|s| s.trim().is_empty()) {
            errors.push(ErrorItem::required("street"));
        }
        if empty(&self.city) {
            errors.push(ErrorItem::required("city"));
        }
        if empty(&self.telephone) {
            errors.push(ErrorItem::required("telephone"));
        }
        let country = self.country_id.clone().unwrap_or_default();
        if !directory.is_zip_optional(&country) && empty(&self.postcode) {
            errors.push(ErrorItem::required("postcode"));
        }
        if country.is_empty() {
            errors.push(ErrorItem::required("countryId"));
            return errors;
        }
        let Some(info) = directory.country(&country) else {
            errors.push(ErrorItem::invalid_value("countryId", json!(country)));
            return errors;
        };
        let required = directory.is_region_required(&country);
        let has_list = !info.available_regions.is_empty();
        if required && !has_list && empty(&self.region.name) {
            errors.push(ErrorItem::required("region"));
        } else if has_list && required && self.region.id == 0 {
            errors.push(ErrorItem::required("regionId"));
        } else if has_list
            && self.region.id != 0
            && !info
                .available_regions
                .iter()
                .any(|r| r.id == self.region.id)
        {
            errors.push(ErrorItem::invalid_value(
                "regionId",
                json!(self.region.id.to_string()),
            ));
        }
        errors
    }
}

impl Customer {
    pub(crate) fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("id".into(), json!(self.id));
        out.insert("group_id".into(), json!(self.group_id));
        if let Some(id) = self.default_billing {
            out.insert("default_billing".into(), json!(id.to_string()));
        }
        if let Some(id) = self.default_shipping {
            out.insert("default_shipping".into(), json!(id.to_string()));
        }
        out.insert(
            "created_at".into(),
            json!(clock::format_datetime(self.created_at)),
        );
        out.insert(
            "updated_at".into(),
            json!(clock::format_datetime(self.updated_at)),
        );
        out.insert("created_in".into(), json!(self.created_in));
        insert_opt(&mut out, "dob", &self.dob);
        out.insert("email".into(), json!(self.email));
        out.insert("firstname".into(), json!(self.firstname));
        out.insert("lastname".into(), json!(self.lastname));
        insert_opt(&mut out, "middlename", &self.middlename);
        insert_opt(&mut out, "prefix", &self.prefix);
        insert_opt(&mut out, "suffix", &self.suffix);
        out.insert("gender".into(), json!(self.gender));
        out.insert("store_id".into(), json!(self.store_id));
        insert_opt(&mut out, "taxvat", &self.taxvat);
        out.insert("website_id".into(), json!(self.website_id));
        let addresses: Vec<Value> = self.addresses.iter().map(|a| a.to_json(self)).collect();
        out.insert("addresses".into(), Value::Array(addresses));
        out.insert(
            "disable_auto_group_change".into(),
            json!(self.disable_auto_group_change),
        );
        out.insert(
            "extension_attributes".into(),
            json!({"is_subscribed": self.is_subscribed}),
        );
        if !self.custom_attributes.is_empty() {
            out.insert("custom_attributes".into(), json!(self.custom_attributes));
        }
        Value::Object(out)
    }

    pub(crate) fn address(&self, id: Option<u64>) -> Option<&Address> {
        let id = id?;
        self.addresses.iter().find(|a| a.id == id)
    }

    /// Merges the plain customer fields present in a body.
    pub(crate) fn apply(&mut self, input: &Map<String, Value>) -> ApiResult<()> {
        macro_rules! text {
            ($name:ident) => {
                if let Some(v) = input::opt_string(input, stringify!($name))? {
                    self.$name = Some(v);
                }
            };
        }
        if let Some(email) = input::opt_string(input, "email")? {
            self.email = email.trim().to_string();
        }
        if let Some(v) = input::opt_string(input, "firstname")? {
            self.firstname = v;
        }
        if let Some(v) = input::opt_string(input, "lastname")? {
            self.lastname = v;
        }
        text!(middlename);
        text!(prefix);
        text!(suffix);
        text!(taxvat);
        if let Some(dob) = input::opt_string(input, "dob")? {
            self.dob = Some(clock::normalize_datetime(&dob).map_or(dob, |d| d[..10].to_string()));
        }
        if let Some(gender) = input::opt_int(input, "gender")? {
            self.gender = gender;
        }
        if let Some(v) = input::opt_int(input, "disable_auto_group_change")? {
            self.disable_auto_group_change = v;
        }
        if let Some(ext) = input::opt_object(input, "extension_attributes", "extension_attributes")?
            && let Some(subscribed) = input::opt_bool(ext, "is_subscribed")?
        {
            self.is_subscribed = subscribed;
        }
        if let Some(list) = input::opt_array(input, "custom_attributes", "custom_attributes[]")? {
            self.custom_attributes = list.into_iter().cloned().collect();
        }
        Ok(())
    }
}

/// A loose e-mail syntax check, enough to tell `"Email" is not a valid email address.` apart.
pub(crate) fn is_valid_email(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.contains('@')
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !email.chars().any(char::is_whitespace)
}

/// The customer resource model's checks: e-mail present, unique in the website, then the
/// EAV validator (required names, e-mail syntax), whose messages Magento joins into one.
pub(crate) fn validate_identity(
    email: &str,
    firstname: &str,
    lastname: &str,
    duplicate: bool,
) -> ApiResult<()> {
    if email.is_empty() {
        return Err(ApiError::bad_request(messages::EMAIL_MISSING));
    }
    if duplicate {
        return Err(ApiError::bad_request(messages::DUPLICATE_EMAIL));
    }
    let mut problems = Vec::new();
    if firstname.trim().is_empty() {
        problems.push(error::render(
            messages::ATTRIBUTE_REQUIRED_VALUE,
            &["First Name"],
        ));
    }
    if lastname.trim().is_empty() {
        problems.push(error::render(
            messages::ATTRIBUTE_REQUIRED_VALUE,
            &["Last Name"],
        ));
    }
    if !is_valid_email(email) {
        problems.push(messages::EMAIL_INVALID.to_string());
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ApiError::bad_request(problems.join("\n")))
    }
}

/// `AccountManagement::checkPasswordStrength` with the default configuration (at least 8
/// characters, 3 character classes), then the "not the e-mail" rule of `createAccount`.
pub(crate) fn check_password(password: &str, email: &str) -> ApiResult<()> {
    const MIN_LENGTH: usize = 8;
    const MAX_LENGTH: usize = 256;
    const CLASSES: usize = 3;
    let length = password.chars().count();
    if length > MAX_LENGTH {
        return Err(ApiError::bad_request_with(
            messages::PASSWORD_TOO_LONG,
            Params::List(vec![json!(MAX_LENGTH)]),
        ));
    }
    if length < MIN_LENGTH {
        return Err(ApiError::bad_request_with(
            messages::PASSWORD_TOO_SHORT,
            Params::List(vec![json!(MIN_LENGTH)]),
        ));
    }
    if password.trim().chars().count() != length {
        return Err(ApiError::bad_request(messages::PASSWORD_SPACES));
    }
    let classes = [
        password.chars().any(|c| c.is_ascii_digit()),
        password.chars().any(|c| c.is_ascii_uppercase()),
        password.chars().any(|c| c.is_ascii_lowercase()),
        password.chars().any(|c| !c.is_ascii_alphanumeric()),
    ]
    .iter()
    .filter(|present| **present)
    .count();
    if classes < CLASSES {
        return Err(ApiError::bad_request_with(
            messages::PASSWORD_CLASSES,
            Params::List(vec![json!(CLASSES)]),
        ));
    }
    if password.eq_ignore_ascii_case(email) {
        return Err(ApiError::bad_request(messages::PASSWORD_IS_EMAIL));
    }
    Ok(())
}

/// The address answer for an aggregate validation failure.
pub(crate) fn address_errors(errors: Vec<ErrorItem>) -> ApiResult<()> {
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::aggregate(errors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn password_rules_in_magento_order() {
        let msg = |p: &str| check_password(p, "a@b.co").err().map(|e| e.message.clone());
        assert_eq!(msg("Ab1!").as_deref(), Some(messages::PASSWORD_TOO_SHORT));
        assert_eq!(msg(" Abcdef12").as_deref(), Some(messages::PASSWORD_SPACES));
        assert_eq!(
            msg("abcdefgh1").as_deref(),
            Some(messages::PASSWORD_CLASSES)
        );
        assert_eq!(msg("Abcdefgh1"), None);
        assert_eq!(
            check_password("A@b.co12", "a@b.co12")
                .err()
                .map(|e| e.message.clone())
                .as_deref(),
            Some(messages::PASSWORD_IS_EMAIL)
        );
    }

    #[test]
    fn identity_messages() {
        let err = validate_identity("x@example.com", "", "", false)
            .err()
            .map(|e| e.message.clone());
        assert_eq!(
            err.as_deref(),
            Some("\"First Name\" is a required value.\n\"Last Name\" is a required value.")
        );
        assert!(validate_identity("nope", "A", "B", false).is_err());
        assert!(is_valid_email("roni_cost@example.com"));
    }
}
