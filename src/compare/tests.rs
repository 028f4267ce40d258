use serde_json::{Value, json};

use super::*;

fn ok(body: &Value) -> Answer<'_> {
    Answer::new(200, body)
}

fn diff(good: Value, other: Value) -> Comparison {
    compare(ok(&good), ok(&other), &Options::default())
}

fn classes(c: &Comparison) -> Vec<(&str, &'static str)> {
    c.differences
        .iter()
        .map(|d| (d.path.as_str(), d.class.name()))
        .collect()
}

#[test]
fn equal_answers_match_whatever_their_key_order() {
    let c = diff(
        json!({"a": 1, "b": {"x": [1, {"p": 1, "q": 2}]}}),
        json!({"b": {"x": [1, {"q": 2, "p": 1}]}, "a": 1}),
    );
    assert!(c.is_match(), "{c:?}");
}

#[test]
fn values_missing_extra_and_types_are_told_apart() {
    let c = diff(
        json!({"price": "12.0000", "name": "Tee", "sku": "t", "qty": 5, "gone": null}),
        json!({"price": "11.0000", "name": "Tee", "qty": "5", "gone": "now", "new": true}),
    );
    assert_eq!(
        classes(&c),
        vec![
            ("price", "value"),
            ("sku", "missing"),
            ("qty", "type"),
            ("gone", "value"),
            ("new", "extra"),
        ]
    );
    let price = c.find("price", Class::Value).unwrap();
    assert_eq!(price.good, Shown::Value(json!("12.0000")));
    assert_eq!(price.other, Shown::Value(json!("11.0000")));
    assert_eq!(price.occurrences, 1);
    let sku = c.find("sku", Class::Missing).unwrap();
    assert_eq!(
        (&sku.good, &sku.other),
        (&Shown::Value(json!("t")), &Shown::Absent)
    );
    let new = c.find("new", Class::Extra).unwrap();
    assert_eq!(
        (&new.good, &new.other),
        (&Shown::Absent, &Shown::Value(json!(true)))
    );
}

#[test]
fn paths_fold_list_indexes_and_numeric_keys() {
    let c = diff(
        json!({"tier_price": [{"qty": 2, "price": "9"}, {"qty": 5, "price": "8"}],
               "1": {"name": "a"}, "2": {"name": "b"}}),
        json!({"tier_price": [{"qty": 2, "price": "9.5"}, {"qty": 5, "price": "8.5"}],
               "1": {"name": "A"}, "2": {"name": "B"}}),
    );
    assert_eq!(
        classes(&c),
        vec![("tier_price[].price", "value"), ("{id}.name", "value")]
    );
    // Every item's difference counts; the first is the example.
    let tier = c.find("tier_price[].price", Class::Value).unwrap();
    assert_eq!(tier.occurrences, 2);
    assert_eq!(tier.good, Shown::Value(json!("9")));
    let unfolded = compare(
        ok(&json!({"1": "a"})),
        ok(&json!({"1": "b"})),
        &Options::default().fold_numeric_keys(false),
    );
    assert_eq!(classes(&unfolded), vec![("1", "value")]);
}

#[test]
fn a_list_with_the_same_items_in_another_order_is_an_order_difference() {
    let c = diff(
        json!({"types": ["image", "thumbnail"]}),
        json!({"types": ["thumbnail", "image"]}),
    );
    assert_eq!(classes(&c), vec![("types", "order")]);
    // A list at the top of the body.
    let c = diff(json!([1, 2, 3]), json!([3, 2, 1]));
    assert_eq!(classes(&c), vec![(BODY_PATH, "order")]);
    // Same items but one more: not an order difference.
    let c = diff(json!([1, 2]), json!([2, 1, 3]));
    assert!(c.find(BODY_PATH, Class::Order).is_none(), "{c:?}");
}

