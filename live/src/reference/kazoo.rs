//! kazoo's `Lock` (PyPI `kazoo`, pinned in `reference/kazoo/requirements.txt`), the second
//! reference client of the `zookeeper` model (`--reference kazoo`): the same recipe as Curator's
//! mutex, in Python, its listener's SUSPENDED or LOST ending the section.

use locksim_simulator::history::LockKey;

use super::curator::{fits_sequential, session_settings};
use super::Library;

/// kazoo 2.10.0.
pub const LIBRARY: Library = Library {
    name: "kazoo",
    model: "zookeeper",
    version: "kazoo 2.10.0 (PyPI kazoo==2.10.0)",
    preset: "kazoo-2.10",
    fenced: true,
    lock_name: |key: LockKey| format!("/locks/{key}"),
    fits: fits_sequential,
    settings: session_settings,
    note: "kazoo's Lock runs; SUSPENDED (with on_connection_loss = \"suspended\") or LOST at its \
listener ends the section, the token is the lock \
node's czxid (one exists after the grant)",
};
