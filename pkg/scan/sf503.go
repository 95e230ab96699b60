package scan

import "fmt"

var ruleSF503 = &Rule{
	Code:     SF503,
	Name:     "oversized-record",
	Severity: Warning,
	Summary:  "a part row's data is larger than opencode loads comfortably",
	What: "A part row whose `data` is 50 MiB or more, measured in bytes with SQL's `octet_length(data)`, which reads the size from the row's header and never the payload: " +
		"an attached PDF or image stored as base64 in the part. Users report a single 308 MB part of a " +
		"base64 PDF.",
	Why: "OpenCode reads every part of a session into memory and parses it, and its session list touches " +
		"them at start: a part of hundreds of MB makes it run out of memory at start, and every session " +
		"is out of reach.",
	FixDoc: notRepaired + "By hand: `sessfix drop SESSION PART` takes the part out of its session (refused when " +
		"the session would be left broken without it; `sessfix undo` puts it back).",
	StoreCheck: checkOversizedRecords,
}

func checkOversizedRecords(c *StoreContext) {
	for _, o := range c.Health.Oversized {
		c.Report(Finding{
			SessionID: o.SessionID, MessageID: o.MessageID, PartID: o.PartID, Location: o.Loc,
			Message: fmt.Sprintf("part data is %s, more than the %s opencode loads comfortably", mib(o.Bytes), mib(c.Oversized)),
		})
	}
}
