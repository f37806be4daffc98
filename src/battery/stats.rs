//! The effectiveness battery's statistics: the contribution estimate and its bootstrap
//! interval, the exact McNemar test and its discordant counts, the Holm–Bonferroni
//! adjustment, the minimum detectable effect (and so whether a class is underpowered), and
//! the repeat-noise floor.
//!
//! Invariant: every function here is pure and deterministic — no I/O, no clock, no global or
//! thread RNG. Randomness comes only from a `ChaCha8Rng` seeded by the caller, and inputs are
//! put in a canonical order first, so the same data and seed give the same bits.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, Normal};

/// One scenario's paired outcomes: the correct-flags of each repeat of each arm.
/// Repeats of the two arms are NOT paired to each other by index; each arm's accuracy for the
/// scenario is the mean over its repeats. Either vec may be empty (then the scenario is skipped).
#[derive(Debug, Clone, PartialEq)]
pub struct PairedScenario {
    pub scenario: String,
    pub baseline: Vec<bool>,
    pub arm: Vec<bool>,
}

/// A point estimate with its interval `[low, high]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Interval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// The degenerate interval `[value, value]` around `value`.
    #[must_use]
    pub const fn point(value: f64) -> Self {
        Self {
            estimate: value,
            low: value,
            high: value,
        }
    }
}

/// `n` as `f64`, exactly: the counts of the battery (trials, scenarios, resamples, cited
/// regions) stay far below 2^53, under which every integer is an `f64`.
#[allow(clippy::cast_precision_loss)] // exact for every count below 2^53, as above
pub(crate) fn from_count(n: usize) -> f64 {
    n as f64
}

/// `n` as `f64`, exactly below 2^53 as [`from_count`]: token counts and milliseconds.
#[allow(clippy::cast_precision_loss)] // exact below 2^53, as above
pub(crate) fn from_u64(n: u64) -> f64 {
    n as f64
}

/// The fraction of `true` flags in non-empty `outcomes`.
fn accuracy(outcomes: &[bool]) -> f64 {
    from_count(outcomes.iter().filter(|&&o| o).count()) / from_count(outcomes.len())
}

/// The accuracy of `outcomes` resampled with replacement to its own length.
fn resampled_accuracy(outcomes: &[bool], rng: &mut ChaCha8Rng) -> f64 {
    let n = outcomes.len();
    let hits = (0..n).filter(|_| outcomes[rng.random_range(0..n)]).count();
    from_count(hits) / from_count(n)
}

/// The `q` quantile of ascending `sorted` (non-empty), by linear interpolation between order
/// statistics (Hyndman–Fan type 7, the default of R and NumPy).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let h = from_count(sorted.len() - 1) * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - from_count(lo)) * (sorted[hi] - sorted[lo])
}

/// Contribution = mean over scenarios of (arm accuracy − baseline accuracy), a fraction in
/// [-1, 1]. 95% interval by a paired, nested bootstrap: resample scenarios with replacement, and
/// within each resampled scenario resample its repeats with replacement (per arm), `resamples`
/// times; percentile interval (2.5%, 97.5%, type-7 interpolation). Deterministic: seeded with
/// `ChaCha8Rng::seed_from_u64(seed)`; the input is sorted by (scenario, baseline, arm) first, so
/// the same input in any order and the same seed give the identical interval.
/// With `resamples == 0` the interval collapses to the estimate.
/// None when no scenario has both arms.
pub fn bootstrap_contribution(
    pairs: &[PairedScenario],
    seed: u64,
    resamples: u32,
) -> Option<Interval> {
    let mut usable: Vec<&PairedScenario> = pairs
        .iter()
        .filter(|p| !p.baseline.is_empty() && !p.arm.is_empty())
        .collect();
    if usable.is_empty() {
        return None;
    }
    usable.sort_by(|a, b| {
        (&a.scenario, &a.baseline, &a.arm).cmp(&(&b.scenario, &b.baseline, &b.arm))
    });
    let n = usable.len();
    let estimate = usable
        .iter()
        .map(|p| accuracy(&p.arm) - accuracy(&p.baseline))
        .sum::<f64>()
        / from_count(n);
    if resamples == 0 {
        return Some(Interval::point(estimate));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut stats: Vec<f64> = (0..resamples)
        .map(|_| {
            let total: f64 = (0..n)
                .map(|_| {
                    let p = usable[rng.random_range(0..n)];
                    let arm = resampled_accuracy(&p.arm, &mut rng);
                    arm - resampled_accuracy(&p.baseline, &mut rng)
                })
                .sum();
            total / from_count(n)
        })
        .collect();
    stats.sort_by(f64::total_cmp);
    Some(Interval {
        estimate,
        low: quantile(&stats, 0.025),
        high: quantile(&stats, 0.975),
    })
}

/// Exact two-sided McNemar test on discordant pair counts b (baseline right, arm wrong) and
/// c (baseline wrong, arm right): p = min(1, 2 * P(X <= min(b,c))) with X ~ Binomial(b+c, 0.5);
/// p = 1.0 when b + c == 0. The binomial CDF is statrs' regularized incomplete beta, which stays
/// accurate for large n (checked against exact rational sums in the tests).
///
/// # Panics
///
/// Never: a binomial with p = 0.5 is valid for every `n`, which the `expect` states.
#[must_use]
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    // |b − c| <= 1 (including b + c == 0) puts min(b, c) at or above the median of
    // Binomial(b + c, 0.5), so P(X <= min) >= 1/2 and p is exactly 1; short-circuiting keeps the
    // incomplete-beta rounding (0.4999999999999996 for n = 1) from reporting p just under 1.
    if b.abs_diff(c) <= 1 {
        return 1.0;
    }
    let n = b + c;
    let binomial = Binomial::new(0.5, n).expect("p = 0.5 is a valid binomial parameter");
    (2.0 * binomial.cdf(b.min(c))).min(1.0)
}

