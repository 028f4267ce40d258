//! The rate-limit settings: `STOREGATE_RATE_LIMITS` (per client and route class),
//! `STOREGATE_SIGNIN_LIMIT` (failed sign-ins) and `STOREGATE_RATE_LIMIT_MODE`, read and
//! checked here; what they do is `crate::limits` (docs/limits.md).
//!
//! They live in the configuration's floor, not beside the limiter, because two places read
//! a rate: the start (these keys) and `storegate oauth consumer add/update --rate-limit`,
//! which must refuse what the gateway would refuse, with the same words.

use std::fmt;
use std::time::Duration;

use super::sources::RawValues;
use super::{Config, ConfigError};

/// `N` requests in any window of `W`: `300/60s`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rate {
    pub count: u32,
    pub window: Duration,
}

/// The largest count a rate may have (a billion requests: more is no limit at all).
const MAX_COUNT: u64 = 1_000_000_000;
/// The longest window: a day. Longer windows belong to quotas, not rate limits.
const MAX_WINDOW: Duration = Duration::from_secs(86_400);

impl Rate {
    /// `N/Ws`, `N/Wm` or `N/Wh` (`W` may be left out: `60/s` is `60/1s`), for example
    /// `300/60s` or `10/5m`. The count is 1 to a billion, the window 1 second to a day.
    pub fn parse(text: &str) -> Result<Rate, String> {
        let expected = "a rate such as 300/60s (N requests per W seconds; m and h also work)";
        let text = text.trim();
        let (count, window) = text
            .split_once('/')
            .ok_or_else(|| format!("expected {expected}"))?;
        let count: u64 = count
            .trim()
            .parse()
            .map_err(|_| format!("{count:?} is not a count of requests; expected {expected}"))?;
        if count == 0 || count > MAX_COUNT {
            return Err(format!(
                "the count must be 1 to {MAX_COUNT}, not {count}; `off` turns a limit off"
            ));
        }
        let window = window.trim();
        let split = window
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(window.len());
        let (digits, unit) = window.split_at(split);
        let amount: u64 = if digits.is_empty() {
            1
        } else {
            digits
                .parse()
                .map_err(|_| format!("{window:?} is not a window; expected {expected}"))?
        };
        let seconds = match unit.trim() {
            "s" => amount,
            "m" => amount.saturating_mul(60),
            "h" => amount.saturating_mul(3600),
            _ => {
                return Err(format!(
                    "{window:?} is not a window: give its unit, s, m or h (60s, 5m, 1h)"
                ));
            }
        };
        let window = Duration::from_secs(seconds);
        if seconds == 0 || window > MAX_WINDOW {
            return Err(format!(
                "the window must be 1 second to 24 hours, not {window:?}"
            ));
        }
        Ok(Rate {
            count: count as u32,
            window,
        })
    }

    /// The window in whole seconds (every window is).
    pub fn window_secs(&self) -> u64 {
        self.window.as_secs()
    }
}

/// `300/60s`: what [`Rate::parse`] reads back.
impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}s", self.count, self.window.as_secs())
    }
}

/// Who a limit counts: each client has budgets of its own, one per route class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ClientKind {
    /// A caller without credentials, by its address.
    Guest,
    /// A customer, by id (a Bearer token or an OAuth token of theirs).
    Customer,
    /// An OAuth consumer (an app), by id: every token of it together.
    Consumer,
    /// An admin key, by which key.
    Admin,
}

impl ClientKind {
    pub const ALL: [ClientKind; 4] = [
        ClientKind::Guest,
        ClientKind::Customer,
        ClientKind::Consumer,
        ClientKind::Admin,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ClientKind::Guest => "guest",
            ClientKind::Customer => "customer",
            ClientKind::Consumer => "consumer",
            ClientKind::Admin => "admin",
        }
    }

    fn parse(text: &str) -> Option<ClientKind> {
        ClientKind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

/// What a request does, as far as limits go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RouteClass {
    /// Reads of the catalog: products, their images, links and stock items.
    Catalog,
    /// Reads of accounts: customers, their addresses, orders, OAuth tokens.
    Account,
    /// Everything that is not a read: creates, updates, deletes, sign-ins, purges.
    Writes,
}

impl RouteClass {
    pub const ALL: [RouteClass; 3] = [RouteClass::Catalog, RouteClass::Account, RouteClass::Writes];

    pub fn as_str(self) -> &'static str {
        match self {
            RouteClass::Catalog => "catalog",
            RouteClass::Account => "account",
            RouteClass::Writes => "writes",
        }
    }

    fn parse(text: &str) -> Option<RouteClass> {
        RouteClass::ALL.into_iter().find(|c| c.as_str() == text)
    }
}

