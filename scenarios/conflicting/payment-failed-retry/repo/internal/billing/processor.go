package billing

import (
	"context"
	"errors"
	"os"
)

// errDeclined is returned by a Processor when the card network or issuer declined.
var errDeclined = errors.New("processor: declined")

type CaptureResult struct {
	ChargeID string
	Async    bool
}

type Processor interface {
	Capture(ctx context.Context, methodID string, amount int64, currency, idempotencyKey string) (CaptureResult, error)
}

// NewProcessorFromEnv picks the sandbox processor unless PROCESSOR_LIVE_KEY is set.
func NewProcessorFromEnv() Processor {
	if os.Getenv("PROCESSOR_LIVE_KEY") == "" {
		return sandboxProcessor{}
	}
	return sandboxProcessor{live: true}
}

type sandboxProcessor struct{ live bool }

func (p sandboxProcessor) Capture(_ context.Context, methodID string, _ int64, _ string, key string) (CaptureResult, error) {
	if methodID == "pm_card_declined" {
		return CaptureResult{}, errDeclined
	}
	return CaptureResult{ChargeID: "ch_" + key}, nil
}

type Invoice struct {
	ID, State, Currency, DefaultMethodID string
	AmountDue                            int64
}

type Invoices interface {
	Get(id string) (Invoice, bool)
	MarkPaid(id, chargeID string)
}

type memoryInvoices struct{ byID map[string]Invoice }

func NewMemoryInvoices() Invoices { return &memoryInvoices{byID: map[string]Invoice{}} }

func (m *memoryInvoices) Get(id string) (Invoice, bool) { inv, ok := m.byID[id]; return inv, ok }

func (m *memoryInvoices) MarkPaid(id, _ string) {
	inv := m.byID[id]
	inv.State = "paid"
	m.byID[id] = inv
}
