package partner

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// GetPayoutState reads the state of a payout the bank already knows. Reads have no side
// effects at the bank, so 5xx answers are retried here with a short backoff.
func (c *Client) GetPayoutState(ctx context.Context, partnerID string) (string, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL+"/v2/payouts/"+partnerID, nil)
		if err != nil {
			return "", err
		}
		resp, err := c.HTTP.Do(req)
		if err == nil && resp.StatusCode < 500 {
			defer resp.Body.Close()
			var out PayoutResult
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				return "", err
			}
			return out.State, nil
		}
		if resp != nil {
			resp.Body.Close()
		}
		lastErr = fmt.Errorf("%w: attempt %d", ErrUpstream, attempt+1)
		time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
	}
	return "", lastErr
}
