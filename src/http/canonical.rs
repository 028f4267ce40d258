//! Which spelling of a request's query string is *the* one.
//!
//! The fast path files an answer under the request's raw path and query, so that a repeat is
//! served without parsing anything. Filed for every spelling, one anonymous client could
//! flood the cache with `?_=1`, `?_=2`, ... (each a key holding the same answer) and push the
//! hot entries out. So only a canonical spelling is filed; any other still gets the cached
//! answer, through the slow path, whose keys are built from the parsed parameters (unknown
//! ones ignored) and so cannot be multiplied.
//!
//! Canonical here means: only the list parameters (`page`, `limit`, `order`, `dir`,
//! `category_id`, `filter[..]`), in that order, each once; numbers without leading zeros,
//! `dir` only after `order` and spelled `asc` or `desc`; filters numbered from 0 in order,
//! each starting with its `attribute`, its condition keys in increasing order and list
//! indexes from 0; keys written plainly and values percent-encoded the way
//! `application/x-www-form-urlencoded` writes them. That leaves a handful of spellings per
//! answer (a default such as `page=1` written or not), never an unbounded number.

/// Rank of each parameter in the canonical order.
fn rank(key: &str) -> Option<u8> {
    Some(match key {
        "page" => 0,
        "limit" => 1,
        "order" => 2,
        "dir" => 3,
        "category_id" => 4,
        _ if key.starts_with("filter[") => 5,
        _ => return None,
    })
}

/// A number as the parser reads it, written the one way.
fn plain_number(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 10
        && value.bytes().all(|b| b.is_ascii_digit())
        && !value.starts_with('0')
}

/// `filter[i][...]` split into the index and the rest of the brackets.
fn filter_parts(key: &str) -> Option<(u32, Vec<&str>)> {
    let rest = key.strip_prefix("filter")?;
    let mut parts = Vec::new();
    let mut rest = rest;
    while !rest.is_empty() {
        let inner = rest.strip_prefix('[')?;
        let end = inner.find(']')?;
        parts.push(&inner[..end]);
        rest = &inner[end + 1..];
    }
    let (index, parts) = parts.split_first()?;
    if !plain_number(index) && *index != "0" {
        return None;
    }
    Some((index.parse().ok()?, parts.to_vec()))
}

/// Is this raw query string (without `?`) the canonical spelling of its parameters? No
/// query at all is; an empty one (a bare `?`) is not.
pub fn is_canonical_query(query: Option<&str>) -> bool {
    let Some(query) = query else {
        return true;
    };
    if query.is_empty() {
        return false;
    }
    let mut last_rank: Option<u8> = None;
    let mut seen_order = false;
    // Filters: (index, last condition key, last list index).
    let mut filter: Option<(u32, Option<String>)> = None;
    for pair in query.split('&') {
        let Some((key, value)) = pair.split_once('=') else {
            return false;
        };
        // Keys plainly written: no escapes, so one spelling.
        if !key.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'[' | b']')
        }) {
            return false;
        }
        // Values written the way a form encoder writes them.
        let decoded: String = form_urlencoded::parse(pair.as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        if form_urlencoded::byte_serialize(decoded.as_bytes()).collect::<String>() != value {
            return false;
        }
        let Some(rank) = rank(key) else {
            return false;
        };
        match last_rank {
            Some(last) if rank < last || (rank == last && rank != 5) => return false,
            _ => {}
        }
        last_rank = Some(rank);
        match key {
            "page" | "limit" if !plain_number(value) => return false,
            "order" => seen_order = true,
            "dir" if !seen_order || !matches!(value, "asc" | "desc") => return false,
            _ => {}
        }
        if rank == 5 {
            let Some((index, parts)) = filter_parts(key) else {
                return false;
            };
            let condition = parts.join("][");
            filter = match (filter.take(), parts.as_slice()) {
                // A new filter: the next index, its attribute first.
                (None, ["attribute"]) if index == 0 => Some((0, None)),
                (Some((last, _)), ["attribute"]) if index == last + 1 => Some((index, None)),
                // A condition of the current filter, after the previous one.
                (Some((last, previous)), [_, ..]) if index == last && parts[0] != "attribute" => {
                    let follows = match &previous {
                        Some(previous) => condition_follows(previous, &condition),
                        None => condition_follows("", &condition),
                    };
                    if !follows {
                        return false;
                    }
                    Some((index, Some(condition)))
                }
                _ => return false,
            };
        }
    }
    true
}

/// Condition keys (`eq`, `in][0`, `in][1`, ...) in increasing order, list indexes counted
/// from 0 without gaps.
fn condition_follows(previous: &str, next: &str) -> bool {
    let split = |c: &str| -> (String, Option<u32>) {
        match c.split_once("][") {
            Some((op, i)) => (op.to_owned(), i.parse().ok()),
            None => (c.to_owned(), None),
        }
    };
    let (p_op, p_i) = split(previous);
    let (n_op, n_i) = split(next);
    if p_op == n_op {
        matches!((p_i, n_i), (Some(a), Some(b)) if b == a + 1)
    } else {
        n_op > p_op && n_i.is_none_or(|i| i == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_spelling_per_answer() {
        for ok in [
            None,
            Some("page=2"),
            Some("page=2&limit=20"),
            Some("limit=20&order=name&dir=asc"),
            Some("category_id=4"),
            Some("filter[0][attribute]=name&filter[0][like]=%25bag%25"),
            Some("filter[0][attribute]=price&filter[0][from]=1&filter[0][to]=9"),
            Some("filter[0][attribute]=entity_id&filter[0][in][0]=1&filter[0][in][1]=2"),
            Some(
                "page=1&filter[0][attribute]=a&filter[0][eq]=x+y&filter[1][attribute]=b&filter[1][eq]=z",
            ),
        ] {
            assert!(is_canonical_query(ok), "{ok:?}");
        }
        for busted in [
            "",
            "_=1",
            "page=2&_=1",
            "limit=20&page=2",
            "page=02",
            "page=2&page=3",
            "dir=asc",
            "order=name&dir=ASC",
            "order=n%61me",
            "order=a%20b",
            "filter%5B0%5D%5Battribute%5D=a&filter%5B0%5D%5Beq%5D=b",
            "filter[1][attribute]=a&filter[1][eq]=b",
            "filter[0][eq]=b&filter[0][attribute]=a",
            "filter[0][attribute]=p&filter[0][to]=9&filter[0][from]=1",
            "filter[0][attribute]=e&filter[0][in][1]=2&filter[0][in][0]=1",
            "filter[00][attribute]=a",
            "page",
        ] {
            assert!(!is_canonical_query(Some(busted)), "{busted}");
        }
    }
}
