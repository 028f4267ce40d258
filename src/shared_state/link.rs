//! The connection to Redis: every call with a deadline, whether Redis is up, the outbox of
//! events waiting to be published, and the subscriber that applies other instances' events.
//!
//! Calls go through one `redis` `ConnectionManager` (a multiplexed connection that
//! reconnects by itself), each under `STOREGATE_REDIS_TIMEOUT_MS`: a Redis that hangs costs a
//! request that much, never its whole deadline. A failed or late call marks Redis down; the
//! health loop's next answered PING marks it up again.
//!
//! Events this instance makes (invalidations, revocations) are applied here at once and
//! queued; the publisher sends them in order, and keeps them while Redis is down, so other
//! instances get them when it is back. The subscriber holds its own connection; after any
//! gap in it (Redis down, connection lost) it purges this instance's cache, because messages
//! sent meanwhile are lost, and reloads the revocations, which Redis also keeps.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};
use std::time::Duration;

use futures_util::StreamExt;
use redis::aio::ConnectionManager;
use tokio::sync::Notify;

use super::SharedError;
use super::events::Event;
use crate::auth::TokenIssuer;
use crate::cache::Cache;

/// Events kept while Redis is down; past this many, they collapse into one purge of
/// everything (the safe superset of any number of invalidations).
const OUTBOX_LIMIT: usize = 10_000;
const UNKNOWN: u8 = 0;
const UP: u8 = 1;
const DOWN: u8 = 2;
/// How often the health loop pings Redis while it answers.
const HEALTH_EVERY: Duration = Duration::from_secs(1);
/// How often while it does not: Redis back is seen within this (issue 32: within a second).
const HEALTH_EVERY_DOWN: Duration = Duration::from_millis(250);

/// Abandoned leases remembered while Redis does not answer; past this many, the oldest are
/// left to expire by themselves (their releases were also queued right behind them).
const ABANDONED_LIMIT: usize = 1_000;

/// The longest pause between attempts to subscribe again: a Redis back is listened to
/// within about this.
const SUBSCRIBE_BACKOFF_MAX: Duration = Duration::from_millis(500);

/// What every key storegate keeps in Redis begins with.
pub const PREFIX: &str = "storegate:";

/// Names of everything storegate keeps in Redis.
#[derive(Debug, Clone)]
pub struct Keys {
    prefix: String,
}

impl Keys {
    pub fn new(prefix: &str) -> Keys {
        Keys {
            prefix: prefix.to_owned(),
        }
    }
    pub fn channel(&self) -> String {
        format!("{}events", self.prefix)
    }
    pub fn revocations(&self) -> String {
        format!("{}revoked", self.prefix)
    }
    /// The shared invalidation sequence, per-tag marks and the purge-everything mark (the
    /// local cache's tag clock, in Redis: the second level validates entries with it).
    pub fn seq(&self) -> String {
        format!("{}inv:seq", self.prefix)
    }
    pub fn tag_marks(&self) -> String {
        format!("{}inv:tags", self.prefix)
    }
    pub fn all_mark(&self) -> String {
        format!("{}inv:all", self.prefix)
    }
    pub fn record(&self, key: &str) -> String {
        format!("{}l2:{key}", self.prefix)
    }
    pub fn fill(&self, key: &str) -> String {
        format!("{}fill:{key}", self.prefix)
    }
    pub fn lock(&self, name: &str) -> String {
        format!("{}lock:{name}", self.prefix)
    }
    pub fn once(&self, key: &str) -> String {
        format!("{}once:{key}", self.prefix)
    }
    /// One part (`counts`, `firsts`, `since`) of the tally `name` (`super::tallies`).
    pub fn tally(&self, name: &str, part: &str) -> String {
        format!("{}tally:{name}:{part}", self.prefix)
    }
}

/// Counters for `/metrics`.
#[derive(Debug, Default)]
pub struct LinkStats {
    pub errors: AtomicU64,
    pub published: AtomicU64,
    pub received: AtomicU64,
    pub resyncs: AtomicU64,
}

