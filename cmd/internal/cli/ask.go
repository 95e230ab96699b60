package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
)

// AskLine asks a yes/no question on out and reads the answer from in: only
// "y" or "yes" is yes; end of input is no.
func AskLine(in io.Reader, out io.Writer, q string) (bool, error) {
	fmt.Fprintf(out, "%s [y/N] ", q)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && line == "" {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, err
	}
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", nil
}

// IsTTY reports whether r is a terminal.
func IsTTY(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}
