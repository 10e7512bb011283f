//! Ports for servers a test starts itself.

use std::net::TcpListener;
use std::sync::atomic::{AtomicU16, Ordering};

/// Ports handed out by this process so far, so that two tests never get the same one.
static HANDED_OUT: AtomicU16 = AtomicU16::new(0);

/// A loopback port nothing listens on right now, for a server process the test starts on it
/// (`redis-server --port`, `aiosmtpd -l`); distinct within the process.
///
/// Not an ephemeral port (binding port 0 and closing it): between that and the server binding
/// the port, another test binding port 0 could be given the same one, and the server's test
/// would then talk to that test's listener (seen as "connection reset by peer" at start). And a
/// client connecting to an ephemeral port nobody listens on can be given that very port as its
/// own and connect to itself. So the ports come from below Linux's ephemeral range (32768 and
/// up), each once per process.
///
/// ```
/// let (a, b) = (sandloom_test_support::free_port(), sandloom_test_support::free_port());
/// assert_ne!(a, b);
/// assert!((20_000..32_000).contains(&a));
/// // Free: a listener can take it.
/// std::net::TcpListener::bind(("127.0.0.1", a)).unwrap();
/// ```
///
/// # Panics
///
/// When all 12,000 ports of the span were handed out or taken.
pub fn free_port() -> u16 {
    const FIRST: u16 = 20_000;
    const SPAN: u16 = 12_000;
    loop {
        let turn = HANDED_OUT.fetch_add(1, Ordering::Relaxed);
        assert!(
            turn < SPAN,
            "no free port left between {FIRST} and {}",
            FIRST + SPAN
        );
        // A per-process start, then a stride coprime with SPAN: every port once, in u32 so
        // that nothing overflows.
        let step = (std::process::id() + u32::from(turn) * 7) % u32::from(SPAN);
        let port = FIRST + u16::try_from(step).expect("below SPAN");
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}
