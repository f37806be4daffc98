package io.quorum.locks;

import io.quorum.locks.api.AcquireLeaseRequest;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class LeaseServiceTest {
    private final Instant now = Instant.parse("2024-06-01T10:00:00Z");
    private final LeaseService service = new LeaseService(Clock.fixed(now, ZoneOffset.UTC));

    @Test
    void leaseOfThirtyExpiresHalfAMinuteLater() {
        Lease lease = service.acquire(new AcquireLeaseRequest("jobs/nightly", "worker-1", 30, 0));
        assertEquals(Instant.parse("2024-06-01T10:00:30Z"), lease.expiresAt());
        assertEquals(2_000, lease.heartbeatIntervalMs());
    }

    @Test
    void rejectsLeasesLongerThanAnHour() {
        var e = assertThrows(LeaseService.LeaseException.class,
                () -> service.acquire(new AcquireLeaseRequest("jobs/nightly", "worker-1", 3_601, 0)));
        assertEquals("DURATION_OUT_OF_RANGE", e.code());
    }

    @Test
    void secondHolderIsRefused() {
        service.acquire(new AcquireLeaseRequest("jobs/nightly", "worker-1", 60, 500));
        var e = assertThrows(LeaseService.LeaseException.class,
                () -> service.acquire(new AcquireLeaseRequest("jobs/nightly", "worker-2", 60, 500)));
        assertEquals("LEASE_HELD", e.code());
    }
}
