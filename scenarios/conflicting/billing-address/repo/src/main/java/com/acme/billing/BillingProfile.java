package com.acme.billing;

public record BillingProfile(
        String customerId,
        String legalName,
        String billingAddress,
        String billingEmail,
        String vatNumber,
        // Kept for the shipping service; not part of this API and not printed on invoices.
        String shippingAddress,
        long version) {

    public BillingProfile withVersion(long next) {
        return new BillingProfile(customerId, legalName, billingAddress, billingEmail,
                vatNumber, shippingAddress, next);
    }
}
