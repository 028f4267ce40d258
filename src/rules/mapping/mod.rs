//! Mappings: which spec field comes from which Magento 2 field, with which type, and which
//! fields each user type sees and may write.
//!
//! One TOML file per resource in `mappings/magento2/` (or `STOREGATE_MAPPINGS`). This is how
//! an operator does what the original did in its administration panel ("the set of
//! attributes can differ per user type") without a rebuild: edit the file, restart.
//!
//! ```toml
//! resource = "product"
//! [fields]
//! sku = { source = "product.sku", type = "string" }
//! url_key = { source = "product.custom_attributes.url_key", type = "string" }
//! [objects.stock_data]          # fields of a nested record, paths relative to it
//! qty = { source = "qty", type = "decimal4" }
//! [view.guest]
//! single = ["sku", "url_key"]   # a named list ([`View`]); the resource decides which it uses
//! ```
//!
//! The loader refuses unknown keys, unknown types, unknown view names and views naming
//! undefined fields, with the file and line. Applying a mapping is pure data-in, data-out: no I/O.

pub mod convert;
pub mod path;

use std::collections::{BTreeMap, HashMap};
use std::path::Path as FsPath;
use std::sync::Arc;

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::auth::UserType;
use crate::context::profile::Profile;
pub use convert::{BackendType, FieldType};
pub use path::Path;

/// The files a folder of mappings holds, one per resource.
pub const FILES: &[&str] = &[
    "product.toml",
    "customer.toml",
    "address.toml",
    "order.toml",
    "order_address.toml",
    "order_item.toml",
    "order_comment.toml",
    "stock_item.toml",
    "image.toml",
];

/// A mapping problem, naming the file and line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MappingError(pub String);

/// A user type's named field lists, as written (names checked against [`View`] on load).
type ViewLists = BTreeMap<toml::Spanned<String>, Vec<toml::Spanned<String>>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    resource: String,
    /// Record lists that hold attributes as `{attribute_code, value}` entries (Magento 2's
    /// `custom_attributes`): a path through one selects, and writes, an entry by code.
    #[serde(default)]
    attribute_lists: Vec<String>,
    #[serde(default)]
    fields: IndexMap<String, FieldSpec>,
    #[serde(default)]
    objects: BTreeMap<String, IndexMap<String, FieldSpec>>,
    #[serde(default)]
    view: Views,
    /// `[profile.<name>]`: fields and view lists that replace the file's own when the
    /// gateway runs in that compatibility profile (`crate::context::profile`).
    #[serde(default)]
    profile: BTreeMap<toml::Spanned<String>, ProfileSpec>,
}

type Views = BTreeMap<toml::Spanned<String>, ViewLists>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileSpec {
    #[serde(default)]
    fields: IndexMap<String, FieldSpec>,
    #[serde(default)]
    view: Views,
}