#[test]
fn lists_of_records_are_matched_by_their_identity() {
    // The candidate lacks the first image: one missing item, not every later field shifted.
    let c = diff(
        json!({"images": [{"id": 1, "url": "a"}, {"id": 2, "url": "b"}, {"id": 3, "url": "c"}]}),
        json!({"images": [{"id": 2, "url": "b"}, {"id": 3, "url": "C"}, {"id": 4, "url": "d"}]}),
    );
    assert_eq!(
        classes(&c),
        vec![
            ("images[]", "missing"),
            ("images[].url", "value"),
            ("images[]", "extra"),
        ]
    );
    assert_eq!(
        c.find("images[]", Class::Missing).unwrap().good,
        Shown::Value(json!({"id": 1, "url": "a"}))
    );
    // Same records, other order and one changed field: both said.
    let c = diff(
        json!([{"entity_id": "1", "city": "A"}, {"entity_id": "2", "city": "B"}]),
        json!([{"entity_id": "2", "city": "B"}, {"entity_id": "1", "city": "Z"}]),
    );
    assert_eq!(
        classes(&c),
        vec![("[].city", "value"), (BODY_PATH, "order")]
    );
}

#[test]
fn lists_without_identity_are_compared_by_position() {
    let c = diff(
        json!({"street": ["a", "b"]}),
        json!({"street": ["a", "c", "d"]}),
    );
    assert_eq!(
        classes(&c),
        vec![("street[]", "value"), ("street[]", "extra")]
    );
    let c = diff(json!({"street": ["a", "b"]}), json!({"street": ["a"]}));
    assert_eq!(classes(&c), vec![("street[]", "missing")]);
    // Duplicate ids are no identity: by position.
    let c = diff(
        json!([{"id": 1, "v": 1}, {"id": 1, "v": 2}]),
        json!([{"id": 1, "v": 1}, {"id": 1, "v": 3}]),
    );
    assert_eq!(classes(&c), vec![("[].v", "value")]);
}

#[test]
fn statuses_differ_and_error_trees_are_compared_when_both_are_errors() {
    let product = json!({"name": "Tee"});
    let not_found =
        json!({"messages": {"error": [{"code": 404, "message": "Resource not found."}]}});
    let c = compare(
        ok(&product),
        Answer::new(404, &not_found),
        &Options::default(),
    );
    assert_eq!(classes(&c), vec![(STATUS_PATH, "status")]);
    let s = c.find(STATUS_PATH, Class::Status).unwrap();
    assert_eq!(
        (&s.good, &s.other),
        (&Shown::Value(json!(200)), &Shown::Value(json!(404)))
    );
    assert!(c.status_differs());

    let bad = json!({"messages": {"error": [{"code": 400, "message": "Invalid value"}]}});
    let c = compare(
        Answer::new(404, &not_found),
        Answer::new(400, &bad),
        &Options::default(),
    );
    assert_eq!(
        classes(&c),
        vec![
            (STATUS_PATH, "status"),
            ("messages.error[].code", "value"),
            ("messages.error[].message", "value"),
        ]
    );
    // Same error, same status: a match.
    let c = compare(
        Answer::new(404, &not_found),
        Answer::new(404, &not_found.clone()),
        &Options::default(),
    );
    assert!(c.is_match());
}

#[test]
fn digested_fields_compare_by_value_and_show_only_a_digest() {
    let options = Options::default().everything(Treatment::Digest);
    let c = compare(
        ok(&json!({"email": "a@x.test", "city": "Calder"})),
        ok(&json!({"email": "b@x.test", "city": "Calder"})),
        &options,
    );
    let d = c.find("email", Class::Value).unwrap();
    let (Shown::Digest(g), Shown::Digest(o)) = (&d.good, &d.other) else {
        panic!("{d:?}")
    };
    assert_ne!(g, o);
    assert!(!g.contains("a@x.test") && !o.contains("b@x.test"));
    assert_eq!(c.differences.len(), 1);
    // The same value digests alike within one set of options.
    let again = compare(
        ok(&json!({"email": "a@x.test"})),
        ok(&json!({"email": "c@x.test"})),
        &options,
    );
    assert_eq!(again.differences[0].good, Shown::Digest(g.clone()));
    // The caller's digest, and a rule that shows one field of a digested answer.
    let options = Options::default()
        .everything(Treatment::Digest)
        .at("sku", Treatment::Compare)
        .digest_with(|v| format!("d{}", v.to_string().len()));
    let c = compare(
        ok(&json!({"email": "a@x.test", "sku": "s1"})),
        ok(&json!({"email": "bb@x.test", "sku": "s2"})),
        &options,
    );
    assert_eq!(
        c.find("email", Class::Value).unwrap().good,
        Shown::Digest("d10".into())
    );
    assert_eq!(
        c.find("sku", Class::Value).unwrap().other,
        Shown::Value(json!("s2"))
    );
}

