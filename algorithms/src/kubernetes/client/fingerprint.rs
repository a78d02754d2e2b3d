//! [`Fingerprint`] for client-go's leader election: every field destructured (a new one is a
//! compile error here); API servers through the renaming, timer ids by the timer they name. The
//! client's index (its first endpoint, its identity's hostname) and its identity's uuid are
//! values, hashed as they are: clients with different ones are not merged.

use locksim_simulator::{fingerprint_enum, fingerprint_fieldless, fingerprint_struct};

use super::{
    Attempt, Call, ClientConfig, Conn, Elector, KubernetesClient, Pending, Poll, RawRecord, Stage, Then, Volatile,
};

fingerprint_fieldless!(Call, Then);

fingerprint_struct!(ClientConfig {
    servers,
    lease_duration_secs,
    renew_deadline_ns,
    retry_period_ns,
    request_timeout_ns,
    release_on_cancel,
});
fingerprint_struct!(RawRecord { holder, lease_duration_secs, acquire_s, renew_s, transitions });
fingerprint_struct!(Pending { id, call, timer });
fingerprint_struct!(Attempt { now_mono, desired });
fingerprint_enum!(Stage { Acquiring, Leading, Releasing { then } });
fingerprint_struct!(Poll { deadline, ticker_origin });
fingerprint_struct!(Elector {
    key,
    stage,
    observed,
    observed_time,
    observed_raw,
    cached,
    attempt,
    pending,
    retry,
    poll,
});
fingerprint_struct!(Conn { @nodes servers, endpoint, next_id });
fingerprint_struct!(Volatile { conn, me, electors });
fingerprint_struct!(KubernetesClient { cfg, index, v });
