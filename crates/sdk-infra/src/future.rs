//! [`OpFuture`]: an operation's future held inline, so that a call through `&dyn Trait` does not
//! allocate (issue 27).
//!
//! Why not a `Pin<Box<dyn Future>>` as `async_trait` returns: that is one allocation per call.
//! Why not native `async fn` in the trait: such a trait is not dyn-compatible, and the module
//! door hands out `&dyn Cache`. So the future is written into a fixed buffer of `N` bytes inside
//! the returned value (the caller's stack, or the caller's own future), with its `poll` and
//! `drop` beside it; one that does not fit is boxed instead, which the caller is told of so it
//! can be counted. The buffer and its unsafe code are `stackfuture`'s, so that this workspace
//! keeps `unsafe_code` denied: `docs/src/contributing/inline-futures.md` says why that crate and
//! how `N` is chosen.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use stackfuture::StackFuture;

/// The buffer of a capability defined with `define_capability!` that does not choose one
/// (`future_bytes`): room for the gate's work (about 200 bytes) and a driver future of about
/// 300 bytes.
///
/// ```
/// assert_eq!(sandloom_sdk_infra::DEFAULT_FUTURE_BYTES, 512);
/// ```
pub const DEFAULT_FUTURE_BYTES: usize = 512;

/// The future of an operation, stored inline in `N` bytes, or boxed when it does not fit.
///
/// What an operation trait's methods return: callers only `.await` it. Like the future it
/// holds, it is `Send` and not `Unpin`; its output is `T`. Dropping it drops the future it
/// holds, pending or not.
///
/// ```
/// use sandloom_sdk_infra::OpFuture;
///
/// async fn twice(x: u32) -> u32 { x * 2 }
///
/// // Fits in 64 bytes: stored inline, nothing allocated.
/// let future: OpFuture<'_, u32, 64> = OpFuture::new(twice(21));
/// # let value = block_on(future);
/// # assert_eq!(value, 42);
/// # fn block_on<F: Future>(future: F) -> F::Output {
/// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// #     match std::pin::pin!(future).poll(&mut cx) {
/// #         std::task::Poll::Ready(output) => output,
/// #         std::task::Poll::Pending => unreachable!(),
/// #     }
/// # }
/// ```
#[pin_project::pin_project]
pub struct OpFuture<'a, T, const N: usize> {
    #[pin]
    inner: StackFuture<'a, T, N>,
}

impl<'a, T, const N: usize> OpFuture<'a, T, N> {
    /// The bytes a future may take to be stored inline.
    ///
    /// ```
    /// assert_eq!(sandloom_sdk_infra::OpFuture::<'_, (), 256>::CAPACITY, 256);
    /// ```
    pub const CAPACITY: usize = N;

    /// Whether a future of type `F` is stored inline: its size is at most `N` bytes and its
    /// alignment at most a pointer's. Known at compile time.
    ///
    /// ```
    /// use sandloom_sdk_infra::OpFuture;
    ///
    /// async fn small() -> u8 { 1 }
    /// fn fits<F: Future<Output = u8>>(_: &F) -> bool { OpFuture::<'_, u8, 16>::fits::<F>() }
    /// assert!(fits(&small()));
    /// assert!(!fits(&async { let buffer = [0u8; 64]; std::future::ready(()).await; buffer[1] }));
    /// ```
    pub const fn fits<F>() -> bool {
        StackFuture::<'a, T, N>::has_space_for::<F>()
            && StackFuture::<'a, T, N>::has_alignment_for::<F>()
    }

    /// `future`, inline when it [fits](Self::fits), else boxed.
    ///
    /// For test doubles and other code that need not know; the gate uses
    /// [`inline_or_box`](Self::inline_or_box), which reports a boxed future.
    ///
    /// ```
    /// use sandloom_sdk_infra::OpFuture;
    ///
    /// // Too large for 8 bytes: boxed, and it runs all the same.
    /// let future: OpFuture<'_, u8, 8> =
    ///     OpFuture::new(async { let buffer = [7u8; 64]; std::future::ready(()).await; buffer[1] });
    /// # let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    /// # assert_eq!(std::pin::pin!(future).poll(&mut cx), std::task::Poll::Ready(7));
    /// ```
    pub fn new<F>(future: F) -> Self
    where
        F: Future<Output = T> + Send + 'a,
    {
        Self::inline_or_box(future, |_| {})
    }

