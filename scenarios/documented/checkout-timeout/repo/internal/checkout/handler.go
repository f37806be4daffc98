package checkout

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"
)

const (
	defaultPaymentTimeout = 15000
	maxPaymentTimeout     = 60000
)

// CreateRequest is the body of POST /checkouts.
type CreateRequest struct {
	CartID         string `json:"cart_id"`
	CustomerEmail  string `json:"customer_email,omitempty"`
	ReturnURL      string `json:"return_url,omitempty"`
	PaymentTimeout int    `json:"payment_timeout,omitempty"`
}

type CreateResponse struct {
	CheckoutID string    `json:"checkout_id"`
	ExpiresAt  time.Time `json:"expires_at"`
}

type Authoriser interface {
	Authorise(r *http.Request, cartID string, wait time.Duration) (string, error)
}

var ErrCartEmpty = errors.New("cart is empty")

type Handler struct {
	Provider Authoriser
	Now      func() time.Time
}

// paymentWait converts the wire value into the wait handed to the provider.
func paymentWait(req CreateRequest) (time.Duration, error) {
	ms := req.PaymentTimeout
	if ms == 0 {
		ms = defaultPaymentTimeout
	}
	if ms < 0 || ms > maxPaymentTimeout {
		return 0, errors.New("payment_timeout out of range")
	}
	return time.Duration(ms) * time.Millisecond, nil
}

func (h *Handler) Create(w http.ResponseWriter, r *http.Request) {
	var req CreateRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST")
		return
	}
	wait, err := paymentWait(req)
	if err != nil {
		writeError(w, http.StatusBadRequest, "PAYMENT_TIMEOUT_INVALID")
		return
	}
	id, err := h.Provider.Authorise(r, req.CartID, wait)
	switch {
	case errors.Is(err, ErrCartEmpty):
		writeError(w, http.StatusUnprocessableEntity, "CART_EMPTY")
		return
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, "PAYMENT_PROVIDER_UNAVAILABLE")
		return
	}
	resp := CreateResponse{CheckoutID: id, ExpiresAt: h.Now().Add(wait)}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(resp)
}

func writeError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"code": code})
}
