package checkout

import (
	"testing"
)

func TestPaymentWaitDefault(t *testing.T) {
	got, err := paymentWait(CreateRequest{CartID: "c_1"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Seconds() != 15 {
		t.Fatalf("default wait = %v", got)
	}
}

func TestPaymentWaitRejectsNegative(t *testing.T) {
	if _, err := paymentWait(CreateRequest{CartID: "c_1", PaymentTimeout: -1}); err == nil {
		t.Fatal("expected an error")
	}
}
