package com.ledgerly.billing.service;

import com.ledgerly.billing.error.BillingError;
import com.ledgerly.billing.error.BillingException;
import org.springframework.stereotype.Service;

@Service
public class InvoicePaymentService {
    private final InvoiceRepository invoices;
    private final CardGateway gateway;

    public InvoicePaymentService(InvoiceRepository invoices, CardGateway gateway) {
        this.invoices = invoices;
        this.gateway = gateway;
    }

    public PaymentReceipt pay(String invoiceId, String paymentMethodId, long expectedVersion) {
        Invoice invoice = invoices.find(invoiceId)
                .orElseThrow(() -> new BillingException(BillingError.INVOICE_NOT_FOUND, invoiceId));
        if (invoice.isPaid()) {
            throw new BillingException(BillingError.INVOICE_ALREADY_PAID,
                    "invoice " + invoiceId + " was settled at " + invoice.paidAt());
        }
        if (invoice.version() != expectedVersion) {
            // 409s are retried by the SDK; see RetryingClient in the JS SDK.
            throw new BillingException(BillingError.VERSION_CONFLICT, "stale version");
        }
        GatewayResult result = gateway.charge(paymentMethodId, invoice.amountDue(), invoice.currency());
        if (result.declined()) {
            throw new BillingException(BillingError.CARD_DECLINED, result.reason());
        }
        Invoice paid = invoices.markPaid(invoice, result.chargeId());
        return new PaymentReceipt(paid.id(), result.chargeId(), paid.amountPaid());
    }
}
