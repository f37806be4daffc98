package accounts

import (
	"fmt"
	"time"

	"github.com/northbank/ledger/internal/events"
)

type Customers interface {
	Exists(id string) bool
}

type Service struct {
	Customers Customers
	Outbox    events.Outbox
	NewID     func() string
}

type OpenRequest struct {
	OwnerID       string `json:"owner_id"`
	Type          string `json:"type"`
	Currency      string `json:"currency"`
	CompanyNumber string `json:"company_number"`
	CoHolderID    string `json:"co_holder_id"`
}

// Open validates the request against the product rules of the requested kind.
func (s *Service) Open(req OpenRequest) (*Account, error) {
	if !s.Customers.Exists(req.OwnerID) {
		return nil, ErrOwnerNotFound
	}
	acc := &Account{ID: s.NewID(), OwnerID: req.OwnerID, Kind: Kind(req.Type), Currency: req.Currency}
	switch acc.Kind {
	case KindPersonal:
		acc.OverdraftLimit = 50_000
	case KindBusiness:
		if req.CompanyNumber == "" {
			return nil, fmt.Errorf("%w: company_number", ErrMissingHolderDetail)
		}
		acc.CompanyNumber = req.CompanyNumber
		acc.MonthlyFee = 900
	case KindJoint:
		if req.CoHolderID == "" || !s.Customers.Exists(req.CoHolderID) {
			return nil, fmt.Errorf("%w: co_holder_id", ErrMissingHolderDetail)
		}
		acc.CoHolderID = req.CoHolderID
		acc.OverdraftLimit = 100_000
	default:
		return nil, ErrUnsupportedKind
	}
	err := s.Outbox.Append(events.Event{
		ID:         s.NewID(),
		Type:       "account.opened",
		Aggregate:  acc.ID,
		OccurredAt: time.Now().UTC(),
		Payload:    map[string]any{"kind": string(acc.Kind), "currency": acc.Currency},
	})
	return acc, err
}
