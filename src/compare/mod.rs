//! Two JSON answers compared field by field: what differs, where, and of which kind.
//!
//! One engine for every place the gateway asks "does this store answer like that one": the
//! dual-run shadow (issue 31: the serving back end's answer against the candidate's, as
//! the gateway renders them) and `storegate cassette drift` (issue 35: a recorded answer
//! against the live store's). Both need the same things, so both get the same answers:
//!
//! - a difference names a **field path in template form**: object keys joined with `.`,
//!   list indexes folded to `[]` (`tier_price[].price`, `images[].url`) and, by default,
//!   object keys made of digits (the ids of a list keyed by id) folded to `{id}`, so the
//!   same field of every item and of every record of a route counts as one path;
//! - a **class** ([`Class`]): `value`, `missing`, `extra`, `type`, `order` (a list with the
//!   same items in another order), `status` (the statuses differ; when both answers are
//!   errors their error trees are compared as well);
//! - **noise** told apart ([`Noise`]): a path that differs between two reads of the
//!   known-good side is not the candidate's fault (a timestamp, a random order);
//! - **treatments** per field ([`Options`]): compared and shown, compared but shown only as
//!   a digest (personal data), compared as masked (presence only: a scrubbed or faked
//!   value), or not compared at all.
//!
//! The engine knows nothing of the gateway: it depends on `serde_json` and `std` alone, so
//! either consumer can use it without the other, and it does no I/O. Lists are matched by
//! an identity field when their items are objects that carry one (`id`, `entity_id`, ...:
//! a missing first image is one `missing` item, not every later item's fields shifted by
//! one), else by position. Key order within an object is not a difference (JSON objects are
//! unordered; apps read them by key).

mod noise;
mod options;
#[cfg(test)]
mod tests;
mod walk;

use serde_json::Value;

pub use noise::Noise;
pub use options::{Options, Treatment};

/// The path of a difference in the answers' statuses.
pub const STATUS_PATH: &str = "(status)";
/// The path of a difference at the top of the body (an object against a list, ...).
pub const BODY_PATH: &str = "(body)";

/// One side of a comparison: an HTTP status and the JSON body that came with it.
#[derive(Debug, Clone, Copy)]
pub struct Answer<'a> {
    pub status: u16,
    pub body: &'a Value,
}

impl<'a> Answer<'a> {
    pub fn new(status: u16, body: &'a Value) -> Answer<'a> {
        Answer { status, body }
    }

    /// A 4xx or 5xx: its body is an error tree.
    pub fn is_error(&self) -> bool {
        self.status >= 400
    }
}

/// The kind of a difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Both sides have the field, with other values (a value against `null` too).
    Value,
    /// The known-good side has the field (or list item), the other does not.
    Missing,
    /// The other side has a field (or list item) the known-good side does not.
    Extra,
    /// Both sides have the field with values of other JSON types (a string against a number).
    Type,
    /// A list with the same items, in another order.
    Order,
    /// The statuses differ.
    Status,
}

impl Class {
    pub const ALL: [Class; 6] = [
        Class::Value,
        Class::Missing,
        Class::Extra,
        Class::Type,
        Class::Order,
        Class::Status,
    ];

    /// The class's name in reports: `value`, `missing`, `extra`, `type`, `order`, `status`.
    pub fn name(self) -> &'static str {
        match self {
            Class::Value => "value",
            Class::Missing => "missing",
            Class::Extra => "extra",
            Class::Type => "type",
            Class::Order => "order",
            Class::Status => "status",
        }
    }

    /// The class named `name` (the inverse of [`Class::name`]).
    pub fn from_name(name: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// What a report may show of one side's value at a difference.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown {
    /// The side has no value there (a `missing` or `extra` difference).
    Absent,
    /// The value itself.
    Value(Value),
    /// A digest of the value (personal data: equal digests mean equal values).
    Digest(String),
    /// A masked value: compared by presence only, never shown.
    Masked,
}

/// A field path of one class that differed, with the first example of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// The field path in template form (`tier_price[].price`), or [`STATUS_PATH`], or
    /// [`BODY_PATH`].
    pub path: String,
    pub class: Class,
    /// The known-good side's value at the first place it differed.
    pub good: Shown,
    /// The other side's value there.
    pub other: Shown,
    /// How many places in the answer differed under this path and class (the items of a
    /// list count one each).
    pub occurrences: u32,
}

/// The differences of one comparison, each path and class once, in the order first met.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comparison {
    pub differences: Vec<Difference>,
}

impl Comparison {
    /// No difference at all.
    pub fn is_match(&self) -> bool {
        self.differences.is_empty()
    }

    /// The difference at `path` of `class`, if any.
    pub fn find(&self, path: &str, class: Class) -> Option<&Difference> {
        self.differences
            .iter()
            .find(|d| d.path == path && d.class == class)
    }

    /// Whether the answers' statuses differed.
    pub fn status_differs(&self) -> bool {
        self.differences.iter().any(|d| d.class == Class::Status)
    }
}

/// `other` compared with `good`, the side known to be right (the serving store, the
/// recorded answer).
///
/// Equal statuses: the bodies are compared. Other statuses: one [`Class::Status`]
/// difference, and when both are errors, the error trees compared as well (a 404 against
/// a 400 shows which message changed); a success against an error compares no body (they
/// are not the same kind of document).
pub fn compare(good: Answer<'_>, other: Answer<'_>, options: &Options) -> Comparison {
    let mut walk = walk::Walk::new(options);
    if good.status != other.status {
        walk.status(good.status, other.status);
        if !(good.is_error() && other.is_error()) {
            return walk.finish();
        }
    }
    walk.bodies(good.body, other.body);
    walk.finish()
}
