//! [`Fingerprint`] for the kubernetes model's messages and timers (`protocol`): every field
//! destructured (a new one is a compile error here), the client a front API server relays for
//! through the renaming. The hand-written `Debug` of the Lease calls (the trace's short forms,
//! which leave out `acquireTime`) is not what is hashed. An [`Identity`] holds the client's index
//! and its uuid: values (a client's name for itself), hashed as they are, not renamed.

use locksim_simulator::{fingerprint_enum, fingerprint_fieldless, fingerprint_struct};

use super::library::Library;
use super::protocol::{
    ApiError, ApiRequest, ApiResponse, ClientTimer, Identity, Lease, LeaseSpec, StoreRequest, StoreResponse, Verb,
};

fingerprint_fieldless!(ApiError, Library);

fingerprint_struct!(Identity { client, uuid });
fingerprint_struct!(LeaseSpec { holder, lease_duration_secs, acquire_time_us, renew_time_us, transitions });
fingerprint_struct!(Lease { spec, resource_version });
fingerprint_enum!(Verb { Get, Create { spec }, Update { spec, resource_version } });
fingerprint_struct!(ApiRequest { id, lease, verb });
fingerprint_struct!(ApiResponse { id, result });
fingerprint_struct!(StoreRequest { @node client, request });
fingerprint_struct!(StoreResponse { @node client, response });
fingerprint_enum!(ClientTimer { Retry { key }, RequestTimeout { key }, RenewDeadline { key } });