    /// `future`, inline when it [fits](Self::fits); else boxed, after calling `boxed` with its
    /// size and alignment, so that the caller can count the allocation and say which operation
    /// made it.
    ///
    /// ```
    /// use sandloom_sdk_infra::{Boxed, OpFuture};
    ///
    /// let mut seen = None;
    /// let _future: OpFuture<'_, u8, 16> = OpFuture::inline_or_box(
    ///     async { let buffer = [1u8; 100]; std::future::ready(()).await; buffer[99] },
    ///     |boxed: Boxed| seen = Some(boxed),
    /// );
    /// let boxed = seen.expect("100 bytes do not fit in 16");
    /// assert!(boxed.size() > 100);
    /// assert_eq!(boxed.capacity(), 16);
    /// ```
    pub fn inline_or_box<F>(future: F, boxed: impl FnOnce(Boxed)) -> Self
    where
        F: Future<Output = T> + Send + 'a,
    {
        let inner = if Self::fits::<F>() {
            // Never boxes: the future fits (`from` would be the same, but is checked for every
            // `F` the function is compiled for, the ones that take the other branch included).
            StackFuture::from_or_box(future)
        } else {
            boxed(Boxed {
                size: size_of::<F>(),
                align: align_of::<F>(),
                capacity: N,
            });
            // A `Pin<Box<F>>` is one pointer: it fits any buffer of 8 bytes or more.
            StackFuture::from(Box::pin(future))
        };
        Self { inner }
    }
}

impl<T, const N: usize> Future for OpFuture<'_, T, N> {
    type Output = T;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        self.project().inner.poll(cx)
    }
}

impl<T, const N: usize> fmt::Debug for OpFuture<'_, T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpFuture").field("capacity", &N).finish()
    }
}

/// A future that did not fit its [`OpFuture`]'s buffer, and was boxed: what
/// [`OpFuture::inline_or_box`] reports.
///
/// ```
/// use sandloom_sdk_infra::{Boxed, OpFuture};
///
/// let mut seen = None;
/// let _ = OpFuture::<'_, u8, 32>::inline_or_box(async { let b = [0u8; 64]; std::future::ready(()).await; b[0] }, |b| seen = Some(b));
/// let boxed: Boxed = seen.unwrap();
/// assert_eq!(
///     boxed.to_string(),
///     format!("a future of {} bytes (alignment {}) does not fit in 32 bytes", boxed.size(), boxed.align())
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Boxed {
    size: usize,
    align: usize,
    capacity: usize,
}

impl Boxed {
    /// The future's size in bytes.
    ///
    /// ```
    /// # use sandloom_sdk_infra::OpFuture;
    /// # let mut seen = None;
    /// # let _ = OpFuture::<'_, u8, 32>::inline_or_box(async { let b = [0u8; 64]; std::future::ready(()).await; b[0] }, |b| seen = Some(b));
    /// assert!(seen.unwrap().size() >= 64);
    /// ```
    pub fn size(&self) -> usize {
        self.size
    }

    /// The future's alignment in bytes: more than a pointer's never fits inline.
    ///
    /// ```
    /// # use sandloom_sdk_infra::OpFuture;
    /// # let mut seen = None;
    /// # let _ = OpFuture::<'_, u8, 32>::inline_or_box(async { let b = [0u8; 64]; std::future::ready(()).await; b[0] }, |b| seen = Some(b));
    /// assert_eq!(seen.unwrap().align(), 1);
    /// ```
    pub fn align(&self) -> usize {
        self.align
    }

