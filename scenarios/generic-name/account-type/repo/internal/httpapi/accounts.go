package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/northbank/ledger/internal/accounts"
)

type AccountsHandler struct{ Svc *accounts.Service }

func (h AccountsHandler) Open(w http.ResponseWriter, r *http.Request) {
	var req accounts.OpenRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "malformed JSON", http.StatusBadRequest)
		return
	}
	acc, err := h.Svc.Open(req)
	switch {
	case errors.Is(err, accounts.ErrOwnerNotFound):
		writeErr(w, http.StatusNotFound, "OWNER_NOT_FOUND", "No customer with this owner_id.")
	case errors.Is(err, accounts.ErrUnsupportedKind):
		writeErr(w, http.StatusUnprocessableEntity, "UNSUPPORTED_ACCOUNT_TYPE", "The requested account type is not offered.")
	case errors.Is(err, accounts.ErrMissingHolderDetail):
		writeErr(w, http.StatusUnprocessableEntity, "MISSING_HOLDER_DETAILS", "A field required for this account type is missing.")
	case err != nil:
		http.Error(w, "internal error", http.StatusInternalServerError)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"account_id": acc.ID, "overdraft_limit": acc.OverdraftLimit})
	}
}

func writeErr(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"code": code, "message": msg})
}
