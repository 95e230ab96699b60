package salvage

import (
	_ "embed"
	"strings"
)

// knownSchema is OpenCode 1.18.33's sqlite_master, every statement in
// its order, separated by blank-line-ended semicolons (";\n\n"); written
// by TestEmbeddedSchema -update from testdata/real.
//
//go:embed schema-1.18.33.sql
var knownSchema string

// knownMigrations are the rows of 1.18.33's migration table (drizzle's
// bookkeeping: which migrations ran), "id\ttime_completed" a line.
//
//go:embed migrations-1.18.33.tsv
var knownMigrations string

// KnownVersion is the OpenCode release whose schema is embedded.
const KnownVersion = "1.18.33"

// migrationTable is where OpenCode 1.18 records its migrations (older
// drizzle releases used __drizzle_migrations).
const migrationTable = "migration"

// knownStatements are knownSchema's statements.
func knownStatements() []string {
	var out []string
	for _, s := range strings.Split(knownSchema, ";\n\n") {
		if s = strings.TrimSuffix(strings.TrimSpace(s), ";"); s != "" {
			out = append(out, s)
		}
	}
	return out
}
