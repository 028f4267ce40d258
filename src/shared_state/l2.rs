//! The second cache level: upstream records kept in Redis for every instance
//! (`STOREGATE_SHARED_CACHE=1`), so N instances cost the store one fetch per record, not N.
//!
//! It sits behind the local cache and is asked only on a local miss (`Cache::
//! get_or_fetch_shared`); a local hit never touches Redis. Entries are validated the way
//! local ones are, with the tag clock kept in Redis (`link.rs` moves it with every
//! invalidation, in the same script that tells the other instances): an entry records the
//! shared sequence read before its fetch began, and is valid while none of its tags (nor a
//! purge of everything) moved past it. A fetch that raced a write is never taken for fresh.
//!
//! Concurrent misses of one record on several instances make one upstream call: the first
//! claims the fill (`SET NX PX`), the others poll Redis for its result for as long as the
//! claim lasts or their deadline allows, then fetch for themselves.
//!
//! Records are filed under the back end they came from (its kind and a digest of its URL):
//! a fleet that switches `STOREGATE_BACKEND` or `STOREGATE_UPSTREAM_URL` never reads the
//! other store's records as its own.
//!
//! Everything fails open: a Redis that is down or slow makes this a miss, never an error.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;

use super::link::Link;
use crate::cache::{Fetched, FillTicket, SecondLevel, SecondLevelLookup, Value};

/// Reads an entry and validates it against the shared tag clock; on a miss, claims the
/// fill (`ARGV[3]` = 1) and says whether someone else holds it.
const LOOKUP: &str = r#"
local now_seq = redis.call('GET', KEYS[2]) or '0'
local e = redis.call('HMGET', KEYS[1], 'seq', 'tags', 'kind', 'at', 'val')
if e[1] then
  local seq = tonumber(e[1])
  local ok = tonumber(redis.call('GET', KEYS[4]) or '0') <= seq
  if ok then
    for _, tag in ipairs(cjson.decode(e[2])) do
      if tonumber(redis.call('HGET', KEYS[3], tag) or '0') > seq then ok = false break end
    end
  end
  if ok then return {'hit', now_seq, e[2], e[3], e[4], e[5]} end
end
if redis.call('SET', KEYS[5], ARGV[1], 'NX', 'PX', ARGV[2]) then return {'fill', now_seq} end
return {'wait', now_seq}
"#;

const STORE: &str = r#"
redis.call('HSET', KEYS[1], 'seq', ARGV[1], 'tags', ARGV[2], 'kind', ARGV[3], 'at', ARGV[4], 'val', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
if ARGV[7] ~= '' and redis.call('GET', KEYS[2]) == ARGV[7] then redis.call('DEL', KEYS[2]) end
return 1
"#;

/// Counters for `/metrics`.
#[derive(Debug, Default)]
pub struct SharedCacheStats {
    pub hits: AtomicU64,
    pub misses: AtomicU64,
    /// Lookups that waited for another instance's fetch.
    pub waits: AtomicU64,
    /// Lookups not made (Redis down, or this instance's invalidations not yet published).
    pub skipped: AtomicU64,
}

#[derive(Debug)]
pub struct SharedCache {
    link: Arc<Link>,
    /// Which store the records come from (`backend_scope`): part of every key, so that
    /// records one back end filled are never read as another's (a fleet moved from
    /// OpenMage to Magento 2 keeps its Redis; the records' shapes differ).
    scope: String,
    ttl: Duration,
    /// How long a fill claim lasts: as long as one upstream call may.
    fill_lease: Duration,
    pub stats: SharedCacheStats,
}

/// What the lookup script answered.
enum Verdict {
    /// An entry, valid; `seq` is the shared sequence now (for a store if it is unusable).
    Hit {
        seq: Option<u64>,
        tags: Option<Vec<u8>>,
        kind: Option<Vec<u8>>,
        at: Option<u64>,
        val: Option<Vec<u8>>,
    },
    /// Nothing valid; this lookup claimed the fill.
    Fill { seq: Option<u64> },
    /// Nothing valid; another instance is fetching it.
    Wait { seq: Option<u64> },
}

static LOOKUP_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(LOOKUP));
static STORE_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(STORE));

