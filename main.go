// Command sessfix finds and repairs broken OpenCode sessions. See
// `sessfix --help`.
package main

import (
	"os"

	"github.com/sessfix/sessfix/cmd"
)

func main() { os.Exit(cmd.Main()) }
