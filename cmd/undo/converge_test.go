//go:build unix

package undo

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
)

// TestRerunAfterAKillConverges kills a real sessfix (built with fault
// injection, internal/faultpoint) after one of its numbered write steps,
// for fix, drop, rewind and fork on a storage/ tree, which is written file
// by file: a session can be left half-changed. Whenever the killed run had
// not finished its write, running the same command again must leave the
// store as one uninterrupted run leaves it (the next sessfix that takes the
// store's writer lock rolls the half-written change set back first:
// backup.Lock); a drop, rewind or fork that had finished must have left
// it so already. The
// stores are compared with the ids and times sessfix mints masked (they
// differ from run to run), as sorted lines, so a second fork copy or a
// directory left empty is a difference.
func TestRerunAfterAKillConverges(t *testing.T) {
	bin := sessfixBinary(t)
	const rounds = 12
	shape := store.ShapeStorage
	pristine := materialize(t, shape, killCases...)
	ses, first, second := twoTurnSession(t, pristine)
	known := tokens(t, pristine)
	commands := map[string][]string{
		"fix":    {"fix", "--yes", "-q", "STORE"},
		"drop":   {"drop", ses, second, "--store", "STORE", "--yes", "-q"},
		"rewind": {"rewind", ses, "--to", first, "--store", "STORE", "--yes", "-q"},
		"fork":   {"fork", ses, "--store", "STORE", "--yes", "-q"},
	}
	for _, name := range []string{"fix", "drop", "rewind", "fork"} {
		t.Run(name, func(t *testing.T) {
			args := func(path string) []string {
				out := slices.Clone(commands[name])
				out[slices.Index(out, "STORE")] = path
				return out
			}
			ok := func(err error) bool { return err == nil || name == "fix" && isExit(err, 1) }

			dir := t.TempDir()
			full := copyStore(t, pristine, dir)
			log := filepath.Join(dir, "steps")
			cmd := sessfixCmd(bin, filepath.Join(dir, "state"), args(full)...)
			cmd.Env = append(cmd.Env, "SESSFIX_FAULT_LOG="+log)
			if out, err := cmd.CombinedOutput(); !ok(err) {
				t.Fatalf("uninterrupted %s: %v\n%s", name, err, out)
			}
			want := normalized(t, full, known)
			if want == normalized(t, pristine, known) {
				t.Fatalf("%s changed nothing: the test needs a change", name)
			}
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatalf("the run logged no write step: %v", err)
			}
			steps := strings.Split(strings.TrimSpace(string(b)), "\n")
			var reran, noted int
			var rerun string
			for _, n := range killPoints(len(steps), rounds) {
				dir := t.TempDir()
				path, state := copyStore(t, pristine, dir), filepath.Join(dir, "state")
				cmd := sessfixCmd(bin, state, args(path)...)
				cmd.Env = append(cmd.Env, "SESSFIX_FAULT_AT="+strconv.Itoa(n))
				if out, err := cmd.CombinedOutput(); !killed(err) {
					t.Fatalf("step %s: the run was not killed there: %v\n%s", steps[n-1], err, out)
				}
				runs, err := backup.List(backup.Options{Dir: state})
				if err != nil {
					t.Fatal(err)
				}
				// fix is run again whatever the killed run did (a user
				// does, and a fix of a repaired store changes nothing);
				// drop, rewind and fork write one change set, and are run
				// again only when the killed one did not finish it.
				again := name == "fix" || len(runs) == 0 || runs[0].State != backup.StateApplied || runs[0].Sessions == 0
				if len(runs) > 0 && runs[0].State == "incomplete" {
					// A dry run changes nothing, and says what the next
					// run that writes puts back first.
					dry := slices.Clone(args(path))
					dry[slices.Index(dry, "--yes")] = "--dry-run"
					dry = slices.DeleteFunc(dry, func(a string) bool { return a == "-q" })
					before := normalized(t, path, known)
					out, _ := sessfixCmd(bin, state, dry...).CombinedOutput()
					if !strings.Contains(string(out), "was killed while it wrote session") || normalized(t, path, known) != before {
						t.Fatalf("step %s: a dry run after the kill did not say what the next run puts back first, or changed the store:\n%s", steps[n-1], out)
					}
					noted++
				}
				if again {
					reran++
					out, err := sessfixCmd(bin, state, args(path)...).CombinedOutput()
					if !ok(err) {
						t.Fatalf("step %s: the run after the kill: %v\n%s", steps[n-1], err, out)
					}
					rerun = string(out)
				}
				if got := normalized(t, path, known); got != want {
					t.Fatalf("step %s: the store is not what one whole run leaves:\n%s\nthe run after the kill said:\n%s", steps[n-1], firstDiff(got, want), rerun)
				}
				left := store.Temps(store.Info{Shape: shape, Path: path})
				if again {
					left = leftovers(path, shape)
				}
				if len(left) > 0 {
					t.Fatalf("step %s: left %v", steps[n-1], left)
				}
			}
			if noted == 0 {
				t.Fatalf("no kill point of the %d steps left an incomplete run", len(steps))
			}
			if reran == 0 {
				t.Fatalf("no kill point of the %d steps stopped the write before it finished", len(steps))
			}
		})
	}
}

// twoTurnSession finds a session of the store with two user messages or
// more, and returns its id and its first two user messages.
func twoTurnSession(t *testing.T, path string) (ses, first, second string) {
	t.Helper()
	ctx := context.Background()
	disc, err := shapes.Open([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	defer disc.Close()
	for _, st := range disc.Stores {
		refs, err := st.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range refs {
			s, err := st.Load(ctx, ref)
			if err != nil {
				continue
			}
			var users []string
			for _, m := range s.Messages {
				if m.Role == "user" {
					users = append(users, m.ID)
				}
			}
			if len(users) >= 2 {
				return s.ID, users[0], users[1]
			}
		}
	}
	t.Fatal("no session with two user messages in the fixtures")
	return "", "", ""
}

// minted matches the ids (ses_, msg_, prt_) and millisecond times sessfix
// mints: they differ from one run to the next.
var minted = regexp.MustCompile(`\b(?:(?:ses|msg|prt)_[0-9a-f]{12}[0-9A-Za-z]{14}|1[0-9]{12})\b`)

// tokens are the ids and times in the files of the store at path.
func tokens(t *testing.T, path string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		for _, m := range minted.FindAllString(p, -1) {
			out[m] = true
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		for _, m := range minted.FindAllString(string(b), -1) {
			out[m] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// normalized is every directory and file of the store at path (a file
// with its content), one sorted line each, with the ids and times that
// are not in known masked.
func normalized(t *testing.T, path string, known map[string]bool) string {
	t.Helper()
	mask := func(s string) string {
		return minted.ReplaceAllStringFunc(s, func(m string) string {
			if known[m] {
				return m
			}
			return "<new>"
		})
	}
	var lines []string
	err := filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(path, p)
		if strings.HasSuffix(p, ".sessfix.lock") {
			return nil // a killed run leaves its lock; the next one takes it over
		}
		if d.IsDir() {
			lines = append(lines, mask(rel)+"/")
			return nil
		}
		b, err := os.ReadFile(p)
		lines = append(lines, mask(rel)+" "+strconv.Quote(mask(string(b))))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
