//! [`Fingerprint`] for the hazelcast model's messages and timers (`protocol`): every variant and
//! field listed (a new one is a compile error here). The hand-written `Debug` of `Op`,
//! `Invocation`, `Response` and `CmdKind` (the trace's short forms) is not what is hashed. A
//! client's index (`CmdKind::Invoke`'s `client`) names the client (`Renaming::client_index`) and
//! invocation uids are identity values (`HazelcastClient::identity_values`): both rename with
//! their client under client symmetry.

use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::protocol::{
    ClientTimer, CmdKind, HazelcastMsg, HazelcastTimer, HzError, Invocation, Op, Reply, Response, ServerTimer,
};

fingerprint_enum!(Op { CreateSession, Heartbeat { session }, Lock { key, session }, Unlock { key, session } });
fingerprint_struct!(Invocation { @ident_high uid, op });
fingerprint_enum!(HzError { NotLeader { @opt_node hint }, SessionExpired, NotOwner, LimitReached });
fingerprint_enum!(Reply { Session(session), Done, Fence(fence), Unlocked });
fingerprint_struct!(Response { @ident_high uid, result });
fingerprint_enum!(CmdKind { Invoke { @client_index client, @ident_high uid, op }, ExpireSessions { sessions } });
fingerprint_enum!(HazelcastMsg { Invocation(m), Response(m), Consensus(m), Ilock(m) });
fingerprint_enum!(ServerTimer { ExpiryCheck });
fingerprint_enum!(ClientTimer { Heartbeat, CallTimeout { @ident_high uid }, CallRetry { @ident_high uid } });
fingerprint_enum!(HazelcastTimer { Server(t), Client(t), Consensus(t), Ilock(t) });
