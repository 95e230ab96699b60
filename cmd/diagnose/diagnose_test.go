package diagnose

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
)

const demo = "../../testdata/demo"

// orderError is the error the demo's "Fix the lint errors" session stores
// on its failed attempt (shortened: a pasted error matches by containment).
const orderError = "messages.3.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`."

func run(t *testing.T, format string, opts *DiagnoseOptions) (string, error) {
	t.Helper()
	ios, _, out, _ := iostreams.Test()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	f := &cli.Factory{IOStreams: ios, Open: shapes.Open, Now: func() time.Time { return now },
		Globals: &cli.Globals{Format: format}}
	opts.Factory = f
	err := RunDiagnose(context.Background(), opts)
	return out.String(), err
}

func TestDiagnoseFindsTheSessionByItsFailedAttempt(t *testing.T) {
	out, err := run(t, "text", &DiagnoseOptions{Paths: []string{demo}, Error: orderError})
	if !errors.Is(err, cli.ErrFindings) {
		t.Fatalf("err = %v, want findings remain\n%s", err, out)
	}
	for _, want := range []string{
		"session ses_116b2f8bffffsSjTYTHkQXRjCt in ",
		"error type: thinking_block_order",
		"failed attempt: stored assistant message msg_ee94d2a60000XryCSeiwGMZtCz",
		"messages.3.content.0 is stored assistant message msg_ee94d18a9000kWP7U4D4JFc7rV, tool part prt_ee94d1ee9000v1l9srZF7IZZhv",
		"error SF152 the final tool-loop assistant message",
		"sessfix fix --error would:\n  update message msg_ee94d18a9000kWP7U4D4JFc7rV: excludeMessage",
		"run: sessfix fix --session ses_116b2f8bffffsSjTYTHkQXRjCt --error '",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestDiagnoseJSON(t *testing.T) {
	out, err := run(t, "json", &DiagnoseOptions{Paths: []string{demo}, Error: orderError, Session: "ses_116b2f8bffffsSjTYTHkQXRjCt"})
	if !errors.Is(err, cli.ErrFindings) {
		t.Fatalf("err = %v", err)
	}
	var got struct {
		MessageID string `json:"message_id"`
		PartID    string `json:"part_id"`
		Index     string `json:"index"`
		ErrorType string `json:"error_type"`
		Findings  []struct {
			Code string `json:"code"`
		} `json:"findings"`
		Fix struct {
			Edits []string `json:"edits"`
		} `json:"fix"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.MessageID != "msg_ee94d18a9000kWP7U4D4JFc7rV" || got.PartID != "prt_ee94d1ee9000v1l9srZF7IZZhv" ||
		got.Index != "messages.3.content.0" || got.ErrorType != "thinking_block_order" || len(got.Fix.Edits) != 1 || len(got.Findings) == 0 {
		t.Errorf("json %+v", got)
	}
}

func TestDiagnoseUnmappableIndexChangesNothing(t *testing.T) {
	text := "messages.40: all messages must have non-empty content except for the optional final assistant message"
	out, err := run(t, "text", &DiagnoseOptions{Paths: []string{demo}, Error: text, Session: "ses_116b2f8bffffsSjTYTHkQXRjCt"})
	if err != nil {
		t.Fatalf("err = %v\n%s", err, out)
	}
	if !strings.Contains(out, "messages.40 does not map to a stored message: messages.40 is outside the") ||
		!strings.Contains(out, "sessfix fix --error would change nothing") {
		t.Errorf("output:\n%s", out)
	}
}

func TestDiagnoseNeedsASession(t *testing.T) {
	_, err := run(t, "text", &DiagnoseOptions{Paths: []string{demo}, Error: "messages.1: something no session stored"})
	var fe *cli.FlagError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "--session") {
		t.Errorf("err = %v, want a usage error asking for --session", err)
	}
	_, err = run(t, "text", &DiagnoseOptions{Paths: []string{demo}, Error: orderError, Session: "ses_nope"})
	if err == nil || !strings.Contains(err.Error(), "session ses_nope not found") {
		t.Errorf("err = %v", err)
	}
}

func TestDiagnoseRequiresError(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	called := false
	cmd := NewCmdDiagnose(&cli.Factory{IOStreams: ios}, func(context.Context, *DiagnoseOptions) error { called = true; return nil })
	cmd.SetArgs([]string{"--error", "  "})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.Execute()
	var fe *cli.FlagError
	if !errors.As(err, &fe) || called {
		t.Errorf("err = %v, called = %v", err, called)
	}
	cmd = NewCmdDiagnose(&cli.Factory{IOStreams: ios}, func(_ context.Context, o *DiagnoseOptions) error {
		called = o.Error == "x" && o.Session == "s" && len(o.Paths) == 1
		return nil
	})
	cmd.SetArgs([]string{"--error", "x", "--session", "s", "p"})
	if err := cmd.Execute(); err != nil || !called {
		t.Errorf("flags did not reach the options: %v", err)
	}
}

// TestDiagnoseRealSessions maps indexes in the sessions real OpenCode
// recorded: in the tool-loop session, messages.1.content.1 is the bash tool
// call and messages.2.content.0 its result (the same tool part).
func TestDiagnoseRealSessions(t *testing.T) {
	for _, path := range []string{"../../testdata/real/opencode-1.18.33/opencode.db", "../../testdata/real/opencode-1.1.65/storage"} {
		t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) {
			if _, err := os.Stat(path); err != nil {
				t.Fatal(err)
			}
			disc, err := shapes.Open([]string{path})
			if err != nil {
				t.Fatal(err)
			}
			defer disc.Close()
			ctx := context.Background()
			tools := 0
			for _, st := range disc.Stores {
				refs, _ := st.List(ctx)
				for _, ref := range refs {
					s, err := st.Load(ctx, ref)
					if err != nil {
						t.Fatal(err)
					}
					var tool *store.Part
					for _, m := range s.Messages {
						for _, p := range m.Parts {
							if p.Type == "tool" {
								tool = p
							}
						}
					}
					if tool == nil {
						continue
					}
					tools++
					for _, idx := range []string{"messages.1.content.1", "messages.2.content.0"} {
						out, err := run(t, "json", &DiagnoseOptions{Paths: []string{path}, Session: s.ID,
							Error: idx + ": unexpected `tool_use_id` found in `tool_result` blocks"})
						if err != nil && !errors.Is(err, cli.ErrFindings) {
							t.Fatal(err)
						}
						var got struct {
							MessageID string `json:"message_id"`
							PartID    string `json:"part_id"`
						}
						_ = json.Unmarshal([]byte(out), &got)
						if got.MessageID != tool.MessageID || got.PartID != tool.ID {
							t.Errorf("%s maps to %s/%s, want the tool part %s/%s", idx, got.MessageID, got.PartID, tool.MessageID, tool.ID)
						}
					}
				}
			}
			if tools != 1 {
				t.Errorf("%d recorded sessions with a tool, want 1", tools)
			}
		})
	}
}

// The text OpenCode stores for a whitespace-only text block names no
// message: diagnose maps it through the preflight to the places that cause
// it, and fix --error repairs those.
func TestDiagnoseIndexlessErrorNamesItsCauses(t *testing.T) {
	const text = "messages: text content blocks must contain non-whitespace text"
	for _, v := range realstore.Versions {
		t.Run(v, func(t *testing.T) {
			rs := realstore.Copy(t, v)
			blank := rs.WhitespaceText(t)
			rs.FailResume(t, text)
			out, err := run(t, "text", &DiagnoseOptions{Paths: []string{rs.Path}, Error: text})
			if !errors.Is(err, cli.ErrFindings) {
				t.Fatalf("err = %v, want a repair planned\n%s", err, out)
			}
			for _, want := range []string{
				"error type: empty_content\n",
				"\nthe error names no message; the preflight finds 1 place that causes it:\n  error SF151 " + blank.MessageID + " part " + blank.ID + ": ",
				"sessfix fix --error would:\n  update part " + blank.ID + ": replaceEmptyTextParts",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "note:") || strings.Contains(out, "does not map") {
				t.Errorf("output repeats itself or contradicts the causes:\n%s", out)
			}
			js, _ := run(t, "json", &DiagnoseOptions{Paths: []string{rs.Path}, Error: text})
			var got struct {
				Causes []struct {
					Code   string `json:"code"`
					PartID string `json:"part_id"`
				} `json:"causes"`
			}
			if err := json.Unmarshal([]byte(js), &got); err != nil || len(got.Causes) != 1 || got.Causes[0].Code != "SF151" || got.Causes[0].PartID != blank.ID {
				t.Errorf("json causes %+v (%v)\n%s", got.Causes, err, js)
			}
		})
	}
}

// Anthropic's answer to a history that begins with an assistant message
// names no message: diagnose names SF210's finding as its cause, and fix
// --error has nothing to repair (the lost prompt is not invented).
func TestDiagnoseAssistantFirst(t *testing.T) {
	const fixture = "../../testdata/sessions/sf204-clock-jump/session.json"
	out, err := run(t, "text", &DiagnoseOptions{Paths: []string{fixture}, Session: "ses_323e0297ffff9mmU9hLiUzgd66",
		Error: `messages: first message must use the "user" role`})
	if !errors.Is(err, cli.ErrFindings) {
		t.Fatalf("err = %v, want findings remain\n%s", err, out)
	}
	for _, want := range []string{
		"error type: first_message_not_user\n",
		"the preflight finds 1 place that causes it:\n  error SF210 msg_cdbe8e800000IytBZvJGTzJ6G9: ",
		"sessfix fix --error would change nothing\n  sessfix has no storage repair for first_message_not_user errors",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
