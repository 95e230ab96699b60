package scan

import "fmt"

func init() {
	register(&Rule{
		Code:     "SF503",
		Name:     "oversized-record",
		Severity: Warning,
		Summary:  "a part row's data is larger than opencode loads comfortably",
		What: "A part row whose `data` is 50 MiB or more, measured with SQL's `length(data)` without reading it: " +
			"an attached PDF or image stored as base64 in the part. Users report a single 308 MB part of a " +
			"base64 PDF.",
		Why: "OpenCode reads every part of a session into memory and parses it, and its session list touches " +
			"them at start: a part of hundreds of MB makes it run out of memory at start, and every session " +
			"is out of reach.",
		FixDoc: notRepaired + "Dropping the part's message with `sessfix drop` removes it (with a backup " +
			"`sessfix undo` restores).",
		StoreCheck: checkOversizedRecords,
	})
}

func checkOversizedRecords(c *StoreContext) {
	for _, o := range c.Health.Oversized {
		c.Report(Finding{
			SessionID: o.SessionID, MessageID: o.MessageID, PartID: o.PartID, Location: o.Loc,
			Message: fmt.Sprintf("part data is %s, more than the %s opencode loads comfortably", mib(o.Bytes), mib(DefaultOversized)),
		})
	}
}
