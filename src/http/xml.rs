//! The XML dialect of the API: a writer and a reader for `<service_api>` documents.
//!
//! Writing follows the original renderer's rules so legacy parsers keep working: the root is
//! `<service_api>`; list items are `<data_item>`; a map whose keys are all numbers is a list
//! (keys dropped); any other key that starts with a digit becomes `data_item_<key>`; `null`,
//! `false`, empty strings and empty lists are empty elements; `true` is `1`. The writer never
//! emits attributes.
//!
//! Reading is the inverse, and it is hostile-input safe: no DTDs (so no entity expansion, no
//! external entities), only the five predefined entities and character references, a depth
//! limit and an element-count limit. The body size is bounded before we get here.
//! Attributes become fields (`<data_item item_id="5">` reads as `{"item_id": "5"}`), repeated
//! names and `data_item` children become lists, leaves are strings.

use std::fmt::Write as _;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};
use serde_json::{Map, Value};

const ITEM: &str = "data_item";

/// Bounds on what the reader accepts, so a small body cannot make us do a lot of work.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_depth: usize,
    pub max_elements: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 32,
            max_elements: 20_000,
        }
    }
}

/// Why a document could not be read. The client sees `Decoding error.` and, in the spec
/// profile, this reason (a syntax error names the byte where reading stopped); the log
/// always has it.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("malformed XML: {0}")]
    Syntax(String),
    #[error("document type declarations are not accepted")]
    Doctype,
    #[error("unknown entity reference &{0};")]
    Entity(String),
    #[error("nesting deeper than {0} levels")]
    TooDeep(usize),
    #[error("more than {0} elements")]
    TooManyElements(usize),
    #[error("no root element")]
    Empty,
}

// ---------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------

/// How the top-level map of a document is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopMap {
    /// The original's rule: all-numeric keys make a list of `<data_item>`s, other keys are
    /// element names.
    Natural,
    /// One `<data_item>` per value whatever the keys (the product list, which JSON keys by
    /// id).
    Items,
    /// Every key is an element name, numeric ones included: `{"31": {...}}` is
    /// `<data_item_31>...</data_item_31>` (GET /orders).
    Keys,
}

/// Renders a whole document.
pub fn write_document(value: &Value, top: TopMap) -> String {
    // The root's name and the top level's form are the profile's (`crate::context::profile`).
    let profile = crate::context::profile::Profile::current();
    let root = profile.xml_root();
    let top = match top {
        TopMap::Keys if profile.keyed_elements_as_items() => TopMap::Items,
        top => top,
    };
    let mut out = String::with_capacity(256);
    out.push_str("<?xml version=\"1.0\"?>\n");
    let open = |out: &mut String| {
        out.push('<');
        out.push_str(root);
        out.push('>');
    };
    let close = |out: &mut String| {
        out.push_str("</");
        out.push_str(root);
        out.push('>');
    };
    match value {
        Value::Array(items) if items.is_empty() => {
            out.push('<');
            out.push_str(root);
            out.push_str("/>");
        }
        Value::Object(map) if map.is_empty() => {
            out.push('<');
            out.push_str(root);
            out.push_str("/>");
        }
        Value::Array(items) => {
            open(&mut out);
            for item in items {
                write_element(&mut out, ITEM, item);
            }
            close(&mut out);
        }
        Value::Object(map) => {
            open(&mut out);
            let as_items = match top {
                TopMap::Natural => all_keys_numeric(map),
                TopMap::Items => true,
                TopMap::Keys => false,
            };
            if as_items {
                for item in map.values() {
                    write_element(&mut out, ITEM, item);
                }
            } else {
                write_children(&mut out, map);
            }
            close(&mut out);
        }
        scalar => {
            open(&mut out);
            write_element(&mut out, ITEM, scalar);
            close(&mut out);
        }
    }
    out
}