impl SharedCache {
    pub fn new(
        link: Arc<Link>,
        scope: String,
        ttl: Duration,
        upstream_timeout: Duration,
    ) -> SharedCache {
        SharedCache {
            link,
            scope,
            ttl,
            fill_lease: upstream_timeout,
            stats: SharedCacheStats::default(),
        }
    }

    /// `key` in this back end's part of Redis.
    fn scoped(&self, key: &str) -> String {
        format!("{}|{key}", self.scope)
    }

    async fn ask(&self, key: &str, claim: &str) -> Option<Verdict> {
        let mut conn = self.link.connection();
        let mut call = LOOKUP_SCRIPT.key(self.link.keys.record(&self.scoped(key)));
        call.key(self.link.keys.seq())
            .key(self.link.keys.tag_marks())
            .key(self.link.keys.all_mark())
            .key(self.link.keys.fill(&self.scoped(key)))
            .arg(claim)
            .arg(self.fill_lease.as_millis() as u64);
        let reply: Vec<redis::Value> = self
            .link
            .run("shared cache lookup", call.invoke_async(&mut conn))
            .await
            .ok()?;
        let bytes = |i: usize| -> Option<Vec<u8>> {
            match reply.get(i) {
                Some(redis::Value::BulkString(b)) => Some(b.clone()),
                Some(redis::Value::SimpleString(s)) => Some(s.clone().into_bytes()),
                Some(redis::Value::Int(n)) => Some(n.to_string().into_bytes()),
                _ => None,
            }
        };
        let number = |i: usize| -> Option<u64> { String::from_utf8(bytes(i)?).ok()?.parse().ok() };
        match bytes(0)?.as_slice() {
            b"hit" => Some(Verdict::Hit {
                seq: number(1),
                tags: bytes(2),
                kind: bytes(3),
                at: number(4),
                val: bytes(5),
            }),
            b"fill" => Some(Verdict::Fill { seq: number(1) }),
            b"wait" => Some(Verdict::Wait { seq: number(1) }),
            _ => None,
        }
    }

    /// A hit's record, if it is readable and still fresh.
    fn record(
        &self,
        tags: Option<Vec<u8>>,
        kind: Option<Vec<u8>>,
        at: Option<u64>,
        val: Option<Vec<u8>>,
    ) -> Option<SecondLevelLookup> {
        let tags: Vec<String> = serde_json::from_slice(&tags?).ok()?;
        let val = val?;
        let value = match kind?.as_slice() {
            b"b" => Value::Bytes(Bytes::from(val)),
            b"t" => Value::Text(String::from_utf8(val).ok()?.into()),
            _ => return None,
        };
        let age = Duration::from_millis(super::now_ms().saturating_sub(at?));
        if age >= self.ttl {
            return None;
        }
        Some(SecondLevelLookup::Hit {
            fetched: Fetched::new(value, tags),
            age,
        })
    }

