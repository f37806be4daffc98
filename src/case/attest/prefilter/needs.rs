//! The literal sets of a parsed expression: sets of strings (ASCII-lowercased) such that
//! every match contains a string of each. Shared by [`super::Prefilter`] and the build
//! script, which computes them once for every pattern of the embedded skill registry.

use regex_syntax::hir::{Class, Hir, HirKind};

/// The most strings a set may hold before it stops being worth enumerating.
const MAX_SET: usize = 64;
/// The most characters of a class enumerated as alternatives.
const MAX_CLASS: usize = 4;

/// The most literal sets kept for one pattern, every one of which a match must satisfy.
const MAX_CLAUSES: usize = 8;

pub(super) type Set = Vec<Vec<u8>>;

/// Sets of strings (ASCII-lowercased) such that every match of `h` contains a string of
/// each; none when nothing is known.
pub(super) fn needed(h: &Hir) -> Vec<Set> {
    match strings(h) {
        Some(set) => usable(set).into_iter().collect(),
        None => needed_beyond_strings(h),
    }
}

/// [`needed`] of an `h` that has too many strings to list.
fn needed_beyond_strings(h: &Hir) -> Vec<Set> {
    let mut all = match h.kind() {
        HirKind::Capture(c) => needed(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => needed(&r.sub),
        HirKind::Alternation(alts) => {
            let branches: Vec<Vec<Set>> = alts.iter().map(needed).collect();
            if branches.iter().any(Vec::is_empty) {
                return vec![];
            }
            either(&branches)
        }
        // Adjacent parts with few strings match next to each other: their product is
        // contained in every match. So is what each part needs.
        HirKind::Concat(parts) => {
            let mut all = vec![];
            let mut run: Set = vec![vec![]];
            for p in parts {
                match strings(p) {
                    Some(s) => match product(&run, &s) {
                        Some(longer) => run = longer,
                        None => all.push(std::mem::replace(&mut run, s)),
                    },
                    None => {
                        all.push(std::mem::replace(&mut run, vec![vec![]]));
                        all.extend(needed_beyond_strings(p));
                    }
                }
            }
            all.push(run);
            all
        }
        _ => vec![],
    };
    all = all.into_iter().filter_map(|s| usable(dedup(s))).collect();
    all.sort_by_key(|s| std::cmp::Reverse(score(s)));
    all.dedup();
    all.truncate(MAX_CLAUSES);
    all
}

/// How well a set rules lines out: the longer its shortest string, then the fewer strings.
fn score(set: &Set) -> (usize, std::cmp::Reverse<usize>) {
    (
        set.iter().map(Vec::len).min().unwrap_or(0),
        std::cmp::Reverse(set.len()),
    )
}

/// What a match of any of `branches` (each a list of sets all of which it needs, most
/// selective first) needs: for each way of picking one set from every branch, the union
/// of the picks. Only the first few sets of each branch are picked from, so that there are
/// at most [`MAX_CLAUSES`] ways.
fn either(branches: &[Vec<Set>]) -> Vec<Set> {
    let mut picks = MAX_CLAUSES;
    while picks > 1
        && branches
            .iter()
            .map(|b| b.len().min(picks))
            .try_fold(1usize, |n, k| {
                n.checked_mul(k).filter(|&n| n <= MAX_CLAUSES)
            })
            .is_none()
    {
        picks /= 2;
    }
    let mut ways: Vec<Set> = vec![vec![]];
    for b in branches {
        ways = ways
            .iter()
            .flat_map(|way| {
                b.iter()
                    .take(picks)
                    .map(move |set| [way.as_slice(), set].concat())
            })
            .collect();
    }
    ways
}

/// Every string `h` can match (ASCII-lowercased), when there are few.
fn strings(h: &Hir) -> Option<Set> {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => Some(vec![vec![]]),
        HirKind::Literal(l) => Some(vec![l.0.to_ascii_lowercase()]),
        HirKind::Class(c) => class(c),
        HirKind::Capture(c) => strings(&c.sub),
        HirKind::Alternation(alts) => {
            let mut all = vec![];
            for a in alts {
                all.extend(strings(a)?);
            }
            few(all)
        }
        HirKind::Concat(parts) => parts
            .iter()
            .try_fold(vec![vec![]], |run, p| product(&run, &strings(p)?)),
        HirKind::Repetition(r) => {
            let max = r.max.filter(|&m| m <= 4)?;
            let sub = strings(&r.sub)?;
            let mut all = vec![];
            let mut power = vec![vec![]];
            for n in 0..=max {
                if n >= r.min {
                    all.extend(power.iter().cloned());
                }
                if n < max {
                    power = product(&power, &sub)?;
                }
            }
            few(all)
        }
    }
}

/// The members of a class (ASCII-lowercased, UTF-8), when there are few.
fn class(c: &Class) -> Option<Set> {
    let mut members: Set = vec![];
    let mut add = |lo: u32, hi: u32, bytes: bool| {
        if hi - lo >= 2 * MAX_CLASS as u32 {
            return None;
        }
        for c in lo..=hi {
            let member = match char::from_u32(c) {
                Some(c) if !bytes || c.is_ascii() => c.to_string().into_bytes(),
                // A byte class's other bytes are not characters: nothing is known.
                _ => return None,
            };
            members.push(member.to_ascii_lowercase());
        }
        Some(())
    };
    match c {
        Class::Unicode(u) => {
            for r in u.ranges() {
                add(r.start().into(), r.end().into(), false)?;
            }
        }
        Class::Bytes(b) => {
            for r in b.ranges() {
                add(r.start().into(), r.end().into(), true)?;
            }
        }
    }
    let members = dedup(members);
    (!members.is_empty() && members.len() <= MAX_CLASS).then_some(members)
}

/// Each of `a` followed by each of `b`, or `None` when that is too many.
fn product(a: &Set, b: &Set) -> Option<Set> {
    if a.len() * b.len() > MAX_SET {
        return None;
    }
    let all = a
        .iter()
        .flat_map(|x| b.iter().map(move |y| [x.as_slice(), y].concat()))
        .collect();
    Some(dedup(all))
}

fn dedup(mut set: Set) -> Set {
    set.sort_unstable();
    set.dedup();
    set
}

/// `set` without repeats, when at most [`MAX_SET`] strings are left.
fn few(set: Set) -> Option<Set> {
    let set = dedup(set);
    (set.len() <= MAX_SET).then_some(set)
}

/// A set that can rule a line out: not empty, no empty string.
fn usable(set: Set) -> Option<Set> {
    (!set.is_empty() && set.iter().all(|s| !s.is_empty())).then_some(set)
}
