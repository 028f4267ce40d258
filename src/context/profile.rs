//! The compatibility profile (`STOREGATE_PROFILE`): `spec` answers as SPEC.md says,
//! `original` as the original (OpenMage 19.4, Magento 1.9) answered where the two differ and
//! a client written against the original could rely on it.
//!
//! Every switched behaviour is decided here, by one method each, and nowhere else: the
//! renderer, the negotiation, the request decoder, the mapping loader and the few resources
//! concerned ask this module. docs/profile.md lists them. The original's plain
//! failures (its 500s, `limit=0` returning every row, the last page repeated forever, 400 on
//! HEAD) are not behaviours a client relies on and stay fixed in both profiles.
//!
//! The profile of the request being served is kept in a task-local ([`scope`], set by the
//! front layer (`app::front`) and by the response cache around a fetch it may run after the request),
//! so that code deep in a request (the XML writer, the body decoder) needs no extra
//! parameter; outside any request (unit tests) it is [`Profile::Spec`]. It sits on the
//! ground floor of the house (`docs/architecture.md`): it imports no other module, and
//! answers in plain values that the wire format, the mappings and the resources apply.

use std::future::Future;

/// Which API the gateway speaks where SPEC.md and the original differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Profile {
    /// SPEC.md as written (the default).
    #[default]
    Spec,
    /// The original's answers.
    Original,
}

tokio::task_local! {
    static CURRENT: Profile;
}

impl Profile {
    /// Parses the configuration value; `None` for anything but `spec` or `original`.
    pub fn parse(text: &str) -> Option<Profile> {
        match text.trim().to_ascii_lowercase().as_str() {
            "spec" | "" => Some(Profile::Spec),
            "original" => Some(Profile::Original),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Spec => "spec",
            Profile::Original => "original",
        }
    }

    /// The profile of the request this task serves.
    pub fn current() -> Profile {
        CURRENT.try_with(|p| *p).unwrap_or_default()
    }

