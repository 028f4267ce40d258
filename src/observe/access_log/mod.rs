//! The access line, formatted by the gateway itself into a reused buffer and handed to the
//! log thread ([`crate::observe::log_writer`]), byte for byte the line tracing-subscriber's
//! fmt layer wrote for it (text and JSON, as configured).
//!
//! Through tracing, every access line opened a span (its four fields formatted and stored by
//! the fmt layer) and formatted an event inside it: a timestamp, the level, the span's
//! context, the message and six fields, each through `core::fmt` and, in text, through an
//! escaping writer char by char. That was about 18,000 instructions of a 49,000-instruction
//! cache hit (bench/RESULTS.md). Here the same line costs a few hundred: the date is formatted
//! once a second per thread, numbers by `itoa` and `ryu`, and a string is copied as it is
//! when it has nothing to escape (the rare one that has goes through the very escaping
//! tracing-subscriber applies).
//!
//! The binary installs the sink ([`install`]) with the log writer and the configured format;
//! without it (a test, the library used elsewhere) the line goes through tracing as before
//! ([`through_tracing`]), so that a subscriber of one's own sees it. Whether a line is written
//! at all is still the subscriber's filter's word (`RUST_LOG`, `storegate::access=off`):
//! the caller asks `tracing::enabled!` first. The tests below hold the two paths to the same
//! bytes.

use std::cell::RefCell;
use std::io::Write;
use std::sync::OnceLock;

use crate::config::LogFormat;
use crate::context::trace::TraceId;
use crate::observe::log_writer;

mod time;
use time::{timestamp, wall_time, write_date};

/// What one access line says. `route` is the matched template, `"unmatched"` when none.
#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    pub request_id: &'a str,
    pub trace_id: u128,
    pub method: &'a str,
    pub route: &'a str,
    pub status: u16,
    /// The body's length when known (a streamed body's is not: the field is left out).
    pub bytes: Option<u64>,
    pub duration_ms: f64,
    pub user_type: &'a str,
    /// The `X-Cache` header, `-` when none.
    pub cache: &'a str,
}

static FORMAT: OnceLock<LogFormat> = OnceLock::new();

/// Access lines are written in `format` from now on, to the process's log writer
/// ([`log_writer::line`]: the same queue as every other line, so their order is kept).
/// Once per process; `false` if it was already done.
pub fn install(format: LogFormat) -> bool {
    FORMAT.set(format).is_ok()
}

/// Whether the subscriber's filter lets access lines through (`RUST_LOG`,
/// `storegate::access=off`): what the caller asks before it makes a line.
///
/// With a format installed (the binary, whose filter is set once at start and never
/// reloaded) the filter is asked once, by the first line, and its answer kept: asking it
/// (the dispatcher, then the filter's directives) was about 200 instructions of every cache
/// hit. Without one (a test, the library used elsewhere, maybe under a subscriber of its
/// own for a while) it is asked every time.
pub fn enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    let ask = || tracing::enabled!(target: "storegate::access", tracing::Level::INFO);
    if FORMAT.get().is_none() {
        return ask();
    }
    *ENABLED.get_or_init(ask)
}

/// The date and time of the last second a thread wrote a line in (`YYYY-MM-DDTHH:MM:SS`).
struct LastSecond {
    second: Option<i64>,
    date: Vec<u8>,
}

thread_local! {
    static LAST_SECOND: RefCell<LastSecond> = const {
        RefCell::new(LastSecond {
            second: None,
            date: Vec::new(),
        })
    };
}

/// Writes `line` through the process's log writer; `false` when the binary installed no
/// format or no writer (the caller then logs it through tracing). A full queue drops the
/// line and counts it (`log_writer`).
/// The line's time is `at` on the monotonic clock (the request's end, which the caller
/// read already): the wall-clock time is worked out from it (`time::wall_time`).
pub fn write_at(line: &Line<'_>, at: std::time::Instant) -> bool {
    let Some(format) = FORMAT.get() else {
        return false;
    };
    let (second, micros) = timestamp(wall_time(at));
    LAST_SECOND
        .try_with(|last| {
            let Ok(mut last) = last.try_borrow_mut() else {
                return false;
            };
            let LastSecond { second: seen, date } = &mut *last;
            if *seen != Some(second) {
                date.clear();
                write_date(date, second);
                *seen = Some(second);
            }
            log_writer::line(|out| match format {
                LogFormat::Text => text(out, date, micros, line),
                LogFormat::Json => json(out, date, micros, line),
            })
        })
        .unwrap_or(false)
}

