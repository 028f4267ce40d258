//! The list engine: the original's list parameters (`order`, `dir`, `filter[n]`) as
//! the port's search criteria (each back end writes them in its store's syntax), and, for
//! lists the store cannot search, applied in memory
//! ([`in_memory`]).
//!
//! One translation for every list resource: a client may only sort and filter on fields of
//! its own view that the store can search (`Field::search_field`); anything else is the
//! original's 400 `Resource collection ordering error.` or `... filtering error.`.

pub mod in_memory;

use crate::backend::port::{Direction, SearchCriteria};
use crate::http::query::{Condition, ListParams, SortDir};
use crate::http::{ApiError, msg};
use crate::rules::mapping::Field;

/// Adds the sort and filters of `params` to `criteria`, checked against `fields`.
pub fn search_criteria(
    fields: &[Field],
    params: &ListParams,
    mut criteria: SearchCriteria,
) -> Result<SearchCriteria, ApiError> {
    let searchable = |name: &str| {
        fields
            .iter()
            .find(|f| f.name == name)
            .and_then(Field::search_field)
    };
    if let Some(order) = &params.order {
        let field = searchable(order).ok_or_else(|| ApiError::bad_request(msg::ORDERING))?;
        let direction = match params.dir {
            SortDir::Asc => Direction::Asc,
            SortDir::Desc => Direction::Desc,
        };
        criteria = criteria.sort(&field, direction);
    }
    for filter in &params.filters {
        let field =
            searchable(&filter.attribute).ok_or_else(|| ApiError::bad_request(msg::FILTERING))?;
        criteria = match &filter.condition {
            Condition::Eq(v) => criteria.filter(&field, v.clone(), "eq"),
            Condition::Neq(v) => criteria.filter(&field, v.clone(), "neq"),
            Condition::Like(v) => criteria.filter(&field, v.clone(), "like"),
            Condition::NotLike(v) => criteria.filter(&field, v.clone(), "nlike"),
            Condition::In(vs) => criteria.filter(&field, vs.join(","), "in"),
            Condition::NotIn(vs) => criteria.filter(&field, vs.join(","), "nin"),
            Condition::Gt(v) => criteria.filter(&field, v.clone(), "gt"),
            Condition::Lt(v) => criteria.filter(&field, v.clone(), "lt"),
            Condition::Gteq(v) => criteria.filter(&field, v.clone(), "gteq"),
            Condition::Lteq(v) => criteria.filter(&field, v.clone(), "lteq"),
            Condition::FindInSet(v) => criteria.filter(&field, v.clone(), "finset"),
            Condition::Null => criteria.filter(&field, "", "null"),
            Condition::NotNull => criteria.filter(&field, "", "notnull"),
            // Filters in one Magento group are OR-ed: each bound is a group of its own.
            Condition::Range { from, to } => {
                let mut c = criteria;
                if let Some(from) = from {
                    c = c.filter(&field, from.clone(), "gteq");
                }
                if let Some(to) = to {
                    c = c.filter(&field, to.clone(), "lteq");
                }
                c
            }
        };
    }
    Ok(criteria)
}
