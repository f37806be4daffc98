package dev.hooksmith.delivery;

import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;

import static org.junit.jupiter.api.Assertions.assertEquals;

class DispatcherTest {
    private final Clock clock = Clock.fixed(Instant.parse("2024-02-01T00:00:00Z"), ZoneOffset.UTC);

    @Test
    void firstAttemptIsNotARetry() {
        var d = new Delivery("dl_1", "sub_1", "evt_1");
        new Dispatcher((s, e) -> 500, clock).attempt(d);
        assertEquals(1, d.attempts());
        assertEquals(0, d.retryCount());
        assertEquals(Delivery.State.RETRYING, d.state());
    }

    @Test
    void deadAfterEightRetries() {
        var d = new Delivery("dl_2", "sub_1", "evt_1");
        var dispatcher = new Dispatcher((s, e) -> 503, clock);
        for (int i = 0; i < 9; i++) dispatcher.attempt(d);
        assertEquals(8, d.retryCount());
        assertEquals(Delivery.State.DEAD, d.state());
    }

    @Test
    void successStopsRetrying() {
        var d = new Delivery("dl_3", "sub_1", "evt_1");
        new Dispatcher((s, e) -> 204, clock).attempt(d);
        assertEquals(Delivery.State.SUCCEEDED, d.state());
        assertEquals(0, d.retryCount());
    }
}
