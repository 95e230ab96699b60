package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneLockSite checks that pkg/backup is the only product package that
// takes a store's writer lock: backup.Lock takes it and rolls back what a
// killed sessfix left half-written, so a command that locked a store some
// other way would write over a half-applied change set. Tests and the lab
// may take it as they like.
func TestOneLockSite(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	var sites []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch {
			case strings.HasPrefix(d.Name(), ".") && rel != ".", d.Name() == "testdata", rel == "e2e", rel == "internal/opencodetest":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var name string
			switch fn := call.Fun.(type) {
			case *ast.SelectorExpr:
				name = fn.Sel.Name
			case *ast.Ident:
				name = fn.Name
			}
			if name == "AcquireLock" {
				sites = append(sites, rel)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sites) == 0 {
		t.Fatal("no call of AcquireLock found: the test no longer sees the code it checks")
	}
	for _, s := range sites {
		if filepath.ToSlash(filepath.Dir(s)) != "pkg/backup" {
			t.Errorf("%s takes a store's writer lock itself; take it with backup.Lock, which finishes what a killed run left", s)
		}
	}
}
