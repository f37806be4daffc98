package com.northwind.wallet;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.*;

import java.util.Map;

@RestController
@RequestMapping("/wallets/{walletId}/top-ups")
public class TopUpController {
    private final TopUpService topUps;

    public TopUpController(TopUpService topUps) {
        this.topUps = topUps;
    }

    public record TopUpBody(long amountMinor, String currency, String fundingSourceId) {}

    @PostMapping
    public ResponseEntity<?> topUp(@PathVariable String walletId,
                                   @RequestHeader(value = "Idempotency-Key", required = false) String idempotencyKey,
                                   @RequestBody TopUpBody body) {
        try {
            TopUpService.Result r = topUps.topUp(walletId, idempotencyKey, body.amountMinor(), body.currency(),
                    body.fundingSourceId());
            return ResponseEntity.status(HttpStatus.CREATED)
                    .body(Map.of("top_up_id", r.topUpId(), "balance_minor", r.balanceMinor()));
        } catch (WalletException e) {
            return ResponseEntity.status(e.status()).body(Map.of("code", e.code()));
        }
    }
}
