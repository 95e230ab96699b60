package salvage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // the driver

	"github.com/sessfix/sessfix/internal/atomicfile"
	"github.com/sessfix/sessfix/pkg/store/internal/sqlitedb"
)

// Salvage copies what can be read of the SQLite database src into a new
// database dst, which must not exist, and reports what it copied and lost.
// src is never written (see the package doc for how it is read). On any
// error dst does not exist afterwards.
func Salvage(ctx context.Context, src, dst string) (rep *Report, err error) {
	if _, err := os.Lstat(dst); err == nil {
		return nil, fmt.Errorf("salvage into %s: it already exists", dst)
	}
	fi, err := os.Stat(src)
	if err != nil {
		return nil, fmt.Errorf("salvage %s: %w", src, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("salvage %s: not a regular file", src)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), atomicfile.TempPrefix(dst)+"*.tmp")
	if err != nil {
		return nil, fmt.Errorf("salvage into %s: %w", dst, err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	defer func() {
		if err != nil {
			for _, suffix := range []string{"", "-journal", "-wal", "-shm"} {
				os.Remove(tmpPath + suffix)
			}
			rep = nil
		}
	}()
	rep = &Report{Source: src, Dest: dst}
	out, err := openDest(tmpPath)
	if err != nil {
		return nil, err
	}
	err = salvageInto(ctx, src, out, rep)
	if cerr := out.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("salvage into %s: %w", dst, cerr)
	}
	if err != nil {
		return nil, err
	}
	if err := syncFile(tmpPath); err != nil {
		return nil, fmt.Errorf("salvage into %s: %w", dst, err)
	}
	if err := os.Chmod(tmpPath, fi.Mode().Perm()); err != nil {
		return nil, fmt.Errorf("salvage into %s: %w", dst, err)
	}
	if err := atomicfile.Chown(tmpPath, atomicfile.OwnerOf(fi)); err != nil {
		return nil, fmt.Errorf("salvage into %s: keep the owner of %s: %w", dst, src, err)
	}
	if err := place(tmpPath, dst); err != nil {
		return nil, fmt.Errorf("salvage into %s: %w", dst, err)
	}
	if err := atomicfile.SyncDir(filepath.Dir(dst)); err != nil {
		os.Remove(dst)
		return nil, fmt.Errorf("salvage into %s: %w", dst, err)
	}
	return rep, nil
}

// salvageInto fills out from src: through SQL when sqlite_master can be
// read, from the raw pages otherwise; then checks out.
func salvageInto(ctx context.Context, src string, out *sql.DB, rep *Report) error {
	in, note, err := openSource(src)
	if note != "" {
		rep.Notes = append(rep.Notes, note)
	}
	var schema []entry
	if err == nil {
		defer in.Close()
		schema, err = readSchema(ctx, in.SQL)
	}
	if err == nil {
		rep.Method = MethodSQL
		err = copySQL(ctx, src, in.SQL, out, schema, rep)
	} else {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if v2, ferr := holdsOpenCode2(src); ferr != nil || v2 {
			if ferr != nil {
				return ferr
			}
			return fmt.Errorf("%s holds the name of an OpenCode 2 table (%s), so it may be an OpenCode 2 database, which sessfix does not write: nothing was salvaged", src, opencode2Table)
		}
		rep.Method = MethodPages
		rep.Notes = append(rep.Notes, "sqlite_master could not be read ("+oneLine(err)+"): rows were read from the raw pages")
		err = copyPages(ctx, src, out, rep)
	}
	if err != nil {
		return err
	}
	if err := findMissingSessions(ctx, out, rep); err != nil {
		return err
	}
	return checkDest(ctx, out, rep)
}

// openSource opens src read-only without writing anything next to it:
// immutable when it has no write-ahead log content, else a private
// snapshot copy of the file and its log.
func openSource(src string) (*sqlitedb.DB, string, error) {
	abs, err := filepath.Abs(src)
	if err != nil {
		return nil, "", err
	}
	none := func(context.Context, *sql.DB, string) error { return nil }
	if fi, err := os.Stat(abs + "-wal"); err == nil && fi.Size() > 0 {
		d, err := sqlitedb.OpenSnapshot(abs, src, errors.New("its write-ahead log holds changes"), none)
		if err != nil {
			return nil, "", err
		}
		return d, src + " read from a snapshot copy with its write-ahead log", nil
	}
	if _, err := os.Stat(abs + "-journal"); err == nil {
		d, err := sqlitedb.OpenMode(abs, src, sqlitedb.Immutable, none)
		return d, src + "-journal exists and was not rolled back: the file was read as it is", err
	}
	d, err := sqlitedb.OpenMode(abs, src, sqlitedb.Immutable, none)
	return d, "", err
}

// openDest opens the new database at path (an empty file).
func openDest(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+uriPath(path)+"?_pragma=journal_mode(MEMORY)&_pragma=synchronous(OFF)&_pragma=foreign_keys(0)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// checkDest runs integrity_check on the new database: anything but "ok" is
// an error.
func checkDest(ctx context.Context, out *sql.DB, rep *Report) error {
	rows, err := out.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return fmt.Errorf("check the salvaged database: %w", err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return fmt.Errorf("check the salvaged database: %w", err)
		}
		lines = append(lines, s)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check the salvaged database: %w", err)
	}
	rep.Integrity = strings.Join(lines, "; ")
	if rep.Integrity != "ok" {
		return fmt.Errorf("the salvaged database fails integrity_check: %s", rep.Integrity)
	}
	return nil
}

// place puts the finished file at dst without replacing a file another
// program created there meanwhile: a hard link fails when dst exists;
// where links are not supported, a rename.
func place(tmp, dst string) error {
	err := os.Link(tmp, dst)
	switch {
	case err == nil:
		os.Remove(tmp) // dst is whole: a temporary name left behind is no failure
		return nil
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("it was created meanwhile: %w", err)
	}
	return os.Rename(tmp, dst)
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// uriPath escapes the characters that end or alter the path part of an
// SQLite URI filename.
func uriPath(p string) string {
	p = filepath.ToSlash(p)
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

func quote(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
