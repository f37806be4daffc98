package residency

import "fmt"

// Cell is a storage deployment. A workspace's documents, search index and backups are
// kept only in the cell its region code selects.
type Cell struct {
	DatabaseDSN string
	BucketName  string
}

var cells = map[string]Cell{
	"eu-central": {DatabaseDSN: "postgres://ws-eu-central.db.internal/ws", BucketName: "tally-docs-eu-central"},
	"us-east":    {DatabaseDSN: "postgres://ws-us-east.db.internal/ws", BucketName: "tally-docs-us-east"},
	"ap-south":   {DatabaseDSN: "postgres://ws-ap-south.db.internal/ws", BucketName: "tally-docs-ap-south"},
}

// ErrUnknownRegion is returned for a region code with no storage cell.
var ErrUnknownRegion = fmt.Errorf("UNKNOWN_REGION")

// CellFor resolves the storage cell that holds data for regionCode.
func CellFor(regionCode string) (Cell, error) {
	c, ok := cells[regionCode]
	if !ok {
		return Cell{}, ErrUnknownRegion
	}
	return c, nil
}
