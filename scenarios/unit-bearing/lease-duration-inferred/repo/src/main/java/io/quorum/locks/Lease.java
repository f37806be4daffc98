package io.quorum.locks;

import java.time.Instant;

public record Lease(String id, String resource, String holder, long fencingToken,
                    Instant expiresAt, long heartbeatIntervalMs) {
}
