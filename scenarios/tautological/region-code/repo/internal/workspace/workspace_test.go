package workspace

import (
	"testing"
	"time"

	"github.com/tallyhq/workspaces/internal/residency"
)

func TestCreatePicksTheCellOfTheRegion(t *testing.T) {
	_, cell, err := Create("ws_1", CreateInput{Name: "Acme", RegionCode: "eu-central"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if cell.BucketName != "tally-docs-eu-central" {
		t.Fatalf("bucket = %s", cell.BucketName)
	}
}

func TestUnknownRegion(t *testing.T) {
	if _, _, err := Create("ws_2", CreateInput{RegionCode: "DE-BY"}, time.Now()); err != residency.ErrUnknownRegion {
		t.Fatalf("err = %v", err)
	}
}

func TestRegionCannotChange(t *testing.T) {
	ws, _, _ := Create("ws_3", CreateInput{Name: "Acme", RegionCode: "us-east"}, time.Now())
	other := "eu-central"
	if err := Update(ws, UpdateInput{RegionCode: &other}); err != ErrRegionImmutable {
		t.Fatalf("err = %v", err)
	}
}
