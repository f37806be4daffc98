package io.lingua.api;

import io.lingua.quota.QuotaService.QuotaExceededException;
import io.lingua.ratelimit.RateLimiter.RateLimitedException;
import java.util.Map;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

@RestControllerAdvice
public class ApiExceptionHandler {

    @ExceptionHandler(RateLimitedException.class)
    public ResponseEntity<Map<String, Object>> rateLimited(RateLimitedException e) {
        long seconds = Math.max(1, e.retryAfter().toSeconds());
        return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS)
                .header(HttpHeaders.RETRY_AFTER, Long.toString(seconds))
                .body(Map.of("code", "RATE_LIMITED", "retryable", true));
    }

    // Same status as RATE_LIMITED for compatibility with v1 clients, but no
    // Retry-After: waiting does not help until the plan changes.
    @ExceptionHandler(QuotaExceededException.class)
    public ResponseEntity<Map<String, Object>> quotaExceeded(QuotaExceededException e) {
        return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS)
                .body(Map.of("code", "QUOTA_EXCEEDED", "retryable", false, "message", e.getMessage()));
    }

    @ExceptionHandler(TextTooLongException.class)
    public ResponseEntity<Map<String, Object>> tooLong(TextTooLongException e) {
        return ResponseEntity.status(HttpStatus.PAYLOAD_TOO_LARGE)
                .body(Map.of("code", "TEXT_TOO_LONG", "retryable", false));
    }
}
