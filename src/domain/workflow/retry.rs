//! How long a failed node waits before its next attempt.

use super::model::Retry;

/// The delay before retry `n` (1 = the first retry): `min(delayMs × factor^(n-1), capMs)`, less a random
/// part of up to `jitter` of it. `draw` is the random number, uniform in [0, 1), given by the caller so
/// that the delay is deterministic in tests; values outside are clamped. `n = 0` counts as the first.
pub fn backoff_ms(retry: &Retry, n: u32, draw: f64) -> u64 {
    let exponent = i32::try_from(n.saturating_sub(1)).unwrap_or(i32::MAX);
    // In floating point, so a large factor or exponent reaches the cap instead of overflowing.
    // (0 × ∞ would be NaN, which `min` then replaces with the cap.)
    let grown = if retry.delay_ms == 0 { 0.0 } else { retry.delay_ms as f64 * retry.factor.powi(exponent) };
    let capped = grown.min(retry.cap_ms as f64);
    let draw = if draw.is_finite() { draw.clamp(0.0, 1.0) } else { 0.0 };
    let jitter = if retry.jitter.is_finite() { retry.jitter.clamp(0.0, 1.0) } else { 0.0 };
    (capped * (1.0 - jitter * draw)).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retry(delay_ms: u64, factor: f64, cap_ms: u64, jitter: f64) -> Retry {
        Retry { count: 10, delay_ms, factor, cap_ms, jitter }
    }

    #[test]
    fn delays_grow_by_the_factor_up_to_the_cap() {
        let r = retry(1000, 2.0, 10_000, 0.0);
        let delays: Vec<u64> = (1..=6).map(|n| backoff_ms(&r, n, 0.5)).collect();
        assert_eq!(delays, [1000, 2000, 4000, 8000, 10_000, 10_000]);
        assert_eq!(backoff_ms(&r, 0, 0.0), 1000);
    }

    #[test]
    fn a_factor_of_one_keeps_the_delay_fixed() {
        let r = Retry::default();
        assert_eq!(backoff_ms(&r, 1, 0.9), 300_000);
        assert_eq!(backoff_ms(&r, 50, 0.9), 300_000);
    }

    #[test]
    fn jitter_takes_off_up_to_its_fraction_of_the_delay() {
        let r = retry(1000, 3.0, 100_000, 0.5);
        assert_eq!(backoff_ms(&r, 1, 0.0), 1000);
        assert_eq!(backoff_ms(&r, 1, 0.5), 750);
        assert_eq!(backoff_ms(&r, 2, 0.999_999), 1500);
        // Jitter applies after the cap: a capped delay still varies.
        let r = retry(1000, 10.0, 5000, 1.0);
        assert_eq!(backoff_ms(&r, 3, 0.2), 4000);
    }

    #[test]
    fn out_of_range_draws_are_clamped() {
        let r = retry(1000, 1.0, 1000, 1.0);
        assert_eq!(backoff_ms(&r, 1, -3.0), 1000);
        assert_eq!(backoff_ms(&r, 1, 7.0), 0);
        assert_eq!(backoff_ms(&r, 1, f64::NAN), 1000);
    }

    #[test]
    fn huge_retry_numbers_do_not_overflow() {
        let r = retry(86_400_000, 10.0, 86_400_000, 0.0);
        assert_eq!(backoff_ms(&r, u32::MAX, 0.0), 86_400_000);
        assert_eq!(backoff_ms(&retry(0, 10.0, 0, 0.0), 100, 0.0), 0);
        assert_eq!(backoff_ms(&retry(0, 10.0, 1000, 0.0), u32::MAX, 0.0), 0);
    }
}
