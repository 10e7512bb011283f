//! Waiting `reserve`s of one instance, by queue.
//!
//! An enqueue makes one task ready, which one worker can take: it wakes one waiter of its own
//! queue. Waking every waiter of every queue (one `Notify` for the instance) sent all of them
//! to the server for a task that only one of them could reserve, a round trip each, which grew
//! with the number of workers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Notify;

/// The waiters of an instance, one [`Notify`] per queue that has any.
#[derive(Debug, Default)]
pub(crate) struct Wakers {
    queues: Mutex<HashMap<String, Arc<Notify>>>,
}

impl Wakers {
    /// Registers a waiter of `queue` for as long as the guard lives.
    pub(crate) fn waiting(&self, queue: &str) -> Waiting<'_> {
        let mut queues = self.queues.lock().unwrap_or_else(PoisonError::into_inner);
        let notify = if let Some(notify) = queues.get(queue) {
            Arc::clone(notify)
        } else {
            let notify = Arc::new(Notify::new());
            queues.insert(queue.to_owned(), Arc::clone(&notify));
            notify
        };
        Waiting {
            wakers: self,
            queue: queue.to_owned(),
            notify,
        }
    }

    /// Wakes one waiter of `queue`, or the next one to wait while a waiter is registered.
    ///
    /// `notify_one` keeps the wake for the next `notified()` when no future is waiting (the
    /// waiter is between two looks), and a waiter that is dropped after being chosen passes
    /// the wake on (tokio's `Notified` does both), so no ready task waits for a poll.
    pub(crate) fn wake_one(&self, queue: &str) {
        let queues = self.queues.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(notify) = queues.get(queue) {
            notify.notify_one();
        }
    }

    /// Wakes every waiter of every queue (the instance stops).
    pub(crate) fn wake_all(&self) {
        let queues = self.queues.lock().unwrap_or_else(PoisonError::into_inner);
        for notify in queues.values() {
            notify.notify_waiters();
        }
    }

    #[cfg(test)]
    fn queues(&self) -> usize {
        self.queues
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// One waiter of one queue; the queue's entry goes when its last waiter does.
#[derive(Debug)]
pub(crate) struct Waiting<'a> {
    wakers: &'a Wakers,
    queue: String,
    notify: Arc<Notify>,
}

impl Waiting<'_> {
    /// The queue's [`Notify`], to register (`notified()` + `enable()`) before each look.
    pub(crate) fn notify(&self) -> &Notify {
        &self.notify
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let mut queues = self
            .wakers
            .queues
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // The map's reference and ours: no other waiter of this queue is left.
        if Arc::strong_count(&self.notify) == 2 {
            queues.remove(&self.queue);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::{Pin, pin};
    use std::task::{Context, Poll, Waker};

    use tokio::sync::futures::Notified;

    use super::Wakers;

    fn ready(notified: Pin<&mut Notified<'_>>) -> bool {
        let mut context = Context::from_waker(Waker::noop());
        matches!(notified.poll(&mut context), Poll::Ready(()))
    }

    #[test]
    fn an_enqueue_wakes_one_waiter_of_its_own_queue() {
        let wakers = Wakers::default();
        let a = [
            wakers.waiting("a"),
            wakers.waiting("a"),
            wakers.waiting("a"),
        ];
        let b = wakers.waiting("b");
        let mut a0 = pin!(a[0].notify().notified());
        let mut a1 = pin!(a[1].notify().notified());
        let mut a2 = pin!(a[2].notify().notified());
        let mut b0 = pin!(b.notify().notified());
        for notified in [a0.as_mut(), a1.as_mut(), a2.as_mut(), b0.as_mut()] {
            notified.enable();
        }

        wakers.wake_one("a");

        let woken = [ready(a0.as_mut()), ready(a1.as_mut()), ready(a2.as_mut())];
        assert_eq!(woken.iter().filter(|woken| **woken).count(), 1, "{woken:?}");
        assert!(!ready(b0.as_mut()), "a waiter of another queue woke");
        wakers.wake_one("c"); // nobody waits on it: nothing to wake, nothing kept
        assert_eq!(wakers.queues(), 2);
    }

    #[test]
    fn a_wake_between_two_looks_is_kept_for_the_next() {
        let wakers = Wakers::default();
        let waiting = wakers.waiting("a");
        wakers.wake_one("a"); // no future registered yet
        let mut notified = pin!(waiting.notify().notified());
        assert!(ready(notified.as_mut()));
    }

    #[test]
    fn a_chosen_waiter_that_goes_away_passes_the_wake_on() {
        let wakers = Wakers::default();
        let first = wakers.waiting("a");
        let second = wakers.waiting("a");
        let mut later = pin!(second.notify().notified());
        {
            let mut chosen = pin!(first.notify().notified());
            chosen.as_mut().enable();
            later.as_mut().enable();
            wakers.wake_one("a"); // the first registered is chosen, then found a task itself
        }
        assert!(ready(later.as_mut()));
    }

    #[test]
    fn stopping_wakes_every_waiter_and_the_last_waiter_takes_its_queue_away() {
        let wakers = Wakers::default();
        let a = wakers.waiting("a");
        let b = wakers.waiting("b");
        {
            let mut a0 = pin!(a.notify().notified());
            let mut b0 = pin!(b.notify().notified());
            a0.as_mut().enable();
            b0.as_mut().enable();

            wakers.wake_all();

            assert!(ready(a0.as_mut()) && ready(b0.as_mut()));
        }
        let again = wakers.waiting("a");
        drop(a);
        assert_eq!(wakers.queues(), 2, "a waiter of `a` is still there");
        drop((again, b));
        assert_eq!(wakers.queues(), 0);
    }
}