/// The line as tracing-subscriber's fmt layer writes it: a `request` span with the request's
/// fields around an `info` event of target `storegate::access`. What [`write_at`] reproduces.
pub fn through_tracing(line: &Line<'_>) {
    let Line {
        request_id,
        trace_id,
        method,
        route,
        status,
        bytes,
        duration_ms,
        user_type,
        cache,
    } = *line;
    tracing::info_span!(
        "request",
        request_id,
        trace_id = %TraceId(trace_id),
        method = %method,
        route,
    )
    .in_scope(|| {
        tracing::info!(
            target: "storegate::access",
            status,
            bytes,
            duration_ms,
            user_type,
            cache,
            "{method} {route} {status}",
        );
    });
}

fn push_u64(out: &mut Vec<u8>, value: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
}

/// `.uuuuuuZ`: the microseconds and the zone of the timestamp (`micros` below a million),
/// six digits written in place: every line has one.
fn push_micros(out: &mut Vec<u8>, micros: u32) {
    let mut text = *b".000000Z";
    let mut n = micros;
    for digit in text[1..7].iter_mut().rev() {
        *digit = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out.extend_from_slice(&text);
}

/// A trace id as 32 lower-case hex digits (`TraceId`'s `Display`).
fn push_trace_id(out: &mut Vec<u8>, id: u128) {
    let mut text = [0u8; 32];
    crate::observe::hex::write(&mut text, &id.to_be_bytes());
    out.extend_from_slice(&text);
}

/// The text format (tracing-subscriber's `Full`, without colours):
/// `<time>  INFO request{request_id="…" trace_id=… method=… route="…"}: storegate::access:
/// <method> <route> <status> status=… bytes=… duration_ms=… user_type="…" cache="…"`.
///
/// What depends only on the method, the route, the user type and the cache's outcome (most
/// of the line: each string looked through for escapes and copied twice) is written once
/// per thread and copied whole ([`Segments`]).
fn text(out: &mut Vec<u8>, date: &[u8], micros: u32, line: &Line<'_>) {
    out.extend_from_slice(date);
    push_micros(out, micros);
    out.extend_from_slice(b"  INFO request{request_id=");
    push_debug_str(out, line.request_id, plain(line.request_id));
    out.extend_from_slice(b" trace_id=");
    push_trace_id(out, line.trace_id);
    let written = SEGMENTS
        .try_with(|segments| {
            let Ok(mut segments) = segments.try_borrow_mut() else {
                return false;
            };
            text_with(out, segments.for_line(line), line);
            true
        })
        .unwrap_or(false);
    if !written {
        text_with(out, &Segments::make(line), line);
    }
}

/// The rest of a text line after the trace id, with its `segments`.
fn text_with(out: &mut Vec<u8>, segments: &Segments, line: &Line<'_>) {
    out.extend_from_slice(&segments.middle);
    push_u64(out, u64::from(line.status));
    out.extend_from_slice(b" status=");
    push_u64(out, u64::from(line.status));
    if let Some(bytes) = line.bytes {
        out.extend_from_slice(b" bytes=");
        push_u64(out, bytes);
    }
    out.extend_from_slice(b" duration_ms=");
    push_debug_f64(out, line.duration_ms);
    out.extend_from_slice(&segments.end);
}

/// The parts of a text line that only the method, the route, the user type and the cache's
/// outcome decide, as [`text`] writes them, and what they were made from.
struct Segments {
    method: String,
    route: String,
    user_type: String,
    cache: String,
    /// ` method=… route="…"}: storegate::access: <method> <route> `
    middle: Vec<u8>,
    /// ` user_type="…" cache="…"` and the line's end.
    end: Vec<u8>,
}

/// Segments a worker thread keeps: a gateway has a few dozen routes, and a line's four
/// strings come from small sets (the user types, the cache's outcomes), so a hit's line
/// finds its own almost always.
const SEGMENT_SLOTS: usize = 32;

thread_local! {
    static SEGMENTS: RefCell<SegmentTable> = const { RefCell::new(SegmentTable(Vec::new())) };
}

struct SegmentTable(Vec<Option<Segments>>);

impl SegmentTable {
    /// The segments for `line`: the slot's, when it was made from the same four strings;
    /// else made now, in its place.
    fn for_line(&mut self, line: &Line<'_>) -> &Segments {
        if self.0.is_empty() {
            self.0.resize_with(SEGMENT_SLOTS, || None);
        }
        // The strings' addresses pick the slot (a route template, a user type, the cache's
        // header value all stay where they are); their text decides whether it is theirs.
        let spread = (line.route.as_ptr() as usize >> 3)
            ^ line.route.len()
            ^ (line.user_type.as_ptr() as usize >> 2)
            ^ line.cache.len().wrapping_mul(7)
            ^ line.method.len().wrapping_mul(13);
        let slot = &mut self.0[spread.wrapping_mul(0x9e37_79b9) >> 7 & (SEGMENT_SLOTS - 1)];
        let theirs = slot.as_ref().is_some_and(|s| {
            s.route == line.route
                && s.method == line.method
                && s.user_type == line.user_type
                && s.cache == line.cache
        });
        if !theirs {
            *slot = Some(Segments::make(line));
        }
        slot.as_ref().expect("filled above")
    }
}

impl Segments {
    fn make(line: &Line<'_>) -> Segments {
        // Each string is looked through once: a plain one is written as it is everywhere.
        let (method_plain, route_plain) = (plain(line.method), plain(line.route));
        let mut middle = Vec::with_capacity(64 + 2 * (line.method.len() + line.route.len()));
        middle.extend_from_slice(b" method=");
        middle.extend_from_slice(line.method.as_bytes());
        middle.extend_from_slice(b" route=");
        push_debug_str(&mut middle, line.route, route_plain);
        middle.extend_from_slice(b"}: storegate::access: ");
        // The message, through the fmt layer's escaping of terminal control characters.
        push_sanitized(&mut middle, line.method, method_plain);
        middle.push(b' ');
        push_sanitized(&mut middle, line.route, route_plain);
        middle.push(b' ');
        let mut end = Vec::with_capacity(32 + line.user_type.len() + line.cache.len());
        end.extend_from_slice(b" user_type=");
        push_debug_str(&mut end, line.user_type, plain(line.user_type));
        end.extend_from_slice(b" cache=");
        push_debug_str(&mut end, line.cache, plain(line.cache));
        end.push(b'\n');
        Segments {
            method: line.method.to_owned(),
            route: line.route.to_owned(),
            user_type: line.user_type.to_owned(),
            cache: line.cache.to_owned(),
            middle,
            end,
        }
    }
}

/// The JSON format (tracing-subscriber's `Json`: the event's fields in their order, the
/// span's sorted by name, then the span again in the list of spans).
fn json(out: &mut Vec<u8>, date: &[u8], micros: u32, line: &Line<'_>) {
    out.extend_from_slice(b"{\"timestamp\":\"");
    out.extend_from_slice(date);
    push_micros(out, micros);
    out.extend_from_slice(b"\",\"level\":\"INFO\",\"fields\":{\"message\":\"");
    push_json_inner(out, line.method);
    out.push(b' ');
    push_json_inner(out, line.route);
    out.push(b' ');
    push_u64(out, u64::from(line.status));
    out.extend_from_slice(b"\",\"status\":");
    push_u64(out, u64::from(line.status));
    if let Some(bytes) = line.bytes {
        out.extend_from_slice(b",\"bytes\":");
        push_u64(out, bytes);
    }
    out.extend_from_slice(b",\"duration_ms\":");
    push_json_f64(out, line.duration_ms);
    out.extend_from_slice(b",\"user_type\":");
    push_json_str(out, line.user_type);
    out.extend_from_slice(b",\"cache\":");
    push_json_str(out, line.cache);
    out.extend_from_slice(b"},\"target\":\"storegate::access\",\"span\":");
    let span_start = out.len();
    out.extend_from_slice(b"{\"method\":");
    push_json_str(out, line.method);
    out.extend_from_slice(b",\"request_id\":");
    push_json_str(out, line.request_id);
    out.extend_from_slice(b",\"route\":");
    push_json_str(out, line.route);
    out.extend_from_slice(b",\"trace_id\":\"");
    push_trace_id(out, line.trace_id);
    out.extend_from_slice(b"\",\"name\":\"request\"}");
    let span_end = out.len();
    out.extend_from_slice(b",\"spans\":[");
    out.extend_from_within(span_start..span_end);
    out.extend_from_slice(b"]}\n");
}

/// Printable ASCII but `"` and `\`: what every format writes as it is (`Debug` of a
/// `str`, the fmt layer's escaping, JSON's).
const PLAIN: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0x20;
    while b < 0x7f {
        table[b] = b != b'"' as usize && b != b'\\' as usize;
        b += 1;
    }
    table
};

