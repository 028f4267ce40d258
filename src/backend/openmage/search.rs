//! The gateway's list query ([`SearchCriteria`]) in the store's own syntax:
//! `filter[i][attribute]=field&filter[i][condition]=value`, `order`, `dir`, `page`, `limit`.
//!
//! The original ANDs its filters and has no OR: a group of several conditions is sent as
//! its first condition only when every condition is on the same field with `eq` (it becomes
//! one `in`); any other OR group is refused here, before the store is asked, rather than
//! silently widened.

use crate::backend::port::{BackendError, Direction, SearchCriteria};

/// The largest page the store serves (`limit` above it is its 400).
pub const MAX_LIMIT: u32 = 100;

/// Query pairs for `criteria`, with `page` and `limit` given separately (the adapter pages
/// by itself, see [`super::lists`]).
pub fn filters(criteria: &SearchCriteria) -> Result<Vec<(String, String)>, BackendError> {
    let mut query = Vec::new();
    for (i, group) in criteria.groups().iter().enumerate() {
        let (field, condition, values) = match group.as_slice() {
            [only] => (
                only.field.as_str(),
                only.condition_type,
                split(only.condition_type, &only.value),
            ),
            [first, ..]
                if group
                    .iter()
                    .all(|c| c.field == first.field && c.condition_type == "eq") =>
            {
                let values = group.iter().map(|c| c.value.clone()).collect();
                (first.field.as_str(), "in", values)
            }
            _ => {
                return Err(BackendError::Protocol(
                    "the store has no OR between different fields".into(),
                ));
            }
        };
        query.push((format!("filter[{i}][attribute]"), field.to_owned()));
        match condition {
            "in" | "nin" => {
                for (j, value) in values.into_iter().enumerate() {
                    query.push((format!("filter[{i}][{condition}][{j}]"), value));
                }
            }
            _ => {
                let value = values.into_iter().next().unwrap_or_default();
                query.push((format!("filter[{i}][{condition}]"), value));
            }
        }
    }
    if let Some((field, direction)) = criteria.sort_orders().first() {
        query.push(("order".into(), field.clone()));
        let dir = match direction {
            Direction::Asc => "asc",
            Direction::Desc => "desc",
        };
        query.push(("dir".into(), dir.into()));
    }
    Ok(query)
}

fn split(condition: &str, value: &str) -> Vec<String> {
    match condition {
        "in" | "nin" => value
            .split(',')
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
            .collect(),
        _ => vec![value.to_owned()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn criteria_become_the_stores_filters() {
        let criteria = SearchCriteria::new()
            .filter("entity_id", "1,2", "in")
            .filter("status", "1", "eq")
            .sort("name", Direction::Desc);
        let query = filters(&criteria).unwrap();
        let text: Vec<String> = query.iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(
            text,
            [
                "filter[0][attribute]=entity_id",
                "filter[0][in][0]=1",
                "filter[0][in][1]=2",
                "filter[1][attribute]=status",
                "filter[1][eq]=1",
                "order=name",
                "dir=desc"
            ]
        );
        let or_same = SearchCriteria::new()
            .any_of(vec![("sku", "a".into(), "eq"), ("sku", "b".into(), "eq")]);
        assert_eq!(
            filters(&or_same).unwrap()[2],
            ("filter[0][in][1]".into(), "b".into())
        );
        let or_other = SearchCriteria::new().any_of(vec![
            ("sku", "a".into(), "eq"),
            ("name", "b".into(), "like"),
        ]);
        assert!(filters(&or_other).is_err());
    }
}
