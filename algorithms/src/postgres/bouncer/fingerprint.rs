//! [`Fingerprint`] for PgBouncer: every field destructured (a new one is a compile error here);
//! its clients' nodes and its server through the renaming.

use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::{Bouncer, ClientConn, Running, ServerConn, Volatile};

fingerprint_struct!(ClientConn { @node node, linked, pending });
fingerprint_enum!(Running { Client { conn, id }, Reset });
fingerprint_struct!(ServerConn { conn, next_id, established, client, running, in_txn });
fingerprint_struct!(Volatile { @opt_node server, clients, pool, idle, waiting, next_seq });
fingerprint_struct!(Bouncer { cfg, v });

#[cfg(test)]
mod tests {
    use locksim_simulator::fingerprint::{hash_of, Renaming};

    use super::ClientConn;

    fn client(node: usize, linked: Option<usize>) -> ClientConn {
        ClientConn { node, linked, pending: None }
    }

    #[test]
    fn a_pooled_connection_names_its_client_through_the_renaming() {
        let ids = Renaming::identity(5);
        // Nodes 0–2 servers and PgBouncer, 3 and 4 clients, swapped.
        let swap = Renaming::from_permutation(&[0, 1, 2, 4, 3]);
        assert_eq!(hash_of(&client(3, Some(0)), &swap), hash_of(&client(4, Some(0)), &ids));
        assert_ne!(hash_of(&client(3, Some(0)), &ids), hash_of(&client(4, Some(0)), &ids));
        assert_ne!(hash_of(&client(3, Some(0)), &ids), hash_of(&client(3, None), &ids));
    }
}
