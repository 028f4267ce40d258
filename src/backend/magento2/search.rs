//! Magento 2's `searchCriteria` query-string syntax.
//!
//! Filters inside one group are OR-ed and groups are AND-ed; we only ever need AND of single
//! conditions plus the occasional OR, so the builder adds one group per `filter` call. Page
//! sizes are clamped to 300, the largest Magento 2.4.7+ accepts with input limits on.

/// Largest page we ask Magento for.
pub const MAX_PAGE_SIZE: u32 = 300;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Asc,
    Desc,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Condition {
    field: String,
    value: String,
    condition_type: &'static str,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchCriteria {
    groups: Vec<Vec<Condition>>,
    sort: Vec<(String, Direction)>,
    page_size: Option<u32>,
    current_page: Option<u32>,
    fields: Option<String>,
}

impl SearchCriteria {
    pub fn new() -> SearchCriteria {
        SearchCriteria::default()
    }

    /// ANDs one condition. `condition_type` is Magento's (`eq`, `in`, `like`, `gteq`, ...).
    pub fn filter(
        mut self,
        field: &str,
        value: impl Into<String>,
        condition_type: &'static str,
    ) -> Self {
        self.groups.push(vec![Condition {
            field: field.to_owned(),
            value: value.into(),
            condition_type,
        }]);
        self
    }

    /// ANDs a group of OR-ed conditions.
    pub fn any_of(mut self, conditions: Vec<(&str, String, &'static str)>) -> Self {
        self.groups.push(
            conditions
                .into_iter()
                .map(|(field, value, condition_type)| Condition {
                    field: field.to_owned(),
                    value,
                    condition_type,
                })
                .collect(),
        );
        self
    }

    pub fn sort(mut self, field: &str, direction: Direction) -> Self {
        self.sort.push((field.to_owned(), direction));
        self
    }

    /// 1-based page of `size` items (clamped to 300).
    pub fn page(mut self, size: u32, current: u32) -> Self {
        self.page_size = Some(size.clamp(1, MAX_PAGE_SIZE));
        self.current_page = Some(current.max(1));
        self
    }

    /// Magento's `fields=` projection, e.g. `items[id,sku],total_count`.
    pub fn fields(mut self, fields: &str) -> Self {
        self.fields = Some(fields.to_owned());
        self
    }

    pub fn page_size(&self) -> Option<u32> {
        self.page_size
    }

    /// The query pairs, in a stable order (they double as cache keys).
    pub fn to_query(&self) -> Vec<(String, String)> {
        let mut query = Vec::new();
        for (g, group) in self.groups.iter().enumerate() {
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
        for (i, (field, direction)) in self.sort.iter().enumerate() {
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
        if let Some(size) = self.page_size {
            query.push(("searchCriteria[pageSize]".to_owned(), size.to_string()));
        }
        if let Some(page) = self.current_page {
            query.push(("searchCriteria[currentPage]".to_owned(), page.to_string()));
        }
        if query.is_empty() {
            // Magento requires the parameter even when it says nothing.
            query.push(("searchCriteria".to_owned(), String::new()));
        }
        if let Some(fields) = &self.fields {
            query.push(("fields".to_owned(), fields.clone()));
        }
        query
    }
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
            .fields("items[id,sku],total_count")
            .to_query();
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
            SearchCriteria::new().to_query(),
            vec![("searchCriteria".into(), String::new())]
        );
    }
}
