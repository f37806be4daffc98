package accounts

import (
	"errors"
	"testing"

	"github.com/northbank/ledger/internal/events"
)

type known map[string]bool

func (k known) Exists(id string) bool { return k[id] }

type memOutbox struct{ got []events.Event }

func (m *memOutbox) Append(e events.Event) error { m.got = append(m.got, e); return nil }

func newService() (*Service, *memOutbox) {
	out := &memOutbox{}
	n := 0
	return &Service{Customers: known{"c1": true, "c2": true}, Outbox: out,
		NewID: func() string { n++; return "id" + string(rune('0'+n)) }}, out
}

func TestBusinessNeedsCompanyNumber(t *testing.T) {
	s, _ := newService()
	_, err := s.Open(OpenRequest{OwnerID: "c1", Type: "business", Currency: "EUR"})
	if !errors.Is(err, ErrMissingHolderDetail) {
		t.Fatalf("want MISSING_HOLDER_DETAILS, got %v", err)
	}
}

func TestJointAccountHasTwoHolders(t *testing.T) {
	s, out := newService()
	acc, err := s.Open(OpenRequest{OwnerID: "c1", Type: "joint", Currency: "EUR", CoHolderID: "c2"})
	if err != nil || acc.CoHolderID != "c2" {
		t.Fatalf("joint account not opened: %v %+v", err, acc)
	}
	if out.got[0].Type != "account.opened" {
		t.Fatalf("unexpected event %q", out.got[0].Type)
	}
}

func TestUnknownTypeIsRejected(t *testing.T) {
	s, _ := newService()
	if _, err := s.Open(OpenRequest{OwnerID: "c1", Type: "savings", Currency: "EUR"}); !errors.Is(err, ErrUnsupportedKind) {
		t.Fatalf("want UNSUPPORTED_ACCOUNT_TYPE, got %v", err)
	}
}
