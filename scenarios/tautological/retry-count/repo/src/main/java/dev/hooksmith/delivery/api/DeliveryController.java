package dev.hooksmith.delivery.api;

import dev.hooksmith.delivery.Delivery;
import dev.hooksmith.delivery.DeliveryRepository;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import java.util.LinkedHashMap;
import java.util.Map;

@RestController
public class DeliveryController {
    private final DeliveryRepository deliveries;

    public DeliveryController(DeliveryRepository deliveries) {
        this.deliveries = deliveries;
    }

    @GetMapping("/deliveries/{deliveryId}")
    public ResponseEntity<?> get(@PathVariable String deliveryId) {
        return deliveries.find(deliveryId)
                .<ResponseEntity<?>>map(d -> ResponseEntity.ok(view(d)))
                .orElseGet(() -> ResponseEntity.status(404).body(Map.of("code", "DELIVERY_NOT_FOUND")));
    }

    static Map<String, Object> view(Delivery d) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("delivery_id", d.id());
        m.put("event_id", d.eventId());
        m.put("state", d.state().name().toLowerCase());
        m.put("retry_count", d.retryCount());
        m.put("last_status_code", d.lastStatusCode());
        m.put("next_attempt_at", d.nextAttemptAt() == null ? null : d.nextAttemptAt().toString());
        return m;
    }
}
