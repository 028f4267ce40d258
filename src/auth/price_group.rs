//! Whose prices a shopper's answer shows: a customer group and, where the store taxes each
//! customer by their addresses, their tax destination. A value of its own, below both the
//! caller (which carries it) and the cache keys (which name it), so neither imports the
//! other for it.

/// Whose prices a shopper's answer shows (part of its cache key; `rules::pricing` works it
/// out): a customer group and, for a store that renders
/// for each customer (`Backend::renders_for_customers`), where that customer's tax is
/// computed for. The store works out a customer's tax-inclusive prices from their group's
/// tax class and their default billing and shipping addresses, so two customers of one group
/// share an answer only when those addresses are in the same place (country, region,
/// postcode): sharing by group alone would show one customer prices taxed for another's
/// address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PriceGroup {
    pub group: u64,
    /// A digest of the tax destination; `None`: the answer does not depend on it.
    pub destination: Option<u64>,
}

impl PriceGroup {
    /// Anonymous shoppers' prices (the NOT LOGGED IN group).
    pub const ANONYMOUS: PriceGroup = PriceGroup {
        group: 0,
        destination: None,
    };

    /// The form kept in the cache (`records::lookups::customer_group`, read by the fast
    /// path too): `1`, or `1;8f3a...` with a destination.
    pub fn to_text(self) -> String {
        match self.destination {
            None => self.group.to_string(),
            Some(d) => format!("{};{d:016x}", self.group),
        }
    }

    pub fn from_text(text: &str) -> Option<PriceGroup> {
        let (group, destination) = match text.split_once(';') {
            Some((group, d)) => (group, Some(u64::from_str_radix(d, 16).ok()?)),
            None => (text, None),
        };
        Some(PriceGroup {
            group: group.parse().ok()?,
            destination,
        })
    }
}
