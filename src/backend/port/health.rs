//! The breaker's state as the port shows it: what `/readyz` and the metrics read of a back
//! end's health, whichever back end it is.

use std::sync::Arc;

/// What the breaker in front of a back end is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum CircuitState {
    Closed = 0,
    Open = 1,
    HalfOpen = 2,
}

/// A reader of the breaker's state, callable from anywhere (the metrics' collector keeps one).
pub type CircuitProbe = Arc<dyn Fn() -> CircuitState + Send + Sync>;
