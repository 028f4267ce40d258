//! The parameter order Magento 1.9 signed with: PHP's `strnatcmp`.
//!
//! RFC 5849 §3.4.1.3.2 sorts the encoded parameters by byte value, and so does the gateway
//! (and OpenMage since 19.4.0, "BREAKING CHANGE", #721). Magento 1.9 verified signatures
//! with Zend Framework 1's OAuth code, which sorted the encoded names with PHP's
//! `strnatcmp` instead (`uksort($params, 'strnatcmp')`), and ZF1's client signed the same
//! way; so an app tuned to a 1.9 store signs `filter[2]` before `filter[10]`, where byte
//! order puts `filter%5B10%5D` first. The verifier accepts either order
//! ([`super::verify`]); this module is the second one.
//!
//! [`strnatcmp`] follows php-src's `strnatcmp_ex` (case-sensitive) step by step, including
//! its quirks: leading zeros skipped at the start of the string only, runs of digits
//! starting with `0` compared left-aligned ("fractional"), others by magnitude, whitespace
//! skipped. A test compares it with PHP's own function when `php` is installed.

use std::cmp::Ordering;

/// PHP's `strnatcmp($a, $b)`, on bytes.
pub fn strnatcmp(a: &[u8], b: &[u8]) -> Ordering {
    if a.is_empty() || b.is_empty() {
        return a.len().cmp(&b.len());
    }
    // PHP's strings end in a NUL the C code may read: index `len` is 0 here.
    let at = |s: &[u8], i: usize| s.get(i).copied().unwrap_or(0);
    let (mut ap, mut bp) = (0usize, 0usize);
    let mut leading = true;
    loop {
        let mut ca = at(a, ap);
        let mut cb = at(b, bp);
        if leading {
            while ca == b'0' && ap + 1 < a.len() && at(a, ap + 1).is_ascii_digit() {
                ap += 1;
                ca = at(a, ap);
            }
            while cb == b'0' && bp + 1 < b.len() && at(b, bp + 1).is_ascii_digit() {
                bp += 1;
                cb = at(b, bp);
            }
            leading = false;
        }
        while is_space(ca) {
            ap += 1;
            ca = at(a, ap);
        }
        while is_space(cb) {
            bp += 1;
            cb = at(b, bp);
        }
        if ca.is_ascii_digit() && cb.is_ascii_digit() {
            let fractional = ca == b'0' || cb == b'0';
            let result = if fractional {
                compare_left(a, &mut ap, b, &mut bp)
            } else {
                compare_right(a, &mut ap, b, &mut bp)
            };
            if result != Ordering::Equal {
                return result;
            }
            match (ap >= a.len(), bp >= b.len()) {
                (true, true) => return Ordering::Equal,
                (true, false) => return Ordering::Less,
                (false, true) => return Ordering::Greater,
                (false, false) => {
                    ca = at(a, ap);
                    cb = at(b, bp);
                }
            }
        }
        match ca.cmp(&cb) {
            Ordering::Equal => {}
            other => return other,
        }
        ap += 1;
        bp += 1;
        match (ap >= a.len(), bp >= b.len()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            (false, false) => {}
        }
    }
}

/// C's `isspace` in the "C" locale.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn digit_at(s: &[u8], i: usize) -> bool {
    s.get(i).is_some_and(u8::is_ascii_digit)
}

/// Two runs of digits by magnitude: the longer wins, else the first differing digit.
fn compare_right(a: &[u8], ap: &mut usize, b: &[u8], bp: &mut usize) -> Ordering {
    let mut bias = Ordering::Equal;
    loop {
        match (digit_at(a, *ap), digit_at(b, *bp)) {
            (false, false) => return bias,
            (false, true) => return Ordering::Less,
            (true, false) => return Ordering::Greater,
            (true, true) => {
                if bias == Ordering::Equal {
                    bias = a[*ap].cmp(&b[*bp]);
                }
            }
        }
        *ap += 1;
        *bp += 1;
    }
}

/// Two runs of digits left-aligned (one starts with `0`): the first differing digit wins.
fn compare_left(a: &[u8], ap: &mut usize, b: &[u8], bp: &mut usize) -> Ordering {
    loop {
        match (digit_at(a, *ap), digit_at(b, *bp)) {
            (false, false) => return Ordering::Equal,
            (false, true) => return Ordering::Less,
            (true, false) => return Ordering::Greater,
            (true, true) => match a[*ap].cmp(&b[*bp]) {
                Ordering::Equal => {}
                other => return other,
            },
        }
        *ap += 1;
        *bp += 1;
    }
}

