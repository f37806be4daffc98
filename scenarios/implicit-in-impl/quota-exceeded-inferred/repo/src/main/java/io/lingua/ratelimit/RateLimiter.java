package io.lingua.ratelimit;

import java.time.Duration;
import org.springframework.stereotype.Component;

/** Token bucket per API key: 20 requests per second, burst 40. */
@Component
public class RateLimiter {
    private final BucketStore buckets;

    public RateLimiter(BucketStore buckets) {
        this.buckets = buckets;
    }

    public void acquire(String apiKey) {
        Bucket b = buckets.get(apiKey);
        if (!b.tryConsume(1)) {
            throw new RateLimitedException(b.timeUntilRefill());
        }
    }

    public static final class RateLimitedException extends RuntimeException {
        private final Duration retryAfter;

        public RateLimitedException(Duration retryAfter) {
            super("rate limited");
            this.retryAfter = retryAfter;
        }

        public Duration retryAfter() {
            return retryAfter;
        }
    }
}