/// Whether an arm counts as right on a scenario: a strict majority of its repeats were correct
/// (ties, and no repeats, count as wrong).
fn majority(outcomes: &[bool]) -> bool {
    2 * outcomes.iter().filter(|&&o| o).count() > outcomes.len()
}

/// Discordant counts for McNemar from paired scenarios: per scenario, the majority outcome of each
/// arm over its repeats (ties count as wrong), then b = #(base right, arm wrong),
/// c = #(base wrong, arm right). Scenarios with either arm empty are skipped.
#[must_use]
pub fn discordant(pairs: &[PairedScenario]) -> (u64, u64) {
    pairs
        .iter()
        .filter(|p| !p.baseline.is_empty() && !p.arm.is_empty())
        .fold((0, 0), |(b, c), p| {
            match (majority(&p.baseline), majority(&p.arm)) {
                (true, false) => (b + 1, c),
                (false, true) => (b, c + 1),
                _ => (b, c),
            }
        })
}

/// Holm–Bonferroni step-down adjustment. Input p-values (None = not tested, passes through as
/// None); output adjusted p-values in the same order, monotone (adjusted p never decreases along
/// sorted order), capped at 1.0. m = number of Some values. With the Some values sorted
/// ascending as p(1) <= ... <= p(m), adjusted
/// p(i) = min(1, max over j <= i of (m − j + 1) · p(j)).
/// A NaN input is treated as 1.0; ties keep input order.
#[must_use]
pub fn holm(ps: &[Option<f64>]) -> Vec<Option<f64>> {
    let clean = |p: f64| if p.is_nan() { 1.0 } else { p.clamp(0.0, 1.0) };
    let mut tested: Vec<(usize, f64)> = ps
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.map(|p| (i, clean(p))))
        .collect();
    tested.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    let m = tested.len();
    let mut out = vec![None; ps.len()];
    let mut running = 0.0_f64;
    for (rank, &(index, p)) in tested.iter().enumerate() {
        running = running.max((from_count(m - rank) * p).min(1.0));
        out[index] = Some(running);
    }
    out
}

/// Minimum detectable effect (as a fraction of accuracy, e.g. 0.31 = 31 points) for a paired
/// binary comparison on `n` scenarios at two-sided `alpha` and the given `power`, by the normal
/// approximation `mde = (z_{1−alpha/2} + z_{power}) · sd / sqrt(n)`.
///
/// The per-scenario paired difference d = arm − baseline lies in [−1, 1], so its standard
/// deviation is at most 1; we take the conservative worst case sd = 1, giving
/// `mde = (z_{1−alpha/2} + z_{power}) / sqrt(n)`. At alpha 0.05 and power 0.8 that is
/// `2.8016 / sqrt(n)`: 0.4176 at n = 45, 0.3004 at n = 87, 0.2986 at n = 88.
///
/// Returns `f64::INFINITY` for `n == 0`, and NaN unless `alpha` and `power` lie in (0, 1).
#[must_use]
pub fn minimum_detectable_effect(n: usize, alpha: f64, power: f64) -> f64 {
    let open_unit = |x: f64| x > 0.0 && x < 1.0;
    if !open_unit(alpha) || !open_unit(power) {
        return f64::NAN;
    }
    if n == 0 {
        return f64::INFINITY;
    }
    let z = Normal::standard();
    (z.inverse_cdf(1.0 - alpha / 2.0) + z.inverse_cdf(power)) / from_count(n).sqrt()
}

