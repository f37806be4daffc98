package subscriptions

import (
	"errors"
	"net/url"
	"time"
)

// Subscription is a webhook endpoint and the events it receives.
type Subscription struct {
	ID             string
	URL            string
	Events         []string
	MaxAttempts    int
	RetryDelay     time.Duration
	TimeoutSeconds int
	CreatedAt      time.Time
}

// CreateParams is the decoded body of POST /subscriptions.
type CreateParams struct {
	URL            string   `json:"url"`
	Events         []string `json:"events"`
	MaxAttempts    int      `json:"max_attempts"`
	RetryDelay     int64    `json:"retry_delay"`
	TimeoutSeconds int      `json:"timeout_seconds"`
}

var (
	ErrInvalidURL   = errors.New("INVALID_URL")
	ErrNoEvents     = errors.New("NO_EVENTS")
	ErrDelayTooLong = errors.New("RETRY_DELAY_OUT_OF_RANGE")
)

const (
	defaultRetryDelay = 500 * time.Millisecond
	maxRetryDelay     = 10 * time.Minute
	defaultAttempts   = 5
	defaultTimeout    = 10
)

// New validates params and builds a subscription.
func New(id string, p CreateParams, now time.Time) (*Subscription, error) {
	u, err := url.Parse(p.URL)
	if err != nil || u.Scheme != "https" {
		return nil, ErrInvalidURL
	}
	if len(p.Events) == 0 {
		return nil, ErrNoEvents
	}
	s := &Subscription{
		ID:             id,
		URL:            p.URL,
		Events:         p.Events,
		MaxAttempts:    defaultAttempts,
		RetryDelay:     defaultRetryDelay,
		TimeoutSeconds: defaultTimeout,
		CreatedAt:      now,
	}
	if p.MaxAttempts > 0 {
		s.MaxAttempts = p.MaxAttempts
	}
	if p.RetryDelay > 0 {
		s.RetryDelay = time.Duration(p.RetryDelay) * time.Millisecond
	}
	if s.RetryDelay > maxRetryDelay {
		return nil, ErrDelayTooLong
	}
	if p.TimeoutSeconds > 0 {
		s.TimeoutSeconds = p.TimeoutSeconds
	}
	return s, nil
}
