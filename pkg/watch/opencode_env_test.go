package watch

import (
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/ocenv/ocenvtest"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestOpenCodesConfigIsReadForEachExamination: watch judges a session with
// what OpenCode reads outside its data dir, as scan and fix do, and reads it
// afresh for each session it examines. A session whose model OpenCode no
// longer has (SF213) cannot be repaired while the config names no default
// model; once the user adds one, the next examination repairs the
// session with it, without restarting watch. That examination follows a
// hand edit of the session row's model that keeps time_updated (sqlite3
// by hand): the content check sums every column of a session row.
func TestOpenCodesConfigIsReadForEachExamination(t *testing.T) {
	const id = "ses_e012acd97ffeUavLGQWWTi4jHW"
	real := realstore.Copy(t, ocrelease.V1_18)
	storetest.ExecSQL(t, real.Path,
		`UPDATE session SET model = '{"id":"claude-retired-1","providerID":"anthropic","variant":"default"}' WHERE id = '`+id+`'`)
	home, env := ocenvtest.Home(t, map[string]string{".cache/opencode/models.json": `{"anthropic": {"models": {"claude-sonnet-4-5": {}, "claude-haiku-4-5": {}}}}`})
	reads := 0
	h := emptyHarness(t, real.Dir, func(o *Options) {
		o.OpenCode = func() *ocenv.Resolver {
			reads++
			return ocenv.NewResolver(env)
		}
	})
	h.step(0)
	h.step(2 * time.Second) // a store found: its sessions settle first
	unfixed := h.kinds(Unfixed)
	if len(unfixed) != 1 || unfixed[0].Session != id || !strings.Contains(strings.Join(unfixed[0].Rules, ","), "SF213") {
		t.Fatalf("unfixed events %+v, want SF213 for %s (no default model to give it)", unfixed, id)
	}
	if n := len(h.kinds(Repaired)); n != 0 {
		t.Fatalf("%d repairs without a default model", n)
	}

	ocenvtest.Write(t, home, map[string]string{".config/opencode/opencode.json": `{"model": "anthropic/claude-haiku-4-5"}`})
	h.step(contentEvery)
	storetest.ExecSQL(t, h.path, `UPDATE session SET model = '{"id":"claude-retired-2","providerID":"anthropic","variant":"default"}' WHERE id = '`+id+`'`)
	h.sync(real.Dir)
	h.step(DefaultCoalesce)
	h.step(2 * time.Second)
	rep := h.kinds(Repaired)
	if len(rep) != 1 || rep[0].Session != id || strings.Join(rep[0].Rules, ",") != "SF213" {
		t.Fatalf("repaired events %+v, want SF213 repaired in %s with the config's new default model", rep, id)
	}
	st := storetest.OpenOne(t, h.path)
	defer st.Close()
	if got := storetest.Load(t, st, id).Info.Get("model").Str; got != `{"id":"claude-haiku-4-5","providerID":"anthropic","variant":"default"}` {
		t.Errorf("the repaired session's model is %s", got)
	}
	if reads < 2 {
		t.Errorf("OpenCode's environment was read %d times for two examinations", reads)
	}
}
