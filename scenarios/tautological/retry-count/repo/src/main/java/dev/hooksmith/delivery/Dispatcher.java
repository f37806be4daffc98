package dev.hooksmith.delivery;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/** Sends one attempt of a delivery and decides what happens next. */
public class Dispatcher {
    /** Redeliveries after the first attempt; once they are used up the delivery is dead. */
    static final int MAX_RETRIES = 8;

    public interface Transport {
        int post(String subscriptionId, String eventId);
    }

    private final Transport transport;
    private final Clock clock;

    public Dispatcher(Transport transport, Clock clock) {
        this.transport = transport;
        this.clock = clock;
    }

    public void attempt(Delivery d) {
        int status = transport.post(d.subscriptionId(), d.eventId());
        Instant now = clock.instant();
        if (status >= 200 && status < 300) {
            d.recordAttempt(status, Delivery.State.SUCCEEDED, null);
        } else if (d.attempts() >= MAX_RETRIES) {
            d.recordAttempt(status, Delivery.State.DEAD, null);
        } else {
            Duration wait = Duration.ofSeconds(30L << d.attempts());
            d.recordAttempt(status, Delivery.State.RETRYING, now.plus(wait));
        }
    }
}
