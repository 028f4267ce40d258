//! Which slot of a thread's small direct-mapped table a text key goes to: the tables a
//! worker keeps so that a hit shares nothing with other workers (`cache::hot`, the route
//! templates of `front::Early`). Keys that share a slot take turns, so nobody can make a
//! thread keep more than its table's slots, and a colliding key only costs a lookup
//! elsewhere.

/// The slot of `key` among `slots`, for the table of `seed` (which table or cache it is,
/// so that two tables' keys spread differently): a quick mix of the key's bytes, eight at
/// a time, and a finish that spreads every input bit over the top bits the slot is taken
/// from. `slots` must be at most 2^16.
pub fn of(seed: u64, key: &str, slots: usize) -> usize {
    let mut hash = seed ^ (key.len() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for chunk in key.as_bytes().chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        hash = (hash ^ u64::from_le_bytes(word))
            .rotate_left(29)
            .wrapping_mul(0xbf58_476d_1ce4_e5b9);
    }
    hash ^= hash >> 31;
    hash = hash.wrapping_mul(0x94d0_49bb_1331_11eb);
    hash ^= hash >> 29;
    (hash >> 48) as usize % slots
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_spread_and_depend_on_the_seed() {
        let keys: Vec<String> = (0..2000)
            .map(|i| format!("fast:guest:json:/api/rest/products/{i}"))
            .collect();
        let mut used = [0usize; 64];
        for key in &keys {
            used[of(1, key, 64)] += 1;
        }
        // Every slot gets some of 2,000 keys, none more than three times its share.
        assert!(used.iter().all(|&n| n > 0 && n < 3 * 2000 / 64), "{used:?}");
        let moved = keys.iter().filter(|k| of(1, k, 64) != of(2, k, 64)).count();
        assert!(moved > 1500, "{moved}");
    }
}
