package salvage

import (
	"context"
	"database/sql"
	"errors"
)

// copyPages reads the raw pages of src into out.
func copyPages(ctx context.Context, src string, out *sql.DB, rep *Report) error {
	return errors.New("salvage: sqlite_master cannot be read and the page scan is not written yet")
}
