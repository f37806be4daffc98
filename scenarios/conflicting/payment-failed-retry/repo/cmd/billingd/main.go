package main

import (
	"flag"
	"log"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/ledgerly/billing/internal/billing"
)

func main() {
	addr := flag.String("addr", ":8080", "listen address")
	flag.Parse()

	svc := billing.NewService(billing.NewMemoryInvoices(), billing.NewProcessorFromEnv())
	r := chi.NewRouter()
	r.Post("/invoices/{invoice_id}/charge", svc.HandleCharge)
	log.Printf("billingd listening on %s", *addr)
	log.Fatal(http.ListenAndServe(*addr, r))
}
