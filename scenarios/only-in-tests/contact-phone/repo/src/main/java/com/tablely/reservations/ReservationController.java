package com.tablely.reservations;

import java.time.OffsetDateTime;
import java.util.Map;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.*;

@RestController
@RequestMapping("/reservations")
public class ReservationController {
    private final ReservationService service;

    public ReservationController(ReservationService service) {
        this.service = service;
    }

    public record BookRequest(String restaurantId, int partySize, OffsetDateTime reservedFor,
                              String guestName, String contactPhone, String specialRequests) {}

    @PostMapping
    public ResponseEntity<Map<String, Object>> book(@RequestBody BookRequest req) {
        Reservation r = service.book(req.restaurantId(), req.partySize(), req.reservedFor(),
                req.guestName(), req.contactPhone(), req.specialRequests());
        return ResponseEntity.status(201).body(Map.of("reservation_id", r.id(), "status", r.status().name()));
    }

    @ExceptionHandler(ReservationException.class)
    public ResponseEntity<Map<String, String>> onError(ReservationException e) {
        return ResponseEntity.status(e.status()).body(Map.of("code", e.code()));
    }
}
