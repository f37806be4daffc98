package com.northwind.wallet;

import com.northwind.ledger.LedgerClient;
import com.northwind.ledger.LedgerTimeoutException;
import com.northwind.ledger.PostingRejectedException;
import com.northwind.ledger.Posting;

import java.util.UUID;

public class TopUpService {
    public record Result(String topUpId, long balanceMinor) {}

    private final LedgerClient ledger;
    private final WalletRepository wallets;

    public TopUpService(LedgerClient ledger, WalletRepository wallets) {
        this.ledger = ledger;
        this.wallets = wallets;
    }

    public Result topUp(String walletId, String idempotencyKey, long amountMinor, String currency,
                        String fundingSourceId) {
        var wallet = wallets.find(walletId)
                .orElseThrow(() -> new WalletException("WALLET_NOT_FOUND", 404, null));
        if (!wallet.currency().equals(currency)) {
            throw new WalletException("CURRENCY_MISMATCH", 422, null);
        }
        String topUpId = "tu_" + UUID.randomUUID();
        Posting posting = Posting.credit(wallet.ledgerAccount(), amountMinor, currency)
                .debit(fundingSourceId)
                .reference(topUpId)
                .idempotencyKey(idempotencyKey);
        try {
            long balance = ledger.post(posting);
            return new Result(topUpId, balance);
        } catch (PostingRejectedException e) {
            throw new WalletException("FUNDING_DECLINED", 402, e);
        } catch (LedgerTimeoutException e) {
            // What the ledger did with the posting is up to LedgerClient.post: see its javadoc.
            throw new WalletException("LEDGER_TIMEOUT", 504, e);
        }
    }
}