/// The profiles a mapping file may have overrides for.
const PROFILES: &[&str] = &["original"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FieldSpec {
    source: toml::Spanned<String>,
    #[serde(rename = "type")]
    ty: FieldType,
    /// The JSON type Magento wants on write, when not the natural one.
    upstream: Option<BackendType>,
    /// For `type = "object"`: the `[objects.<name>]` that describes it.
    object: Option<toml::Spanned<String>>,
    /// Shown when the source is absent.
    default: Option<toml::Value>,
    /// Magento's search field name, when it differs from the last path segment.
    search: Option<String>,
    /// The name answers show, when it differs from the field's key: one spec field in
    /// different shapes for different views (the Admin's and the shoppers' `tier_price`).
    name: Option<String>,
}

/// One mapped field.
#[derive(Debug, Clone)]
pub struct Field {
    pub name: String,
    pub source: Path,
    pub ty: FieldType,
    pub upstream: BackendType,
    pub object: Option<Arc<[Field]>>,
    pub default: Option<Value>,
    pub search: Option<String>,
}

impl Field {
    /// The Magento search-criteria field this spec field can be filtered and sorted on:
    /// `product.id` is `entity_id`, a custom attribute is its code, a top-level field its
    /// name. Derived values (prices with tax, URLs) cannot be searched.
    pub fn search_field(&self) -> Option<String> {
        if let Some(search) = &self.search {
            return Some(search.clone());
        }
        match self.source.segments() {
            [_, field] if field == "id" => Some("entity_id".to_owned()),
            [_, field] => Some(field.clone()),
            [_, _, _] => self.source.attribute_code().map(str::to_owned),
            _ => None,
        }
        .filter(|_| {
            !matches!(
                self.ty,
                FieldType::Object
                    | FieldType::GroupPrice
                    | FieldType::TierPrice
                    | FieldType::GroupPriceOriginal
                    | FieldType::TierPriceOriginal
                    | FieldType::ShopperTiersOriginal
                    | FieldType::MediaUrl
                    | FieldType::Nonempty
                    // Assembled by the gateway: nothing Magento can search.
                    | FieldType::List
                    | FieldType::Raw
            )
        })
    }
}

/// The named field lists of a `[view.<user type>]` table: the resources ask for a list by
/// this name, and the loader refuses a name that is not one of these (a misspelt view would
/// otherwise render empty records).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum View {
    /// One record.
    Single,
    /// A list of records.
    List,
    /// The products of a category.
    Category,
    /// The fields a create may send.
    Create,
    /// The fields an update may send, where they differ from `write`.
    Update,
    /// The fields a write may send.
    Write,
    /// The fields a create must send.
    Required,
    /// Records on a route of their own that also appear nested in another resource (an
    /// order's lines on `/orders/:id/items`), where the original showed other fields.
    Own,
}

impl View {
    pub const ALL: [View; 8] = [
        View::Single,
        View::List,
        View::Category,
        View::Create,
        View::Update,
        View::Write,
        View::Required,
        View::Own,
    ];

    /// The name in the mapping files.
    pub fn as_str(self) -> &'static str {
        match self {
            View::Single => "single",
            View::List => "list",
            View::Category => "category",
            View::Create => "create",
            View::Update => "update",
            View::Write => "write",
            View::Required => "required",
            View::Own => "own",
        }
    }
}

/// The mapping of one resource.
#[derive(Debug)]
pub struct ResourceMapping {
    pub resource: String,
    fields: IndexMap<String, Field>,
    views: HashMap<(UserType, View), Arc<[Field]>>,
}

impl ResourceMapping {
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.get(name)
    }

    /// A named field list of a user type's view (empty when the file has none).
    pub fn view(&self, user: UserType, view: View) -> Arc<[Field]> {
        self.views
            .get(&(user, view))
            .cloned()
            .unwrap_or_else(|| Arc::from(Vec::new()))
    }

    /// Renders a record: each field of the list, in order, from the source tree.
    pub fn render(fields: &[Field], source: &Value, media_base: &str) -> Map<String, Value> {
        let mut out = Map::new();
        for field in fields {
            out.insert(field.name.clone(), read_field(field, source, media_base));
        }
        out
    }

    /// Writes the client's values for `fields` into an upstream body `root`. Fields the
    /// client did not send are left alone; fields it may not write are ignored, as the
    /// original's attribute filter did. Returns the names written, or the messages of
    /// every value that could not be converted.
    pub fn write(
        fields: &[Field],
        input: &Map<String, Value>,
        root: &mut Value,
    ) -> Result<Vec<String>, Vec<String>> {
        let mut written = Vec::new();
        let mut errors = Vec::new();
        for field in fields {
            let Some(value) = input.get(&field.name) else {
                continue;
            };
            match write_field(field, value) {
                Ok(mut converted) => {
                    // Group and tier prices share one upstream list: add to it.
                    if field.ty.tier_kind().is_some()
                        && let (Some(Value::Array(existing)), Value::Array(new)) =
                            (field.source.get(root), &mut converted)
                    {
                        let mut merged = existing.clone();
                        merged.append(new);
                        converted = Value::Array(merged);
                    }
                    field.source.set(root, converted);
                    written.push(field.name.clone());
                }
                Err(mut messages) => errors.append(&mut messages),
            }
        }
        if errors.is_empty() {
            Ok(written)
        } else {
            Err(errors)
        }
    }
}

