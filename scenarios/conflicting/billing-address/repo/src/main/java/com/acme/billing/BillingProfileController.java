package com.acme.billing;

import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.*;

import com.acme.billing.logging.PiiRedactor;

@RestController
@RequestMapping("/customers/{customerId}/billing-profile")
public class BillingProfileController {
    private static final Logger log = LoggerFactory.getLogger(BillingProfileController.class);

    private final BillingProfileService service;
    private final PiiRedactor redactor;

    public BillingProfileController(BillingProfileService service, PiiRedactor redactor) {
        this.service = service;
        this.redactor = redactor;
    }

    @PutMapping
    public ResponseEntity<?> update(@PathVariable String customerId,
                                    @RequestHeader(value = "If-Match", required = false) Long ifMatch,
                                    @RequestBody Map<String, Object> body) {
        log.info("billing profile update customer={} body={}", customerId, redactor.redact(body));
        try {
            BillingProfile saved = service.replace(customerId, body, ifMatch);
            return ResponseEntity.ok(Map.of("version", saved.version()));
        } catch (BillingProfileService.NotFound e) {
            return error(404, "CUSTOMER_NOT_FOUND", "No customer with this id.");
        } catch (BillingProfileService.InvalidVat e) {
            return error(422, "INVALID_VAT_NUMBER", "The VAT number was rejected by VIES.");
        } catch (BillingProfileService.StaleVersion e) {
            return error(409, "VERSION_CONFLICT", "The profile changed since it was read; reload and retry.");
        }
    }

    private static ResponseEntity<?> error(int status, String code, String message) {
        return ResponseEntity.status(status).body(Map.of("code", code, "message", message));
    }
}
