package transfers

import (
	"context"
	"errors"
	"testing"
)

type fakeRepo struct{ balance int64 }

func (f *fakeRepo) Insert(context.Context, *Transfer) error              { return nil }
func (f *fakeRepo) MarkSubmitted(context.Context, string, string) error { return nil }
func (f *fakeRepo) Balance(context.Context, string) (int64, error)      { return f.balance, nil }

func TestInsufficientFunds(t *testing.T) {
	s := &Service{Repo: &fakeRepo{balance: 100}, NewID: func() string { return "tr_1" }}
	_, err := s.Create(context.Background(), "acc_1", "INV-2024-118", 500, "EUR", "DE89370400440532013000")
	var ce *CodedError
	if !errors.As(err, &ce) || ce.Code != CodeInsufficientFunds {
		t.Fatalf("err = %v", err)
	}
}
