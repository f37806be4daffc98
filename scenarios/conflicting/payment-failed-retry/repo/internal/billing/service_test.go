package billing

import (
	"context"
	"errors"
	"testing"
)

type failingProcessor struct{}

func (failingProcessor) Capture(context.Context, string, int64, string, string) (CaptureResult, error) {
	return CaptureResult{}, errors.New("dial tcp: i/o timeout")
}

func TestChargeMarksInvoicePaid(t *testing.T) {
	inv := &memoryInvoices{byID: map[string]Invoice{
		"in_1": {ID: "in_1", State: "open", Currency: "EUR", DefaultMethodID: "pm_ok", AmountDue: 4200},
	}}
	resp, err := NewService(inv, sandboxProcessor{}).Charge(context.Background(), "in_1", "", "k1")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != "paid" || resp.AmountCharged != 4200 {
		t.Fatalf("unexpected response %+v", resp)
	}
}

func TestUnreachableProcessorIsRetryable(t *testing.T) {
	inv := &memoryInvoices{byID: map[string]Invoice{
		"in_2": {ID: "in_2", State: "open", Currency: "EUR", DefaultMethodID: "pm_ok", AmountDue: 100},
	}}
	_, err := NewService(inv, failingProcessor{}).Charge(context.Background(), "in_2", "", "k2")
	if !errors.Is(err, ErrProcessorUnavailable) || !Retryable(err) {
		t.Fatalf("want retryable PROCESSOR_UNAVAILABLE, got %v", err)
	}
}
