//go:build acceptance

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// eventFinding is one observed effect of a direct edit on OpenCode 1.18,
// which also keeps an `event` log (message.updated.1,
// message.part.updated.1, …) next to its message and part rows.
type eventFinding struct {
	Edit     string
	Export   string // what `opencode export` (a fresh process) shows
	Served   string // what `opencode serve` answers
	Sent     string // what the next request to the provider holds
	Verdict  string // the mock's verdict on that request
	LogAfter string // what the event log holds after OpenCode resumed
}

const (
	rowEditText   = "EDITED IN THE PART ROW"
	eventEditText = "EDITED IN THE EVENT LOG ONLY"
)

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// probeEventTable edits a recorded 1.18 session directly (a part row, only
// the event copy of another part, a deleted part row), restarts OpenCode and
// resumes, and reports what each path shows and sends.
func probeEventTable(t *testing.T) []eventFinding {
	_, c := onBase(t, opencodetest.V1_18)
	e := c.e
	answer := c.assistant(1)
	rowPart := c.part(answer, "text")
	evPart := c.part(c.user(1), "text")
	last := c.assistant(-1)
	gone := c.part(last, "step-finish")
	oldRowText := rowPart.Text()

	// 1. Edit the part row; edit only the event copies of another part;
	// delete a part row.
	c.d.setPart(answer.ID, rowPart.ID, "text", rowEditText)
	db := c.d.db()
	rows, err := db.Query(`SELECT id, data FROM event WHERE type LIKE 'message.part.updated%'`)
	if err != nil {
		t.Fatal(err)
	}
	edits := map[string]string{}
	for rows.Next() {
		var id, data string
		if err := rows.Scan(&id, &data); err != nil {
			t.Fatal(err)
		}
		if gjson.Get(data, "part.id").String() == evPart.ID {
			nd, err := sjson.Set(data, "part.text", eventEditText)
			if err != nil {
				t.Fatal(err)
			}
			edits[id] = nd
		}
	}
	rows.Close()
	if len(edits) == 0 {
		t.Fatalf("the event log holds no message.part.updated event for part %s", evPart.ID)
	}
	for id, data := range edits {
		if _, err := db.Exec(`UPDATE event SET data = ? WHERE id = ?`, data, id); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	c.d.deletePart(last.ID, gone.ID)

	out := []eventFinding{
		{Edit: "the `text` in `part.data` of an assistant text part changed"},
		{Edit: "only the `event` copies (`message.part.updated.1`) of a user text part changed"},
		{Edit: "a `part` row (a step-finish) deleted"},
	}

	// 2. A restart: `opencode export` in a new process.
	ctx := testCtx(t, 4*time.Minute)
	doc, res, err := e.Export(ctx, c.session)
	if err != nil {
		t.Fatalf("export after the edits: %v\n%s", err, res)
	}
	out[0].Export = yesNo(bytes.Contains(doc, []byte(rowEditText)))
	out[1].Export = yesNo(bytes.Contains(doc, []byte(eventEditText)))
	out[2].Export = "restored: " + yesNo(bytes.Contains(doc, []byte(gone.ID)))

	// 3. The server the TUI talks to.
	status, body := c.serve()
	if status != 200 {
		t.Fatalf("GET /session/%s/message: %d %s", c.session, status, body)
	}
	out[0].Served = yesNo(bytes.Contains(body, []byte(rowEditText)))
	out[1].Served = yesNo(bytes.Contains(body, []byte(eventEditText)))
	out[2].Served = "restored: " + yesNo(bytes.Contains(body, []byte(gone.ID)))

	// 4. What the next request sends.
	v := c.resume("continue")
	chat := e.Mock.ChatRequests()
	if len(chat) == 0 {
		t.Fatalf("the resume sent nothing: %s", v)
	}
	sent, _ := json.Marshal(chat[0].Parsed.Messages)
	out[0].Sent = yesNo(bytes.Contains(sent, []byte(rowEditText)))
	out[1].Sent = yesNo(bytes.Contains(sent, []byte(eventEditText)))
	out[2].Sent = "n/a (step-finish parts are not sent)"
	for i := range out {
		out[i].Verdict = string(chat[0].Verdict)
	}
	if chat[0].Verdict != mockanthropic.Accepted {
		t.Errorf("the mock rejected the resume after direct edits: %s", chat[0].Error)
	}

	// 5. The rows and the log after OpenCode ran again.
	after := c.d.session(c.session)
	rowKept, goneBack := false, false
	for _, m := range after {
		for _, p := range m.Parts {
			if p.ID == rowPart.ID && p.Text() == rowEditText {
				rowKept = true
			}
			if p.ID == gone.ID {
				goneBack = true
			}
		}
	}
	db = c.d.db()
	defer db.Close()
	var logOld, logNew, evLog int
	rows, err = db.Query(`SELECT data FROM event WHERE type LIKE 'message.part.updated%'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var data string
		if err := rows.Scan(&data); err != nil {
			t.Fatal(err)
		}
		switch gjson.Get(data, "part.id").String() {
		case rowPart.ID:
			switch gjson.Get(data, "part.text").String() {
			case oldRowText:
				logOld++
			case rowEditText:
				logNew++
			}
		case evPart.ID:
			if gjson.Get(data, "part.text").String() == eventEditText {
				evLog++
			}
		}
	}
	rows.Close()
	out[0].LogAfter = fmt.Sprintf("row still edited: %s; log holds the old text: %s, the edit: %s",
		yesNo(rowKept), yesNo(logOld > 0), yesNo(logNew > 0))
	out[1].LogAfter = fmt.Sprintf("log still holds the edit: %s", yesNo(evLog > 0))
	out[2].LogAfter = fmt.Sprintf("row restored: %s", yesNo(goneBack))
	for _, f := range out {
		t.Logf("%+v", f)
	}
	return out
}

// renderEvents writes the event-table section of docs/compatibility.md.
func renderEvents(b *bytes.Buffer, events []eventFinding) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("\n## OpenCode %s: direct edits and the `event` table\n\n", opencodetest.V1_18)
	p("OpenCode 1.18 keeps an `event` table (`session.created.1`, `message.updated.1`, `message.part.updated.1`, …)\n")
	p("next to its `message` and `part` rows. sessfix repairs the rows. The suite checks what that does: it edits a\n")
	p("recorded session directly with OpenCode stopped, then starts OpenCode again (`opencode export`, `opencode serve`,\n")
	p("`opencode run --session ID continue`) and looks at what each shows and what the provider receives.\n\n")
	p("| direct edit | `opencode export` shows it | `opencode serve` shows it | sent to the provider | after the resume |\n")
	p("|---|---|---|---|---|\n")
	for _, f := range events {
		p("| %s | %s | %s | %s (%s) | %s |\n", cell(f.Edit), f.Export, f.Served, f.Sent, f.Verdict, cell(f.LogAfter))
	}
	if len(events) == 3 && events[0].Export == "yes" && events[0].Sent == "yes" && events[1].Export == "no" &&
		events[1].Sent == "no" && strings.HasSuffix(events[2].Export, "no") {
		p("\nThe `message` and `part` rows are the history: an edited row survives a restart, is what OpenCode shows\n")
		p("and is exactly what it sends; an edit of the `event` log alone changes nothing, and the log does not\n")
		p("restore a deleted row. After a repair the log no longer matches the rows (it still holds the text from\n")
		p("before the edit); OpenCode 1.18 does not replay it into the rows, so sessfix leaves it alone.\n")
	} else {
		p("\nThe rows are not the whole story on this version: see the table. sessfix's repairs of `message` and\n")
		p("`part` rows must be checked against it.\n")
	}
}
