package reserve

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/northwind/stockd/internal/inventory"
	"github.com/northwind/stockd/internal/retry"
)

type Request struct {
	SKU          string `json:"sku"`
	Quantity     int    `json:"quantity"`
	WarehouseID  string `json:"warehouse_id"`
	HoldDuration int    `json:"hold_duration"`
}

type Handler struct {
	WMS *inventory.Client
}

func (h *Handler) Reserve(w http.ResponseWriter, r *http.Request) {
	var req Request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.SKU == "" || req.Quantity <= 0 {
		writeErr(w, http.StatusBadRequest, "INVALID_SKU")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 4*time.Second)
	defer cancel()
	var hold inventory.Hold
	err := retry.Do(ctx, retry.Default, func(ctx context.Context) error {
		var err error
		hold, err = h.WMS.PlaceHold(ctx, req.SKU, req.WarehouseID, req.Quantity, req.HoldDuration)
		return err
	})
	switch {
	case err == nil:
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]string{"reservation_id": hold.ID, "expires_at": hold.ExpiresAt})
	case errors.Is(err, inventory.ErrOutOfStock):
		writeErr(w, http.StatusConflict, "OUT_OF_STOCK")
	case errors.Is(err, inventory.ErrTimeout):
		// The hold may simply not have been placed yet; the caller can try again shortly.
		w.Header().Set("Retry-After", "2")
		writeErr(w, http.StatusGatewayTimeout, "UPSTREAM_TIMEOUT")
	default:
		writeErr(w, http.StatusBadGateway, "UPSTREAM_REJECTED")
	}
}

// reserveV1 is the pre-2024 path, kept until the v1 route is removed from the
// router (it is no longer registered). Upstream failures there were surfaced
// as 500s and never retried.
func (h *Handler) reserveV1(w http.ResponseWriter, r *http.Request) {
	writeErr(w, http.StatusInternalServerError, "INTERNAL")
}

func writeErr(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"code": code})
}
