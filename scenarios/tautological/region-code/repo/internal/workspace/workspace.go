package workspace

import (
	"errors"
	"time"

	"github.com/tallyhq/workspaces/internal/residency"
)

type Workspace struct {
	ID         string    `json:"workspace_id"`
	Name       string    `json:"name"`
	RegionCode string    `json:"region_code"`
	Plan       string    `json:"plan"`
	CreatedAt  time.Time `json:"created_at"`
}

type CreateInput struct {
	Name       string `json:"name"`
	RegionCode string `json:"region_code"`
	Plan       string `json:"plan"`
}

type UpdateInput struct {
	Name       *string `json:"name"`
	RegionCode *string `json:"region_code"`
	Plan       *string `json:"plan"`
}

var ErrRegionImmutable = errors.New("REGION_IMMUTABLE")

// Create provisions the workspace in the storage cell of its region.
func Create(id string, in CreateInput, now time.Time) (*Workspace, residency.Cell, error) {
	cell, err := residency.CellFor(in.RegionCode)
	if err != nil {
		return nil, residency.Cell{}, err
	}
	return &Workspace{ID: id, Name: in.Name, RegionCode: in.RegionCode, Plan: in.Plan, CreatedAt: now}, cell, nil
}

// Update applies a partial update. The region cannot change after creation: data would
// have to move between cells, which is a support-run migration, not an API call.
func Update(ws *Workspace, in UpdateInput) error {
	if in.RegionCode != nil && *in.RegionCode != ws.RegionCode {
		return ErrRegionImmutable
	}
	if in.Name != nil {
		ws.Name = *in.Name
	}
	if in.Plan != nil {
		ws.Plan = *in.Plan
	}
	return nil
}
