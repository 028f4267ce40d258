//! Binding the listen address for several workers without sharing it with strangers.
//!
//! Each worker has its own socket on the address (`SO_REUSEPORT`), so the kernel spreads new
//! connections evenly over the workers. A plain shared socket would let whichever worker
//! wakes first take a whole burst of connections (with keep-alive clients that is a lasting
//! imbalance), which is why nginx and this gateway use one socket per worker.
//!
//! `SO_REUSEPORT` alone, though, lets any other process of the same user bind the same
//! address too: a forgotten gateway in another terminal silently took half the connections.
//! So before the group binds, a **probe** socket binds the address *without* it (only
//! `SO_REUSEADDR`, which on Linux tolerates `TIME_WAIT` remnants and nothing else). The kernel
//! refuses that bind while any socket holds the address, with or without `SO_REUSEPORT`,
//! and the start fails with the usual "Address already in use". The probe is closed and the
//! group binds at once; once our group holds the address, a second gateway's probe fails in
//! turn. What is left is a window of microseconds between the probe and the group's bind,
//! and a program that deliberately sets `SO_REUSEPORT` itself, which this cannot stop.
//!
//! Decided without measuring (the machine is shared): the alternative of one socket shared
//! by every worker was rejected for the imbalance above, not for its cost.

use std::net::SocketAddr;

use tokio::net::TcpSocket;

fn socket_for(addr: SocketAddr) -> std::io::Result<TcpSocket> {
    match addr {
        SocketAddr::V4(_) => TcpSocket::new_v4(),
        SocketAddr::V6(_) => TcpSocket::new_v6(),
    }
}

/// Binds `count` sockets on `wanted` (port 0: one free port for all), after checking that
/// no other socket holds the address. Errors read `cannot listen on ADDR: <OS error>`.
pub fn bind_group(wanted: SocketAddr, count: usize) -> Result<Vec<TcpSocket>, String> {
    let cannot = |e: std::io::Error| format!("cannot listen on {wanted}: {e}");
    let probe = socket_for(wanted).map_err(cannot)?;
    probe.set_reuseaddr(true).map_err(cannot)?;
    probe.bind(wanted).map_err(cannot)?;
    // With port 0 the probe picked the port; the group takes the same one.
    let mut addr = probe.local_addr().map_err(cannot)?;
    drop(probe);
    let mut sockets = Vec::with_capacity(count);
    for _ in 0..count {
        let socket = socket_for(addr).map_err(cannot)?;
        socket.set_reuseaddr(true).map_err(cannot)?;
        socket.set_reuseport(true).map_err(cannot)?;
        socket.set_nodelay(true).map_err(cannot)?;
        socket.bind(addr).map_err(cannot)?;
        addr = socket.local_addr().map_err(cannot)?;
        sockets.push(socket);
    }
    Ok(sockets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_busy_address_is_refused_even_by_a_reuseport_group() {
        let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = held.local_addr().unwrap();
        let error = bind_group(addr, 2).unwrap_err();
        assert!(error.contains("in use"), "{error}");

        // Another gateway's group (SO_REUSEPORT sockets) holds the address: refused too.
        let group = bind_group("127.0.0.1:0".parse().unwrap(), 2).unwrap();
        let addr = group[0].local_addr().unwrap();
        let listening: Vec<_> = group.into_iter().map(|s| s.listen(16).unwrap()).collect();
        let error = bind_group(addr, 2).unwrap_err();
        assert!(error.contains("in use"), "{error}");
        drop(listening);
    }
}
