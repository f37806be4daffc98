package dev.hooksmith.delivery;

import java.time.Instant;

public class Delivery {
    public enum State { PENDING, SUCCEEDED, RETRYING, DEAD }

    private final String id;
    private final String subscriptionId;
    private final String eventId;
    private State state = State.PENDING;
    private int attempts;
    private int retryCount;
    private Integer lastStatusCode;
    private Instant nextAttemptAt;

    public Delivery(String id, String subscriptionId, String eventId) {
        this.id = id;
        this.subscriptionId = subscriptionId;
        this.eventId = eventId;
    }

    public String id() { return id; }
    public String subscriptionId() { return subscriptionId; }
    public String eventId() { return eventId; }
    public State state() { return state; }
    public int attempts() { return attempts; }
    public int retryCount() { return retryCount; }
    public Integer lastStatusCode() { return lastStatusCode; }
    public Instant nextAttemptAt() { return nextAttemptAt; }

    void recordAttempt(int statusCode, State next, Instant nextAt) {
        attempts++;
        retryCount = attempts - 1;
        lastStatusCode = statusCode;
        state = next;
        nextAttemptAt = nextAt;
    }
}