fn plain(value: &str) -> bool {
    value.bytes().all(|b| PLAIN[b as usize])
}

/// A `&str` field as the text format writes it: its `Debug` (quoted, escaped), copied as
/// it is when it is `plain`.
fn push_debug_str(out: &mut Vec<u8>, value: &str, plain: bool) {
    if plain {
        out.push(b'"');
        out.extend_from_slice(value.as_bytes());
        out.push(b'"');
    } else {
        let _ = write!(out, "{value:?}");
    }
}

/// The message's parts as the text format writes them: as they are, but for the terminal
/// control characters tracing-subscriber escapes (ESC, BEL, BS, FF, DEL and C1 controls).
fn push_sanitized(out: &mut Vec<u8>, value: &str, plain: bool) {
    if plain
        || !value
            .bytes()
            .any(|b| matches!(b, 0x1b | 0x07 | 0x08 | 0x0c | 0x7f | 0xc2))
    {
        out.extend_from_slice(value.as_bytes());
        return;
    }
    for ch in value.chars() {
        match ch {
            '\x1b' => out.extend_from_slice(b"\\x1b"),
            '\x07' => out.extend_from_slice(b"\\x07"),
            '\x08' => out.extend_from_slice(b"\\x08"),
            '\x0c' => out.extend_from_slice(b"\\x0c"),
            '\x7f' => out.extend_from_slice(b"\\x7f"),
            ch if ('\u{80}'..='\u{9f}').contains(&ch) => {
                let _ = write!(out, "\\u{{{:x}}}", ch as u32);
            }
            ch => {
                let mut utf8 = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut utf8).as_bytes());
            }
        }
    }
}

