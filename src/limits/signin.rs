//! Sign-in that cannot be brute-forced: failed sign-ins counted per username and per
//! address (`STOREGATE_SIGNIN_LIMIT`, ten in five minutes by default), and past either
//! count a 429 before the store is asked, so an attacker never reaches the store's own
//! lockout (which would lock the customer out of the shop).
//!
//! Each attempt takes a place in both windows before the store is asked ([`SignIn::begin`]),
//! so that attempts sent at once cannot all slip past the count; what the store then says
//! settles it ([`Attempt`]): a wrong password keeps both places, a success clears the
//! username's failures and gives the address's place back, a store that did not answer
//! gives both back (the client is not at fault); an attempt dropped unsettled (the client
//! went away mid-sign-in) stays counted, the safe side for a guard against guessing. Usernames are compared trimmed and in
//! lower case (e-mail addresses), and known only by a keyed digest.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::client::{self, Client, Names};
use super::ledger::{Ledger, LedgerKey, Taken};
use crate::config::Rate;

/// Which count refused a sign-in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    Username,
    Address,
}

impl By {
    pub fn as_str(self) -> &'static str {
        match self {
            By::Username => "username",
            By::Address => "address",
        }
    }
}

/// A sign-in refused before the store was asked.
#[derive(Debug, Clone, Copy)]
pub struct TooMany {
    pub retry_secs: u64,
    pub by: By,
}

/// Refusals for `/metrics`: by username, by address; and those shadow mode let through.
#[derive(Debug, Default)]
pub struct SignInStats {
    pub by_username: AtomicU64,
    pub by_address: AtomicU64,
    pub shadow_by_username: AtomicU64,
    pub shadow_by_address: AtomicU64,
}

/// The sign-in guard of one gateway.
#[derive(Debug)]
pub struct SignIn {
    rate: Option<Rate>,
    shadow: bool,
    ledger: Arc<Ledger>,
    names: Names,
    pub stats: SignInStats,
}

/// One sign-in under way: its places in the windows, until the store's answer settles it.
#[must_use = "settle the attempt with the store's answer"]
pub struct Attempt<'a> {
    guard: &'a SignIn,
    user: Option<(LedgerKey, Taken)>,
    address: Option<(LedgerKey, Taken)>,
}

impl SignIn {
    pub fn new(rate: Option<Rate>, shadow: bool, ledger: Arc<Ledger>, names: Names) -> SignIn {
        SignIn {
            rate,
            shadow,
            ledger,
            names,
            stats: SignInStats::default(),
        }
    }

    pub fn is_on(&self) -> bool {
        self.rate.is_some()
    }

    fn key(&self, what: &str, rate: Rate, id: &[u8]) -> LedgerKey {
        let digest = self.names.digest(&[
            b"signin",
            what.as_bytes(),
            &rate.window_secs().to_be_bytes(),
            id,
        ]);
        LedgerKey {
            digest,
            redis: format!(
                "signin.{what}.{}s:{}",
                rate.window_secs(),
                client::hex(&digest)
            )
            .into(),
        }
    }

    /// Takes a place for a sign-in of `username` from `address` (`scope` keeps the
    /// customers' and the operator's usernames apart); a refusal when either count is
    /// spent (in shadow mode, counted and let through).
    pub async fn begin(
        &self,
        scope: &str,
        username: &str,
        address: Option<IpAddr>,
    ) -> Result<Attempt<'_>, TooMany> {
        let mut attempt = Attempt {
            guard: self,
            user: None,
            address: None,
        };
        let Some(rate) = self.rate else {
            return Ok(attempt);
        };
        let name = format!("{scope}:{}", username.trim().to_lowercase());
        let user = self.key("user", rate, name.as_bytes());
        let taken = self.ledger.take(&user, rate, 1).await;
        if taken.granted == 0 {
            return self.refused(By::Username, &taken, attempt);
        }
        attempt.user = Some((user, taken));
        if let Some(address) = address {
            let id = Client::guest(address).id.to_be_bytes();
            let key = self.key("address", rate, &id);
            let taken = self.ledger.take(&key, rate, 1).await;
            if taken.granted == 0 {
                return self.refused(By::Address, &taken, attempt);
            }
            attempt.address = Some((key, taken));
        }
        Ok(attempt)
    }

    fn refused<'a>(
        &'a self,
        by: By,
        taken: &Taken,
        mut attempt: Attempt<'a>,
    ) -> Result<Attempt<'a>, TooMany> {
        let counter = match (by, self.shadow) {
            (By::Username, false) => &self.stats.by_username,
            (By::Address, false) => &self.stats.by_address,
            (By::Username, true) => &self.stats.shadow_by_username,
            (By::Address, true) => &self.stats.shadow_by_address,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        if self.shadow {
            return Ok(attempt);
        }
        let retry_secs = taken.standing.retry_ms.div_ceil(1000).max(1);
        // The place the other count gave is not a failure: back it goes, in the
        // background (the refusal does not wait for Redis).
        if let Some((key, taken)) = attempt.user.take() {
            let ledger = self.ledger.clone();
            let give = async move {
                ledger
                    .give_back(&key, taken.in_fleet, taken.bucket, taken.granted)
                    .await
            };
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn(give);
                }
                Err(_) => drop(give),
            }
        }
        Err(TooMany { retry_secs, by })
    }
}

impl Attempt<'_> {
    /// The store took the password: the username's failures are forgotten, and the
    /// address's place given back.
    pub async fn succeeded(mut self) {
        if let Some((key, _)) = self.user.take() {
            self.guard.ledger.clear(&key).await;
        }
        if let Some((key, taken)) = self.address.take() {
            self.guard
                .ledger
                .give_back(&key, taken.in_fleet, taken.bucket, taken.granted)
                .await;
        }
    }

    /// The store refused the password: both places stay counted.
    pub fn failed(mut self) {
        self.user = None;
        self.address = None;
    }

    /// The store did not answer: not the client's failure, both places go back.
    pub async fn undecided(mut self) {
        for (key, taken) in [self.user.take(), self.address.take()]
            .into_iter()
            .flatten()
        {
            self.guard
                .ledger
                .give_back(&key, taken.in_fleet, taken.bucket, taken.granted)
                .await;
        }
    }
}
