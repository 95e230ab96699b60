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

// TestOneLockSite checks that backup.Lock is the only product function
// that takes a store's writer lock: it takes it and rolls back what a
// killed sessfix left half-written, so a command that locked a store some
// other way would write over a half-applied change set (every write goes
// through backup.Tx, which locks through it). Tests and the lab may take
// it as they like.
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
		var fn string // the function declaration being walked
		ast.Inspect(f, func(n ast.Node) bool {
			if d, ok := n.(*ast.FuncDecl); ok {
				fn = d.Name.Name
				if d.Recv != nil && len(d.Recv.List) > 0 {
					fn = "method " + fn
				}
			}
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
				sites = append(sites, rel+" "+fn)
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
		file, fn, _ := strings.Cut(s, " ")
		if filepath.ToSlash(filepath.Dir(file)) != "pkg/backup" || fn != "Lock" {
			t.Errorf("%s (in %s) takes a store's writer lock itself; take it with backup.Lock (or a backup.Tx), which finishes what a killed run left", file, fn)
		}
	}
}
