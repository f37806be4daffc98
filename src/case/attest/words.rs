//! Content words of free text, for description attestation: which of a description's own
//! words appear in the cited lines.

use std::collections::BTreeSet;

use crate::air::name_words;

/// A light stem: enough that `invoices`, `invoiced` and `invoice` agree.
pub fn stem(word: &str) -> String {
    let w = word.to_lowercase();
    let n = w.len();
    let cut = |k: usize| w[..n - k].to_string();
    if n > 4 && w.ends_with("ies") {
        return format!("{}y", &w[..n - 3]);
    }
    if n > 6 && w.ends_with("ing") {
        return cut(3);
    }
    if n > 4 && w.ends_with("ed") {
        return cut(2);
    }
    if n > 3 && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") {
        return cut(1);
    }
    w
}

/// True when two stems name the same word: equal, or one a prefix of the other of at
/// least five letters (`similar` / `similarity`).
pub fn same(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    short.len() >= 5 && long.starts_with(short)
}

/// The content words of `text`: its words, stemmed, without `ignore` and without the
/// words of `known` (the target's own name and type), in order, once each.
pub fn content_words(text: &str, ignore: &[String], known: &[String]) -> Vec<String> {
    let ignore: BTreeSet<String> = ignore.iter().map(|w| w.to_lowercase()).collect();
    let known: Vec<String> = known.iter().map(|w| stem(w)).collect();
    let mut out: Vec<String> = Vec::new();
    for w in name_words(text) {
        if ignore.contains(&w) {
            continue;
        }
        let s = stem(&w);
        if known.iter().any(|k| same(k, &s)) || out.contains(&s) {
            continue;
        }
        out.push(s);
    }
    out
}

/// The stemmed words of one line of an excerpt.
pub fn line_words(line: &str) -> Vec<String> {
    name_words(line).iter().map(|w| stem(w)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_words_drop_function_words_and_the_name() {
        let ignore = vec!["the".to_string(), "of".to_string()];
        let known = vec!["payment".to_string(), "id".to_string()];
        assert_eq!(
            content_words("The id of the payments created", &ignore, &known),
            ["created".to_string()].map(|w| stem(&w))
        );
    }

    #[test]
    fn stems_agree_across_inflections() {
        assert!(same(&stem("invoices"), &stem("invoice")));
        assert!(same(&stem("similar"), &stem("similarity")));
        assert!(!same(&stem("read"), &stem("ready")));
    }

    #[test]
    fn a_plural_stem_drops_only_the_final_s() {
        assert_eq!(stem("invoices"), "invoice");
        assert_eq!(stem("payments"), "payment");
    }

    #[test]
    fn a_three_letter_word_keeps_its_final_s() {
        assert_eq!(stem("has"), "has");
        assert_eq!(stem("ids"), "ids");
        assert_eq!(stem("fees"), "fee");
    }

    #[test]
    fn a_four_letter_ies_word_keeps_its_e() {
        assert_eq!(stem("ties"), "tie");
        assert_eq!(stem("lies"), "lie");
        assert_eq!(stem("parties"), "party");
    }

    #[test]
    fn a_four_letter_ed_word_is_not_cut() {
        assert_eq!(stem("need"), "need");
        assert_eq!(stem("shed"), "shed");
        assert_eq!(stem("saved"), "sav");
    }

    #[test]
    fn a_six_letter_ing_word_is_not_cut() {
        assert_eq!(stem("string"), "string");
        assert!(same(&stem("strings"), &stem("string")));
        assert_eq!(stem("loading"), "load");
    }
}
