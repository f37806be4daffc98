package io.quorum.locks;

import io.quorum.locks.api.AcquireLeaseRequest;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

public class LeaseService {
    static final Duration MIN_LEASE = Duration.ofSeconds(5);
    static final Duration MAX_LEASE = Duration.ofHours(1);
    static final long DEFAULT_HEARTBEAT_MS = 2_000;

    public static final class LeaseException extends RuntimeException {
        private final String code;

        LeaseException(String code, String message) {
            super(message);
            this.code = code;
        }

        public String code() {
            return code;
        }
    }

    private final Map<String, Lease> held = new ConcurrentHashMap<>();
    private final AtomicLong fencing = new AtomicLong();
    private final Clock clock;

    public LeaseService(Clock clock) {
        this.clock = clock;
    }

    public Lease acquire(AcquireLeaseRequest req) {
        Duration ttl = Duration.ofSeconds(req.leaseDuration());
        if (ttl.compareTo(MIN_LEASE) < 0 || ttl.compareTo(MAX_LEASE) > 0) {
            throw new LeaseException("DURATION_OUT_OF_RANGE",
                    "lease must last between " + MIN_LEASE + " and " + MAX_LEASE);
        }
        long heartbeat = req.heartbeatIntervalMs() > 0 ? req.heartbeatIntervalMs() : DEFAULT_HEARTBEAT_MS;
        Instant now = clock.instant();
        Lease current = held.get(req.resource());
        if (current != null && current.expiresAt().isAfter(now) && !current.holder().equals(req.holder())) {
            throw new LeaseException("LEASE_HELD", req.resource() + " is held by " + current.holder());
        }
        Lease lease = new Lease(UUID.randomUUID().toString(), req.resource(), req.holder(),
                fencing.incrementAndGet(), now.plus(ttl), heartbeat);
        held.put(req.resource(), lease);
        return lease;
    }
}
