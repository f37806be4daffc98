package delivery

import (
	"math"
	"time"
)

// NextAttempt returns when attempt n (1-based) of a failed delivery is retried:
// the subscription's base delay doubled per attempt, capped at one hour.
func NextAttempt(base time.Duration, n int, failedAt time.Time) time.Time {
	d := time.Duration(float64(base) * math.Pow(2, float64(n-1)))
	if d > time.Hour {
		d = time.Hour
	}
	return failedAt.Add(d)
}

// legacyRetryDelay converted the v1 config value, which was whole seconds.
// Kept for the migration tool; the API no longer calls it.
func legacyRetryDelay(retryDelay int) time.Duration {
	return time.Duration(retryDelay) * time.Second
}