fn all_keys_numeric(map: &Map<String, Value>) -> bool {
    !map.is_empty()
        && map
            .keys()
            .all(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
}

fn write_children(out: &mut String, map: &Map<String, Value>) {
    for (key, value) in map {
        let name = element_name(key);
        write_element(out, &name, value);
    }
}

fn write_element(out: &mut String, name: &str, value: &Value) {
    match value {
        Value::Null | Value::Bool(false) => empty(out, name),
        Value::Bool(true) => {
            open(out, name);
            out.push('1');
            close(out, name);
        }
        Value::Number(n) => {
            open(out, name);
            let _ = write!(out, "{n}");
            close(out, name);
        }
        Value::String(s) if s.is_empty() => empty(out, name),
        Value::String(s) => {
            open(out, name);
            escape_text(out, s);
            close(out, name);
        }
        Value::Array(items) if items.is_empty() => empty(out, name),
        Value::Array(items) => {
            open(out, name);
            for item in items {
                write_element(out, ITEM, item);
            }
            close(out, name);
        }
        Value::Object(map) if map.is_empty() => empty(out, name),
        Value::Object(map) => {
            open(out, name);
            if all_keys_numeric(map) {
                for item in map.values() {
                    write_element(out, ITEM, item);
                }
            } else {
                write_children(out, map);
            }
            close(out, name);
        }
    }
}

fn open(out: &mut String, name: &str) {
    out.push('<');
    out.push_str(name);
    out.push('>');
}
fn close(out: &mut String, name: &str) {
    out.push_str("</");
    out.push_str(name);
    out.push('>');
}
fn empty(out: &mut String, name: &str) {
    out.push('<');
    out.push_str(name);
    out.push_str("/>");
}

/// Escapes text content. Characters XML 1.0 cannot carry at all (most C0 controls) are
/// dropped: an upstream value must never make us emit a document clients cannot parse.
fn escape_text(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
}

/// Turns a map key into an element name the way the original did, then makes sure the
/// result is a legal XML name whatever the key was.
pub fn element_name(key: &str) -> String {
    let mut name = String::with_capacity(key.len() + 10);
    for c in key.chars() {
        match c {
            ' ' | ':' => name.push('_'),
            c if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' => name.push(c),
            // The original removed punctuation; we also drop anything else that is not a
            // safe ASCII name character.
            _ => {}
        }
    }
    let trimmed = name.trim_matches('_');
    let starts_badly = trimmed
        .chars()
        .next()
        .is_none_or(|c| c.is_ascii_digit() || c == ',' || c == '.' || c == '-');
    if trimmed.is_empty() {
        ITEM.to_owned()
    } else if starts_badly {
        format!("{ITEM}_{trimmed}")
    } else {
        trimmed.to_owned()
    }
}

// ---------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------

/// An element while it is being read.
struct Node {
    name: String,
    attributes: Vec<(String, String)>,
    children: Vec<(String, Value)>,
    text: String,
}

impl Node {
    fn start(event: &BytesStart<'_>) -> Result<Node, ReadError> {
        let name = event.name().as_ref().to_owned();
        let mut attributes = Vec::new();
        for attribute in event.attributes() {
            let attribute = attribute.map_err(|e| ReadError::Syntax(e.to_string()))?;
            let value = attribute
                .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .map_err(|e| ReadError::Syntax(e.to_string()))?;
            attributes.push((attribute.key.as_ref().to_owned(), value.into_owned()));
        }
        Ok(Node {
            name,
            attributes,
            children: Vec::new(),
            text: String::new(),
        })
    }

    /// The value this element stands for.
    fn into_value(self) -> Value {
        if self.children.is_empty() {
            // `<qty value="5"/>` is how some clients write a leaf.
            if let [(key, value)] = self.attributes.as_slice()
                && key == "value"
            {
                return Value::String(value.clone());
            }
            if self.attributes.is_empty() {
                return Value::String(self.text.trim().to_owned());
            }
        }
        let only_items = self.attributes.is_empty()
            && !self.children.is_empty()
            && self.children.iter().all(|(name, _)| name == ITEM);
        if only_items {
            return Value::Array(self.children.into_iter().map(|(_, v)| v).collect());
        }
        let mut map = Map::new();
        for (key, value) in self.attributes {
            map.insert(key, Value::String(value));
        }
        // Names seen more than once: their entry is the list the repeats were collected in.
        let mut repeated: Vec<String> = Vec::new();
        for (key, value) in self.children {
            if key == ITEM {
                // `data_item` children mixed with named ones: collect them under one key.
                match map.get_mut(ITEM) {
                    Some(Value::Array(list)) => list.push(value),
                    _ => {
                        map.insert(key, Value::Array(vec![value]));
                    }
                }
            } else if repeated.contains(&key) {
                if let Some(Value::Array(list)) = map.get_mut(&key) {
                    list.push(value);
                }
            } else if let Some(existing) = map.get_mut(&key) {
                let first = existing.take();
                *existing = Value::Array(vec![first, value]);
                repeated.push(key);
            } else {
                map.insert(key, value);
            }
        }
        Value::Object(map)
    }
}

/// Reads a document into the same tree a JSON body decodes to. The root element's name is
/// not checked, as in the original.
pub fn read_document(input: &str, limits: Limits) -> Result<Value, ReadError> {
    let mut reader = Reader::from_str(input);
    reader.config_mut().trim_text(false);
    reader.config_mut().check_end_names = true;

    let mut stack: Vec<Node> = Vec::new();
    let mut elements = 0usize;
    let mut root: Option<Value> = None;

    loop {
        let event = reader
            .read_event()
            .map_err(|e| ReadError::Syntax(format!("{e} (at byte {})", reader.error_position())))?;
        match event {
            Event::Start(start) => {
                elements += 1;
                may_open(&limits, root.is_some(), elements, stack.len())?;
                stack.push(Node::start(&start)?);
            }
            Event::Empty(start) => {
                elements += 1;
                may_open(&limits, root.is_some(), elements, stack.len())?;
                let node = Node::start(&start)?;
                finish(node, &mut stack, &mut root);
            }
            Event::End(_) => {
                let node = stack
                    .pop()
                    .ok_or_else(|| ReadError::Syntax("unexpected end tag".into()))?;
                finish(node, &mut stack, &mut root);
            }
            Event::Text(text) => {
                let content = text.xml10_content();
                match stack.last_mut() {
                    Some(node) => node.text.push_str(&content),
                    None if content.trim().is_empty() => {}
                    None => return Err(ReadError::Syntax("text outside the root element".into())),
                }
            }
            Event::CData(data) => {
                let content: String = data.into_inner().into_owned();
                match stack.last_mut() {
                    Some(node) => node.text.push_str(&content),
                    None => return Err(ReadError::Syntax("CDATA outside the root element".into())),
                }
            }
            Event::GeneralRef(reference) => {
                let resolved = match reference
                    .resolve_char_ref()
                    .map_err(|e| ReadError::Syntax(e.to_string()))?
                {
                    Some(c) => c,
                    None => match &*reference {
                        "amp" => '&',
                        "lt" => '<',
                        "gt" => '>',
                        "quot" => '"',
                        "apos" => '\'',
                        other => return Err(ReadError::Entity(other.to_owned())),
                    },
                };
                match stack.last_mut() {
                    Some(node) => node.text.push(resolved),
                    None => return Err(ReadError::Syntax("reference outside the root".into())),
                }
            }
            Event::DocType(_) => return Err(ReadError::Doctype),
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
            Event::Eof => break,
        }
    }
    if !stack.is_empty() {
        return Err(ReadError::Syntax("unclosed element".into()));
    }
    root.ok_or(ReadError::Empty)
}

/// Whether one more element may open: not after the root element has closed, not past
/// the element count, not deeper than the limit (checked in that order).
fn may_open(
    limits: &Limits,
    after_root: bool,
    elements: usize,
    depth: usize,
) -> Result<(), ReadError> {
    if after_root {
        return Err(ReadError::Syntax("content after the root element".into()));
    }
    if elements > limits.max_elements {
        return Err(ReadError::TooManyElements(limits.max_elements));
    }
    if depth >= limits.max_depth {
        return Err(ReadError::TooDeep(limits.max_depth));
    }
    Ok(())
}

fn finish(node: Node, stack: &mut [Node], root: &mut Option<Value>) {
    let name = node.name.clone();
    let value = node.into_value();
    match stack.last_mut() {
        Some(parent) => parent.children.push((name, value)),
        None => *root = Some(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(s: &str) -> Result<Value, ReadError> {
        read_document(s, Limits::default())
    }

    #[test]
    fn writes_records_lists_and_scalars_like_the_original() {
        let doc = json!({"a": 1, "5": "five", "2x": "y", "n": null, "f": false, "t": true,
                          "list": ["x", "y"], "empty": [], "s": "a&b<c>"});
        assert_eq!(
            write_document(&doc, TopMap::Natural),
            "<?xml version=\"1.0\"?>\n<service_api><a>1</a><data_item_5>five</data_item_5>\
             <data_item_2x>y</data_item_2x><n/><f/><t>1</t><list><data_item>x</data_item>\
             <data_item>y</data_item></list><empty/><s>a&amp;b&lt;c&gt;</s></service_api>"
        );
    }

    #[test]
    fn numeric_keyed_maps_are_lists_and_keyed_lists_can_be_forced() {
        let doc = json!({"16": {"sku": "a"}, "17": {"sku": "b"}});
        let xml = write_document(&doc, TopMap::Natural);
        assert!(xml.contains("<service_api><data_item><sku>a</sku></data_item><data_item>"));
        let doc = json!({"x16": {"sku": "a"}});
        assert!(
            write_document(&doc, TopMap::Items).contains("<service_api><data_item><sku>a</sku>")
        );
        assert_eq!(
            write_document(&json!([]), TopMap::Natural),
            "<?xml version=\"1.0\"?>\n<service_api/>"
        );
        assert!(
            write_document(&json!("x"), TopMap::Natural)
                .contains("<service_api><data_item>x</data_item>")
        );
    }

    #[test]
    fn keyed_documents_keep_numeric_keys_as_element_names() {
        let doc = json!({"31": {"n": [1, 2]}, "32": {"n": []}});
        assert_eq!(
            write_document(&doc, TopMap::Keys),
            "<?xml version=\"1.0\"?>\n<service_api><data_item_31><n><data_item>1</data_item>\
             <data_item>2</data_item></n></data_item_31><data_item_32><n/></data_item_32>\
             </service_api>"
        );
        assert_eq!(
            write_document(&json!({}), TopMap::Keys),
            "<?xml version=\"1.0\"?>\n<service_api/>"
        );
    }

    #[test]
    fn element_names_are_always_legal() {
        assert_eq!(element_name("sku"), "sku");
        assert_eq!(element_name("12"), "data_item_12");
        assert_eq!(element_name("a b:c"), "a_b_c");
        assert_eq!(element_name("<script>"), "script");
        assert_eq!(element_name("!!"), "data_item");
        assert_eq!(element_name("-x"), "data_item_-x");
        assert_eq!(element_name("é"), "data_item");
    }

    #[test]
    fn control_characters_never_reach_the_output() {
        let xml = write_document(&json!({"s": "a\u{0}b\u{1b}c"}), TopMap::Natural);
        assert!(xml.contains("<s>abc</s>"));
    }

    #[test]
    fn reads_records_lists_attributes_and_empty_values() {
        let v = read(
            "<?xml version=\"1.0\"?><service_api><sku>a</sku><empty/><street>\
             <data_item>l1</data_item><data_item>l2</data_item></street>\
             <stock_data><qty> 5 </qty></stock_data></service_api>",
        )
        .unwrap();
        assert_eq!(
            v,
            json!({"sku": "a", "empty": "", "street": ["l1", "l2"], "stock_data": {"qty": "5"}})
        );
        let v = read(
            "<service_api><data_item item_id=\"1\"><qty>5</qty></data_item>\
             <data_item item_id=\"2\"><qty value=\"6\"/></data_item></service_api>",
        )
        .unwrap();
        assert_eq!(
            v,
            json!([{"item_id": "1", "qty": "5"}, {"item_id": "2", "qty": "6"}])
        );
    }

    #[test]
    fn repeated_names_become_lists() {
        let v = read("<r><a>1</a><a>2</a><a>3</a><b>x</b></r>").unwrap();
        assert_eq!(v, json!({"a": ["1", "2", "3"], "b": "x"}));
    }

    #[test]
    fn entities_cdata_and_char_refs() {
        let v = read("<r><a>x &amp; y &#65;&#x42;</a><b><![CDATA[<raw>]]></b></r>").unwrap();
        assert_eq!(v, json!({"a": "x & y AB", "b": "<raw>"}));
        assert!(matches!(
            read("<r><a>&foo;</a></r>"),
            Err(ReadError::Entity(_))
        ));
    }

    #[test]
    fn hostile_documents_are_refused() {
        let billion = "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\">\
                       <!ENTITY lol2 \"&lol;&lol;\">]><r>&lol2;</r>";
        assert!(matches!(read(billion), Err(ReadError::Doctype)));
        let xxe = "<!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><r>&x;</r>";
        assert!(read(xxe).is_err());
        let deep = "<a>".repeat(100) + &"</a>".repeat(100);
        assert!(matches!(read(&deep), Err(ReadError::TooDeep(_))));
        let many = format!("<r>{}</r>", "<a/>".repeat(30_000));
        assert!(matches!(read(&many), Err(ReadError::TooManyElements(_))));
        assert!(read("<a><b></a></b>").is_err());
        assert!(read("").is_err());
        assert!(read("<a></a><b></b>").is_err());
        assert!(read("not xml").is_err());
    }
}
