//! List parameters of the original API: `page`, `limit`, `order`, `dir` and
//! `filter[n][attribute]=code&filter[n][<op>]=value`.
//!
//! Parsed by hand rather than with a general "bracket query" crate: the grammar is tiny, the
//! input is hostile, and we want hard bounds (number of filters, values per filter, query
//! length) and the original's error messages. The result is a typed [`ListParams`]; which
//! attributes may be filtered or sorted on is the resource's business (it depends on the
//! caller's view), so that check happens later.

use std::collections::BTreeMap;

use super::error::{ApiError, msg};

/// Default page size of the original.
pub const DEFAULT_LIMIT: u32 = 10;
/// Largest page size a client may ask for.
pub const MAX_LIMIT: u32 = 100;
const MAX_FILTERS: usize = 20;
const MAX_VALUES: usize = 300;
const MAX_QUERY_LEN: usize = 16 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortDir {
    Asc,
    Desc,
}

/// A comparison a client asked for. Names follow the original (and Magento's collections).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    Eq(String),
    Neq(String),
    Like(String),
    NotLike(String),
    In(Vec<String>),
    NotIn(Vec<String>),
    Gt(String),
    Lt(String),
    Gteq(String),
    Lteq(String),
    /// `from`/`to`: either bound may be missing.
    Range {
        from: Option<String>,
        to: Option<String>,
    },
    Null,
    NotNull,
    FindInSet(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    pub attribute: String,
    pub condition: Condition,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListParams {
    /// 1-based.
    pub page: u32,
    pub limit: u32,
    pub order: Option<String>,
    pub dir: SortDir,
    pub filters: Vec<Filter>,
    /// `?category_id=N` on products (the original's second way to list a category).
    pub category_id: Option<String>,
}

impl Default for ListParams {
    fn default() -> Self {
        ListParams {
            page: 1,
            limit: DEFAULT_LIMIT,
            order: None,
            dir: SortDir::Desc,
            filters: Vec::new(),
            category_id: None,
        }
    }
}

impl ListParams {
    /// Parses a raw query string (without the `?`).
    pub fn parse(query: Option<&str>) -> Result<ListParams, ApiError> {
        let mut params = ListParams::default();
        let Some(query) = query else {
            return Ok(params);
        };
        if query.len() > MAX_QUERY_LEN {
            return Err(ApiError::bad_request(msg::FILTERING));
        }
        // filter index -> (attribute, [(op, sub index, value)])
        let mut raw_filters: BTreeMap<u32, RawFilter> = BTreeMap::new();
        for (key, value) in form_urlencoded::parse(query.as_bytes()) {
            match &*key {
                "page" => params.page = parse_page(&value)?,
                "limit" => params.limit = parse_limit(&value)?,
                "order" => {
                    if value.is_empty() {
                        return Err(ApiError::bad_request(msg::ORDERING));
                    }
                    params.order = Some(value.into_owned());
                }
                "dir" => {
                    params.dir = if value.eq_ignore_ascii_case("asc") {
                        SortDir::Asc
                    } else {
                        SortDir::Desc
                    };
                }
                "category_id" => params.category_id = Some(value.into_owned()),
                k if k == "filter" || k.starts_with("filter[") => {
                    let (index, rest) = parse_filter_key(k)?;
                    if !raw_filters.contains_key(&index) && raw_filters.len() >= MAX_FILTERS {
                        return Err(ApiError::bad_request(msg::FILTERING));
                    }
                    let entry = raw_filters.entry(index).or_default();
                    match rest.as_slice() {
                        [field] if field == "attribute" => {
                            entry.attribute = Some(value.into_owned())
                        }
                        [op] => entry.parts.push((op.clone(), None, value.into_owned())),
                        [op, sub] => {
                            let sub: u32 = sub
                                .parse()
                                .map_err(|_| ApiError::bad_request(msg::FILTERING))?;
                            entry
                                .parts
                                .push((op.clone(), Some(sub), value.into_owned()))
                        }
                        _ => return Err(ApiError::bad_request(msg::FILTERING)),
                    }
                    if entry.parts.len() > MAX_VALUES {
                        return Err(ApiError::bad_request(msg::FILTERING));
                    }
                }
                _ => {}
            }
        }
        // Without `dir` the original sorted descending, which we keep; `dir` without
        // `order` changes nothing.
        for (_, raw) in raw_filters {
            params.filters.push(raw.into_filter()?);
        }
        Ok(params)
    }

    /// Zero-based offset of the first item of the page.
    pub fn offset(&self) -> u64 {
        u64::from(self.page.saturating_sub(1)) * u64::from(self.limit)
    }

    /// A canonical text of everything that changes a list's content, for cache keys: two
    /// queries that mean the same thing share an entry, and unknown parameters (cache
    /// busters) do not multiply entries.
    pub fn canonical(&self) -> String {
        let mut out = format!("p={}&l={}", self.page, self.limit);
        if let Some(order) = &self.order {
            out.push_str("&o=");
            out.push_str(order);
            out.push_str(if self.dir == SortDir::Asc {
                "&d=a"
            } else {
                "&d=d"
            });
        }
        if let Some(category) = &self.category_id {
            out.push_str("&c=");
            out.push_str(category);
        }
        for filter in &self.filters {
            out.push_str("&f=");
            out.push_str(&format!("{:?}", filter));
        }
        out
    }
}

#[derive(Default)]
struct RawFilter {
    attribute: Option<String>,
    parts: Vec<(String, Option<u32>, String)>,
}

impl RawFilter {
    fn into_filter(self) -> Result<Filter, ApiError> {
        let bad = || ApiError::bad_request(msg::FILTERING);
        let attribute = self.attribute.filter(|a| !a.is_empty()).ok_or_else(bad)?;
        let mut from = None;
        let mut to = None;
        let mut condition = None;
        // Sub-indexed values (`[in][0]=a&[in][1]=b`) are collected per operator.
        let mut lists: BTreeMap<String, Vec<(u32, String)>> = BTreeMap::new();
        for (op, sub, value) in self.parts {
            match (op.as_str(), sub) {
                ("from", None) => from = Some(value),
                ("to", None) => to = Some(value),
                ("in" | "nin", Some(i)) => lists.entry(op).or_default().push((i, value)),
                ("in" | "nin", None) => lists
                    .entry(op)
                    .or_default()
                    .extend(value.split(',').map(|v| (u32::MAX, v.trim().to_owned()))),
                (_, Some(_)) => return Err(bad()),
                (op, None) => {
                    if condition.is_some() {
                        return Err(bad());
                    }
                    condition = Some(match op {
                        "eq" => Condition::Eq(value),
                        "neq" => Condition::Neq(value),
                        "like" => Condition::Like(value),
                        "nlike" => Condition::NotLike(value),
                        "gt" => Condition::Gt(value),
                        "lt" => Condition::Lt(value),
                        "gteq" | "moreq" => Condition::Gteq(value),
                        "lteq" => Condition::Lteq(value),
                        "finset" => Condition::FindInSet(value),
                        "null" => Condition::Null,
                        "notnull" => Condition::NotNull,
                        _ => return Err(bad()),
                    });
                }
            }
        }
        for (op, mut values) in lists {
            if condition.is_some() {
                return Err(bad());
            }
            values.sort_by_key(|(i, _)| *i);
            let values: Vec<String> = values
                .into_iter()
                .map(|(_, v)| v)
                .filter(|v| !v.is_empty())
                .collect();
            if values.is_empty() || values.len() > MAX_VALUES {
                return Err(bad());
            }
            condition = Some(if op == "in" {
                Condition::In(values)
            } else {
                Condition::NotIn(values)
            });
        }
        if from.is_some() || to.is_some() {
            if condition.is_some() {
                return Err(bad());
            }
            condition = Some(Condition::Range { from, to });
        }
        let condition = condition.ok_or_else(bad)?;
        Ok(Filter {
            attribute,
            condition,
        })
    }
}

fn parse_page(value: &str) -> Result<u32, ApiError> {
    let page: i64 = value
        .trim()
        .parse()
        .map_err(|_| ApiError::bad_request(msg::PAGING))?;
    if page < 0 {
        return Err(ApiError::bad_request(msg::PAGING));
    }
    // Page 0 is page 1, as in the original. Absurd pages are simply past the end.
    Ok(page.clamp(1, i64::from(u32::MAX / 2)) as u32)
}

fn parse_limit(value: &str) -> Result<u32, ApiError> {
    let limit: i64 = value
        .trim()
        .parse()
        .map_err(|_| ApiError::bad_request(msg::PAGING_LIMIT))?;
    // The original let `limit=0` through and then returned every row; a gateway must not.
    if !(1..=i64::from(MAX_LIMIT)).contains(&limit) {
        return Err(ApiError::bad_request(msg::PAGING_LIMIT));
    }
    Ok(limit as u32)
}

/// `filter[3][in][0]` -> (3, ["in", "0"]).
fn parse_filter_key(key: &str) -> Result<(u32, Vec<String>), ApiError> {
    let bad = || ApiError::bad_request(msg::FILTERING);
    let rest = key.strip_prefix("filter").ok_or_else(bad)?;
    let mut segments = Vec::new();
    let mut remaining = rest;
    while !remaining.is_empty() {
        let inner = remaining.strip_prefix('[').ok_or_else(bad)?;
        let end = inner.find(']').ok_or_else(bad)?;
        segments.push(inner[..end].to_owned());
        remaining = &inner[end + 1..];
        if segments.len() > 3 {
            return Err(bad());
        }
    }
    let Some((index, rest)) = segments.split_first() else {
        return Err(bad());
    };
    let index: u32 = index.parse().map_err(|_| bad())?;
    if rest.is_empty() {
        return Err(bad());
    }
    Ok((index, rest.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(q: &str) -> Result<ListParams, ApiError> {
        ListParams::parse(Some(q))
    }

    #[test]
    fn defaults() {
        let p = ListParams::parse(None).unwrap();
        assert_eq!((p.page, p.limit, p.dir), (1, 10, SortDir::Desc));
    }

    #[test]
    fn paging_rules_and_messages() {
        assert_eq!(parse("page=0").unwrap().page, 1);
        assert_eq!(parse("page=3&limit=20").unwrap().offset(), 40);
        assert_eq!(parse("page=-1").unwrap_err().first_message(), msg::PAGING);
        assert_eq!(parse("page=x").unwrap_err().first_message(), msg::PAGING);
        assert_eq!(
            parse("limit=101").unwrap_err().first_message(),
            msg::PAGING_LIMIT
        );
        assert_eq!(
            parse("limit=-5").unwrap_err().first_message(),
            msg::PAGING_LIMIT
        );
        assert_eq!(
            parse("limit=0").unwrap_err().first_message(),
            msg::PAGING_LIMIT
        );
        assert_eq!(parse("limit=100").unwrap().limit, 100);
    }

    #[test]
    fn order_and_dir() {
        let p = parse("order=name&dir=ASC").unwrap();
        assert_eq!((p.order.as_deref(), p.dir), (Some("name"), SortDir::Asc));
        assert_eq!(parse("order=name&dir=dsc").unwrap().dir, SortDir::Desc);
        assert_eq!(parse("order=").unwrap_err().first_message(), msg::ORDERING);
    }

    #[test]
    fn filters() {
        let p = parse(
            "filter[0][attribute]=entity_id&filter[0][in][0]=1&filter[0][in][1]=3\
             &filter[1][attribute]=price&filter[1][from]=10&filter[1][to]=20\
             &filter[2][attribute]=name&filter[2][like]=%25bag%25",
        )
        .unwrap();
        assert_eq!(
            p.filters,
            vec![
                Filter {
                    attribute: "entity_id".into(),
                    condition: Condition::In(vec!["1".into(), "3".into()])
                },
                Filter {
                    attribute: "price".into(),
                    condition: Condition::Range {
                        from: Some("10".into()),
                        to: Some("20".into())
                    }
                },
                Filter {
                    attribute: "name".into(),
                    condition: Condition::Like("%bag%".into())
                },
            ]
        );
        let p = parse("filter[0][attribute]=sku&filter[0][nin]=a,b").unwrap();
        assert_eq!(
            p.filters[0].condition,
            Condition::NotIn(vec!["a".into(), "b".into()])
        );
    }

    #[test]
    fn bad_filters_are_filtering_errors() {
        for q in [
            "filter=1",
            "filter[x][attribute]=a",
            "filter[0][eq]=1",
            "filter[0][attribute]=a",
            "filter[0][attribute]=a&filter[0][bogus]=1",
            "filter[0][attribute]=a&filter[0][eq]=1&filter[0][neq]=2",
            "filter[0][attribute]=a&filter[0][eq][1]=1",
            "filter[0][attribute]=a&filter[0][in][0][1]=1",
            "filter[0]attribute=a",
        ] {
            assert_eq!(parse(q).unwrap_err().first_message(), msg::FILTERING, "{q}");
        }
        let many: String = (0..25)
            .map(|i| format!("filter[{i}][attribute]=a&filter[{i}][eq]=1&"))
            .collect();
        assert!(parse(&many).is_err());
    }

    #[test]
    fn canonical_ignores_unknown_parameters() {
        assert_eq!(
            parse("page=2&_=123").unwrap().canonical(),
            parse("page=2").unwrap().canonical()
        );
    }
}
