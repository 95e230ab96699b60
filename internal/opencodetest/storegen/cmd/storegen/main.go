// Command storegen writes a generated OpenCode store for measuring sessfix
// (see package internal/opencodetest/storegen and docs/performance.md):
//
//	go run ./internal/opencodetest/storegen/cmd/storegen -shape sqlite -sessions 125 -out /tmp/bench
//
// It prints the path to scan on stdout and what it wrote on stderr.
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"

	"github.com/sessfix/sessfix/internal/opencodetest/storegen"
	"github.com/sessfix/sessfix/pkg/store"
)

func main() {
	d := storegen.Default
	shape := flag.String("shape", "sqlite", "store shape: sqlite, storage, project, sessions or export")
	out := flag.String("out", "", "directory to write the store into (the store's own path inside it must not exist)")
	sessions := flag.Int("sessions", d.Sessions, "sessions in the store")
	messages := flag.Int("messages", d.Messages, "messages per session (a user message, then three assistant steps)")
	parts := flag.Int("parts", d.Parts, "parts per assistant message (at least 4)")
	toolOutput := flag.Int("tool-output", d.ToolOutput, "mean tool output size in bytes")
	defects := flag.Float64("defects", d.DefectRate, "share of assistant messages with one defect (0 for none)")
	seed := flag.Uint64("seed", d.Seed, "seed: the same seed and sizes write the same store")
	images := flag.Int("images", 0, "images per session, within Anthropic's limits, half pasted and half returned by the read tool (0 for none)")
	imageBytes := flag.Int("image-bytes", 0, "base64 bytes per image (default 512 KiB when -images is set)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: storegen -shape SHAPE -out DIR [-sessions N] [-messages M] [-parts K]")
		os.Exit(2)
	}
	rate := *defects
	if rate == 0 {
		rate = -1 // Config's zero value means the default rate
	}
	cfg := storegen.Config{Sessions: *sessions, Messages: *messages, Parts: *parts, ToolOutput: *toolOutput,
		DefectRate: rate, Seed: *seed, Images: *images, ImageBytes: *imageBytes}
	path, st, err := storegen.Generate(store.Shape(*shape), *out, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "storegen:", err)
		os.Exit(1)
	}
	fmt.Println(path)
	fmt.Fprintf(os.Stderr, "%s: %d sessions, %d messages, %d parts, %d images, %.1f MB of records (largest session %.1f MB)\n",
		*shape, st.Sessions, st.Messages, st.Parts, st.Images, float64(st.Bytes)/1e6, float64(st.MaxSessionBytes)/1e6)
	kinds := make([]string, 0, len(st.Defects))
	for k := range st.Defects {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(os.Stderr, "  %d %s\n", st.Defects[k], k)
	}
}