    async fn find(&self, key: &str) -> SecondLevelLookup {
        let skip = || {
            self.stats.skipped.fetch_add(1, Ordering::Relaxed);
            SecondLevelLookup::Miss(FillTicket::default())
        };
        let miss = |seq: Option<u64>, claim: Option<String>| {
            self.stats.misses.fetch_add(1, Ordering::Relaxed);
            SecondLevelLookup::Miss(FillTicket { seq, claim })
        };
        // While an invalidation made here is unpublished, Redis may hold what it
        // invalidated: this instance must read its own writes.
        if !self.link.is_up() || !self.link.invalidations_published() {
            return skip();
        }
        let claim = super::random_token();
        // Waiting for another instance's fetch never takes more than half of what is left
        // of the request's deadline: the fetch of our own must still fit.
        let budget = crate::context::request::remaining()
            .unwrap_or(self.fill_lease)
            .min(self.fill_lease)
            / 2;
        let give_up = tokio::time::Instant::now() + budget;
        let mut waited = false;
        let mut pause = Duration::from_millis(2);
        loop {
            match self.ask(key, &claim).await {
                None => return skip(),
                Some(Verdict::Hit {
                    seq,
                    tags,
                    kind,
                    at,
                    val,
                }) => {
                    return match self.record(tags, kind, at, val) {
                        Some(hit) => {
                            self.stats.hits.fetch_add(1, Ordering::Relaxed);
                            hit
                        }
                        // Unreadable (another version's format) or too old: fetch, and
                        // let the store replace it.
                        None => miss(seq, None),
                    };
                }
                Some(Verdict::Fill { seq }) => return miss(seq, Some(claim)),
                Some(Verdict::Wait { seq }) => {
                    if !waited {
                        waited = true;
                        self.stats.waits.fetch_add(1, Ordering::Relaxed);
                    }
                    let now = tokio::time::Instant::now();
                    if now >= give_up {
                        return miss(seq, None);
                    }
                    tokio::time::sleep(pause.min(give_up - now)).await;
                    pause = (pause * 2).min(Duration::from_millis(25));
                }
            }
        }
    }

    async fn keep(&self, key: &str, ticket: FillTicket, fetched: &Fetched) {
        let (kind, val): (&str, &[u8]) = match &fetched.value {
            Value::Bytes(b) => ("b", b),
            Value::Text(t) => ("t", t.as_bytes()),
            // Rendered bodies are built from records locally; only records are shared.
            Value::Body(_) => {
                self.abandon_claim(key, ticket.claim).await;
                return;
            }
        };
        let Some(seq) = ticket.seq else {
            self.abandon_claim(key, ticket.claim).await;
            return;
        };
        let tags = serde_json::to_string(&fetched.tags).unwrap_or_else(|_| "[]".into());
        let mut conn = self.link.connection();
        let mut call = STORE_SCRIPT.key(self.link.keys.record(&self.scoped(key)));
        call.key(self.link.keys.fill(&self.scoped(key)))
            .arg(seq)
            .arg(tags)
            .arg(kind)
            .arg(super::now_ms())
            .arg(val)
            .arg(self.ttl.as_millis() as u64)
            .arg(ticket.claim.unwrap_or_default());
        let _ = self
            .link
            .run("shared cache store", call.invoke_async::<i64>(&mut conn))
            .await;
    }

    async fn abandon_claim(&self, key: &str, claim: Option<String>) {
        if let Some(claim) = claim {
            super::lease::release(&self.link, &self.link.keys.fill(&self.scoped(key)), &claim)
                .await;
        }
    }
}

impl SecondLevel for SharedCache {
    fn lookup<'a>(&'a self, key: &'a str) -> BoxFuture<'a, SecondLevelLookup> {
        Box::pin(self.find(key))
    }

    fn store<'a>(
        &'a self,
        key: &'a str,
        ticket: FillTicket,
        fetched: &'a Fetched,
    ) -> BoxFuture<'a, ()> {
        Box::pin(self.keep(key, ticket, fetched))
    }

    fn abandon<'a>(&'a self, key: &'a str, ticket: FillTicket) -> BoxFuture<'a, ()> {
        Box::pin(self.abandon_claim(key, ticket.claim))
    }
}

/// The part of Redis a back end's records live in: its kind and a digest of its URL (the
/// embedded sandbox's when none is configured). Cassettes (`replay:DIR`) stand in for the
/// store they were recorded from, whatever their folder: one scope for all of them.
pub fn backend_scope(config: &crate::config::Config) -> String {
    use sha2::Digest;
    let url = match config.upstream.as_ref().map(|u| u.url.as_str()) {
        None => "sandbox",
        Some(url) if url.starts_with(crate::config::REPLAY_SCHEME) => "replay",
        Some(url) => url,
    };
    let digest = sha2::Sha256::digest(url.as_bytes());
    let short: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    format!("{}@{short}", config.backend.as_str())
}
