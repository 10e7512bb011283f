//! Operations in flight, counted so that shutdown can let them finish, and refused once it has
//! begun — at a cost an operation does not notice.
//!
//! Each thread owns one slot of a gate's counter and changes it with a plain load and store (no
//! read-modify-write, no lock, no cache line shared with another thread), so the count costs
//! about a nanosecond and scales across threads. An operation raises its thread's slot and then
//! reads the `draining` flag; shutdown sets the flag and then sums the slots. That is Dekker's
//! pattern, which needs a full fence between the store and the load on both sides; the
//! operation's side gets it from the `membarrier` system call that shutdown makes (an
//! asymmetric fence, as in Linux's RCU and folly), so the frequent side pays nothing. Where
//! `membarrier` is not available, operations fence themselves (`SeqCst`).
//!
//! An operation that has to wait (its future returned `Pending`) also registers its waker, so
//! that the drain can wake it: when the drain begins (an operation declared `#[waits]` is then
//! cut), and when its budget ends (every operation still pending then answers `Stopped`). An
//! operation that completes without suspending never registers. The wakers are kept in a tokio
//! `Notify` per shard of threads: an intrusive list (the entry lives in the operation's own
//! future, so nothing is allocated), under a mutex only the threads of one shard share. The
//! shards are allocated by the first operation that waits: a gate whose operations never wait
//! (most instances of the embedded drivers) neither allocates them nor wakes them at shutdown.
//! The slots too are allocated by the first operation (8 KiB, which is most of what making a
//! gate would cost otherwise), the slot shared by the threads beyond the owned ones with them:
//! an instance that is started and stopped without serving, or a gate built only to be
//! replaced, allocates none, and the gate itself needs no cache-line alignment.
//!
//! A drain begins once: shutdown begins it, and the stop that follows begins it again (as
//! every stop does, for the instances no drain came before); only the first does the work.
//!
//! The `membarrier` of a drain is made by the first count read after its flag was stored, not
//! when the flag is stored, so that one call serves every drain begun before it: shutdown
//! begins the drains of all its instances and then reads their counts, and made one system
//! call per instance (about 2 µs each, the largest cost of a start+shutdown that instruction
//! counts do not show; `BENCHMARKS.md`, issue 27). What Dekker's pattern needs still holds:
//! the drain's side has a full fence between its flag store and its count read, since the
//! read's fence comes after the store (the flag store happens before the `membarrier` call
//! that covers it: its epoch is published after the store, and read before the call).
//!
//! A drain that finds no slots (no operation ever entered: an instance started and stopped
//! without serving, as in a failed start or a quick restart) needs no fence at all: it seals
//! the slots, making their one-time initialisation its own, and an operation that comes later
//! finds them sealed and is refused. Initialisation is decided once, so an operation either
//! allocated the slots before the seal (and the drain reads them, with the fence) or finds the
//! seal: no ordering argument is needed, and shutdown makes no system call for that instance.

use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicU64, AtomicUsize, Ordering, fence};
use std::sync::{Mutex, Once, OnceLock, PoisonError};

use tokio::sync::Notify;
use tokio::sync::futures::Notified;

/// Threads beyond this many share one slot through read-modify-writes.
const OWNED_SLOTS: usize = 64;

/// One cache line per slot, so two threads never write the same line.
#[repr(align(128))]
#[derive(Default)]
struct Slot(AtomicIsize);

/// Threads share this many lists of waiting operations: few enough to wake quickly, enough
/// that threads seldom meet on one list's mutex.
const WAITER_SHARDS: usize = 16;

/// One shard's waiting operations, on a cache line of its own.
#[repr(align(128))]
#[derive(Default)]
struct Waiters(Notify);

/// The in-flight count of one gate, and whether it is draining.
///
/// Nothing in it is aligned to a cache line (the slots are, in their own allocation): a gate
/// that held one needed an aligned allocation (`posix_memalign`), which cost every instance
/// more than the rest of its gate at every start (`BENCHMARKS.md`, issue 27).
pub(crate) struct Drain {
    /// Allocated by the first operation; see the module's documentation. One per thread of the
    /// first [`OWNED_SLOTS`], and after them the slot the other threads share. `None` once a
    /// drain sealed them before any operation entered.
    slots: OnceLock<Option<Box<[Slot]>>>,
    draining: AtomicBool,
    /// The drain's budget ended: operations still pending answer `Stopped`.
    abandoned: AtomicBool,
    /// The work of [`begin`](Self::begin), done once.
    begun: Once,
    /// This drain's place among the flags stored in the process (`FLAGGED`), set by `begin`
    /// when fences are asymmetric; 0 before. A count read fences unless `FENCED` covers it.
    flag_epoch: AtomicU64,
    /// Allocated by the first [`waiter`](Self::waiter).
    waiters: OnceLock<Box<[Waiters]>>,
}

