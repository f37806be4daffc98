package com.northwind.wallet;

import java.util.Optional;

public interface WalletRepository {
    record Wallet(String id, String currency, String ledgerAccount) {}

    Optional<Wallet> find(String walletId);
}
