package subscriptions

import (
	"testing"
	"time"
)

var now = time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)

func TestRetryDelayFromParams(t *testing.T) {
	s, err := New("sub_1", CreateParams{URL: "https://example.com/h", Events: []string{"invoice.paid"}, RetryDelay: 250}, now)
	if err != nil {
		t.Fatal(err)
	}
	if s.RetryDelay != 250*time.Millisecond {
		t.Fatalf("RetryDelay = %v", s.RetryDelay)
	}
}

func TestDefaults(t *testing.T) {
	s, err := New("sub_2", CreateParams{URL: "https://example.com/h", Events: []string{"invoice.paid"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxAttempts != 5 || s.TimeoutSeconds != 10 {
		t.Fatalf("defaults: %+v", s)
	}
}

func TestRejectsPlainHTTP(t *testing.T) {
	if _, err := New("sub_3", CreateParams{URL: "http://example.com", Events: []string{"x"}}, now); err != ErrInvalidURL {
		t.Fatalf("err = %v", err)
	}
}