/// Proof that an operation was counted in; counts it out when dropped (also when the
/// operation's future is dropped before it finishes).
pub(crate) struct InFlight<'a> {
    slots: &'a [Slot],
}

impl Drain {
    pub(crate) fn new() -> Self {
        // Decide once, before any operation, whether operations may skip their fence.
        ASYMMETRIC.store(asymmetric_fences(), Ordering::Relaxed);
        Self {
            slots: OnceLock::new(),
            draining: AtomicBool::new(false),
            abandoned: AtomicBool::new(false),
            begun: Once::new(),
            flag_epoch: AtomicU64::new(0),
            waiters: OnceLock::new(),
        }
    }

    /// Count an operation in, or `None` when shutdown has begun.
    #[inline]
    pub(crate) fn enter(&self) -> Option<InFlight<'_>> {
        // Sealed: a drain began before any operation entered.
        let slots = self
            .slots
            .get_or_init(|| Some((0..=OWNED_SLOTS).map(|_| Slot::default()).collect()))
            .as_deref()?;
        add(slots, 1);
        if ASYMMETRIC.load(Ordering::Relaxed) {
            std::sync::atomic::compiler_fence(Ordering::SeqCst);
        } else {
            fence(Ordering::SeqCst);
        }
        if self.draining.load(Ordering::Relaxed) {
            add(slots, -1);
            return None;
        }
        Some(InFlight { slots })
    }

    /// Refuse new operations from now on. Only the first call does anything; a call made
    /// while another is under way returns when that one has ended, so that every caller may
    /// read [`in_flight`](Self::in_flight) after it.
    pub(crate) fn begin(&self) {
        self.begun.call_once(|| {
            self.draining.store(true, Ordering::SeqCst);
            if asymmetric_fences() {
                // The heavy fence that makes every thread run a full fence (an operation that
                // raised its slot before it is seen by `in_flight`, one that did not sees
                // `draining`) is left to the first count read, so drains begun together share
                // it (see the module's documentation). After the flag: its epoch says so.
                let epoch = FLAGGED.fetch_add(1, Ordering::SeqCst) + 1;
                self.flag_epoch.store(epoch, Ordering::Release);
            }
            // After the flag: a waiter registered before this sees the wake, one registered
            // after sees the flag (see `waiter`).
            self.wake_all();
        });
    }

    /// The budget of the drain is spent: every operation still pending answers `Stopped`.
    pub(crate) fn abandon(&self) {
        self.abandoned.store(true, Ordering::SeqCst);
        self.wake_all();
    }

    /// Whether the drain has begun. Read after [`waiter`](Self::waiter) was made, so that a
    /// drain it does not see wakes that waiter.
    pub(crate) fn draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// Whether the drain's budget is spent; read as [`draining`](Self::draining).
    pub(crate) fn abandoned(&self) -> bool {
        self.abandoned.load(Ordering::SeqCst)
    }

    /// A wake-up for a pending operation: ready at the next `begin` or `abandon`. It counts
    /// the wakes from the moment it is made, even before it is first polled (`Notify`'s
    /// `notify_waiters` semantics), so the flags are read after making it: a drain that
    /// begins after the read wakes it, one that began before is seen in the flags.
    pub(crate) fn waiter(&self) -> Notified<'_> {
        let waiters = self
            .waiters
            .get_or_init(|| (0..WAITER_SHARDS).map(|_| Waiters::default()).collect());
        // Pairs with the fence in `wake_all`: either that one sees the shards allocated here,
        // or the flags read after this (by the caller) see what was stored before it.
        fence(Ordering::SeqCst);
        let shard = thread_index() % WAITER_SHARDS;
        waiters[shard].0.notified()
    }

    fn wake_all(&self) {
        // After the flag was stored; see `waiter`.
        fence(Ordering::SeqCst);
        // No shards: no operation has ever waited, and any that waits from now on sees the flag.
        let Some(waiters) = self.waiters.get() else {
            return;
        };
        for waiters in waiters {
            waiters.0.notify_waiters();
        }
    }

    /// Operations counted in and not yet out.
    pub(crate) fn in_flight(&self) -> usize {
        let slots = if self.draining.load(Ordering::SeqCst) {
            // No operation entered before the seal, and none can after it (module docs).
            self.slots.get_or_init(|| None)
        } else {
            // Not draining: nothing to seal, and a count read before the drain is only a
            // snapshot (`fence_after_flag` has no flag to fence after).
            match self.slots.get() {
                Some(slots) => slots,
                None => return 0,
            }
        };
        let Some(slots) = slots else {
            return 0;
        };
        self.fence_after_flag();
        let total: isize = slots
            .iter()
            .map(|slot| slot.0.load(Ordering::Acquire))
            .sum();
        usize::try_from(total).unwrap_or(0)
    }

    /// Once this drain has begun, make sure a heavy fence was made after its flag was stored
    /// and before the counts are read: the first read after `begin` makes one (covering every
    /// flag stored so far in the process), later ones find it made.
    fn fence_after_flag(&self) {
        let mine = self.flag_epoch.load(Ordering::Acquire);
        if mine == 0 || FENCED.load(Ordering::Acquire) >= mine {
            return;
        }
        // Every flag whose epoch is read here was stored before this call.
        let covered = FLAGGED.load(Ordering::SeqCst);
        #[cfg(test)]
        tests::HEAVY_FENCES.with(|made| made.set(made.get() + 1));
        heavy_fence();
        FENCED.fetch_max(covered, Ordering::Release);
    }
}