#[test]
fn masked_and_ignored_fields() {
    let options = Options::default()
        .field("password", Treatment::Masked)
        .at("meta", Treatment::Ignore)
        .masked_values(|v| v == "[scrubbed]");
    let c = compare(
        ok(&json!({"user": {"password": "x"}, "token": "[scrubbed]", "meta": {"t": 1}, "a": 1})),
        ok(&json!({"user": {"password": "y"}, "token": "live-token", "meta": {"t": 2}, "a": 1})),
        &options,
    );
    assert!(c.is_match(), "{c:?}");
    // A masked field still must be there.
    let c = compare(
        ok(&json!({"user": {"password": "x"}})),
        ok(&json!({"user": {}})),
        &options,
    );
    let d = c.find("user.password", Class::Missing).unwrap();
    assert_eq!((&d.good, &d.other), (&Shown::Masked, &Shown::Absent));
    // An ignored field may come and go.
    let c = compare(
        ok(&json!({"a": 1})),
        ok(&json!({"a": 1, "meta": 3})),
        &options,
    );
    assert!(c.is_match());
}

#[test]
fn noise_is_what_differs_between_two_reads_of_the_good_side() {
    let options = Options::default();
    let first = json!({"updated_at": "10:00", "items": [{"id": 1, "seen": 3}], "price": "9"});
    let second = json!({"updated_at": "10:01", "items": [{"id": 1, "seen": 4}], "price": "9"});
    let candidate = json!({"updated_at": "09:00", "items": [{"id": 1, "seen": 9}], "price": "8"});
    let noise = Noise::between(ok(&first), ok(&second), &options);
    assert!(!noise.is_quiet());
    assert_eq!(
        noise.paths().collect::<Vec<_>>(),
        vec!["items[].seen", "updated_at"]
    );
    let (real, noisy) = noise.split(compare(ok(&first), ok(&candidate), &options));
    assert_eq!(classes(&real), vec![("price", "value")]);
    assert_eq!(noisy.differences.len(), 2);
    // A noisy parent covers its children, not its siblings.
    let noise = Noise::between(ok(&json!({"a": [1]})), ok(&json!({"a": [1, 2]})), &options);
    let c = compare(
        ok(&json!({"a": [{"x": 1}], "ab": 1})),
        ok(&json!({"a": [{"x": 2}], "ab": 2})),
        &options,
    );
    let (real, _) = noise.split(c);
    assert_eq!(classes(&real), vec![("ab", "value")]);
    // Two reads of the good side with other statuses: nothing can be held against the other.
    let err = json!({});
    let noise = Noise::between(ok(&first), Answer::new(503, &err), &options);
    let (real, _) = noise.split(compare(ok(&first), ok(&candidate), &options));
    assert!(real.is_match());
    // Quiet noise covers nothing.
    let (real, noisy) = Noise::none().split(compare(ok(&first), ok(&candidate), &options));
    assert_eq!(real.differences.len(), 3);
    assert!(noisy.is_match());
}

#[test]
fn class_names_round_trip() {
    for class in Class::ALL {
        assert_eq!(Class::from_name(class.name()), Some(class));
    }
    assert_eq!(Class::from_name("other"), None);
}
