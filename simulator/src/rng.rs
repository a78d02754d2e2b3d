//! Seeded random streams. Every stream is a ChaCha8 generator seeded from the run seed and a name
//! (a node's name, and a purpose such as "workload" or "network"), so adding a node or a draw in
//! one stream never shifts another stream's values.

use rand::SeedableRng;
pub use rand_chacha::ChaCha8Rng;

/// FNV-1a over the bytes: stable across Rust versions and platforms (std's hasher is not promised to be).
pub fn stable_hash(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in *part {
            h ^= *b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        // Separator, so ("ab","c") and ("a","bc") differ.
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The stream for (run seed, name, purpose).
pub fn stream(seed: u64, name: &str, purpose: &str) -> ChaCha8Rng {
    let mut key = [0u8; 32];
    let a = stable_hash(&[&seed.to_le_bytes(), name.as_bytes(), purpose.as_bytes()]);
    let b = stable_hash(&[purpose.as_bytes(), name.as_bytes(), &seed.to_le_bytes()]);
    key[..8].copy_from_slice(&a.to_le_bytes());
    key[8..16].copy_from_slice(&b.to_le_bytes());
    key[16..24].copy_from_slice(&seed.to_le_bytes());
    key[24..32].copy_from_slice(&(a ^ b.rotate_left(17)).to_le_bytes());
    ChaCha8Rng::from_seed(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;
    #[test]
    fn streams_are_reproducible_and_distinct() {
        let x: u64 = stream(7, "client-1", "workload").gen();
        let y: u64 = stream(7, "client-1", "workload").gen();
        let z: u64 = stream(7, "client-2", "workload").gen();
        let w: u64 = stream(8, "client-1", "workload").gen();
        assert_eq!(x, y);
        assert_ne!(x, z);
        assert_ne!(x, w);
    }
}
