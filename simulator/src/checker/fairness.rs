//! Fairness: Jain's index of the critical sections each client completed.
//!
//! With `x_i` the sections client `i` completed (holder intervals ended by a release) and `n` the
//! workload's clients (every one counts, a client that completed none with 0),
//! `J = (Σx)² / (n · Σx²)`: 1 when every client completed as many, `1/n` when one client completed
//! them all (a leaked lock re-entered by its holder while the others starve). A run in which no
//! client completed a section says nothing about shares and has no index (`None`).

use super::intervals::{EndCause, Timeline};
use crate::history::History;

/// Jain's index over `history.clients`; `None` with no client or no completed section.
pub fn jain(history: &History, timeline: &Timeline) -> Option<f64> {
    let clients = &history.clients;
    let mut sections = vec![0u64; clients.len()];
    // Each client's place in `sections`, by node id.
    let mut slot: Vec<Option<usize>> = vec![None; clients.iter().max().map_or(0, |&c| c + 1)];
    for (i, &c) in clients.iter().enumerate() {
        slot[c] = Some(i);
    }
    for iv in timeline.intervals().filter(|iv| iv.end == EndCause::Released) {
        if let Some(Some(i)) = slot.get(iv.client) {
            sections[*i] += 1;
        }
    }
    jain_index(&sections)
}

/// `(Σx)² / (n · Σx²)`; `None` for no values or all zero.
pub fn jain_index(x: &[u64]) -> Option<f64> {
    let sum: f64 = x.iter().map(|&v| v as f64).sum();
    let squares: f64 = x.iter().map(|&v| (v as f64) * (v as f64)).sum();
    if x.is_empty() || squares == 0.0 {
        return None;
    }
    Some(sum * sum / (x.len() as f64 * squares))
}

#[cfg(test)]
mod tests {
    use super::jain_index;

    #[test]
    fn jain_bounds() {
        assert_eq!(jain_index(&[4, 4, 4, 4]), Some(1.0));
        assert_eq!(jain_index(&[9, 0, 0]), Some(1.0 / 3.0));
        assert_eq!(jain_index(&[0, 0]), None);
        assert_eq!(jain_index(&[]), None);
        // (1+3)² / (2·(1+9)) = 0.8
        assert_eq!(jain_index(&[1, 3]), Some(0.8));
    }
}
