package billing

import (
	"encoding/json"
	"errors"
	"net/http"
)

// APIError is an error with a stable code that is safe to show to clients.
type APIError struct {
	Code    string
	Status  int
	Message string
	// Final marks outcomes the client must not repeat: the attempt reached a decision
	// (a processor decline, a state conflict) and repeating it cannot change that.
	Final bool
}

func (e *APIError) Error() string { return e.Code + ": " + e.Message }

var (
	ErrInvoiceNotFound = &APIError{Code: "INVOICE_NOT_FOUND", Status: http.StatusNotFound,
		Message: "No invoice with this id.", Final: true}
	ErrInvoiceNotOpen = &APIError{Code: "INVOICE_NOT_OPEN", Status: http.StatusConflict,
		Message: "The invoice is already paid or voided.", Final: true}
	ErrPaymentFailed = &APIError{Code: "PAYMENT_FAILED", Status: http.StatusPaymentRequired,
		Message: "The payment processor did not accept the charge.", Final: true}
	ErrProcessorUnavailable = &APIError{Code: "PROCESSOR_UNAVAILABLE", Status: http.StatusServiceUnavailable,
		Message: "The payment processor could not be reached.", Final: false}
)

// Retryable reports whether a client may repeat the request that produced err.
func Retryable(err error) bool {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return !apiErr.Final
	}
	return true
}

func writeError(w http.ResponseWriter, err error) {
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		apiErr = ErrProcessorUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	if Retryable(apiErr) {
		w.Header().Set("Retry-After", "2")
	}
	w.WriteHeader(apiErr.Status)
	_ = json.NewEncoder(w).Encode(map[string]string{"code": apiErr.Code, "message": apiErr.Message})
}
