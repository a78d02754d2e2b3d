//! The seed options parsed into ranges: `--seed S` (exactly one), `--seeds N` (0..N) and `--seeds A..B` (A to B-1).

use std::ops::Range;

use crate::error::CommandError;

/// Parses `--seeds`: `N` or `A..B`.
pub fn parse_seeds(text: &str) -> Result<Range<u64>, CommandError> {
    let bad = |why: &str| {
        CommandError::bad_input(format!(
            "--seeds {text}: {why}; expected a count N (seeds 0..N) or a range A..B with A < B, e.g. --seeds 1000 or --seeds 500..1500"
        ))
    };
    let num = |s: &str| s.trim().replace('_', "").parse::<u64>().map_err(|_| bad("not a whole number"));
    let range = match text.split_once("..") {
        Some((a, b)) => num(a)?..num(b)?,
        None => 0..num(text)?,
    };
    if range.start > range.end {
        return Err(bad("the range is reversed"));
    }
    if range.is_empty() {
        return Err(bad("the range is empty"));
    }
    Ok(range)
}

/// Seed-runs of `rows` rows over `seeds`, refused when the count does not fit in 64 bits (a run
/// that could never finish; the count would otherwise wrap to a small number).
pub fn seed_runs(seeds: &Range<u64>, rows: usize) -> Result<u64, CommandError> {
    let per_row = seeds.end - seeds.start;
    per_row.checked_mul(rows as u64).ok_or_else(|| {
        CommandError::bad_input(format!(
            "--seeds {}..{}: {per_row} seeds x {rows} rows = {} seed-runs, more than this machine can count \
             (or ever run); give fewer seeds (--seeds) or rows (--algorithm)",
            seeds.start,
            seeds.end,
            u128::from(per_row) * rows as u128
        ))
    })
}

/// `--seed S`: the range holding S alone. Seeds are half-open ranges, so the largest u64 cannot
/// be one.
pub fn single_seed(seed: u64) -> Result<Range<u64>, CommandError> {
    match seed.checked_add(1) {
        Some(end) => Ok(seed..end),
        None => Err(CommandError::bad_input(format!("--seed {seed}: too large; the largest seed is {}", u64::MAX - 1))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn forms_and_errors() {
        assert_eq!(parse_seeds("100").unwrap(), 0..100);
        assert_eq!(parse_seeds("5..9").unwrap(), 5..9);
        assert_eq!(parse_seeds("1_000").unwrap(), 0..1000);
        assert!(parse_seeds("9..5").unwrap_err().message().contains("reversed"));
        assert!(parse_seeds("0").unwrap_err().message().contains("empty"));
        assert!(parse_seeds("4..4").unwrap_err().message().contains("empty"));
        assert!(parse_seeds("x").is_err());
        assert_eq!(single_seed(7).unwrap(), 7..8);
        assert!(single_seed(u64::MAX).unwrap_err().message().contains("too large"));
        assert_eq!(seed_runs(&(5..9), 3).unwrap(), 12);
        assert_eq!(seed_runs(&(0..u64::MAX), 1).unwrap(), u64::MAX);
        let err = seed_runs(&(0..u64::MAX), 2).unwrap_err().message().to_string();
        assert!(err.contains("= 36893488147419103230 seed-runs"), "{err}");
    }
}
