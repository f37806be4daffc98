//! Work on a list of items on a few threads, outcomes back in item order.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `work` on every item, on up to `threads` threads, each with its own reused buffer;
/// outcomes in item order. Once an item fails, items after it may be left undone (`None`):
/// the caller stops at the first failure, as a loop would.
pub fn in_order<I: Sync, T: Send, E: Send>(
    items: &[I],
    threads: usize,
    work: impl Fn(&I, &mut Vec<u8>) -> Result<T, E> + Sync,
) -> Vec<Option<Result<T, E>>> {
    let next = AtomicUsize::new(0);
    let failed = AtomicUsize::new(usize::MAX);
    let run = || {
        let mut buf = Vec::new();
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= items.len() || i > failed.load(Ordering::Relaxed) {
                return done;
            }
            let outcome = work(&items[i], &mut buf);
            if outcome.is_err() {
                failed.fetch_min(i, Ordering::Relaxed);
            }
            done.push((i, outcome));
        }
    };
    let threads = threads.min(items.len());
    let done: Vec<Vec<(usize, Result<T, E>)>> = if threads <= 1 {
        vec![run()]
    } else {
        std::thread::scope(|s| {
            let helpers: Vec<_> = (1..threads).map(|_| s.spawn(run)).collect();
            let mut done = vec![run()];
            for h in helpers {
                done.push(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
            }
            done
        })
    };
    let mut out: Vec<Option<Result<T, E>>> = items.iter().map(|_| None).collect();
    for (i, outcome) in done.into_iter().flatten() {
        out[i] = Some(outcome);
    }
    out
}
