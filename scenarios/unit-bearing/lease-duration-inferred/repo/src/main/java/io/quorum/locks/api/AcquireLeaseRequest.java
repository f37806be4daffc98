package io.quorum.locks.api;

public record AcquireLeaseRequest(
        String resource,
        String holder,
        long leaseDuration,
        long heartbeatIntervalMs) {
}
