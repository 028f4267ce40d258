//! The walk over two bodies that collects their differences.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::options::canonical;
use super::{BODY_PATH, Class, Comparison, Difference, Options, STATUS_PATH, Shown, Treatment};

/// One comparison under way: the path it stands at, the differences so far.
pub(super) struct Walk<'o> {
    options: &'o Options,
    /// The current path in template form ("" at the top of the body).
    path: String,
    found: Vec<Difference>,
    /// Where each (path, class) is in `found`.
    index: HashMap<(String, Class), usize>,
}

impl<'o> Walk<'o> {
    pub(super) fn new(options: &'o Options) -> Walk<'o> {
        Walk {
            options,
            path: String::new(),
            found: Vec::new(),
            index: HashMap::new(),
        }
    }

    pub(super) fn finish(self) -> Comparison {
        Comparison {
            differences: self.found,
        }
    }

    pub(super) fn status(&mut self, good: u16, other: u16) {
        self.push(
            STATUS_PATH.to_owned(),
            Class::Status,
            Shown::Value(good.into()),
            Shown::Value(other.into()),
        );
    }

    pub(super) fn bodies(&mut self, good: &Value, other: &Value) {
        let treatment = self.options.treatment("", None, self.options.root());
        self.values(good, other, treatment);
    }

    /// `good` and `other` at the current path, both present.
    fn values(&mut self, good: &Value, other: &Value, treatment: Treatment) {
        if treatment == Treatment::Ignore {
            return;
        }
        if treatment == Treatment::Masked
            || self.options.is_masked_value(good)
            || self.options.is_masked_value(other)
        {
            // Present on both sides: all a masked field can say.
            return;
        }
        match (good, other) {
            (Value::Object(g), Value::Object(o)) => self.objects(g, o, treatment),
            (Value::Array(g), Value::Array(o)) => self.lists(g, o, treatment),
            _ if good == other => {}
            (Value::Null, _) | (_, Value::Null) => self.here(Class::Value, good, other, treatment),
            _ if kind(good) == kind(other) => self.here(Class::Value, good, other, treatment),
            _ => self.here(Class::Type, good, other, treatment),
        }
    }

    fn objects(
        &mut self,
        good: &Map<String, Value>,
        other: &Map<String, Value>,
        treatment: Treatment,
    ) {
        for (key, g) in good {
            let mark = self.enter_key(key);
            let t = self.options.treatment(&self.path, Some(key), treatment);
            match other.get(key) {
                Some(o) => self.values(g, o, t),
                None => self.one_side(Class::Missing, g, t),
            }
            self.path.truncate(mark);
        }
        for (key, o) in other {
            if good.contains_key(key) {
                continue;
            }
            let mark = self.enter_key(key);
            let t = self.options.treatment(&self.path, Some(key), treatment);
            self.one_side(Class::Extra, o, t);
            self.path.truncate(mark);
        }
    }

    fn lists(&mut self, good: &[Value], other: &[Value], treatment: Treatment) {
        if good == other {
            return;
        }
        let good_keys: Vec<String> = good.iter().map(canonical).collect();
        let other_keys: Vec<String> = other.iter().map(canonical).collect();
        if good_keys == other_keys {
            // Equal but for key order inside items: no difference.
            return;
        }
        let (mut g_sorted, mut o_sorted) = (good_keys.clone(), other_keys.clone());
        g_sorted.sort();
        o_sorted.sort();
        if g_sorted == o_sorted {
            self.here_list(Class::Order, good, other, treatment);
            return;
        }
        let mark = self.path.len();
        self.path.push_str("[]");
        let item_treatment = self.options.treatment(&self.path, None, treatment);
        match self.identity(good, other) {
            Some(key) => self.lists_by_identity(good, other, &key, item_treatment, mark),
            None => {
                for (g, o) in good.iter().zip(other) {
                    self.values(g, o, item_treatment);
                }
                for g in good.iter().skip(other.len()) {
                    self.one_side(Class::Missing, g, item_treatment);
                }
                for o in other.iter().skip(good.len()) {
                    self.one_side(Class::Extra, o, item_treatment);
                }
            }
        }
        self.path.truncate(mark);
    }

    /// Items matched by their identity `key`; the path already ends in `[]`, and `mark` is
    /// where the list's own path ends (for an `order` difference of the matched items).
    fn lists_by_identity(
        &mut self,
        good: &[Value],
        other: &[Value],
        key: &str,
        treatment: Treatment,
        mark: usize,
    ) {
        let id = |v: &Value| canonical(&v[key]);
        let other_by_id: HashMap<String, &Value> = other.iter().map(|o| (id(o), o)).collect();
        let good_ids: Vec<String> = good.iter().map(id).collect();
        for (g, gid) in good.iter().zip(&good_ids) {
            match other_by_id.get(gid) {
                Some(o) => self.values(g, o, treatment),
                None => self.one_side(Class::Missing, g, treatment),
            }
        }
        let good_set: std::collections::HashSet<&String> = good_ids.iter().collect();
        let other_ids: Vec<String> = other.iter().map(id).collect();
        for (o, oid) in other.iter().zip(&other_ids) {
            if !good_set.contains(oid) {
                self.one_side(Class::Extra, o, treatment);
            }
        }
        // The items both sides have, in each side's order.
        let common_good: Vec<&String> = good_ids
            .iter()
            .filter(|i| other_by_id.contains_key(*i))
            .collect();
        let common_other: Vec<&String> =
            other_ids.iter().filter(|i| good_set.contains(i)).collect();
        if common_good != common_other {
            let tail = self.path.split_off(mark);
            let ids = |ids: &[&String]| {
                Value::Array(ids.iter().map(|i| Value::String((*i).clone())).collect())
            };
            self.push_shown(
                Class::Order,
                &ids(&common_good),
                &ids(&common_other),
                treatment,
            );
            self.path.push_str(&tail);
        }
    }

    /// The identity field every item of both lists carries, with values unique on each
    /// side; none when the items are not all objects or no key qualifies.
    fn identity(&self, good: &[Value], other: &[Value]) -> Option<String> {
        let all = || good.iter().chain(other);
        if !all().all(Value::is_object) {
            return None;
        }
        self.options
            .identity_keys
            .iter()
            .find(|key| {
                let scalar = |v: &Value| {
                    v.get(key.as_str())
                        .is_some_and(|k| k.is_string() || k.is_number())
                };
                all().all(scalar) && unique(good, key) && unique(other, key)
            })
            .cloned()
    }

    /// Appends `key` to the path; returns where the path ended before.
    fn enter_key(&mut self, key: &str) -> usize {
        let mark = self.path.len();
        if !self.path.is_empty() {
            self.path.push('.');
        }
        if self.options.fold_numeric_keys
            && !key.is_empty()
            && key.bytes().all(|b| b.is_ascii_digit())
        {
            self.path.push_str("{id}");
        } else {
            self.path.push_str(key);
        }
        mark
    }

    /// A field (or item) one side has and the other does not.
    fn one_side(&mut self, class: Class, value: &Value, treatment: Treatment) {
        if treatment == Treatment::Ignore {
            return;
        }
        let shown = self.show(value, treatment);
        let (good, other) = match class {
            Class::Missing => (shown, Shown::Absent),
            _ => (Shown::Absent, shown),
        };
        self.push(self.path_name(), class, good, other);
    }

    fn here(&mut self, class: Class, good: &Value, other: &Value, treatment: Treatment) {
        self.push_shown(class, good, other, treatment);
    }

    fn here_list(&mut self, class: Class, good: &[Value], other: &[Value], treatment: Treatment) {
        self.push_shown(
            class,
            &Value::Array(good.to_vec()),
            &Value::Array(other.to_vec()),
            treatment,
        );
    }

    fn push_shown(&mut self, class: Class, good: &Value, other: &Value, treatment: Treatment) {
        let (g, o) = (self.show(good, treatment), self.show(other, treatment));
        self.push(self.path_name(), class, g, o);
    }

    fn show(&self, value: &Value, treatment: Treatment) -> Shown {
        if self.options.is_masked_value(value) {
            return Shown::Masked;
        }
        match treatment {
            Treatment::Compare => Shown::Value(value.clone()),
            Treatment::Digest => Shown::Digest(self.options.digest(value)),
            Treatment::Masked | Treatment::Ignore => Shown::Masked,
        }
    }

    fn path_name(&self) -> String {
        if self.path.is_empty() {
            BODY_PATH.to_owned()
        } else {
            self.path.clone()
        }
    }

    fn push(&mut self, path: String, class: Class, good: Shown, other: Shown) {
        match self.index.get(&(path.clone(), class)) {
            Some(&at) => self.found[at].occurrences += 1,
            None => {
                self.index.insert((path.clone(), class), self.found.len());
                self.found.push(Difference {
                    path,
                    class,
                    good,
                    other,
                    occurrences: 1,
                });
            }
        }
    }
}

/// The JSON type of a value, for telling a `type` difference from a `value` one.
fn kind(value: &Value) -> u8 {
    match value {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Number(_) => 2,
        Value::String(_) => 3,
        Value::Array(_) => 4,
        Value::Object(_) => 5,
    }
}

fn unique(items: &[Value], key: &str) -> bool {
    let mut seen = std::collections::HashSet::new();
    items.iter().all(|v| seen.insert(canonical(&v[key])))
}
