//! Importing the original's `oauth_consumer` and `oauth_token` tables, as
//! `mysql --batch -e 'SELECT * FROM oauth_consumer'` prints them: tab-separated, a header
//! row, `NULL` for null, and `\t`, `\n`, `\\`, `\0` escaped inside values.
//!
//! Columns are found by their header names, so any column order (or extra columns) works.
//! Consumers keep their key and secret, so apps keep their baked-in credentials; authorized,
//! unrevoked access tokens keep their token, secret and owner (customer id, or admin), so
//! users stay signed in. Request tokens and revoked rows are skipped. Rerunning an import
//! updates consumers and leaves tokens already there alone.

use std::collections::HashMap;

use super::store::{ImportedToken, NewConsumer, Owner, StoreError, TokenStore};

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{file}: {message}")]
    Format { file: String, message: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What an import did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Summary {
    pub consumers: usize,
    pub tokens: usize,
    pub already_there: usize,
    pub skipped_request: usize,
    pub skipped_revoked: usize,
    pub skipped_unauthorized: usize,
    pub skipped_unknown_consumer: usize,
    pub skipped_no_owner: usize,
    /// Consumers whose registered callback the gateway cannot use (no scheme, userinfo, a
    /// fragment...): kept as they are, but until `storegate oauth consumer update` fixes
    /// them their apps can sign in with `oob` only. Their names and why.
    pub unusable_callbacks: Vec<String>,
    /// The customers' imported tokens with their consumer's key and secret: the store
    /// issued them, so the gateway can also ask the store as those customers
    /// (`backend::port::StoreSession`, kept by the CLI).
    pub customer_credentials: Vec<CustomerCredentials>,
}

/// A customer's access token as the store issued it, with its consumer.
#[derive(Clone, PartialEq, Eq)]
pub struct CustomerCredentials {
    pub customer_id: u64,
    pub consumer_key: String,
    pub consumer_secret: String,
    pub token: String,
    pub secret: String,
}

impl std::fmt::Debug for CustomerCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CustomerCredentials")
            .field("customer_id", &self.customer_id)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "imported {} consumer(s) and {} access token(s); skipped {} already there, {} request token(s), \
             {} revoked, {} not authorized, {} of unknown consumers, {} without a user",
            self.consumers,
            self.tokens,
            self.already_there,
            self.skipped_request,
            self.skipped_revoked,
            self.skipped_unauthorized,
            self.skipped_unknown_consumer,
            self.skipped_no_owner
        )?;
        for warning in &self.unusable_callbacks {
            write!(f, "\nwarning: {warning}")?;
        }
        Ok(())
    }
}

/// One `mysql --batch` table: rows as column name -> value (None for NULL).
pub struct Table {
    file: String,
    rows: Vec<HashMap<String, Option<String>>>,
}

fn unescape(field: &str) -> Option<String> {
    if field == "NULL" {
        return None;
    }
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    Some(out)
}

impl Table {
    pub fn parse(file: &str, text: &str) -> Result<Table, ImportError> {
        let fail = |message: String| ImportError::Format {
            file: file.to_owned(),
            message,
        };
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let header: Vec<String> = lines
            .next()
            .ok_or_else(|| fail("empty file: expected a header row".into()))?
            .split('\t')
            .map(|h| h.trim().to_owned())
            .collect();
        let mut rows = Vec::new();
        for (number, line) in lines.enumerate() {
            let fields: Vec<&str> = line.split('\t').collect();
            if fields.len() != header.len() {
                return Err(fail(format!(
                    "row {}: {} fields, the header has {}",
                    number + 2,
                    fields.len(),
                    header.len()
                )));
            }
            rows.push(
                header
                    .iter()
                    .cloned()
                    .zip(fields.into_iter().map(unescape))
                    .collect(),
            );
        }
        Ok(Table {
            file: file.to_owned(),
            rows,
        })
    }

    fn require(&self, columns: &[&str]) -> Result<(), ImportError> {
        if let Some(row) = self.rows.first() {
            for column in columns {
                if !row.contains_key(*column) {
                    return Err(ImportError::Format {
                        file: self.file.clone(),
                        message: format!("no column {column:?} in the header row"),
                    });
                }
            }
        }
        Ok(())
    }
}

fn text(row: &HashMap<String, Option<String>>, column: &str) -> Option<String> {
    row.get(column).cloned().flatten().filter(|v| !v.is_empty())
}

fn flag(row: &HashMap<String, Option<String>>, column: &str) -> bool {
    text(row, column).is_some_and(|v| v != "0")
}

