package com.acme.billing.logging;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import org.springframework.stereotype.Component;

/**
 * Masks request fields before they reach application logs. Fields listed here are treated
 * as personal data (GDPR Art. 4): sole traders invoice under their home address and their
 * own name, so these values identify a natural person.
 */
@Component
public class PiiRedactor {
    public static final Set<String> PII_FIELDS = Set.of(
            "legal_name",
            "billing_address",
            "billing_email",
            "shipping_address");

    private static final String MASK = "[redacted:pii]";

    public Map<String, Object> redact(Map<String, Object> body) {
        Map<String, Object> out = new LinkedHashMap<>();
        body.forEach((key, value) -> out.put(key, PII_FIELDS.contains(key) ? MASK : value));
        return out;
    }
}
