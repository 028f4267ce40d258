//! Magento 2's `searchCriteria` query-string syntax for the port's list query.
//!
//! Filters inside one group are OR-ed and groups are AND-ed; we only ever need AND of single
//! conditions plus the occasional OR, so the builder adds one group per `filter` call.

use crate::backend::port::{Direction, SearchCriteria};

/// The query pairs, in a stable order (they double as cache keys).
pub fn to_query(criteria: &SearchCriteria) -> Vec<(String, String)> {
    let mut query = Vec::new();
    for (g, group) in criteria.groups().iter().enumerate() {
        for (f, condition) in group.iter().enumerate() {
            let prefix = format!("searchCriteria[filter_groups][{g}][filters][{f}]");
            query.push((format!("{prefix}[field]"), condition.field.clone()));
            query.push((format!("{prefix}[value]"), condition.value.clone()));
            query.push((
                format!("{prefix}[condition_type]"),
                condition.condition_type.to_owned(),
            ));
        }
    }
    for (i, (field, direction)) in criteria.sort_orders().iter().enumerate() {
        query.push((
            format!("searchCriteria[sort_orders][{i}][field]"),
            field.clone(),
        ));
        query.push((
            format!("searchCriteria[sort_orders][{i}][direction]"),
            match direction {
                Direction::Asc => "ASC",
                Direction::Desc => "DESC",
            }
            .to_owned(),
        ));
    }
    if let Some(size) = criteria.page_size() {
        query.push(("searchCriteria[pageSize]".to_owned(), size.to_string()));
    }
    if let Some(page) = criteria.current_page() {
        query.push(("searchCriteria[currentPage]".to_owned(), page.to_string()));
    }
    if query.is_empty() {
        // Magento requires the parameter even when it says nothing.
        query.push(("searchCriteria".to_owned(), String::new()));
    }
    if let Some(fields) = criteria.projection() {
        query.push(("fields".to_owned(), fields.to_owned()));
    }
    query
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_magento_query_pairs() {
        let q = SearchCriteria::new()
            .filter("entity_id", "1,2", "in")
            .sort("name", Direction::Asc)
            .page(1000, 0)
            .fields("items[id,sku],total_count");
        let q = to_query(&q);
        assert_eq!(
            q[0],
            (
                "searchCriteria[filter_groups][0][filters][0][field]".into(),
                "entity_id".into()
            )
        );
        assert_eq!(q[2].1, "in");
        assert!(q.contains(&("searchCriteria[pageSize]".into(), "300".into())));
        assert!(q.contains(&("searchCriteria[currentPage]".into(), "1".into())));
        assert!(q.contains(&(
            "searchCriteria[sort_orders][0][direction]".into(),
            "ASC".into()
        )));
        assert_eq!(
            to_query(&SearchCriteria::new()),
            vec![("searchCriteria".into(), String::new())]
        );
    }
}
