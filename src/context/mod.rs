//! What belongs to the request a task is serving, as task-locals every floor may read: its
//! id, deadline and peer ([`request`]), its W3C trace context ([`trace`]) and its
//! compatibility profile ([`profile`]). The ground floor: it imports nothing of the gateway,
//! so the back-end client, the cache and the wire format can all read it.

pub mod profile;
pub mod request;
pub mod trace;