/// Change this thread's slot among `slots` by `delta`.
#[inline]
fn add(slots: &[Slot], delta: isize) {
    let index = thread_index();
    if index < OWNED_SLOTS {
        // Only this thread writes its slot: a plain load and store cannot lose an update.
        let slot = &slots[index];
        let value = slot.0.load(Ordering::Relaxed);
        slot.0.store(value + delta, Ordering::Release);
    } else {
        // The shared slot, last.
        slots[OWNED_SLOTS].0.fetch_add(delta, Ordering::AcqRel);
    }
}

impl Drop for InFlight<'_> {
    #[inline]
    fn drop(&mut self) {
        add(self.slots, -1);
    }
}

/// This thread's index among the threads now running operations, from 0. An index is handed
/// back when its thread ends and given to the next new thread, so a process that keeps
/// replacing threads (a blocking pool, a benchmark) stays within the owned slots.
#[inline]
fn thread_index() -> usize {
    thread_local! {
        static INDEX: ThreadIndex = ThreadIndex::take();
    }
    INDEX.with(|index| index.0)
}

/// Indices of threads that ended, for the next ones; `NEXT` when there is none.
static FREE: Mutex<Vec<usize>> = Mutex::new(Vec::new());
static NEXT: AtomicUsize = AtomicUsize::new(0);

struct ThreadIndex(usize);

impl ThreadIndex {
    fn take() -> Self {
        // The lock orders the previous owner's last store to the slot before this thread's
        // first load of it: a slot is only ever written by one thread at a time.
        let reused = FREE.lock().unwrap_or_else(PoisonError::into_inner).pop();
        Self(reused.unwrap_or_else(|| NEXT.fetch_add(1, Ordering::Relaxed)))
    }
}

impl Drop for ThreadIndex {
    fn drop(&mut self) {
        FREE.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(self.0);
    }
}

/// [`asymmetric_fences`], read by operations without going through its `OnceLock`.
static ASYMMETRIC: AtomicBool = AtomicBool::new(false);

/// Drains whose flag was stored, in the process: each takes the next epoch after its store.
static FLAGGED: AtomicU64 = AtomicU64::new(0);
/// The highest epoch a heavy fence was made after: every drain up to it needs no other.
static FENCED: AtomicU64 = AtomicU64::new(0);

