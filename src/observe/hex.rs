//! Lower-case hex digits written a byte at a time: the request ids and trace ids every
//! request and access line carries. A table of the two digits of each byte takes one
//! look-up per byte, where a digit at a time took a shift and a mask per digit (of a
//! 128-bit number, for a trace id).

/// The two lower-case hex digits of every byte.
const PAIRS: [[u8; 2]; 256] = {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut table = [[0u8; 2]; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = [DIGITS[b >> 4], DIGITS[b & 0xf]];
        b += 1;
    }
    table
};

/// Writes `bytes` as hex into `out`, two digits a byte (`out` is twice as long as `bytes`).
pub fn write(out: &mut [u8], bytes: &[u8]) {
    debug_assert_eq!(out.len(), 2 * bytes.len());
    for (pair, byte) in out.chunks_exact_mut(2).zip(bytes) {
        pair.copy_from_slice(&PAIRS[usize::from(*byte)]);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_byte_as_format_writes_it() {
        let bytes: Vec<u8> = (0..=255).collect();
        let mut out = vec![0u8; 512];
        super::write(&mut out, &bytes);
        let expected: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }
}
