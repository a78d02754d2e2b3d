//! Numbers as the narrative and the diagram write them: true times in milliseconds to the
//! microsecond, thousands grouped with a space (`42 001.394 ms`), trailing zeros dropped; the
//! formatting is the only thing done to them.

use locksim_simulator::time::Nanos;

/// `42001394331` ns → `42 001.394`: milliseconds, three decimals at most, grouped thousands.
pub fn ms_number(ns: i128) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    // Rounded to the microsecond.
    let us = (a + 500) / 1_000;
    let (whole, frac) = (us / 1_000, us % 1_000);
    let digits = whole.to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(' ');
        }
        grouped.push(c);
    }
    let frac = format!("{frac:03}");
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        format!("{sign}{grouped}")
    } else {
        format!("{sign}{grouped}.{frac}")
    }
}

/// A true time: `42 001.394 ms`.
pub fn fmt_ms(ns: Nanos) -> String {
    format!("{} ms", ms_number(ns as i128))
}

/// A wall clock reading, which may be negative after a backward step.
pub fn fmt_wall(ns: i64) -> String {
    format!("{} ms", ms_number(ns as i128))
}

/// A length of time, in the same unit.
pub fn fmt_span(ns: Nanos) -> String {
    fmt_ms(ns)
}

/// `token 7`, or `no token`.
pub fn token_text(t: Option<u64>) -> String {
    t.map_or("no token".to_string(), |t| format!("token {t}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milliseconds_are_grouped_and_trimmed() {
        assert_eq!(fmt_ms(42_001_394_331), "42 001.394 ms");
        assert_eq!(fmt_ms(50_307_000_000), "50 307 ms");
        assert_eq!(fmt_ms(50_400_000), "50.4 ms");
        assert_eq!(fmt_ms(0), "0 ms");
        assert_eq!(fmt_ms(999_999_999_600), "1 000 000 ms", "rounds to the microsecond");
        assert_eq!(fmt_wall(-1_500_000), "-1.5 ms");
        assert_eq!(token_text(None), "no token");
    }
}
