//! The windows of a fleet, in Redis: one hash per budget (`storegate:rl:...`), a field per
//! bucket, and three Lua scripts that take, give back and clear admissions atomically, on
//! Redis's own clock (`TIME`), so that instances whose clocks differ count alike.
//!
//! The take script is [`super::window::Window::take`] in Lua: it drops buckets that left
//! the window, counts the rest (the oldest by its share still inside), grants what fits and
//! hands back every bucket's count, which [`Window::from_counts`] reads to say what is left
//! and when to come back. A key lives one window and two buckets past its last admission
//! (`PEXPIRE`): a client that stops costs Redis nothing after that.

use std::sync::LazyLock;

use super::window::{BUCKETS, Standing, Window};
use crate::config::Rate;
use crate::shared_state::SharedError;
use crate::shared_state::scripts::Scripts;

const TAKE: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local want = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local width = tonumber(ARGV[3])
local k = tonumber(ARGV[4])
local current = math.floor(now / width)
local into = (now - current * width) / width
local flat = redis.call('HGETALL', KEYS[1])
local kept = {}
local total = 0
for i = 1, #flat, 2 do
  local b = tonumber(flat[i])
  local c = tonumber(flat[i + 1])
  if b == nil or c == nil or b < current - k or b > current then
    redis.call('HDEL', KEYS[1], flat[i])
  else
    kept[b] = c
    if b == current - k then total = total + c * (1 - into) else total = total + c end
  end
end
local free = math.floor(limit - total + 1e-9)
if free < 0 then free = 0 end
local granted = want
if free < want then granted = free end
if granted > 0 then
  redis.call('HINCRBY', KEYS[1], current, granted)
  redis.call('PEXPIRE', KEYS[1], width * (k + 2))
  kept[current] = (kept[current] or 0) + granted
end
local out = {granted, now}
for b, c in pairs(kept) do
  out[#out + 1] = b
  out[#out + 1] = c
end
return out
"#;

const GIVE_BACK: &str = r#"
local c = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local n = math.min(c, tonumber(ARGV[2]))
if n > 0 then redis.call('HINCRBY', KEYS[1], ARGV[1], -n) end
return {n}
"#;

const PROBE: &str = r#"
return {1}
"#;

const CLEAR: &str = r#"
redis.call('DEL', KEYS[1])
return {1}
"#;

static TAKE_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(TAKE));
static GIVE_BACK_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(GIVE_BACK));
static CLEAR_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(CLEAR));
static PROBE_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(PROBE));

/// What a take got, as Redis counted it.
#[derive(Debug, Clone, Copy)]
pub struct Taken {
    pub granted: u32,
    /// The bucket the admissions were counted in (to give back what is not used).
    pub bucket: u64,
    /// The window after the take.
    pub standing: Standing,
}

/// The fleet's windows, through the shared state's Redis.
#[derive(Debug, Clone)]
pub struct Fleet {
    redis: Scripts,
}

impl Fleet {
    pub fn new(redis: Scripts) -> Fleet {
        Fleet { redis }
    }

    /// The Redis key of the budget whose digest is `name` (`kind.class` and the window are
    /// part of the name: a changed window starts a new count rather than misreading one).
    pub fn key(&self, name: &str) -> String {
        self.redis.key(&format!("rl:{name}"))
    }

    pub fn is_down(&self) -> bool {
        self.redis.is_down()
    }

    pub fn place(&self) -> &str {
        self.redis.place()
    }

    /// Takes up to `want` admissions of `rate` from the budget named `name` (its key is
    /// [`Fleet::key`]).
    pub async fn take(&self, name: &str, rate: Rate, want: u32) -> Result<Taken, SharedError> {
        let window_ms = rate.window.as_millis() as u64;
        let width = super::window::width_ms(window_ms);
        let answer = self
            .redis
            .run(
                "rate limit take",
                &TAKE_SCRIPT,
                &[&self.key(name)],
                &[
                    i64::from(want),
                    i64::from(rate.count),
                    width as i64,
                    BUCKETS as i64,
                ],
            )
            .await?;
        let (granted, now) = match answer.as_slice() {
            [granted, now, ..] => (*granted, *now),
            _ => {
                return Err(SharedError::Unavailable(
                    "rate limit take: a short answer".into(),
                ));
            }
        };
        let now = now.max(0) as u64;
        let counts: Vec<(u64, u32)> = answer[2..]
            .chunks_exact(2)
            .map(|pair| {
                (
                    pair[0].max(0) as u64,
                    pair[1].clamp(0, i64::from(u32::MAX)) as u32,
                )
            })
            .collect();
        let window = Window::from_counts(now, width, &counts);
        Ok(Taken {
            granted: granted.clamp(0, i64::from(u32::MAX)) as u32,
            bucket: Window::bucket_of(now, width),
            standing: window.standing(now, width, rate.count),
        })
    }

    /// Gives back `n` admissions counted in `bucket` and not used.
    pub async fn give_back(&self, name: &str, bucket: u64, n: u32) -> Result<(), SharedError> {
        self.redis
            .run(
                "rate limit give back",
                &GIVE_BACK_SCRIPT,
                &[&self.key(name)],
                &[bucket as i64, i64::from(n)],
            )
            .await
            .map(drop)
    }

    /// One cheap call: an answer marks Redis up again (the shared state's health loop asks
    /// once a second; while limits count alone, they ask more often).
    pub async fn probe(&self) -> Result<(), SharedError> {
        self.redis
            .run("rate limit probe", &PROBE_SCRIPT, &[], &[])
            .await
            .map(drop)
    }

    /// Forgets a window (a successful sign-in clears its username's failures).
    pub async fn clear(&self, name: &str) -> Result<(), SharedError> {
        self.redis
            .run("rate limit clear", &CLEAR_SCRIPT, &[&self.key(name)], &[])
            .await
            .map(drop)
    }
}