/// An `f64` field as the text format writes it: its `Debug`. `ryu` finds the same shortest
/// digits but for one case: a value exactly halfway between two shortest spellings, which
/// `ryu` rounds to even and `Debug` up. That needs a value with at most 18 significant
/// digits; a value of 1e-4 or more whose lowest set bit is below 2^-21 has more (its
/// expansion ends 22 or more places after the point, at most 3 of them leading zeros),
/// which is any duration measured in nanoseconds but the rare exact one. Those, and the
/// magnitudes `Debug` writes with an exponent, go through `Debug` itself.
fn push_debug_f64(out: &mut Vec<u8>, value: f64) {
    if push_whole_nanos(out, value) {
        return;
    }
    if (1e-4..1e16).contains(&value) && lowest_bit_exponent(value) < -21 {
        let mut digits = ryu::Buffer::new();
        let text = digits.format_finite(value);
        if !text.contains('e') {
            out.extend_from_slice(text.as_bytes());
            return;
        }
    }
    let _ = write!(out, "{value:?}");
}

/// The exponent of the lowest set bit of a positive normal `value` (`value` is an odd
/// number times 2 to that power).
fn lowest_bit_exponent(value: f64) -> i32 {
    let bits = value.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32 - 1075;
    let mantissa = (bits & ((1 << 52) - 1)) | (1 << 52);
    exponent + mantissa.trailing_zeros() as i32
}

/// An `f64` as serde_json writes it (its own shortest digits, `null` when not finite).
fn push_json_f64(out: &mut Vec<u8>, value: f64) {
    if push_whole_nanos(out, value) {
        return;
    }
    let _ = serde_json::to_writer(out, &value);
}

