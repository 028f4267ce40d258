//! Addresses as Magento 2 keeps them: a list on the customer record, the defaults as
//! address ids on the customer (`default_billing`, `default_shipping`), a region as
//! `{region_code, region, region_id}`, and written only by saving the whole customer.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::Magento;
use crate::backend::port::{AddressEdit, AddressList, RegionChoice};
use crate::backend::values::as_i64;

impl AddressList for Magento {
    fn set_region(&self, fields: &mut Map<String, Value>, region: RegionChoice<'_>) {
        set_region(fields, region)
    }

    fn customer_with_address(&self, customer: &Value, edit: &AddressEdit) -> Value {
        customer_with_address(customer, edit)
    }

    fn new_address_id(&self, saved: &Value, before: &HashSet<u64>, sent: &Value) -> Option<u64> {
        new_address_id(saved, before, sent)
    }
}

fn id_of(value: &Value) -> Option<u64> {
    value
        .get("id")
        .and_then(as_i64)
        .filter(|&id| id > 0)
        .map(|id| id as u64)
}

/// The customer's default billing and shipping address ids.
pub(super) fn defaults_of(customer: &Value) -> (Option<u64>, Option<u64>) {
    let id = |key: &str| {
        customer
            .get(key)
            .and_then(as_i64)
            .filter(|&id| id > 0)
            .map(|id| id as u64)
    };
    (id("default_billing"), id("default_shipping"))
}

/// The customer's addresses, each with its default flags set from the customer record,
/// which is where Magento 2 keeps them.
pub(super) fn addresses_of(customer: &Value) -> Vec<Value> {
    let (billing, shipping) = defaults_of(customer);
    customer
        .get("addresses")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter(|a| a.is_object())
                .map(|a| {
                    let mut a = a.clone();
                    let id = id_of(&a);
                    a["default_billing"] = json!(id.is_some() && id == billing);
                    a["default_shipping"] = json!(id.is_some() && id == shipping);
                    a
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Magento 2's region of an address: `{region_code, region, region_id}` plus `region_id`.
fn set_region(fields: &mut Map<String, Value>, region: RegionChoice<'_>) {
    let (id, code, name) = match region {
        RegionChoice::None => (0, None, None),
        RegionChoice::Predefined(r) => (r.id, Some(r.code.as_str()), Some(r.name.as_str())),
        RegionChoice::Text(text) => (0, None, Some(text)),
    };
    fields.insert(
        "region".into(),
        json!({"region_code": code, "region": name, "region_id": id}),
    );
    fields.insert("region_id".into(), json!(id));
}

/// The customer to save: the stored one with its addresses (default flags made explicit)
/// and `edit` applied to them (Magento 2 writes addresses only through the customer save, `PUT /V1/customers/{id}`, and deletes any stored address left out of its list). Defaults only move to the written address when the client
/// asks for it; a `0` changes nothing (the customer keeps a default, as in the original).
fn customer_with_address(stored: &Value, edit: &AddressEdit) -> Value {
    let change = edit;
    let new_address = edit.new_address.clone();
    let mut customer = stored.clone();
    let mut addresses = addresses_of(stored);
    if let Some(id) = edit.target {
        for address in addresses.iter_mut().filter(|a| id_of(a) == Some(id)) {
            if let Value::Object(map) = address {
                for (key, value) in &change.fields {
                    map.insert(key.clone(), value.clone());
                }
            }
        }
    }
    if let Some(address) = new_address {
        addresses.push(address);
    }
    let is_target = |a: &Value, index: usize, count: usize| match edit.target {
        Some(id) => id_of(a) == Some(id),
        None => index + 1 == count,
    };
    let count = addresses.len();
    for (key, wanted) in [
        ("default_billing", change.billing),
        ("default_shipping", change.shipping),
    ] {
        if wanted != Some(true) {
            continue;
        }
        for (index, address) in addresses.iter_mut().enumerate() {
            let on = is_target(address, index, count);
            address[key] = json!(on);
        }
        // The address flags say it now; a stale id here must not win over them.
        if let Some(map) = customer.as_object_mut() {
            map.remove(key);
        }
    }
    customer["addresses"] = Value::Array(addresses);
    customer
}

/// The id of the address a create added: the one id in the saved list that was not there
/// before. Should something else have added one at the same moment, the one that holds
/// what we sent.
fn new_address_id(saved: &Value, before: &HashSet<u64>, sent: &Value) -> Option<u64> {
    let added: Vec<&Value> = saved
        .get("addresses")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter(|a| id_of(a).is_some_and(|id| !before.contains(&id)))
                .collect()
        })
        .unwrap_or_default();
    if let [only] = added.as_slice() {
        return id_of(only);
    }
    let same = |a: &Value| {
        [
            "firstname",
            "lastname",
            "city",
            "postcode",
            "country_id",
            "street",
        ]
        .iter()
        .all(|k| a.get(*k) == sent.get(*k))
    };
    added
        .iter()
        .filter(|a| same(a))
        .filter_map(|a| id_of(a))
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_ids_are_the_ones_not_there_before() {
        let saved = json!({"addresses": [{"id": 7}, {"id": 8}, {"id": 12, "city": "X"}]});
        let before: HashSet<u64> = [7, 8].into_iter().collect();
        assert_eq!(new_address_id(&saved, &before, &json!({})), Some(12));
        let saved =
            json!({"addresses": [{"id": 7}, {"id": 12, "city": "Y"}, {"id": 13, "city": "X"}]});
        let before: HashSet<u64> = [7].into_iter().collect();
        assert_eq!(
            new_address_id(&saved, &before, &json!({"city": "X"})),
            Some(13)
        );
        assert_eq!(
            new_address_id(&json!({"addresses": [{"id": 7}]}), &before, &json!({})),
            None
        );
    }

    #[test]
    fn a_new_default_takes_the_flag_from_the_others() {
        let stored = json!({"id": 5, "default_billing": "7", "default_shipping": "8", "addresses": [
            {"id": 7, "city": "A", "default_billing": true},
            {"id": 8, "city": "B", "default_shipping": true}]});
        let edit = AddressEdit {
            billing: Some(true),
            new_address: Some(json!({"city": "C"})),
            ..AddressEdit::default()
        };
        let saved = customer_with_address(&stored, &edit);
        assert!(saved.get("default_billing").is_none());
        assert_eq!(saved["default_shipping"], "8");
        let flags: Vec<(bool, bool)> = saved["addresses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| (a["default_billing"] == true, a["default_shipping"] == true))
            .collect();
        assert_eq!(flags, [(false, false), (false, true), (true, false)]);
        assert_eq!(saved["addresses"][0]["id"], 7);
    }
}
