package billing

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"
)

// Service charges invoices.
type Service struct {
	invoices  Invoices
	processor Processor
}

func NewService(invoices Invoices, processor Processor) *Service {
	return &Service{invoices: invoices, processor: processor}
}

type chargeRequest struct {
	PaymentMethodID string `json:"payment_method_id"`
}

type chargeResponse struct {
	ChargeID      string `json:"charge_id"`
	AmountCharged int64  `json:"amount_charged"`
	Status        string `json:"status"`
}

func (s *Service) HandleCharge(w http.ResponseWriter, r *http.Request) {
	var req chargeRequest
	_ = json.NewDecoder(r.Body).Decode(&req)
	resp, err := s.Charge(r.Context(), chi.URLParam(r, "invoice_id"), req.PaymentMethodID,
		r.Header.Get("Idempotency-Key"))
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func (s *Service) Charge(ctx context.Context, invoiceID, methodID, key string) (*chargeResponse, error) {
	inv, ok := s.invoices.Get(invoiceID)
	if !ok {
		return nil, ErrInvoiceNotFound
	}
	if inv.State != "open" {
		return nil, ErrInvoiceNotOpen
	}
	if methodID == "" {
		methodID = inv.DefaultMethodID
	}
	res, err := s.processor.Capture(ctx, methodID, inv.AmountDue, inv.Currency, key)
	switch {
	case errors.Is(err, errDeclined):
		return nil, ErrPaymentFailed
	case err != nil:
		return nil, ErrProcessorUnavailable
	}
	status := "paid"
	if res.Async {
		status = "pending"
	}
	s.invoices.MarkPaid(invoiceID, res.ChargeID)
	return &chargeResponse{ChargeID: res.ChargeID, AmountCharged: inv.AmountDue, Status: status}, nil
}
