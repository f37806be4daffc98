package com.marketly.payouts;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import com.marketly.payouts.privacy.LogMasker;

class PayoutMethodServiceTest {
    private final PayoutMethodService service = new PayoutMethodService(
            id -> id.equals("s1") ? Optional.of("Ana Lima") : Optional.empty(),
            method -> "pm_tok_1");

    @Test
    void validIbanIsStoredByToken() {
        PayoutMethod m = service.add("s1", "Ana Lima", "DE89 3704 0044 0532 0130 00");
        assertEquals("pm_tok_1", m.id());
        assertEquals("3000", m.last4());
    }

    @Test
    void badChecksumIsRejected() {
        assertThrows(PayoutMethodService.InvalidIban.class,
                () -> service.add("s1", "Ana Lima", "DE00370400440532013000"));
    }

    @Test
    void logsShowCountryButNotAccount() {
        Map<String, Object> rendered = LogMasker.render(new PayoutMethod("pm_1", "s1", "Ana Lima", "DE89370400440532013000"));
        assertEquals("DE", rendered.get("ibanCountry"));
        assertEquals("<FINANCIAL>", rendered.get("payoutIban"));
    }
}