/// One item's value: a rate, or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setting {
    Limit(Rate),
    Off,
}

impl Setting {
    fn rate(self) -> Option<Rate> {
        match self {
            Setting::Limit(rate) => Some(rate),
            Setting::Off => None,
        }
    }
}

/// `STOREGATE_RATE_LIMITS`: `guest=300/60s,customer=600/60s,consumer=6000/60s,admin=off,
/// writes=60/60s`. Each item names a kind of client (`guest`, `customer`, `consumer`,
/// `admin`), a route class (`catalog`, `account`, `writes`) or both (`guest.writes`).
/// Which one counts for a request: [`RateLimits::rate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RateLimits {
    kinds: [Option<Setting>; 4],
    classes: [Option<Setting>; 3],
    pairs: [[Option<Setting>; 3]; 4],
}

impl RateLimits {
    /// Nothing set: no client is limited, and nothing is counted.
    pub fn is_empty(&self) -> bool {
        *self == RateLimits::default()
    }

    /// The rate that counts for `kind` on `class`, the most specific setting first:
    /// `kind.class`; then `kind=off`, which exempts the kind from everything but its own
    /// `kind.class` items (`admin=off` is what an operator means by it); then `class`;
    /// then the consumer's own limit (`own`, from `--rate-limit`), which stands in for
    /// `consumer=`; then `kind`. None: not limited.
    pub fn rate(&self, kind: ClientKind, class: RouteClass, own: Option<Rate>) -> Option<Rate> {
        let (k, c) = (kind as usize, class as usize);
        if let Some(setting) = self.pairs[k][c] {
            return setting.rate();
        }
        if self.kinds[k] == Some(Setting::Off) {
            return None;
        }
        if let Some(setting) = self.classes[c] {
            return setting.rate();
        }
        if let Some(own) = own {
            return Some(own);
        }
        self.kinds[k].and_then(Setting::rate)
    }

    /// Whether any setting could limit `kind` (a consumer's own limit aside).
    pub fn limits_kind(&self, kind: ClientKind) -> bool {
        RouteClass::ALL
            .into_iter()
            .any(|class| self.rate(kind, class, None).is_some())
    }

    /// Reads the variable's text; an error says which item is wrong and why.
    pub fn parse(text: &str) -> Result<RateLimits, String> {
        let mut limits = RateLimits::default();
        let items: Vec<&str> = text
            .split(',')
            .map(str::trim)
            .filter(|i| !i.is_empty())
            .collect();
        for (n, item) in items.iter().enumerate() {
            let at = format!("item {} ({item:?})", n + 1);
            let (selector, value) = item
                .split_once('=')
                .ok_or_else(|| format!("{at}: expected SELECTOR=RATE such as guest=300/60s"))?;
            let (selector, value) = (selector.trim().to_ascii_lowercase(), value.trim());
            let setting = if value.eq_ignore_ascii_case("off") {
                Setting::Off
            } else {
                Setting::Limit(Rate::parse(value).map_err(|why| format!("{at}: {why}"))?)
            };
            let unknown = |name: &str| {
                format!(
                    "{at}: {name:?} is not a client or a route class (clients: guest, customer, \
                     consumer, admin; classes: catalog, account, writes; or both, as guest.writes)"
                )
            };
            let slot = match selector.split_once('.') {
                Some((kind, class)) => {
                    let kind = ClientKind::parse(kind).ok_or_else(|| unknown(kind))?;
                    let class = RouteClass::parse(class).ok_or_else(|| unknown(class))?;
                    &mut limits.pairs[kind as usize][class as usize]
                }
                None => match (ClientKind::parse(&selector), RouteClass::parse(&selector)) {
                    (Some(kind), _) => &mut limits.kinds[kind as usize],
                    (_, Some(class)) => &mut limits.classes[class as usize],
                    _ => return Err(unknown(&selector)),
                },
            };
            if slot.is_some() {
                return Err(format!("{at}: {selector} is set twice"));
            }
            *slot = Some(setting);
        }
        Ok(limits)
    }
}

/// `STOREGATE_RATE_LIMIT_MODE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RateLimitMode {
    /// Past a limit, 429.
    #[default]
    Enforce,
    /// Past a limit, served, and counted as a refusal that would have been (roll-out).
    Shadow,
}

/// The default of `STOREGATE_SIGNIN_LIMIT`: ten failed sign-ins in five minutes.
pub const DEFAULT_SIGNIN_LIMIT: Rate = Rate {
    count: 10,
    window: Duration::from_secs(300),
};