/// Whether this process registered for expedited `membarrier`, so operations may skip their
/// own fence. Decided once.
#[inline]
fn asymmetric_fences() -> bool {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    *REGISTERED.get_or_init(register_membarrier)
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn register_membarrier() -> bool {
    use rustix::thread::{MembarrierCommand, membarrier, membarrier_query};
    membarrier_query().contains_command(MembarrierCommand::RegisterPrivateExpedited)
        && membarrier(MembarrierCommand::RegisterPrivateExpedited).is_ok()
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn register_membarrier() -> bool {
    false
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn heavy_fence() {
    use rustix::thread::{MembarrierCommand, membarrier};
    if membarrier(MembarrierCommand::PrivateExpedited).is_err() {
        // Registered but refused: cannot happen per the kernel's documentation; a full fence
        // here is the best left to do, and operations' compiler fences then leave a window no
        // longer than one store.
        fence(Ordering::SeqCst);
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn heavy_fence() {}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::sync::Arc;

    use super::Drain;

    thread_local! {
        /// Heavy fences this thread made (other tests' threads fence too: counted apart).
        pub(super) static HEAVY_FENCES: Cell<usize> = const { Cell::new(0) };
    }

    #[test]
    fn operations_are_counted_in_and_out() {
        let drain = Drain::new();
        let first = drain.enter().unwrap();
        let second = drain.enter().unwrap();
        assert_eq!(drain.in_flight(), 2);
        drop(first);
        assert_eq!(drain.in_flight(), 1);
        drop(second);
        assert_eq!(drain.in_flight(), 0);
    }

    #[test]
    fn once_draining_no_operation_enters_and_the_count_is_kept() {
        let drain = Drain::new();
        let running = drain.enter().unwrap();
        drain.begin();
        assert!(drain.enter().is_none());
        assert_eq!(drain.in_flight(), 1);
        drop(running);
        assert_eq!(drain.in_flight(), 0);
    }

    /// Many threads (more than the owned slots, so the shared one is used too) counting in and
    /// out, some finishing on another thread than the one they began on: the sum stays exact.
    #[test]
    fn counts_stay_exact_across_many_threads() {
        let drain = Arc::new(Drain::new());
        let handles: Vec<_> = (0..80)
            .map(|_| {
                let drain = Arc::clone(&drain);
                std::thread::spawn(move || {
                    for _ in 0..2_000 {
                        let guard = drain.enter().unwrap();
                        drop(guard);
                    }
                    // Counted in here, out on another thread.
                    std::mem::forget(drain.enter().unwrap());
                })
            })
            .collect();
        for handle in handles {
            handle.join().unwrap();
        }
        assert_eq!(drain.in_flight(), 80);
        let other = Arc::clone(&drain);
        std::thread::spawn(move || {
            let slots = other.slots.get().unwrap().as_deref().unwrap();
            for _ in 0..80 {
                super::add(slots, -1);
            }
        })
        .join()
        .unwrap();
        assert_eq!(drain.in_flight(), 0);
    }

    /// Threads that come and go one after another (a blocking pool, a benchmark spawning its
    /// threads) reuse the indices of those that ended, so they keep owned slots.
    #[test]
    fn threads_that_end_hand_their_slot_on() {
        let drain = Arc::new(Drain::new());
        for _ in 0..300 {
            let drain = Arc::clone(&drain);
            std::thread::spawn(move || std::mem::forget(drain.enter().unwrap()))
                .join()
                .unwrap();
        }
        assert_eq!(drain.in_flight(), 300);
        assert_eq!(
            drain.slots.get().unwrap().as_deref().unwrap()[super::OWNED_SLOTS]
                .0
                .load(std::sync::atomic::Ordering::Acquire),
            0,
            "a thread past the owned slots used the shared one"
        );
    }

    /// The slots are allocated by the first operation; a drain that no operation entered
    /// begins, counts nothing in flight, allocates nothing and makes no heavy fence: it seals
    /// the slots, and an operation that comes after is refused.
    #[test]
    fn slots_are_allocated_by_the_first_operation() {
        let idle = Drain::new();
        idle.begin();
        assert_eq!(idle.in_flight(), 0);
        assert!(
            matches!(idle.slots.get(), Some(None)),
            "sealed, not allocated"
        );
        assert_eq!(
            idle.flag_epoch.load(std::sync::atomic::Ordering::Acquire) > 0,
            super::asymmetric_fences()
        );
        assert!(
            idle.enter().is_none(),
            "an operation after the seal is refused"
        );
        assert_eq!(idle.in_flight(), 0);
        assert_eq!(HEAVY_FENCES.get(), 0, "a sealed drain makes no heavy fence");
        let drain = Drain::new();
        assert_eq!(drain.in_flight(), 0, "a count read before any drain");
        assert!(
            drain.slots.get().is_none(),
            "neither allocated nor sealed by that read"
        );
        let first = drain.enter().unwrap();
        assert!(matches!(drain.slots.get(), Some(Some(_))));
        assert_eq!(drain.in_flight(), 1);
        drop(first);
        assert_eq!(drain.in_flight(), 0);
    }

    /// Beginning twice changes nothing: the second call neither fails nor counts anything again.
    #[test]
    fn a_drain_begins_once() {
        let drain = Drain::new();
        let running = drain.enter().unwrap();
        drain.begin();
        drain.begin();
        assert!(drain.draining());
        assert!(drain.enter().is_none());
        assert_eq!(drain.in_flight(), 1);
        drop(running);
        assert_eq!(drain.in_flight(), 0);
    }

    /// The waiter shards are allocated by the first waiter, and a drain that begins after it
    /// wakes it; one made after the drain began sees the flag instead.
    #[test]
    fn waiters_are_allocated_by_the_first_and_still_woken() {
        use std::future::Future;
        use std::pin::pin;
        use std::task::{Context, Poll, Waker};

        let drain = Drain::new();
        assert!(drain.waiters.get().is_none(), "allocated before any waiter");
        let mut before = pin!(drain.waiter());
        assert!(drain.waiters.get().is_some());
        let mut context = Context::from_waker(Waker::noop());
        assert!(before.as_mut().poll(&mut context).is_pending());
        assert!(!drain.draining());
        drain.begin();
        assert_eq!(before.as_mut().poll(&mut context), Poll::Ready(()));
        // Made after the drain began: the flag says so, as `waiter`'s contract requires.
        let _after = drain.waiter();
        assert!(drain.draining());
    }

    /// A drain with no waiter ever made begins, and is abandoned, without allocating shards.
    #[test]
    fn a_drain_without_waiters_allocates_none() {
        let drain = Drain::new();
        drain.begin();
        drain.abandon();
        assert!(drain.waiters.get().is_none());
        assert!(drain.abandoned());
    }

    /// An operation racing the start of a drain either is refused or is counted: never both
    /// missed (which would let shutdown stop the driver under it).
    #[test]
    fn no_operation_slips_past_the_start_of_a_drain() {
        for _ in 0..200 {
            let drain = Arc::new(Drain::new());
            let racer = {
                let drain = Arc::clone(&drain);
                std::thread::spawn(move || drain.enter().map(std::mem::forget).is_some())
            };
            drain.begin();
            let counted_at_drain = drain.in_flight();
            let entered = racer.join().unwrap();
            // If it entered, it was either seen by `in_flight` right after `begin`, or it
            // entered before `begin` and is still counted now.
            assert_eq!(drain.in_flight(), usize::from(entered));
            assert!(counted_at_drain <= usize::from(entered));
        }
    }

    /// Shutdown begins every instance's drain, then reads their counts: the first read makes
    /// the one heavy fence (`membarrier`) that all of them need, the others find it made.
    #[test]
    fn drains_begun_together_share_one_heavy_fence() {
        use std::sync::atomic::Ordering;

        use super::{FENCED, asymmetric_fences};

        let drains = [Drain::new(), Drain::new(), Drain::new()];
        for drain in &drains {
            // One that an operation entered: a drain that no operation entered needs no fence.
            drop(drain.enter());
            drain.begin();
        }
        let epochs = drains
            .each_ref()
            .map(|drain| drain.flag_epoch.load(Ordering::Acquire));
        if !asymmetric_fences() {
            // No `membarrier` here: operations fence themselves and a drain defers nothing.
            assert_eq!(epochs, [0, 0, 0]);
            return;
        }
        assert!(epochs[0] > 0 && epochs[0] < epochs[1] && epochs[1] < epochs[2]);
        // Other tests' drains may fence meanwhile: `FENCED` only grows, so "not yet covered"
        // cannot be asserted before the read, only "covered" after it.
        assert_eq!(drains[0].in_flight(), 0);
        // At most one: another test's fence made after these drains began covers them too.
        let made = HEAVY_FENCES.get();
        assert!(
            made <= 1,
            "the first read makes the fence, if none covers it yet"
        );
        assert!(
            FENCED.load(Ordering::Acquire) >= epochs[2],
            "the first read's fence covers the drains begun before it"
        );
        assert_eq!(drains[1].in_flight() + drains[2].in_flight(), 0);
        assert_eq!(HEAVY_FENCES.get(), made, "the others find it made");
    }
}
