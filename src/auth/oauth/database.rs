//! Where the OAuth store lives, from `STOREGATE_DATABASE_URL`.
//!
//! - unset or `sqlite://` alone: the embedded file `oauth.sqlite3` in `STOREGATE_DATA_DIR`,
//!   what a single machine has always used;
//! - `sqlite://PATH` (or `sqlite:PATH`): that SQLite file, for instances sharing one disk;
//! - `mysql://user:password@host:port/database` (or `mariadb://`): a MariaDB or MySQL
//!   database shared by every instance of a fleet, the engine a Magento shop already runs.
//!
//! PostgreSQL is refused with a clear line rather than half supported: the shared store's
//! SQL is MySQL's dialect (see docs/decisions/oauth-store.md).

use std::path::{Path, PathBuf};

/// The parsed `STOREGATE_DATABASE_URL`.
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite file.
    Sqlite(PathBuf),
    /// A MariaDB / MySQL URL, as `mysql://...` (a secret: it may hold a password).
    MySql(String),
}

impl std::fmt::Debug for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// The file name of the embedded store inside the data folder.
pub const SQLITE_FILE: &str = "oauth.sqlite3";

impl Location {
    /// Checks a URL's form (the start refuses a bad one with one line); `sqlite://` alone
    /// is the default file, resolved against the data folder by [`Location::resolve`].
    pub fn parse(url: &str) -> Result<Location, &'static str> {
        const EXPECTED: &str = "sqlite://PATH, or mysql://user:password@host:port/database \
             (MariaDB or MySQL)";
        let url = url.trim();
        let lower = url.to_ascii_lowercase();
        if let Some(path) = lower
            .strip_prefix("sqlite://")
            .or_else(|| lower.strip_prefix("sqlite:"))
        {
            // The path as written (case kept), after the scheme.
            let path = &url[url.len() - path.len()..];
            return Ok(Location::Sqlite(PathBuf::from(path)));
        }
        for scheme in ["mysql://", "mariadb://"] {
            if let Some(rest) = lower.strip_prefix(scheme) {
                let rest = &url[url.len() - rest.len()..];
                let (authority, database) = rest.split_once('/').ok_or(EXPECTED)?;
                let host = authority.rsplit('@').next().unwrap_or("");
                let database = database.split('?').next().unwrap_or("");
                if host.is_empty() || database.is_empty() {
                    return Err(EXPECTED);
                }
                return Ok(Location::MySql(format!("mysql://{rest}")));
            }
        }
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            return Err("sqlite:// or mysql:// (PostgreSQL is not supported yet)");
        }
        Err(EXPECTED)
    }

    /// Where the store of this configuration is: the URL's, or the data folder's file.
    pub fn resolve(database_url: Option<&str>, data_dir: &Path) -> Result<Location, String> {
        let location = match database_url {
            None => Location::Sqlite(PathBuf::new()),
            Some(url) => Location::parse(url)
                .map_err(|why| format!("invalid STOREGATE_DATABASE_URL: expected {why}"))?,
        };
        Ok(match location {
            Location::Sqlite(path) if path.as_os_str().is_empty() => {
                Location::Sqlite(data_dir.join(SQLITE_FILE))
            }
            other => other,
        })
    }

    /// For logs and errors: never the password.
    pub fn describe(&self) -> String {
        match self {
            Location::Sqlite(path) => format!("sqlite://{}", path.display()),
            Location::MySql(url) => match url.split_once("://") {
                Some((scheme, rest)) => {
                    let after_user = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
                    format!("{scheme}://{after_user}")
                }
                None => "mysql://".to_owned(),
            },
        }
    }

    pub fn is_shared(&self) -> bool {
        matches!(self, Location::MySql(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let dir = Path::new("/data");
        assert_eq!(
            Location::resolve(None, dir).unwrap(),
            Location::Sqlite(PathBuf::from("/data/oauth.sqlite3"))
        );
        assert_eq!(
            Location::resolve(Some("sqlite://"), dir).unwrap(),
            Location::Sqlite(PathBuf::from("/data/oauth.sqlite3"))
        );
        assert_eq!(
            Location::parse("sqlite:///srv/Tokens.db").unwrap(),
            Location::Sqlite(PathBuf::from("/srv/Tokens.db"))
        );
        let shared = Location::parse("mariadb://sg:p%40ss@127.0.0.1:3306/storegate").unwrap();
        assert_eq!(
            shared,
            Location::MySql("mysql://sg:p%40ss@127.0.0.1:3306/storegate".into())
        );
        assert_eq!(shared.describe(), "mysql://127.0.0.1:3306/storegate");
        assert!(!format!("{shared:?}").contains("p%40ss"));
        for bad in [
            "mysql://host",
            "mysql:///db",
            "http://x/y",
            "postgres://h/d",
            "",
        ] {
            assert!(Location::parse(bad).is_err(), "{bad}");
        }
    }
}
