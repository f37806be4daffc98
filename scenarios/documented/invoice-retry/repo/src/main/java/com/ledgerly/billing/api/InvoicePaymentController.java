package com.ledgerly.billing.api;

import com.ledgerly.billing.error.BillingException;
import com.ledgerly.billing.service.InvoicePaymentService;
import com.ledgerly.billing.service.PaymentReceipt;
import java.util.Map;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.*;

@RestController
@RequestMapping("/invoices/{invoiceId}/payments")
public class InvoicePaymentController {
    private final InvoicePaymentService service;

    public InvoicePaymentController(InvoicePaymentService service) {
        this.service = service;
    }

    public record PayRequest(String paymentMethodId, long invoiceVersion) {}

    @PostMapping
    public ResponseEntity<PaymentReceipt> pay(@PathVariable String invoiceId, @RequestBody PayRequest body) {
        return ResponseEntity.status(201).body(service.pay(invoiceId, body.paymentMethodId(), body.invoiceVersion()));
    }

    @ExceptionHandler(BillingException.class)
    public ResponseEntity<Map<String, String>> onError(BillingException e) {
        return ResponseEntity.status(e.error().status())
                .body(Map.of("code", e.error().name(), "message", e.getMessage()));
    }
}
