package com.acme.billing;

import static org.junit.jupiter.api.Assertions.*;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

class BillingProfileServiceTest {
    private final Map<String, BillingProfile> rows = new HashMap<>();
    private final BillingProfileService service = new BillingProfileService(
            new BillingProfileService.BillingProfileRepository() {
                public Optional<BillingProfile> find(String id) { return Optional.ofNullable(rows.get(id)); }
                public void save(BillingProfile p) { rows.put(p.customerId(), p); }
            },
            vat -> vat.startsWith("DE"));

    @Test
    void replaceIncrementsVersion() {
        rows.put("c1", new BillingProfile("c1", "Old GmbH", "Alte Str. 1", null, null, null, 3));
        BillingProfile saved = service.replace("c1",
                Map.of("legal_name", "New GmbH", "billing_address", "Neue Str. 2\n10115 Berlin"), null);
        assertEquals(4, saved.version());
        assertEquals("Neue Str. 2\n10115 Berlin", saved.billingAddress());
    }

    @Test
    void staleIfMatchIsRejected() {
        rows.put("c2", new BillingProfile("c2", "Acme", "Main St 1", null, null, null, 7));
        assertThrows(BillingProfileService.StaleVersion.class,
                () -> service.replace("c2", Map.of("legal_name", "Acme", "billing_address", "x"), 6L));
    }

    @Test
    void invalidVatIsRejected() {
        rows.put("c3", new BillingProfile("c3", "Acme", "Main St 1", null, null, null, 1));
        assertThrows(BillingProfileService.InvalidVat.class, () -> service.replace("c3",
                Map.of("legal_name", "Acme", "billing_address", "x", "vat_number", "FR123"), null));
    }
}
