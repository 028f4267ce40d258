//! Personal data in cassettes replaced by consistent fakes (`STOREGATE_RECORD_MASK_PII`).
//!
//! A fake is derived from a keyed hash (HMAC-SHA256) of the real value, so the same person
//! gets the same fake in every file and on every run with the same key; and a fake is
//! recognised and left as it is, so a replayed fake the gateway sends back still matches.

use hmac::{Hmac, Mac};
use regex::Regex;
use serde_json::Value;
use sha2::Sha256;

const EMAIL_FIELDS: &[&str] = &["email", "customer_email"];
const NAME_FIELDS: &[&str] = &[
    "firstname",
    "lastname",
    "middlename",
    "customer_firstname",
    "customer_lastname",
    "customer_middlename",
    // An order's gift message names its sender and recipient.
    "sender",
    "recipient",
];
const PHONE_FIELDS: &[&str] = &["telephone", "fax"];

/// Consistent fakes for personal data.
#[derive(Debug)]
pub struct Masker {
    key: Vec<u8>,
    email: Regex,
    fake_email: Regex,
    fake_name: Regex,
    fake_phone: Regex,
}

impl Masker {
    pub fn new(key: &[u8]) -> Masker {
        Masker {
            key: key.to_vec(),
            email: Regex::new(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+")
                .expect("a valid pattern"),
            fake_email: Regex::new(r"^masked-[0-9a-f]{10}@example\.invalid$")
                .expect("a valid pattern"),
            fake_name: Regex::new(r"^Masked-[0-9a-f]{10}$").expect("a valid pattern"),
            fake_phone: Regex::new(r"^555-01[0-9]{2}-[0-9]{4}$").expect("a valid pattern"),
        }
    }

    fn digest(&self, kind: &str, value: &str) -> [u8; 32] {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key");
        mac.update(kind.as_bytes());
        mac.update(b":");
        mac.update(value.as_bytes());
        mac.finalize().into_bytes().into()
    }

    fn hex(&self, kind: &str, value: &str) -> String {
        self.digest(kind, value)[..5]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    fn email(&self, email: &str) -> String {
        if self.fake_email.is_match(email) {
            return email.to_owned();
        }
        // Magento compares e-mails without case.
        format!(
            "masked-{}@example.invalid",
            self.hex("email", &email.to_ascii_lowercase())
        )
    }

    /// Every e-mail address in free text.
    pub fn emails(&self, text: &str) -> String {
        if !text.contains('@') {
            return text.to_owned();
        }
        self.email
            .replace_all(text, |c: &regex::Captures<'_>| self.email(&c[0]))
            .into_owned()
    }

    fn name(&self, name: &str) -> String {
        if name.is_empty() || self.fake_name.is_match(name) {
            return name.to_owned();
        }
        format!("Masked-{}", self.hex("name", name))
    }

    fn phone(&self, phone: &str) -> String {
        if phone.is_empty() || self.fake_phone.is_match(phone) {
            return phone.to_owned();
        }
        let d = self.digest("phone", phone);
        let n = u32::from_be_bytes([d[0], d[1], d[2], d[3]]) % 1_000_000;
        format!("555-01{:02}-{:04}", n / 10_000, n % 10_000)
    }

    /// Whether `text` is one of the fakes (whatever the key it was made with): drift compares
    /// such a value by its presence only.
    pub fn is_fake(&self, text: &str) -> bool {
        self.fake_email.is_match(text)
            || self.fake_name.is_match(text)
            || self.fake_phone.is_match(text)
    }

    /// Masks the personal fields of `value`; `field` is the name `value` sits under.
    pub fn json(&self, value: &mut Value, field: Option<&str>) {
        match value {
            Value::String(s) => {
                let masked = match field {
                    Some(f) if EMAIL_FIELDS.contains(&f) => self.email(s),
                    Some(f) if NAME_FIELDS.contains(&f) => self.name(s),
                    Some(f) if PHONE_FIELDS.contains(&f) => self.phone(s),
                    _ => return,
                };
                *s = masked;
            }
            Value::Array(list) => list.iter_mut().for_each(|v| self.json(v, field)),
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    self.json(v, Some(key));
                }
            }
            _ => {}
        }
    }
}
