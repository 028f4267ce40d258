//! How long a replayed answer takes (`STOREGATE_REPLAY_LATENCY`, `storegate replay
//! --latency`): a store is never instant, and an app's spinners, timeouts and the gateway's
//! deadlines only show their worth against a slow one. The shapes are WireMock's and
//! Hoverfly's (fixed, uniform, log-normal from a median and a 99th percentile) plus the
//! store's own recorded timings, scaled (Polly.js's `timing`).

use std::time::Duration;

use rand::Rng;
use rand_distr::Distribution;

use super::spec;

/// The standard normal's 99th percentile: a log-normal's p99 is `exp(mu + Z99 * sigma)`.
const Z99: f64 = 2.326_347_874_040_841;

/// Where the variable is named in errors.
pub const KEY: &str = "STOREGATE_REPLAY_LATENCY";

/// One delay distribution.
#[derive(Debug, Clone, PartialEq)]
pub enum Latency {
    /// `fixed:200ms`
    Fixed(Duration),
    /// `uniform:100ms..300ms`: every delay in between as likely.
    Uniform(Duration, Duration),
    /// `lognormal:median=150ms,p99=900ms`: most answers near the median, a long tail, as
    /// measured stores answer. `mu` and `sigma` of the underlying normal, in milliseconds.
    LogNormal {
        median: Duration,
        p99: Duration,
        mu: f64,
        sigma: f64,
    },
    /// `recorded`, `recorded*2`: how long the store took when the answer was recorded,
    /// times the factor.
    Recorded(f64),
}

impl Latency {
    pub fn parse(text: &str) -> Result<Latency, String> {
        let text = text.trim();
        let (kind, args) = text.split_once(':').unwrap_or((text, ""));
        let kind = kind.trim().to_ascii_lowercase();
        let what = |part: &str| format!("{KEY}: {part} of {text:?}");
        match kind.as_str() {
            "fixed" => Ok(Latency::Fixed(spec::duration(args, &what("the delay"))?)),
            "uniform" => {
                let (low, high) = args.split_once("..").ok_or_else(|| {
                    format!("{KEY}: {text:?} needs a range such as uniform:100ms..300ms")
                })?;
                let low = spec::duration(low, &what("the low end"))?;
                let high = spec::duration(high, &what("the high end"))?;
                if high < low {
                    return Err(format!(
                        "{KEY}: in {text:?} the high end is below the low end"
                    ));
                }
                Ok(Latency::Uniform(low, high))
            }
            "lognormal" | "log-normal" => {
                let (mut median, mut p99) = (None, None);
                for pair in args.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    let (name, value) = pair.split_once('=').ok_or_else(|| {
                        format!("{KEY}: {pair:?} in {text:?} is not NAME=DURATION")
                    })?;
                    match name.trim() {
                        "median" => median = Some(spec::duration(value, &what("the median"))?),
                        "p99" => p99 = Some(spec::duration(value, &what("p99"))?),
                        other => {
                            return Err(format!(
                                "{KEY}: {other:?} in {text:?} is neither median nor p99"
                            ));
                        }
                    }
                }
                let (Some(median), Some(p99)) = (median, p99) else {
                    return Err(format!(
                        "{KEY}: {text:?} needs both, as in lognormal:median=150ms,p99=900ms"
                    ));
                };
                if median.is_zero() || p99 <= median {
                    return Err(format!(
                        "{KEY}: in {text:?} the median must be above zero and p99 above the median"
                    ));
                }
                let mu = (median.as_secs_f64() * 1000.0).ln();
                let sigma = (p99.as_secs_f64() / median.as_secs_f64()).ln() / Z99;
                Ok(Latency::LogNormal {
                    median,
                    p99,
                    mu,
                    sigma,
                })
            }
            "recorded" => Ok(Latency::Recorded(1.0)),
            _ => match kind.strip_prefix("recorded*") {
                Some(factor) => match factor.trim().parse::<f64>() {
                    Ok(f) if f.is_finite() && f >= 0.0 => Ok(Latency::Recorded(f)),
                    _ => Err(format!(
                        "{KEY}: the factor of {text:?} is not a number of 0 or more"
                    )),
                },
                None => Err(format!(
                    "{KEY}: {text:?} is not fixed:D, uniform:D..D, lognormal:median=D,p99=D, recorded or recorded*N"
                )),
            },
        }
    }

    /// One delay: drawn from `rng`, or from `recorded_ms` (how long the store took).
    pub fn delay(&self, rng: &mut impl Rng, recorded_ms: u64) -> Duration {
        match self {
            Latency::Fixed(d) => *d,
            Latency::Uniform(low, high) if low == high => *low,
            Latency::Uniform(low, high) => {
                Duration::from_secs_f64(rng.gen_range(low.as_secs_f64()..=high.as_secs_f64()))
            }
            Latency::LogNormal { mu, sigma, .. } => {
                // Checked at parse time: sigma is finite and above zero.
                let ms = rand_distr::LogNormal::new(*mu, *sigma)
                    .map(|d| d.sample(rng))
                    .unwrap_or(0.0);
                // A tail bounded at ten minutes: no test waits longer for one answer.
                Duration::from_secs_f64((ms / 1000.0).min(600.0))
            }
            Latency::Recorded(factor) => {
                Duration::from_secs_f64(recorded_ms as f64 / 1000.0 * factor)
            }
        }
    }
}

