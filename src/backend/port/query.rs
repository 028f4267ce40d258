//! A list query in the gateway's terms: AND-ed groups of OR-ed conditions, sort orders, a
//! page and an optional projection. Each back end writes it in its own syntax (Magento 2's
//! `searchCriteria`, in `magento2::search`).

/// The largest page a back end is asked for (Magento 2.4.7+ refuses more with its input
/// limits on).
pub const MAX_PAGE_SIZE: u32 = 300;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Asc,
    Desc,
}

/// One condition: a field compared with a value by a named condition (`eq`, `in`, `like`,
/// `gteq`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    pub field: String,
    pub value: String,
    pub condition_type: &'static str,
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

    /// ANDs one condition (`eq`, `in`, `like`, `gteq`, ...: the names Magento 1 and 2 share).
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

    /// A projection of the answer (a back end may ignore it), e.g. `items[id,sku],total_count`.
    pub fn fields(mut self, fields: &str) -> Self {
        self.fields = Some(fields.to_owned());
        self
    }

    pub fn page_size(&self) -> Option<u32> {
        self.page_size
    }

    /// The AND-ed groups of OR-ed conditions.
    pub fn groups(&self) -> &[Vec<Condition>] {
        &self.groups
    }

    pub fn sort_orders(&self) -> &[(String, Direction)] {
        &self.sort
    }

    pub fn current_page(&self) -> Option<u32> {
        self.current_page
    }

    pub fn projection(&self) -> Option<&str> {
        self.fields.as_deref()
    }
}
