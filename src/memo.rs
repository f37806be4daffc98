//! Bounded, process-wide memos for pure functions of their key.
//!
//! Invariant: a memo returns what its function returned for an equal key, and nothing else.
//! Keys are compared whole: a key is the inputs themselves or their sha256, never a weaker
//! hash of them, and only a function whose result is decided by its key alone may be
//! memoized. A failure is never remembered. Past its bound a memo starts again empty, so it
//! costs at most `cap` entries however long the process runs.
//!
//! The rails re-derive what they check (the policy hash, the AIR hash, which attestation
//! rules fire on a line) at every call; inside one process (the library API, the MCP server,
//! a battery) the same inputs come back many times, and a memo answers them.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;

/// A memo of at most `cap` entries.
pub struct Memo<K, V> {
    map: Mutex<Option<HashMap<K, V>>>,
    cap: usize,
}

impl<K: Eq + Hash, V: Clone> Memo<K, V> {
    #[must_use]
    pub const fn new(cap: usize) -> Memo<K, V> {
        Memo {
            map: Mutex::new(None),
            cap,
        }
    }

    /// What `f` gives for `key`, computed at most once while the entry lasts. `f` runs
    /// without the memo locked, so two threads may both compute a missing entry; the first
    /// value stored is the one both get, and every later caller.
    pub fn get_or(&self, key: K, f: impl FnOnce() -> V) -> V {
        match self.try_get_or(key, || Ok::<V, std::convert::Infallible>(f())) {
            Ok(v) => v,
            Err(never) => match never {},
        }
    }

    /// As [`Memo::get_or`] for a function that can fail; an `Err` is returned and not
    /// remembered.
    ///
    /// # Errors
    ///
    /// Whatever `f` returns.
    pub fn try_get_or<E>(&self, key: K, f: impl FnOnce() -> Result<V, E>) -> Result<V, E> {
        if let Some(v) = self.lookup(&key) {
            return Ok(v);
        }
        let v = f()?;
        // A poisoned lock only loses the memo: the value is still returned.
        Ok(self.keep(key, v, V::clone).unwrap_or_else(|v| v))
    }

    /// Stores `value` as what the memo's function gives for `key`, for a caller that holds
    /// it without calling the function (the parse of bytes it has just serialised); an
    /// entry already stored is kept. Nothing is cloned or returned.
    pub fn insert(&self, key: K, value: V) {
        // A poisoned lock only loses the memo.
        let _ = self.keep(key, value, |_| ());
    }

    /// Stores `value` for `key` unless the key has an entry already (past the bound the
    /// memo starts again empty), and hands `kept` the entry the memo keeps. `Err(value)`
    /// when the lock is poisoned.
    fn keep<R>(&self, key: K, value: V, kept: impl FnOnce(&V) -> R) -> Result<R, V> {
        let Ok(mut guard) = self.map.lock() else {
            return Err(value);
        };
        let map = guard.get_or_insert_with(HashMap::new);
        if map.len() >= self.cap && !map.contains_key(&key) {
            map.clear();
        }
        Ok(kept(map.entry(key).or_insert(value)))
    }

    fn lookup(&self, key: &K) -> Option<V> {
        let guard = self.map.lock().ok()?;
        guard.as_ref()?.get(key).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A value stored while `f` ran (by another thread, here by `f` itself) is kept and
    /// returned: callers never hold two values for one key.
    #[test]
    fn the_first_value_stored_for_a_key_wins() {
        let memo: Memo<String, std::sync::Arc<String>> = Memo::new(8);
        let first = std::sync::Arc::new("first".to_string());
        let late = memo.get_or("k".into(), || {
            memo.get_or("k".into(), || std::sync::Arc::clone(&first));
            std::sync::Arc::new("second".to_string())
        });
        assert!(std::sync::Arc::ptr_eq(&late, &first), "{late}");
        assert!(std::sync::Arc::ptr_eq(
            &memo.get_or("k".into(), || unreachable!()),
            &first
        ));
    }

    #[test]
    fn a_value_is_computed_once_per_key() {
        let memo: Memo<String, usize> = Memo::new(8);
        let calls = Cell::new(0);
        let f = |n: usize| {
            calls.set(calls.get() + 1);
            n
        };
        assert_eq!(memo.get_or("a".into(), || f(1)), 1);
        assert_eq!(memo.get_or("a".into(), || f(2)), 1, "remembered");
        assert_eq!(memo.get_or("b".into(), || f(3)), 3, "another key");
        assert_eq!(calls.get(), 2);
    }

    /// An inserted value answers its key without the function running; a second insert
    /// for the key keeps the first value, as a second computation would.
    #[test]
    fn an_inserted_value_answers_its_key_and_the_first_one_stays() {
        let memo: Memo<u8, u8> = Memo::new(8);
        memo.insert(1, 10);
        memo.insert(1, 11);
        assert_eq!(memo.get_or(1, || unreachable!()), 10);
        assert_eq!(memo.get_or(2, || 20), 20, "another key is computed");
        let full: Memo<u8, u8> = Memo::new(2);
        for k in 0..5 {
            full.insert(k, k);
            assert_eq!(full.get_or(k, || unreachable!()), k, "past the bound too");
        }
    }

    #[test]
    fn a_failure_is_not_remembered() {
        let memo: Memo<u8, u8> = Memo::new(8);
        assert_eq!(memo.try_get_or(1, || Err::<u8, &str>("no")), Err("no"));
        assert_eq!(memo.try_get_or(1, || Ok::<u8, &str>(7)), Ok(7));
        assert_eq!(memo.try_get_or(1, || Err::<u8, &str>("later")), Ok(7));
    }

    #[test]
    fn past_its_bound_the_memo_starts_again() {
        let memo: Memo<u8, u8> = Memo::new(2);
        memo.get_or(1, || 10);
        memo.get_or(2, || 20);
        // Full: the third key clears the first two.
        memo.get_or(3, || 30);
        assert_eq!(memo.get_or(1, || 11), 11, "1 was forgotten");
        assert_eq!(
            memo.get_or(3, || 31),
            30,
            "3 survived the clear that made room for 1"
        );
        let len = memo.map.lock().unwrap().as_ref().map_or(0, HashMap::len);
        assert!(len <= 2, "never more than its bound: {len}");
    }
}
