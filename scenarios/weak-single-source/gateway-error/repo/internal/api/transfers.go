package api

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/fernpay/transfers/internal/transfers"
)

type createTransferBody struct {
	AccountID   string `json:"account_id"`
	Reference   string `json:"reference"`
	AmountMinor int64  `json:"amount_minor"`
	Currency    string `json:"currency"`
	IBAN        string `json:"iban"`
}

var statusFor = map[string]int{
	transfers.CodeInsufficientFunds: http.StatusUnprocessableEntity,
	transfers.CodePayoutRejected:    http.StatusUnprocessableEntity,
	transfers.CodeGatewayError:      http.StatusBadGateway,
}

func CreateTransfer(svc *transfers.Service) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var b createTransferBody
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			http.Error(w, `{"code":"INVALID_JSON"}`, http.StatusBadRequest)
			return
		}
		t, err := svc.Create(r.Context(), b.AccountID, b.Reference, b.AmountMinor, b.Currency, b.IBAN)
		var ce *transfers.CodedError
		if errors.As(err, &ce) {
			w.WriteHeader(statusFor[ce.Code])
			_ = json.NewEncoder(w).Encode(map[string]string{"code": ce.Code})
			return
		}
		if err != nil {
			http.Error(w, `{"code":"INTERNAL"}`, http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]string{"transfer_id": t.ID, "state": t.State})
	}
}
