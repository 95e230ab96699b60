package store_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/sessfix/sessfix/"

// TestImportDirection checks with `go list -deps` that imports in the store
// layer run one way (docs/architecture.md): pkg/store imports no shape and
// nothing above it; a shape package (one pkg/store/shapes registers)
// imports no other shape, not the registry, and nothing above pkg/store;
// the registry and the store's internal packages import nothing above the
// store, and so does the salvage engine, which imports no shape either;
// pkg/opencode imports nothing above pkg/sent (no rules: not
// pkg/scan, pkg/fix or anything above them); nothing under pkg/ or internal/ imports cmd/; and no product
// package (cmd/, pkg/, internal/ outside the lab) imports the test lab.
func TestImportDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports, deps := map[string][]string{}, map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 3 || !strings.HasPrefix(f[0], module) {
			continue
		}
		p := strings.TrimPrefix(f[0], module)
		imports[p], deps[p] = ours(f[1]), ours(f[2])
	}
	var shapes []string
	for _, p := range imports["pkg/store/shapes"] {
		if strings.HasPrefix(p, "pkg/store/") {
			shapes = append(shapes, p)
		}
	}
	if len(shapes) < 3 {
		t.Fatalf("the registry imports only %v; want every shape package", shapes)
	}

	// above reports whether dep is above the store layer, for a package of it.
	above := func(dep string) bool {
		return strings.HasPrefix(dep, "cmd/") || strings.HasPrefix(dep, "pkg/") && dep != "pkg/store" && !strings.HasPrefix(dep, "pkg/store/")
	}
	check := func(p string, bad func(dep string) bool, why string) {
		t.Helper()
		if _, ok := deps[p]; !ok {
			t.Errorf("%s: not listed by go list", p)
			return
		}
		for _, d := range deps[p] {
			if bad(d) {
				t.Errorf("%s depends on %s: %s", p, d, why)
			}
		}
	}
	check("pkg/store", func(d string) bool { return above(d) || strings.HasPrefix(d, "pkg/store/") },
		"pkg/store knows no shape and nothing above it")
	for _, s := range shapes {
		check(s, func(d string) bool {
			return above(d) || d == "pkg/store/shapes" || d != s && slices.Contains(shapes, d)
		}, "a shape package imports no other shape, not the registry, and nothing above pkg/store")
	}
	check("pkg/store/shapes", above, "the registry imports nothing above the store")
	for _, p := range []string{"internal/atomicfile", "internal/bodyindex", "internal/recordfile", "pkg/store/internal/sqlitedb"} {
		check(p, func(d string) bool { return above(d) || strings.HasPrefix(d, "pkg/store/") },
			"the store's internal packages import nothing above pkg/store")
	}
	check("pkg/store/sqlite/salvage", func(d string) bool {
		return above(d) || d == "pkg/store/shapes" || slices.Contains(shapes, d)
	}, "the salvage engine imports no shape, not the registry, and nothing above pkg/store")
	check("pkg/sent", func(d string) bool { return above(d) || strings.HasPrefix(d, "pkg/store/") },
		"the model of what OpenCode sends reads sessions through pkg/store only; the rules that use it import it, not the reverse")
	check("pkg/opencode", func(d string) bool {
		return above(d) && d != "pkg/sent" && d != "pkg/ocschema" && d != "pkg/ocenv"
	}, "what OpenCode and its providers do is knowledge the rules, fixes and commands ask: it imports no rule, no fix, nothing above pkg/sent")
	for p := range deps {
		if strings.HasPrefix(p, "pkg/") || strings.HasPrefix(p, "internal/") {
			check(p, func(d string) bool { return strings.HasPrefix(d, "cmd/") }, "commands are the top layer")
		}
	}
	lab := func(p string) bool {
		return p == "internal/opencodetest" || strings.HasPrefix(p, "internal/opencodetest/")
	}
	for p := range deps {
		if lab(p) || p == "e2e" {
			continue
		}
		check(p, lab, "the test lab (internal/opencodetest/...) is for tests only: no product package imports it")
	}
}

// ours returns the module's packages among the space-separated import
// paths, without the module prefix.
func ours(list string) []string {
	var out []string
	for _, p := range strings.Fields(list) {
		if strings.HasPrefix(p, module) {
			out = append(out, strings.TrimPrefix(p, module))
		}
	}
	return out
}
