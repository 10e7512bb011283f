//! Workers that are Tokio tasks: for a queue that processes cannot share.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use sandloom_driverkit::taskqueue::TaskQueue;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::worker::run;
use crate::pool::{Control, Event, Orders, Point, Pool};

/// Workers that are Tokio tasks of this process, sharing one queue: for a queue that processes
/// cannot share (the memory queue). A kill aborts the task: it stops at its next `.await`,
/// dropping whatever it held, without acking or nacking — the closest a single process gets to
/// `SIGKILL`. Unlike a process, an aborted task cannot die in the middle of a synchronous
/// step, and the queue itself never dies.
pub struct TaskPool {
    queue: Arc<dyn TaskQueue>,
    tasks: HashMap<usize, (tokio::task::AbortHandle, Arc<Control>, Arc<AtomicBool>)>,
    tx: UnboundedSender<(usize, Event)>,
    rx: UnboundedReceiver<(usize, Event)>,
}

impl fmt::Debug for TaskPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskPool")
            .field("tasks", &self.tasks.len())
            .finish_non_exhaustive()
    }
}

impl TaskPool {
    /// A pool of tasks working on `queue`.
    pub fn new(queue: Arc<dyn TaskQueue>) -> TaskPool {
        let (tx, rx) = unbounded_channel();
        TaskPool {
            queue,
            tasks: HashMap::new(),
            tx,
            rx,
        }
    }
}

impl Pool for TaskPool {
    fn kind(&self) -> &'static str {
        "tasks"
    }

    fn spawn(&mut self, no: usize, orders: &Orders) {
        let tx = self.tx.clone();
        let control = Arc::new(Control::new(move |event| {
            let _ = tx.send((no, event));
        }));
        let (queue, orders) = (Arc::clone(&self.queue), orders.clone());
        let handle = tokio::spawn({
            let control = Arc::clone(&control);
            async move { run(&*queue, &orders, &control).await }
        });
        let abort = handle.abort_handle();
        // Watches the worker: a panic is an ending that is not well; an abort (a kill) is.
        let well = Arc::new(AtomicBool::new(false));
        let (tx, watched) = (self.tx.clone(), Arc::clone(&well));
        tokio::spawn(async move {
            let ended = handle.await;
            watched.store(
                ended
                    .as_ref()
                    .map_or_else(tokio::task::JoinError::is_cancelled, |()| true),
                Ordering::Release,
            );
            let _ = tx.send((no, Event::Exited));
        });
        self.tasks.insert(no, (abort, control, well));
    }

    fn arm(&mut self, no: usize, point: Point) {
        if let Some((_, control, _)) = self.tasks.get(&no) {
            control.arm(point);
        }
    }

    fn stop(&mut self, no: usize) {
        if let Some((_, control, _)) = self.tasks.get(&no) {
            control.stop();
        }
    }

    fn kill(&mut self, no: usize) {
        if let Some((abort, _, _)) = self.tasks.get(&no) {
            abort.abort();
        }
    }

    fn reap(&mut self, no: usize) -> bool {
        self.tasks
            .remove(&no)
            .is_some_and(|(_, _, well)| well.load(Ordering::Acquire))
    }

    fn events(&mut self) -> &mut UnboundedReceiver<(usize, Event)> {
        &mut self.rx
    }

    fn sender(&self) -> UnboundedSender<(usize, Event)> {
        self.tx.clone()
    }
}

impl Drop for TaskPool {
    fn drop(&mut self) {
        for (abort, _, _) in self.tasks.values() {
            abort.abort();
        }
    }
}
