package inventory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

var (
	ErrTimeout     = errors.New("wms: timed out")
	ErrUnavailable = errors.New("wms: unavailable")
	ErrRejected    = errors.New("wms: rejected the hold")
	ErrOutOfStock  = errors.New("wms: out of stock")
)

type Client struct {
	BaseURL string
	HTTP    *http.Client
}

type Hold struct {
	ID        string `json:"id"`
	ExpiresAt string `json:"expires_at"`
}

func (c *Client) PlaceHold(ctx context.Context, sku, warehouse string, qty, holdSeconds int) (Hold, error) {
	body, _ := json.Marshal(map[string]any{"sku": sku, "warehouse": warehouse, "qty": qty, "ttl": holdSeconds})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+"/holds", bytes.NewReader(body))
	res, err := c.HTTP.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return Hold{}, ErrTimeout
		}
		return Hold{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer res.Body.Close()
	switch {
	case res.StatusCode == http.StatusConflict:
		return Hold{}, ErrOutOfStock
	case res.StatusCode == http.StatusGatewayTimeout:
		return Hold{}, ErrTimeout
	case res.StatusCode >= 500:
		return Hold{}, ErrUnavailable
	case res.StatusCode >= 400:
		return Hold{}, ErrRejected
	}
	var h Hold
	return h, json.NewDecoder(res.Body).Decode(&h)
}
