package com.marketly.payouts;

import java.math.BigInteger;
import java.util.Optional;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.marketly.payouts.privacy.LogMasker;

public class PayoutMethodService {
    private static final Logger log = LoggerFactory.getLogger(PayoutMethodService.class);

    public static class SellerNotFound extends RuntimeException {}
    public static class InvalidIban extends RuntimeException {}

    public interface Sellers { Optional<String> verifiedName(String sellerId); }
    public interface Vault { String tokenize(PayoutMethod method); }

    private final Sellers sellers;
    private final Vault vault;

    public PayoutMethodService(Sellers sellers, Vault vault) {
        this.sellers = sellers;
        this.vault = vault;
    }

    public PayoutMethod add(String sellerId, String holderName, String iban) {
        sellers.verifiedName(sellerId).orElseThrow(SellerNotFound::new);
        String compact = iban.replace(" ", "").toUpperCase();
        if (!checksumOk(compact)) {
            throw new InvalidIban();
        }
        PayoutMethod method = new PayoutMethod(null, sellerId, holderName, compact);
        String token = vault.tokenize(method);
        log.info("payout method stored token={} method={}", token, LogMasker.render(method));
        return new PayoutMethod(token, sellerId, holderName, compact);
    }

    /** ISO 13616 mod-97 check. */
    static boolean checksumOk(String iban) {
        if (iban.length() < 15 || iban.length() > 34) return false;
        String rearranged = iban.substring(4) + iban.substring(0, 4);
        StringBuilder digits = new StringBuilder();
        for (char c : rearranged.toCharArray()) {
            digits.append(Character.isLetter(c) ? String.valueOf(c - 'A' + 10) : String.valueOf(c));
        }
        return new BigInteger(digits.toString()).mod(BigInteger.valueOf(97)).intValue() == 1;
    }
}