    /// The bytes the buffer has (`N`).
    ///
    /// ```
    /// # use sandloom_sdk_infra::OpFuture;
    /// # let mut seen = None;
    /// # let _ = OpFuture::<'_, u8, 32>::inline_or_box(async { let b = [0u8; 64]; std::future::ready(()).await; b[0] }, |b| seen = Some(b));
    /// assert_eq!(seen.unwrap().capacity(), 32);
    /// ```
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

impl fmt::Display for Boxed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a future of {} bytes (alignment {}) does not fit in {} bytes",
            self.size, self.align, self.capacity
        )
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Waker;

    use super::*;

    /// Counts its drops.
    struct Dropped(Arc<AtomicUsize>);

    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Pending once, then ready.
    struct Yield(bool);

    impl Future for Yield {
        type Output = ();
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.0 {
                Poll::Ready(())
            } else {
                self.0 = true;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }
    }

    fn poll_once<F: Future>(future: Pin<&mut F>) -> Poll<F::Output> {
        future.poll(&mut Context::from_waker(Waker::noop()))
    }

    fn assert_send<T: Send>(_: &T) {}

    #[test]
    fn an_inline_future_runs_across_a_suspension_and_is_send() {
        let future: OpFuture<'_, u32, 128> = OpFuture::new(async {
            let local = [3u32; 4];
            Yield(false).await;
            local.iter().sum()
        });
        assert_send(&future);
        let mut future = std::pin::pin!(future);
        assert_eq!(poll_once(future.as_mut()), Poll::Pending);
        assert_eq!(poll_once(future.as_mut()), Poll::Ready(12));
    }

    #[test]
    fn a_future_that_does_not_fit_is_boxed_reported_and_runs() {
        let mut reported = Vec::new();
        let future: OpFuture<'_, u8, 16> = OpFuture::inline_or_box(
            async {
                let buffer = [5u8; 200];
                Yield(false).await;
                buffer[199]
            },
            |boxed| reported.push(boxed),
        );
        assert_eq!(reported.len(), 1);
        assert!(reported[0].size() >= 200, "{}", reported[0]);
        let mut future = std::pin::pin!(future);
        assert_eq!(poll_once(future.as_mut()), Poll::Pending);
        assert_eq!(poll_once(future.as_mut()), Poll::Ready(5));
    }

    #[test]
    fn a_future_that_fits_is_not_reported() {
        let mut reported = 0;
        let _future: OpFuture<'_, u8, 64> = OpFuture::inline_or_box(async { 1 }, |_| reported += 1);
        assert_eq!(reported, 0);
    }

    #[test]
    fn dropping_a_pending_future_drops_what_it_holds_inline_or_boxed() {
        for capacity_fits in [true, false] {
            let drops = Arc::new(AtomicUsize::new(0));
            let held = Dropped(Arc::clone(&drops));
            let body = async move {
                let _held = held;
                let padding = [0u8; 100];
                Yield(false).await;
                padding[0]
            };
            let mut boxed = false;
            {
                let mut future = if capacity_fits {
                    Box::pin(OpFuture::<'_, u8, 512>::inline_or_box(body, |_| {
                        boxed = true;
                    }))
                } else {
                    Box::pin(OpFuture::<'_, u8, 512>::inline_or_box(
                        async move {
                            let big = [0u8; 1024];
                            body.await + big[0]
                        },
                        |_| {
                            boxed = true;
                        },
                    ))
                };
                assert_eq!(poll_once(future.as_mut()), Poll::Pending);
                assert_eq!(drops.load(Ordering::SeqCst), 0);
            }
            assert_eq!(boxed, !capacity_fits);
            assert_eq!(drops.load(Ordering::SeqCst), 1, "fits: {capacity_fits}");
        }
    }

    #[test]
    fn a_future_aligned_beyond_a_pointer_is_boxed_not_misaligned() {
        #[repr(align(64))]
        struct Wide(u8);

        let mut reported = None;
        let future: OpFuture<'_, u8, 1024> = OpFuture::inline_or_box(
            async {
                let wide = Wide(9);
                Yield(false).await;
                std::hint::black_box(&wide).0
            },
            |boxed| reported = Some(boxed),
        );
        let boxed = reported.expect("alignment 64 is more than the buffer's");
        assert_eq!(boxed.align(), 64);
        let mut future = std::pin::pin!(future);
        assert_eq!(poll_once(future.as_mut()), Poll::Pending);
        assert_eq!(poll_once(future.as_mut()), Poll::Ready(9));
    }

    #[test]
    fn a_future_borrowing_its_caller_s_data_runs() {
        let text = String::from("borrowed");
        let future: OpFuture<'_, usize, 64> = OpFuture::new(async {
            Yield(false).await;
            text.len()
        });
        let mut future = std::pin::pin!(future);
        assert_eq!(poll_once(future.as_mut()), Poll::Pending);
        assert_eq!(poll_once(future.as_mut()), Poll::Ready(8));
    }
}
