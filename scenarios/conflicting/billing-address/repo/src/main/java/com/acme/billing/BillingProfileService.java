package com.acme.billing;

import java.util.Map;

import org.springframework.stereotype.Service;

@Service
public class BillingProfileService {
    public static class NotFound extends RuntimeException {}
    public static class InvalidVat extends RuntimeException {}
    public static class StaleVersion extends RuntimeException {}

    private final BillingProfileRepository repository;
    private final VatValidator vat;

    public BillingProfileService(BillingProfileRepository repository, VatValidator vat) {
        this.repository = repository;
        this.vat = vat;
    }

    public BillingProfile replace(String customerId, Map<String, Object> body, Long ifMatch) {
        BillingProfile current = repository.find(customerId).orElseThrow(NotFound::new);
        if (ifMatch != null && ifMatch != current.version()) {
            throw new StaleVersion();
        }
        String vatNumber = (String) body.get("vat_number");
        if (vatNumber != null && !vat.isValid(vatNumber)) {
            throw new InvalidVat();
        }
        BillingProfile next = new BillingProfile(customerId,
                (String) body.get("legal_name"),
                (String) body.get("billing_address"),
                (String) body.getOrDefault("billing_email", current.billingEmail()),
                vatNumber,
                current.shippingAddress(),
                current.version() + 1);
        repository.save(next);
        return next;
    }

    public interface BillingProfileRepository {
        java.util.Optional<BillingProfile> find(String customerId);
        void save(BillingProfile profile);
    }

    public interface VatValidator {
        boolean isValid(String vatNumber);
    }
}