fn read_field(field: &Field, source: &Value, media_base: &str) -> Value {
    let value = field.source.get(source);
    if value.is_none()
        && let Some(default) = &field.default
    {
        return default.clone();
    }
    match (&field.object, value) {
        (Some(object), Some(inner)) => {
            Value::Object(ResourceMapping::render(object, inner, media_base))
        }
        (Some(_), None) => Value::Null,
        (None, value) => convert::read(field.ty, value, media_base),
    }
}

fn write_field(field: &Field, value: &Value) -> Result<Value, Vec<String>> {
    if let Some(object) = &field.object {
        let Value::Object(input) = value else {
            return Err(vec![format!(
                "Invalid value for \"{}\" in request.",
                field.name
            )]);
        };
        let mut nested = Value::Object(Map::new());
        ResourceMapping::write(object, input, &mut nested)?;
        return Ok(nested);
    }
    convert::write(field.ty, field.upstream, &field.name, value).map_err(|e| vec![e])
}

fn default_backend_type(source: &Path, ty: FieldType) -> BackendType {
    // Attribute lists hold their values as text.
    if source.attribute_code().is_some() {
        return BackendType::String;
    }
    match ty {
        FieldType::Int | FieldType::IntString => BackendType::Int,
        FieldType::Decimal4 | FieldType::Number => BackendType::Number,
        FieldType::Flag | FieldType::Bool => BackendType::Bool,
        _ => BackendType::String,
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

fn toml_to_json(value: &toml::Value) -> Value {
    match value {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => Value::Number((*i).into()),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Value::Number)
            .unwrap_or(Value::Null),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Array(items) => Value::Array(items.iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.clone(), toml_to_json(v)))
                .collect(),
        ),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
    }
}

/// Parses one mapping file, with the overrides of `profile` (a `[profile.<name>]` table)
/// applied. `file` is only used in messages.
pub fn parse_file(
    file: &str,
    text: &str,
    profile: Option<&str>,
) -> Result<ResourceMapping, MappingError> {
    let mut spec: FileSpec = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(0);
        // Quote the line: toml's message says what is wrong, not always which key.
        let quoted = text
            .lines()
            .nth(line.saturating_sub(1))
            .unwrap_or("")
            .trim();
        MappingError(format!(
            "{file} line {line} ({quoted}): {}",
            e.message().trim()
        ))
    })?;
    let at = |span: std::ops::Range<usize>| format!("{file} line {}", line_of(text, span.start));
    for name in spec.profile.keys() {
        if !PROFILES.contains(&name.get_ref().as_str()) {
            return Err(MappingError(format!(
                "{}: unknown profile profile.{} (expected {})",
                at(name.span()),
                name.get_ref(),
                PROFILES.join(", ")
            )));
        }
    }
    let overrides = profile.and_then(|wanted| {
        let key = spec.profile.keys().find(|k| k.get_ref() == wanted)?.clone();
        spec.profile.remove(&key)
    });
    if let Some(overrides) = overrides {
        for (name, field) in overrides.fields {
            spec.fields.insert(name, field);
        }
        for (user, lists) in overrides.view {
            let entry = spec.view.entry(user).or_default();
            for (list, names) in lists {
                entry.insert(list, names);
            }
        }
    }

    // Nested objects first: fields may refer to them.
    let mut objects: HashMap<String, Arc<[Field]>> = HashMap::new();
    for (name, fields) in &spec.objects {
        let mut list = Vec::new();
        for (field_name, field_spec) in fields {
            if field_spec.object.is_some() {
                return Err(MappingError(format!(
                    "{}: objects cannot nest further (objects.{name}.{field_name})",
                    at(field_spec.source.span())
                )));
            }
            list.push(build_field(
                field_name,
                field_spec,
                &spec.attribute_lists,
                None,
                &at,
            )?);
        }
        objects.insert(name.clone(), Arc::from(list));
    }
    let mut fields = IndexMap::new();
    for (name, field_spec) in &spec.fields {
        let object = match &field_spec.object {
            Some(object_name) => {
                Some(objects.get(object_name.get_ref()).cloned().ok_or_else(|| {
                    MappingError(format!(
                        "{}: fields.{name} names unknown object {:?}",
                        at(object_name.span()),
                        object_name.get_ref()
                    ))
                })?)
            }
            None if field_spec.ty == FieldType::Object => {
                return Err(MappingError(format!(
                    "{}: fields.{name} has type \"object\" but no `object = ...`",
                    at(field_spec.source.span())
                )));
            }
            None => None,
        };
        fields.insert(
            name.clone(),
            build_field(name, field_spec, &spec.attribute_lists, object, &at)?,
        );
    }
    let mut views = HashMap::new();
    for (user, lists) in &spec.view {
        let Some(user_type) = UserType::ALL
            .iter()
            .copied()
            .find(|u| u.as_str() == user.get_ref())
        else {
            return Err(MappingError(format!(
                "{}: unknown user type view.{} (expected admin, customer or guest)",
                at(user.span()),
                user.get_ref()
            )));
        };
        for (list_name, names) in lists {
            let mut list = Vec::new();
            for name in names {
                let field = fields.get(name.get_ref()).ok_or_else(|| {
                    MappingError(format!(
                        "{}: view.{}.{} names unknown field {:?}",
                        at(name.span()),
                        user.get_ref(),
                        list_name.get_ref(),
                        name.get_ref()
                    ))
                })?;
                list.push(Field::clone(field));
            }
            // After the fields, so that a list's unknown field is named even when the list's
            // name is wrong too.
            let Some(view) = View::ALL
                .iter()
                .copied()
                .find(|v| v.as_str() == list_name.get_ref())
            else {
                let expected: Vec<&str> = View::ALL.iter().map(|v| v.as_str()).collect();
                return Err(MappingError(format!(
                    "{}: unknown view view.{}.{} (expected {})",
                    at(list_name.span()),
                    user.get_ref(),
                    list_name.get_ref(),
                    expected.join(", ")
                )));
            };
            views.insert((user_type, view), Arc::from(list));
        }
    }
    Ok(ResourceMapping {
        resource: spec.resource,
        fields,
        views,
    })
}

