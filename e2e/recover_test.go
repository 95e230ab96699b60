//go:build acceptance

package e2e

import (
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest"
)

// failedResume breaks the base session the way the named scenario does and
// resumes it, which the provider must reject: OpenCode then stores the
// failed attempt error-driven recovery reads.
func failedResume(t *testing.T, name, version string) *caseRun {
	t.Helper()
	var sc *scenario
	for i := range scenarios {
		if scenarios[i].name == name {
			sc = &scenarios[i]
		}
	}
	if sc == nil {
		t.Fatalf("no scenario %s", name)
	}
	_, c := onBase(t, version)
	sc.corrupt(c)
	if v := c.resume("continue"); v.State != "rejected" {
		t.Fatalf("the resume of %s was not rejected: %s", name, v)
	}
	return c
}

func sf302(t *testing.T, fs []finding) finding {
	t.Helper()
	for _, f := range fs {
		if f.Code == "SF302" {
			return f
		}
	}
	t.Fatalf("no SF302 among %v", sortedCodes(fs))
	return finding{}
}

// copyData copies the data dir and puts the copy back, as a backup restore
// or a move to another machine does: every file gets a fresh time, after
// the failed attempt.
func copyData(t *testing.T, e *opencodetest.Env) string {
	t.Helper()
	dir := t.TempDir()
	if err := e.SaveData(dir); err != nil {
		t.Fatal(err)
	}
	if err := e.LoadData(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRecoverCorruptedSignatureAfterCopy: a session bricked by a corrupted
// signature stays an error when its store is copied (fresh file times), and
// scan and fix agree on it; once fixed it is history however often the
// store is copied again, and real OpenCode resumes it.
func TestRecoverCorruptedSignatureAfterCopy(t *testing.T) {
	parallel(t)
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			c := failedResume(t, "corrupted-signature", v)
			e := c.e
			orig, _ := scanStore(t, e, c.session)
			copied, _ := scanPath(t, e, copyData(t, e), c.session)
			restored, res := scanStore(t, e, c.session)
			want := sf302(t, orig)
			for name, fs := range map[string][]finding{"original": orig, "copy": copied, "restored copy": restored} {
				f := sf302(t, fs)
				if f.Severity != "error" || f.ErrorType != "invalid_signature" || f.Fix == "" {
					t.Errorf("%s: SF302 %s %q (fix %q); want a fixable invalid_signature error\n%s", name, f.Severity, f.Message, f.Fix, res)
				}
				if f.Message != want.Message {
					t.Errorf("%s: SF302 says %q, the original %q", name, f.Message, want.Message)
				}
			}
			dry := sessfix(t, e, "fix", "--dry-run", "--session", c.session, e.DataDir())
			if dry.ExitCode != 1 || !strings.Contains(dry.Stdout+dry.Stderr, "fix SF302 ") || !strings.Contains(dry.Stdout+dry.Stderr, "(stripThinkingParts)") {
				t.Errorf("fix --dry-run does not plan the repair scan asks for\n%s", dry)
			}

			fix := sessfix(t, e, "fix", "--yes", "--session", c.session, e.DataDir())
			if fix.ExitCode != 0 {
				t.Fatalf("fix\n%s", fix)
			}
			for _, name := range []string{"fixed", "fixed, copied"} {
				if name != "fixed" {
					copyData(t, e)
				}
				left, res := scanStore(t, e, c.session)
				f := sf302(t, left)
				if f.Severity != "info" || !strings.Contains(f.Message, "thinking has been removed since, so resuming the session should no longer fail") {
					t.Errorf("%s: SF302 %s %q; want info saying why it is history\n%s", name, f.Severity, f.Message, res)
				}
				for _, g := range left {
					if g.Severity == "error" {
						t.Errorf("%s: %s error left: %s", name, g.Code, g.Message)
					}
				}
			}
			if after := c.resume("continue"); after.State != "accepted" {
				t.Errorf("after the fix the session does not resume: %s", after)
			}
		})
	}
}

// TestRecoverIndexlessError: the text OpenCode stores for a whitespace-only
// text block names no message; diagnose and fix --error with exactly that
// text map it through the preflight to the block that causes it and repair
// it, and real OpenCode resumes the session.
func TestRecoverIndexlessError(t *testing.T) {
	parallel(t)
	const text = "messages: text content blocks must contain non-whitespace text"
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			c := failedResume(t, "whitespace-text", v)
			e := c.e
			if f := sf302(t, func() []finding { fs, _ := scanStore(t, e, c.session); return fs }()); f.ProviderError != text {
				t.Fatalf("OpenCode stored %q, want %q", f.ProviderError, text)
			}
			answer := c.assistant(1)
			blank := c.part(answer, "text")
			diag := sessfix(t, e, "diagnose", "--error", text, e.DataDir())
			for _, want := range []string{
				"the error names no message; the preflight finds 1 place that causes it:\n  error SF151 " + answer.ID + " part " + blank.ID,
				"sessfix fix --error would:\n  update part " + blank.ID + ": replaceEmptyTextParts",
			} {
				if diag.ExitCode != 1 || !strings.Contains(diag.Stdout, want) {
					t.Errorf("diagnose lacks %q\n%s", want, diag)
				}
			}
			fix := sessfix(t, e, "fix", "--yes", "--session", c.session, "--error", text, e.DataDir())
			out := fix.Stdout + fix.Stderr
			if fix.ExitCode != 0 || !strings.Contains(out, "the preflight finds 1 place that causes it") || !strings.Contains(out, "fixed 1 session: 1 edit") {
				t.Errorf("fix --error\n%s", fix)
			}
			left, res := scanStore(t, e, c.session)
			for _, g := range left {
				if g.Severity == "error" {
					t.Errorf("%s error left: %s\n%s", g.Code, g.Message, res)
				}
			}
			if after := c.resume("continue"); after.State != "accepted" {
				t.Errorf("after fix --error the session does not resume: %s", after)
			}
		})
	}
}