/// True when `n` scenarios cannot detect a 30-point difference at alpha 0.05, power 0.8, i.e.
/// when [`minimum_detectable_effect`] exceeds 0.30. By its sd = 1 formula that holds for
/// n <= 87: `underpowered(45)` is true, `underpowered(88)` and `underpowered(90)` are false.
#[must_use]
pub fn underpowered(n: usize) -> bool {
    minimum_detectable_effect(n, 0.05, 0.8) > 0.30
}

/// The share of scenarios whose outcome differs across an arm's repeats (scenarios with fewer
/// than 2 repeats do not count in the denominator); None when no scenario has 2+ repeats.
#[must_use]
pub fn noise_floor(per_scenario_repeats: &[Vec<bool>]) -> Option<f64> {
    let repeated: Vec<&Vec<bool>> = per_scenario_repeats
        .iter()
        .filter(|r| r.len() >= 2)
        .collect();
    if repeated.is_empty() {
        return None;
    }
    let noisy = repeated
        .iter()
        .filter(|r| r.iter().any(|&o| o != r[0]))
        .count();
    Some(from_count(noisy) / from_count(repeated.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(scenario: &str, baseline: &[bool], arm: &[bool]) -> PairedScenario {
        let (baseline, arm) = (baseline.to_vec(), arm.to_vec());
        PairedScenario {
            scenario: scenario.into(),
            baseline,
            arm,
        }
    }

    #[track_caller]
    fn assert_close(actual: f64, expected: f64, rel: f64) {
        let tolerance = rel * expected.abs().max(f64::MIN_POSITIVE);
        assert!(
            (actual - expected).abs() <= tolerance,
            "{actual} vs {expected}"
        );
    }

    /// Independent check: 2 · Σ_{i ≤ min(b,c)} C(n, i) / 2^n, summed in log space.
    fn mcnemar_log_space(b: u64, c: u64) -> f64 {
        let (n, k) = (b + c, b.min(c));
        let ln_choose = |i: u64| -> f64 {
            (0..i)
                .map(|j| (from_u64(n - j) / from_u64(j + 1)).ln())
                .sum()
        };
        let terms: Vec<f64> = (0..=k)
            .map(|i| ln_choose(i) - from_u64(n) * 2f64.ln())
            .collect();
        let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let ln_sum = top + terms.iter().map(|t| (t - top).exp()).sum::<f64>().ln();
        (2.0 * ln_sum.exp()).min(1.0)
    }

    /// A mixed corpus: 12 scenarios, three repeats per arm, the arm usually a little better.
    fn mixed() -> Vec<PairedScenario> {
        let (t, f) = (true, false);
        vec![
            pair("a", &[t, t, f], &[t, t, t]),
            pair("b", &[f, f, f], &[t, f, t]),
            pair("c", &[t, t, t], &[t, t, t]),
            pair("d", &[f, t, f], &[f, f, f]),
            pair("e", &[f, f, f], &[t, t, t]),
            pair("f", &[t, f, t], &[t, t, f]),
            pair("g", &[f, f, t], &[t, f, t]),
            pair("h", &[t, t, t], &[t, f, t]),
            pair("i", &[f, f, f], &[f, f, f]),
            pair("j", &[f, t, t], &[t, t, t]),
            pair("k", &[f, f, f], &[f, t, f]),
            pair("l", &[t, f, f], &[t, t, t]),
        ]
    }

    #[test]
    fn mcnemar_matches_hand_computed_values() {
        // (10, 2): 2 · (C(12,0) + C(12,1) + C(12,2)) / 2^12 = 2 · 79 / 4096; (6, 0): 2 / 2^6;
        // (2, 0): 2 / 2^2; the rest from exact rational sums (Python fractions + math.comb).
        for (b, c, p) in [
            (10, 2, 0.038_574_218_75),
            (6, 0, 0.031_25),
            (2, 0, 0.5),
            (20, 5, 0.004_077_315_330_505_371),
            (40, 60, 0.056_887_933_640_980_79),
        ] {
            assert_close(mcnemar_exact(b, c), p, 1e-12);
        }
    }

    #[test]
    fn mcnemar_edge_cases_and_symmetry() {
        for (b, c) in [(0, 0), (5, 5), (1, 0), (0, 1), (1000, 999)] {
            assert_eq!(mcnemar_exact(b, c), 1.0, "({b}, {c})");
        }
        for (b, c) in [(10, 2), (0, 7), (300, 250), (13, 31)] {
            assert_eq!(mcnemar_exact(b, c), mcnemar_exact(c, b));
        }
    }

    #[test]
    fn mcnemar_is_exact_for_large_counts() {
        // Literals from exact rational sums (Python fractions + math.comb).
        assert_close(mcnemar_exact(300, 250), 0.036_578_745_549_102_704, 1e-9);
        assert_close(mcnemar_exact(5000, 4800), 0.044_404_148_799_846_29, 1e-8);
        assert_close(mcnemar_exact(1000, 0), 1.866_527_237_006_437_8e-301, 1e-6);
        for (b, c) in [(300, 250), (5000, 4800), (120, 80), (1000, 0)] {
            assert_close(mcnemar_exact(b, c), mcnemar_log_space(b, c), 1e-8);
        }
    }

    #[test]
    fn discordant_uses_majorities_with_ties_wrong() {
        let (t, f) = (true, false);
        let pairs = [
            pair("b1", &[t, t, f], &[f, f, t]), // base right, arm wrong -> b
            pair("b2", &[t], &[t, f]),          // arm tie counts wrong -> b
            pair("c1", &[f, t], &[t, t, f]),    // base tie wrong, arm right -> c
            pair("same", &[t, t], &[t]),        // concordant right
            pair("wrong", &[f], &[f, f]),       // concordant wrong
            pair("skip", &[], &[t]),            // skipped: no baseline
        ];
        assert_eq!(discordant(&pairs), (2, 1));
        assert_eq!(discordant(&[]), (0, 0));
    }

    #[test]
    fn holm_matches_hand_computation() {
        let adjusted = holm(&[Some(0.01), Some(0.04), Some(0.03), None]);
        // Sorted: 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 -> raised to 0.06.
        assert_eq!(adjusted[3], None);
        for (a, e) in adjusted.iter().zip([0.03, 0.06, 0.06]) {
            assert_close(a.unwrap(), e, 1e-12);
        }
    }

    #[test]
    fn holm_caps_at_one_is_monotone_and_handles_empty() {
        assert_eq!(holm(&[]), Vec::<Option<f64>>::new());
        assert_eq!(holm(&[None, None]), vec![None, None]);
        assert_eq!(holm(&[Some(0.2)]), vec![Some(0.2)]);
        let ps = [Some(0.5), Some(0.001), Some(0.4), Some(0.02)];
        // Sorted: 0.001·4 = 0.004, 0.02·3 = 0.06, 0.4·2 = 0.8, 0.5·1 = 0.5 -> raised to 0.8.
        for (a, e) in holm(&ps).iter().zip([0.8, 0.004, 0.8, 0.06]) {
            assert_close(a.unwrap(), e, 1e-12);
        }
        assert_eq!(holm(&[Some(0.6), Some(0.7)]), vec![Some(1.0), Some(1.0)]);
    }

    #[test]
    fn bootstrap_is_deterministic_and_order_free() {
        let pairs = mixed();
        let first = bootstrap_contribution(&pairs, 7, 2000).unwrap();
        let mut shuffled = pairs.clone();
        shuffled.reverse();
        shuffled.swap(0, 5);
        shuffled.swap(2, 9);
        assert_eq!(bootstrap_contribution(&shuffled, 7, 2000).unwrap(), first);
        assert_eq!(bootstrap_contribution(&pairs, 7, 2000).unwrap(), first);
        let other = bootstrap_contribution(&pairs, 8, 2000).unwrap();
        assert_eq!(other.estimate, first.estimate);
        assert_ne!((other.low, other.high), (first.low, first.high));
    }

    #[test]
    fn bootstrap_estimate_and_interval_are_sound() {
        let got = bootstrap_contribution(&mixed(), 42, 4000).unwrap();
        // By hand: Σ (arm hits − base hits) over the 12 scenarios = 9, over 12 · 3 repeats.
        assert_close(got.estimate, 9.0 / 36.0, 1e-12);
        assert!(
            got.low <= got.estimate && got.estimate <= got.high,
            "{got:?}"
        );
        assert!(
            got.low > -1.0 && got.high < 1.0 && got.low < got.high,
            "{got:?}"
        );
    }

    #[test]
    fn bootstrap_degenerate_cases() {
        let (t, f) = (true, false);
        let equal = [
            pair("a", &[t, f], &[f, t]),
            pair("b", &[t], &[t]),
            pair("c", &[f, f], &[f]),
        ];
        assert_eq!(
            bootstrap_contribution(&equal[1..], 1, 500),
            Some(Interval::point(0.0))
        );
        let all = [pair("a", &[f, f], &[t, t]), pair("b", &[f], &[t, t, t])];
        assert_eq!(
            bootstrap_contribution(&all, 3, 500),
            Some(Interval::point(1.0))
        );
        assert_eq!(
            bootstrap_contribution(&all, 3, 0),
            Some(Interval::point(1.0))
        );
        // Resampling the repeats of "a" ({t, f} in each arm) makes the interval non-degenerate.
        let wide = bootstrap_contribution(&equal, 1, 500).unwrap();
        assert_eq!(wide.estimate, 0.0);
        assert!(wide.low < 0.0 && wide.high > 0.0, "{wide:?}");
    }

    #[test]
    fn bootstrap_needs_a_scenario_with_both_arms() {
        assert_eq!(bootstrap_contribution(&[], 1, 100), None);
        let one_sided = [pair("a", &[], &[true]), pair("b", &[false], &[])];
        assert_eq!(bootstrap_contribution(&one_sided, 1, 100), None);
    }

    #[test]
    fn quantile_interpolates_type_7() {
        let xs = [0.0, 1.0, 2.0, 3.0, 4.0];
        assert_eq!(
            (quantile(&xs, 0.0), quantile(&xs, 0.5), quantile(&xs, 1.0)),
            (0.0, 2.0, 4.0)
        );
        assert_close(quantile(&xs, 0.025), 0.1, 1e-12);
        assert_eq!(quantile(&[3.5], 0.975), 3.5);
    }

    #[test]
    fn mde_matches_normal_approximation_and_decreases_with_n() {
        // z_.975 + z_.8 = 1.959963984540054 + 0.8416212335729144 (Python's NormalDist).
        for (n, alpha, power, mde) in [
            (1, 0.05, 0.8, 2.801_585_218_112_968),
            (45, 0.05, 0.8, 0.417_635_666_163_944_7),
            (100, 0.05, 0.8, 0.280_158_521_811_296_8),
            (50, 0.01, 0.9, 0.545_516_034_031_054_5),
        ] {
            assert_close(minimum_detectable_effect(n, alpha, power), mde, 1e-9);
        }
        assert_eq!(minimum_detectable_effect(0, 0.05, 0.8), f64::INFINITY);
        assert!(minimum_detectable_effect(10, 0.0, 0.8).is_nan());
        assert!(minimum_detectable_effect(10, 0.05, 1.0).is_nan());
        let values: Vec<f64> = (1..200)
            .map(|n| minimum_detectable_effect(n, 0.05, 0.8))
            .collect();
        assert!(values.windows(2).all(|w| w[1] < w[0]));
    }

    #[test]
    fn underpowered_threshold_is_88() {
        assert!(underpowered(0) && underpowered(45) && underpowered(87));
        assert!(!underpowered(88) && !underpowered(90));
    }

    #[test]
    fn noise_floor_counts_disagreeing_repeats() {
        let (t, f) = (true, false);
        let repeats = [
            vec![t, t, t],
            vec![t, f],
            vec![f, f],
            vec![t],
            vec![],
            vec![f, f, t],
        ];
        // Four scenarios have 2+ repeats; two of them ([t, f] and [f, f, t]) disagree.
        assert_eq!(noise_floor(&repeats), Some(0.5));
        assert_eq!(noise_floor(&[vec![t, f, t]]), Some(1.0));
        assert_eq!(noise_floor(&[vec![f, f]]), Some(0.0));
        assert_eq!(noise_floor(&[vec![t], vec![]]), None);
        assert_eq!(noise_floor(&[]), None);
    }
}
