package scan

import (
	"fmt"

	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF503 = &Rule{
	Code:     SF503,
	Name:     "oversized-record",
	Severity: Warning,
	Summary:  "a part row's data is larger than opencode loads comfortably",
	What: "A part row whose `data` is 50 MiB or more, in bytes (a scan of every session measures the rows it loads anyway; " +
		"a scan of some sessions, `--session`, asks SQL for `octet_length(data)`, which reads the size from the row's header and never the payload): " +
		"an attached PDF or image stored as base64 in the part. Users report a single 308 MB part of a " +
		"base64 PDF.",
	Why: "OpenCode reads every part of a session into memory and parses it, and its session list touches " +
		"them at start: a part of hundreds of MB makes it run out of memory at start, and every session " +
		"is out of reach.",
	FixDoc: "`moveOutPayload`: sessfix moves the part's largest base64 media (a user's attached file, or a tool result's attachment) out of the database " +
		"into the backup run of the repair, decoded, as `payloads/<part id>-<file name>` (`sessfix backups` lists the runs), and puts a text in its place " +
		"that names that file: a user's `file` part becomes a synthetic `text` part with the same id, a tool result loses the attachment and its output says where it went. " +
		"The backup run also keeps the row whole, so `sessfix undo` puts it back byte for byte. The session is loaded to plan this. " +
		"A part whose size is not media in a `data:` URL (a huge tool output) is not repaired: by hand, `sessfix drop SESSION --part PART` takes the part out of its session " +
		"(refused when the session would be left broken without it; `sessfix undo` puts it back).",
	Fixable:    true,
	Fix:        "moveOutPayload",
	StoreCheck: checkOversizedRecords,
}

func checkOversizedRecords(c *StoreContext) {
	for _, o := range c.Health.Oversized {
		c.Report(Finding{
			SessionID: o.SessionID, MessageID: o.MessageID, PartID: o.PartID, Location: o.Loc,
			Message: oversizedMessage(o.Bytes, c.Oversized),
		})
	}
}

func oversizedMessage(n, limit int64) string {
	return fmt.Sprintf("part data is %s, more than the %s opencode loads comfortably", mib(n), mib(limit))
}

// OversizedParts is SF503 on a session fix has loaded: its part rows whose
// data is at least the threshold (opts.Oversized, else DefaultOversized),
// in a SQLite database (where the scan finds them), as the findings the
// scan reports; none when SF503 is not enabled.
func OversizedParts(s *store.Session, opts *Options) []Finding {
	if opts == nil {
		opts = &Options{}
	}
	limit := opts.Oversized
	if limit == 0 {
		limit = DefaultOversized
	}
	if s.Store.Shape != store.ShapeSQLite || !opts.Enabled(SF503) {
		return nil
	}
	var out []Finding
	for _, m := range s.Messages {
		for _, p := range m.Parts {
			if n := int64(len(p.Raw)); n >= limit {
				f := At(m, p)
				f.Code, f.Rule, f.Severity, f.Fix = SF503, ruleSF503.Name, ruleSF503.Severity, ruleSF503.Fix
				f.SessionID, f.Message = s.ID, oversizedMessage(n, limit)
				f.Store, f.StorePath, f.Shape = s.Store, s.Store.Path, s.Store.Shape
				out = append(out, f)
			}
		}
	}
	return out
}
