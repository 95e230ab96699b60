// Command readstore reads every byte of a store and does nothing else: the
// baseline scripts/bench.sh times `sessfix scan` against (see
// docs/performance.md). A directory is walked and every file read; a .db
// file has every data column selected. Both use as many goroutines as
// sessfix uses workers (GOMAXPROCS).
//
//	go run ./internal/opencodetest/storegen/cmd/readstore /tmp/bench/sqlite/opencode.db
package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/sessfix/sessfix/internal/opencodetest/storegen"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: readstore PATH (a store directory or an opencode .db file)")
		os.Exit(2)
	}
	path := os.Args[1]
	read := storegen.ReadTree
	if strings.HasSuffix(path, ".db") {
		read = storegen.ReadSQLite
	}
	n, err := read(path, runtime.GOMAXPROCS(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "readstore:", err)
		os.Exit(1)
	}
	fmt.Printf("%d bytes\n", n)
}