pub struct Link {
    client: redis::Client,
    conn: ConnectionManager,
    pub keys: Keys,
    /// This instance, so that it skips its own events.
    pub instance: String,
    timeout: Duration,
    /// [`UNKNOWN`] until the first call's verdict, then [`UP`] or [`DOWN`].
    state: AtomicU8,
    outbox: Mutex<VecDeque<Event>>,
    /// Invalidations in the outbox: while any is unpublished, the second level may still
    /// hold what they invalidate, so this instance does not read it.
    queued_invalidations: AtomicU64,
    wake: Arc<Notify>,
    /// Where Redis is, for logs: host, port and database, never the password.
    pub place: String,
    pub stats: LinkStats,
    /// The OAuth provider's verified credentials, dropped on `Event::OAuthForget` (set
    /// once the provider is built, after the shared state).
    pub oauth_verified:
        std::sync::OnceLock<std::sync::Weak<crate::auth::oauth::verified::VerifiedCache>>,
    /// Leases whose take (or release) failed and may still run late: (key, token), until a
    /// release of them is answered.
    abandoned: Mutex<VecDeque<(String, String)>>,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("place", &self.place)
            .field("up", &self.is_up())
            .finish_non_exhaustive()
    }
}

/// Deletes a lease or claim only while it holds the caller's token. Sent whole (`EVAL`),
/// never by its digest: a release queued while Redis hangs runs after Redis resumes, when a
/// digest may name nothing (a Redis restarted, or never sent the script: `NOSCRIPT`), and
/// the caller, past its deadline, is no longer there to load it and retry.
const RELEASE: &str = r#"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"#;

const REVOKE: &str = r#"
local current = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if tonumber(ARGV[2]) > current then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
"#;

/// Moves the shared tag clock (read by the second level) and tells the other instances,
/// in one step, so that no instance can see the message before the clock moved.
const INVALIDATE: &str = r#"
local seq = redis.call('INCR', KEYS[1])
if ARGV[3] == 'all' then
  redis.call('SET', KEYS[3], seq)
else
  for i = 4, #ARGV do redis.call('HSET', KEYS[2], ARGV[i], seq) end
end
redis.call('PUBLISH', ARGV[1], ARGV[2])
return seq
"#;

static REVOKE_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(REVOKE));
static INVALIDATE_SCRIPT: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(INVALIDATE));

