//! The replay bench's state: the latency and fault settings in force (changed at run time
//! by the control API), the seeded randomness that decides each call, and what was asked.
//!
//! Each call draws from a generator of its own, seeded from `STOREGATE_REPLAY_SEED`, the
//! request (method, path, query, body) and how many times that request came before: the
//! same seed and the same calls give the same delays and the same faults, whatever other
//! requests run beside them (the gateway asks Magento several things at once).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Mutex, RwLock};
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::cassette::Request;
use super::faults::{self, Fault, FaultRule};
use super::latency::{self, Latencies};
use super::wires::Wires;

/// At most this many asked calls are kept for the control API (the oldest go first).
const LOG_LIMIT: usize = 10_000;

pub const SEED_KEY: &str = "STOREGATE_REPLAY_SEED";

/// The settings the control API changes.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub latency: Latencies,
    pub faults: Vec<FaultRule>,
}

impl Settings {
    /// From the texts of `STOREGATE_REPLAY_LATENCY` and `STOREGATE_REPLAY_FAULTS`.
    pub fn parse(latency: Option<&str>, faults: Option<&str>) -> Result<Settings, String> {
        Ok(Settings {
            latency: Latencies::parse(latency.unwrap_or_default())?,
            faults: faults::parse(faults.unwrap_or_default())?,
        })
    }
}

/// One call, as the control API lists it.
#[derive(Debug, Clone, Serialize)]
pub struct Asked {
    /// 1 for the first call since the start or the last reset.
    pub seq: u64,
    pub endpoint: String,
    pub request: String,
    /// `answered`, `missed`, `fault`, `refused-stale`, `re-recorded`, `forwarded`.
    pub outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    /// The cassette and interaction that answered (`get.products.{}.json#0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cassette: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The delay chosen before the first byte.
    pub delay_ms: f64,
}

/// Per endpoint, what happened to its calls.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Counts {
    pub asked: u64,
    pub answered: u64,
    pub faulted: u64,
    pub missed: u64,
    pub stale: u64,
}

#[derive(Debug, Default)]
struct Calls {
    /// How many times each request came before (by its digest).
    occurrences: HashMap<[u8; 32], u64>,
    log: VecDeque<Asked>,
    next: u64,
    counts: BTreeMap<String, Counts>,
    /// Stale answers already warned about (one warning each, not one a call).
    warned: HashSet<String>,
}

#[derive(Debug)]
pub struct Bench {
    seed: u64,
    /// How the stores replayed name their calls' endpoints.
    wires: Wires,
    initial: Settings,
    settings: RwLock<Settings>,
    calls: Mutex<Calls>,
}

