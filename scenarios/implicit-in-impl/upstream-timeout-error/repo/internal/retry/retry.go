package retry

import (
	"context"
	"errors"
	"time"

	"github.com/northwind/stockd/internal/inventory"
)

// Policy is an exponential backoff policy.
type Policy struct {
	Attempts int
	Base     time.Duration
	Max      time.Duration
}

var Default = Policy{Attempts: 3, Base: 100 * time.Millisecond, Max: 2 * time.Second}

// Transient reports whether an upstream failure may succeed if repeated.
func Transient(err error) bool {
	return errors.Is(err, inventory.ErrTimeout) || errors.Is(err, inventory.ErrUnavailable)
}

// Do runs fn until it succeeds, fails with a non-transient error, or the
// attempts are used up; it returns the last error.
func Do(ctx context.Context, p Policy, fn func(context.Context) error) error {
	wait := p.Base
	var err error
	for i := 0; i < p.Attempts; i++ {
		if err = fn(ctx); err == nil || !Transient(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		if wait *= 2; wait > p.Max {
			wait = p.Max
		}
	}
	return err
}
