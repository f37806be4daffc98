package reserve

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/northwind/stockd/internal/inventory"
)

func TestReserveRejectsMissingSKU(t *testing.T) {
	h := &Handler{WMS: &inventory.Client{}}
	rec := httptest.NewRecorder()
	h.Reserve(rec, httptest.NewRequest(http.MethodPost, "/reservations", strings.NewReader(`{"quantity":1}`)))
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("status = %d", rec.Code)
	}
}

func TestReserveOutOfStock(t *testing.T) {
	wms := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusConflict)
	}))
	defer wms.Close()
	h := &Handler{WMS: &inventory.Client{BaseURL: wms.URL, HTTP: wms.Client()}}
	rec := httptest.NewRecorder()
	h.Reserve(rec, httptest.NewRequest(http.MethodPost, "/reservations",
		strings.NewReader(`{"sku":"SKU-1","quantity":2,"warehouse_id":"ams-1","hold_duration":600}`)))
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "OUT_OF_STOCK") {
		t.Fatalf("got %d %s", rec.Code, rec.Body.String())
	}
}