impl Link {
    /// Connects lazily (the first call, or the health loop, makes the connection).
    pub fn new(url: &str, timeout: Duration) -> Result<Link, String> {
        let client = redis::Client::open(url)
            .map_err(|e| format!("invalid STOREGATE_REDIS_URL: {}", e.kind_text()))?;
        let info = client.get_connection_info();
        let place = format!("{}/{}", info.addr(), info.redis_settings().db());
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(timeout))
            .set_response_timeout(Some(timeout))
            .set_number_of_retries(1)
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(Duration::from_millis(500));
        let conn = client
            .get_connection_manager_lazy(config)
            .map_err(|e| format!("cannot set up the Redis client: {}", e.kind_text()))?;
        let mut instance = [0u8; 8];
        getrandom::fill(&mut instance).expect("the operating system's random generator");
        Ok(Link {
            client,
            conn,
            keys: Keys::new(PREFIX),
            instance: instance.iter().map(|b| format!("{b:02x}")).collect(),
            timeout,
            state: AtomicU8::new(UNKNOWN),
            outbox: Mutex::new(VecDeque::new()),
            queued_invalidations: AtomicU64::new(0),
            wake: Arc::new(Notify::new()),
            place,
            stats: LinkStats::default(),
            oauth_verified: std::sync::OnceLock::new(),
            abandoned: Mutex::new(VecDeque::new()),
        })
    }

    pub fn is_up(&self) -> bool {
        self.state.load(Ordering::Relaxed) == UP
    }

    /// A call failed or passed its deadline, and none has been answered since (before the
    /// first verdict it is not down: the first calls find out).
    pub fn is_down(&self) -> bool {
        self.state.load(Ordering::Relaxed) == DOWN
    }

    pub fn connection(&self) -> ConnectionManager {
        self.conn.clone()
    }

    /// True when every invalidation made here has reached Redis.
    pub fn invalidations_published(&self) -> bool {
        self.queued_invalidations.load(Ordering::SeqCst) == 0
    }

    /// Records a verdict; the first one, and every change, is logged.
    fn mark(&self, up: bool, why: &str) {
        let state = if up { UP } else { DOWN };
        if self.state.swap(state, Ordering::Relaxed) != state {
            if up {
                tracing::info!(redis = %self.place, "Redis is reachable: shared state is on");
            } else {
                tracing::warn!(
                    redis = %self.place,
                    error = why,
                    "Redis is unreachable: serving from this instance's state until it is back"
                );
            }
        }
    }

    /// Runs one Redis call under the deadline; a failure marks Redis down.
    pub async fn run<T>(
        &self,
        what: &'static str,
        call: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, SharedError> {
        match tokio::time::timeout(self.timeout, call).await {
            Ok(Ok(value)) => {
                self.mark(true, "");
                Ok(value)
            }
            Ok(Err(error)) => {
                self.stats.errors.fetch_add(1, Ordering::Relaxed);
                // The kind and code only: a message may quote the command's arguments.
                let why = error.kind_text();
                self.mark(false, &why);
                Err(SharedError::Unavailable(format!("{what}: {why}")))
            }
            Err(_) => {
                self.stats.errors.fetch_add(1, Ordering::Relaxed);
                self.mark(false, "timed out");
                Err(SharedError::Unavailable(format!("{what}: timed out")))
            }
        }
    }

    /// Deletes `key` while it holds `token`.
    pub async fn release_if_held(&self, key: &str, token: &str) -> Result<(), SharedError> {
        let mut conn = self.connection();
        self.run(
            "release",
            release_command(key, token).query_async::<i64>(&mut conn),
        )
        .await
        .map(drop)
    }

    /// A lease whose take failed: released now (queued behind the take, on the same
    /// connection) and again once Redis answers after the outage.
    pub fn abandon(self: &Arc<Self>, key: &str, token: &str) {
        self.remember_abandoned(key, token);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (link, key, token) = (self.clone(), key.to_owned(), token.to_owned());
            runtime.spawn(async move {
                let _ = link.release_if_held(&key, &token).await;
            });
        }
    }

    /// A lease to release once Redis answers (`release_abandoned`). Not moot after the
    /// lease's length from now: a take queued in a hung Redis runs, and its lease starts,
    /// only when Redis resumes.
    pub(super) fn remember_abandoned(&self, key: &str, token: &str) {
        let mut abandoned = self.abandoned.lock().unwrap_or_else(|e| e.into_inner());
        abandoned.push_back((key.to_owned(), token.to_owned()));
        if abandoned.len() > ABANDONED_LIMIT {
            abandoned.pop_front();
        }
    }

    /// Releases the abandoned leases (Redis answered again), in one round trip. An answered
    /// release is the end of one: it was sent after the take, on the same connection, so
    /// the take has run (and is undone) or never will. Unanswered, they stay for next time.
    async fn release_abandoned(&self) {
        let pending: Vec<_> = {
            let mut abandoned = self.abandoned.lock().unwrap_or_else(|e| e.into_inner());
            abandoned.drain(..).collect()
        };
        if pending.is_empty() {
            return;
        }
        let mut releases = redis::pipe();
        // A release Redis refuses (a replica, scripts off) is answered too: sent again, it
        // would only be refused again.
        releases.ignore_errors();
        for (key, token) in &pending {
            releases.add_command(release_command(key, token)).ignore();
        }
        let mut conn = self.connection();
        let answered = self
            .run("release abandoned", releases.query_async::<()>(&mut conn))
            .await;
        if answered.is_err() {
            for (key, token) in pending {
                self.remember_abandoned(&key, &token);
            }
        }
    }

    /// Queues an event made here for the other instances.
    pub fn send(&self, event: Event) {
        let mut outbox = self.outbox.lock().unwrap_or_else(|e| e.into_inner());
        if matches!(
            event,
            Event::Invalidate { .. } | Event::InvalidateAll { .. }
        ) {
            self.queued_invalidations.fetch_add(1, Ordering::SeqCst);
        }
        outbox.push_back(event);
        if outbox.len() > OUTBOX_LIMIT {
            // Keep the revocations, fold every invalidation into one purge.
            let mut kept: VecDeque<Event> = outbox
                .drain(..)
                .filter(|e| matches!(e, Event::Revoke { .. } | Event::OAuthForget { .. }))
                .collect();
            kept.push_back(Event::InvalidateAll {
                origin: self.instance.clone(),
            });
            *outbox = kept;
            self.queued_invalidations.store(1, Ordering::SeqCst);
        }
        drop(outbox);
        self.wake.notify_one();
    }

    async fn publish(&self, event: &Event) -> Result<(), SharedError> {
        let mut conn = self.connection();
        let message = event.encode();
        match event {
            Event::Revoke { customer, at, .. } => {
                let mut call = REVOKE_SCRIPT.key(self.keys.revocations());
                call.arg(customer)
                    .arg(at)
                    .arg(self.keys.channel())
                    .arg(&message);
                self.run("revoke", call.invoke_async::<i64>(&mut conn))
                    .await?;
            }
            Event::Invalidate { .. } | Event::InvalidateAll { .. } => {
                let mut call = INVALIDATE_SCRIPT.key(self.keys.seq());
                call.key(self.keys.tag_marks())
                    .key(self.keys.all_mark())
                    .arg(self.keys.channel())
                    .arg(&message);
                if let Event::Invalidate { tags, .. } = event {
                    call.arg("tags");
                    for tag in tags {
                        call.arg(tag);
                    }
                } else {
                    call.arg("all");
                }
                self.run("invalidate", call.invoke_async::<i64>(&mut conn))
                    .await?;
            }
            Event::OAuthForget { .. } => {
                // Nothing to keep in Redis: a subscriber that missed it forgets everything
                // when it resubscribes.
                self.run(
                    "oauth forget",
                    redis::cmd("PUBLISH")
                        .arg(self.keys.channel())
                        .arg(&message)
                        .query_async::<i64>(&mut conn),
                )
                .await?;
            }
        }
        self.stats.published.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Publishes the outbox in order; stops at the first failure (the rest waits).
    async fn flush(&self) {
        loop {
            let next = {
                let outbox = self.outbox.lock().unwrap_or_else(|e| e.into_inner());
                outbox.front().cloned()
            };
            let Some(event) = next else { return };
            if self.publish(&event).await.is_err() {
                return;
            }
            let mut outbox = self.outbox.lock().unwrap_or_else(|e| e.into_inner());
            // The outbox may have been folded meanwhile; pop only what was published.
            if outbox.front() == Some(&event) {
                outbox.pop_front();
                if !matches!(event, Event::Revoke { .. } | Event::OAuthForget { .. }) {
                    let _ = self.queued_invalidations.fetch_update(
                        Ordering::SeqCst,
                        Ordering::SeqCst,
                        |n| Some(n.saturating_sub(1)),
                    );
                }
            }
        }
    }

    /// Whatever Redis keeps of other instances' revocations, applied here (after a start or
    /// a gap, when messages may have been missed). Marks older than a token's lifetime can
    /// no longer refuse anything and are dropped.
    async fn load_revocations(&self, tokens: &TokenIssuer) -> Result<(), SharedError> {
        let mut conn = self.connection();
        // As text: a field someone else wrote there is skipped, not fatal.
        let marks: Vec<(String, String)> = self
            .run(
                "load revocations",
                redis::cmd("HGETALL")
                    .arg(self.keys.revocations())
                    .query_async(&mut conn),
            )
            .await?;
        let horizon = super::now_ms().saturating_sub(tokens.ttl().as_millis() as u64);
        let mut stale = Vec::new();
        for (customer, at) in marks {
            let (Ok(customer), Ok(at)) = (customer.parse::<u64>(), at.parse::<u64>()) else {
                continue;
            };
            if at < horizon {
                stale.push(customer);
            } else {
                tokens.apply_revocation(customer, at);
            }
        }
        if !stale.is_empty() {
            let _ = self
                .run(
                    "prune revocations",
                    redis::cmd("HDEL")
                        .arg(self.keys.revocations())
                        .arg(stale)
                        .query_async::<i64>(&mut conn),
                )
                .await;
        }
        Ok(())
    }

    /// Drops OAuth credentials this instance verified (another one revoked or replaced
    /// them, or revocations may have been missed).
    pub fn forget_oauth(&self, forget: &crate::auth::oauth::verified::Forget) {
        if let Some(verified) = self.oauth_verified.get().and_then(std::sync::Weak::upgrade) {
            verified.forget_here(forget);
        }
    }

    fn apply(&self, event: Event, cache: &Cache, tokens: &TokenIssuer) {
        if event.origin() == self.instance {
            return;
        }
        self.stats.received.fetch_add(1, Ordering::Relaxed);
        match event {
            Event::Invalidate {
                tags,
                hold_off_ms: None,
                ..
            } => cache.invalidate_here(&tags),
            Event::Invalidate {
                tags,
                hold_off_ms: Some(ms),
                ..
            } => cache.hold_off_here(&tags, std::time::Duration::from_millis(ms)),
            Event::InvalidateAll { .. } => cache.invalidate_all_here(),
            Event::Revoke { customer, at, .. } => tokens.apply_revocation(customer, at),
            Event::OAuthForget {
                tokens, customer, ..
            } => self.forget_oauth(&super::nonces::forget_of(tokens, customer)),
        }
    }
}