impl Bench {
    /// `seed`: `STOREGATE_REPLAY_SEED`, or a random one (logged, so a failing run can be
    /// repeated).
    pub fn new(seed: Option<u64>, settings: Settings, wires: Wires) -> Bench {
        let seed = seed.unwrap_or_else(|| {
            let mut bytes = [0u8; 8];
            getrandom::fill(&mut bytes).expect("the operating system's random generator");
            u64::from_le_bytes(bytes) >> 1
        });
        if !settings.faults.is_empty()
            || settings.latency.global.is_some()
            || !settings.latency.by_endpoint.is_empty()
        {
            tracing::info!(
                seed,
                "replay: latency and faults drawn with seed {seed} (set {SEED_KEY}={seed} to draw the same again)"
            );
        }
        Bench {
            seed,
            wires,
            initial: settings.clone(),
            settings: RwLock::new(settings),
            calls: Mutex::new(Calls::default()),
        }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, Calls> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn settings(&self) -> Settings {
        self.settings
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn change(&self, f: impl FnOnce(&mut Settings)) {
        f(&mut self.settings.write().unwrap_or_else(|e| e.into_inner()));
    }

    /// The generator of this call of `request`.
    pub fn rng_for(&self, request: &Request) -> ChaCha8Rng {
        let mut digest = Sha256::new();
        digest.update(request.method.as_bytes());
        digest.update([0]);
        digest.update(request.path.as_bytes());
        for (name, value) in request.query_pairs() {
            digest.update([0]);
            digest.update(name.as_bytes());
            digest.update([b'=']);
            digest.update(value.as_bytes());
        }
        digest.update([0]);
        if let Some(body) = &request.body.body {
            digest.update(body.to_string().as_bytes());
        } else if let Some(text) = &request.body.body_text {
            digest.update(text.as_bytes());
        } else if let Some(encoded) = &request.body.body_base64 {
            digest.update(encoded.as_bytes());
        }
        let key: [u8; 32] = digest.finalize().into();
        let n = {
            let mut calls = self.calls();
            let n = calls.occurrences.entry(key).or_insert(0);
            let this = *n;
            *n += 1;
            this
        };
        let mut seed = Sha256::new();
        seed.update(self.seed.to_le_bytes());
        seed.update(key);
        seed.update(n.to_le_bytes());
        ChaCha8Rng::from_seed(seed.finalize().into())
    }

    /// The fault this call gets, if any: the endpoint's rules, then those for every
    /// endpoint, each drawing once; the first that fires wins.
    pub fn fault(&self, endpoint: &str, rng: &mut impl Rng) -> Option<Fault> {
        let settings = self.settings.read().unwrap_or_else(|e| e.into_inner());
        let ordered = settings
            .faults
            .iter()
            .filter(|r| {
                r.endpoint
                    .as_deref()
                    .is_some_and(|e| self.names(e, endpoint))
            })
            .chain(settings.faults.iter().filter(|r| r.endpoint.is_none()));
        let mut fired = None;
        for rule in ordered {
            let draw: f64 = rng.r#gen();
            if fired.is_none() && draw < rule.probability {
                fired = Some(rule.fault.clone());
            }
        }
        fired
    }

    /// The delay before this call's first byte (`recorded_ms`: how long the store took).
    pub fn latency(&self, endpoint: &str, rng: &mut impl Rng, recorded_ms: u64) -> Duration {
        let settings = self.settings.read().unwrap_or_else(|e| e.into_inner());
        let latency = &settings.latency;
        latency
            .by_endpoint
            .iter()
            .rev()
            .find(|(rule, _)| self.names(rule, endpoint))
            .map(|(_, l)| l)
            .or(latency.global.as_ref())
            .map_or(Duration::ZERO, |l| l.delay(rng, recorded_ms))
    }

    /// Does a rule's endpoint (as written) name this call's (as its store names it)? A
    /// rule may write the path as sent (`GET /api/rest/products/{}`) or as the
    /// store's endpoint.
    fn names(&self, rule: &str, endpoint: &str) -> bool {
        rule == endpoint
            || rule
                .split_once(' ')
                .is_some_and(|(method, path)| self.wires.endpoint(method, path) == endpoint)
    }

    /// Files a call in the log and the counts.
    pub fn log(&self, mut asked: Asked, stale: bool) {
        let mut calls = self.calls();
        calls.next += 1;
        asked.seq = calls.next;
        let counts = calls.counts.entry(asked.endpoint.clone()).or_default();
        counts.asked += 1;
        match asked.outcome {
            "fault" => counts.faulted += 1,
            "missed" => counts.missed += 1,
            "refused-stale" => {}
            _ => counts.answered += 1,
        }
        if stale {
            counts.stale += 1;
        }
        if calls.log.len() == LOG_LIMIT {
            calls.log.pop_front();
        }
        calls.log.push_back(asked);
    }

    /// True the first time `what` is stale (warn once per answer).
    pub fn first_warning(&self, what: &str) -> bool {
        self.calls().warned.insert(what.to_owned())
    }

    pub fn asked(&self) -> Vec<Asked> {
        self.calls().log.iter().cloned().collect()
    }

    pub fn counts(&self) -> BTreeMap<String, Counts> {
        self.calls().counts.clone()
    }

    pub fn set_faults(&self, faults: Vec<FaultRule>) {
        self.change(|s| s.faults = faults);
    }

    pub fn add_faults(&self, mut faults: Vec<FaultRule>) {
        self.change(|s| s.faults.append(&mut faults));
    }

    pub fn set_latency(&self, latency: Latencies) {
        self.change(|s| s.latency = latency);
    }

    /// The settings the bench started with, and no call asked yet: the same seed draws the
    /// same again.
    pub fn reset(&self) {
        let initial = self.initial.clone();
        self.change(|s| *s = initial);
        *self.calls() = Calls::default();
    }
}

/// `STOREGATE_REPLAY_LATENCY`'s key, for callers that name it.
pub const LATENCY_KEY: &str = latency::KEY;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::recording::cassette::Body;
    use crate::backend::recording::cassette::tests::WIRES;

    fn get(path: &str) -> Request {
        Request {
            method: "GET".into(),
            path: path.into(),
            query: BTreeMap::new(),
            headers: BTreeMap::new(),
            body: Body::default(),
        }
    }

    fn faulted(bench: &Bench, calls: usize) -> Vec<bool> {
        let request = get("/api/rest/products/A");
        (0..calls)
            .map(|_| {
                let mut rng = bench.rng_for(&request);
                bench.fault("GET /api/rest/products/{}", &mut rng).is_some()
            })
            .collect()
    }

    #[test]
    fn a_fault_at_one_half_hits_about_half_the_calls_and_the_same_ones_again() {
        let settings =
            Settings::parse(None, Some("GET /api/rest/products/{}=maintenance@0.5")).unwrap();
        let bench = Bench::new(Some(42), settings.clone(), WIRES);
        let first = faulted(&bench, 400);
        let share = first.iter().filter(|f| **f).count();
        assert!((160..=240).contains(&share), "{share} of 400");
        // The same seed, in a new bench or after a reset: the same calls.
        assert_eq!(
            faulted(&Bench::new(Some(42), settings.clone(), WIRES), 400),
            first
        );
        bench.reset();
        assert_eq!(faulted(&bench, 400), first);
        // Another seed: other calls.
        assert_ne!(faulted(&Bench::new(Some(43), settings, WIRES), 400), first);
    }

    #[test]
    fn endpoint_rules_come_before_global_ones_and_can_change() {
        let settings = Settings::parse(
            Some("fixed:10ms; GET /api/rest/orders=fixed:20ms"),
            Some("GET /api/rest/orders=http:500; reset"),
        )
        .unwrap();
        let bench = Bench::new(Some(1), settings, WIRES);
        let mut rng = bench.rng_for(&get("/api/rest/orders"));
        assert_eq!(
            bench.fault("GET /api/rest/orders", &mut rng),
            Some(Fault::Http {
                status: 500,
                body: None
            })
        );
        assert_eq!(
            bench.fault("GET /api/rest/products/{}", &mut rng),
            Some(Fault::Reset)
        );
        assert_eq!(
            bench.latency("GET /api/rest/orders", &mut rng, 0),
            Duration::from_millis(20)
        );
        bench.set_faults(Vec::new());
        assert_eq!(bench.fault("GET /api/rest/orders", &mut rng), None);
        bench.reset();
        assert!(bench.fault("GET /api/rest/orders", &mut rng).is_some());
    }
}
