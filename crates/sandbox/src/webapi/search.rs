//! `searchCriteria`: parsing, filtering, sorting and paging like Magento's collections.
//!
//! Filters inside one group are OR-ed and groups are AND-ed. Comparisons follow MySQL with
//! Magento's default case-insensitive collation: `eq`/`like` ignore case, numbers compare as
//! numbers, a missing value (SQL `NULL`) matches nothing but `null`. Unknown condition types
//! fall back to `eq`, as Magento's SQL adapter does. Paging is the real-world harsh variant: a
//! page past the end returns the last page again, so clients must page from `total_count`.
//! With Web API input limits on (2.4.7 default) a missing page size means 20 and more than 300
//! is refused.

use std::borrow::Cow;
use std::cmp::Ordering;

use serde_json::{Map, Value, json};

use crate::webapi::error::{ApiError, ApiResult, Params, named};
use crate::webapi::input;
use crate::webapi::messages;

pub(crate) const MAX_PAGE_SIZE: u64 = 300;
pub(crate) const DEFAULT_PAGE_SIZE: u64 = 20;

/// One column value of a row, as SQL would see it.
#[derive(Debug, Clone)]
pub(crate) enum Scalar<'a> {
    Null,
    Num(f64),
    Str(Cow<'a, str>),
}

impl<'a> Scalar<'a> {
    pub(crate) fn text(value: impl Into<Cow<'a, str>>) -> Self {
        Scalar::Str(value.into())
    }

    pub(crate) fn from_json(value: Option<&'a Value>) -> Self {
        match value {
            None | Some(Value::Null) => Scalar::Null,
            Some(Value::Number(n)) => n.as_f64().map_or(Scalar::Null, Scalar::Num),
            Some(Value::String(s)) => Scalar::Str(Cow::Borrowed(s.as_str())),
            Some(Value::Bool(b)) => Scalar::Num(if *b { 1.0 } else { 0.0 }),
            Some(other) => Scalar::Str(Cow::Owned(other.to_string())),
        }
    }

    fn as_text(&self) -> Option<Cow<'_, str>> {
        match self {
            Scalar::Null => None,
            Scalar::Num(n) => Some(Cow::Owned(match input::num(*n) {
                Value::Number(num) => num.to_string(),
                _ => n.to_string(),
            })),
            Scalar::Str(s) => Some(Cow::Borrowed(s.as_ref())),
        }
    }
}