/// Starts the health loop, the publisher and the subscriber. They hold the link weakly and
/// end when the gateway that owns it is dropped.
pub fn spawn(link: &Arc<Link>, cache: &Arc<Cache>, tokens: &Arc<TokenIssuer>) {
    let weak = Arc::downgrade(link);
    tokio::spawn(health(weak.clone()));
    tokio::spawn(publisher(weak.clone()));
    tokio::spawn(subscriber(
        weak,
        Arc::downgrade(cache),
        Arc::downgrade(tokens),
    ));
}

async fn health(link: Weak<Link>) {
    loop {
        let pause = {
            let Some(link) = link.upgrade() else { return };
            let mut conn = link.connection();
            let _ = link
                .run("ping", redis::cmd("PING").query_async::<String>(&mut conn))
                .await;
            // Events queued while Redis was down go out as soon as it answers, and leases
            // taken too late are let go.
            if link.is_up() {
                link.wake.notify_one();
                link.release_abandoned().await;
                HEALTH_EVERY
            } else {
                HEALTH_EVERY_DOWN
            }
        };
        tokio::time::sleep(pause).await;
    }
}

async fn publisher(link: Weak<Link>) {
    let Some(wake) = link.upgrade().map(|l| l.wake.clone()) else {
        return;
    };
    loop {
        {
            // Not holding the link while idle lets the gateway be dropped.
            let Some(strong) = link.upgrade() else { return };
            strong.flush().await;
        }
        let _ = tokio::time::timeout(HEALTH_EVERY, wake.notified()).await;
    }
}