fn build_field(
    name: &str,
    spec: &FieldSpec,
    attribute_lists: &[String],
    object: Option<Arc<[Field]>>,
    at: &dyn Fn(std::ops::Range<usize>) -> String,
) -> Result<Field, MappingError> {
    let source = Path::parse_in(spec.source.get_ref(), attribute_lists)
        .map_err(|e| MappingError(format!("{}: {name}: {e}", at(spec.source.span()))))?;
    Ok(Field {
        name: spec.name.clone().unwrap_or_else(|| name.to_owned()),
        upstream: spec
            .upstream
            .unwrap_or_else(|| default_backend_type(&source, spec.ty)),
        source,
        ty: spec.ty,
        object,
        default: spec.default.as_ref().map(toml_to_json),
        search: spec.search.clone(),
    })
}

/// Every resource's mapping, in each profile: the one a request uses is its profile's
/// ([`Mappings::get`]), so that a request in the original's profile (an OAuth consumer's,
/// when the gateway runs in `spec`) gets the original's JSON types, and the others the
/// gateway's.
#[derive(Debug, Clone)]
pub struct Mappings {
    spec: Arc<HashMap<String, Arc<ResourceMapping>>>,
    original: Arc<HashMap<String, Arc<ResourceMapping>>>,
}

type Resources = HashMap<String, Arc<ResourceMapping>>;