/// Reads the three keys into `config`.
pub(super) fn section(raw: &RawValues, config: &mut Config) -> Result<(), ConfigError> {
    if let Some(r) = raw.get("rate_limits") {
        let value = r.value.trim();
        config.rate_limits = if value.eq_ignore_ascii_case("off") {
            RateLimits::default()
        } else {
            RateLimits::parse(value)
                .map_err(|why| ConfigError(format!("invalid {}: {why}", r.origin)))?
        };
    }
    if let Some(r) = raw.get("signin_limit") {
        let value = r.value.trim();
        config.signin_limit = if value.eq_ignore_ascii_case("off") {
            None
        } else {
            Some(
                Rate::parse(value)
                    .map_err(|why| ConfigError(format!("invalid {}: {why} (or off)", r.origin)))?,
            )
        };
    }
    if let Some(r) = raw.get("rate_limit_mode") {
        config.rate_limit_mode = match r.value.trim().to_ascii_lowercase().as_str() {
            "enforce" | "" => RateLimitMode::Enforce,
            "shadow" => RateLimitMode::Shadow,
            _ => return Err(r.fail("enforce or shadow")),
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(count: u32, secs: u64) -> Rate {
        Rate {
            count,
            window: Duration::from_secs(secs),
        }
    }

    #[test]
    fn rates_read_and_print_back() {
        assert_eq!(Rate::parse("300/60s"), Ok(rate(300, 60)));
        assert_eq!(Rate::parse(" 10 / 5m "), Ok(rate(10, 300)));
        assert_eq!(Rate::parse("5/h"), Ok(rate(5, 3600)));
        assert_eq!(Rate::parse("20/10s").unwrap().to_string(), "20/10s");
        for bad in [
            "",
            "300",
            "300/60",
            "0/60s",
            "x/60s",
            "300/0s",
            "300/2d",
            "300/25h",
            "-1/1s",
            "300/60 s x",
            "1000000001/1s",
        ] {
            assert!(Rate::parse(bad).is_err(), "{bad:?} was taken");
        }
    }

    #[test]
    fn the_most_specific_setting_counts() {
        let limits = RateLimits::parse(
            "guest=300/60s,customer=600/60s,consumer=6000/60s,admin=off,writes=60/60s,customer.writes=30/60s",
        )
        .unwrap();
        use ClientKind::*;
        use RouteClass::*;
        assert_eq!(limits.rate(Guest, Catalog, None), Some(rate(300, 60)));
        assert_eq!(limits.rate(Guest, Writes, None), Some(rate(60, 60)));
        assert_eq!(limits.rate(Customer, Writes, None), Some(rate(30, 60)));
        assert_eq!(limits.rate(Customer, Account, None), Some(rate(600, 60)));
        assert_eq!(limits.rate(Admin, Writes, None), None);
        assert_eq!(limits.rate(Admin, Catalog, None), None);
        // A consumer's own limit replaces `consumer=`, not the class's.
        let own = Some(rate(50, 10));
        assert_eq!(limits.rate(Consumer, Catalog, own), own);
        assert_eq!(limits.rate(Consumer, Writes, own), Some(rate(60, 60)));
        assert!(limits.limits_kind(Guest) && !limits.limits_kind(Admin));
        assert!(RateLimits::parse("").unwrap().is_empty());
        let classes_only = RateLimits::parse("writes=10/1s").unwrap();
        assert_eq!(classes_only.rate(Guest, Catalog, None), None);
        assert_eq!(classes_only.rate(Admin, Writes, None), Some(rate(10, 1)));
    }

    #[test]
    fn a_bad_item_is_named() {
        let e = RateLimits::parse("guest=300/60s,custmer=600/60s").unwrap_err();
        assert!(e.starts_with("item 2 (\"custmer=600/60s\")"), "{e}");
        assert!(e.contains("\"custmer\""), "{e}");
        let e = RateLimits::parse("guest=300/60s,guest=1/1s").unwrap_err();
        assert!(e.contains("item 2") && e.contains("twice"), "{e}");
        let e = RateLimits::parse("guest=300").unwrap_err();
        assert!(e.starts_with("item 1 (\"guest=300\")"), "{e}");
        let e = RateLimits::parse("guest.reads=1/1s").unwrap_err();
        assert!(e.contains("\"reads\""), "{e}");
        let e = RateLimits::parse("guest").unwrap_err();
        assert!(e.contains("SELECTOR=RATE"), "{e}");
    }
}
