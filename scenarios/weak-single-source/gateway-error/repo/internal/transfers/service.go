package transfers

import (
	"context"
	"errors"

	"github.com/fernpay/transfers/internal/partner"
)

type Transfer struct {
	ID          string
	Reference   string
	AccountID   string
	AmountMinor int64
	Currency    string
	IBAN        string
	PartnerID   string
	State       string
}

type Repo interface {
	Insert(ctx context.Context, t *Transfer) error
	MarkSubmitted(ctx context.Context, id, partnerID string) error
	Balance(ctx context.Context, accountID string) (int64, error)
}

// Error codes surfaced to API clients.
const (
	CodeInsufficientFunds = "INSUFFICIENT_FUNDS"
	CodePayoutRejected    = "PAYOUT_REJECTED"
	// GATEWAY_ERROR can be retried by clients.
	CodeGatewayError = "GATEWAY_ERROR"
)

type CodedError struct{ Code string }

func (e *CodedError) Error() string { return e.Code }

type Service struct {
	Repo    Repo
	Partner *partner.Client
	NewID   func() string
}

func (s *Service) Create(ctx context.Context, accountID, reference string, amount int64, currency, iban string) (*Transfer, error) {
	bal, err := s.Repo.Balance(ctx, accountID)
	if err != nil {
		return nil, err
	}
	if bal < amount {
		return nil, &CodedError{CodeInsufficientFunds}
	}
	t := &Transfer{ID: s.NewID(), Reference: reference, AccountID: accountID, AmountMinor: amount, Currency: currency, IBAN: iban, State: "created"}
	if err := s.Repo.Insert(ctx, t); err != nil {
		return nil, err
	}
	res, err := s.Partner.SubmitPayout(ctx, partner.PayoutRequest{
		Reference: reference, AmountMinor: amount, Currency: currency, IBAN: iban,
	})
	switch {
	case errors.Is(err, partner.ErrRejected):
		return nil, &CodedError{CodePayoutRejected}
	case errors.Is(err, partner.ErrUpstream):
		return nil, &CodedError{CodeGatewayError}
	case err != nil:
		return nil, err
	}
	t.PartnerID, t.State = res.PartnerID, "submitted"
	return t, s.Repo.MarkSubmitted(ctx, t.ID, res.PartnerID)
}