impl Mappings {
    /// From a folder; every file the gateway needs must be there. Each profile's overrides
    /// are applied to a set of their own, so a mistake in any shows at any start.
    pub fn load_dir(dir: &FsPath) -> Result<Mappings, MappingError> {
        let (mut spec, mut original) = (Resources::new(), Resources::new());
        for name in FILES {
            let path = dir.join(name);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| MappingError(format!("{}: {e}", path.display())))?;
            let shown = path.display().to_string();
            for other in PROFILES {
                parse_file(&shown, &text, Some(other))?;
            }
            let plain = parse_file(&shown, &text, Profile::Spec.mapping_overrides())?;
            let theirs = parse_file(&shown, &text, Profile::Original.mapping_overrides())?;
            spec.insert(plain.resource.clone(), Arc::new(plain));
            original.insert(theirs.resource.clone(), Arc::new(theirs));
        }
        Ok(Mappings {
            spec: Arc::new(spec),
            original: Arc::new(original),
        })
    }

    /// Magento 2's mappings built into the binary.
    pub fn embedded() -> Mappings {
        Mappings::builtin(crate::backend::registry::builtin_mappings("magento2"))
    }

    /// The mappings of a kind of store without `STOREGATE_MAPPINGS`: `folder` when it holds
    /// the files (so edits apply on restart), else the kind's copy built into the binary.
    pub fn of_backend(
        backend: crate::config::BackendKind,
        folder: &FsPath,
    ) -> Result<Mappings, MappingError> {
        if folder.join("product.toml").is_file() {
            return Mappings::load_dir(folder);
        }
        Ok(Mappings::builtin(
            crate::backend::registry::builtin_mappings(backend.as_str()),
        ))
    }

    /// A folder of mappings built into the binary (a kind's, from
    /// `crate::backend::registry`).
    pub fn builtin(files: &[(&str, &str)]) -> Mappings {
        let (mut spec, mut original) = (Resources::new(), Resources::new());
        for (name, text) in files {
            for (profile, into) in [
                (Profile::Spec, &mut spec),
                (Profile::Original, &mut original),
            ] {
                let mapping = parse_file(name, text, profile.mapping_overrides())
                    .expect("the built-in mappings are valid (tested)");
                into.insert(mapping.resource.clone(), Arc::new(mapping));
            }
        }
        Mappings {
            spec: Arc::new(spec),
            original: Arc::new(original),
        }
    }

    /// A resource's mapping in the profile of the request being served.
    pub fn get(&self, resource: &str) -> Arc<ResourceMapping> {
        let set = match Profile::current() {
            Profile::Spec => &self.spec,
            Profile::Original => &self.original,
        };
        set.get(resource)
            .cloned()
            .unwrap_or_else(|| panic!("mapping for {resource} is loaded at start"))
    }
}