    /// The XML root element: SPEC.md's `service_api`, the original's `magento_api`.
    pub fn xml_root(self) -> &'static str {
        match self {
            Profile::Spec => "service_api",
            Profile::Original => "magento_api",
        }
    }

    /// Whether `Accept: */*` is answered in JSON (the original: the first row of its
    /// renderer table) rather than SPEC.md's default, XML.
    pub fn any_media_type_is_json(self) -> bool {
        self == Profile::Original
    }

    /// Whether a request without `Accept` is answered in JSON rather than SPEC.md's
    /// default, XML. The original answered it with a plain 500 (its renderer found no
    /// type), which no client relies on; what its clients do rely on is its documented
    /// default, JSON: the official PHP examples' pecl client, built without curl, sends no
    /// `Accept` at all (docs/decisions/legacy-clients.md).
    pub fn missing_accept_is_json(self) -> bool {
        self == Profile::Original
    }

    /// Whether a list keyed by id that SPEC.md writes as `<data_item_<id>>` elements (GET
    /// /orders) is written as repeated `<data_item>`s, as the original's writer did (it
    /// dropped numeric keys; m1-behaviour.md §2).
    pub fn keyed_elements_as_items(self) -> bool {
        self == Profile::Original
    }

    /// Whether a request body without `Content-Type` is the original's 400 `Content-Type
    /// header is empty` rather than SPEC.md's resource default format.
    pub fn content_type_required(self) -> bool {
        self == Profile::Original
    }

    /// Whether a `text/plain` body is read as a query string (`qty=1&is_in_stock=1`), as
    /// the original did; SPEC.md names JSON and XML only.
    pub fn text_plain_is_query(self) -> bool {
        self == Profile::Original
    }

    /// The mapping files' `[profile.<name>]` overrides that apply (the original's JSON
    /// types: integer default flags, a boolean `is_saleable` in lists, integer `cust_group`,
    /// ISO 8601 single-product dates).
    pub fn mapping_overrides(self) -> Option<&'static str> {
        match self {
            Profile::Spec => None,
            Profile::Original => Some("original"),
        }
    }

    /// Products of a category in the shape of `/products` (an object keyed by id with the
    /// caller's list fields), as the original answered, rather than SPEC.md's array of
    /// category list fields.
    pub fn category_list_as_product_list(self) -> bool {
        self == Profile::Original
    }

    /// Whether GET /customers is an object keyed by customer id, as the original answered
    /// it (observed; its XML is the same repeated `<data_item>`s), rather than SPEC.md's
    /// array.
    pub fn customer_list_keyed_by_id(self) -> bool {
        self == Profile::Original
    }

    /// Whether the stock item list shows the full record (the original) rather than
    /// SPEC.md's reduced field set.
    pub fn stock_list_is_full_record(self) -> bool {
        self == Profile::Original
    }

    /// A Guest's GET /orders: SPEC.md's table allows it (an empty list); the original had no
    /// guest privilege on orders (403 `Access denied`).
    pub fn guests_may_list_orders(self) -> bool {
        self == Profile::Spec
    }

    /// Whether `Decoding error.` is followed by a second message naming the format expected
    /// and where decoding failed; the original sent the bare message, and its clients may
    /// count the entries.
    pub fn decoding_detail(self) -> bool {
        self == Profile::Spec
    }

    /// Where the original's message differs from the gateway's with the same status.
    pub fn message(self, which: Message) -> Option<&'static str> {
        if self == Profile::Spec {
            return None;
        }
        Some(match which {
            Message::ImageNotFound => "Resource not found.",
            Message::ImageMimeType => "Unsuppoted image MIME type",
            Message::DuplicateSku => {
                "Invalid attribute \"sku\": The value of attribute \"SKU\" must be unique"
            }
        })
    }

    /// A customer create's missing field: SPEC 7's `<field> is a required value.`, or the
    /// original's attribute label in quotes (`"First Name" is a required value.`).
    pub fn required_customer_field(self, field: &str) -> String {
        let label = match (self, field) {
            (Profile::Spec, _) => None,
            (Profile::Original, "firstname") => Some("First Name"),
            (Profile::Original, "lastname") => Some("Last Name"),
            (Profile::Original, "email") => Some("Email"),
            (Profile::Original, "password") => Some("Password"),
            (Profile::Original, "website_id") => Some("Associate to Website"),
            (Profile::Original, "group_id") => Some("Group"),
            (Profile::Original, _) => None,
        };
        match label {
            Some(label) => format!("\"{label}\" is a required value."),
            None => format!("{field} is a required value."),
        }
    }

    /// An address's unknown country: the gateway's message, or the original's
    /// `Invalid value "<v>" for country_id`.
    pub fn unknown_country(self, value: &str) -> Option<String> {
        match self {
            Profile::Spec => None,
            Profile::Original => Some(format!("Invalid value \"{value}\" for country_id")),
        }
    }

    /// A batch stock update's entry for an unknown item: its code (SPEC.md 404, the
    /// original 400).
    pub fn unknown_stock_item_code(self) -> u16 {
        match self {
            Profile::Spec => 404,
            Profile::Original => 400,
        }
    }

    /// Whether a batch stock update's answer carries an empty `error` group when every
    /// item succeeded (the original left out empty groups).
    pub fn empty_groups_shown(self) -> bool {
        self == Profile::Spec
    }

    /// Whether a batch stock update's success entry names its item with a string (`"1"`:
    /// the original took it from the stock item it had loaded) rather than SPEC.md's int.
    pub fn stock_success_id_is_text(self) -> bool {
        self == Profile::Original
    }
}

/// Messages that differ between the profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Message {
    ImageNotFound,
    ImageMimeType,
    DuplicateSku,
}

/// Runs `future` (a request, or a cache fetch for one) in `profile`.
// Not an `async fn`, which would hold `future` twice: see `request_context`.
pub fn scope<F: Future>(
    profile: Profile,
    future: F,
) -> tokio::task::futures::TaskLocalFuture<Profile, F> {
    CURRENT.scope(profile, future)
}

/// Runs `f` in `profile`, synchronously.
pub fn sync_scope<R>(profile: Profile, f: impl FnOnce() -> R) -> R {
    CURRENT.sync_scope(profile, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_two_names_only() {
        assert_eq!(Profile::parse("spec"), Some(Profile::Spec));
        assert_eq!(Profile::parse(" Original "), Some(Profile::Original));
        assert_eq!(Profile::parse("m1"), None);
    }

    #[test]
    fn outside_a_request_the_profile_is_spec() {
        assert_eq!(Profile::current(), Profile::Spec);
        assert_eq!(
            sync_scope(Profile::Original, Profile::current),
            Profile::Original
        );
    }

    #[test]
    fn customer_labels() {
        assert_eq!(
            Profile::Original.required_customer_field("firstname"),
            "\"First Name\" is a required value."
        );
        assert_eq!(
            Profile::Spec.required_customer_field("firstname"),
            "firstname is a required value."
        );
    }
}