/// Encoded `(name, value)` pairs as ZF1 ordered them: names by `strnatcmp` (`uksort`), a
/// repeated name's values by `strnatcmp` too (`natsort`); byte order breaks what PHP would
/// leave tied, so the result never depends on arrival order.
pub fn sort_pairs(pairs: &mut [(String, String)]) {
    pairs.sort_by(|(ka, va), (kb, vb)| {
        strnatcmp(ka.as_bytes(), kb.as_bytes())
            .then_with(|| ka.cmp(kb))
            .then_with(|| strnatcmp(va.as_bytes(), vb.as_bytes()))
            .then_with(|| va.cmp(vb))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use Ordering::{Equal, Greater, Less};

    fn cmp(a: &str, b: &str) -> Ordering {
        strnatcmp(a.as_bytes(), b.as_bytes())
    }

    #[test]
    fn numbers_by_magnitude() {
        assert_eq!(cmp("img2", "img10"), Less);
        assert_eq!(cmp("img10", "img2"), Greater);
        assert_eq!(cmp("img10", "img10"), Equal);
        // Encoded brackets: the `5` of `%5B` is a run of its own, equal on both sides.
        assert_eq!(
            cmp(
                "filter%5B2%5D%5Battribute%5D",
                "filter%5B10%5D%5Battribute%5D"
            ),
            Less
        );
        // ...while byte order says the opposite.
        assert!("filter%5B10%5D" < "filter%5B2%5D");
        // `filter[1]` and `filter[10]` sort alike in both orders once encoded.
        assert_eq!(cmp("filter%5B1%5D", "filter%5B10%5D"), Less);
        assert!("filter%5B1%5D" < "filter%5B10%5D");
    }

    #[test]
    fn phps_quirks() {
        // Leading zeros at the start are skipped; elsewhere a run starting with 0 is
        // compared left-aligned.
        assert_eq!(cmp("007", "7"), Equal);
        assert_eq!(cmp("a07", "a7"), Less);
        assert_eq!(cmp("a010", "a02"), Less);
        assert_eq!(cmp("", "a"), Less);
        assert_eq!(cmp("a", ""), Greater);
        assert_eq!(cmp("", ""), Equal);
        assert_eq!(cmp("a", "ab"), Less);
        assert_eq!(cmp("A", "a"), Less);
    }

    #[test]
    fn pairs_in_zf1s_order() {
        let mut pairs: Vec<(String, String)> = [
            ("filter%5B10%5D%5Battribute%5D", "sku"),
            ("oauth_nonce", "n"),
            ("filter%5B2%5D%5Battribute%5D", "name"),
            ("a", "v10"),
            ("a", "v9"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        sort_pairs(&mut pairs);
        let order: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                ("a", "v9"),
                ("a", "v10"),
                ("filter%5B2%5D%5Battribute%5D", "name"),
                ("filter%5B10%5D%5Battribute%5D", "sku"),
                ("oauth_nonce", "n"),
            ]
        );
    }

    /// Compares with PHP's own `strnatcmp` over generated strings of the characters an
    /// encoded parameter holds, when `php` is installed (tests/oauth runs it under CI).
    #[test]
    fn agrees_with_php() {
        let probe = std::process::Command::new("php")
            .args(["-r", "echo 1;"])
            .output();
        if !probe.is_ok_and(|o| o.status.success()) {
            if std::env::var_os("CI").is_some() {
                panic!("php is missing: .ci/run must install it");
            }
            eprintln!("\n*** SKIPPED: no php to compare strnatcmp with (see .ci/run) ***\n");
            return;
        }
        // A small deterministic generator: no dependency for a test.
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let alphabet = b"0001123456789%5BD._-az ";
        let mut cases = Vec::new();
        for _ in 0..2000 {
            let mut make = || {
                let len = (next() % 9) as usize;
                (0..len)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize] as char)
                    .collect::<String>()
            };
            let (a, b) = (make(), make());
            cases.push((a, b));
        }
        let input: String = cases.iter().map(|(a, b)| format!("{a}\t{b}\n")).collect();
        let script = "while (($l = fgets(STDIN)) !== false) { [$a, $b] = explode(\"\\t\", rtrim($l, \"\\n\")); echo strnatcmp($a, $b) <=> 0, \"\\n\"; }";
        let mut child = std::process::Command::new("php")
            .args(["-r", script])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        {
            use std::io::Write as _;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
        }
        let output = child.wait_with_output().unwrap();
        let answers: Vec<i32> = String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .map(|l| l.trim().parse().unwrap())
            .collect();
        assert_eq!(answers.len(), cases.len());
        for ((a, b), php) in cases.iter().zip(answers) {
            let ours = match cmp(a, b) {
                Less => -1,
                Equal => 0,
                Greater => 1,
            };
            assert_eq!(ours, php, "strnatcmp({a:?}, {b:?})");
        }
    }
}
