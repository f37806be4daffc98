package dev.hooksmith.delivery;

import java.util.Optional;

public interface DeliveryRepository {
    Optional<Delivery> find(String id);

    void save(Delivery d);
}
