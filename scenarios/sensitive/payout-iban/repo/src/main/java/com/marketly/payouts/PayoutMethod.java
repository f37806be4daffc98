package com.marketly.payouts;

import com.marketly.payouts.privacy.DataClass;
import com.marketly.payouts.privacy.DataClass.Category;

public class PayoutMethod {
    @DataClass(Category.NONE)
    private final String id;

    @DataClass(Category.NONE)
    private final String sellerId;

    @DataClass(Category.PERSONAL)
    private final String holderName;

    @DataClass(Category.FINANCIAL)
    private final String payoutIban;

    @DataClass(Category.NONE)
    private final String ibanCountry;

    public PayoutMethod(String id, String sellerId, String holderName, String payoutIban) {
        this.id = id;
        this.sellerId = sellerId;
        this.holderName = holderName;
        this.payoutIban = payoutIban;
        this.ibanCountry = payoutIban.substring(0, 2);
    }

    public String id() { return id; }
    public String sellerId() { return sellerId; }
    public String holderName() { return holderName; }
    public String payoutIban() { return payoutIban; }
    public String ibanCountry() { return ibanCountry; }
    public String last4() { return payoutIban.substring(payoutIban.length() - 4); }
}