#[cfg(test)]
mod openmage_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn embedded_mappings_are_valid_in_every_profile() {
        for kind in crate::backend::registry::STANDARD {
            let mappings = Mappings::builtin(kind.mappings);
            for profile in [Profile::Spec, Profile::Original] {
                let product =
                    crate::context::profile::sync_scope(profile, || mappings.get("product"));
                assert!(!product.view(UserType::Admin, View::Single).is_empty());
            }
            // The folder in the source tree loads too, every profile checked.
            let dir = FsPath::new(env!("CARGO_MANIFEST_DIR"))
                .join("mappings")
                .join(kind.name);
            Mappings::load_dir(&dir).unwrap();
        }
    }

    #[test]
    fn a_profile_replaces_fields_and_view_lists() {
        let text = r#"resource = "t"
[fields]
flag = { source = "r.flag", type = "flag" }
name = { source = "r.name", type = "string" }
[view.admin]
list = ["flag"]
single = ["flag", "name"]
[profile.original.fields]
flag = { source = "r.flag", type = "int" }
[profile.original.view.admin]
list = ["flag", "name"]
"#;
        let source = json!({"r": {"flag": true, "name": "n"}});
        let spec = parse_file("t.toml", text, None).unwrap();
        let original = parse_file("t.toml", text, Some("original")).unwrap();
        let render = |m: &ResourceMapping, list: View| {
            Value::Object(ResourceMapping::render(
                &m.view(UserType::Admin, list),
                &source,
                "",
            ))
        };
        assert_eq!(render(&spec, View::List), json!({"flag": "1"}));
        assert_eq!(
            render(&original, View::List),
            json!({"flag": 1, "name": "n"})
        );
        assert_eq!(
            render(&original, View::Single),
            json!({"flag": 1, "name": "n"})
        );
        let e = parse_file("t.toml", "resource = \"t\"\n[profile.m1.fields]\n", None).unwrap_err();
        assert!(e.0.contains("unknown profile profile.m1"), "{e}");
    }

    #[test]
    fn errors_name_file_and_line() {
        let refused = |text: &str| parse_file("p.toml", text, None).unwrap_err();
        let e = refused(
            "resource = \"product\"\n[fields]\nsku = { source = \"product.sku\", type = \"strng\" }\n",
        );
        assert!(e.0.starts_with("p.toml line 3 (sku = "), "{e}");
        let e = refused("resource = \"product\"\nbogus = 1\n");
        assert!(
            e.0.starts_with("p.toml line 2 (bogus = 1): unknown field `bogus`"),
            "{e}"
        );
        let e = refused(
            "resource = \"product\"\n[fields]\nsku = { source = \"product.sku\", type = \"string\" }\n[view.guest]\nsingle = [\"sku\",\n \"wieght\"]\n",
        );
        assert_eq!(
            e.0,
            "p.toml line 6: view.guest.single names unknown field \"wieght\""
        );
        let e = refused("resource = \"x\"\n[view.robot]\nsingle = []\n");
        assert!(e.0.contains("view.robot"), "{e}");
        let e =
            refused("resource = \"x\"\n[fields]\na = { source = \"x..y\", type = \"string\" }\n");
        assert!(e.0.starts_with("p.toml line 3"), "{e}");
    }

    #[test]
    fn a_misspelt_view_is_a_load_error_with_file_and_line() {
        let e = parse_file(
            "p.toml",
            "resource = \"product\"\n[fields]\nsku = { source = \"product.sku\", type = \"string\" }\n[view.guest]\nsingel = [\"sku\"]\n",
            None,
        )
        .unwrap_err();
        assert!(
            e.0.starts_with("p.toml line 5: unknown view view.guest.singel (expected single, "),
            "{e}"
        );
        for view in View::ALL {
            let text = format!(
                "resource = \"product\"\n[fields]\nsku = {{ source = \"product.sku\", type = \"string\" }}\n[view.guest]\n{} = [\"sku\"]\n",
                view.as_str()
            );
            let m = parse_file("p.toml", &text, None).unwrap();
            assert_eq!(m.view(UserType::Guest, view).len(), 1);
        }
    }

    #[test]
    fn renders_and_writes_nested_objects() {
        let m = parse_file(
            "t.toml",
            r#"resource = "t"
attribute_lists = ["custom_attributes"]
[fields]
id = { source = "product.id", type = "int_string" }
stock = { source = "product.extension_attributes.stock_item", type = "object", object = "stock" }
color = { source = "product.custom_attributes.color", type = "string", default = "none" }
[objects.stock]
qty = { source = "qty", type = "decimal4" }
in_stock = { source = "is_in_stock", type = "flag" }
[view.admin]
single = ["id", "stock", "color"]
"#,
            None,
        )
        .unwrap();
        let fields = m.view(UserType::Admin, View::Single);
        let source = json!({"product": {"id": 4, "extension_attributes": {"stock_item": {"qty": 2, "is_in_stock": true}}}});
        assert_eq!(
            Value::Object(ResourceMapping::render(&fields, &source, "")),
            json!({"id": "4", "stock": {"qty": "2.0000", "in_stock": "1"}, "color": "none"})
        );
        let mut body = json!({});
        let input = json!({"stock": {"qty": "5", "in_stock": "0"}, "color": "red", "ignored": 1});
        let written =
            ResourceMapping::write(&fields, input.as_object().unwrap(), &mut body).unwrap();
        assert_eq!(written, vec!["stock", "color"]);
        assert_eq!(
            body,
            json!({"product": {"extension_attributes": {"stock_item": {"qty": 5.0, "is_in_stock": false}},
                   "custom_attributes": [{"attribute_code": "color", "value": "red"}]}})
        );
        let errors = ResourceMapping::write(
            &fields,
            json!({"stock": {"qty": "x"}}).as_object().unwrap(),
            &mut body,
        )
        .unwrap_err();
        assert_eq!(
            errors,
            vec!["Please enter a valid number in the \"qty\" field."]
        );
    }
}