/// A duration in milliseconds that is a whole number of nanoseconds (as `telemetry`
/// measures it: `nanos as f64 / 1e6`), written from those nanoseconds with integer
/// arithmetic; `false`, writing nothing, for any other value.
///
/// Why the digits are the ones `Debug`, `ryu` and serde_json write: the value is the double
/// nearest to `n / 10^6` (the check below: division is correctly rounded), and with
/// n < 10^15 that decimal has at most 15 significant digits. Every decimal of at most 15
/// significant digits comes back unchanged through a double (`f64::DIGITS`), so no other
/// decimal that short maps to the same double: the shortest spelling of the value, which
/// is what all three look for, is `n / 10^6` itself. From 1e-4 on, all three write it
/// without an exponent, with at least one digit after the point (`1.0`). Formatting the
/// shortest digits of a double (`ryu`) was a fifth of the access line's instructions.
fn push_whole_nanos(out: &mut Vec<u8>, value: f64) -> bool {
    if !(1e-4..1e9).contains(&value) {
        return false;
    }
    // Nearest, the half up (`round` is a call into libm; the value is positive). Which
    // integer this picks is checked right below anyway.
    let nanos = (value * 1e6 + 0.5) as u64;
    if nanos as f64 / 1e6 != value {
        return false;
    }
    push_u64(out, nanos / 1_000_000);
    let fraction = (nanos % 1_000_000) as u32;
    if fraction == 0 {
        out.extend_from_slice(b".0");
        return true;
    }
    let mut digits = *b".000000";
    let mut n = fraction;
    for digit in digits[1..].iter_mut().rev() {
        *digit = b'0' + (n % 10) as u8;
        n /= 10;
    }
    // The shortest spelling has no trailing zero.
    out.extend_from_slice(&digits[..7 - trailing_decimal_zeros(fraction)]);
    true
}

/// How many of the six digits of `fraction` (not 0) are trailing zeros.
fn trailing_decimal_zeros(mut fraction: u32) -> usize {
    let mut zeros = 0;
    while fraction.is_multiple_of(10) {
        fraction /= 10;
        zeros += 1;
    }
    zeros
}

/// A JSON string as serde_json writes it.
fn push_json_str(out: &mut Vec<u8>, value: &str) {
    out.push(b'"');
    push_json_inner(out, value);
    out.push(b'"');
}

