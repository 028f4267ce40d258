//! How each field is compared and shown, and how lists are matched.

use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::BuildHasher;
use std::sync::Arc;

use serde_json::Value;

/// How a field (and everything under it) is compared and shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Treatment {
    /// Compared by value; the values are shown.
    Compare,
    /// Compared by value; each value is shown only as a digest (personal data: a report
    /// says that the e-mail differs, and whether two examples are the same e-mail, not the
    /// e-mail).
    Digest,
    /// Compared as masked: only whether the field is there on both sides (a scrubbed
    /// password, a faked e-mail: the value is not the store's, so it cannot differ).
    Masked,
    /// Not compared at all.
    Ignore,
}

type Digester = Arc<dyn Fn(&Value) -> String + Send + Sync>;
type MaskedTest = Arc<dyn Fn(&Value) -> bool + Send + Sync>;

/// The comparison's settings. [`Options::default`] compares every field by value, folds
/// numeric object keys to `{id}` and matches lists of objects by `id`, `entity_id`,
/// `item_id`, `value_id` or `sku`.
#[derive(Clone)]
pub struct Options {
    root: Treatment,
    paths: HashMap<String, Treatment>,
    fields: HashMap<String, Treatment>,
    pub(super) fold_numeric_keys: bool,
    pub(super) identity_keys: Vec<String>,
    digest: Digester,
    masked_value: Option<MaskedTest>,
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("root", &self.root)
            .field("paths", &self.paths)
            .field("fields", &self.fields)
            .field("fold_numeric_keys", &self.fold_numeric_keys)
            .field("identity_keys", &self.identity_keys)
            .finish_non_exhaustive()
    }
}

impl Default for Options {
    fn default() -> Self {
        // Without a digest of the caller's, a keyed SipHash with keys random to this
        // process: a digest of a first name cannot be looked up in a table made elsewhere,
        // and two digests from one process compare.
        let keys = RandomState::new();
        Options {
            root: Treatment::Compare,
            paths: HashMap::new(),
            fields: HashMap::new(),
            fold_numeric_keys: true,
            identity_keys: ["id", "entity_id", "item_id", "value_id", "sku"]
                .map(String::from)
                .to_vec(),
            digest: Arc::new(move |value| format!("{:016x}", keys.hash_one(canonical(value)))),
            masked_value: None,
        }
    }
}

impl Options {
    /// The treatment of the whole answer, where no rule below says otherwise (`Digest` for
    /// a route whose every value is personal).
    pub fn everything(mut self, treatment: Treatment) -> Self {
        self.root = treatment;
        self
    }

    /// `treatment` for the field at `path` (template form: `customer.email`,
    /// `items[].price`) and everything under it.
    pub fn at(mut self, path: &str, treatment: Treatment) -> Self {
        self.paths.insert(path.to_owned(), treatment);
        self
    }

    /// `treatment` for every object key named `name`, at any depth, and everything under
    /// it. A rule [`Options::at`] a path wins over this one at the same field.
    pub fn field(mut self, name: &str, treatment: Treatment) -> Self {
        self.fields.insert(name.to_owned(), treatment);
        self
    }

    /// Values for which `test` holds are compared as masked wherever they are, on either
    /// side (the scrubber's `[scrubbed]`, the masker's fakes).
    pub fn masked_values(mut self, test: impl Fn(&Value) -> bool + Send + Sync + 'static) -> Self {
        self.masked_value = Some(Arc::new(test));
        self
    }

    /// The digest [`Treatment::Digest`] shows (a keyed HMAC, say, so that every instance of
    /// a fleet shows the same digest for the same value).
    pub fn digest_with(
        mut self,
        digest: impl Fn(&Value) -> String + Send + Sync + 'static,
    ) -> Self {
        self.digest = Arc::new(digest);
        self
    }

    /// Whether an object key made of digits is folded to `{id}` in paths (default on: the
    /// keys of a list keyed by id).
    pub fn fold_numeric_keys(mut self, fold: bool) -> Self {
        self.fold_numeric_keys = fold;
        self
    }

    /// The fields that identify an item of a list of objects, tried in this order.
    pub fn identity_keys(mut self, keys: &[&str]) -> Self {
        self.identity_keys = keys.iter().map(|k| (*k).to_owned()).collect();
        self
    }

    pub(super) fn root(&self) -> Treatment {
        self.root
    }

    /// The treatment of the field `key` at `path`, under a parent treated `inherited`.
    pub(super) fn treatment(
        &self,
        path: &str,
        key: Option<&str>,
        inherited: Treatment,
    ) -> Treatment {
        if let Some(t) = self.paths.get(path) {
            return *t;
        }
        if let Some(t) = key.and_then(|k| self.fields.get(k)) {
            return *t;
        }
        inherited
    }

    pub(super) fn is_masked_value(&self, value: &Value) -> bool {
        self.masked_value.as_ref().is_some_and(|test| test(value))
    }

    pub(super) fn digest(&self, value: &Value) -> String {
        (self.digest)(value)
    }
}

/// `value` written with every object's keys sorted: equal values write equal text,
/// whatever their keys' order.
pub(super) fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&map[key.as_str()], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}