fn id(row: &HashMap<String, Option<String>>, column: &str) -> Option<u64> {
    text(row, column)
        .and_then(|v| v.parse().ok())
        .filter(|&v| v > 0)
}

/// Imports consumers, then (when given) their tokens.
pub async fn import(
    store: &dyn TokenStore,
    consumers: &Table,
    tokens: Option<&Table>,
) -> Result<Summary, ImportError> {
    consumers.require(&["entity_id", "name", "key", "secret"])?;
    let mut summary = Summary::default();
    // The original's consumer id -> ours, and its key and secret.
    let mut ids: HashMap<String, (i64, String, String)> = HashMap::new();
    for (number, row) in consumers.rows.iter().enumerate() {
        let fail = |message: &str| ImportError::Format {
            file: consumers.file.clone(),
            message: format!("row {}: {message}", number + 2),
        };
        let key = text(row, "key").ok_or_else(|| fail("empty key"))?;
        let secret = text(row, "secret").ok_or_else(|| fail("empty secret"))?;
        let consumer = store
            .upsert_consumer(&NewConsumer {
                name: text(row, "name").unwrap_or_else(|| key.clone()),
                key: key.clone(),
                secret: secret.clone(),
                callback_url: text(row, "callback_url"),
                rejected_callback_url: text(row, "rejected_callback_url"),
                // An app of the original: signed calls get the original's formats.
                profile: Some(crate::context::profile::Profile::Original),
            })
            .await?;
        for (column, url, meanwhile) in [
            (
                "callback",
                &consumer.callback_url,
                "its app can sign in with oauth_callback=oob only",
            ),
            (
                "rejected-callback",
                &consumer.rejected_callback_url,
                "users who reject the app are sent back to the app's own callback",
            ),
        ] {
            if let Some(url) = url
                && let Err(why) = super::callback::registrable(url)
            {
                summary.unusable_callbacks.push(format!(
                    "consumer {:?}: its {column} URL {url:?} cannot be used ({why}); until \
                     `storegate oauth consumer update --key {} --{column} URL` fixes it, \
                     {meanwhile}",
                    consumer.name, consumer.key,
                ));
            }
        }
        if let Some(original) = text(row, "entity_id") {
            ids.insert(original, (consumer.id, key, secret));
        }
        summary.consumers += 1;
    }
    let Some(tokens) = tokens else {
        return Ok(summary);
    };
    tokens.require(&["consumer_id", "type", "token", "secret"])?;
    for row in &tokens.rows {
        if text(row, "type").as_deref() != Some("access") {
            summary.skipped_request += 1;
            continue;
        }
        if flag(row, "revoked") {
            summary.skipped_revoked += 1;
            continue;
        }
        if row.contains_key("authorized") && !flag(row, "authorized") {
            summary.skipped_unauthorized += 1;
            continue;
        }
        let Some((consumer_id, consumer_key, consumer_secret)) =
            text(row, "consumer_id").and_then(|c| ids.get(&c))
        else {
            summary.skipped_unknown_consumer += 1;
            continue;
        };
        let owner = match (id(row, "admin_id"), id(row, "customer_id")) {
            (Some(_), _) => Owner::Admin,
            (None, Some(customer)) => Owner::Customer(customer),
            (None, None) => {
                summary.skipped_no_owner += 1;
                continue;
            }
        };
        let (Some(token), Some(secret)) = (text(row, "token"), text(row, "secret")) else {
            summary.skipped_no_owner += 1;
            continue;
        };
        if let Owner::Customer(customer_id) = owner {
            summary.customer_credentials.push(CustomerCredentials {
                customer_id,
                consumer_key: consumer_key.clone(),
                consumer_secret: consumer_secret.clone(),
                token: token.clone(),
                secret: secret.clone(),
            });
        }
        if store
            .import_access_token(&ImportedToken {
                consumer_id: *consumer_id,
                token,
                secret,
                owner,
            })
            .await?
        {
            summary.tokens += 1;
        } else {
            summary.already_there += 1;
        }
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mysql_batch_escapes() {
        let table = Table::parse("t", "a\tb\tc\nx\\ty\tNULL\tback\\\\slash\n").unwrap();
        let row = &table.rows[0];
        assert_eq!(row["a"].as_deref(), Some("x\ty"));
        assert_eq!(row["b"], None);
        assert_eq!(row["c"].as_deref(), Some("back\\slash"));
        assert!(Table::parse("t", "a\tb\n1\n").is_err());
        assert!(Table::parse("t", "").is_err());
    }
}
