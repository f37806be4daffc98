package partner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// ErrUpstream wraps any failure talking to the partner bank.
var ErrUpstream = errors.New("partner upstream failure")

// ErrRejected is returned when the partner bank answered and refused the payout.
var ErrRejected = errors.New("partner rejected payout")

type Client struct {
	BaseURL string
	HTTP    *http.Client
}

func New(baseURL string) *Client {
	return &Client{BaseURL: baseURL, HTTP: &http.Client{Timeout: 20 * time.Second}}
}

type PayoutRequest struct {
	Reference   string `json:"reference"`
	AmountMinor int64  `json:"amount_minor"`
	Currency    string `json:"currency"`
	IBAN        string `json:"iban"`
}

type PayoutResult struct {
	PartnerID string `json:"id"`
	State     string `json:"state"`
}

// SubmitPayout posts one payout instruction to the partner bank.
func (c *Client) SubmitPayout(ctx context.Context, p PayoutRequest) (*PayoutResult, error) {
	body, _ := json.Marshal(p)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+"/v2/payouts", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUpstream, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 500:
		return nil, fmt.Errorf("%w: status %d", ErrUpstream, resp.StatusCode)
	case resp.StatusCode >= 400:
		return nil, ErrRejected
	}
	var out PayoutResult
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("%w: bad body: %v", ErrUpstream, err)
	}
	return &out, nil
}
