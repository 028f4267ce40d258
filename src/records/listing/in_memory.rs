//! The list parameters applied in memory, for lists the store cannot search: a customer's
//! addresses come in one record, so filters and order apply to the rendered values,
//! compared the way the original's database did (case-insensitive text, numbers as
//! numbers).

use std::cmp::Ordering;

use serde_json::{Map, Value};

use crate::http::query::{Condition, Filter};
use crate::rules::mapping::convert::scalar_text;

fn texts(value: Option<&Value>) -> Vec<String> {
    match value {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.iter().map(scalar_text).collect(),
        Some(other) => vec![scalar_text(other)],
    }
}

fn compare_text(a: &str, b: &str) -> Ordering {
    match (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
        (Ok(x), Ok(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        _ => a.to_lowercase().cmp(&b.to_lowercase()),
    }
}

pub fn compare(a: Option<&Value>, b: Option<&Value>) -> Ordering {
    let (a, b) = (texts(a), texts(b));
    match (a.first(), b.first()) {
        (Some(x), Some(y)) => compare_text(x, y),
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

/// SQL `LIKE`: `%` any run, `_` one character; case-insensitive.
fn like(text: &str, pattern: &str) -> bool {
    let t: Vec<char> = text.to_lowercase().chars().collect();
    let p: Vec<char> = pattern.to_lowercase().chars().collect();
    // Iterative matcher with backtracking on the last `%`.
    let (mut ti, mut pi) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '_' || p[pi] == t[ti]) {
            ti += 1;
            pi += 1;
        } else if pi < p.len() && p[pi] == '%' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '%')
}

pub fn matches(record: &Map<String, Value>, filter: &Filter) -> bool {
    let values = texts(record.get(&filter.attribute));
    let eq = |v: &str| values.iter().any(|x| compare_text(x, v) == Ordering::Equal);
    let any = |f: &dyn Fn(Ordering) -> bool, v: &str| values.iter().any(|x| f(compare_text(x, v)));
    match &filter.condition {
        Condition::Eq(v) => eq(v),
        Condition::Neq(v) => !eq(v),
        Condition::Like(p) => values.iter().any(|x| like(x, p)),
        Condition::NotLike(p) => !values.iter().any(|x| like(x, p)),
        Condition::In(vs) => vs.iter().any(|v| eq(v)),
        Condition::NotIn(vs) => !vs.iter().any(|v| eq(v)),
        Condition::Gt(v) => any(&|o| o == Ordering::Greater, v),
        Condition::Lt(v) => any(&|o| o == Ordering::Less, v),
        Condition::Gteq(v) => any(&|o| o != Ordering::Less, v),
        Condition::Lteq(v) => any(&|o| o != Ordering::Greater, v),
        Condition::Range { from, to } => values.iter().any(|x| {
            from.as_ref()
                .is_none_or(|f| compare_text(x, f) != Ordering::Less)
                && to
                    .as_ref()
                    .is_none_or(|t| compare_text(x, t) != Ordering::Greater)
        }),
        Condition::Null => values.iter().all(|x| x.is_empty()),
        Condition::NotNull => values.iter().any(|x| !x.is_empty()),
        Condition::FindInSet(v) => values.iter().any(|x| {
            x.split(',')
                .any(|part| part.trim().eq_ignore_ascii_case(v.trim()))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_like() {
        assert!(like("New York", "new%"));
        assert!(like("New York", "%york"));
        assert!(like("New York", "N_w York"));
        assert!(like("abc", "%"));
        assert!(!like("New York", "york%"));
        assert!(like("aXbXc", "a%b%c"));
    }
}