async fn subscriber(link: Weak<Link>, cache: Weak<Cache>, tokens: Weak<TokenIssuer>) {
    // Nothing was ever missed before the first subscription: the cache starts empty.
    let mut gap = false;
    let mut backoff = Duration::from_millis(100);
    loop {
        let (Some(strong), Some(cache), Some(tokens)) =
            (link.upgrade(), cache.upgrade(), tokens.upgrade())
        else {
            return;
        };
        let timeout = strong.timeout;
        let connected = tokio::time::timeout(timeout * 4, async {
            let (mut sink, stream) = strong.client.get_async_pubsub().await?.split();
            sink.subscribe(strong.keys.channel()).await?;
            Ok::<_, redis::RedisError>((sink, stream))
        })
        .await;
        let (mut sink, mut messages) = match connected {
            Ok(Ok(pair)) => pair,
            Ok(Err(_)) | Err(_) => {
                // A subscription that cannot be made again is the first sign of a Redis
                // gone away (its connection closed under it): down now, not at the next
                // call, so that what decides without calling (rate limits) knows at once.
                strong.mark(false, "subscription lost");
                gap = true;
                drop((strong, cache, tokens));
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(SUBSCRIBE_BACKOFF_MAX);
                continue;
            }
        };
        backoff = Duration::from_millis(100);
        strong.mark(true, "");
        // Subscribed first, then caught up: nothing sent from now on can be missed.
        if gap {
            strong.stats.resyncs.fetch_add(1, Ordering::Relaxed);
            tracing::info!(
                redis = %strong.place,
                "resubscribed after a gap: purging this instance's cache, reloading revocations"
            );
            cache.invalidate_all_here();
            // A revocation may be among what was missed: OAuth credentials are read again.
            strong.forget_oauth(&crate::auth::oauth::verified::Forget::All);
        }
        if strong.load_revocations(&tokens).await.is_err() {
            gap = true;
            drop((strong, cache, tokens));
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(SUBSCRIBE_BACKOFF_MAX);
            continue;
        }
        let weak = Arc::downgrade(&strong);
        drop(strong);
        let mut check =
            tokio::time::interval_at(tokio::time::Instant::now() + HEALTH_EVERY, HEALTH_EVERY);
        loop {
            tokio::select! {
                message = messages.next() => {
                    let Some(message) = message else { break };
                    let Some(link) = weak.upgrade() else { return };
                    if let Some(event) = Event::decode(message.get_payload_bytes()) {
                        link.apply(event, &cache, &tokens);
                    }
                }
                _ = check.tick() => {
                    if weak.strong_count() == 0 {
                        return;
                    }
                    // A Redis that stopped answering can leave this connection open and
                    // silent: a subscription that cannot answer a PING is over.
                    let pong = tokio::time::timeout(timeout * 4, sink.ping::<redis::Value>()).await;
                    if !matches!(pong, Ok(Ok(_))) {
                        break;
                    }
                }
            }
        }
        gap = true;
    }
}

