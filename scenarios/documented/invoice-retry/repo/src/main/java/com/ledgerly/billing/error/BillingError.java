package com.ledgerly.billing.error;

import org.springframework.http.HttpStatus;

/** The error catalogue exposed to API clients; kept in sync with docs/errors.md. */
public enum BillingError {
    INVOICE_NOT_FOUND(HttpStatus.NOT_FOUND, false),
    INVOICE_ALREADY_PAID(HttpStatus.CONFLICT, false),
    VERSION_CONFLICT(HttpStatus.CONFLICT, true),
    GATEWAY_UNAVAILABLE(HttpStatus.SERVICE_UNAVAILABLE, true),
    CARD_DECLINED(HttpStatus.PAYMENT_REQUIRED, false);

    private final HttpStatus status;
    private final boolean retryable;

    BillingError(HttpStatus status, boolean retryable) {
        this.status = status;
        this.retryable = retryable;
    }

    public HttpStatus status() {
        return status;
    }

    /** Whether a client may repeat the same request and expect a different outcome. */
    public boolean retryable() {
        return retryable;
    }
}
