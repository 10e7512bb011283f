//! `OpFuture` allocates nothing for a future that fits, and exactly one box for one that does
//! not: counted by this binary's global allocator.

use std::alloc::System;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use sandloom_sdk_infra::OpFuture;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

// Counts every thread's allocations: this binary has one test, so nothing else runs meanwhile.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn allocations_of(f: impl FnOnce()) -> usize {
    let region = Region::new(GLOBAL);
    f();
    let change = region.change();
    change.allocations + change.reallocations
}

/// Pending once, then ready.
struct Yield(bool);

impl Future for Yield {
    type Output = ();
    fn poll(mut self: std::pin::Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            Poll::Pending
        }
    }
}

fn run<F: Future>(future: F) -> F::Output {
    let mut cx = Context::from_waker(Waker::noop());
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

async fn with_state(seed: u8) -> u8 {
    let state = [seed; 96];
    Yield(false).await;
    state[95]
}

#[test]
fn a_future_that_fits_allocates_nothing_one_that_does_not_allocates_once() {
    let inline = allocations_of(|| {
        let future: OpFuture<'_, u8, 256> = OpFuture::new(with_state(4));
        assert_eq!(run(future), 4);
    });
    assert_eq!(inline, 0, "a future of at most 256 bytes is held inline");

    let mut reported = 0;
    let boxed = allocations_of(|| {
        let future: OpFuture<'_, u8, 32> =
            OpFuture::inline_or_box(with_state(5), |_| reported += 1);
        assert_eq!(run(future), 5);
    });
    assert_eq!(boxed, 1, "a future of more than 32 bytes is boxed, once");
    assert_eq!(reported, 1);
}
