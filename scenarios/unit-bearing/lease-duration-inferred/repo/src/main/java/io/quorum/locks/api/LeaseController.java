package io.quorum.locks.api;

import io.quorum.locks.Lease;
import io.quorum.locks.LeaseService;
import io.quorum.locks.LeaseService.LeaseException;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import java.util.Map;

@RestController
public class LeaseController {
    private final LeaseService leases;

    public LeaseController(LeaseService leases) {
        this.leases = leases;
    }

    @PostMapping("/leases")
    public ResponseEntity<?> acquire(@RequestBody AcquireLeaseRequest req) {
        try {
            Lease lease = leases.acquire(req);
            return ResponseEntity.status(HttpStatus.CREATED).body(Map.of(
                    "lease_id", lease.id(),
                    "fencing_token", lease.fencingToken(),
                    "expires_at", lease.expiresAt().toString()));
        } catch (LeaseException e) {
            HttpStatus status = switch (e.code()) {
                case "LEASE_HELD" -> HttpStatus.CONFLICT;
                case "DURATION_OUT_OF_RANGE" -> HttpStatus.UNPROCESSABLE_ENTITY;
                default -> HttpStatus.BAD_REQUEST;
            };
            return ResponseEntity.status(status).body(Map.of("code", e.code(), "message", e.getMessage()));
        }
    }
}
