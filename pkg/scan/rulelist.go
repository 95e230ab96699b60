package scan

// The rule list: every rule sessfix has, one constant per code and one table
// grouped by family, in code order. A rule is written in its own file
// (sfNNN.go, a value named ruleSFNNN) and listed here; nothing registers
// itself. Codes are never reused: a retired rule's code stays out of the
// list.

// The rule codes. Outside the rule files, code names a rule by these
// constants, never by a string literal.
const (
	SF101 = "SF101"
	SF102 = "SF102"
	SF103 = "SF103"
	SF104 = "SF104"
	SF105 = "SF105"
	SF106 = "SF106"
	SF107 = "SF107"
	SF150 = "SF150"
	SF151 = "SF151"
	SF152 = "SF152"
	SF153 = "SF153"
	SF154 = "SF154"
	SF155 = "SF155"
	SF156 = "SF156"
	SF157 = "SF157"
	SF158 = "SF158"
	SF159 = "SF159"
	SF160 = "SF160"
	SF161 = "SF161"
	SF162 = "SF162"
	SF163 = "SF163"
	SF164 = "SF164"
	SF165 = "SF165"
	SF166 = "SF166"
	SF170 = "SF170"
	SF171 = "SF171"
	SF172 = "SF172"
	SF173 = "SF173"
	SF174 = "SF174"
	SF175 = "SF175"
	SF176 = "SF176"
	SF177 = "SF177"
	SF178 = "SF178"
	SF179 = "SF179"
	SF180 = "SF180"
	SF181 = "SF181"

	SF201 = "SF201"
	SF202 = "SF202"
	SF203 = "SF203"
	SF204 = "SF204"
	SF205 = "SF205"
	SF206 = "SF206"
	SF207 = "SF207"
	SF208 = "SF208"
	SF209 = "SF209"
	SF210 = "SF210"
	SF211 = "SF211"
	SF212 = "SF212"
	SF213 = "SF213"

	SF301 = "SF301"
	SF302 = "SF302"
	SF303 = "SF303"
	SF304 = "SF304"
	SF305 = "SF305"

	SF401 = "SF401"
	SF402 = "SF402"
	SF403 = "SF403"
	SF404 = "SF404"

	SF501 = "SF501"
	SF502 = "SF502"
	SF503 = "SF503"
	SF504 = "SF504"
)

// Family is a group of rules whose codes share a range (First to Last).
type Family struct {
	Name        string
	First, Last string
	// About says what the family's rules check.
	About string
	Rules []*Rule
}

// Has reports whether code is in the family's range, registered or not.
func (f *Family) Has(code string) bool {
	return len(code) == 5 && code >= f.First && code <= f.Last
}

// The rule families.
var (
	FamilyRecords = &Family{Name: "records", First: "SF101", Last: "SF149",
		About: "OpenCode 1.x message and part records a provider rejects or OpenCode cannot send",
		Rules: []*Rule{ruleSF101, ruleSF102, ruleSF103, ruleSF104, ruleSF105, ruleSF106, ruleSF107}}
	FamilyPreflight = &Family{Name: "preflight", First: "SF150", Last: "SF169",
		About: "the request OpenCode sends each provider family, checked against that family's rules (pkg/sent builds it)",
		Rules: []*Rule{ruleSF150, ruleSF151, ruleSF152, ruleSF153, ruleSF154, ruleSF155, ruleSF156, ruleSF157, ruleSF158, ruleSF159, ruleSF160, ruleSF161, ruleSF162, ruleSF163, ruleSF164, ruleSF165, ruleSF166}}
	FamilyRequestSize = &Family{Name: "request size", First: "SF170", Last: "SF189",
		About: "a history too big to send: images over a provider's limits, too many images, a history over the model's context window, files over the request size limit, PDFs over the page limit, not PDFs at all or not processed, a request refused for its size, an image the provider could not process",
		Rules: []*Rule{ruleSF170, ruleSF171, ruleSF172, ruleSF173, ruleSF174, ruleSF175, ruleSF176, ruleSF177, ruleSF178, ruleSF179, ruleSF180, ruleSF181}}
	FamilyStructure = &Family{Name: "structure", First: "SF201", Last: "SF299",
		About: "the session's records as OpenCode loads them: unreadable or orphan records, ids, order, schema, parents, project, model",
		Rules: []*Rule{ruleSF201, ruleSF202, ruleSF203, ruleSF204, ruleSF205, ruleSF206, ruleSF207, ruleSF208, ruleSF209, ruleSF210, ruleSF211, ruleSF212, ruleSF213}}
	FamilyAttempts = &Family{Name: "attempts", First: "SF301", Last: "SF399",
		About: "turns that did not finish: a turn left in progress, a stored failed attempt, a tool call the output limit cut off, a compaction that failed, prompts OpenCode drops",
		Rules: []*Rule{ruleSF301, ruleSF302, ruleSF303, ruleSF304, ruleSF305}}
	FamilyOpenCode2 = &Family{Name: "opencode 2", First: "SF401", Last: "SF499",
		About: "OpenCode 2 databases: sessions its import did not bring over, skipped or hid, records it does not understand",
		Rules: []*Rule{ruleSF401, ruleSF402, ruleSF403, ruleSF404}}
	FamilyStoreHealth = &Family{Name: "store health", First: "SF501", Last: "SF599",
		About: "the store as a whole: a damaged database, an oversized -wal, oversized records, free space",
		Rules: []*Rule{ruleSF501, ruleSF502, ruleSF503, ruleSF504}}
)

// Families lists the families in code order.
var Families = []*Family{FamilyRecords, FamilyPreflight, FamilyRequestSize, FamilyStructure, FamilyAttempts, FamilyOpenCode2, FamilyStoreHealth}

// registry is every rule in code order: the families' rules, one after
// the other. It is filled in init: the rules' checks reach the registry
// (SF302 checks the session with the other rules), which a variable's
// initializer may not.
var registry []*Rule

func init() {
	for _, f := range Families {
		registry = append(registry, f.Rules...)
	}
}
