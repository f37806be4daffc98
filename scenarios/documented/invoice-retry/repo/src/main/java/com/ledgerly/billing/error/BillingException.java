package com.ledgerly.billing.error;

public class BillingException extends RuntimeException {
    private final BillingError error;

    public BillingException(BillingError error, String message) {
        super(message);
        this.error = error;
    }

    public BillingError error() {
        return error;
    }
}