/// The latency settings in force: one for every endpoint, and some for one endpoint each
/// (these win).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Latencies {
    pub global: Option<Latency>,
    pub by_endpoint: Vec<(String, Latency)>,
    /// The text they were read from, for the control API.
    pub text: String,
}

impl Latencies {
    pub fn parse(text: &str) -> Result<Latencies, String> {
        let mut out = Latencies {
            text: text.trim().to_owned(),
            ..Latencies::default()
        };
        for rule in spec::rules(text, KEY)? {
            let latency = Latency::parse(rule.setting)?;
            match rule.endpoint {
                None => out.global = Some(latency),
                Some(endpoint) => out.by_endpoint.push((endpoint, latency)),
            }
        }
        Ok(out)
    }

    /// The latency of `endpoint`, if any.
    pub fn of(&self, endpoint: &str) -> Option<&Latency> {
        self.by_endpoint
            .iter()
            .rev()
            .find(|(e, _)| e == endpoint)
            .map(|(_, l)| l)
            .or(self.global.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn quantile(sorted: &[f64], q: f64) -> f64 {
        sorted[((sorted.len() as f64 * q).ceil() as usize).min(sorted.len()) - 1]
    }

    #[test]
    fn lognormal_draws_have_the_median_and_p99_asked_for() {
        let latency = Latency::parse("lognormal:median=100ms,p99=400ms").unwrap();
        // Many seeds: the tolerance of the issue (15% and 25% over 400 draws) holds for
        // almost all of them, not for one lucky one.
        let mut misses = 0;
        for seed in 0..50 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut ms: Vec<f64> = (0..400)
                .map(|_| latency.delay(&mut rng, 0).as_secs_f64() * 1000.0)
                .collect();
            ms.sort_by(f64::total_cmp);
            let (median, p99) = (quantile(&ms, 0.5), quantile(&ms, 0.99));
            if (median - 100.0).abs() > 15.0 || (p99 - 400.0).abs() > 100.0 {
                misses += 1;
            }
        }
        assert!(misses <= 3, "{misses} of 50 seeds out of tolerance");
    }

    #[test]
    fn every_shape_parses_and_bad_ones_say_which_part() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        assert_eq!(
            Latency::parse("fixed:200ms").unwrap().delay(&mut rng, 0),
            Duration::from_millis(200)
        );
        let uniform = Latency::parse("uniform:100ms..300ms").unwrap();
        for _ in 0..100 {
            let d = uniform.delay(&mut rng, 0).as_millis();
            assert!((100..=300).contains(&d), "{d}");
        }
        assert_eq!(
            Latency::parse("recorded*2").unwrap().delay(&mut rng, 150),
            Duration::from_millis(300)
        );
        assert_eq!(
            Latency::parse("recorded").unwrap().delay(&mut rng, 150),
            Duration::from_millis(150)
        );
        for (bad, names) in [
            ("fixed:soon", "the delay"),
            ("uniform:300ms..100ms", "high end"),
            ("uniform:100ms", "range"),
            ("lognormal:median=100ms", "needs both"),
            ("lognormal:median=100ms,p99=50ms", "above the median"),
            ("lognormal:mean=1ms,p99=5ms", "\"mean\""),
            ("recorded*x", "factor"),
            ("gaussian:1ms", "is not fixed"),
        ] {
            let error = Latency::parse(bad).unwrap_err();
            assert!(
                error.contains(KEY) && error.contains(names),
                "{bad}: {error}"
            );
        }
        let all = Latencies::parse("fixed:1ms; GET /api/rest/products/{}=fixed:2ms").unwrap();
        assert_eq!(
            all.of("GET /api/rest/products/{}"),
            Some(&Latency::Fixed(Duration::from_millis(2)))
        );
        assert_eq!(
            all.of("GET /api/rest/orders"),
            Some(&Latency::Fixed(Duration::from_millis(1)))
        );
    }
}