/// The inside of a JSON string as serde_json writes it (quotes, backslashes and control
/// characters escaped, nothing else).
fn push_json_inner(out: &mut Vec<u8>, value: &str) {
    if value.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.extend_from_slice(value.as_bytes());
    } else {
        let mut quoted = serde_json::to_vec(value).unwrap_or_default();
        if quoted.len() >= 2 {
            out.extend_from_slice(&quoted[1..quoted.len() - 1]);
        }
        quoted.clear();
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` of a time in milliseconds since the epoch (UTC), for reports
/// that name a moment (the dual run's `since`).
pub fn utc_text(ms: u64) -> String {
    let mut out = Vec::with_capacity(20);
    time::write_date(&mut out, (ms / 1000) as i64);
    out.push(b'Z');
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    // A writer the fmt layer writes into.
    use crate::observe::log_writer::tests::Kept as Captured;

    /// The line tracing-subscriber writes for `line`, configured as the binary configures it
    /// (`main::init_tracing`), and the line this module writes, both at the same time: the
    /// timestamp tracing wrote is parsed and this module's is formatted from it.
    fn both(format: LogFormat, line: &Line<'_>) -> (String, String) {
        let captured = Captured::default();
        let builder = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new("info"))
            .with_ansi(false)
            .with_writer({
                let captured = captured.clone();
                move || captured.clone()
            });
        match format {
            LogFormat::Json => {
                tracing::subscriber::with_default(builder.json().finish(), || through_tracing(line))
            }
            LogFormat::Text => {
                tracing::subscriber::with_default(builder.finish(), || through_tracing(line))
            }
        }
        let theirs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        let stamp = match format {
            LogFormat::Text => &theirs[..27],
            LogFormat::Json => &theirs[14..41],
        };
        let secs = parse_stamp(stamp);
        let micros: u32 = stamp[20..26].parse().unwrap();
        let mut date = Vec::new();
        write_date(&mut date, secs);
        let mut ours = Vec::new();
        match format {
            LogFormat::Text => text(&mut ours, &date, micros, line),
            LogFormat::Json => json(&mut ours, &date, micros, line),
        }
        (theirs, String::from_utf8(ours).unwrap())
    }

    /// Seconds since the epoch of `YYYY-MM-DDTHH:MM:SS` (days counted one by one: a reference
    /// that shares nothing with `civil_from_days`).
    fn parse_stamp(stamp: &str) -> i64 {
        let year: i64 = stamp[0..4].parse().unwrap();
        let month: u32 = stamp[5..7].parse().unwrap();
        let day: i64 = stamp[8..10].parse().unwrap();
        let (h, m, s): (i64, i64, i64) = (
            stamp[11..13].parse().unwrap(),
            stamp[14..16].parse().unwrap(),
            stamp[17..19].parse().unwrap(),
        );
        let mut days = 0;
        for y in 1970..year {
            days += if leap(y) { 366 } else { 365 };
        }
        for m in 1..month {
            days += month_days(year, m);
        }
        days += day - 1;
        days * 86_400 + h * 3600 + m * 60 + s
    }

    fn leap(y: i64) -> bool {
        (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
    }

    fn month_days(y: i64, m: u32) -> i64 {
        match m {
            2 if leap(y) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        }
    }

    fn sample() -> Line<'static> {
        Line {
            request_id: "0a1b2c3d-000000000001",
            trace_id: 0x4bf9_2f35_77b3_4da6_a3ce_929d_0e0e_4736,
            method: "GET",
            route: "/api/rest/products/{id}",
            status: 200,
            bytes: Some(959),
            duration_ms: 0.123_456,
            user_type: "guest",
            cache: "HIT",
        }
    }

    #[test]
    fn the_line_is_tracing_subscribers_byte_for_byte() {
        let base = sample();
        let mut lines = vec![base];
        lines.push(Line {
            bytes: None,
            status: 504,
            cache: "-",
            user_type: "none",
            route: "unmatched",
            method: "POST",
            trace_id: 1,
            ..base
        });
        // What neither path should ever see, but both must write alike: quotes, escapes,
        // terminal controls, C1 controls, other Unicode.
        lines.push(Line {
            request_id: "a\"b\\c\nd\u{1b}[31m\u{9b}é\u{200b}",
            method: "M\u{1b}\u{7}\u{8}\u{c}\u{7f}\u{85}x",
            route: "/r/{id}\"\\\t\u{1b}\u{9f}ü\u{0}",
            user_type: "\u{1}",
            cache: "H\"IT",
            trace_id: u128::MAX,
            status: 0,
            bytes: Some(u64::MAX),
            ..base
        });
        for duration_ms in [
            0.0,
            1.0,
            0.1 + 0.2,
            1e-7,
            0.000_099_999,
            0.0001,
            12_345.678_9,
            9.999_999_999_999_998e15,
            781_751_276_905_481.0 + 0.25,
            1e16,
            1.5e300,
            f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
            -3.5,
        ] {
            lines.push(Line {
                duration_ms,
                ..base
            });
        }
        for format in [LogFormat::Text, LogFormat::Json] {
            for line in &lines {
                let (theirs, ours) = both(format, line);
                assert_eq!(ours, theirs, "{format:?} {line:?}");
            }
        }
    }

    #[test]
    fn lines_made_from_kept_segments_are_the_lines_made_afresh() {
        // More combinations than slots, each written several times in turn, so that slots
        // are shared, replaced and found again: every line as if nothing had been kept.
        let routes: Vec<String> = (0..40).map(|i| format!("/api/rest/r{i}/{{id}}")).collect();
        let base = sample();
        for round in 0..3 {
            for (i, route) in routes.iter().enumerate() {
                let line = Line {
                    route,
                    method: ["GET", "HEAD", "POST"][i % 3],
                    user_type: ["guest", "customer", "admin"][(i + round) % 3],
                    cache: ["HIT", "MISS", "-"][i % 3],
                    bytes: (i % 2 == 0).then_some(i as u64),
                    ..base
                };
                let mut kept = Vec::new();
                text(&mut kept, b"2026-11-26T12:00:00", 5, &line);
                let mut afresh = b"2026-11-26T12:00:00".to_vec();
                push_micros(&mut afresh, 5);
                afresh.extend_from_slice(b"  INFO request{request_id=");
                push_debug_str(&mut afresh, line.request_id, plain(line.request_id));
                afresh.extend_from_slice(b" trace_id=");
                push_trace_id(&mut afresh, line.trace_id);
                text_with(&mut afresh, &Segments::make(&line), &line);
                assert_eq!(
                    String::from_utf8(kept).unwrap(),
                    String::from_utf8(afresh).unwrap()
                );
            }
        }
    }

    #[test]
    fn durations_as_debug_writes_them() {
        let check = |value: f64| {
            let mut ours = Vec::new();
            push_debug_f64(&mut ours, value);
            assert_eq!(String::from_utf8(ours).unwrap(), format!("{value:?}"));
        };
        // Spread over every magnitude a duration takes, and well beyond.
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..300_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mantissa = (state >> 11) as f64 / (1u64 << 53) as f64;
            let exponent = (state % 40) as i32 - 12;
            check(mantissa * 10f64.powi(exponent));
            // Values with few significant bits: where ties between two spellings live.
            let odd = (state >> 40) | 1;
            let shift = (state % 90) as i32 - 45;
            check(odd as f64 * 2f64.powi(shift));
        }
        // A tie `ryu` and `Debug` break differently.
        check(781_751_276_905_481.0 + 0.25);
        check(0.0009765625 + 2f64.powi(-20));
    }

    #[test]
    fn durations_of_whole_nanoseconds_as_debug_and_serde_json_write_them() {
        let check = |nanos: u64| {
            let value = nanos as f64 / 1e6;
            let mut text = Vec::new();
            push_debug_f64(&mut text, value);
            assert_eq!(
                String::from_utf8(text).unwrap(),
                format!("{value:?}"),
                "{nanos} ns"
            );
            let mut json = Vec::new();
            push_json_f64(&mut json, value);
            assert_eq!(
                String::from_utf8(json).unwrap(),
                serde_json::to_string(&value).unwrap(),
                "{nanos} ns"
            );
            // Taken by the integer path exactly where it is sure of the digits.
            let mut taken = Vec::new();
            assert_eq!(
                push_whole_nanos(&mut taken, value),
                (100..1_000_000_000_000_000).contains(&nanos),
                "{nanos} ns"
            );
        };
        // The edges of the range, round values, and values with every count of trailing
        // zeros in their fraction.
        for nanos in [
            0,
            1,
            99,
            100,
            101,
            999,
            1_000,
            1_152,
            10_000,
            999_999,
            1_000_000,
            1_000_001,
            1_500_000,
            1_230_000,
            123_456_789,
            999_999_999_999_999,
            1_000_000_000_000_000,
            u64::MAX >> 11,
        ] {
            check(nanos);
        }
        // Spread over every magnitude, from a tenth of a microsecond to years.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..300_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            check(state >> (state % 60));
        }
    }

    #[test]
    fn trace_ids_and_micros_as_the_formatter_writes_them() {
        for id in [0, 1, u128::MAX, 0x4bf9_2f35_77b3_4da6_a3ce_929d_0e0e_4736] {
            let mut ours = Vec::new();
            push_trace_id(&mut ours, id);
            assert_eq!(String::from_utf8(ours).unwrap(), format!("{id:032x}"));
        }
        for micros in [0, 7, 123_456, 999_999] {
            let mut ours = Vec::new();
            push_micros(&mut ours, micros);
            assert_eq!(String::from_utf8(ours).unwrap(), format!(".{micros:06}Z"));
        }
    }

    #[test]
    fn dates_across_the_calendar() {
        // Every day from 1970 to 2400 against the day-by-day reference, at its last second.
        let mut secs = parse_stamp("1970-01-01T00:00:00");
        let mut date = Vec::new();
        for days in 0..(430 * 366) {
            date.clear();
            write_date(&mut date, secs + 86_399);
            let text = std::str::from_utf8(&date).unwrap();
            assert_eq!(parse_stamp(text), secs + 86_399, "{text} ({days})");
            assert!(text.ends_with("T23:59:59"), "{text}");
            secs += 86_400;
        }
        let mut date = Vec::new();
        write_date(&mut date, -1);
        assert_eq!(date, b"1969-12-31T23:59:59");
        assert_eq!(
            timestamp(std::time::UNIX_EPOCH - std::time::Duration::new(1, 500)),
            (-2, 999_999)
        );
        date.clear();
        write_date(&mut date, 253_402_300_800);
        assert_eq!(date, b"+10000-01-01T00:00:00");
    }
}