/// What a row holds for a filtered field.
#[derive(Debug, Clone)]
pub(crate) enum FieldValue<'a> {
    One(Scalar<'a>),
    /// Multi-valued relations (category ids, website ids): `eq`/`in` match any member,
    /// `neq`/`nin` match when no member does.
    Set(Vec<Scalar<'a>>),
}

#[derive(Debug, Clone)]
pub(crate) struct Filter {
    pub(crate) field: String,
    pub(crate) value: Option<String>,
    pub(crate) condition: Option<String>,
}

impl Filter {
    pub(crate) fn condition(&self) -> &str {
        self.condition.as_deref().unwrap_or("eq")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Asc,
    Desc,
}

#[derive(Debug, Clone)]
pub(crate) struct SortOrder {
    pub(crate) field: String,
    pub(crate) direction: Direction,
    given_direction: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct SearchCriteria {
    pub(crate) groups: Vec<Vec<Filter>>,
    pub(crate) sorts: Vec<SortOrder>,
    /// `None` means no limit (an explicit `pageSize=0`).
    pub(crate) page_size: Option<u64>,
    requested_page: Option<i64>,
}

fn values_of(value: &Value) -> Vec<&Value> {
    match value {
        Value::Array(list) => list.iter().collect(),
        Value::Object(map) => map.values().collect(),
        _ => Vec::new(),
    }
}

fn filter_value_text(value: &Value) -> ApiResult<String> {
    match value {
        Value::Array(_) | Value::Object(_) => Ok(values_of(value)
            .into_iter()
            .map(input::to_string)
            .collect::<ApiResult<Vec<_>>>()?
            .join(",")),
        other => input::to_string(other),
    }
}

impl SearchCriteria {
    /// Reads the `searchCriteria` query parameter. `Ok(None)` when it is absent.
    pub(crate) fn from_query(query: &Map<String, Value>) -> ApiResult<Option<SearchCriteria>> {
        let Some(raw) = query.get("searchCriteria") else {
            return Ok(None);
        };
        let Value::Object(map) = raw else {
            // `?searchCriteria=` (an empty criteria object) is the documented "no filter".
            return Ok(Some(SearchCriteria {
                page_size: Some(DEFAULT_PAGE_SIZE),
                ..SearchCriteria::default()
            }));
        };
        let mut criteria = SearchCriteria::default();
        if let Some(groups) = input::present(map, "filter_groups") {
            for group in values_of(groups) {
                let Value::Object(group) = group else {
                    return Err(ApiError::type_mismatch(group, "object"));
                };
                let mut filters = Vec::new();
                if let Some(list) = input::present(group, "filters") {
                    for filter in values_of(list) {
                        let Value::Object(filter) = filter else {
                            return Err(ApiError::type_mismatch(filter, "object"));
                        };
                        let field = input::opt_string(filter, "field")?
                            .ok_or_else(|| ApiError::required("field"))?;
                        let value = input::present(filter, "value")
                            .map(filter_value_text)
                            .transpose()?;
                        let condition = input::opt_string(filter, "condition_type")?
                            .filter(|c| !c.is_empty())
                            .map(|c| c.to_ascii_lowercase());
                        filters.push(Filter {
                            field,
                            value,
                            condition,
                        });
                    }
                }
                criteria.groups.push(filters);
            }
        }
        if let Some(sorts) = input::present(map, "sort_orders") {
            for sort in values_of(sorts) {
                let Value::Object(sort) = sort else {
                    return Err(ApiError::type_mismatch(sort, "object"));
                };
                let field = input::opt_string(sort, "field")?.unwrap_or_default();
                if field
                    .chars()
                    .any(|c| !(c.is_ascii_alphanumeric() || c == '_'))
                {
                    return Err(ApiError::bad_request_with(
                        messages::SORT_FIELD_SYMBOLS,
                        Params::List(vec![json!(field)]),
                    ));
                }
                let given_direction = input::opt_string(sort, "direction")?;
                let direction = match given_direction.as_deref().map(str::to_ascii_uppercase) {
                    None => Direction::Asc,
                    Some(d) if d == "ASC" => Direction::Asc,
                    Some(d) if d == "DESC" => Direction::Desc,
                    Some(_) => {
                        return Err(ApiError::bad_request_with(
                            messages::SORT_DIRECTION,
                            Params::List(vec![json!("ASC"), json!("DESC")]),
                        ));
                    }
                };
                criteria.sorts.push(SortOrder {
                    field,
                    direction,
                    given_direction: given_direction.map(|d| d.to_ascii_uppercase()),
                });
            }
        }
        criteria.page_size = match input::opt_int(map, "page_size")? {
            None => Some(DEFAULT_PAGE_SIZE),
            Some(size) if size > MAX_PAGE_SIZE as i64 => {
                return Err(ApiError::bad_request_with(
                    messages::MAX_PAGE_SIZE,
                    named(&[("max", json!(MAX_PAGE_SIZE))]),
                ));
            }
            Some(size) if size <= 0 => None,
            Some(size) => Some(size as u64),
        };
        criteria.requested_page = input::opt_int(map, "current_page")?;
        Ok(Some(criteria))
    }

    /// The parameter is mandatory for every `getList` service; Magento names it in the error.
    pub(crate) fn required(query: &Map<String, Value>) -> ApiResult<SearchCriteria> {
        SearchCriteria::from_query(query)?.ok_or_else(|| ApiError::required("searchCriteria"))
    }

    /// Every field the criteria filter or sort on, for up-front validation.
    pub(crate) fn filter_fields(&self) -> impl Iterator<Item = &str> {
        self.groups.iter().flatten().map(|f| f.field.as_str())
    }

    /// Applies filter groups to one row. `lookup` returns `None` for a field the row type does
    /// not know, which then behaves as SQL `NULL`.
    pub(crate) fn matches<'a>(&self, lookup: impl Fn(&str) -> Option<FieldValue<'a>>) -> bool {
        self.groups.iter().all(|group| {
            group.is_empty()
                || group.iter().any(|filter| {
                    let value = lookup(&filter.field).unwrap_or(FieldValue::One(Scalar::Null));
                    evaluate(filter.condition(), &value, filter.value.as_deref())
                })
        })
    }

    /// Sorts rows by the requested orders; rows keep their natural order on ties.
    pub(crate) fn sort<'a, T>(
        &self,
        rows: &mut [T],
        lookup: impl Fn(&T, &str) -> Option<FieldValue<'a>>,
    ) {
        if self.sorts.is_empty() {
            return;
        }
        rows.sort_by(|a, b| {
            for order in &self.sorts {
                let left = first_scalar(lookup(a, &order.field));
                let right = first_scalar(lookup(b, &order.field));
                let ord = compare_for_sort(&left, &right);
                let ord = if order.direction == Direction::Desc {
                    ord.reverse()
                } else {
                    ord
                };
                if ord != Ordering::Equal {
                    return ord;
                }
            }
            Ordering::Equal
        });
    }

    /// Cuts one page out of the filtered rows, returning it with the total count.
    pub(crate) fn page<T>(&self, rows: Vec<T>) -> (Vec<T>, usize) {
        let total = rows.len();
        let Some(size) = self.page_size else {
            return (rows, total);
        };
        let size = size as usize;
        let last_page = if total == 0 { 1 } else { total.div_ceil(size) };
        let requested = self.requested_page.unwrap_or(1).max(1) as usize;
        let page = requested.min(last_page);
        let start = (page - 1) * size;
        let items = rows.into_iter().skip(start).take(size).collect();
        (items, total)
    }

    /// The `search_criteria` object echoed in list responses.
    pub(crate) fn echo(&self) -> Value {
        let groups: Vec<Value> = self
            .groups
            .iter()
            .map(|filters| {
                let filters: Vec<Value> = filters
                    .iter()
                    .map(|f| {
                        let mut out = Map::new();
                        out.insert("field".into(), json!(f.field));
                        out.insert("value".into(), json!(f.value.clone().unwrap_or_default()));
                        if let Some(condition) = &f.condition {
                            out.insert("condition_type".into(), json!(condition));
                        }
                        Value::Object(out)
                    })
                    .collect();
                json!({ "filters": filters })
            })
            .collect();
        let mut out = Map::new();
        out.insert("filter_groups".into(), Value::Array(groups));
        if !self.sorts.is_empty() {
            let sorts: Vec<Value> = self
                .sorts
                .iter()
                .map(|s| {
                    let mut out = Map::new();
                    out.insert("field".into(), json!(s.field));
                    out.insert(
                        "direction".into(),
                        json!(s.given_direction.clone().unwrap_or_else(|| "ASC".into())),
                    );
                    Value::Object(out)
                })
                .collect();
            out.insert("sort_orders".into(), Value::Array(sorts));
        }
        if let Some(size) = self.page_size {
            out.insert("page_size".into(), json!(size));
        } else {
            out.insert("page_size".into(), json!(0));
        }
        if let Some(page) = self.requested_page {
            out.insert("current_page".into(), json!(page));
        }
        Value::Object(out)
    }
}

fn first_scalar(value: Option<FieldValue<'_>>) -> Scalar<'_> {
    match value {
        None => Scalar::Null,
        Some(FieldValue::One(s)) => s,
        Some(FieldValue::Set(set)) => set.into_iter().next().unwrap_or(Scalar::Null),
    }
}

/// MySQL puts NULL first in ascending order.
fn compare_for_sort(a: &Scalar<'_>, b: &Scalar<'_>) -> Ordering {
    match (a, b) {
        (Scalar::Null, Scalar::Null) => Ordering::Equal,
        (Scalar::Null, _) => Ordering::Less,
        (_, Scalar::Null) => Ordering::Greater,
        _ => compare(a, b.as_text().as_deref().unwrap_or("")).unwrap_or(Ordering::Equal),
    }
}

/// Compares a column value with a filter operand, text case-insensitively.
fn compare(value: &Scalar<'_>, operand: &str) -> Option<Ordering> {
    // Numeric columns compare numerically; text columns (SKUs, increment ids) as text, so
    // `000000001` is not `1`, as in MySQL.
    if let (Scalar::Num(left), Ok(right)) = (value, operand.trim().parse::<f64>())
        && right.is_finite()
    {
        return left.partial_cmp(&right);
    }
    let text = value.as_text()?;
    Some(text.to_lowercase().cmp(&operand.to_lowercase()))
}

fn equals(value: &Scalar<'_>, operand: &str) -> bool {
    compare(value, operand) == Some(Ordering::Equal)
}

/// SQL `LIKE` with `%` and `_`, case-insensitive.
pub(crate) fn sql_like(text: &str, pattern: &str) -> bool {
    let text: Vec<char> = text.to_lowercase().chars().collect();
    let pattern: Vec<char> = pattern.to_lowercase().chars().collect();
    let (mut t, mut p) = (0usize, 0usize);
    let (mut star_p, mut star_t): (Option<usize>, usize) = (None, 0);
    while t < text.len() {
        if p < pattern.len() && pattern[p] == '\\' && p + 1 < pattern.len() {
            if pattern[p + 1] == text[t] {
                p += 2;
                t += 1;
                continue;
            }
        } else if p < pattern.len() && (pattern[p] == '_' || pattern[p] == text[t]) {
            p += 1;
            t += 1;
            continue;
        }
        if p < pattern.len() && pattern[p] == '%' {
            star_p = Some(p);
            star_t = t;
            p += 1;
        } else if let Some(sp) = star_p {
            p = sp + 1;
            star_t += 1;
            t = star_t;
        } else {
            return false;
        }
    }
    while p < pattern.len() && pattern[p] == '%' {
        p += 1;
    }
    p == pattern.len()
}

fn evaluate_one(condition: &str, value: &Scalar<'_>, operand: Option<&str>) -> bool {
    let operand_text = operand.unwrap_or("");
    match condition {
        "null" => return matches!(value, Scalar::Null),
        "notnull" => return !matches!(value, Scalar::Null),
        _ => {}
    }
    if matches!(value, Scalar::Null) {
        return false;
    }
    match condition {
        "neq" | "sneq" => !equals(value, operand_text),
        "like" => value.as_text().is_some_and(|t| sql_like(&t, operand_text)),
        "nlike" => value.as_text().is_some_and(|t| !sql_like(&t, operand_text)),
        "fulltext" => value
            .as_text()
            .is_some_and(|t| sql_like(&t, &format!("%{operand_text}%"))),
        "in" => operand_text.split(',').any(|o| equals(value, o)),
        "nin" => !operand_text.split(',').any(|o| equals(value, o)),
        "gt" => compare(value, operand_text) == Some(Ordering::Greater),
        "lt" => compare(value, operand_text) == Some(Ordering::Less),
        "gteq" | "moreq" | "from" => matches!(
            compare(value, operand_text),
            Some(Ordering::Greater | Ordering::Equal)
        ),
        "lteq" | "to" => matches!(
            compare(value, operand_text),
            Some(Ordering::Less | Ordering::Equal)
        ),
        "finset" => value
            .as_text()
            .is_some_and(|t| t.split(',').any(|part| part == operand_text)),
        "nfinset" => value
            .as_text()
            .is_some_and(|t| !t.split(',').any(|part| part == operand_text)),
        // `eq`, `seq` and every unknown condition type end up as `=` in Magento's adapter.
        _ => equals(value, operand_text),
    }
}

fn evaluate(condition: &str, value: &FieldValue<'_>, operand: Option<&str>) -> bool {
    match value {
        FieldValue::One(scalar) => evaluate_one(condition, scalar, operand),
        FieldValue::Set(members) => match condition {
            "null" => members.is_empty(),
            "notnull" => !members.is_empty(),
            "neq" | "nin" | "nlike" | "nfinset" => {
                let positive = match condition {
                    "neq" => "eq",
                    "nin" => "in",
                    "nlike" => "like",
                    _ => "finset",
                };
                !members.is_empty() && !members.iter().any(|m| evaluate_one(positive, m, operand))
            }
            _ => members.iter().any(|m| evaluate_one(condition, m, operand)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webapi::query;

    fn criteria(raw: &str) -> SearchCriteria {
        SearchCriteria::required(&query::parse(raw)).unwrap_or_default()
    }

    #[test]
    fn like_wildcards() {
        assert!(sql_like("Joust Duffle Bag", "%duffle%"));
        assert!(sql_like("24-MB01", "24-mb0_"));
        assert!(!sql_like("24-MB01", "24-MB"));
    }

    #[test]
    fn groups_and_filters_combine() {
        let c = criteria(
            "searchCriteria[filterGroups][0][filters][0][field]=a&searchCriteria[filterGroups][0][filters][0][value]=1\
             &searchCriteria[filterGroups][0][filters][1][field]=a&searchCriteria[filterGroups][0][filters][1][value]=2\
             &searchCriteria[filterGroups][1][filters][0][field]=b&searchCriteria[filterGroups][1][filters][0][value]=5&searchCriteria[filterGroups][1][filters][0][conditionType]=gt",
        );
        let row = |a: f64, b: f64| {
            move |field: &str| match field {
                "a" => Some(FieldValue::One(Scalar::Num(a))),
                "b" => Some(FieldValue::One(Scalar::Num(b))),
                _ => None,
            }
        };
        assert!(c.matches(row(2.0, 6.0)));
        assert!(!c.matches(row(3.0, 6.0)));
        assert!(!c.matches(row(1.0, 5.0)));
    }

    #[test]
    fn paging_clamps_to_last_page() {
        let c = criteria("searchCriteria[pageSize]=2&searchCriteria[currentPage]=9");
        let (items, total) = c.page(vec![1, 2, 3, 4, 5]);
        assert_eq!(items, vec![5]);
        assert_eq!(total, 5);
    }

    #[test]
    fn page_size_limits() {
        let err = SearchCriteria::required(&query::parse("searchCriteria[pageSize]=301"));
        assert!(err.is_err());
        let c = criteria("searchCriteria=");
        assert_eq!(c.page_size, Some(DEFAULT_PAGE_SIZE));
        assert!(SearchCriteria::required(&query::parse("foo=1")).is_err());
    }
}
