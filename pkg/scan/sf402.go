package scan

import (
	"strings"
	"time"

	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/oc2import"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF402 = &Rule{
	Code:      SF402,
	Name:      "skipped-by-import",
	Severity:  Warning,
	OpenCode2: true,
	Summary:   "opencode 2's import of the 1.x sessions skips a record",
	What: "In an OpenCode 2 database: a 1.x message or part that OpenCode 2's one-shot import of the 1.x " +
		"sessions drops: a message it cannot decode with the 1.x schema even after filling in what old rows " +
		"lack (`agent`, a user message's `model`, an assistant message's `parentID`), a part it cannot decode " +
		"(a foreign type such as `thinking`, a missing key), a part whose message is not one of its " +
		"session's, or a row that is not a JSON object. The finding names the key and what the schema wants " +
		"(the importer decodes with the same schema as OpenCode 1.18.33, `pkg/ocschema`), and the keys the " +
		"importer's own patch could not supply. A skipped message takes its parts with it. It is reported " +
		"for the sessions the import has copied (the record was skipped) and for those it has yet to copy " +
		"(the record will be skipped); a session the import never saw is SF401's.",
	Why: "The importer logs a warning and goes on (#42671: tens of thousands of rows in one database, and no " +
		"field named): what it skips is in no OpenCode 2 table, so OpenCode 2's copy of the session lacks " +
		"those turns or that content, and once the import has completed it never tries again.",
	FixDoc: "Report only: sessfix never writes an OpenCode 2 database, and repairing the 1.x rows now changes " +
		"nothing OpenCode 2 shows, since it never reads them again. The rows are intact in the 1.x tables: " +
		"OpenCode 1.x still opens the session, and `opencode export` from OpenCode 1.x keeps them. For a data " +
		"dir not yet upgraded: scan it while it is a 1.x database and repair what OpenCode cannot decode " +
		"there, before OpenCode 2 imports it. Do not reset `kv['migration.v1-v2']` to import again: see " +
		"SF401.",
	Check: checkSkippedByImport,
}

func checkSkippedByImport(c *Context) {
	s := c.Session
	oc := s.OpenCode2
	if oc == nil {
		return
	}
	v1, done := s, false
	switch {
	case oc.V2 && oc.V1 != nil:
		v1, done = oc.V1, true
	case !oc.V2 && oc.Import.Phase != store.ImportCompleted:
	default:
		return
	}
	if v1.Info == nil {
		return // the import walks session rows: one without a row is never imported (SF203)
	}
	verb := "will skip"
	if done {
		verb = "skipped"
	}
	// What the import saw: an imported session's rows as they were when it
	// ran (what OpenCode 1.x wrote later is SF401's).
	seen := func(created int64) bool {
		return !done || oc.Import.Updated.IsZero() || !time.UnixMilli(created).After(oc.Import.Updated)
	}
	records := map[string]*store.Record{}
	owned := map[string]int{}
	var msgs, parts []oc2import.Row
	later := map[string]bool{}
	for _, m := range v1.Messages {
		if !seen(m.Created) {
			later[m.ID] = true
			continue
		}
		records[m.ID] = &m.Record
		msgs = append(msgs, oc2import.Row{ID: m.ID, SessionID: m.SessionID, Created: m.Created, Updated: m.Modified.UnixMilli(), Data: m.Raw})
		for _, p := range m.Parts {
			if p.SessionID != "" && p.SessionID != s.ID {
				f := At(m, p)
				f.Message = "opencode 2's import " + verb + " this part: it reads a session's parts by their session_id, " +
					"which names " + p.SessionID + ", where its message is not"
				c.Report(f)
				continue
			}
			records[p.ID] = &p.Record
			parts = append(parts, oc2import.Row{ID: p.ID, MessageID: p.MessageID, SessionID: s.ID, Data: p.Raw})
		}
	}
	for _, p := range v1.Orphans {
		if later[p.MessageID] {
			continue
		}
		records[p.ID] = &p.Record
		parts = append(parts, oc2import.Row{ID: p.ID, MessageID: p.MessageID, SessionID: p.SessionID, Data: p.Raw})
	}
	for _, b := range v1.Broken {
		switch b.Kind {
		case store.KindMessage:
			records[b.ID] = b
			msgs = append(msgs, oc2import.Row{ID: b.ID, SessionID: s.ID, Data: b.Raw})
		case store.KindPart:
			f := Finding{PartID: b.ID, Location: b.Loc}
			f.Message = "opencode 2's import " + verb + " this part: its data is not a JSON object"
			c.Report(f)
		}
	}
	for _, p := range parts {
		owned[p.MessageID]++
	}
	have := map[string]bool{}
	for _, m := range s.Messages {
		have[m.ID] = true
	}
	session := oc2import.Session{ID: s.ID, Agent: v1.Info.Get("agent").Str, Model: v1.Info.Get("model").Str}
	for _, sk := range oc2import.Decode(session, msgs, parts).Skipped {
		f := Finding{MessageID: sk.MessageID, PartID: sk.PartID}
		what := "part"
		if sk.PartID == "" {
			what = "message"
			if done && have[sk.MessageID] {
				continue // OpenCode 2 has it after all: the prediction does not hold
			}
		}
		if r := records[sk.PartID]; r != nil && sk.PartID != "" {
			f.Location = r.Loc
		} else if r := records[sk.MessageID]; r != nil {
			f.Location = r.Loc
		}
		f.Message = "opencode 2's import " + verb + " this " + what + ": " + skipReason(sk)
		if n := owned[sk.MessageID]; what == "message" && n > 0 {
			f.Message += "; its " + plural.Count(n, "part goes", "parts go") + " with it"
		}
		c.Report(f)
	}
}

// skipReason says why the importer drops a row.
func skipReason(sk oc2import.Skip) string {
	switch {
	case sk.NotObject:
		return "its data is not a JSON object"
	case sk.Reason == oc2import.OrphanPart:
		return "its message " + sk.MessageID + " is not one of the session's"
	}
	var probs []string
	for i, p := range sk.Problems {
		if i == 3 {
			probs = append(probs, "and "+plural.Count(len(sk.Problems)-3, "more", "more"))
			break
		}
		probs = append(probs, p.String())
	}
	out := "the 1.x schema it decodes with rejects " + strings.Join(probs, ", ")
	if len(sk.Missing) > 0 {
		out += " (its own patch found no " + strings.Join(sk.Missing, ", ") + " to fill in)"
	}
	return out
}
