package com.northwind.wallet;

import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class TopUpServiceTest {
    private final WalletRepository wallets = id -> id.equals("w_1")
            ? Optional.of(new WalletRepository.Wallet("w_1", "EUR", "acct:wallet:w_1"))
            : Optional.empty();

    @Test
    void unknownWallet() {
        var service = new TopUpService(null, wallets);
        var e = assertThrows(WalletException.class, () -> service.topUp("w_9", "k1", 500, "EUR", "fs_1"));
        assertEquals("WALLET_NOT_FOUND", e.code());
    }

    @Test
    void currencyMustMatchWallet() {
        var service = new TopUpService(null, wallets);
        var e = assertThrows(WalletException.class, () -> service.topUp("w_1", "k1", 500, "USD", "fs_1"));
        assertEquals(422, e.status());
    }
}
