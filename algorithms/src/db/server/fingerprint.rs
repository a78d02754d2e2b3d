//! [`Fingerprint`] for a database server: every field destructured (a new one is a compile error
//! here); its connections' clients, its peers and the manager through the renaming, timer ids by
//! the timer they name.

use locksim_simulator::fingerprint_struct;

use super::{Conn, DbServer, Exec, Parked, RowLock, RowWaiter, Volatile};

fingerprint_struct!(Conn { @node client, last_id, result });
fingerprint_struct!(Exec { @node client, conn, id, stmt });
fingerprint_struct!(Parked { seq, @node client, conn, id, outcome, since_ns });
fingerprint_struct!(RowWaiter { @node client, conn, id, timer });
fingerprint_struct!(RowLock { holder, waiters });
fingerprint_struct!(Volatile {
    @nodes peers,
    @opt_node manager,
    conns,
    user_locks,
    user_lock_waits,
    row_locks,
    exec,
    next_exec,
    ship_queue,
    ship_timer,
    shipped,
    semisync_on,
    acked,
    parked,
    semisync_timer,
    last_resync_ns,
    cleanup_timer,
    beat_timer,
});
fingerprint_struct!(DbServer { cfg, index, role, epoch, @opt_node primary_hint, table, shed, binlog, v });

#[cfg(test)]
mod tests {
    use locksim_simulator::fingerprint::{hash_of, Renaming};

    use super::Conn;

    fn conn(client: usize, last_id: u64) -> Conn {
        Conn { client, last_id, result: None }
    }

    #[test]
    fn a_connection_names_its_client_through_the_renaming() {
        let ids = Renaming::identity(5);
        // Nodes 0–2 servers and manager, 3 and 4 clients, swapped.
        let swap = Renaming::from_permutation(&[0, 1, 2, 4, 3]);
        assert_eq!(hash_of(&conn(3, 7), &swap), hash_of(&conn(4, 7), &ids));
        assert_ne!(hash_of(&conn(3, 7), &ids), hash_of(&conn(4, 7), &ids));
        assert_ne!(hash_of(&conn(3, 7), &ids), hash_of(&conn(3, 8), &ids));
    }
}