/// [`RELEASE`] for `key` and `token`, script included.
fn release_command(key: &str, token: &str) -> redis::Cmd {
    let mut command = redis::cmd("EVAL");
    command.arg(RELEASE).arg(1).arg(key).arg(token);
    command
}

trait KindText {
    fn kind_text(&self) -> String;
}

impl KindText for redis::RedisError {
    /// What went wrong without the server's message text, which can quote arguments.
    fn kind_text(&self) -> String {
        match self.code() {
            Some(code) => format!("{:?} ({code})", self.kind()),
            None if self.is_timeout() => "timed out".to_owned(),
            None if self.is_connection_refusal() => "connection refused".to_owned(),
            None if self.is_io_error() => "connection lost".to_owned(),
            None => format!("{:?}", self.kind()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn tls_urls_are_understood_and_logs_never_show_the_password() {
        let link = Link::new(
            "rediss://:hunter2@cache.internal:6380/3",
            Duration::from_millis(100),
        )
        .unwrap();
        assert_eq!(link.place, "cache.internal:6380/3");
        assert!(!format!("{link:?}").contains("hunter2"));
        let plain = Link::new("redis://127.0.0.1/0", Duration::from_millis(100)).unwrap();
        assert_eq!(plain.place, "127.0.0.1:6379/0");
    }

    #[test]
    fn a_release_carries_its_script_so_that_it_runs_in_a_redis_without_it() {
        let packed = release_command("storegate:lock:customer:1", "t0k3n").get_packed_command();
        let packed = String::from_utf8(packed).unwrap();
        assert!(packed.contains("\r\nEVAL\r\n"), "{packed}");
        assert!(packed.contains("redis.call('DEL', KEYS[1])"), "{packed}");
        assert!(packed.ends_with("storegate:lock:customer:1\r\n$5\r\nt0k3n\r\n"));
    }

    #[tokio::test]
    async fn abandoned_leases_are_kept_until_released_however_long_the_hang_the_newest_if_too_many()
    {
        let link = Link::new("redis://127.0.0.1:1/0", Duration::from_millis(100)).unwrap();
        for n in 0..=ABANDONED_LIMIT {
            link.remember_abandoned(&format!("lock:{n}"), "token");
        }
        let abandoned = link.abandoned.lock().unwrap();
        assert_eq!(abandoned.len(), ABANDONED_LIMIT);
        assert_eq!(abandoned.front().unwrap().0, "lock:1");
        assert_eq!(
            abandoned.back().unwrap().0,
            format!("lock:{ABANDONED_LIMIT}")
        );
    }
}
