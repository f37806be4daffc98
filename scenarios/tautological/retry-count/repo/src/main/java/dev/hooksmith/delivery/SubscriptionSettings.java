package dev.hooksmith.delivery;

/**
 * Per-subscription knobs. maxRetries was meant to override Dispatcher.MAX_RETRIES but the
 * dispatcher never reads it; it is stored and echoed back only.
 */
public record SubscriptionSettings(String subscriptionId, int maxRetries, boolean paused) {
}
