package store_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSizes keeps the sizes docs/architecture.md states for the product
// code (tests are free): no file under cmd/ over 300 lines, and no
// function over 100 lines in cmd/, pkg/watch, pkg/fix and pkg/store.
func TestSizes(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	var files int
	for _, dir := range []string{"cmd", "pkg/watch", "pkg/fix", "pkg/store"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files++
			if n := bytes.Count(src, []byte("\n")); dir == "cmd" && n > 300 {
				t.Errorf("%s has %d lines; a file under cmd/ stays under 300", rel, n)
			}
			f, err := parser.ParseFile(fset, path, src, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				var name string
				switch fn := n.(type) {
				case *ast.FuncDecl:
					name = fn.Name.Name
				case *ast.FuncLit:
					name = "a function literal"
				default:
					return true
				}
				if lines := fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1; lines > 100 {
					t.Errorf("%s: %s has %d lines; a function stays under 100", rel, name, lines)
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 50 {
		t.Fatalf("only %d files checked: the test no longer sees the code", files)
	}
}
